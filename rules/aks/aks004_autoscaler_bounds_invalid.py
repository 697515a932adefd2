"""Cluster autoscaler bounds that are missing, reversed or out of range.

## What it does
Checks every `az aks create`, `az aks update`, `az aks nodepool add` and `az aks nodepool update`
command that touches the cluster autoscaler:

- `--enable-cluster-autoscaler` or `--update-cluster-autoscaler` without both `--min-count` and
  `--max-count` (points at the switch);
- `--min-count` / `--max-count` without either switch (points at the count);
- `--min-count` greater than `--max-count`, a count that is not a whole number, above 1000, or
  a `--min-count 0` on a System pool, which must keep a node (points at the value);
- on create/add with the autoscaler on, a `--node-count` outside `[min, max]` (points at it).

In Terraform (`azurerm_kubernetes_cluster_node_pool`, the cluster's `default_node_pool`) the same
bounds are checked on the attributes azurerm refuses at plan time: `auto_scaling_enabled = true`
(or `enable_auto_scaling`) without `min_count` and `max_count`, bounds without it, reversed or
out-of-range bounds, `min_count = 0` on a System pool, a `node_count` outside them. Values are
literals, `var.x` with its `default` (or `terraform.tfvars` / `*.auto.tfvars`; a value another
`*.tfvars` gives differently makes it unknown), `local.x` and interpolation of those; anything
else is unknown and not judged. `count` and `for_each` over literals make one pool each, and a
finding is reported once per attribute.
Bicep pools get the same checks on `enableAutoScaling`, `minCount`, `maxCount` and `count`
(parameter defaults, `var`s; a `.bicepparam` value that differs makes a parameter unknown), and
ARM templates' pools likewise (`defaultValue`s; a `*.parameters.json` is an alternative).
The entries of `node-pools:` in `.mlops-lint.yaml` (when the run lints the config) get them on
`enable-cluster-autoscaler`, `min-count`, `max-count` and `node-count`, at the entry's keys, with
one difference: bounds without `enable-cluster-autoscaler` say the pool autoscales (the config
describes the pool, SPEC's `max-count: 4`), so a bound left out is unknown rather than missing;
only a written `enable-cluster-autoscaler: true` asks for both, and a written `false` with bounds
is reported. A `min-count` above `max-count` is a config error, before any rule runs.

## Why is this bad?
The Azure CLI rejects each of these (`min-count and max-count are required for
--enable-cluster-autoscaler`, `node-count is not in the range of min-count and max-count`), so
the provisioning script fails half-way, or, inside `|| true` and retry loops, leaves the pool
without the autoscaler the article relies on: "enable the cluster autoscaler on the GPU user
node pool and define minimum and maximum capacity". Reversed bounds never scale.

## Example
```bash
az aks nodepool add \
  --cluster-name "$AKS_CLUSTER" --resource-group "$RESOURCE_GROUP" \
  --name gpunp --node-vm-size Standard_NC4as_T4_v3 \
  --enable-cluster-autoscaler \
  --min-count 4 \
  --max-count 2
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3"
  auto_scaling_enabled  = true
  min_count             = 4
  max_count             = 2
}
```

Use instead:
```bash
az aks nodepool add \
  --cluster-name "$AKS_CLUSTER" --resource-group "$RESOURCE_GROUP" \
  --name gpunp --node-vm-size Standard_NC4as_T4_v3 \
  --node-count 0 \
  --enable-cluster-autoscaler \
  --min-count 0 \
  --max-count 4
```

In Terraform:
```hcl
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3"
  auto_scaling_enabled  = true
  min_count             = 0
  max_count             = 4
}
```

## Fix safety
Two of the findings have one repair:

- `--min-count 0` on a System pool (the literal `0`, with a `--max-count` and any `--node-count`
  of at least 1): the fix writes `1`, the smallest count the CLI accepts there. Safe: the command was refused as it
  stood, and a System pool keeps a node whatever the bound says.
- `--min-count` and `--max-count` (both, valid and in order, with any `--node-count` between
  them) on `az aks create` or `az aks nodepool add` without a switch: the fix appends
  `--enable-cluster-autoscaler` after the command's last word. Unsafe: the pool then scales
  between the bounds instead of the command being refused. On `update` there is no fix, since
  `--enable-` and `--update-cluster-autoscaler` depend on whether the pool is autoscaled already.

A missing bound, reversed bounds, a count out of range or a `--node-count` outside the bounds
have no fix: which number is right is the author's choice.

Terraform, Bicep and ARM pools get the same two repairs where the file writes the value as a
literal: `min_count = 0` (`minCount: 0`) of a System pool becomes `1` (safe), and bounds with the
switch written `false` get `true` (unsafe); in Bicep and ARM a missing `enableAutoScaling` is
added on a new line beside the first bound (`enableAutoScaling: true`). A missing switch in
Terraform is not added (its name depends on the azurerm version: `auto_scaling_enabled` since
4.0, `enable_auto_scaling` before), and a value that comes from a variable or parameter is never
changed (the hint says so).
A config `node-pools` entry gets the same two: `min-count: 0` of a System pool becomes `1`
(safe), and bounds with `enable-cluster-autoscaler: false` get `true` (unsafe).
No fix in a script that records commands rather than runs them (`$ ` prompts,
Markdown fences: a terminal session, a README snippet) or that does not read cleanly (an
unclosed quote or heredoc).

## Known problems
- Each command is judged on its own flags, as the CLI validates it; values the script does not
  determine (`--max-count "$MAX"` with `MAX=$(...)`) are not judged, and a command with words of
  unknown value (`$EXTRA_ARGS`) may carry the missing flags.
- The CLI also refuses `nodepool update --enable-cluster-autoscaler` on a pool that is already
  autoscaled (use `--update-cluster-autoscaler`); the article's two snippets do exactly that, and
  which one a reader runs is not known, so it is not flagged.
- Ranges are those of the CLI help (0–1000 for User pools, 1–1000 for System pools).

## References
- AKS, Use the cluster autoscaler: https://learn.microsoft.com/azure/aks/cluster-autoscaler
- Azure CLI, az aks nodepool add: https://learn.microsoft.com/cli/azure/aks/nodepool#az-aks-nodepool-add
"""

