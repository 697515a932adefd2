"""An unknown key or an unparsable value in `--cluster-autoscaler-profile`.

## What it does
Reads every `key=value` of `--cluster-autoscaler-profile` (alias `--ca-profile`) on
`az aks create` and `az aks update`, whether given as separate words or comma-separated, and
flags:

- a key that is not an AKS autoscaler-profile key (`scan-interval`, `scale-down-unneeded-time`,
  `max-graceful-termination-sec`, `expander` …; the 20 keys of the ARM profile);
- an entry that is not `key=value`;
- a value of the wrong type: a duration that Go cannot parse (`10m`, `600s` and `1h30m` are
  fine; a number needs a unit: `30` is not), a whole-number key given a unit
  (`max-graceful-termination-sec=600s`) or a fraction, a ratio outside 0–1, a boolean that is
  not `true`/`false`, an `expander` outside `least-waste`, `most-pods`, `priority`, `random`.

The finding points at the entry. `--cluster-autoscaler-profile ""` (reset) is valid.

In Terraform, the literal values of an `azurerm_kubernetes_cluster`'s `auto_scaler_profile` block
are checked the same way (`scan_interval`, `scale_down_unneeded` … each sets its profile key;
terraform itself rejects unknown attribute names). In Bicep (and ARM templates), a `managedClusters` resource's
`properties.autoScalerProfile` keys are the profile's own: unknown keys and literal values are
checked. The finding points at the attribute's value (at the key for an unknown key).

## Why is this bad?
The CLI checks keys against the ARM model and rejects unknown ones, and the autoscaler cannot
start with a value it cannot parse, so the `az aks update` fails and the profile the article
tunes ("scan-interval=20s scale-down-unneeded-time=10m … max-graceful-termination-sec=120") is
never applied: scale-down keeps its defaults, including the 600-second termination cap that
decides whether a training pod can checkpoint before its node goes away.

## Example
```bash
az aks update --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" \
  --cluster-autoscaler-profile scan-interval=20 scale-down-unneded-time=10m
```

In Terraform:
```hcl
  auto_scaler_profile {
    scan_interval                = "20"
    max_graceful_termination_sec = "600s"
  }
```

Use instead:
```bash
az aks update --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" \
  --cluster-autoscaler-profile scan-interval=20s scale-down-unneeded-time=10m
```

In Terraform:
```hcl
  auto_scaler_profile {
    scan_interval                = "20s"
    max_graceful_termination_sec = "600"
  }
```

## Fix safety
Unsafe. For an unknown key that is close to exactly one profile key (`scale-down-unneded-time`),
the fix replaces the key with it, leaving the value as written (only when that value is valid
for the key). The CLI refused the command
before; afterwards the value takes effect for that key, and a close spelling is a guess at
what the author meant, so it is applied only with `--unsafe-fixes`. Values, entries without
`=` and keys with no close match have no fix: which value is right is the author's choice.
No fix in a script that records commands rather than runs them (`$ ` prompts,
Markdown fences: a terminal session, a README snippet) or that does not read cleanly (an
unclosed quote or heredoc).

## Known problems
ARM's descriptions call several durations "minutes only", yet AKS itself returns `10s` for
`scale-down-delay-after-delete`; every Go duration unit is accepted for every duration key.
Entries whose value the script does not determine (`$PROFILE`) are not judged.

## References
- AKS, Use the cluster autoscaler (profile settings): https://learn.microsoft.com/azure/aks/cluster-autoscaler#use-the-cluster-autoscaler-profile
- Go, time.ParseDuration: https://pkg.go.dev/time#ParseDuration
"""


from mlops_lint.fix import Plan, Replace
from mlops_lint.model.azcli import UNKNOWN, ShellScript
from mlops_lint.model.position import Span
from mlops_lint.model.cluster import autoscaler_profile_keys, profile_entries, profile_value_problem
from mlops_lint.rule import SHELL, Finding, rule
from mlops_lint.suggest import close_matches


def rename(entry, key: str) -> Plan | None:
    """The entry's key replaced by ``key``, when the entry's span is exactly its text."""
    span, written = entry.span, entry.text.partition("=")[0]
    raw = entry.flag_value.raw
    if entry.value is UNKNOWN or profile_value_problem(key, str(entry.value)) is not None:
        return None  # the renamed entry would be refused for its value
    if span.line != span.end_line or span.end_col - span.col != len(entry.text) or written != entry.key \
            or raw.strip("'\"") != entry.flag_value.value or "$" in raw or "\\" in raw:
        return None  # the text at the span is not the entry as read (an expansion, escapes)
    return Plan.unsafe_fix(f"rename `{entry.key}` to `{key}`",
                           Replace(Span(span.line, span.col, span.line, span.col + len(written)), key))


