"""Node auto-provisioning pools: the ``karpenter.sh/v1`` NodePools of the project.

AKS node auto-provisioning (NAP, and AKS Automatic) runs Karpenter with the Azure provider: each
``NodePool`` (with the ``AKSNodeClass`` its ``spec.template.spec.nodeClassRef`` names) is a node
pool of the cluster model (:mod:`linter.model.cluster`), whose nodes carry

* the labels its ``spec.template.metadata.labels`` set;
* the labels Karpenter puts on every node it makes: ``karpenter.sh/nodepool`` (the NodePool's
  name), ``node.kubernetes.io/instance-type`` and ``karpenter.azure.com/sku-name`` (the VM
  size), ``karpenter.azure.com/sku-family``, ``sku-cpu``, ``sku-gpu-count`` and
  ``sku-gpu-manufacturer`` (what the size is), ``kubernetes.io/os=linux``; a requirement that
  allows one value of a key (``In`` with one value) is that key's label too;
* its ``spec.template.spec.taints`` (``startupTaints`` are removed once a node is ready and do
  not keep pods off);

and has the VM sizes its ``spec.template.spec.requirements`` allow. The sizes are read from the
VM catalogue (:mod:`linter.model.vmsizes`): named sizes (``node.kubernetes.io/instance-type`` or
``karpenter.azure.com/sku-name`` ``In``), else, when the requirements only allow GPU sizes
(``sku-family In [N…]``, ``sku-gpu-count Gt 0``, ``sku-gpu-manufacturer In [nvidia]``), the
catalogue's GPU sizes they allow. Each allowed size is one pool of the model (named
``<nodepool>/<size>``), so what a pod needs of a node is judged per size, as Karpenter picks one;
a NodePool whose sizes cannot be listed is one pool of unknown size (it may fit anything).
"""

from __future__ import annotations

from typing import Any, Iterable

from mlops_lint.model.unknown import UNKNOWN
from mlops_lint.model.selectors import Requirement, label_value, labels_of, parse_taint
from mlops_lint.model.tree import YMap
from mlops_lint.model.vmsizes import VmSize, gpu_sizes, lookup

KARPENTER = "karpenter.sh"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
_SIZE_KEYS = ("node.kubernetes.io/instance-type", "karpenter.azure.com/sku-name")
_MAX_SIZES = 64  # more named sizes than this: one pool of unknown size


def _family(vm: VmSize) -> str:
    name = vm.name[len("Standard_"):] if vm.name.startswith("Standard_") else vm.name
    return name[:1].upper()


def _size_labels(vm: VmSize) -> dict[str, str]:
    labels = {
        "node.kubernetes.io/instance-type": vm.name,
        "karpenter.azure.com/sku-name": vm.name,
        "karpenter.azure.com/sku-family": _family(vm),
        "karpenter.azure.com/sku-gpu-count": str(vm.gpus or 0) if vm.gpus is not None or not vm.is_gpu else "",
    }
    if vm.vcpus is not None:
        labels["karpenter.azure.com/sku-cpu"] = str(vm.vcpus)
    if vm.is_gpu and vm.gpu_resource:
        labels["karpenter.azure.com/sku-gpu-manufacturer"] = vm.gpu_resource.split(".")[0]
    return {k: v for k, v in labels.items() if v != ""}


def _requirements(items: Any) -> list[Requirement]:
    found = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("key"):
            values = item.get("values")
            found.append(Requirement(label_value(item.get("key")), str(item.get("operator") or ""),
                                     tuple(label_value(v) for v in values) if isinstance(values, list) else ()))
    return found


def _allows(requirements: list[Requirement], vm: VmSize) -> bool:
    """Whether every requirement on a key the size determines holds for it."""
    labels = _size_labels(vm)
    return all(req.matches(labels) for req in requirements if req.key in labels)


def allowed_sizes(requirements: list[Requirement]) -> list[VmSize] | None:
    """The VM sizes the requirements allow, when they can be listed (None: any size may be used)."""
    for req in requirements:
        if req.key in _SIZE_KEYS and req.operator == "In" and req.values:
            sizes = [lookup(v) for v in dict.fromkeys(req.values)]
            if None in sizes or len(sizes) > _MAX_SIZES:
                return None
            return [vm for vm in sizes if vm is not None and _allows(requirements, vm)]
    if not requires_gpu(requirements):
        return None
    sizes = [vm for vm in gpu_sizes() if not vm.retired and _allows(requirements, vm)]
    return sizes if len(sizes) <= _MAX_SIZES else None


