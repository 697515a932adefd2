"""Pod requests as the scheduler computes them (Kubernetes' ``PodRequests``).

A model of its own (the cluster model, Kueue's pod sets and the admission model read it), so
that none of them imports another for it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from msgspec import Struct

from mlops_lint.model.memo import once

class PodRequest(Struct, frozen=True):
    amount: Fraction
    container: Any  # the container asking the most of it
    entry: Any  # its Resource (request, or the limit a missing request defaults to)


def pod_requests(pod: Any) -> dict[str, PodRequest]:
    """The pod's effective request per resource, as the scheduler computes it.

    A container's request defaults to its limit when only the limit is set. App containers and
    native sidecars (init containers with ``restartPolicy: Always``) add up; each ordinary init
    container runs alone beside the sidecars started before it; the pod needs the larger of
    the two. Ephemeral containers have no resources.

    Computed once per pod view (views are read-only; several rules ask): a fresh dict each call.
    """
    return dict(once(pod, "_pod_requests", lambda: _pod_requests(pod)))


def _pod_requests(pod: Any) -> dict[str, PodRequest]:
    def own(container: Any) -> dict[str, Any]:
        entries = dict(container.limits)
        entries.update(container.requests)
        return {name: res for name, res in entries.items() if res.value is not None}

    total: dict[str, Fraction] = {}
    biggest: dict[str, tuple[Fraction, Any, Any]] = {}

    def note(name: str, amount: Fraction, container: Any, entry: Any) -> None:
        if name not in biggest or amount > biggest[name][0]:
            biggest[name] = (amount, container, entry)

    for container in pod.app_containers:
        for name, res in own(container).items():
            total[name] = _plus(total.get(name), res.value)
            note(name, res.value, container, res)
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for container in pod.init_containers:
        entries = own(container)
        if container.is_sidecar:
            for name, res in entries.items():
                total[name] = _plus(total.get(name), res.value)
                sidecars[name] = _plus(sidecars.get(name), res.value)
                note(name, res.value, container, res)
            need = dict(sidecars)
        else:
            need = dict(sidecars)
            for name, res in entries.items():
                need[name] = _plus(need.get(name), res.value)
                note(name, res.value, container, res)
        for name, amount in need.items():
            init_peak[name] = max(init_peak.get(name, _ZERO), amount)
    for name, amount in init_peak.items():
        total[name] = max(total.get(name, _ZERO), amount)
    return {name: PodRequest(amount, biggest[name][1], biggest[name][2])
            for name, amount in total.items() if name in biggest and amount > 0}


_ZERO = Fraction(0)


def _plus(total: Fraction | None, amount: Fraction) -> Fraction:
    """``total + amount``, where None is nothing yet (0 + amount is amount: no Fraction arithmetic)."""
    return amount if total is None else total + amount


