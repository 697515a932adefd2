"""A training workload lacks labels the organisation requires.

## What it does
When `required-labels` is configured, flags training workloads (Job, CronJob, Kubeflow and
Volcano jobs, RayJob, JobSet, a run-to-completion Pod) that lack any of those label keys. A key
counts as present when the workload's own `metadata.labels` has it, or when every pod template of
the workload has it in its labels (the pods, and so the metrics scraped from them, carry it). The
value is not checked; an empty value is present. Without `required-labels` the rule reports
nothing. One finding per workload, at `metadata.labels` (or `metadata:` when there are none),
naming every missing key.

## Why is this bad?
Labels are how a training run is found again: cost allocation, dashboards and alerts group GPU
metrics by them, and Prometheus copies pod labels onto the series it scrapes. The article: "For
a real distributed job, include stable labels such as model name, model version, job name, run
ID, replica role, and team", and warns against unbounded ones ("sample IDs, request IDs, or raw
dataset paths") that inflate monitoring cost.

## Example
```yaml
# .mlops-lint.yaml: required-labels: [app.kubernetes.io/name, team]
apiVersion: batch/v1
kind: Job
metadata:
  name: bert-pretrain
  labels:
    app.kubernetes.io/name: bert
```

Use instead:
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: bert-pretrain
  labels:
    app.kubernetes.io/name: bert
    team: nlp
spec:
  template:
    metadata:
      labels:
        app.kubernetes.io/name: bert
        team: nlp
```

## Known problems
- Labels applied at deploy time (Kustomize `commonLabels`, Helm, a mutating webhook) are not
  seen; lint the rendered manifests.
- Inference and other long-running workloads are not checked; the rule is about training runs.

## References
- Kubernetes, Recommended labels: https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/
- Prometheus Operator, `podTargetLabels` (pod labels on scraped series): https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.PodMonitorSpec
"""

from __future__ import annotations

from mlops_lint.model.k8s import Workload
from mlops_lint.model.selectors import labels_of
from mlops_lint.rule import WORKLOAD, Finding, rule


@rule(code="OBS004", name="workload-labels-missing", severity="info", scope=WORKLOAD, tags=("observability", "labels"))
def check(workload: Workload, ctx):
    required = ctx.config.required_labels
    if not required or not workload.is_training:
        return
    own = labels_of(workload.obj.labels)
    templates = [labels_of(pod.labels) for pod in workload.pods]
    missing = [key for key in required if key not in own and not (templates and all(key in t for t in templates))]
    if not missing:
        return
    metadata = workload.obj.metadata
    span = metadata.key_span("labels") if "labels" in metadata else workload.obj.body.key_span("metadata")
    keys = ", ".join(f"`{key}`" for key in missing)
    plural = len(missing) > 1
    them = "them" if plural else "it"
    yield Finding(
        span,
        f"{workload.kind} `{workload.obj.name}` lacks required label{'s' if plural else ''} {keys}; set {them} in "
        + ("metadata.labels" if workload.kind == "Pod" else
           f"metadata.labels and in the pod template's labels, so the pods' metrics carry {them} too"),
        node=("metadata", "labels"),
        fix="labels:\n" + "".join(f"  {key}: <value>\n" for key in missing).rstrip("\n"),
    )