from mlops_lint.model.bounds import whole_number
from mlops_lint.model.azcli import UNKNOWN, AzFlag, ShellScript, resolved, written_span
from mlops_lint.model.cluster import cluster_of
from mlops_lint.fix import Plan, Replace
from mlops_lint.fix.iac import IAC, NAMES, add_beside, config_set, is_literal, not_literal, replace_value
from mlops_lint.rule import SHELL, Finding, rule

COMMANDS = {("aks", "create"), ("aks", "update"), ("aks nodepool", "add"), ("aks nodepool", "update")}


def _count(flag: AzFlag | None):
    """(value, span) of a count flag: value None when absent or undetermined, "bad" when not a number."""
    if flag is None or flag.value is None:
        return None, flag.span if flag else None
    value = resolved(flag.value.value)
    if value is UNKNOWN:
        return None, flag.value.span
    number = whole_number(str(value).strip())  # more digits than any count has: "bad" as well
    return ("bad" if number is None else number), flag.value.span


def _on(flag: AzFlag | None) -> bool:
    return flag is not None and (flag.value is None or str(flag.value.value).lower() != "false")


@rule(code="AKS004", name="autoscaler-bounds-invalid", severity="error", scope=SHELL, tags=("aks", "autoscaling"))
def check(script: ShellScript, ctx):
    cluster = cluster_of(ctx.index, ctx.config)
    if not isinstance(script, ShellScript):  # a Terraform file: its node pools' attributes
        yield from _terraform(cluster, script.path)
        return
    for az in script.az_commands:
        if (az.group, az.verb) not in COMMANDS:
            continue
        switches = (az.flag("--enable-cluster-autoscaler"), az.flag("--update-cluster-autoscaler"))
        switch = next((f for f in switches if _on(f)), None)
        low_flag, high_flag = az.flag("--min-count"), az.flag("--max-count")
        where = f"`az {az.group} {az.verb}`"
        if switch is not None and not az.has_unknown_words and (low_flag is None or high_flag is None):
            missing = " and ".join(n for n, f in (("--min-count", low_flag), ("--max-count", high_flag)) if f is None)
            yield Finding(switch.span, f"{where} turns the cluster autoscaler on with {switch.name} but without "
                                       f"{missing}; the CLI requires both bounds", node=(az.group, az.verb, switch.name))
        given = [f for f in (low_flag, high_flag) if f is not None]
        if switch is None and given and not az.has_unknown_words and not _on(az.flag("--disable-cluster-autoscaler")):
            names = " and ".join(f.name for f in given)
            yield Finding(given[0].span, f"{where} sets {names} without --enable-cluster-autoscaler or "
                                         "--update-cluster-autoscaler; the CLI rejects bounds without a switch",
                          node=(az.group, az.verb, given[0].name), autofix=_enable(az, low_flag, high_flag))
        low, low_span = _count(low_flag)
        high, high_span = _count(high_flag)
        for value, span, name in ((low, low_span, "--min-count"), (high, high_span, "--max-count")):
            if value == "bad" or isinstance(value, int) and value > 1000:
                yield Finding(span, f"{where} {name} must be a whole number from 0 to 1000",
                              node=(az.group, az.verb, name))
        if isinstance(low, int) and isinstance(high, int) and low > high:
            yield Finding(low_span, f"{where} --min-count {low} is greater than --max-count {high}: the pool can never "
                                    "satisfy both", node=(az.group, az.verb, "--min-count"))
        if low == 0 and _system_pool(az, cluster):
            yield Finding(low_span, f"{where} --min-count 0 on a System pool: System pools keep at least one node",
                          node=(az.group, az.verb, "--min-count"),
                          autofix=_raise_min(az, low_flag, high))
        count, count_span = _count(az.flag("--node-count"))
        if switch is not None and (az.verb in ("create", "add")) and isinstance(count, int) \
                and isinstance(low, int) and isinstance(high, int) and low <= high and not low <= count <= high:
            yield Finding(count_span, f"{where} --node-count {count} is outside --min-count {low} .. "
                                      f"--max-count {high}", node=(az.group, az.verb, "--node-count"))


