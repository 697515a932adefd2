"""A node pool with a GPU VM size and no NoSchedule taint.

## What it does
Reads the node pools the project's `az aks create` / `az aks nodepool add` commands make (with
every later `nodepool update` applied, in file order) and flags each pool whose VM size is a GPU
size of the catalogue (`Standard_NC4as_T4_v3`, `Standard_NC24ads_A100_v4`, `Standard_ND96isr_H100_v5`
…) but that ends up with no taint of effect `NoSchedule` (or the stronger `NoExecute`). The
finding points at `--node-taints` when a later update set taints without one (or removed them
with `--node-taints ""`), else at the pool's `--node-vm-size`.

Terraform pools are read the same way (`azurerm_kubernetes_cluster_node_pool`, and the cluster's
`default_node_pool`; see `mlops-lint explain AKS004` for which values are known): the finding
points at the pool's `vm_size` attribute and the hint is `node_taints = ["sku=gpu:NoSchedule"]`.
Bicep pools (`agentPoolProfiles` of a `Microsoft.ContainerService/managedClusters`,
`managedClusters/agentPools`) too, at `vmSize`, with the hint `nodeTaints: ['sku=gpu:NoSchedule']`;
and ARM templates (`.json` with a `deploymentTemplate` `$schema`), at the `"vmSize"` key, with
the hint `"nodeTaints": ["sku=gpu:NoSchedule"]`. And the entries of `node-pools:` in
`.mlops-lint.yaml` (for pools no script or template defines), at the entry's `vm-size` key, with
the hint `taints: ["sku=gpu:NoSchedule"]`, when the run lints the config (it is under the PATHs).

## Why is this bad?
Without a taint, the scheduler treats GPU nodes like any other: ordinary pods (web services,
data preprocessing, system add-ons) fill them, block GPU jobs from being scheduled and keep the
expensive nodes from scaling down. The article creates the GPU pool with
`--node-taints sku=gpu:NoSchedule` "to repel workloads that don't explicitly tolerate GPU nodes",
and says "A NoSchedule taint keeps ordinary application pods away from expensive GPU nodes".

## Example
```bash
az aks nodepool add \
  --resource-group "$RESOURCE_GROUP" \
  --cluster-name "$AKS_CLUSTER" \
  --name gpunp \
  --mode User \
  --node-vm-size Standard_NC4as_T4_v3 \
  --labels accelerator=nvidia
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3"
  node_labels           = { accelerator = "nvidia" }
}
```

Use instead:
```bash
az aks nodepool add \
  --resource-group "$RESOURCE_GROUP" \
  --cluster-name "$AKS_CLUSTER" \
  --name gpunp \
  --mode User \
  --node-vm-size Standard_NC4as_T4_v3 \
  --labels accelerator=nvidia \
  --node-taints sku=gpu:NoSchedule
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3"
  node_labels           = { accelerator = "nvidia" }
  node_taints           = ["sku=gpu:NoSchedule"]
}
```

In the config's `node-pools` (`.mlops-lint.yaml`):
```yaml
node-pools:
  - name: gpunp
    vm-size: Standard_NC4as_T4_v3
    labels: {accelerator: nvidia}
    taints: ["sku=gpu:NoSchedule"]
```

## Fix safety
Unsafe. For a pool added by `az aks nodepool add` with no `--node-taints` at all (and no later
update of its taints), the fix appends `--node-taints sku=gpu:NoSchedule` (the first
`gpu-taints` entry of the config when it repels pods) to that command, after its last word, so
a command continued over several lines gets it on its last line. It changes more than the
rule's intent: GPU pods that do not tolerate the taint can no longer run on the pool until
they get a matching toleration. No fix for the cluster's first pool (`az aks create`: a taint
on a System pool would keep system pods off it; AKS003 asks for a separate pool), for a pool
that has other taints (which to keep is the author's choice), or for an update that removed
them.
No fix in a script that records commands rather than runs them (`$ ` prompts,
Markdown fences: a terminal session, a README snippet) or that does not read cleanly (an
unclosed quote or heredoc).
In Terraform, Bicep and ARM, a User pool that writes no taints gets them on a new line below its
VM size, indented (and in Terraform `=`-aligned) as that line: `node_taints = ["sku=gpu:NoSchedule"]`,
`nodeTaints: ['sku=gpu:NoSchedule']`, and in ARM above `"vmSize"`, `"nodeTaints": ["sku=gpu:NoSchedule"],`
(a key added before another needs no comma moved); a literal empty list (`node_taints = []`) is
filled. Nothing else of the file changes. No fix for the `default_node_pool` or a System pool,
for taints that come from a variable or parameter (the hint says so: other pools may share it),
for a pool that has other taints, or when the VM size is not the first thing on its line.
A config `node-pools` entry of a User pool that writes no taints (or `taints: []`) gets
`taints` set to `sku=gpu:NoSchedule`, in the entry's style (a block entry gets a
`taints:` block below its last key, a flow entry `taints: ['sku=gpu:NoSchedule']`); no fix for
a System pool or one with other taints.

## Known problems
- `PreferNoSchedule` only discourages the scheduler, so it does not count. The taint AKS adds
  to Spot pools (`kubernetes.azure.com/scalesetpriority=spot:NoSchedule`) does not count either:
  it repels pods that do not tolerate Spot eviction, not pods that do not need a GPU (a CPU
  batch job that tolerates Spot still lands on the GPU nodes).
- A command whose options are partly unknown (`$EXTRA_ARGS`, an update whose `--name` is
  `$POOL`) may set taints: such pools are not judged.
- Pools from `node-pools:` in the config are judged only when the run lints the config (a
  `.mlops-lint.yaml` under the PATHs); one that is only context (the run lints a folder below
  it), that its own `exclude` matches, or a `pyproject.toml` config keeps its pools as cluster
  facts for the placement rules, without findings.

## References
- AKS, Use GPUs for compute-intensive workloads: https://learn.microsoft.com/azure/aks/use-nvidia-gpu
- AKS, Use node taints: https://learn.microsoft.com/azure/aks/use-node-taints
- Kubernetes, Taints and tolerations: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
"""

