"""A KAITO resource sets a field that KAITO's v1beta1 API deprecates.

## What it does
Flags, in a KAITO `Workspace`, `InferenceSet` or `RAGEngine` (`kaito.sh`), each field that the
KAITO CRD marks `Deprecated: … will be removed in a future version`, at the field's key:

| kind (versions) | deprecated fields |
|---|---|
| Workspace (v1beta1) | `resource.count`, `resource.preferredNodes`; `inference.preset` and `tuning.preset`: `accessMode`, `presetOptions.image`, `presetOptions.imagePullSecrets` |
| InferenceSet (v1alpha1, v1beta1) | `spec.template.inference.preset`: `accessMode`, `presetOptions.image`, `presetOptions.imagePullSecrets` |
| RAGEngine (v1beta1) | `spec.compute.count`, `spec.compute.preferredNodes` |

The table is the CRDs' own (kaito-project/kaito `config/crd/bases/`, the commit bundled with
mlops-lint; `tests/test_rules_kai.py` checks it against them). A v1alpha1 Workspace or
RAGEngine is not judged here: its version is what SCH003 reports (RAGEngine v1alpha1 is
deprecated as a whole).

## Why is this bad?
KAITO keeps these fields only for the move to v1beta1 and says they "will be removed in a future
version": a manifest that still sets one is rejected by the API server (an unknown field under
strict validation) or silently loses the setting once the CRD drops it. The node count now follows
from the model and the instance type (and an InferenceSet's `replicas`), existing nodes are chosen
by `labelSelector`, and a preset's image is KAITO's own. The article's KAITO section wants the
Workspace to say what the operator needs and no more; a deprecated field is a setting that will
stop meaning anything at the next upgrade.

## Example
```yaml
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-phi-4-mini
resource:
  instanceType: Standard_NC24ads_A100_v4
  count: 1
  labelSelector:
    matchLabels:
      apps: phi-4-mini
inference:
  preset:
    name: phi-4-mini-instruct
    accessMode: public
```

Use instead:
```yaml
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-phi-4-mini
resource:
  instanceType: Standard_NC24ads_A100_v4
  labelSelector:
    matchLabels:
      apps: phi-4-mini
inference:
  preset:
    name: phi-4-mini-instruct
```

## Known problems
- Only the fields of the bundled KAITO CRDs are known; a newer KAITO that deprecates more is not
  followed until the bundle is updated.
- `accessMode: private` with `presetOptions.image` (a private model image) has no one-line
  replacement: the model moves to a custom `inference.template`, which the finding does not write.

## References
- KAITO, Workspace API v1beta1: https://github.com/kaito-project/kaito/blob/main/api/v1beta1/workspace_types.go
- KAITO CRDs: https://github.com/kaito-project/kaito/tree/main/config/crd/bases
"""

from __future__ import annotations

from mlops_lint.model.document import K8sObject
from mlops_lint.rule import Finding, Kind, rule

GROUP = "kaito.sh"
_PRESET = (("accessMode",), ("presetOptions", "image"), ("presetOptions", "imagePullSecrets"))
# (kind, version) -> the deprecated fields' paths in the object, as the KAITO CRDs mark them
DEPRECATED: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("Workspace", "v1beta1"): (("resource", "count"), ("resource", "preferredNodes"),
                               *(("inference", "preset") + p for p in _PRESET),
                               *(("tuning", "preset") + p for p in _PRESET)),
    ("InferenceSet", "v1alpha1"): tuple(("spec", "template", "inference", "preset") + p for p in _PRESET),
    ("InferenceSet", "v1beta1"): tuple(("spec", "template", "inference", "preset") + p for p in _PRESET),
    ("RAGEngine", "v1beta1"): (("spec", "compute", "count"), ("spec", "compute", "preferredNodes")),
}
ADVICE = {
    "count": "KAITO derives the node count from the model and the instance type",
    "preferredNodes": "existing nodes are chosen by `labelSelector`",
    "accessMode": "a preset's image is KAITO's own",
    "image": "a model in a private image belongs in a custom `inference.template`",
    "imagePullSecrets": "a model in a private image belongs in a custom `inference.template`",
}


@rule(code="KAI004", name="kaito-field-deprecated", severity="info", scope=Kind("Workspace", "InferenceSet", "RAGEngine"),
      tags=("kaito", "deprecation"))
def check(obj: K8sObject, ctx):
    if obj.group != GROUP:
        return
    fields = DEPRECATED.get((obj.kind, obj.api_version.rpartition("/")[2]))
    for path in fields or ():
        holder = obj.body
        for step in path[:-1]:
            holder = holder.get_map(step) if holder is not None else None
        if holder is None or path[-1] not in holder:
            continue
        yield Finding(
            holder.key_span(path[-1]),
            f"{obj.kind} `{obj.name}` sets `{'.'.join(path)}`, which KAITO's {obj.api_version} API deprecates and will "
            f"remove in a future version ({ADVICE[path[-1]]}): remove it",
            node=path,
            fix=f"delete `{path[-1]}`",
        )