def _raise_min(az, low_flag: AzFlag, high) -> Plan | None:
    """``--min-count 1`` for a literal ``--min-count 0`` on a System pool, when 1 is within the
    bounds and the node count (so that the fixed command gets no other finding)."""
    count, _ = _count(az.flag("--node-count"))
    if not az.editable or not (isinstance(high, int) and 1 <= high <= 1000) or low_flag.value.raw.strip("'\"") != "0":
        return None
    if az.verb in ("create", "add") and az.has("--node-count") and not (isinstance(count, int) and 1 <= count <= high):
        return None
    return Plan.safe_fix("raise --min-count to 1", Replace(written_span(low_flag.value.raw, low_flag.value.span), "1"))


def _enable(az, low_flag: AzFlag | None, high_flag: AzFlag | None) -> Plan | None:
    """``--enable-cluster-autoscaler`` for bounds given on create/add, when they and the node
    count are valid (the switch then makes the command right, not another finding)."""
    if not az.editable or az.verb not in ("create", "add") or low_flag is None or high_flag is None:
        return None
    low, _ = _count(low_flag)
    high, _ = _count(high_flag)
    count, _ = _count(az.flag("--node-count"))
    system = az.is_("aks", "create") or str(getattr(az.value("--mode"), "value", "")).lower() == "system"
    if not (isinstance(low, int) and isinstance(high, int) and (1 if system else 0) <= low <= high <= 1000):
        return None
    if az.has("--node-count") and not (isinstance(count, int) and low <= count <= high):
        return None
    return Plan.unsafe_fix("turn the cluster autoscaler on: `--enable-cluster-autoscaler`",
                           Replace(az.end, " --enable-cluster-autoscaler"))


