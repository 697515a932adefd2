"""Pods that a controller completes from its own defaults: only what the object writes is judged.

A KServe ``LLMInferenceService``'s pod specs (``template``, ``worker``, ``prefill``, the router's
scheduler) are merged over KServe's well-known ``LLMInferenceServiceConfig`` (its image, command,
probes, security context, ``/dev/shm`` volume) and the configs of ``baseRefs``; an NVIDIA Dynamo
``DynamoGraphDeployment``'s ``extraPodSpec`` and ``mainContainer`` are completed by the operator
from the component's ``resources``, ``envs``, probes and ``sharedMemory``. Neither the defaults
nor the merge are in the project, so a finding about a key the object leaves out may be wrong
(the controller fills it). :func:`route` keeps a finding whose node is a value the object writes
(an ``allowPrivilegeEscalation: true``, a GPU request without its limit) and drops one about a
key it does not write (a missing ``securityContext``, requests, probes) or about what a map it
writes lacks (a ``securityContext`` without ``capabilities``: the merge keeps the defaults' keys
beside the object's); a finding about the workload as a whole stays. A Dynamo component's GPUs
(``resources.limits.gpu``) are its main container's GPU request and limit in the view; a finding
about them is given the component's node path (and no fix when the component writes no pod spec).
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from mlops_lint.model.tree import YMap, YSeq


def _roots(view: Any) -> list[tuple[tuple, Any]]:
    """(path, body) of the pod specs and containers a finding of ``view`` can point into."""
    if hasattr(view, "pods"):  # the workload
        roots = []
        for pod in view.pods:
            roots.append((tuple(pod.path), pod.spec))
            roots.extend((tuple(c.path), c.body) for c in pod.containers)
        return roots
    if hasattr(view, "spec"):  # a pod
        return [(tuple(view.path), view.spec), *((tuple(c.path), c.body) for c in view.containers)]
    return [(tuple(view.path), view.body)]


def written(body: Any, steps: tuple) -> bool:
    """Whether the object writes the value at ``steps`` below ``body`` (every step present) and it
    is not a map (a finding at a map is about a key it lacks, which the merge may bring)."""
    node = body
    for step in steps:
        if isinstance(node, YMap) and not isinstance(step, int) and step in node:
            node = node[step]
        elif isinstance(node, YSeq) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            return False
    return not isinstance(node, YMap)


def route(finding: Any, view: Any, func: Any, ctx: Any) -> Any:
    """The finding when it is about a value the object writes (or not about a pod or container
    of it), else None (the controller's defaults may supply what it misses)."""
    node = tuple(finding.node or ())
    best: tuple[tuple, Any] | None = None
    for path, body in _roots(view):
        if node[:len(path)] == path and (best is None or len(path) > len(best[0])):
            best = (path, body)
    if best is None:
        return finding
    path, body = best
    relative = node[len(path):]
    if not (relative and written(body, relative)):
        return None
    for pod in _pods(view):
        for source, target in pod.borrowed.items():
            if node[:len(source)] == source:
                # a value the view takes from elsewhere in the object (a Dynamo component's GPUs):
                # the finding is about that value; a fix may edit the pod spec only if it is written
                return replace(finding, node=target + node[len(source):],
                               autofix=finding.autofix if pod.written else None)
    return finding


def _pods(view: Any) -> list:
    if hasattr(view, "pods"):
        return view.pods
    if hasattr(view, "spec"):
        return [view]
    return [view.pod] if hasattr(view, "pod") else []
