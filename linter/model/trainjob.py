"""Kubeflow Trainer v2: a TrainJob runs the pods of the runtime it names, with its overrides.

A ``TrainJob`` (``trainer.kubeflow.org``) names a ``ClusterTrainingRuntime`` (the default kind)
or a ``TrainingRuntime`` of its namespace in ``spec.runtimeRef``. The runtime's JobSet template
(``spec.template.spec.replicatedJobs``) holds the pods; the TrainJob's ``spec.trainer`` overrides
the trainer: in the replicated jobs that run it (labelled ``trainjob-ancestor-step: trainer``, an
MPI runtime's launcher, or the job ``node``), the container ``node`` (Trainer's ``constants.Node``) takes the TrainJob's ``image``, ``command``, ``args``, ``resourcesPerNode``
(as its ``resources``) and ``env`` (merged by name, the TrainJob's entries win), and
``numNodes`` replaces the runtime's ``mlPolicy.numNodes`` as the job's pod count. Its
``runtimePatches`` that patch a replicated job's pod spec (``nodeSelector``, ``tolerations``,
``affinity``, ``volumes``, ``containers`` …) apply on top: nodeSelector entries merge, tolerations
add up, containers, init containers, volumes and pull secrets merge by name (a patched container
keeps its image and resources; the patch's ``env`` merges by name, ``volumeMounts`` by mount
path, ``securityContext`` key by key), other keys replace. A finding about a value a patch sets
points into that patch.

The TrainJob's view has the runtime's pods (as the runtime's own view reads them) with that
container merged. A finding whose value comes from the TrainJob points into the TrainJob
(``spec.trainer…``); one whose value comes from the runtime points into the runtime, unless the
runtime's own view gives the same finding (then it is the runtime's, reported once where the
runtime is linted). :func:`route` makes that choice for the engine.
"""

from __future__ import annotations

from typing import Any, Callable

from msgspec.structs import replace

from mlops_lint.model.memo import once
from mlops_lint.model.tree import YMap, YSeq

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
            pod_spec = _patched(pod_spec, patch, patch_path, patched)
        copy = pod_class(obj, pod_spec, pod.path, pod.template, pod.role, pod.replicas,
                         anchor=spec.key_span("trainer") if trainer is not None else spec.key_span("runtimeRef"))
        copy.origin = pod
        copy.patched = patched
        copy.step = pod.step
        if pod.role == NODE and isinstance(nodes, int) and not isinstance(nodes, bool):
            copy.replicas = nodes
        if pod.runs_trainer and trainer is not None:
            items = pod_spec.get_seq("containers")  # with what the runtimePatches set in them
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


# list keys of a patched pod spec merged item by item (by this key), not replaced
_MERGED_LISTS = {"containers": "name", "initContainers": "name", "volumes": "name", "imagePullSecrets": "name"}
# a patched container's lists merged by key (env by name, volumeMounts by mountPath)
_CONTAINER_LISTS = {"env": "name", "volumeMounts": "mountPath"}


def _copy(body: YMap) -> YMap:
    merged = YMap(body.span)
    merged.update(body)
    merged.kspans.update(body.kspans)
    merged.vspans.update(body.vspans)
    return merged


def _merge_list(old: YSeq, new: YSeq, key: str, item_merge: Any = None) -> tuple[YSeq, dict[int, int]]:
    """``old`` with each item of ``new`` merged over (``item_merge``) or replacing the item with the
    same ``key``, or appended; and, for each item of ``new``, its position in the result."""
    merged = YSeq(new.span)
    merged.extend(old)
    merged.ispans.extend(old.item_span(i) for i in range(len(old)))
    where: dict[int, int] = {}
    for j, item in enumerate(new):
        name = item.get(key) if isinstance(item, YMap) else None
        at = next((i for i, mine in enumerate(merged) if name is not None and isinstance(mine, YMap)
                   and mine.get(key) == name), None)
        if at is None:
            merged.append(item)
            merged.ispans.append(new.item_span(j))
            at = len(merged) - 1
        else:
            mine = merged[at]
            merged[at] = item_merge(mine, item) if item_merge is not None else item
            if item_merge is None:
                merged.ispans[at] = new.item_span(j)
        where[j] = at
    return merged, where