def _system_pool(az, cluster) -> bool:
    if az.is_("aks", "create"):
        return True
    mode = az.value("--mode")
    if az.is_("aks nodepool", "add"):  # a pool made with --mode System (User when not given)
        return mode is not None and str(mode.value).lower() == "system"
    if not az.is_("aks nodepool", "update"):
        return False
    if mode is not None:
        return str(mode.value).lower() == "system"
    name = az.value("--name")
    pools = [p for p in cluster.pools if name is not None and p.name == name.value and p.origin is not None
             and p.origin.command is not az]
    return bool(pools) and all(p.is_system is True for p in pools)


def _terraform(cluster, path: str):
    """The same bounds on the Terraform pools defined in ``path`` (azurerm refuses them at plan
    time: both bounds with ``auto_scaling_enabled = true``, none without it), once per attribute
    (``for_each`` instances share theirs)."""
    seen = set()
    for pool in cluster.pools_defined_in(path):
        if pool.source not in IAC_NAMES:
            continue
        for finding in _terraform_pool(pool, IAC_NAMES[pool.source]):
            key = (finding.span, finding.message)
            if key not in seen:
                seen.add(key)
                yield finding


IAC_NAMES = {  # the settings' names, and who refuses them
    "terraform": {"min_count": "min_count", "max_count": "max_count", "node_count": "node_count",
                  "switch": "auto_scaling_enabled = true", "tool": "azurerm"},
    "bicep": {"min_count": "minCount", "max_count": "maxCount", "node_count": "count",
              "switch": "enableAutoScaling: true", "tool": "the AKS API"},
    "arm": {"min_count": "minCount", "max_count": "maxCount", "node_count": "count",
            "switch": '"enableAutoScaling": true', "tool": "the AKS API"},
    "config": {"min_count": "min-count", "max_count": "max-count", "node_count": "node-count",
               "switch": "enable-cluster-autoscaler: true", "tool": "the AKS API"},
}


def _terraform_pool(pool, names):
    where = f"node pool `{pool.display}`"
    tool, switch_name = names["tool"], names["switch"]
    min_name, max_name, count_name = names["min_count"], names["max_count"], names["node_count"]
    origins = pool.count_origin
    low, high, count = pool.min_count, pool.max_count, pool.node_count
    switch = pool.autoscaler_origin
    name = switch.span if switch is not None else None
    # a config's bounds without the switch say the pool autoscales: a bound left out is then not
    # known rather than missing (linter.model.cluster.from_config)
    if pool.autoscaler is True and ("min_count" not in origins or "max_count" not in origins) \
            and (pool.source != "config" or switch is not None):
        missing = " and ".join(names[n] for n in ("min_count", "max_count") if n not in origins)
        yield Finding(name, f"{where} turns the cluster autoscaler on without {missing}; {tool} requires both "
                            "bounds", node=("pool", pool.display, switch_name.split()[0].rstrip(":")))
    given = [origins[n] for n in ("min_count", "max_count") if n in origins]
    if pool.autoscaler is False and given and any(isinstance(v, int) for v in (low, high)):
        written = " and ".join(names[n] for n in ("min_count", "max_count") if n in origins)
        yield Finding(given[0].span, f"{where} sets {written} without `{switch_name}`; {tool} "
                                     "requires them to be null when the autoscaler is off",
                      node=("pool", pool.display, min_name if "min_count" in origins else max_name),
                      autofix=_iac_enable(pool))
    for value, field in ((low, "min_count"), (high, "max_count")):
        if isinstance(value, int) and not 0 <= value <= 1000:
            yield Finding(origins[field].target, f"{where} {names[field]} must be a whole number from 0 to 1000",
                          node=("pool", pool.display, names[field]))
    if isinstance(low, int) and isinstance(high, int) and low > high:
        yield Finding(origins["min_count"].target, f"{where} {min_name} {low} is greater than {max_name} {high}: the "
                                                   "pool can never satisfy both", node=("pool", pool.display, min_name))
    if low == 0 and pool.is_system is True:
        yield Finding(origins["min_count"].target, f"{where} {min_name} 0 on a System pool: System pools keep at "
                                                   "least one node", node=("pool", pool.display, min_name),
                      fix=(f"{min_name} = 1" if pool.source == "terraform" else f"{min_name}: 1")
                      + not_literal(pool.source, origins["min_count"]) if not_literal(pool.source, origins["min_count"])
                      else None,
                      autofix=_iac_raise_min(pool))
    if pool.autoscaler is True and isinstance(count, int) and isinstance(low, int) and isinstance(high, int) \
            and low <= high and not low <= count <= high:
        yield Finding(origins["node_count"].target, f"{where} {count_name} {count} is outside {min_name} {low} .. "
                                                    f"{max_name} {high}", node=("pool", pool.display, count_name))


