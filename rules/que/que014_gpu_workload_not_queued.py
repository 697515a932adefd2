"""A GPU job in a namespace that has a Kueue LocalQueue, submitted without a queue name.

## What it does
Flags a batch workload that Kueue can suspend and admit (a batch Job or CronJob, JobSet,
Kubeflow PyTorchJob/TFJob/MPIJob/XGBoostJob/PaddleJob/JAXJob, TrainJob, RayJob, RayCluster,
AppWrapper) whose pods request GPUs (`nvidia.com/gpu`, MIG profiles, `amd.com/gpu`, a GPU resource
claim), that carries no `kueue.x-k8s.io/queue-name` label (or annotation), and whose namespace
holds a Kueue LocalQueue of the project. Both must name their namespace (`metadata.namespace`):
an object without one lands in whatever namespace `kubectl -n` or kustomize gives it, which is
not known here. The finding points at the workload's name and names the namespace's LocalQueues.

Not flagged: a namespace with a LocalQueue named `default` (Kueue's LocalQueue defaulting puts
unlabelled jobs there), Pods, Deployments, StatefulSets and LeaderWorkerSets (Kueue manages them
only when their integration is switched on), and workloads in namespaces without a LocalQueue.

## Why is this bad?
Kueue manages only the jobs that name a queue: with its default `manageJobsWithoutQueueName:
false`, a job without `kueue.x-k8s.io/queue-name` is never suspended, never counted against the
ClusterQueue's quota and starts at once. In a namespace the platform team has given a LocalQueue,
such a job takes GPUs outside the team's quota, ahead of every queued job, and out of reach of
Kueue's fair sharing and preemption. The article allocates multi-tenant GPU quota with Kueue: a
LocalQueue per team namespace, and every training Job labelled with its queue and created
suspended.

## Example
```yaml
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: gpu-queue
  namespace: team-a
spec:
  clusterQueue: team-a-gpu
---
apiVersion: batch/v1
kind: Job
metadata:
  name: team-a-training
  namespace: team-a
spec:
  template:
    spec:
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 1
```

Use instead:
```yaml
metadata:
  name: team-a-training
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue
spec:
  suspend: true
```

## Known problems
A cluster that runs Kueue with `manageJobsWithoutQueueName: true` suspends such jobs instead of
letting them run (they then wait forever, which is no better). Namespaces set by
`kubectl -n` are not known, so a workload or LocalQueue without `metadata.namespace` is not
judged; kustomize's `namespace:` is seen once the kustomization is built.

## References
- Kueue, run a Job (the queue-name label): https://kueue.sigs.k8s.io/docs/tasks/run/jobs/
- Kueue, manageJobsWithoutQueueName and LocalQueue defaulting: https://kueue.sigs.k8s.io/docs/reference/kueue-config.v1beta1/
"""

from __future__ import annotations

from mlops_lint.model.kueue import SUSPEND_FIELDS, is_kueue_managed_kind, kueue_objects, queue_ref
from mlops_lint.rule import WORKLOAD, Finding, rule

LISTED = 3


def _queues_by_namespace(index) -> dict[str, list[str]]:
    def build():
        found: dict[str, list[str]] = {}
        for lq in kueue_objects(index, "LocalQueue"):
            if not lq.namespace:
                continue  # its namespace is set when it is applied: unknown here
            names = found.setdefault(lq.namespace, [])
            if lq.name and lq.name not in names:
                names.append(lq.name)
        return found
    return index.memo("QUE014-local-queues", build)


@rule(code="QUE014", name="gpu-workload-not-queued", severity="warning", scope=WORKLOAD,
      tags=("queues", "kueue", "gpu"))
def check(workload, ctx):
    obj = workload.obj
    if not is_kueue_managed_kind(obj) or SUSPEND_FIELDS[(obj.group, obj.kind)] is None:
        return
    if not obj.namespace:
        return  # applied to whatever namespace kubectl or kustomize gives it: unknown here
    queues = _queues_by_namespace(ctx.index).get(obj.namespace)
    if not queues or "default" in queues or queue_ref(obj) is not None or not workload.uses_gpu:
        return
    namespace = obj.namespace
    shown = ", ".join(f"`{q}`" for q in sorted(queues)[:LISTED]) + (f" and {len(queues) - LISTED} more"
                                                                     if len(queues) > LISTED else "")
    metadata = obj.metadata
    yield Finding(
        metadata.value_span("name") if "name" in metadata else obj.span,
        f"{obj.kind} `{obj.name}` requests GPUs in namespace `{namespace}`, which has Kueue LocalQueue{'s' if len(queues) > 1 else ''} "
        f"{shown}, but names no queue (`kueue.x-k8s.io/queue-name`): Kueue does not manage it, so it starts at once "
        "and its GPUs bypass the team's quota",
        node=("metadata", "name"),
        fix=f"labels: {{kueue.x-k8s.io/queue-name: {sorted(queues)[0]}}}" + (" (and `suspend: true`)"
                                                                            if obj.kind == "Job" else ""),
    )