def _merge_container(base: YMap, patch: YMap, record: Any = None) -> YMap:
    """A runtime container with a RuntimePatch's entry for it (``env`` by name, ``volumeMounts`` by
    mount path, ``securityContext`` key by key; anything else replaced). ``record(key, where)``
    hears each key the patch sets, with (for a merged list) each patch item's merged position."""
    merged = _copy(base)
    for key, value in patch.items():
        old = base.get(key)
        where = None
        if key in _CONTAINER_LISTS and isinstance(value, YSeq):
            value, where = _merge_list(old if isinstance(old, YSeq) else YSeq(value.span), value,
                                       _CONTAINER_LISTS[key])
        elif key == "securityContext" and isinstance(old, YMap) and isinstance(value, YMap):
            both = _copy(old)
            both.update(value)
            both.kspans.update(value.kspans)
            both.vspans.update(value.vspans)
            value = both
        merged[key] = value
        merged.kspans[key] = patch.key_span(key)
        if key in patch.vspans:
            merged.vspans[key] = patch.vspans[key]
        if record is not None and key != "name":
            record(key, where)
    return merged


def _patched(base: YMap, patch: YMap, patch_path: tuple = (), patched: dict | None = None) -> YMap:
    """The pod spec with a patch's keys (a strategic merge: nodeSelector entries merged,
    tolerations appended, containers, volumes and pull secrets merged by name, a container's own
    ``env``/``volumeMounts``/``securityContext`` merged into it; other keys replaced). ``patched``
    gets, for each value the patch sets, where it is in the TrainJob: a pod spec key, or
    (list, position in the merged list, container key) for what it sets in a container."""
    merged = _copy(base)
    patched = {} if patched is None else patched
    for key, value in patch.items():
        old = base.get(key)
        if key in _MERGED_LISTS and isinstance(value, YSeq):
            containers = key in ("containers", "initContainers")
            seen: list = []  # (patch item position, container key, merged positions) heard while merging

            def merge(mine: YMap, item: YMap, _seen: list = seen) -> YMap:
                return _merge_container(mine, item, lambda sub, where: _seen.append((item, sub, where)))

            value, where = _merge_list(old if isinstance(old, YSeq) else YSeq(value.span), value, _MERGED_LISTS[key],
                                       merge if containers else None)
            positions = {id(patch[key][j]): (j, at) for j, at in where.items()}
            for item, sub, places in seen:
                j, at = positions[id(item)]
                if places is None:
                    patched[(key, at, sub)] = patch_path + (key, j, sub)
                else:  # each list item the patch sets, at its merged position
                    for jj, here in places.items():
                        patched[(key, at, sub, here)] = patch_path + (key, j, sub, jj)
            for j, at in where.items():
                if not containers or not any(item is patch[key][j] for item, _, _ in seen):
                    patched[(key, at)] = patch_path + (key, j)  # a volume, or a container the runtime lacks
            merged[key] = value
            merged.kspans.setdefault(key, patch.key_span(key))
            continue
        patched[key] = patch_path + (key,)
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
    node = tuple(finding.node)
    if hasattr(view, "pods"):  # the workload: the pod its finding's node leads into, if any
        pod, workload = _pod_at(view, node), view
    else:
        pod = view if hasattr(view, "spec") else view.pod
        workload = pod.workload
    if pod is not None and finding.span == pod.anchor:
        return replace(finding, node=("spec", "trainer"))  # about the pod the TrainJob's values make
    patched = getattr(pod, "patched", None) or {}
    if pod is not None and patched and node[:len(pod.path)] == pod.path and len(node) > len(pod.path):
        relative = node[len(pod.path):]
        for size in (4, 3, 2, 1):  # a container's list item or key, a volume, a pod spec key the patches set
            key = relative[0] if size == 1 else tuple(relative[:size])
            if len(relative) >= size and key in patched:
                return replace(finding, node=patched[key] + relative[size:])
    if pod is not None and patched and pod.merged and node[:2] == ("spec", "trainer") and len(node) > 2:
        field_name, position, origin = pod.merged[0][0], pod.merged[0][1], pod.merged[0][4]
        if origin.get(node[2]) != "trainjob":  # the trainer container's key the TrainJob's trainer leaves
            for size in (2, 1):  # to the runtime, set by a runtimePatch (a list item of it, or the key)
                key = (field_name, position) + tuple(node[2:2 + size])
                if len(node) >= 2 + size and key in patched:
                    return replace(finding, node=patched[key] + node[2 + size:])
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


def _pod_at(workload: Any, node: tuple) -> Any:
    """The pod of a TrainJob's workload view that a workload finding's node points into (a
    container or key of it, as QUE012 points at a container's ``volumeMounts``): the trainer pod
    for ``spec.trainer…`` (the TrainJob's trainer merged with the runtime's container), else the
    pod whose path the node extends; None for a node about the TrainJob as a whole. Routed as
    that pod's finding, a key the runtime sets is reported in the runtime, not at the runtime's
    line in the TrainJob's file."""
    if node[:2] == ("spec", "trainer") and len(node) > 2:
        return next((pod for pod in workload.pods if pod.merged), None)
    return next((pod for pod in workload.pods if len(node) > len(pod.path) and node[:len(pod.path)] == pod.path), None)


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
