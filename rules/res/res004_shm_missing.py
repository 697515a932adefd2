"""A GPU or multi-CPU training container without a memory-backed /dev/shm.

## What it does
Flags app containers of training workloads (Job, CronJob, the Kubeflow jobs, a Katib
Experiment's trials, Volcano Job, RayJob, JobSet, and bare Pods with `restartPolicy` Never or
OnFailure) that use a GPU (`nvidia.com/gpu`, `nvidia.com/mig-*`, `amd.com/gpu`) or at least 2
CPUs (the cpu request or limit, parsed as a quantity: `2`, `2000m`, `2.5`) in a workload that
shows it trains (a kind of the ML operators: Kubeflow, Kubeflow Trainer, KubeRay; or an ML
framework or training named in its pods' images, commands or environment: `pytorch`,
`train.py`, `--epochs`, `python` …; or training or a framework in a name: `train-resnet`; a
`sleep`, web-server or `…-sweep` benchmark Job with several CPUs has no data loaders; the CPU
finding names the sign), and do not mount an `emptyDir` with `medium: Memory` at `/dev/shm`.
A GPU smoke test, whose every app container only runs `nvidia-smi`, `sleep`, `echo` and the like
(exec form or a `sh -c` script) or one of NVIDIA's CUDA sample images
(`nvcr.io/nvidia/k8s/cuda-sample`: vectorAdd, nbody), trains nothing and is not flagged. Nor is the Ray container
(the first app container) of a KubeRay head or worker group (RayCluster, RayJob, RayService,
RayCronJob) that mounts nothing at `/dev/shm`: KubeRay mounts a memory-backed emptyDir there,
sized to the container's memory limit, when it builds the pod. A container that mounts something else there (a disk-backed
emptyDir, a PVC) is flagged at that mount. The finding points at the container's
`volumeMounts:`, else its `name:`.

{{pod-views}}

{{dra-gpus}}

## Why is this bad?
"PyTorch data loaders, TensorFlow input pipelines, NCCL, and Python multiprocessing can use
POSIX shared memory. The container default for /dev/shm is frequently too small for
multi-process training, which can cause worker crashes, bus errors, or apparent training
hangs" (the article). containerd and Docker give each container 64 MiB; a PyTorch
`DataLoader` with several workers passes whole batches through it, and NCCL puts its
intra-node buffers there. The article's fix: "Mount a memory-backed emptyDir at /dev/shm and
set an explicit sizeLimit".

## Example
```yaml
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        resources:
          limits: {cpu: "8", memory: 16Gi, nvidia.com/gpu: 1}
```

Use instead:
```yaml
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        volumeMounts:
        - name: shared-memory
          mountPath: /dev/shm
        resources:
          limits: {cpu: "8", memory: 16Gi, nvidia.com/gpu: 1}
      volumes:
      - name: shared-memory
        emptyDir:
          medium: Memory
          sizeLimit: 8Gi
```

## Fix safety
Safe, when nothing is mounted at `/dev/shm` and the container has a memory limit. If another
container of the pod already mounts a memory-backed emptyDir there whose `sizeLimit` is at most
75 % of this container's memory limit (what RES006 accepts), the fix mounts that volume at
`/dev/shm` too; otherwise it adds the article's volume, `{name: shared-memory, emptyDir: {medium:
Memory, sizeLimit: <half the memory limit>}}` (named `dshm` when `shared-memory` is taken), and
mounts it: the size RES005's fix gives, so the fixed pod lints clean for RES005 and RES006. A
tmpfs counts toward the memory limit only as far as it is used, so a container that never
touches shared memory is unchanged, and one that does gets room instead of the runtime's 64 MiB.
No fix without a memory limit (nothing says how large it may be: RES002 asks for one first), when
a disk-backed volume is mounted at `/dev/shm` (its other uses and size are the user's to weigh),
for a TrainJob (its pod spec is the runtime's, shared by other TrainJobs), or when both names
are taken.

## Known problems
- A pod with `hostIPC: true` uses the node's `/dev/shm` and is not flagged (it shares the
  node's IPC namespace, which has its own costs); a `hostPath` of `/dev/shm` counts too.
- Init and sidecar containers are not training processes and are not checked; Deployments and
  other long-running kinds are not training workloads here.
- A container that needs no shared memory (a single-process trainer with `num_workers=0`)
  still gets the finding; suppress it with a reason.
- The signs of training are words, not a reading of the program: a CPU trainer whose names,
  image, command and environment name no framework and no training (`myacr.azurecr.io/app:1`
  running `/bin/run`) is not flagged for its CPUs. A GPU is enough unless every app container
  only looks at it or waits; a script the linter cannot read (`bash run.sh`) counts as work.

## References
- Kubernetes, emptyDir (`medium: Memory`): https://kubernetes.io/docs/concepts/storage/volumes/#emptydir
- PyTorch, Docker shared memory note: https://github.com/pytorch/pytorch#docker-image
"""

from fractions import Fraction