def requires_gpu(requirements: list[Requirement]) -> bool:
    """Whether the requirements allow only GPU sizes (``sku-family In [N]``, ``sku-gpu-count Gt 0``,
    a GPU manufacturer or GPU name), whether or not the sizes can be listed."""
    return any(
        (r.key == "karpenter.azure.com/sku-family" and r.operator == "In" and r.values
         and all(v.upper() == "N" for v in r.values))
        or (r.key == "karpenter.azure.com/sku-gpu-count" and r.operator == "Gt" and r.values == ("0",))
        or (r.key == "karpenter.azure.com/sku-gpu-manufacturer" and r.operator == "In" and r.values)
        or (r.key in ("karpenter.azure.com/sku-gpu-name", "karpenter.azure.com/sku-gpu-count") and r.operator == "Exists")
        for r in requirements)


def nodepool_pools(objects: Iterable[Any], node_pool_class: Any, pool_taint_class: Any) -> list[Any]:
    """The cluster model's pools for the project's NodePools (``karpenter.sh``), in project order."""
    pools = []
    for obj in objects:
        if obj.group != KARPENTER:
            continue
        spec = obj.body.get_map("spec")
        template = spec.get_map("template") if spec is not None else None
        node_spec = template.get_map("spec") if template is not None else None
        metadata = template.get_map("metadata") if template is not None else None
        labels = labels_of(metadata.get("labels")) if metadata is not None else {}
        requirements = _requirements(node_spec.get("requirements") if node_spec is not None else None)
        taints = []
        raw = node_spec.get("taints") if node_spec is not None else None
        for item in raw if isinstance(raw, list) else ():
            taint = parse_taint(item) if isinstance(item, YMap) else None
            if taint is not None:
                taints.append(pool_taint_class(taint, None))
        base = {**labels, NODEPOOL_LABEL: obj.name, "kubernetes.io/os": "linux"}
        for req in requirements:
            if req.operator == "In" and len(req.values) == 1 and req.key not in base:
                base[req.key] = req.values[0]
        sizes = allowed_sizes(requirements)
        for vm in sizes if sizes is not None else [None]:
            pool_labels = dict(base)
            if vm is not None:
                pool_labels.update(_size_labels(vm))
            display = f"{obj.name}/{vm.name}" if vm is not None and len(sizes or ()) > 1 else obj.name
            pools.append(node_pool_class(
                name=obj.name, display=display, cluster=None, source="nodepool", path=obj.path,
                vm_size=vm.name if vm is not None else UNKNOWN, labels=pool_labels, taints=list(taints),
                autoscaler=True, node_count=None, labels_open=False, nodepool=obj,
                template_label_keys=frozenset(labels), requirements=tuple(requirements),
                gpu_only=requires_gpu(requirements),
            ))
    return pools


def is_aks_nodepool(obj: Any) -> bool:
    """A NodePool AKS's provider can serve: its ``nodeClassRef`` names an ``AKSNodeClass`` (or
    the group ``karpenter.azure.com``), or names none; another provider's (``EC2NodeClass``) is not."""
    spec = obj.body.get_map("spec")
    template = spec.get_map("template") if spec is not None else None
    node_spec = template.get_map("spec") if template is not None else None
    ref = node_spec.get("nodeClassRef") if node_spec is not None else None
    if not isinstance(ref, dict):
        return True
    kind, group = ref.get("kind"), ref.get("group")
    return (kind in (None, "AKSNodeClass") or not isinstance(kind, str)) and (
        group in (None, "karpenter.azure.com") or not isinstance(group, str))


def excludes_gpu(requirements: Iterable[Requirement]) -> bool:
    """The requirements allow no GPU size: ``sku-family`` ``In`` families none of which is ``N``,
    ``sku-gpu-count`` ``In [0]`` or ``DoesNotExist``, or ``sku-gpu-manufacturer``/``sku-gpu-name``
    ``DoesNotExist`` (a NodePool whose sizes are not listed may otherwise be a GPU one)."""
    for req in requirements:
        if req.key == "karpenter.azure.com/sku-family" and req.operator == "In" and req.values \
                and not any(v.upper() == "N" for v in req.values):
            return True
        if req.key == "karpenter.azure.com/sku-gpu-count" and (
                req.operator == "DoesNotExist" or req.operator == "In" and req.values and set(req.values) == {"0"}):
            return True
        if req.key in ("karpenter.azure.com/sku-gpu-manufacturer", "karpenter.azure.com/sku-gpu-name") \
                and req.operator == "DoesNotExist":
            return True
    return False


