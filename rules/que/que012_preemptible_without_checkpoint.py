"""A preemptible training workload has no persistent storage for checkpoints.

## What it does
Flags a training workload (Job, CronJob, Kubeflow job, Volcano Job, RayJob, JobSet,
run-to-completion Pod) that can be preempted and whose app containers mount no persistent
volume. A workload trains when it is a kind of the ML operators (Kubeflow, Kubeflow Trainer,
KubeRay), names an ML framework or training in its pods' images, commands or environment
(`pytorch`, `train.py`, `--epochs`, `CHECKPOINT_DIR`, `python` …) or training or a framework in
a name (the workload's, a container's, a `training-batch` class), or uses a GPU: a queued
`sleep` or web-server Job, or a GPU smoke test that only runs `nvidia-smi` and `sleep` (or a
CUDA sample image), has
nothing to checkpoint. Ray (`RayJob`) and MPI (`MPIJob`) run whatever program they are given,
batches and demos as often as training: on CPUs they train only when their entrypoint or pods
show a training word (`train`, `torchrun`, `epoch`, `tune`, `mnist` …), so Kueue's MPIJob `pi`
and its RayJob counter have nothing to checkpoint (NAP004 judges them the same way); so does a
workload whose only sign is a Ray image (a Volcano Job holding a Ray cluster). The message
names the sign of training it found. It can be preempted when:

- **low priority**: its pods run with a PriorityClass (their `priorityClassName`, a Volcano
  Job's `spec.priorityClassName` for tasks naming none, else the project's `globalDefault` class)
  that another PriorityClass of the project may preempt: a higher `value` and a
  `preemptionPolicy` other than `Never`;
- **queued**: Kueue queues it (`kueue.x-k8s.io/queue-name`), or it is a Volcano Job or has pods
  scheduled by Volcano: both systems evict admitted workloads to reclaim or rebalance quota. A
  queue name does not count when the project's Kueue `Configuration` leaves the workload's
  framework out of `integrations.frameworks` (Kueue does not manage it: QUE019's finding).
  Volcano evicts only with the `preempt` or `reclaim` action: when every Volcano scheduler
  configuration of the project that governs the job (a ConfigMap value under a key ending in
  `scheduler.conf`, as Volcano's `volcano-scheduler.conf`; that of its file, else its folder, else
  all) lists neither (Volcano ships
  `actions: "enqueue, allocate, backfill"`), being scheduled by Volcano does not count.

Persistent means a writable mount of a PersistentVolumeClaim, or of an inline network volume
(`azureFile`, `azureDisk`, `nfs`, a CSI driver for Azure Files, Blob or Disk …), a Volcano Job's
`spec.volumes` claims, or a checkpoint destination (a `CHECKPOINT_DIR`-style variable or a
`--checkpoint-dir`-style flag) that is an object-store URL (`s3://`, `gs://`, `az://`, `abfs://`,
`https://<account>.blob.core.windows.net/…`). emptyDir, generic ephemeral volumes and hostPath
do not count. One mount in any pod template of the workload is enough (rank 0 writes the global
checkpoint). The finding points at the first app container's `volumeMounts:` key, else its
`name:`.

## Why is this bad?
"Preemption terminates lower-priority pods. Training workloads that can be preempted must write
checkpoints to persistent storage, tolerate duplicate work, and recover without relying on
node-local files." A preempted pod's container filesystem and emptyDir volumes are deleted with
it, so a preempted job without persistent storage restarts from step zero, every time it is
preempted, and may never finish.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: embeddings-refresh
spec:
  template:
    spec:
      priorityClassName: training-batch      # inference-critical may preempt it
      containers:
      - name: trainer
        image: myacr.azurecr.io/ml/trainer:1.0.0
```

Use instead:
```yaml
      containers:
      - name: trainer
        image: myacr.azurecr.io/ml/trainer:1.0.0
        args: ["--checkpoint-dir=/checkpoints"]
        volumeMounts:
        - name: checkpoints
          mountPath: /checkpoints
      volumes:
      - name: checkpoints
        persistentVolumeClaim:
          claimName: model-checkpoints
```

## Known problems
- Pods that name no class in a project without a `globalDefault` class run at priority 0, which
  every preempting class outranks; they are not taken as "low priority" here, or every training
  job of a project that defines one high class (for inference, or a device plugin) would be
  flagged. Give interruptible training an explicit low class (as the article's
  `training-batch`), and the rule checks it.
- Checkpoints written by the program to object storage through an SDK, with the destination in a
  config file or the code, are not seen: suppress the finding for such workloads.
- Kueue evicts only when its ClusterQueues' preemption or the cohort's reclaiming allow it, or
  when pods fail to become ready in time; every queued workload is treated as interruptible.
- The signs of training are words, not a reading of the program: a CPU job whose names, image,
  command, environment and PriorityClass name no framework and no training is not flagged.
- A PriorityClass created outside the project, or a `priorityClassName` the project does not
  define (QUE010), leaves the priority unknown: only the queue criterion then applies.
- A PriorityClass written in several variant files (alternatives, one applied) counts with its
  highest value among the definitions nearest the workload: it is low priority only if every
  alternative is.

## References
- Kubernetes, Pod priority and preemption: https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
- Kueue, Preemption: https://kueue.sigs.k8s.io/docs/concepts/preemption/
- Volcano, scheduler actions (`preempt`, `reclaim`): https://volcano.sh/en/docs/actions/
- AKS, storage options for applications: https://learn.microsoft.com/azure/aks/concepts-storage
"""

