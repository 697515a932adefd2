"""A KAITO tuning Workspace has nowhere to put the tuned model.

## What it does
Flags a KAITO `Workspace` (`kaito.sh/v1alpha1` or `v1beta1`) with a `tuning` section whose
`tuning.output` names no destination: neither a non-empty `output.image` (the registry image the
adapter is pushed to) nor an `output.volumeSource` (a volume it is written to). The finding points
at `output:`, or at `tuning:` when there is no `output` at all. Values filled in later
(`${OUTPUT_IMAGE}`) count as a destination.

## Why is this bad?
The adapter a tuning run produces is the whole point of the run; without a destination it stays
in the tuning pod and is lost with it, and there is no output image digest to record. The
article: "persist the resulting model to a governed model registry or Azure Container
Registry. Treat the workspace manifest, input dataset version, preset version, adapter
configuration, and output image digest as one versioned training record." (The CRD also lists
`output` as required, so the API server rejects a tuning section without one.)

## Example
```yaml
tuning:
  preset:
    name: phi-3-mini-4k-instruct
  method: qlora
  input:
    image: myregistry.azurecr.io/datasets/alpaca:2024-06
```

Use instead:
```yaml
tuning:
  preset:
    name: phi-3-mini-4k-instruct
  method: qlora
  input:
    image: myregistry.azurecr.io/datasets/alpaca:2024-06
  output:
    image: myregistry.azurecr.io/adapters/phi-3-qlora:0.1.0
    imagePushSecret: acr-push
```

## Known problems
- Whether the destination is governed (a registry the team owns, a volume with a Retain class)
  is not checked; STO001 checks the reclaim policy of the output claim when it is named for
  checkpoints.
- KAITO's CRD (bundled, or the project's) requires `tuning.output`: a Workspace without it is
  SCH002's error (the API server refuses it), and this rule stays quiet there, one cause one
  finding. It reports what the schema does not: an output that names neither destination, or a
  missing one where the CRD in use does not require it (`bundled-crds: false`).

## References
- KAITO, fine-tuning input and output: https://github.com/kaito-project/kaito/blob/main/docs/tuning/README.md
- KAITO, Workspace API: https://github.com/kaito-project/kaito/blob/main/api/v1beta1/workspace_types.go
"""

from __future__ import annotations

from mlops_lint.model.document import K8sObject
from mlops_lint.rule import Kind, Finding, rule
from mlops_lint.validation.validate import malformed


@rule(code="KAI003", name="kaito-output-missing", severity="warning", scope=Kind("Workspace"), tags=("kaito",))
def check(obj: K8sObject, ctx):
    if obj.group != "kaito.sh":
        return
    tuning = obj.body.get_map("tuning")
    if tuning is None or malformed(obj, ctx, "tuning", "output"):
        return  # (the schema requires an output there: SCH002 reports it, one cause one finding)
    output = tuning.get_map("output")
    if output is not None:
        image, volume = output.get("image"), output.get("volumeSource")
        if (isinstance(image, str) and image.strip()) or (isinstance(volume, dict) and volume):
            return
        what = "`tuning.output` names neither an `image` nor a `volumeSource`"
        span, node = tuning.key_span("output"), ("tuning", "output")
    else:
        span, node, what = obj.body.key_span("tuning"), ("tuning",), "`tuning` has no `output`"
    yield Finding(
        span,
        f"tuning Workspace `{obj.name}` has no output destination ({what}), so the "
        "tuned adapter is lost with the tuning pod; push it to a registry (`output.image`) or write it to a volume",
        node=node,
        fix="output:\n  image: <registry>.azurecr.io/<adapter>:<version>\n  imagePushSecret: <secret>",
    )
