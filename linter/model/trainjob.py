"""Kubeflow Trainer v2: a TrainJob runs the pods of the runtime it names, with its overrides.

A ``TrainJob`` (``trainer.kubeflow.org``) names a ``ClusterTrainingRuntime`` (the default kind)
or a ``TrainingRuntime`` of its namespace in ``spec.runtimeRef``. The runtime's JobSet template
(``spec.template.spec.replicatedJobs``) holds the pods; the TrainJob's ``spec.trainer`` overrides
the trainer: in the replicated jobs that run it (labelled ``trainjob-ancestor-step: trainer``, an
MPI runtime's launcher, or the job ``node``), the container ``node`` (Trainer's ``constants.Node``) takes the TrainJob's ``image``, ``command``, ``args``, ``resourcesPerNode``
(as its ``resources``) and ``env`` (merged by name, the TrainJob's entries win), and
``numNodes`` replaces the runtime's ``mlPolicy.numNodes`` as the job's pod count. Its
``runtimePatches`` that patch a replicated job's pod spec (``nodeSelector``, ``tolerations``,
``affinity`` …) apply on top: nodeSelector entries merge, tolerations add up, other keys replace.

The TrainJob's view has the runtime's pods (as the runtime's own view reads them) with that
container merged. A finding whose value comes from the TrainJob points into the TrainJob
(``spec.trainer…``); one whose value comes from the runtime points into the runtime, unless the
runtime's own view gives the same finding (then it is the runtime's, reported once where the
runtime is linted). :func:`route` makes that choice for the engine.
"""

from __future__ import annotations

from typing import Any, Callable

from msgspec.structs import replace

from linter.model.memo import once
from linter.model.tree import YMap, YSeq

TRAINER = "trainer.kubeflow.org"
NODE = "node"
_OVERRIDES = {"image": "image", "command": "command", "args": "args", "resourcesPerNode": "resources"}


def runtime_of(obj: Any, index: Any) -> Any:
    """The runtime a TrainJob names (None when the project does not define it)."""
    spec = obj.body.get_map("spec")
    ref = spec.get_map("runtimeRef") if spec is not None else None
    name = ref.get("name") if ref is not None else None
    if not isinstance(name, str) or index is None:
        return None
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if kind not in ("ClusterTrainingRuntime", "TrainingRuntime"):
        return None
    namespace = (obj.namespace or "default") if kind == "TrainingRuntime" else None
    found = [o for o in index.named(kind, name)
             if o.group == TRAINER and (namespace is None or (o.namespace or "default") == namespace)]
    same_file = [o for o in found if o.path == obj.path]
    return (same_file or found or [None])[0]


def _merged(runtime_body: YMap, trainer: YMap) -> tuple[YMap, dict]:
    """The trainer container with the TrainJob's overrides, and where each key comes from:
    key -> "trainjob" | "runtime"; for ``env``, the origin of each entry."""
    merged = YMap(runtime_body.span)
    merged.update(runtime_body)
    merged.kspans.update(runtime_body.kspans)
    merged.vspans.update(runtime_body.vspans)
    origin: dict[str, Any] = {key: "runtime" for key in runtime_body}
    for source, key in _OVERRIDES.items():
        if source in trainer:
            merged[key] = trainer[source]
            merged.kspans[key] = trainer.key_span(source)
            if source in trainer.vspans:
                merged.vspans[key] = trainer.vspans[source]
            origin[key] = "trainjob"
    own = trainer.get_seq("env")
    if own is not None:
        theirs = runtime_body.get_seq("env")
        names = {item.get("name") for _, item in own.maps()}
        env = YSeq(own.span)
        entries: list[tuple[str, int]] = []
        for position, item in enumerate(own):
            env.append(item)
            env.ispans.append(own.item_span(position))
            entries.append(("trainjob", position))
        for position, item in enumerate(theirs or ()):
            if isinstance(item, YMap) and item.get("name") in names:
                continue
            env.append(item)
            env.ispans.append(theirs.item_span(position))
            entries.append(("runtime", position))
        merged["env"] = env
        merged.kspans["env"] = trainer.key_span("env")
        origin["env"] = entries
    return merged, origin


def trainjob_pods(obj: Any, index: Any, pod_class: Any, workload_of: Callable) -> tuple[list, Any]:
    """The TrainJob's pods (the runtime's, merged) and the runtime (None: not in the project)."""
    runtime = runtime_of(obj, index)
    if runtime is None:
        return [], None
    source = workload_of(runtime)
    if source is None:
        return [], runtime
    spec = obj.body.get_map("spec")
    trainer = spec.get_map("trainer") if spec is not None else None
    nodes = trainer.get("numNodes") if trainer is not None else None
    patches = _pod_patches(spec)
    pods = []
    for pod in source.pods:
        pod_spec, patched = pod.spec, {}
        for patch_path, patch in patches.get(pod.role, ()):
            pod_spec = _patched(pod_spec, patch)
            patched.update({key: patch_path + (key,) for key in patch})
        copy = pod_class(obj, pod_spec, pod.path, pod.template, pod.role, pod.replicas,
                         anchor=spec.key_span("trainer") if trainer is not None else spec.key_span("runtimeRef"))
        copy.origin = pod
        copy.patched = patched
        copy.step = pod.step
        if pod.role == NODE and isinstance(nodes, int) and not isinstance(nodes, bool):
            copy.replicas = nodes
        if pod.runs_trainer and trainer is not None:
            items = pod.spec.get_seq("containers")
            for position, body in items.maps() if items is not None else ():
                if body.get("name") == NODE:
                    merged, origin = _merged(body, trainer)
                    copy.merged = (("containers", position, merged, ("spec", "trainer"), origin,
                                    pod.path + ("containers", position)),)
                    break
        pods.append(copy)
    return pods, runtime


