"""A GPU node pool in System mode.

## What it does
Flags node pools with a GPU VM size that end up in `System` mode: the first pool of
`az aks create` (always a System pool, `nodepool1` unless `--nodepool-name`) given a GPU
`--node-vm-size`, or a pool added or updated with `--mode System`. The finding points at the
`--mode System` flag, else at the create command's `--node-vm-size`.

In Terraform the cluster's `default_node_pool` is its System pool (the finding points at its
`vm_size`), and an `azurerm_kubernetes_cluster_node_pool` with `mode = "System"` is one too (at `mode`).
In Bicep and ARM templates the first `agentPoolProfiles` entry is the System pool unless its `mode` says otherwise.
A `node-pools:` entry of `.mlops-lint.yaml` is a System pool when it says `mode: System` (the
finding points at that key, when the run lints the config).

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

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster" "aks" {
  name       = "ml-aks"
  dns_prefix = "mlaks"
  default_node_pool {
    name    = "system"
    vm_size = "Standard_NC6s_v3"
  }
}
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

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster" "aks" {
  name       = "ml-aks"
  dns_prefix = "mlaks"
  default_node_pool {
    name    = "system"
    vm_size = "Standard_D4s_v5"
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC6s_v3"
  node_taints           = ["sku=gpu:NoSchedule"]
}
```

## Fix safety
Unsafe. For `az aks nodepool add` or `az aks nodepool update` with `--mode System`, the fix
replaces the value with `User`. The pool then no longer runs system pods and may scale to zero;
an update fails if the pool is the cluster's last System pool, and a cluster that relied on it
for system pods needs another System pool. No fix for the first pool of `az aks create`: the
repair is a CPU system pool plus a separate GPU pool, more than one edit can say.
In Terraform, Bicep and ARM a `mode` written as the literal `System` becomes `User` (`mode = "User"`,
`mode: 'User'`, `"mode": "User"`); a mode that comes from a variable or parameter
(`mode = var.pool_mode`) is not fixed (other pools may share it; the hint says so), nor is the
cluster's `default_node_pool`, nor, in a cluster the project defines without a CPU System pool,
the first of its GPU System pools (so that fixing the others leaves it a System pool).
A config `node-pools` entry's `mode: System` becomes `mode: User` when another config pool stays
a System pool (a CPU one, or an earlier GPU one, as above).
No fix in a script that records commands rather than runs them (`$ ` prompts,
Markdown fences: a terminal session, a README snippet) or that does not read cleanly (an
unclosed quote or heredoc).

## Known problems
SPEC words the condition as "System mode (or no `--mode User`)". `az aks nodepool add` makes a
User pool when `--mode` is not given (azure-cli's `aks_agentpool_add` defaults `mode` to
`User`), so an added pool without `--mode` is not flagged: only pools that really are System
pools are. A mode the script does not determine (`--mode "$MODE"`) is not judged.

## References
- AKS, Manage system node pools: https://learn.microsoft.com/azure/aks/use-system-pools
- AKS, Use GPUs for compute-intensive workloads: https://learn.microsoft.com/azure/aks/use-nvidia-gpu
"""

from mlops_lint.fix import Plan, Replace
from mlops_lint.fix.iac import IAC, attribute, config_set, is_literal, not_literal, replace_value
from mlops_lint.model.azcli import ShellScript, written_span
from mlops_lint.model.cluster import cluster_of, describe_pool
from mlops_lint.rule import SHELL, Finding, rule


def _by_script(cluster) -> dict[str, list]:
    """(pool, where) of each GPU pool in System mode, by the script its finding goes to, in pool
    order: once per cluster, not once per script."""
    found: dict[str, list] = {}
    for pool in cluster.pools:
        vm = pool.vm
        if not pool.in_linted_file or not pool.created or vm is None or not vm.is_gpu or pool.is_system is not True:
            continue
        where = pool.mode_origin or pool.vm_origin
        if where is not None:
            found.setdefault(where.path, []).append((pool, where))
    return found