def node_spec(obj: Any) -> Any:
    """A NodePool's ``spec.template.spec`` (None when absent)."""
    spec = obj.body.get_map("spec")
    template = spec.get_map("template") if spec is not None else None
    return template.get_map("spec") if template is not None else None


def termination_grace(obj: Any) -> tuple[int, Any] | None:
    """A NodePool's ``spec.template.spec.terminationGracePeriod`` in whole seconds (rounded
    down) with the value's span; None when unset or not a Go duration (Karpenter then waits for
    the pods' own grace)."""
    from mlops_lint.model.cluster.autoscaler import parse_duration

    spec = node_spec(obj)
    value = spec.get("terminationGracePeriod") if spec is not None else None
    if not isinstance(value, str):
        return None
    seconds = parse_duration(value)
    if seconds is None:
        return None
    return int(seconds), spec.value_span("terminationGracePeriod")


def consolidates_underutilized(obj: Any) -> bool:
    """Karpenter may consolidate a node of this NodePool (AKS's default one: None) while it still
    runs pods: ``disruption.consolidationPolicy`` is ``WhenEmptyOrUnderutilized`` (the default;
    AKS's default NodePool sets it) and no disruption budget of ``nodes: "0"`` without a schedule
    stops it for every reason or for ``Underutilized``. A value that is not a known policy
    (templated) is not judged."""
    if obj is None:
        return True
    spec = obj.body.get_map("spec")
    disruption = spec.get_map("disruption") if spec is not None else None
    if disruption is None:
        return spec is not None and spec.get("disruption") is None
    policy = disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized")
    if policy not in ("WhenEmptyOrUnderutilized", "WhenUnderutilized"):  # v1beta1's name
        return False
    budgets = disruption.get("budgets")
    for budget in budgets if isinstance(budgets, list) else ():
        if not isinstance(budget, dict) or budget.get("schedule") is not None:
            continue
        nodes = str(budget.get("nodes", "")).strip()
        reasons = budget.get("reasons")
        if nodes in ("0", "0%") and (not isinstance(reasons, list) or "Underutilized" in reasons):
            return False
    return True


# the resources a NodePool's ``spec.limits`` caps that a VM size's capacity says (Karpenter leaves
# out every instance type whose capacity exceeds what the limits leave, so with no node yet: the
# limits themselves)
LIMITED = ("cpu", "memory", "nvidia.com/gpu", "amd.com/gpu")


def nodepool_limits(obj: Any) -> dict[str, tuple[Any, Any]]:
    """A NodePool's ``spec.limits`` of :data:`LIMITED` resources: name -> (amount, raw value); a
    value that is not a quantity (templated) is left out."""
    from mlops_lint.model.quantity import parse_quantity

    spec = obj.body.get_map("spec") if obj is not None else None
    limits = spec.get_map("limits") if spec is not None else None
    found = {}
    for name in LIMITED:
        raw = limits.get(name) if limits is not None else None
        amount = parse_quantity(raw)
        if amount is not None:
            found[name] = (amount, raw)
    return found


def _capacity(vm: VmSize | None, name: str) -> Any:
    if vm is None:
        return None
    if name == "cpu":
        return vm.vcpus
    if name == "memory":
        return vm.memory_bytes
    return vm.gpus if vm.gpu_resource == name and vm.gpus else None


def over_limits(obj: Any, vm_size: Any, requests: dict) -> str | None:
    """Why a NodePool's ``spec.limits`` stop Karpenter from making a node of ``vm_size`` (a name,
    or UNKNOWN) for a pod with ``requests`` (:func:`linter.model.podrequests.pod_requests`): a
    limit below the pod's request (no node that fits the pod fits the limit), else below one
    node's capacity of the size; None when they do not."""
    from mlops_lint.model.quantity import format_bytes, format_quantity

    limits = nodepool_limits(obj)
    if not limits:
        return None
    vm = lookup(vm_size) if isinstance(vm_size, str) else None
    for name, (limit, raw) in limits.items():
        asked = requests.get(name)
        if asked is not None and asked.amount > limit:
            shown = (format_bytes(int(asked.amount)) if name == "memory" and asked.amount.denominator == 1
                     else format_quantity(asked.amount))
            return f"its `limits` cap `{name}` at `{raw}`, below the pod's request of {shown}"
    for name, (limit, raw) in limits.items():
        capacity = _capacity(vm, name)
        if capacity is not None and capacity > limit:
            what = format_bytes(capacity) if name == "memory" else str(capacity)
            return f"its `limits` cap `{name}` at `{raw}`, below one {vm.name} node's {what}"
    return None
