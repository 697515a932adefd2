"""A KAITO Workspace's or InferenceSet's GPU partition that KAITO's webhook rejects.

## What it does
Reads `resource.partition` of a KAITO `Workspace` (`kaito.sh/v1beta1`: `mode` `mig` with a MIG
`profile`, or `accelerator` with a GPU `count`), and `spec.template.resource.partition` of a
v1beta1 `InferenceSet` (the template of the Workspaces it creates), and flags, at the key at
fault, what KAITO's admission webhook (`api/v1beta1/workspace_validation.go`) refuses. An
InferenceSet is refused at admission too: its webhook validates the Workspace it would create
(`ValidateInferenceSetWorkspace`), and in BYO mode refuses a template `instanceType` itself.

- a partition beside `resource.instanceType`: KAITO partitions GPUs only on BYO nodes (node
  auto-provisioning disabled), where `instanceType` must be empty, and with auto-provisioning on
  it refuses any partition ("GPU partitioning is only supported with BYO nodes"), so the pair is
  refused in both modes;
- a partition on a tuning Workspace ("GPU partitioning is not supported for tuning workloads";
  an InferenceSet only infers);
- `mode: mig` with a `count` (valid only for `accelerator`), or with a `profile` that is no
  NVIDIA MIG profile (`3g.45gb`; the catalogue of `GPU008`);
- `mode: accelerator` with a `profile`, or without a `count`.

A `RAGEngine`'s `spec.compute` has the same `partition` field (it shares the Workspace's resource
type), but KAITO's RAGEngine webhook does not validate it and its controller does not read it:
nothing is refused there, so it is not judged.

## Why is this bad?
The Workspace (or InferenceSet) is never created: the webhook returns the error and nothing is
deployed. The
article's MIG section wants the requested profile to be one the GPU offers and the MIG layout to
be owned by one controller; KAITO's partition support is that contract for KAITO workloads, and
it holds only on nodes the team brings and labels itself.

## Example
```yaml
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-phi-4-mini-mig
resource:
  instanceType: Standard_NC24ads_A100_v4
  labelSelector:
    matchLabels:
      apps: phi-4-mini
  partition:
    mode: mig
    profile: 3g.45gb
inference:
  preset:
    name: phi-4-mini-instruct
```

Use instead (BYO MIG nodes labelled for the Workspace):
```yaml
resource:
  labelSelector:
    matchLabels:
      apps: phi-4-mini
  partition:
    mode: mig
    profile: 3g.40gb
```

## Known problems
- Whether the cluster's KAITO runs with node auto-provisioning is not known: only what is refused
  in both modes, or in the only mode a partition allows, is reported. The `enableMIG` and
  `enableAccelerator` feature gates, and whether the model fits the slice, are not checked.
- A v1alpha1 InferenceSet has no `partition` (its schema rejects the field: SCH002's business).

## References
- KAITO, `api/v1beta1/workspace_validation.go` and `pkg/utils/mig`: https://github.com/kaito-project/kaito
- NVIDIA, supported MIG profiles: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/latest/supported-mig-profiles.html
"""

from __future__ import annotations

from mlops_lint.model.document import K8sObject
from mlops_lint.model.mig import is_known_profile
from mlops_lint.rule import Finding, Kind, rule

GROUP = "kaito.sh"
REJECTED = "KAITO's webhook rejects the Workspace"
# where each kind keeps the Workspace resource spec (an InferenceSet: its replicas' Workspace template)
RESOURCE_PATH = {"Workspace": ("resource",), "InferenceSet": ("spec", "template", "resource")}


@rule(code="KAI005", name="kaito-partition-rejected", severity="error", scope=Kind("Workspace", "InferenceSet"),
      tags=("kaito", "gpu", "mig"))
def check(obj: K8sObject, ctx):
    if obj.group != GROUP or obj.api_version.rpartition("/")[2] != "v1beta1":
        return
    path = RESOURCE_PATH[obj.kind]
    resource = obj.body
    for step in path:
        resource = resource.get_map(step) if resource is not None else None
    partition = resource.get_map("partition") if resource is not None else None
    if partition is None:
        return
    who = f"{obj.kind} `{obj.name}`"
    rejected = REJECTED if obj.kind == "Workspace" else "KAITO's webhook rejects the InferenceSet"
    base = path + ("partition",)
    instance = resource.get("instanceType")
    if isinstance(instance, str) and instance:
        yield Finding(resource.key_span("partition"),
                      f"{who} partitions GPUs and sets `instanceType: {instance}`: KAITO partitions GPUs only on BYO "
                      "nodes, where instanceType must be empty, and refuses a partition with node auto-provisioning: "
                      f"{rejected}",
                      node=base, fix="remove `instanceType` and run the Workspace on BYO GPU nodes its `labelSelector` "
                                     "selects, or remove `partition`"
                      if obj.kind == "Workspace" else
                      "remove `instanceType` and run the InferenceSet on BYO GPU nodes its `labelSelector` selects, "
                      "or remove `partition`")
    if obj.kind == "Workspace" and obj.body.get("tuning") is not None:
        yield Finding(resource.key_span("partition"),
                      f"{who} tunes a model on a GPU partition, which KAITO does not support for tuning: {REJECTED}",
                      node=base, fix="remove `partition` (tuning takes whole GPUs)")
    mode = partition.get("mode")
    profile, count = partition.get("profile"), partition.get("count")
    if mode == "mig":
        if "count" in partition:
            yield Finding(partition.key_span("count"),
                          f"{who} sets a partition `count` in `mig` mode (it is valid only for `accelerator`): "
                          f"{rejected}",
                          node=base + ("count",), fix="remove `count`")
        if isinstance(profile, str) and profile and not is_known_profile(profile):
            yield Finding(partition.value_span("profile"),
                          f"{who} asks for MIG profile `{profile}`, which no NVIDIA GPU offers: {rejected}",
                          node=base + ("profile",), fix="name a profile of the nodes' GPU (`1g.10gb`, `3g.40gb` …)")
        elif not profile:
            yield Finding(partition.key_span("mode"),
                          f"{who} asks for a `mig` partition without a `profile`: {rejected}",
                          node=base + ("mode",), fix="add `profile:` (the MIG profile of each replica)")
    elif mode == "accelerator":
        if "profile" in partition:
            yield Finding(partition.key_span("profile"),
                          f"{who} sets a `profile` in `accelerator` mode (it is valid only for `mig`): {rejected}",
                          node=base + ("profile",), fix="remove `profile`")
        if count is None:
            yield Finding(partition.key_span("mode"),
                          f"{who} asks for an `accelerator` partition without a GPU `count`: {rejected}",
                          node=base + ("mode",), fix="add `count:` (whole GPUs per replica)")