def _another_system_pool(pool, cluster) -> bool:
    """The cluster keeps a System pool without ``pool``: the pool is added to a cluster made
    elsewhere (as `az aks nodepool add`), or another pool of the cluster is a CPU System pool, or,
    when all its System pools are GPU pools (each of which this fix could change), ``pool`` is
    not the first of them: the first stays, so fixing all the others still leaves one."""
    key = pool.cluster_key
    if key is None or key[0] == "?":
        return True
    system = [other for other in cluster.pools if other.cluster_key == key and other.is_system is True]
    if any(not (other.vm is not None and other.vm.is_gpu) for other in system):
        return True
    return bool(system) and system[0] is not pool


def _another_config_system_pool(pool, cluster) -> bool:
    """The config's pools keep a System pool without ``pool`` (as :func:`_another_system_pool`:
    a CPU System pool, or an earlier GPU System pool, which this fix leaves as it is)."""
    system = [other for other in getattr(cluster, "pools", ()) if other.source == "config" and other.is_system is True]
    if any(not (other.vm is not None and other.vm.is_gpu) for other in system):
        return True
    return bool(system) and system[0] is not pool


def user_mode(pool, where, cluster=None) -> Plan | None:
    """``--mode System`` of a ``nodepool add/update`` replaced by ``User``; in Terraform, Bicep
    and ARM a literal ``mode`` of ``System`` (never a variable's or parameter's value)."""
    if pool.source in IAC:
        written = getattr(where, "written", None)
        if where is not pool.mode_origin or not is_literal(where) or not isinstance(written[1], str) \
                or written[1].lower() != "system" or not _another_system_pool(pool, cluster):
            return None
        intent = replace_value(pool.source, where, "User")
        return Plan.unsafe_fix(f"make the GPU pool a User pool: `{attribute(pool.source, 'mode', 'User').rstrip(',')}`",
                               intent) if intent is not None else None
    if pool.source == "config":
        written = pool.entry.get("mode") if pool.entry is not None else None
        if where is not pool.mode_origin or not isinstance(written, str) or written.lower() != "system" \
                or not _another_config_system_pool(pool, cluster):
            return None
        intent = config_set(pool, "mode", "User")
        return Plan.unsafe_fix("make the GPU pool a User pool: `mode: User`", intent) if intent is not None else None
    command = where.command
    if where is not pool.mode_origin or command is None or not command.editable or command.group != "aks nodepool":
        return None
    flag = command.flag("--mode")
    value = flag.value if flag is not None else None
    if value is None or flag.span != where.span or str(value.value).lower() != "system" \
            or value.raw.strip("'\"").lower() != "system":
        return None
    return Plan.unsafe_fix("make the GPU pool a User pool: `--mode User`", Replace(written_span(value.raw, value.span), "User"))


@rule(code="AKS003", name="gpu-pool-system-mode", severity="error", scope=SHELL, tags=("aks", "gpu"))
def check(script: ShellScript, ctx):
    cluster = cluster_of(ctx.index, ctx.config)
    for pool, where in cluster.memo("AKS003", lambda: _by_script(cluster)).get(script.path, ()):
        how = "is set to System mode" if pool.mode_origin is not None else "is the cluster's first pool, a System pool"
        add = "add the GPU pool with `az aks nodepool add --mode User`"
        if pool.source == "terraform":
            how = "is set to System mode" if pool.mode_origin is not None else "is the cluster's default_node_pool, a System pool"
            add = "define the GPU pool as an `azurerm_kubernetes_cluster_node_pool` with `mode = \"User\"`"
        elif pool.source in ("bicep", "arm"):
            how = "is set to System mode" if pool.mode_origin is not None else "is the cluster's first agentPoolProfiles entry, a System pool"
            add = "define the GPU pool as another agent pool with " + ("`mode: 'User'`" if pool.source == "bicep"
                                                                       else '`"mode": "User"`')
        elif pool.source == "config":
            add = "give the GPU pool `mode: User` in `node-pools`"
        yield Finding(
            where.span,
            f"GPU node pool {describe_pool(pool)} {how}: AKS runs critical system pods there and it cannot "
            f"scale to zero; keep a CPU system pool and {add}",
            node=("pool", pool.display, "mode"),
            fix=(attribute(pool.source, "mode", "User").rstrip(",") + not_literal(pool.source, pool.mode_origin))
            if not_literal(pool.source, pool.mode_origin) else None,
            autofix=user_mode(pool, where, cluster),
        )