from mlops_lint.model.k8s import trains_shown
from mlops_lint.model.kueue import QUEUE_NAME_KEY, pod_priority, preemptors, queue_ref
from mlops_lint.model.kueueconfig import ignored_by_kueue
from mlops_lint.model.storage import CLAIM, PERSISTENT, is_checkpoint_destination, literal_env, pod_volumes, volume_storage
from mlops_lint.model.volcanoconf import volcano_evicts
from mlops_lint.rule import WORKLOAD, Finding, rule

OBJECT_STORES = ("s3://", "s3a://", "gs://", "az://", "abfs://", "abfss://", "wasb://", "wasbs://", "hdfs://", "oci://")


def _object_store(value: str) -> bool:
    value = value.strip().strip("'\"")
    return value.startswith(OBJECT_STORES) or (value.startswith("https://") and ".blob.core.windows.net" in value)


def _remote(container) -> bool:
    """A checkpoint destination (env var or flag) that is an object-store URL."""
    if any(is_checkpoint_destination(k) and _object_store(v) for k, v in literal_env(container).items()):
        return True
    words = [w for item in container.command_strings for w in item.split()]
    for position, word in enumerate(words):
        name, eq, value = word.lstrip("-").partition("=")
        if not eq and position + 1 < len(words):
            value = words[position + 1]
        if is_checkpoint_destination(name) and _object_store(value):
            return True
    return False


def _persistent(workload) -> bool:
    obj = workload.obj
    if obj.kind == "Job" and obj.group == "batch.volcano.sh":
        spec = obj.body.get_map("spec")
        if spec is not None and spec.get_seq("volumes"):
            return True
    for pod in workload.pods:
        volumes = pod_volumes(pod)
        for container in pod.app_containers:
            for _, mount in container.volume_mounts:
                volume = volumes.get(str(mount.get("name")))
                if volume is not None and mount.get("readOnly") is not True and \
                        volume_storage(volume[1]) in (CLAIM, PERSISTENT):
                    return True
            if _remote(container):
                return True
    return False


def _why(workload, index, config) -> str | None:
    for pod in workload.pods:
        priority = pod_priority(pod, index)
        if priority.value is None or priority.class_name is None:
            continue  # unknown, or the plain default priority 0 (see Known problems)
        above = preemptors(index, priority.value)
        if above:
            how = "the global default PriorityClass" if priority.defaulted else "PriorityClass"
            return (f"runs with {how} `{priority.class_name}` ({priority.value}), which PriorityClass "
                    f"`{above[0].name}` ({above[0].body.get('value')}) may preempt")
    ref = queue_ref(workload.obj)
    if ref is not None and not ignored_by_kueue(workload.obj, index, config):
        return f"is queued by Kueue (`{QUEUE_NAME_KEY}: {ref.name}`), which evicts admitted workloads to reclaim quota"
    if (workload.obj.group == "batch.volcano.sh" or any(p.spec.get("schedulerName") == "volcano" for p in workload.pods)) \
            and volcano_evicts(workload.obj, index, config):
        return "is gang-scheduled by Volcano, whose queues reclaim and preempt running jobs"
    return None


@rule(code="QUE012", name="preemptible-without-checkpoint", severity="warning", scope=WORKLOAD,
      tags=("priorities", "preemption", "storage"))
def check(workload, ctx):
    sign = trains_shown(workload)
    if sign is None:
        return
    containers = [c for pod in workload.pods for c in pod.app_containers]
    if not containers or _persistent(workload):
        return
    why = _why(workload, ctx.index, ctx.config)
    if why is None:
        return
    first = containers[0]
    span = first.body.kspans.get("volumeMounts") or first.span
    yield Finding(
        span,
        f"{workload.kind} `{workload.obj.name}` trains ({sign}) and {why}, but none of its containers mounts a "
        "persistent volume: a preempted pod loses everything since it started; write checkpoints to a "
        "PersistentVolumeClaim (Azure Files or Disk) and resume from them",
        node=first.path + ("volumeMounts",),
    )
