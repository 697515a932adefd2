"""A GPU node pool in System mode.

## What it does
Flags node pools with a GPU VM size that end up in `System` mode: the first pool of
`az aks create` (always a System pool, `nodepool1` unless `--nodepool-name`) given a GPU
`--node-vm-size`, or a pool added or updated with `--mode System`. The finding points at the
`--mode System` flag, else at the create command's `--node-vm-size`.

## Why is this bad?
System pools run CoreDNS, metrics-server, konnectivity and other critical add-ons, must keep at
least one node, and AKS schedules system pods onto them: on a GPU pool they pin expensive GPU
nodes that can never scale to zero, and GPU jobs compete with cluster-critical pods. The article
asks to "create a dedicated user node pool with a supported NVIDIA GPU VM size" and does so with
`--mode User`.

## Example
```bash
az aks create \
  --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" \
  --node-vm-size Standard_NC24ads_A100_v4 \
  --node-count 1
```

Use instead:
```bash
az aks create \
  --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" \
  --node-vm-size Standard_D4s_v5 \
  --node-count 2
az aks nodepool add \
  --resource-group "$RESOURCE_GROUP" --cluster-name "$AKS_CLUSTER" \
  --name gpunp --mode User \
  --node-vm-size Standard_NC24ads_A100_v4 \
  --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule
```

## Known problems
SPEC words the condition as "System mode (or no `--mode User`)". `az aks nodepool add` makes a
User pool when `--mode` is not given (azure-cli's `aks_agentpool_add` defaults `mode` to
`User`), so an added pool without `--mode` is not flagged: only pools that really are System
pools are. A mode the script does not determine (`--mode "$MODE"`) is not judged.

## References
- AKS, Manage system node pools: https://learn.microsoft.com/azure/aks/use-system-pools
- AKS, Use GPUs for compute-intensive workloads: https://learn.microsoft.com/azure/aks/use-nvidia-gpu
"""

from linter.model.azcli import ShellScript
from linter.model.cluster import cluster_of, describe_pool
from linter.rule import SHELL, Finding, rule


def _by_script(cluster) -> dict[str, list]:
    """(pool, where) of each GPU pool in System mode, by the script its finding goes to, in pool
    order: once per cluster, not once per script."""
    found: dict[str, list] = {}
    for pool in cluster.pools:
        vm = pool.vm
        if pool.source != "script" or not pool.created or vm is None or not vm.is_gpu or pool.is_system is not True:
            continue
        where = pool.mode_origin or pool.vm_origin
        if where is not None:
            found.setdefault(where.path, []).append((pool, where))
    return found


@rule(code="AKS003", name="gpu-pool-system-mode", severity="error", scope=SHELL, tags=("aks", "gpu"))
def check(script: ShellScript, ctx):
    cluster = cluster_of(ctx.index, ctx.config)
    for pool, where in cluster.memo("AKS003", lambda: _by_script(cluster)).get(script.path, ()):
        how = "is set to System mode" if pool.mode_origin is not None else "is the cluster's first pool, a System pool"
        yield Finding(
            where.span,
            f"GPU node pool {describe_pool(pool)} {how}: AKS runs critical system pods there and it cannot "
            "scale to zero; keep a CPU system pool and add the GPU pool with `az aks nodepool add --mode User`",
            node=("pool", pool.display, "mode"),
        )
