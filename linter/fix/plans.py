"""Helpers for rules that build a :class:`linter.fix.Plan` over the views they read.

A view is not always the text of one file: a TrainJob's pods are its runtime's, with the trainer
container merged from both objects and pod spec keys patched by ``runtimePatches``
(``linter.model.trainjob``). A plan must name the mapping that really holds (or will hold) a key,
in the object the finding points into; otherwise the resolver finds spans that do not match the
text and gives no fix. These helpers pick that mapping, and build intents that stop (``None``)
where a value that is not a mapping blocks the way, instead of overwriting it.
"""

from __future__ import annotations

from typing import Any

from mlops_lint.fix import SetKey
from mlops_lint.model.tree import YMap, YSeq, dig


def set_path(node: Any, path: tuple[str, ...], value: Any) -> SetKey | None:
    """``SetKey`` making ``node[path…]`` equal ``value``, anchored at the deepest mapping on the path
    that exists (a step left null, ``securityContext:``, is missing: the resolver writes the rest
    as its value); ``None`` when a step holds something else that is not a mapping (a scalar or a
    list where a mapping belongs): that is for the user to sort out, not a fix."""
    if not isinstance(node, YMap) or not path:
        return None
    for depth, step in enumerate(path[:-1]):
        if step not in node or node.get(step) is None:
            return SetKey(node, tuple(path[depth:]), value)
        child = node.get(step)
        if not isinstance(child, YMap):
            return None
        node = child
    last = node.get(path[-1])
    if isinstance(last, (YMap, YSeq)) and not isinstance(value, (dict, list)):
        return None  # a scalar never replaces a mapping or a list
    return SetKey(node, (path[-1],), value)


def container_map(container: Any) -> YMap | None:
    """The mapping that holds the container's own keys (``securityContext``, ``volumeMounts`` …).

    For a TrainJob's trainer container (a merge of the runtime's container and the TrainJob's
    ``spec.trainer``) that is the runtime's container: the TrainJob sets only ``image``,
    ``command``, ``args``, ``resourcesPerNode`` and ``env``, and findings about the other keys point
    into the runtime (``linter.model.trainjob.route``)."""
    pod = container.pod
    for _field, _index, body, *_ in pod.merged:
        if body is container.body:
            origin = pod.origin
            for theirs in origin.containers if origin is not None else ():
                if theirs.field == container.field and theirs.index == container.index:
                    return theirs.body
            return None
    return container.body


def pod_map(pod: Any, key: str) -> YMap | None:
    """The mapping that holds (or will hold) the pod spec key ``key``: the pod's spec, or for a
    TrainJob's view the ``runtimePatches`` entry that patches it, else the runtime's pod spec."""
    if pod.origin is None:
        return pod.spec
    patched = pod.patched.get(key)
    if patched is None:  # a list the patches merge item by item (volumes): where one of its items is
        patched = next((where[:-1] for which, where in pod.patched.items()
                        if isinstance(which, tuple) and len(which) == 2 and which[0] == key), None)
    if patched is not None:
        found = dig(pod.obj.body, *patched[:-1])
        return found if isinstance(found, YMap) else None
    return pod.origin.spec


def plan(title: str, *intents: Any, safe: bool = True, path: str | None = None) -> Any:
    """A :class:`linter.fix.Plan` of ``intents``, or ``None`` when one of them could not be built."""
    from mlops_lint.fix import Plan

    if not intents or any(intent is None for intent in intents):
        return None
    return Plan(title, tuple(intents), safe, path)


def whole_count(value: Any) -> bool:
    """A parsed quantity (``Resource.value``) that is a positive whole number: a GPU count a fix may
    copy (any other value is GPU003's finding, and copying it would make a second one)."""
    return value is not None and value > 0 and value.denominator == 1


