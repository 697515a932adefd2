"""A GPU node pool with a fixed node count and the cluster autoscaler off.

## What it does
Reads the node pools the project defines (the `az aks create` / `az aks nodepool add` commands
of its scripts with every later `nodepool update` and `nodepool scale` applied, Terraform
`azurerm_kubernetes_cluster_node_pool`, Bicep and ARM `agentPoolProfiles` and
`managedClusters/agentPools`, and the entries of `node-pools:` in `.mlops-lint.yaml` when the run
lints it; see `mlops-lint explain AKS004` for which values are known) and flags each User pool
whose VM size is a GPU size of the catalogue that ends up with the cluster autoscaler off and a
fixed node count above zero.

The finding points at the count: `--node-count` (the value), `node_count`, `count`,
`node-count`. A script pool added without `--node-count` gets the CLI's default of 3 nodes and
is reported at its `--node-vm-size`; a config entry that writes `enable-cluster-autoscaler:
false` without a count is reported there. The hint turns the autoscaler on in the pool's own
syntax, with a maximum that keeps today's count reachable: `--enable-cluster-autoscaler
--min-count 0 --max-count 3`, `auto_scaling_enabled = true, min_count = 0, max_count = 3`,
`enableAutoScaling: true, minCount: 0, maxCount: 3`, `"enableAutoScaling": true, ...`,
`enable-cluster-autoscaler: true, min-count: 0, max-count: 3`.

Left alone: pools with the autoscaler on (whatever their minimum: a nonzero `--min-count` is the
article's way to keep serving capacity warm), a fixed count of 0 (an empty pool costs nothing),
System pools (they host the cluster's own pods), CPU pools, pools whose mode, size, count or
switch the files do not determine, a config entry that writes neither a count nor the switch,
bounds written without the switch (the CLI and the providers refuse them: AKS004 reports it),
and the pools of a cluster that uses node auto-provisioning or AKS Automatic (`--sku automatic`,
`--node-provisioning-mode Auto`, their Terraform and Bicep forms), where nodes follow the pods: a
pool is spared when its cluster has that name, or when either name is not determined (every pool
when the mode's value is not known). The `aks-automatic` profile turns the AKS rules off.

## Why is this bad?
A fixed-size GPU pool is billed for every node around the clock, whether or not a job runs, and
it cannot add nodes when training or inference demand peaks. The article asks to "enable
autoscaling on your compute resources to support high model request volumes at peak times and
scale down in off-peak hours", and for AKS Standard to "enable the cluster autoscaler on the GPU
user node pool and define minimum and maximum capacity". Scale-to-zero suits interruptible
training pools; where start-up latency matters the article keeps "a nonzero minimum" with the
autoscaler, not a fixed count.

## Example
```bash
az aks nodepool add \
  --resource-group "$RESOURCE_GROUP" \
  --cluster-name "$AKS_CLUSTER" \
  --name gpunp \
  --mode User \
  --node-vm-size Standard_NC24ads_A100_v4 \
  --node-count 3 \
  --labels accelerator=nvidia \
  --node-taints sku=gpu:NoSchedule
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC24ads_A100_v4"
  node_count            = 3
}
```

Use instead:
```bash
az aks nodepool add \
  --resource-group "$RESOURCE_GROUP" \
  --cluster-name "$AKS_CLUSTER" \
  --name gpunp \
  --mode User \
  --node-vm-size Standard_NC24ads_A100_v4 \
  --node-count 0 \
  --enable-cluster-autoscaler \
  --min-count 0 \
  --max-count 3 \
  --labels accelerator=nvidia \
  --node-taints sku=gpu:NoSchedule
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC24ads_A100_v4"
  auto_scaling_enabled  = true
  min_count             = 0
  max_count             = 3
}
```

In the config's `node-pools` (`.mlops-lint.yaml`):
```yaml
node-pools:
  - {name: gpunp, vm-size: Standard_NC24ads_A100_v4, enable-cluster-autoscaler: true, min-count: 0, max-count: 3}
```

## Fix safety
No automatic fix: the bounds (a minimum of 0 for training, a warm reserve for serving, the
maximum the quota allows) are the author's choice. The hint gives the settings in the pool's own
syntax.

## Known problems
- A pool whose autoscaler a later `az aks nodepool update --disable-cluster-autoscaler` turns
  off keeps the size it had then, which the files do not say: it is reported only when a later
  `--node-count` (`nodepool scale`) fixes it.
- Terraform, Bicep and ARM pools that write no count are not judged (the count is then the
  provider's or the API's default, which differ between versions).
- A fixed pool that an external scheduler (KEDA, a pipeline that runs `az aks nodepool scale`)
  resizes looks fixed here; suppress the finding on that pool.

## References
- AKS, Use the cluster autoscaler: https://learn.microsoft.com/azure/aks/cluster-autoscaler
- AKS, Use GPUs for compute-intensive workloads: https://learn.microsoft.com/azure/aks/use-nvidia-gpu
- Azure CLI, az aks nodepool add: https://learn.microsoft.com/cli/azure/aks/nodepool#az-aks-nodepool-add
"""

