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

Use instead:
```bash
az aks update --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" \
  --cluster-autoscaler-profile scan-interval=20s scale-down-unneeded-time=10m
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


from linter.fix import Plan, Replace
from linter.model.azcli import UNKNOWN, ShellScript
from linter.model.position import Span
from linter.model.cluster import autoscaler_profile_keys, profile_entries, profile_value_problem
from linter.rule import SHELL, Finding, rule
from linter.suggest import close_matches


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
