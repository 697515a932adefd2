"""A /dev/shm sizeLimit that leaves the container's memory limit no room.

## What it does
For each `emptyDir` with `medium: Memory` mounted at `/dev/shm`, compares its `sizeLimit` with the
memory limit of every container that mounts it (quantities parsed exactly: `8Gi` is
8 x 2^30 bytes, `8G` is 8 x 10^9). It is an **error** when the `sizeLimit` is at least a
mounting container's memory limit, and a **warning** when it leaves less than 25 % of the limit
for everything else (`sizeLimit` > 75 % of the limit). One finding per volume, at its
`sizeLimit`, naming the containers; containers without a memory limit are RES002's business.

{{pod-views}}

## Why is this bad?
"Memory-backed emptyDir usage counts toward the pod's memory consumption. Include the maximum
expected shared-memory usage when setting the container memory limit. If /dev/shm grows beyond
the effective memory budget, the pod can be evicted or terminated for exceeding its memory
limit" (the article). tmpfs pages are charged to the memory cgroup of the container that writes
them, so a `sizeLimit` as large as the limit lets shared memory alone OOM-kill the trainer,
and one close to it leaves the Python process, the framework's allocator and checkpoint
serialisation peaks too little.

## Example
```yaml
        resources:
          limits: {memory: 16Gi, nvidia.com/gpu: 1}
      volumes:
      - name: shared-memory
        emptyDir:
          medium: Memory
          sizeLimit: 16Gi
```

Use instead (the article's shm Job):
```yaml
        resources:
          limits: {memory: 16Gi, nvidia.com/gpu: 1}
      volumes:
      - name: shared-memory
        emptyDir:
          medium: Memory
          sizeLimit: 8Gi
```

## Known problems
Memory limits that a LimitRange fills in are not known here and are not compared; a pod-level
memory limit (`spec.resources`) is not either.

## References
- Kubernetes, emptyDir (`medium: Memory`): https://kubernetes.io/docs/concepts/storage/volumes/#emptydir
- Kubernetes, Resource management (memory limits, OOM): https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
"""

from fractions import Fraction

from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.quantity import parse_quantity
from mlops_lint.model.shm import memory_empty_dir, shm_volumes
from mlops_lint.rule import POD, Finding, rule

MIN_HEADROOM = Fraction(1, 4)


@rule(code="RES006", name="shm-exceeds-memory-limit", severity="error", scope=POD, tags=("resources", "shared-memory"))
def check(pod: PodSpec, ctx):
    for index, volume, users in shm_volumes(pod):
        empty_dir = memory_empty_dir(volume)
        if empty_dir is None:
            continue
        raw = empty_dir.get("sizeLimit")
        size = parse_quantity(raw)
        if size is None or size <= 0:
            continue
        over, tight, seen = [], [], set()
        for container, _, _ in users:
            limit = container.limits.get("memory")
            if container.name in seen or limit is None or limit.value is None or limit.value <= 0:
                continue
            seen.add(container.name)
            if size >= limit.value:
                over.append(f"`{container.name}` (limit {limit.raw})")
            elif (limit.value - size) / limit.value < MIN_HEADROOM:
                share = int((limit.value - size) * 100 / limit.value)
                tight.append(f"`{container.name}` (limit {limit.raw}, {share} % left)")
        if not over and not tight:
            continue
        name = volume.get("name")
        if over:
            message = (f"/dev/shm volume `{name}` may grow to {raw}, at least the memory limit of {', '.join(over)}: "
                       "shared memory alone can get the container OOM-killed")
            if tight:
                message += f"; it also leaves less than 25 % for {', '.join(tight)}"
        else:
            message = (f"/dev/shm volume `{name}` may grow to {raw}, leaving less than 25 % of the memory limit of "
                       f"{', '.join(tight)} for the process itself")
        yield Finding(
            empty_dir.value_span("sizeLimit"),
            message,
            node=pod.path + ("volumes", index, "emptyDir", "sizeLimit"),
            fix="lower sizeLimit or raise the memory limit so that shared memory takes at most 75 % of it",
            severity=None if over else "warning",
        )
