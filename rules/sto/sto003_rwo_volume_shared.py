"""A ReadWriteOnce claim is mounted by more than one pod.

## What it does
Counts, for every PersistentVolumeClaim of the project whose access modes are `ReadWriteOnce`
or `ReadWriteOncePod` (and not `ReadWriteMany`), the pods that mount it at the same time:

- a Job's (or CronJob's) `parallelism`, capped by `completions` as the Job controller does;
- a Deployment's, StatefulSet's or ReplicaSet's `replicas` (1 when unset; 0 mounts nothing);
- each replica type of a PyTorchJob, TFJob or MPIJob, each Volcano task, each Ray group, each
  JobSet replicated job (`replicas` × `parallelism`);
- a DaemonSet: one pod per node;
- every other workload of the same namespace that mounts the same claim.

When more than one pod mounts the claim, each pod template that mounts it gets a finding at its
volume's `claimName`, naming the claim, its access mode and the other users. StatefulSet
`volumeClaimTemplates` and generic ephemeral volumes give every pod a claim of its own and are
not counted.


One object (kind, namespace and name) written in several files of the project is one object:
its pods are counted once (from its first copy by path), and it is not listed beside itself.

## Why is this bad?
`ReadWriteOnce` means one *node* may mount the volume read-write; an Azure Disk attaches to one
VM at a time. A second pod scheduled on another node stays in `ContainerCreating` with a
Multi-Attach error, so a distributed job never gets all its workers. `ReadWriteOncePod` allows a
single pod: the scheduler leaves the others pending. The article: "Use Azure Disk for
high-performance, single-node read-write checkpoint or cache workloads where ReadWriteOnce is
sufficient" and "Azure Files supports ReadWriteMany, which allows distributed workers on
different nodes to mount the same share".

## Example
```yaml
apiVersion: batch/v1
kind: Job
spec:
  parallelism: 4
  template:
    spec:
      volumes:
      - name: data
        persistentVolumeClaim:
          claimName: training-data   # accessModes: [ReadWriteOnce], class managed-csi
```

Use instead:
```yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: training-data
spec:
  accessModes: [ReadWriteMany]
  storageClassName: azurefile-csi-premium
  resources:
    requests:
      storage: 100Gi
```

## Known problems
- Kubernetes enforces `ReadWriteOnce` per node, so pods that all land on one node can share the
  volume. Pods pinned to one and the same node (`nodeName`, or a `kubernetes.io/hostname`
  nodeSelector or required node-affinity term with a single value) are not reported; co-location
  through pod affinity is not followed, and such pods are reported.
- Workloads that never run at the same time (pipeline steps, a CronJob whose runs do not
  overlap) still count as several users; suppress the finding with a reason.
- A Deployment with one replica and the default `RollingUpdate` strategy briefly runs two pods
  during a rollout; that is not counted (use `strategy: Recreate` with ReadWriteOnce claims).
- The access modes are the claim's; a claim of the project without `accessModes` is not judged,
  nor is a claim that is not in the project.
- A claim defined in several files (alternative samples, overlays) is taken to be one claim per
  definition: each workload goes with the definition in its own file when there is one, so two
  self-contained samples that reuse a claim name are not counted together.

## References
- Kubernetes, Access modes: https://kubernetes.io/docs/concepts/storage/persistent-volumes/#access-modes
- AKS, Azure Disk (ReadWriteOnce) and Azure Files (ReadWriteMany): https://learn.microsoft.com/azure/aks/concepts-storage
"""

from __future__ import annotations

from collections import defaultdict

from msgspec import Struct

from mlops_lint.model.document import ObjectStub, distinct, identity
from mlops_lint.model.k8s import PodSpec, Workload
from mlops_lint.model.position import Span
from mlops_lint.model.storage import claim_name, claim_name_span, claim_object, pvc_claim
from mlops_lint.model.tree import dig
from mlops_lint.rule import PROJECT, Finding, rule

HOSTNAME = "kubernetes.io/hostname"
PER_NODE = None  # a DaemonSet: one pod on every node


class Use(Struct, frozen=True):
    """One pod template mounting a claim of the project (collected where its file is linted)."""

    pvc: tuple  # the claim's K8sObject.key
    workload: ObjectStub
    span: Span  # of the volume's claimName
    node: tuple
    pods: int | None  # None: one per node
    read_only: bool
    pin: str | None  # the one node the pods are bound to
    described: str  # "Job ml/x (4 worker pods)"


def _pods(workload: Workload, pod: PodSpec) -> int | None:
    """Pods of this template running at once (0: none); PER_NODE for a DaemonSet."""
    if workload.kind == "DaemonSet":
        return PER_NODE
    if pod.replicas is None:
        return 0  # a PodTemplate runs nothing by itself
    count = pod.replicas
    if workload.kind in ("Job", "CronJob") and workload.obj.group == "batch":
        path = ("spec", "jobTemplate", "spec") if workload.kind == "CronJob" else ("spec",)
        job = dig(workload.obj.body, *path)
        completions = job.get("completions") if isinstance(job, dict) else None
        if isinstance(completions, int) and not isinstance(completions, bool):
            count = min(count, completions)  # the Job controller never runs more pods than remain
    return max(count, 0)