from mlops_lint.model.azcli import ShellScript
from mlops_lint.model.cluster import changed_after_creation, cluster_of, describe_pool
from mlops_lint.rule import SHELL, Finding, rule


def autoscaler_hint(pool, count: int) -> str:
    """The autoscaler on, with bounds, in the syntax of the source that defines ``pool``; the
    maximum keeps today's ``count`` reachable."""
    if pool.source == "terraform":
        return f"auto_scaling_enabled = true, min_count = 0, max_count = {count}"
    if pool.source == "bicep":
        return f"enableAutoScaling: true, minCount: 0, maxCount: {count}"
    if pool.source == "arm":
        return f'"enableAutoScaling": true, "minCount": 0, "maxCount": {count}'
    if pool.source == "config":
        return f"enable-cluster-autoscaler: true, min-count: 0, max-count: {count}"
    return f"--enable-cluster-autoscaler --min-count 0 --max-count {count}"


def fixed_gpu_pools(cluster) -> dict[str, list]:
    """(pool, count, where) of each User GPU pool with a fixed nonzero node count and the
    autoscaler off, by the file its finding goes to: once per cluster, not once per script."""
    found: dict[str, list] = {}
    for pool in cluster.pools:
        if cluster.auto_provisioned(pool.cluster):
            continue  # NAP or AKS Automatic: nodes come and go with the pods
        vm, count = pool.vm, pool.node_count
        if not pool.in_linted_file or not pool.created or vm is None or not vm.is_gpu:
            continue
        if pool.is_system is not False or pool.autoscaler is not False:
            continue  # a System pool keeps its nodes; an unknown mode or switch is not judged
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            continue
        written = pool.count_origin.get("node_count")
        off = pool.autoscaler_origin
        if pool.source == "config" and written is None and off is None:
            continue  # an entry that says nothing of its scaling (the config's default count is not the author's)
        bounds = [pool.count_origin[b] for b in ("min_count", "max_count") if b in pool.count_origin]
        if any(off is None or b.command is off.command for b in bounds):
            continue  # bounds without the switch: the tool refuses them (AKS004), the author meant to autoscale
        if changed_after_creation(off, pool) and (written is None or written.command is pool.origin.command):
            continue  # turned off by a later update: the pool keeps the size it had then, not known here
        where = written.target if written is not None else (off.span if off is not None else None)
        if where is None and pool.vm_origin is not None:
            where = pool.vm_origin.span
        if where is not None:
            path = (written or off or pool.vm_origin).path
            found.setdefault(path, []).append((pool, count, where, written))
    return found


@rule(code="AKS010", name="gpu-pool-not-autoscaled", severity="info", scope=SHELL,
      tags=("aks", "gpu", "autoscaling", "cost"))
def check(script: ShellScript, ctx):
    cluster = cluster_of(ctx.index, ctx.config)
    for pool, count, where, written in cluster.memo("AKS010", lambda: fixed_gpu_pools(cluster)).get(script.path, ()):
        nodes = "node" if count == 1 else "nodes"
        how = "" if written is not None else " (the config's default count)" if pool.source == "config" \
            else " (the CLI's default count)"
        suggestion = autoscaler_hint(pool, count)
        yield Finding(
            where,
            f"GPU node pool {describe_pool(pool)} has a fixed size of {count} {nodes}{how} and the cluster "
            f"autoscaler off: its GPUs are billed while idle and it cannot grow at peak; turn the autoscaler on "
            f"(`{suggestion}`; a minimum above 0 only for serving capacity kept warm)",
            node=("pool", pool.display, "node-count"),
            fix=suggestion,
        )