from mlops_lint.model.dra import claimed_gpus
from mlops_lint.model.k8s import Container, gpu_resources
from mlops_lint.model.quantity import format_quantity
from mlops_lint.model.security import is_windows
from mlops_lint.model.shm import SHM_PATH as SHM, is_host_shm, memory_empty_dir, operator_shm, shm_mounts
from mlops_lint.fix import AppendItem
from mlops_lint.fix.plans import plan
from mlops_lint.model.quantity import format_bytes, parse_quantity
from mlops_lint.rule import CONTAINER, Finding, rule

MIN_CPUS = Fraction(2)
VOLUME_NAMES = ("shared-memory", "dshm")  # the article's name, then the usual one
MAX_SHARE = Fraction(3, 4)  # RES006 warns above 75 % of a mounting container's memory limit


def _autofix(container: Container):
    """Mount a memory-backed emptyDir at /dev/shm: the pod's own, when another container mounts
    one there and it fits this container's memory limit; else a new ``shared-memory`` volume
    sized at half the memory limit (as RES005's fix sizes it). None without a memory limit, for
    a TrainJob's view (the pod spec is a shared runtime's) or where a list is not a list."""
    pod = container.pod
    limit = container.limits.get("memory")
    if pod.origin is not None or limit is None or limit.value is None or limit.value < 2:
        return None
    mounts, volumes = container.body.get("volumeMounts"), pod.spec.get("volumes")
    if mounts is not None and not isinstance(mounts, list) or volumes is not None and not isinstance(volumes, list):
        return None
    for other in pod.containers:
        for _, _, volume in shm_mounts(other) if other is not container else ():
            empty_dir = memory_empty_dir(volume)
            size = parse_quantity(empty_dir.get("sizeLimit")) if empty_dir is not None else None
            if size is not None and 0 < size <= limit.value * MAX_SHARE and isinstance(volume.get("name"), str):
                return plan(f"mount the pod's memory-backed volume `{volume['name']}` at /dev/shm",
                            AppendItem(container.body, "volumeMounts", {"name": volume["name"], "mountPath": SHM}))
    taken = {v.get("name") for _, v in pod.volumes if isinstance(v.get("name"), str)}  # (a malformed name: SCH002)
    name = next((n for n in VOLUME_NAMES if n not in taken), None)
    if name is None:
        return None
    size = format_bytes(int(limit.value / 2), limit.raw)
    return plan(f"mount a `{name}` emptyDir (medium: Memory, sizeLimit: {size}) at /dev/shm",
                AppendItem(pod.spec, "volumes", {"name": name, "emptyDir": {"medium": "Memory", "sizeLimit": size}}),
                AppendItem(container.body, "volumeMounts", {"name": name, "mountPath": SHM}))


def _why(container: Container) -> str | None:
    """What makes the container a GPU or multi-CPU trainer (for the message), else None."""
    for section in (container.requests, container.limits):
        for name, resource in gpu_resources(section).items():
            if resource.value is None or resource.value > 0:
                return f"uses {resource.raw} {name}"
    for claimed in claimed_gpus(container):
        return f"uses {claimed.name}"
    cpus = [r.value for r in (container.requests.get("cpu"), container.limits.get("cpu")) if r and r.value is not None]
    sign = container.pod.workload.ml_sign
    if cpus and max(cpus) >= MIN_CPUS and sign is not None:
        return f"uses {format_quantity(max(cpus))} CPUs (training: {sign})"
    return None


@rule(code="RES004", name="shm-missing", severity="warning", scope=CONTAINER, tags=("resources", "shared-memory"))
def check(container: Container, ctx):
    pod = container.pod
    if container.field != "containers" or pod.workload is None or pod.workload.trains is None:
        return
    if pod.spec.get("hostIPC") is True or is_windows(pod):
        return  # a memory-backed emptyDir is Linux-only
    why = _why(container)
    if why is None:
        return
    mounts = list(shm_mounts(container))
    if any(memory_empty_dir(volume) is not None or is_host_shm(volume) for _, _, volume in mounts):
        return
    if not mounts and operator_shm(container):
        return  # KubeRay mounts its own memory-backed /dev/shm in the Ray container
    who = f"training container `{container.name}` {why}"
    if mounts:
        index, mount, volume = mounts[0]
        kind = "a disk-backed emptyDir" if volume is not None and "emptyDir" in volume else "a volume that is not memory-backed"
        yield Finding(
            mount.value_span("mountPath"),
            f"{who} but mounts {kind} (`{mount.get('name')}`) at /dev/shm: data loaders and NCCL need shared "
            "memory there",
            node=container.path + ("volumeMounts", index, "mountPath"),
            fix="make the volume `emptyDir: {medium: Memory, sizeLimit: <size>}`",
        )
        return
    yield Finding(
        container.body.kspans.get("volumeMounts", container.span),
        f"{who} but has no memory-backed emptyDir at /dev/shm: the runtime's 64 MiB default makes multi-process "
        "data loaders and NCCL crash or hang",
        node=container.path + ("volumeMounts",),
        fix="mount an `emptyDir: {medium: Memory, sizeLimit: <size>}` volume at /dev/shm",
        autofix=_autofix(container),
    )