def _pin(pod: PodSpec) -> str | None:
    """The one node a pod template is bound to, if any."""
    name = pod.spec.get("nodeName")
    if isinstance(name, str) and name:
        return name
    placement = pod.placement
    if HOSTNAME in placement.node_selector:
        return placement.node_selector[HOSTNAME]
    if len(placement.terms) == 1:
        for req in placement.terms[0]:
            if req.key == HOSTNAME and req.operator == "In" and len(req.values) == 1:
                return req.values[0]
    return None


def _count(uses: list[Use]) -> tuple[int, bool]:
    """(pods, whether some run one per node)."""
    return sum(u.pods or 0 for u in uses), any(u.pods is None for u in uses)


def _describe(workload: Workload, pod: PodSpec, pods: int | None) -> str:
    where = workload.obj.describe()
    if pods is None:
        return f"{where} (one pod per node)"
    role = f" {pod.role}" if pod.role else ""
    return f"{where} ({pods}{role} pod{'s' if pods != 1 else ''})"


def uses(obj, ctx):
    """Every claim of the project a pod template of ``obj`` mounts, once per template."""
    workload = ctx.index.workload(obj)
    if workload is None:
        return
    namespace = obj.namespace or "default"
    for pod in workload.pods:
        pods = _pods(workload, pod)
        if pods == 0:
            continue
        seen: set[str] = set()
        mounts: dict[str, list] = defaultdict(list)
        for container in pod.containers:
            for _, mount in container.volume_mounts if not container.is_ephemeral else ():
                mounts[str(mount.get("name"))].append(mount)
        for volume_index, volume in pod.volumes:
            name = claim_name(volume)
            if name is None or name in seen:
                continue
            seen.add(name)
            held = mounts.get(str(volume.get("name")), [])
            source = volume.get("persistentVolumeClaim")
            read_only = ((isinstance(source, dict) and source.get("readOnly") is True)
                         or (bool(held) and all(m.get("readOnly") is True for m in held)))
            pvc = claim_object(ctx.index, name, namespace, obj)
            if pvc is None:
                continue  # a claim outside the project: its access modes are unknown
            yield Use(pvc.key, obj.stub(), claim_name_span(volume),
                      pod.path + ("volumes", volume_index, "persistentVolumeClaim", "claimName"),
                      pods, read_only, _pin(pod), _describe(workload, pod, pods))


@rule(code="STO003", name="rwo-volume-shared", severity="error", scope=PROJECT, requires=("PersistentVolumeClaim",),
      collect=uses, tags=("storage", "distributed-training"))
def check(found: list[Use], ctx):
    users_of: dict[tuple, list[Use]] = defaultdict(list)
    for use in found:
        users_of[use.pvc].append(use)
    for key, every in users_of.items():
        # the same object (kind, namespace, name) written in several files is one object: its
        # pods are counted once, from its first copy (linter.model.document.identity)
        every = sorted(every, key=lambda u: (u.workload.path, u.span))
        users = distinct(every, key=lambda u: (identity(u.workload), u.node))
        pvc = ctx.index.by_key(key)
        claim = pvc_claim(pvc) if pvc is not None else None
        if claim is None:
            continue
        modes = claim.access_modes
        once_pod = "ReadWriteOncePod" in modes
        if not (once_pod or "ReadWriteOnce" in modes) or "ReadWriteMany" in modes:
            continue
        if "ReadOnlyMany" in modes and all(u.read_only for u in users):
            continue
        count, per_node = _count(users)
        if count <= 1 and not per_node:
            continue
        pins = {u.pin for u in users}
        if not once_pod and not per_node and len(pins) == 1 and None not in pins:
            continue  # every pod on the same node: ReadWriteOnce is per node
        mode = "ReadWriteOncePod" if once_pod else "ReadWriteOnce"
        why = ("ReadWriteOncePod allows a single pod, so the scheduler leaves the others pending" if once_pod else
               "ReadWriteOnce lets one node mount it, so pods on other nodes fail to attach it (Multi-Attach error)")
        total = "pods on every node" if per_node else f"{count} pods"
        for use in every:
            mine = (identity(use.workload), use.node)
            others = [u.described for u in users if (identity(u.workload), u.node) != mine]
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
            also = f"; also mounted by {shown}" if others else ""
            yield Finding(
                use.span,
                f"{mode} PVC `{pvc.name}` is mounted by {total}: {use.described}{also}. {why}; "
                "use ReadWriteMany storage (Azure Files or Blob) or give each pod its own claim",
                obj=use.workload,
                node=use.node,
                fix="accessModes: [ReadWriteMany]",
            )
