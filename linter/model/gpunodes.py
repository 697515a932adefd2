"""GPU nodes: the taints that keep other pods off them and the labels that select them.

Used by the placement rules GPU004-GPU007. Matching itself is :mod:`linter.model.selectors`'
(``tolerates``, ``Placement``); this module only says *which* taints and labels mean "GPU node".

**GPU taints.** The configured ``gpu-taints`` (default ``sku=gpu:NoSchedule``, the AKS docs'
convention; AKS adds no GPU taint itself), plus the taints GPU nodes are known to carry
elsewhere: ``nvidia.com/gpu`` (NVIDIA GPU Operator and device-plugin docs, GKE's
``nvidia.com/gpu=present``), ``amd.com/gpu``, ``kubernetes.azure.com/accelerator`` and ``gpu``
with any value, ``sku=gpu``. A known key's value is not known, so a toleration of that key with
any value (or ``operator: Exists``) counts. A toleration without a key and ``operator: Exists``
tolerates every taint, GPU taints included.

**GPU node labels.** A placement (``nodeSelector`` plus required node affinity) reaches only GPU
nodes when the nodeSelector, or every required ``nodeSelectorTerm``, pins one of:

* a configured ``gpu-node-labels`` pair (default ``accelerator=nvidia``);
* a label only GPU nodes carry: ``kubernetes.azure.com/accelerator``, the bare ``accelerator``,
  ``sku=gpu`` (the AKS docs' GPU pools carry it as label and taint),
  any ``nvidia.com/…`` or ``amd.com/…`` label (GPU feature discovery, the GPU Operator, MIG
  Manager; ``nvidia.com/gpu.present`` and the ``…gpu.deploy.*`` labels only with ``true``),
  ``karpenter.azure.com/sku-gpu-*`` (node auto-provisioning; ``sku-gpu-count`` above 0),
  ``karpenter.azure.com/sku-family=N`` and GKE's ``cloud.google.com/gke-accelerator``;
* ``node.kubernetes.io/instance-type`` (or the legacy ``beta.kubernetes.io/instance-type``)
  ``In`` GPU VM sizes only (``linter.model.vmsizes``);

pinned means ``In`` with only such values, or ``Exists`` for keys whose every value is a GPU node.
Otherwise, when the project's cluster is known (``az aks`` scripts or ``node-pools:``,
``linter.model.cluster``), a placement whose label-matching pools are all GPU pools of the
project reaches GPU nodes too (``workload: training`` on a cluster where only the GPU pool
carries that label, or ``karpenter.sh/nodepool: gpu`` of a NodePool that allows only GPU sizes);
one that matches no pool at all is XPL001's finding and counts as placed.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from mlops_lint.model.selectors import Placement, Requirement, Taint, parse_taint, tolerates
from mlops_lint.model.memo import once
from mlops_lint.model.vmsizes import lookup

# key -> the value GPU nodes carry it with (None: any value); a toleration of the key counts
KNOWN_GPU_TAINTS: dict[str, str | None] = {
    "sku": "gpu",
    "nvidia.com/gpu": None,
    "amd.com/gpu": None,
    "kubernetes.azure.com/accelerator": None,
    "gpu": None,
}

# label keys whose presence alone means a GPU node (any value but "false")
_GPU_LABEL_KEYS = frozenset({
    "accelerator",
    "kubernetes.azure.com/accelerator",
    "karpenter.azure.com/sku-gpu-name",
    "karpenter.azure.com/sku-gpu-manufacturer",
    "cloud.google.com/gke-accelerator",
    "feature.node.kubernetes.io/pci-10de.present",  # node feature discovery: an NVIDIA PCI device
})
_GPU_LABEL_PREFIXES = ("nvidia.com/", "amd.com/")
_TRUE_ONLY = ("nvidia.com/gpu.present", "nvidia.com/gpu.deploy.", "feature.node.kubernetes.io/pci-10de.present")
_INSTANCE_TYPE = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def configured_gpu_taints(config: Any) -> list[Taint]:
    """The configured ``gpu-taints`` (default ``sku=gpu:NoSchedule``); an entry without an
    effect is taken as ``NoSchedule``. A fresh list each call."""
    return list(once(config, "_gpu_taints", lambda: tuple(_configured_gpu_taints(config.effective_gpu_taints))))


def _configured_gpu_taints(entries: Any) -> list[Taint]:
    taints = []
    for entry in entries:
        if isinstance(entry, Mapping) and not entry.get("effect"):
            entry = {**entry, "effect": "NoSchedule"}
        taint = parse_taint(entry)
        if taint is not None:
            taints.append(taint)
    return taints


def describe_taints(taints: Iterable[Taint]) -> str:
    return ", ".join(str(t) for t in taints)


def tolerates_gpu_taint(toleration: Mapping[str, Any], config: Any) -> Taint | None:
    """The GPU taint one toleration tolerates (configured first, then known ones), else None."""
    for taint in configured_gpu_taints(config):
        if tolerates(toleration, taint):
            return taint
    key = toleration.get("key")
    if not isinstance(key, str) or key not in KNOWN_GPU_TAINTS:
        return None
    value = KNOWN_GPU_TAINTS[key]
    if value is None:  # any value: the toleration's own, if it names one
        given = toleration.get("value")
        value = str(given) if given is not None and (toleration.get("operator") or "Equal") == "Equal" else ""
    for effect in ("NoSchedule", "NoExecute"):
        taint = Taint(key, value, effect)
        if tolerates(toleration, taint):
            return taint
    return None


def is_wildcard(toleration: Mapping[str, Any]) -> bool:
    """``operator: Exists`` without a key: tolerates every taint (of its effect, if it names one)."""
    return not toleration.get("key") and toleration.get("operator") == "Exists"


def gpu_toleration(tolerations: Iterable[tuple[int, Mapping[str, Any]]], config: Any) -> tuple[int, Taint] | None:
    """(index, taint) of the first toleration that tolerates a GPU taint, else None."""
    for index, toleration in tolerations:
        taint = tolerates_gpu_taint(toleration, config)
        if taint is not None:
            return index, taint
    return None


# ---------------------------------------------------------------------------------------------
# Placement on GPU nodes


def _gpu_value(key: str, value: str) -> bool:
    """Whether a node labelled ``key=value`` is a GPU node."""
    if key == "sku":
        return value == "gpu"  # the AKS docs' GPU pool convention, label and taint alike
    if key in _INSTANCE_TYPE:
        size = lookup(value)
        return size is not None and size.is_gpu
    if key == "karpenter.azure.com/sku-family":
        return value.upper() == "N"
    if key == "karpenter.azure.com/sku-gpu-count":
        return value.isdigit() and int(value) > 0
    if key.startswith(_TRUE_ONLY):
        return value.lower() == "true"
    if key in _GPU_LABEL_KEYS or key.startswith(_GPU_LABEL_PREFIXES):
        return value.lower() not in ("false", "none", "")
    return False


def _any_value_is_gpu(key: str) -> bool:
    """``Exists`` on the key reaches GPU nodes only (the true-only labels are never set false)."""
    return key in _GPU_LABEL_KEYS or key.startswith(_GPU_LABEL_PREFIXES)


def _pins_gpu(requirement: Requirement, configured: Mapping[str, str]) -> bool:
    key, op, values = requirement.key, requirement.operator, requirement.values
    if op == "In" and values:
        return all(configured.get(key) == v or _gpu_value(key, v) for v in values)
    if op == "Exists":
        return _any_value_is_gpu(key)
    if op == "Gt" and key == "karpenter.azure.com/sku-gpu-count" and len(values) == 1:
        return values[0].lstrip("-").isdigit() and int(values[0]) >= 0
    return False


def gpu_label_pins(placement: Placement, config: Any) -> str | None:
    """The label that pins a placement to GPU nodes (``accelerator=nvidia``), else None."""
    configured = config.effective_gpu_node_labels
    for key, value in placement.node_selector.items():
        if configured.get(key) == value or _gpu_value(key, value):
            return f"{key}={value}"
    if not placement.terms:
        return None
    found = None
    for term in placement.terms:
        pin = next((r for r in term if _pins_gpu(r, configured)), None)
        if pin is None:
            return None
        found = found or (f"{pin.key} {pin.operator} {list(pin.values)}" if pin.values else f"{pin.key} {pin.operator}")
    return found


def gpu_pools_only(pod: Any, index: Any, config: Any) -> list[Any] | None:
    """The project's pools a pod's labels can reach, when the cluster is known and all of them
    are GPU pools (an empty list: its labels reach no pool at all, XPL001's finding), else None."""
    from mlops_lint.model.cluster import cluster_of

    placement = cluster_of(index, config).placement(pod)
    if placement is None:
        return None
    matches = placement.selector_matches  # what the labels select, before what pools offer
    if any(v.elsewhere for v in matches):
        return None
    pools = [v.pool for v in matches]
    if all(pool.only_gpu_nodes for pool in pools):
        return pools
    return None


def places_on_gpu_nodes(pod: Any, index: Any, config: Any) -> bool:
    """Whether a pod template can only land on GPU nodes (see the module docs); a pod that names
    its node (``nodeName``) or whose affinity uses ``matchFields`` is taken to be placed. A queued
    pod is placed with what every Kueue flavor it may get injects (``linter.model.admission``); the
    nodeLabels of the flavor holding its GPUs keep it to the nodes whose GPUs that quota counts."""
    from mlops_lint.model.admission import admissions

    placement = pod.placement
    if pod.spec.get("nodeName") or placement.unknown_terms:
        return True
    if all(gpu_label_pins(a.placement, config) is not None or a.gpu_labels for a in admissions(pod, index, config)):
        return True
    return gpu_pools_only(pod, index, config) is not None


def tolerates_gpu_taints_at_admission(pod: Any, index: Any, config: Any) -> bool:
    """Whether the pod, as every admission may place it (its own tolerations plus those a Kueue
    flavor injects), tolerates a GPU taint."""
    from mlops_lint.model.admission import admissions

    return all(gpu_toleration(enumerate(a.tolerations), config) is not None for a in admissions(pod, index, config))


# ---------------------------------------------------------------------------------------------
# What a pod asks for


def gpu_entries(pod: Any) -> list[tuple[Any, str, Any]]:
    """(container, "requests" | "limits" | "claims", Resource) for every GPU resource of a pod
    template whose quantity is not zero (a templated or malformed quantity counts: it is meant as
    a GPU), then the GPUs containers take through resource claims (``linter.model.dra.ClaimedGpu``,
    section "claims"). Found once per pod view (views are read-only; several rules ask): a fresh
    list each call."""
    return list(once(pod, "_gpu_entries", lambda: tuple(_gpu_entries(pod))))


def _gpu_entries(pod: Any) -> list[tuple[Any, str, Any]]:
    from mlops_lint.model.dra import claimed_gpus
    from mlops_lint.model.k8s import gpu_resources

    found = []
    for container in pod.containers:
        for section, entries in (("requests", container.requests), ("limits", container.limits)):
            for resource in gpu_resources(entries).values():
                if resource.value is None or resource.value > 0:
                    found.append((container, section, resource))
    for container in pod.containers:
        for claimed in claimed_gpus(container):
            if claimed.value is None or claimed.value > 0:
                found.append((container, "claims", claimed))
    return found


def entry_node(container: Any, section: str, resource: Any) -> tuple:
    """The node path of one of :func:`gpu_entries`' entries."""
    if section == "claims":
        return resource.node
    return container.path + ("resources", section, resource.name)


def requests_gpu(pod: Any) -> bool:
    return bool(gpu_entries(pod))


_CDI_ANNOTATIONS = ("cdi.k8s.io/", "nvidia.cdi.k8s.io/")


def sees_gpus_directly(pod: Any) -> bool:
    """Whether a pod takes GPUs past the scheduler, as the NVIDIA node tools do: a container sets
    ``NVIDIA_VISIBLE_DEVICES`` (to anything but ``void``/``none``) or the pod asks for CDI devices
    by annotation (the GPU Operator's validators, DCGM diagnostics)."""
    meta = pod.metadata
    annotations = meta.get("annotations") if meta is not None else None
    if isinstance(annotations, dict) and any(str(k).startswith(_CDI_ANNOTATIONS) for k in annotations):
        return True
    for container in pod.containers:
        var = container.env_value("NVIDIA_VISIBLE_DEVICES")
        if var is not None and (var.from_ref or str(var.value).strip().lower() not in ("", "void", "none")):
            return True
    return False


def pins_value(placement: Placement, key: str, value: str) -> bool:
    """Whether every node a placement allows has ``key=value``: the nodeSelector says so, or every
    required term holds ``key In [value]`` (only that value). Stricter than
    ``Placement.selects(key, value)``, which also accepts ``In [value, other]``."""
    if placement.node_selector.get(key) == value:
        return True
    if not placement.terms:
        return False
    return all(
        any(r.key == key and r.operator == "In" and r.values and set(r.values) == {value} for r in term)
        for term in placement.terms
    )


_STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage", "storage")


def has_placeholder_resource(pod: Any) -> bool:
    """Whether a container names a resource that is no resource name yet (``FILLED_BY_VALIDATOR``,
    ``{{ .Values.gpuResource }}``): it may be the GPU, so GPU-ness is unknown."""
    from mlops_lint.model.k8s import is_templated

    for container in pod.containers:
        for entries in (container.requests, container.limits):
            for name in entries:
                if is_templated(name) or ("/" not in name and name not in _STANDARD_RESOURCES
                                          and not name.startswith("hugepages-")):
                    return True
    return False