@rule(code="AKS006", name="autoscaler-profile-invalid", severity="error", scope=SHELL, tags=("aks", "autoscaling"))
def check(script: ShellScript, ctx):
    keys = autoscaler_profile_keys()
    if not isinstance(script, ShellScript):  # Terraform's auto_scaler_profile, Bicep's autoScalerProfile
        yield from _iac(script, keys)
        return
    for az in script.az_commands:
        if not (az.is_("aks", "create") or az.is_("aks", "update")):
            continue
        flag = az.flag("--cluster-autoscaler-profile")
        if flag is None:
            continue
        for entry in profile_entries(flag):
            node = (az.group, az.verb, "--cluster-autoscaler-profile", entry.key or entry.text)
            if entry.key is None:
                if entry.value is UNKNOWN and entry.flag_value.value is UNKNOWN:
                    continue  # $PROFILE: not determined by the script
                yield Finding(entry.span, f"autoscaler profile entry `{entry.text}` is not key=value", node=node)
            elif entry.key not in keys:
                close = close_matches(entry.key, keys)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                yield Finding(entry.span, f"`{entry.key}` is not a cluster autoscaler profile key{hint}", node=node,
                              fix=close[0] if close else None,
                              autofix=rename(entry, close[0]) if close and az.editable else None)
            elif entry.value is not UNKNOWN:
                problem = profile_value_problem(entry.key, str(entry.value))
                if problem is not None:
                    yield Finding(entry.span, f"autoscaler profile `{entry.key}`: {problem}", node=node)


# azurerm's auto_scaler_profile attributes: the profile key each sets (terraform validates the names)
TERRAFORM_KEYS = {
    "balance_similar_node_groups": "balance-similar-node-groups", "expander": "expander",
    "max_graceful_termination_sec": "max-graceful-termination-sec",
    "max_node_provisioning_time": "max-node-provision-time", "max_unready_nodes": "ok-total-unready-count",
    "max_unready_percentage": "max-total-unready-percentage", "new_pod_scale_up_delay": "new-pod-scale-up-delay",
    "scale_down_delay_after_add": "scale-down-delay-after-add",
    "scale_down_delay_after_delete": "scale-down-delay-after-delete",
    "scale_down_delay_after_failure": "scale-down-delay-after-failure", "scan_interval": "scan-interval",
    "scale_down_unneeded": "scale-down-unneeded-time", "scale_down_unready": "scale-down-unready-time",
    "scale_down_utilization_threshold": "scale-down-utilization-threshold",
    "empty_bulk_delete_max": "max-empty-bulk-delete",
    "skip_nodes_with_local_storage": "skip-nodes-with-local-storage",
    "skip_nodes_with_system_pods": "skip-nodes-with-system-pods",
    "daemonset_eviction_for_empty_nodes_enabled": "daemonset-eviction-for-empty-nodes",
    "daemonset_eviction_for_occupied_nodes_enabled": "daemonset-eviction-for-occupied-nodes",
    "ignore_daemonsets_utilization_enabled": "ignore-daemonsets-utilization",
}
CLUSTER_RESOURCES = ("azurerm_kubernetes_cluster", "Microsoft.ContainerService/managedClusters")


def _literal(expr) -> str | None:
    """A literal value as the profile reads it (strings, numbers, booleans); None otherwise."""
    if expr[0] != "lit" or expr[1] is None or isinstance(expr[1], (list, dict)):
        return None
    return str(expr[1]).lower() if isinstance(expr[1], bool) else str(expr[1])


def _iac(source, keys):
    """The profile of each cluster resource of a Terraform or Bicep file: literal values only."""
    for block in source.blocks:
        if block.type != "resource" or not block.labels or block.labels[0] not in CLUSTER_RESOURCES:
            continue
        if block.labels[0] == "azurerm_kubernetes_cluster":
            profile = block.block("auto_scaler_profile")
            for attr in profile.attrs.values() if profile is not None else ():
                key, value = TERRAFORM_KEYS.get(attr.name), _literal(attr.expr)
                problem = profile_value_problem(key, value) if key is not None and value is not None else None
                if problem is not None:
                    yield Finding(attr.value_span, f"autoscaler profile `{attr.name}`: {problem}",
                                  node=("cluster", block.labels[1], "auto_scaler_profile", attr.name))
            continue
        properties = block.attrs.get("properties")
        profile = next((value for (key, value) in (properties.expr[1] if properties is not None
                                                   and properties.expr[0] == "object" else ())
                        if key == ("lit", "autoScalerProfile")), None)
        if profile is None or profile[0] != "object":
            continue
        for (key, value), (key_span, value_span) in zip(profile[1], profile[2]):
            name, text = key[1], _literal(value)
            node = ("cluster", block.labels[1], "autoScalerProfile", name)
            if name not in keys:
                close = close_matches(name, keys)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                yield Finding(key_span, f"`{name}` is not a cluster autoscaler profile key{hint}", node=node,
                              fix=close[0] if close else None)
            elif text is not None:
                problem = profile_value_problem(name, text)
                if problem is not None:
                    yield Finding(value_span, f"autoscaler profile `{name}`: {problem}", node=node)