def _iac_raise_min(pool) -> Plan | None:
    """A literal ``min_count = 0`` (``minCount: 0``) of a System pool written ``1``, when 1 is
    within ``max_count`` and any node count (so the fixed pool gets no other finding)."""
    origin, high, count = pool.count_origin.get("min_count"), pool.max_count, pool.node_count
    if pool.source == "config":  # a node-pools entry: its min-count is written as the value read
        if origin is None or pool.min_count != 0 or isinstance(pool.min_count, bool) \
                or not (isinstance(high, int) and 1 <= high <= 1000) \
                or ("node_count" in pool.count_origin and not (isinstance(count, int) and 1 <= count <= high)):
            return None
        intent = config_set(pool, "min-count", 1)
        return Plan.safe_fix("raise min-count to 1", intent) if intent is not None else None
    if pool.source not in IAC or not is_literal(origin) or origin.written[1] != 0 or isinstance(origin.written[1], bool):
        return None
    if not (isinstance(high, int) and 1 <= high <= 1000):
        return None
    if "node_count" in pool.count_origin and not (isinstance(count, int) and 1 <= count <= high):
        return None
    intent = replace_value(pool.source, origin, 1)
    return Plan.safe_fix(f"raise {NAMES[pool.source]['min_count']} to 1", intent) if intent is not None else None


def _iac_enable(pool) -> Plan | None:
    """The autoscaler switch turned on for valid bounds (and a node count between them): a literal
    ``false`` written ``true``; in Bicep and ARM a missing ``enableAutoScaling`` added beside the
    first bound. A missing switch in Terraform is not added: its name depends on the azurerm
    version (``auto_scaling_enabled`` since 4.0, ``enable_auto_scaling`` before)."""
    origins, low, high, count = pool.count_origin, pool.min_count, pool.max_count, pool.node_count
    if pool.source not in (*IAC, "config") or "min_count" not in origins or "max_count" not in origins:
        return None
    if not (isinstance(low, int) and isinstance(high, int) and (1 if pool.is_system is not False else 0) <= low <= high <= 1000):
        return None
    if "node_count" in origins and not (isinstance(count, int) and low <= count <= high):
        return None
    switch = pool.autoscaler_origin
    if pool.source == "config":  # the switch written `false` (the only way a config's bounds are off)
        if switch is None or pool.entry is None or pool.entry.get("enable-cluster-autoscaler") is not False:
            return None
        intent = config_set(pool, "enable-cluster-autoscaler", True)
        return Plan.unsafe_fix("turn the cluster autoscaler on: `enable-cluster-autoscaler: true`", intent) \
            if intent is not None else None
    if switch is not None:
        if not is_literal(switch) or switch.written[1] is not False:
            return None
        intent, title = replace_value(pool.source, switch, True), "turn the cluster autoscaler on: `false` becomes `true`"
    elif pool.source == "terraform":
        return None
    else:
        first = min((origins["min_count"], origins["max_count"]), key=lambda o: (o.span.line, o.span.col))
        intent = add_beside(pool.source, first, NAMES[pool.source]["autoscaler"], True)
        title = f"turn the cluster autoscaler on: `{IAC_NAMES[pool.source]['switch']}`"
    return Plan.unsafe_fix(title, intent) if intent is not None else None