def no_privilege_escalation(container: Any, *, safe: bool = False) -> Any:
    """``securityContext.allowPrivilegeEscalation: false`` on a container (SEC001, GPU010)."""
    from mlops_lint.model.k8s import is_templated

    context = container.security_context
    current = context.get("allowPrivilegeEscalation") if context is not None else None
    if isinstance(current, str) and is_templated(current):
        return None
    return plan("set `securityContext.allowPrivilegeEscalation: false`",
                set_path(container_map(container), ("securityContext", "allowPrivilegeEscalation"), False),
                safe=safe)


def remove_sys_admin(container: Any, *, safe: bool = False) -> Any:
    """SEC001's repair of a container that adds ``CAP_SYS_ADMIN``: every ``SYS_ADMIN`` /
    ``CAP_SYS_ADMIN`` item of ``capabilities.add`` removed (``DeleteItem``; the list left ``[]``
    when nothing else is in it) and ``securityContext.allowPrivilegeEscalation: false`` set (the API
    server rejects ``false`` beside the capability, so both go together). ``None`` when the
    capabilities are not written as a list in the container's own mapping, or the field holds a
    placeholder."""
    from mlops_lint.fix import DeleteItem
    from mlops_lint.model.k8s import is_templated
    from mlops_lint.model.security import capability

    body = container_map(container)
    context = body.get("securityContext") if isinstance(body, YMap) else None
    caps = context.get("capabilities") if isinstance(context, YMap) else None
    add = caps.get("add") if isinstance(caps, YMap) else None
    if not isinstance(add, YSeq):
        return None
    gone = tuple(index for index, item in enumerate(add) if capability(item).upper() == "SYS_ADMIN")
    current = context.get("allowPrivilegeEscalation")  # type: ignore[union-attr]
    if not gone or (isinstance(current, str) and is_templated(current)):
        return None
    return plan("remove `SYS_ADMIN` from `capabilities.add` and set `securityContext.allowPrivilegeEscalation: false`",
                DeleteItem(caps, "add", gone), set_path(body, ("securityContext", "allowPrivilegeEscalation"), False),
                safe=safe)


def drop_all_capabilities(container: Any, *, safe: bool = False) -> Any:
    """``capabilities: {drop: [ALL]}`` on a container (SEC002, GPU010): ``ALL`` appended to a
    ``drop`` list that lacks it (what the list already drops is kept; ``add`` is untouched, and
    Kubernetes adds those back after dropping), an ``all`` in another case written ``ALL``, or
    the list created."""
    from mlops_lint.fix import AppendItem, Replace

    context = container.security_context
    caps = context.get("capabilities") if context is not None else None
    title = "drop all capabilities (`capabilities: {drop: [ALL]}`)"
    if isinstance(caps, YMap) and "drop" in caps:
        drop = caps.get("drop")
        if not isinstance(drop, YSeq):
            return None
        for index, item in enumerate(drop):
            if isinstance(item, str) and item.upper() == "ALL":
                quoted = str(container.obj.path).endswith(".json")
                return plan("write `ALL` in upper case in `capabilities.drop`",
                            Replace(drop.item_span(index), '"ALL"' if quoted else "ALL"), safe=safe)
        return plan(title, AppendItem(caps, "drop", "ALL"), safe=safe)
    if caps is not None and not isinstance(caps, YMap):
        return None
    return plan(title, set_path(container_map(container), ("securityContext", "capabilities", "drop"), ["ALL"]),
                safe=safe)


def env_entry(container: Any, var: Any) -> YMap | None:
    """The ``env`` item of ``container`` that ``var`` (a ``linter.model.k8s.EnvVar``) was read from,
    as a real node (a TrainJob trainer's merged ``env`` holds the items of both objects)."""
    env = container.body.get_seq("env")
    index = var.path[-1] if var is not None and var.path else None
    if env is None or not isinstance(index, int) or not 0 <= index < len(env):
        return None
    item = env[index]
    return item if isinstance(item, YMap) and item.get("name") == var.name else None
