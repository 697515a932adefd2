"""A KAITO Workspace asks for a VM size without a GPU.

## What it does
Flags a KAITO `Workspace` (`kaito.sh/v1alpha1` or `v1beta1`) whose `resource.instanceType` is
not a GPU VM size, and likewise an `InferenceSet` (`spec.template.resource.instanceType`, the
size of each replica's Workspace). Sizes are looked up in the VM size catalogue (`linter.model.vmsizes`, from
Azure's GPU size tables and naming convention; case-insensitive, `_promo` stripped): a known CPU
size (`Standard_D8s_v5`, `Standard_E16as_v5` …) is flagged, and so is a name outside the N
(GPU) family that the catalogue does not know (`Standard_L8s_v3`), or a value that is no Azure
VM size at all (`g5.2xlarge`). An unset `instanceType` is fine (v1alpha1 defaults it to
`Standard_NC24ads_A100_v4`; v1beta1 leaves it empty for bring-your-own GPU nodes), and so is an
N-family size the catalogue does not list yet, or a placeholder (`<your-vm-sku>`,
`${GPU_NODE_SIZE}`). The finding points at the value.

## Why is this bad?
`instanceType` is "the GPU node SKU" KAITO provisions for the workspace: the model preset's
inference or tuning pods request `nvidia.com/gpu`, which a CPU node never offers, so the
workspace never becomes ready while KAITO keeps a node it cannot use. The article's workspace
"requests an A100 GPU VM", and asks to "verify that the selected preset, VM SKU, and fine-tuning
method are supported by the installed KAITO version".

## Example
```yaml
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-tuning-phi-3-mini
resource:
  instanceType: Standard_D16s_v5
```

Use instead:
```yaml
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-tuning-phi-3-mini
resource:
  instanceType: Standard_NC24ads_A100_v4
```

## Known problems
- Whether a GPU size is large enough for the preset (GPU memory, GPU count), supported by the
  installed KAITO release, or still orderable (NCv3 sizes were retired on 2025-09-30) is not
  checked here.
- An unknown N-family name is taken to be a GPU size; AKS005 reports sizes the catalogue does not
  know for node pools.

## References
- KAITO, Workspace API: https://github.com/kaito-project/kaito/blob/main/api/v1beta1/workspace_types.go
- Azure, GPU-accelerated VM sizes: https://learn.microsoft.com/azure/virtual-machines/sizes/overview#gpu-accelerated
"""

from __future__ import annotations

import re

from mlops_lint.model.document import K8sObject
from mlops_lint.model.k8s import is_templated
from mlops_lint.model.vmsizes import lookup
from mlops_lint.rule import Kind, Finding, rule

SUGGESTED = "Standard_NC24ads_A100_v4"  # the size KAITO's v1alpha1 API defaults to
_AZURE_SIZE = re.compile(r"^(?:standard_|basic_)?(?P<family>[a-z]+?)\d", re.IGNORECASE)


def _placeholder(value: str) -> bool:
    return is_templated(value) or not any(ch.islower() for ch in value)


# where each kind keeps the Workspace resource spec (an InferenceSet: its replicas' Workspace template)
RESOURCE_PATH = {"Workspace": ("resource",), "InferenceSet": ("spec", "template", "resource")}


@rule(code="KAI001", name="kaito-instance-not-gpu", severity="error", scope=Kind("Workspace", "InferenceSet"),
      tags=("kaito", "gpu"))
def check(obj: K8sObject, ctx):
    if obj.group != "kaito.sh":
        return
    path = RESOURCE_PATH[obj.kind]
    resource = obj.body
    for step in path:
        resource = resource.get_map(step) if resource is not None else None
    value = resource.get("instanceType") if resource is not None else None
    if not isinstance(value, str) or not value.strip() or _placeholder(value):
        return
    size = lookup(value)
    if size is not None and size.is_gpu:
        return
    if size is not None:
        what = f"a CPU VM size ({size.vcpus} vCPUs, no GPU)" if size.vcpus else "a CPU VM size (no GPU)"
    else:
        match = _AZURE_SIZE.match(value.strip())
        if match is not None and match["family"].upper().startswith("N"):
            return  # an N-series (GPU) size the catalogue does not list yet
        what = "not an Azure GPU VM size" if match is not None and value.lower().startswith(("standard_", "basic_")) \
            else "not an Azure VM size"
    yield Finding(
        resource.value_span("instanceType"),
        f"{obj.kind} `{obj.name}` asks for instanceType `{value}`, {what}: the preset's pods request "
        f"`nvidia.com/gpu` and never start on it; use a GPU size such as {SUGGESTED}",
        node=path + ("instanceType",),
        fix=f"instanceType: {SUGGESTED}",
    )
