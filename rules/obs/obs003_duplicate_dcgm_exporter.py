"""A DCGM exporter DaemonSet runs beside a GPU Operator that deploys its own.

## What it does
Flags a DaemonSet that runs NVIDIA's DCGM exporter (an image `…/dcgm-exporter`, such as
`nvcr.io/nvidia/k8s/dcgm-exporter`; recognised by `linter.model.nvidia.is_dcgm_exporter`) when
the project also holds an NVIDIA GPU Operator `ClusterPolicy` (`nvidia.com/v1`) that deploys the
exporter: `spec.dcgmExporter.enabled` is true or unset (the operator enables a component unless
it says `false`). The operator runs its exporter on the nodes it labels
`nvidia.com/gpu.deploy.dcgm-exporter=true` (every node with an NVIDIA GPU), so the DaemonSet is
reported unless its own nodeSelector or required node affinity rules those nodes out. A
DaemonSet the operator rendered itself (it selects one of the operator's
`nvidia.com/gpu.deploy.<operand>=true` labels, such as `…dcgm-exporter` or the DRA variant's
`…dcgm-exporter-dra`, or is owned by a ClusterPolicy) is not a duplicate. The finding points at the exporter container's image.

## Why is this bad?
Two exporters on one GPU node both poll DCGM and both get scraped: every GPU series appears
twice (dashboards and alerts that sum utilisation or memory double count), and the host
engine carries twice the profiling load. The article: "If the NVIDIA GPU Operator already
deploys DCGM Exporter, don't deploy a duplicate exporter. Configure Azure Monitor managed
Prometheus to scrape the existing exporter."

## Example
```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  dcgmExporter:
    enabled: true
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: dcgm-exporter
  namespace: monitoring
spec:
  template:
    spec:
      containers:
      - name: dcgm-exporter
        image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04
```

Use instead:
```yaml
# keep only the operator's exporter, and scrape it
apiVersion: azmonitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: nvidia-dcgm-exporter
  namespace: gpu-operator
spec:
  selector:
    matchLabels:
      app: nvidia-dcgm-exporter
  podMetricsEndpoints:
  - port: metrics
```

## Known problems
- AKS's managed GPU stack (`--enable-managed-gpu`, nodes labelled
  `kubernetes.azure.com/dcgm-exporter=enabled`) also deploys an exporter; it is a cluster
  setting, not a manifest, and is not seen here.
- A GPU Operator installed by a script of the project (`helm install|upgrade --install … nvidia/gpu-operator`,
  `linter.model.installs`) counts as a ClusterPolicy: it deploys the exporter unless the command sets
  `--set dcgmExporter.enabled=false`; with a values file (`-f`) and no such `--set`, whether it does is
  unknown and the DaemonSet is not reported. An operator installed outside the project is not seen.
- A DCGM exporter a script installs (its Helm chart or manifest URL) is not reported here, only a
  DaemonSet manifest of the project.

## References
- NVIDIA GPU Operator, ClusterPolicy `dcgmExporter`: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
- NVIDIA DCGM Exporter: https://github.com/NVIDIA/dcgm-exporter
"""

from __future__ import annotations

from mlops_lint.model.document import K8sObject
from mlops_lint.model.installs import operator_installs
from mlops_lint.model.nvidia import (DCGM_EXPORTER_REPOSITORY, DEPLOY_LABEL_PREFIX, gpu_operator_policies, is_dcgm_exporter,
                                 is_operator_operand, operand_placement, placements_may_overlap, policy_deploys)
from mlops_lint.rule import Kind, Finding, rule


def _rendered_by_operator(obj: K8sObject, workload) -> bool:
    """The GPU Operator's own DaemonSet: owned by a ClusterPolicy, or its pods select one of the
    operator's ``nvidia.com/gpu.deploy.<operand>=true`` node labels (also operands the component
    table of ``linter.model.nvidia`` does not list, such as the DRA exporter's
    ``nvidia.com/gpu.deploy.dcgm-exporter-dra``)."""
    owners = obj.metadata.get("ownerReferences")
    if isinstance(owners, list) and any(isinstance(o, dict) and o.get("kind") in ("ClusterPolicy", "GPUCluster")
                                        for o in owners):
        return True
    if is_operator_operand(workload):
        return True
    for pod in workload.pods:
        placement = pod.placement
        if any(key.startswith(DEPLOY_LABEL_PREFIX) and value == "true" for key, value in placement.node_selector.items()):
            return True
        if placement.terms and all(any(r.key.startswith(DEPLOY_LABEL_PREFIX) and r.selects(r.key, "true") for r in term)
                                   for term in placement.terms):
            return True
    return False


@rule(code="OBS003", name="duplicate-dcgm-exporter", severity="warning", scope=Kind("DaemonSet"),
      tags=("observability", "gpu"))
def check(obj: K8sObject, ctx):
    if obj.group != "apps":
        return
    workload = ctx.index.workload(obj)
    if not is_dcgm_exporter(workload) or _rendered_by_operator(obj, workload):
        return
    policies = ctx.index.memo("OBS003-policies",  # once per index, not once per DaemonSet
                              lambda: [p for p in gpu_operator_policies(ctx.index) if policy_deploys(p, "dcgmExporter")])
    installs = ctx.index.memo("OBS003-installs", lambda: operator_installs(ctx.index, "dcgmExporter"))
    if not policies and not installs:
        return
    operator_nodes = operand_placement("dcgmExporter")
    if not any(placements_may_overlap(pod.placement, operator_nodes) for pod in workload.pods):
        return  # kept off the nodes the operator's exporter runs on
    container = next((c for pod in workload.pods for c in pod.app_containers
                      if DCGM_EXPORTER_REPOSITORY in (c.image or "")), None)
    span = container.image_span if container is not None else obj.metadata.value_span("name")
    node = container.path + ("image",) if container is not None else ("metadata", "name")
    if policies:
        operator = f"GPU Operator ClusterPolicy `{policies[0].name}`"
        turn_off = "set `spec.dcgmExporter.enabled: false` in the ClusterPolicy"
    else:
        operator = f"the GPU Operator installed by {installs[0].describe()}"
        turn_off = "install the operator with `--set dcgmExporter.enabled=false`"
    yield Finding(
        span,
        f"DaemonSet `{obj.name}` runs a DCGM exporter, but {operator} "
        "deploys one on the same GPU nodes: every GPU metric is exported twice; remove this "
        f"DaemonSet and scrape the operator's exporter, or {turn_off}",
        node=node,
    )
