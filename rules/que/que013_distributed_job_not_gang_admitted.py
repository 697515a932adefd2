"""A distributed GPU job whose workers are not admitted as one gang.

## What it does
Flags a distributed training job that runs two or more GPU pods at once and that nothing admits
or schedules all-or-nothing:

- the kinds: a Kubeflow training job (PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob,
  JAXJob), a JobSet, a LeaderWorkerSet (the pods of one group: its leader and `size - 1`
  workers), and a batch `Job` that runs two or more pods at once (`parallelism`, capped by
  `completions`) whose pods find each other: an Indexed Job with a `subdomain` (a headless
  Service gives the ranks their names), or a command or environment that starts a
  rendezvous (`torchrun`, `MASTER_ADDR`, `WORLD_SIZE`, `--nnodes`, `mpirun` …);
- two or more of its pods request a GPU (`nvidia.com/gpu`, MIG, `amd.com/gpu`, a GPU claim);
- no gang admission is written anywhere: no Kueue `kueue.x-k8s.io/queue-name` label or
  annotation on the job or its pod templates, and no LocalQueue named `default` in its namespace
  (Kueue's default queue); no Volcano or other scheduler in the pods' `schedulerName` (any name
  but `default-scheduler`); no Volcano PodGroup annotation (`scheduling.k8s.io/group-name`) or
  queue (`scheduling.volcano.sh/queue-name`); no coscheduling PodGroup label
  (`scheduling.x-k8s.io/pod-group`, or the older `pod-group.scheduling.sigs.k8s.io`); no Kubeflow
  `runPolicy.schedulingPolicy` (the training operator creates the PodGroup).

Volcano Jobs are gangs by definition (QUE008 checks their scheduler). The rule stays on in the
`aks-automatic` profile. The finding points at the job's `metadata.labels:` key (where the queue
label goes), else its `metadata:` key.

## Why is this bad?
The article's key takeaway: "Admit distributed workers as a group and enforce tenant GPU
quotas so that partially scheduled jobs don't reserve GPUs while waiting for remaining
workers." "The default Kubernetes scheduler places pods individually. For a distributed job
that can't make progress until every worker is running, partial placement can waste GPU
capacity." AKS Automatic does not change this: node auto-provisioning "doesn't guarantee atomic
admission for every worker. Install Kueue or Volcano when a workload requires gang scheduling".
Two such jobs that each get half their workers deadlock, each holding GPUs the other waits for,
and an all-reduce that waits for a missing rank times out.

## Example
```yaml
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pytorch-nccl-example
  namespace: ml-training
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template: ...        # requests nvidia.com/gpu: 1
    Worker:
      replicas: 1
      template: ...        # requests nvidia.com/gpu: 1
```

Use instead:
```yaml
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pytorch-nccl-example
  namespace: ml-training
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue   # a LocalQueue of ml-training
spec:
  runPolicy:
    suspend: true
  pytorchReplicaSpecs:
    ...
```

## Known problems
- Admission configured outside the manifests is not seen: Kueue's `manageJobsWithoutQueueName`,
  a mutating webhook or policy that adds the queue label, a training operator started with
  `--gang-scheduler-name`. Record such a set-up with a suppression.
- A batch Job is judged only when its pods show that they talk to each other (see above): a
  parallel Job of independent GPU trials (a sweep) needs no gang and is not flagged, and one
  whose rendezvous is hidden in a script inside the image is not seen.
- Kubeflow Trainer v2 TrainJobs and KubeRay clusters are not checked.
- A replica count that is not a literal number (a template placeholder) counts as one pod.

## References
- Kueue, run a Kubeflow job: https://kueue.sigs.k8s.io/docs/tasks/run/kubeflow/
- Kueue, all-or-nothing with ready pods: https://kueue.sigs.k8s.io/docs/tasks/manage/setup_wait_for_pods_ready/
- Volcano, PodGroup: https://volcano.sh/en/docs/podgroup/
- scheduler-plugins, coscheduling: https://github.com/kubernetes-sigs/scheduler-plugins/blob/master/pkg/coscheduling/README.md
"""

from __future__ import annotations

from mlops_lint.model.distributed import KUBEFLOW, job_pods_talk, pod_count
from mlops_lint.model.k8s import REPLICA_SPEC_FIELDS, container_uses_gpu
from mlops_lint.model.kueue import QUEUE_NAME_KEY, local_queues, queue_ref
from mlops_lint.rule import WORKLOAD, Finding, rule

