"""A GPU Operator `GPUCluster` beside a `ClusterPolicy`: the operator refuses to run both.

## What it does
Looks at the GPU Operator's custom resources in the project: `ClusterPolicy` (`nvidia.com/v1`,
the operator's configuration until now) and `GPUCluster` (`nvidia.com/v1alpha1`, its successor
for Dynamic Resource Allocation: the DRA driver, DCGM, the exporter). It flags every
`GPUCluster` of a project that also has a `ClusterPolicy`, at the GPUCluster's name, naming the
ClusterPolicies (file and line). A GPU Operator installed by a script of the project
(`helm install … nvidia/gpu-operator`) counts as the resources its chart creates: a
ClusterPolicy unless the command says `--set clusterPolicy.deployCR=false`, and a GPUCluster
when it says `--set gpuCluster.deployCR=true` (the chart's values; with a values file, unknown,
and not counted). An install that creates a GPUCluster is reported at its chart word when the
same chart still creates its ClusterPolicy, or the project has another.

Sample folders are not one deployment: a ClusterPolicy and a GPUCluster that lie in different
files, each under a folder named `samples`, `sample`, `examples` or `example` (an operator's
`config/samples`, a docs folder of alternatives), are not reported together.

## Why is this bad?
The operator does not let the two coexist. Its GPUCluster controller checks for a ClusterPolicy
first and stops with "a ClusterPolicy CR and GPUCluster CR may not exist at the same time"; its
ClusterPolicy controller stops reconciling with "conflicting GPUCluster resource detected;
ClusterPolicy and GPUCluster cannot co-exist". Neither configuration is applied: driver, device
plugin, DRA driver and exporter updates stop on every GPU node. The article wants one owner for
the GPU stack of a node ("the operator should own the device plugin and MIG configuration for
the affected nodes"); two operator configurations are two owners, which the operator refuses.

## Example
```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin:
    enabled: true
---
apiVersion: nvidia.com/v1alpha1
kind: GPUCluster
metadata:
  name: gpu-cluster
spec:
  draDriver:
    repository: registry.k8s.io/dra-driver-nvidia
    image: dra-driver-nvidia-gpu
    version: v0.4.0
```

Use instead: one of them. Keep the ClusterPolicy (device-plugin GPUs, `nvidia.com/gpu`), or move
to the GPUCluster (GPUs through DRA `ResourceClaim`s) and delete the ClusterPolicy.

## Known problems
- A project is one cluster to the rule: two repositories linted as one project, one with each
  resource, are reported (lint each as its own project).
- Alternative manifests side by side outside a samples folder (one per environment) are
  reported; exclude the ones that are not applied together.
- A GPU Operator chart installed with a values file is not read (whether it creates a
  ClusterPolicy is unknown, and it is not counted).

## References
- NVIDIA GPU Operator, `controllers/gpucluster_controller.go` (`validatePrerequisites`) and
  `controllers/clusterpolicy_controller.go`: https://github.com/NVIDIA/gpu-operator
- NVIDIA GPU Operator documentation: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/
"""

from __future__ import annotations

from mlops_lint.model.installs import operator_installs
from mlops_lint.model.nvidia import gpu_operator_policies
from mlops_lint.rule import PROJECT, Finding, rule

GROUP = "nvidia.com"
SAMPLE_FOLDERS = frozenset({"samples", "sample", "examples", "example"})
LISTED = 3  # ClusterPolicies named in a message; the rest are counted


def _in_samples(path: str) -> bool:
    return any(part.lower() in SAMPLE_FOLDERS for part in path.replace("\\", "/").split("/")[:-1])


def _together(a, b) -> bool:
    """Whether two objects are taken as deployed together (not alternative samples)."""
    return a.path == b.path or not (_in_samples(a.path) and _in_samples(b.path))


def _listed(others: list[str]) -> str:
    shown = others[:LISTED] + ([f"{len(others) - LISTED} more"] if len(others) > LISTED + 1 else others[LISTED:])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


MESSAGE = ("the GPU Operator refuses a GPUCluster while a ClusterPolicy exists and stops reconciling the "
           "ClusterPolicy, so neither configures the GPU nodes")
FIX = ("keep one GPU Operator configuration: delete the ClusterPolicy (to use DRA through the GPUCluster) "
       "or the GPUCluster")


@rule(code="GPU013", name="gpu-operator-resources-conflict", severity="error", scope=PROJECT,
      tags=("gpu", "gpu-operator"))
def check(_found, ctx):
    clusters = [obj for obj in ctx.index.of_kind("GPUCluster") if obj.group == GROUP]
    scripted_clusters = operator_installs(ctx.index, "gpuCluster")
    if not clusters and not scripted_clusters:
        return
    policies = gpu_operator_policies(ctx.index)
    scripted_policies = operator_installs(ctx.index, "clusterPolicy")
    helm_named = [f"the ClusterPolicy of the GPU Operator installed by {i.describe()}" for i in scripted_policies]
    for cluster in clusters:
        others = [f"ClusterPolicy `{p.name}` ({p.path}:{p.span.line})" for p in policies if _together(cluster, p)]
        others += helm_named
        if not others:
            continue
        metadata = cluster.metadata
        span = metadata.value_span("name") if metadata is not None and "name" in metadata else cluster.span
        yield Finding(span, f"GPUCluster `{cluster.name}` is in the same project as {_listed(others)}: {MESSAGE}",
                      obj=cluster, node=("metadata", "name"), fix=FIX)
    for install in scripted_clusters:
        others = [f"ClusterPolicy `{p.name}` ({p.path}:{p.span.line})" for p in policies]
        if install.deploys("clusterPolicy") is True:
            others.insert(0, "the ClusterPolicy the same chart creates (`clusterPolicy.deployCR` is true unless set "
                             "to false)")
        others += [text for i, text in zip(scripted_policies, helm_named) if i is not install]
        if not others:
            continue
        yield Finding(install.span, f"this script installs the GPU Operator with a GPUCluster "
                                    f"(`gpuCluster.deployCR=true`, {install.what()}) beside {_listed(others)}: {MESSAGE}",
                      path=install.path, fix="install the chart with `--set clusterPolicy.deployCR=false` and delete "
                                             "the project's ClusterPolicy, or without `gpuCluster.deployCR=true`")
