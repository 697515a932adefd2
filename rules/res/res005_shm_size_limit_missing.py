"""A memory-backed emptyDir at /dev/shm without a sizeLimit.

## What it does
Flags pod volumes that are an `emptyDir` with `medium: Memory`, mounted at `/dev/shm` by at least
one container of the pod (init and sidecar containers included), and have no `sizeLimit`. The
finding points at the volume's `emptyDir:` key.

{{pod-views}}

## Why is this bad?
The article: "Mount a memory-backed emptyDir at /dev/shm and set an explicit sizeLimit", and
"Memory-backed emptyDir usage counts toward the pod's memory consumption … If /dev/shm grows
beyond the effective memory budget, the pod can be evicted or terminated for exceeding its
memory limit." Without a `sizeLimit` the tmpfs is sized by the pod's memory limits (or by the
node's allocatable memory when there are none), so a leaking data loader fills it until the
kernel kills the trainer, with no sign that shared memory was the cause. A `sizeLimit` makes
the kubelet evict the pod with a clear reason once the volume exceeds it, and tells readers how
much of the memory limit the data loaders may use.

## Example
```yaml
      volumes:
      - name: shared-memory
        emptyDir:
          medium: Memory
```

Use instead:
```yaml
      volumes:
      - name: shared-memory
        emptyDir:
          medium: Memory
          sizeLimit: 8Gi
```

## Fix safety
Safe. When a container that mounts the volume has a memory limit, the fix adds
`sizeLimit:` set to half of the smallest such limit, written with the limit's kind of suffix
(`8Gi` for a `16Gi` limit, `1500M` for `3G`): the article's shm Job gives `/dev/shm` 8Gi of a
16Gi limit, and half is well inside what RES006 accepts (it warns above 75 % of a mounting
container's limit), so the fixed pod lints clean for both rules. Without a sizeLimit the tmpfs is
already bounded by that memory limit, where crossing it gets the trainer OOM-killed; with it, the
kubelet evicts the pod with a reason that names the volume. There is no fix when no mounting
container has a memory limit (nothing says how large shared memory may be: RES002 asks for the
limit first).

## Known problems
Memory-backed emptyDirs mounted elsewhere are not checked (the rule is about `/dev/shm`); a
`sizeLimit` that is not a quantity is a schema error, not this rule's.

## References
- Kubernetes, emptyDir (`medium: Memory`, `sizeLimit`): https://kubernetes.io/docs/concepts/storage/volumes/#emptydir
- Kubernetes, Local ephemeral storage and eviction: https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.quantity import format_bytes
from mlops_lint.model.shm import memory_empty_dir, shm_volumes
from mlops_lint.rule import POD, Finding, rule


def _size(users) -> str | None:
    """Half of the smallest memory limit of the containers mounting the volume (the article's
    8Gi of 16Gi), written like that limit; None when none of them has a limit."""
    limits = [limit for container, _, _ in users
              if (limit := container.limits.get("memory")) is not None and limit.value is not None and limit.value >= 2]
    if not limits:
        return None
    smallest = min(limits, key=lambda limit: limit.value)
    return format_bytes(int(smallest.value / 2), smallest.raw)


@rule(code="RES005", name="shm-size-limit-missing", severity="warning", scope=POD, tags=("resources", "shared-memory"))
def check(pod: PodSpec, ctx):
    for index, volume, users in shm_volumes(pod):
        empty_dir = memory_empty_dir(volume)
        if empty_dir is None or empty_dir.get("sizeLimit") is not None:
            continue
        names = ", ".join(f"`{name}`" for name in dict.fromkeys(c.name for c, _, _ in users))
        yield Finding(
            volume.kspans["emptyDir"],
            f"memory-backed emptyDir `{volume.get('name')}` at /dev/shm (mounted by {names}) has no sizeLimit: it "
            "can grow until its containers are OOM-killed, with no sign that shared memory was the cause",
            node=pod.path + ("volumes", index, "emptyDir"),
            fix="set `sizeLimit:` (e.g. 8Gi) and include it in the container's memory limit",
            autofix=plan(f"set `sizeLimit: {size}` (half of the smallest memory limit of its containers)",
                         set_path(empty_dir, ("sizeLimit",), size)) if (size := _size(users)) else None,
        )
