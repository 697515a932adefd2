"""GPUs allocated through Dynamic Resource Allocation (``resource.k8s.io``).

A pod asks for devices with ``spec.resourceClaims`` (each entry names a ``ResourceClaimTemplate``
or a ``ResourceClaim``; ``resourceClaimTemplateName`` / ``resourceClaimName``, or under
``source:`` in the v1alpha2 shape), and a container uses a claim by listing its name in
``resources.claims``. A claim's ``spec.devices.requests`` (a template's ``spec.spec.devices``)
name a ``deviceClassName``: directly in v1beta1, under ``exactly:`` in v1 and v1beta2, or as
alternatives under ``firstAvailable:``.

A request asks for GPUs when its device class is NVIDIA's (``gpu.nvidia.com``, or
``mig.nvidia.com`` for MIG devices, the classes the NVIDIA DRA driver installs), or a
``DeviceClass`` of the project whose CEL selectors pick that driver
(``device.driver == "gpu.nvidia.com"``); with ``firstAvailable`` every alternative must be a
GPU class. Its count is ``count`` (default 1) with ``allocationMode: ExactCount``; ``All`` (every
matching device of a node) has no count.

Such a container is a GPU container for the rules that care about GPU pods (placement and
taints, ``/dev/shm``, QoS, NCCL); the rules about ``nvidia.com/gpu`` requests and limits do not
apply to it, since it sets none. The tables are built once per index (``ProjectIndex.memo``).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Iterator

from msgspec import Struct

from mlops_lint.model.memo import once
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq

DRA_GROUP = "resource.k8s.io"
NVIDIA_DRIVER = "gpu.nvidia.com"
NVIDIA_GPU_CLASSES = frozenset({"gpu.nvidia.com", "mig.nvidia.com"})
_DRIVER = re.compile(r"""device\.driver\s*==\s*['"]gpu\.nvidia\.com['"]""")


class ClaimedGpu(Struct, frozen=True):
    """GPUs a container takes through one resource claim; read like a requests entry
    (``name``, ``raw``, ``value``, spans) by the rules that list what a pod asks for."""

    name: str  # how messages name it: "GPUs of device class gpu.nvidia.com through resource claim `gpu`"
    raw: Any
    value: Fraction | None  # the count, None when the claim gives none (allocationMode: All)
    key_span: Span  # the container's ``resources.claims`` entry
    value_span: Span
    node: tuple  # its node path
    device_class: str
    claim: str


def _gpu_classes(index: Any) -> frozenset[str]:
    names = set(NVIDIA_GPU_CLASSES)
    for obj in index.of_kind("DeviceClass"):
        if obj.group != DRA_GROUP:
            continue
        spec = obj.body.get_map("spec")
        selectors = spec.get_seq("selectors") if spec is not None else None
        for _, selector in selectors.maps() if selectors is not None else ():
            cel = selector.get_map("cel")
            expression = cel.get("expression") if cel is not None else None
            if isinstance(expression, str) and _DRIVER.search(expression):
                names.add(obj.name)
                break
    return frozenset(names)


def _request_gpus(request: YMap, classes: frozenset[str]) -> tuple[str, int | None] | None:
    """(device class, count) when one request of a claim asks for GPUs, else None."""
    exact = request.get_map("exactly") or request  # v1/v1beta2 nest it, v1beta1 does not
    alternatives = request.get_seq("firstAvailable")
    options = [item for _, item in alternatives.maps()] if alternatives is not None and "deviceClassName" not in exact \
        else [exact]
    found = None
    for option in options:
        name = option.get("deviceClassName")
        if not isinstance(name, str) or name not in classes:
            return None
        mode = option.get("allocationMode", "ExactCount")
        count = option.get("count", 1)
        count = count if mode == "ExactCount" and isinstance(count, int) and not isinstance(count, bool) else None
        if found is not None and found[1] != count:
            count = None
        found = (name, count)
    return found


def _claim_gpus(devices: YMap | None, classes: frozenset[str]) -> dict[str, tuple[str, int | None]]:
    """request name -> (device class, count) for the GPU requests of a claim's ``devices``."""
    requests = devices.get_seq("requests") if devices is not None else None
    found = {}
    for _, request in requests.maps() if requests is not None else ():
        gpus = _request_gpus(request, classes)
        name = request.get("name")
        if gpus is not None and isinstance(name, str):
            found[name] = gpus
    return found


def _tables(index: Any) -> dict[tuple[str, str, str], dict[str, tuple[str, int | None]]]:
    """(kind, namespace, name) of every claim and claim template -> its GPU requests."""
    classes = _gpu_classes(index)
    tables = {}
    for kind in ("ResourceClaimTemplate", "ResourceClaim"):
        for obj in index.of_kind(kind):
            if obj.group != DRA_GROUP:
                continue
            spec = obj.body.get_map("spec")
            if kind == "ResourceClaimTemplate":
                spec = spec.get_map("spec") if spec is not None else None
            gpus = _claim_gpus(spec.get_map("devices") if spec is not None else None, classes)
            if gpus:
                tables[(kind, obj.namespace or "default", obj.name)] = gpus
    return tables


def _pod_claims(pod: Any) -> dict[str, tuple[str, str]]:
    """claim name in the pod -> (kind, object name) it refers to."""
    claims = pod.spec.get_seq("resourceClaims")
    found = {}
    for _, entry in claims.maps() if claims is not None else ():
        source = entry.get_map("source") or entry
        name = entry.get("name")
        for key, kind in (("resourceClaimTemplateName", "ResourceClaimTemplate"), ("resourceClaimName", "ResourceClaim")):
            target = source.get(key)
            if isinstance(name, str) and isinstance(target, str):
                found[name] = (kind, target)
    return found


def claimed_gpus(container: Any) -> list[ClaimedGpu]:
    """The GPUs a container takes through resource claims (computed once per container view)."""
    return list(once(container, "dra-gpus", lambda: tuple(_claimed_gpus(container))))


def _claimed_gpus(container: Any) -> Iterator[ClaimedGpu]:
    resources = container.resources_node
    used = resources.get_seq("claims") if resources is not None else None
    workload = container.pod.workload
    index = workload.project if workload is not None else None
    if used is None or index is None or not container.pod.spec.get("resourceClaims"):
        return
    tables = index.memo("dra-gpu-claims", lambda: _tables(index))
    if not tables:
        return
    pod_claims = _pod_claims(container.pod)
    namespace = container.obj.namespace or "default"
    for position, entry in used.maps():
        claim = entry.get("name")
        target = pod_claims.get(claim) if isinstance(claim, str) else None
        gpus = tables.get((target[0], namespace, target[1])) if target is not None else None
        if not gpus:
            continue
        request = entry.get("request")
        chosen = [gpus[request]] if isinstance(request, str) and request in gpus else \
            [] if isinstance(request, str) else list(gpus.values())
        if not chosen:
            continue
        counts = [count for _, count in chosen]
        value = Fraction(sum(counts)) if None not in counts else None  # type: ignore[arg-type]
        device_class = chosen[0][0]
        span = entry.kspans.get("name", used.item_span(position))
        yield ClaimedGpu(f"GPUs of device class {device_class} through resource claim `{claim}`", value, value, span, span,
                         container.path + ("resources", "claims", position), device_class, str(claim))