# pod labels and annotations that put a pod in a gang (Volcano PodGroup and queue, coscheduling)
GANG_KEYS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/queue-name", "scheduling.x-k8s.io/pod-group",
             "pod-group.scheduling.sigs.k8s.io", "pod-group.scheduling.sigs.k8s.io/name", QUEUE_NAME_KEY)
_DEFAULT_SCHEDULER = "default-scheduler"


def _int(value, default):
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _gpu_pods(workload) -> int:
    """GPU pods that must run together: every GPU pod of the job, one group of a LeaderWorkerSet."""
    obj = workload.obj
    if obj.kind == "LeaderWorkerSet":
        spec = obj.body.get_map("spec")
        lws = spec.get_map("leaderWorkerTemplate") if spec is not None else None
        size = _int(lws.get("size"), 1) if lws is not None else 1
        total = 0
        for pod in workload.pods:
            if pod.uses_gpu:
                total += 1 if pod.role == "leader" else size - 1 if pod.role == "worker" else size
        return total
    if obj.kind == "Job" and obj.group == "batch":
        spec = obj.body.get_map("spec")
        parallelism = _int(spec.get("parallelism"), 1)
        completions = _int(spec.get("completions"), None)
        count = min(parallelism, completions) if completions is not None else parallelism
        return count if count >= 2 and any(pod.uses_gpu for pod in workload.pods) else 0
    if sum(pod_count(pod) for pod in workload.pods) < 2:
        return 0  # one pod in all: decided before any container's resources are read
    return sum(pod_count(pod) for pod in workload.pods if pod.uses_gpu)


def _admitted(workload, index) -> bool:
    """Whether the manifests name a gang admission or a scheduler other than the default."""
    obj = workload.obj
    if queue_ref(obj) is not None or local_queues(index, "default", obj.namespace, near=obj):
        return True
    if obj.group == KUBEFLOW:
        spec = obj.body.get_map("spec")
        policy = spec.get_map("runPolicy") if spec is not None else None
        if policy is not None and policy.get("schedulingPolicy") is not None:
            return True
    for pod in workload.pods:
        scheduler = pod.spec.get("schedulerName")
        if isinstance(scheduler, str) and scheduler and scheduler != _DEFAULT_SCHEDULER:
            return True
        meta = pod.metadata
        for section in ("labels", "annotations"):
            items = meta.get(section) if meta is not None else None
            if isinstance(items, dict) and any(key in items for key in GANG_KEYS):
                return True
    return False


@rule(code="QUE013", name="distributed-job-not-gang-admitted", severity="warning", scope=WORKLOAD,
      tags=("queues", "gang-scheduling", "distributed"))
def check(workload, ctx):
    obj = workload.obj
    kind = (obj.group, obj.kind)
    if workload.generic or not (
            (obj.group == KUBEFLOW and obj.kind in REPLICA_SPEC_FIELDS) or kind == ("jobset.x-k8s.io", "JobSet")
            or kind == ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") or kind == ("batch", "Job")):
        return
    gpus = _gpu_pods(workload)
    if gpus < 2 or (kind == ("batch", "Job") and not job_pods_talk(workload)) or _admitted(workload, ctx.index):
        return
    meta = obj.body.get_map("metadata")
    if meta is not None and "labels" in meta.kspans:
        span, node = meta.kspans["labels"], ("metadata", "labels")
    elif meta is not None:
        span, node = obj.body.key_span("metadata"), ("metadata",)
    else:
        span, node = obj.span, ()
    what = "each group's GPU pods" if obj.kind == "LeaderWorkerSet" else "GPU pods"
    yield Finding(
        span,
        f"{obj.kind} `{obj.name}` runs {what} that must run together, but nothing admits them as a "
        "gang (no Kueue queue, Volcano or coscheduling PodGroup): placed one by one, a partly placed job holds GPUs "
        "while it waits for the rest",
        node=node + (QUEUE_NAME_KEY,) if node[-1:] == ("labels",) else node,
        fix=f"submit it to a Kueue LocalQueue (`{QUEUE_NAME_KEY}: <queue>`, created suspended) or to Volcano",
    )