def _pod_patches(spec: YMap | None) -> dict[str, list[tuple[tuple, YMap]]]:
    """replicated job name -> (node path, pod spec) of each ``runtimePatches`` entry that patches
    the pod spec of that job (``trainingRuntimeSpec.template.spec.replicatedJobs``)."""
    found: dict[str, list[tuple[tuple, YMap]]] = {}
    patches = spec.get_seq("runtimePatches") if spec is not None else None
    for i, patch in patches.maps() if patches is not None else ():
        holder, path = patch, ("spec", "runtimePatches", i)
        for key in ("trainingRuntimeSpec", "template", "spec"):
            holder = holder.get_map(key) if holder is not None else None
            path += (key,)
        jobs = holder.get_seq("replicatedJobs") if holder is not None else None
        for j, job in jobs.maps() if jobs is not None else ():
            pod_spec, where = job, path + ("replicatedJobs", j)
            for key in ("template", "spec", "template", "spec"):
                pod_spec = pod_spec.get_map(key) if pod_spec is not None else None
                where += (key,)
            if pod_spec is not None and isinstance(job.get("name"), str):
                found.setdefault(job["name"], []).append((where, pod_spec))
    return found


def _patched(base: YMap, patch: YMap) -> YMap:
    """The pod spec with a patch's keys (a strategic merge on the placement keys: nodeSelector
    entries merged, tolerations appended; other keys replaced)."""
    merged = YMap(base.span)
    merged.update(base)
    merged.kspans.update(base.kspans)
    merged.vspans.update(base.vspans)
    for key, value in patch.items():
        old = base.get(key)
        if key == "nodeSelector" and isinstance(old, YMap) and isinstance(value, YMap):
            both = YMap(value.span)
            for part in (old, value):
                both.update(part)
                both.kspans.update(part.kspans)
                both.vspans.update(part.vspans)
            value = both
        elif key == "tolerations" and isinstance(old, YSeq) and isinstance(value, YSeq):
            both = YSeq(value.span)
            for part in (old, value):
                both.extend(part)
                both.ispans.extend(part.item_span(i) for i in range(len(part)))
            value = both
        merged[key] = value
        merged.kspans[key] = patch.key_span(key)
        if key in patch.vspans:
            merged.vspans[key] = patch.vspans[key]
    return merged


def route(finding: Any, view: Any, func: Callable, ctx: Any) -> Any:
    """Where a finding on a TrainJob's view belongs: the TrainJob (its node path into
    ``spec.trainer``), the runtime (``finding.obj``, its node path there), or None when the
    runtime's own view gives it (it is reported where the runtime is linted)."""
    if hasattr(view, "pods"):  # the workload
        pod, workload = None, view
    else:
        pod = view if hasattr(view, "spec") else view.pod
        workload = pod.workload
    node = tuple(finding.node)
    if pod is not None and finding.span == pod.anchor:
        return replace(finding, node=("spec", "trainer"))  # about the pod the TrainJob's values make
    patched = getattr(pod, "patched", None) or {}
    if pod is not None and node[:len(pod.path)] == pod.path and node[len(pod.path):len(pod.path) + 1] \
            and node[len(pod.path)] in patched:  # a key the TrainJob's runtimePatches set
        return replace(finding, node=patched[node[len(pod.path)]] + node[len(pod.path) + 1:])
    runtime_node = _runtime_node(node, pod)
    if runtime_node is None:  # the TrainJob's own value
        if node[2:3] == ("resources",):
            node = ("spec", "trainer", "resourcesPerNode") + node[3:]
        return replace(finding, node=node)
    origin = _origin_view(view)
    if origin is not None and any(tuple(f.node) == runtime_node for f in _own(origin, func, ctx)):
        return None
    obj = workload.obj
    where = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
    return replace(finding, obj=workload.runtime, node=runtime_node,
                   message=f"{finding.message} (as TrainJob `{where}` runs it)")


def _runtime_node(node: tuple, pod: Any) -> tuple | None:
    """The node in the runtime a finding's node stands for, None when it is the TrainJob's."""
    if node[:2] != ("spec", "trainer"):
        return node  # the runtime's pod spec (the TrainJob's view reads it at the runtime's paths)
    merged = next(iter(pod.merged), None) if pod is not None else None
    if merged is None:
        return None
    origin, runtime_path = merged[4], merged[5]
    if len(node) == 2:
        return runtime_path  # the container itself (its ``name:``) is the runtime's
    key = node[2]
    where = origin.get(key, "runtime")  # a key neither sets is missing from the runtime's container
    if key == "env" and isinstance(where, list):
        if len(node) < 4 or not isinstance(node[3], int) or node[3] >= len(where):
            return None
        source, position = where[node[3]]
        return None if source == "trainjob" else runtime_path + ("env", position) + node[4:]
    if where == "trainjob":
        return None
    return runtime_path + node[2:]


def _origin_view(view: Any) -> Any:
    if hasattr(view, "pods") or hasattr(view, "spec"):  # a workload or a pod
        return view.origin
    origin_pod = getattr(view.pod, "origin", None)
    if origin_pod is None:
        return None
    return next((c for c in origin_pod.containers if c.field == view.field and c.index == view.index), None)


def _own(origin: Any, func: Callable, ctx: Any) -> list:
    """What the rule finds on the runtime's own view (once per view and rule)."""
    def build() -> list:
        try:
            return list(func(origin, ctx))
        except Exception:  # noqa: BLE001 - the rule's error is reported on the runtime itself
            return []

    return once(origin, ("own-findings", func), build)