import shlex

from mlops_lint.fix import Plan, Replace
from mlops_lint.fix.iac import IAC, NAMES, add_beside, config_set, is_empty_list, not_literal, replace_value
from mlops_lint.model.azcli import ShellScript
from mlops_lint.model.cluster import changed_after_creation, cluster_of, describe_pool, hint
from mlops_lint.model.selectors import parse_taint
from mlops_lint.rule import SHELL, Finding, rule


def _by_script(cluster) -> dict[str, list]:
    """(pool, taints, later, where) of each GPU pool without a NoSchedule taint, by the script its
    finding goes to, in pool order: once per cluster, not once per script."""
    found: dict[str, list] = {}
    for pool in cluster.pools:
        vm = pool.vm
        if not pool.in_linted_file or not pool.created or vm is None or not vm.is_gpu or not pool.taints_known:
            continue
        taints = [t for t in pool.effective_taints if not t.automatic]
        if any(t.taint.effect in ("NoSchedule", "NoExecute") for t in taints):
            continue
        later = changed_after_creation(pool.taints_origin, pool)
        where = pool.taints_origin if later else pool.vm_origin
        if where is not None:
            found.setdefault(where.path, []).append((pool, taints, later, where))
    return found


def add_taint(pool, taints, later: bool, where, taint: str) -> Plan | None:
    """``--node-taints <taint>`` appended to the ``nodepool add`` that made a pool with no taints;
    in Terraform, Bicep and ARM the taints attribute added beside the pool's VM size (or an empty
    literal list filled)."""
    if pool.source in IAC:
        return _iac_taint(pool, taints, where, taint)
    if pool.source == "config":
        written = pool.entry.get("taints") if pool.entry is not None else None
        if taints or pool.is_system is not False or where is not pool.vm_origin or written not in (None, []):
            return None
        intent = config_set(pool, "taints", [taint])
        return Plan.unsafe_fix(f"add `{hint(pool, 'taints', taint)}`", intent) if intent is not None else None
    command = where.command
    if taints or later or pool.taints_origin is not None or command is None or not command.editable or not command.is_("aks nodepool", "add") \
            or pool.is_system is True or where is not pool.vm_origin:
        return None
    return Plan.unsafe_fix(f"add `--node-taints {taint}` to `az aks nodepool add`",
                           Replace(command.end, f" --node-taints {shlex.quote(taint)}"))


def _iac_taint(pool, taints, where, taint: str) -> Plan | None:
    if taints or pool.is_system is not False or where is not pool.vm_origin:
        return None
    origin, name = pool.taints_origin, NAMES[pool.source]["taints"]
    if origin is None:
        intent = add_beside(pool.source, pool.vm_origin, name, [taint])
    else:
        intent = replace_value(pool.source, origin, [taint]) if is_empty_list(origin) else None
    return Plan.unsafe_fix(f"add `{hint(pool, 'taints', taint)}`", intent) if intent is not None else None


@rule(code="AKS001", name="gpu-pool-without-taint", severity="error", scope=SHELL, tags=("aks", "gpu", "isolation"))
def check(script: ShellScript, ctx):
    cluster = cluster_of(ctx.index, ctx.config)
    for pool, taints, later, where in cluster.memo("AKS001", lambda: _by_script(cluster)).get(script.path, ()):
        configured = parse_taint(ctx.config.effective_gpu_taints[0]) if ctx.config.effective_gpu_taints else None
        suggestion = str(configured) if configured is not None and configured.repels else "sku=gpu:NoSchedule"
        if taints:
            state = "has only " + ", ".join(f"`{t.taint}`" for t in taints) + ", no NoSchedule taint"
        else:
            state = "loses its taints in this update" if later else "has no NoSchedule taint"
        yield Finding(
            where.span,
            f"GPU node pool {describe_pool(pool)} {state}: pods that do not need a GPU can fill its nodes; "
            f"add `{hint(pool, 'taints', suggestion)}` and a matching toleration to GPU pods",
            node=("pool", pool.display, "node-taints"),
            fix=hint(pool, "taints", suggestion) + not_literal(pool.source, pool.taints_origin),
            autofix=add_taint(pool, taints, later, where, suggestion),
        )
