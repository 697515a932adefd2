"""KServe: an InferenceService predictor's ``model:`` runs in its ServingRuntime's container.

A predictor written in the ``model:`` form (``modelFormat``, ``runtime``, ``storageUri`` and any
core/v1 Container field) is not a container of its own: KServe takes the container of the
``ServingRuntime`` (or ``ClusterServingRuntime``) that serves the model, the one named
``kserve-container`` (else its first), and merges the predictor's fields over it (a strategic
merge: ``env`` entries by name, ``resources.requests``/``limits`` by resource name, other keys
replaced). The runtime is the one ``model.runtime`` names (a ServingRuntime of the
InferenceService's namespace, else a ClusterServingRuntime), or, without a name, the one runtime
the project has whose ``supportedModelFormats`` lists the model format with ``autoSelect: true``
(the namespace's runtimes first; two or more candidates: unknown, as KServe's priorities decide).

The predictor's view keeps its own container (findings point at the predictor's text); for a
runtime the project defines, :func:`route` makes each finding on it hold for the merged container:

* a finding the merged container does not get is dropped (the runtime gives the requests the
  predictor leaves out: no RES001/RES002 on the predictor);
* a finding about a key the predictor does not set, which the runtime's own container gets too,
  is the runtime's (reported once, where the runtime is linted: no SEC finding twice);
* a finding about a value the predictor sets stays the predictor's.
"""

from __future__ import annotations

from typing import Any

from mlops_lint.model.memo import once
from mlops_lint.model.tree import YMap, YSeq

KSERVE = "serving.kserve.io"
MODEL = "model"
CONTAINER = "kserve-container"  # KServe's constants.InferenceServiceContainerName
# ModelSpec's own fields (not core/v1 Container fields): never merged into the container
_MODEL_ONLY = frozenset({"modelFormat", "runtime", "storageUri", "protocolVersion", "storage"})


def serving_runtime(isvc: Any, model: YMap, index: Any) -> Any:
    """The ServingRuntime or ClusterServingRuntime that serves a predictor's ``model:`` (None when
    the project does not define it, or more than one could)."""
    if index is None:
        return None
    namespace = isvc.namespace or "default"
    name = model.get("runtime")
    if isinstance(name, str) and name:
        local = [o for o in index.named("ServingRuntime", name)
                 if o.group == KSERVE and (o.namespace or "default") == namespace]
        cluster = [o for o in index.named("ClusterServingRuntime", name) if o.group == KSERVE]
        found = local or cluster
        return found[0] if len(found) == 1 else None
    model_format = model.get_map("modelFormat")
    wanted = model_format.get("name") if model_format is not None else None
    if not isinstance(wanted, str) or not wanted:
        return None
    local = [o for o in index.of_kind("ServingRuntime")
             if o.group == KSERVE and (o.namespace or "default") == namespace and _serves(o, wanted)]
    cluster = [o for o in index.of_kind("ClusterServingRuntime") if o.group == KSERVE and _serves(o, wanted)]
    found = local or cluster
    return found[0] if len(found) == 1 else None


def _serves(runtime: Any, model_format: str) -> bool:
    spec = runtime.body.get_map("spec")
    if spec is None or spec.get("disabled") is True:
        return False
    formats = spec.get_seq("supportedModelFormats")
    return any(item.get("autoSelect") is True and str(item.get("name", "")).lower() == model_format.lower()
               for _, item in (formats.maps() if formats is not None else ()))


def runtime_container(runtime: Any, index: Any) -> Any:
    """The runtime's own view of the container a predictor's model runs in."""
    workload = index.workload(runtime)
    if workload is None or not workload.pods:
        return None
    containers = [c for c in workload.pods[0].containers if c.field == "containers"]
    return next((c for c in containers if c.name == CONTAINER), containers[0] if containers else None)


def merged_body(runtime: YMap, model: YMap) -> YMap:
    """The runtime's container with the predictor's container fields merged over it."""
    merged = _copy(runtime)
    for key, value in model.items():
        if key in _MODEL_ONLY:
            continue
        old = merged.get(key)
        if key == "env" and isinstance(old, YSeq) and isinstance(value, YSeq):
            value = _env(old, value)
        elif key == "resources" and isinstance(old, YMap) and isinstance(value, YMap):
            value = _resources(old, value)
        merged[key] = value
        merged.kspans[key] = model.key_span(key)
        if key in model.vspans:
            merged.vspans[key] = model.vspans[key]
    return merged


def _copy(body: YMap) -> YMap:
    copy = YMap(body.span)
    copy.update(body)
    copy.kspans.update(body.kspans)
    copy.vspans.update(body.vspans)
    return copy


def _env(base: YSeq, over: YSeq) -> YSeq:
    names = {item.get("name") for item in over if isinstance(item, YMap)}
    merged = YSeq(over.span)
    for part, keep in ((base, lambda item: not (isinstance(item, YMap) and item.get("name") in names)),
                       (over, lambda item: True)):
        for i, item in enumerate(part):
            if keep(item):
                merged.append(item)
                merged.ispans.append(part.item_span(i))
    return merged


def _resources(base: YMap, over: YMap) -> YMap:
    merged = _copy(base)
    for key, value in over.items():
        old = merged.get(key)
        if isinstance(old, YMap) and isinstance(value, YMap):
            both = _copy(old)
            both.update(value)
            both.kspans.update(value.kspans)
            both.vspans.update(value.vspans)
            value = both
        merged[key] = value
        merged.kspans[key] = over.key_span(key)
    return merged


def _model_container(view: Any) -> tuple[Any, Any] | None:
    """(merged container, the runtime's own container) for the predictor's ``model:`` container
    view whose runtime the project defines; None for any other view."""
    if not hasattr(view, "pod") or getattr(view, "default_name", None) != CONTAINER or view.path[-1:] != (MODEL,):
        return None

    def build() -> tuple[Any, Any] | None:
        workload = view.pod.workload
        index = getattr(workload, "project", None) if workload is not None else None
        runtime = serving_runtime(view.obj, view.body, index)
        own = runtime_container(runtime, index) if runtime is not None else None
        if own is None:
            return None
        merged = type(view)(view.pod, merged_body(own.body, view.body), view.field, view.index, view.path,
                            default_name=view.default_name)
        return merged, own

    return once(view, ("kserve-runtime",), build)


def route(finding: Any, view: Any, func: Any, ctx: Any) -> Any:
    """Where a finding on an InferenceService's views belongs (see the module's list): the finding,
    or None when the merged container does not get it or it is the runtime's."""
    found = _model_container(view)
    if found is None:
        return finding
    merged, own = found
    node = tuple(finding.node)
    if node[:len(view.path)] != tuple(view.path):
        return finding  # about the pod, not the container
    relative = node[len(view.path):]
    if not any(tuple(f.node) == node for f in _findings(merged, func, ctx)):
        return None  # the runtime's container supplies what the predictor leaves out
    if relative[:1] and relative[0] in view.body:
        return finding  # the predictor's own value
    own_node = tuple(own.path) + relative
    if any(tuple(f.node) == own_node for f in _findings(own, func, ctx)):
        return None  # the runtime's value (or its gap): reported where the runtime is linted
    return finding


def _findings(view: Any, func: Any, ctx: Any) -> list:
    def build() -> list:
        try:
            return list(func(view, ctx))
        except Exception:  # noqa: BLE001 - the rule's own run reports its errors
            return []

    return once(view, ("kserve-findings", func), build)
