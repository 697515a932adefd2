"""What AKS Automatic's Deployment Safeguards do to a workload (enforced there: facts, section E).

The resource mutator fills a cpu or memory request and limit that are both missing with 500m /
2Gi (2048Mi), the limit equal to the request, and raises requests below 100m / 100Mi. RES001 and
RES002 say so in the ``aks-automatic`` profile, where the pod is admitted that way.
"""

from __future__ import annotations

from typing import Any


SAFEGUARD_DEFAULTS = {"cpu": "500m", "memory": "2Gi"}


def safeguards(container: Any, filled: list[str]) -> str:
    """What AKS Automatic's Deployment Safeguards do to the resources in ``filled`` (those with
    neither a request nor a limit): set both to 500m / 2Gi. Shared with RES002."""
    if not filled:
        return ""
    values = " and ".join(f"{name} {SAFEGUARD_DEFAULTS[name]}" for name in filled)
    text = (f": on AKS Automatic, Deployment Safeguards set the request to {values} with the limit equal to "
            "the request")
    if "memory" in filled:
        workload = container.pod.workload
        training = workload is not None and workload.is_training
        text += (", a 2Gi memory ceiling that OOMKills a " + ("trainer" if training else "container")
                 + " holding a model, batches and data-loader workers")
    return text
