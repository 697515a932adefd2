"""Placement: which pools a pod template can land on, and the words the rules say it with.

A pod asking for a GPU, a MIG profile or GPUs through a resource claim can land only on pools
whose nodes have it (:func:`offers`; a pool made with ``--gpu-instance-profile`` offers exactly
that MIG profile): :attr:`PodPlacement.serving` filters the pools before selectors and taints are
judged. **Admission**: a queued pod is placed with what each Kueue flavor it may get injects
(:mod:`linter.model.admission`).
"""

from __future__ import annotations

from functools import cached_property
from itertools import product
from typing import Any, Iterable

from msgspec import Struct, field

from mlops_lint.model.cluster.pools import Cluster, LabelView, NodePool, Origin, register_placer
from mlops_lint.model.memo import once
from mlops_lint.model.podrequests import PodRequest
from mlops_lint.model.position import Span
from mlops_lint.model.selectors import Placement, Taint, tolerated_by
from mlops_lint.model.tree import frozen


class PoolVerdict(Struct, frozen=True):
    pool: NodePool
    labels: str  # "yes" | "no" | "maybe"
    label_reason: str  # why "no"
    taints: str  # "ok" | "no" | "maybe"
    untolerated: tuple[Taint, ...] = ()
    offers: str = "yes"  # "yes" | "no" | "maybe": whether its nodes have the extended resources asked for

    @property
    def possible(self) -> bool:
        """Labels and taints allow the pod (what the pool offers is :attr:`PodPlacement.serving`'s)."""
        return self.labels != "no" and self.taints != "no"

    @property
    def elsewhere(self) -> bool:
        return self.pool.source == "elsewhere"

    def why_not(self) -> str:
        if self.labels == "no":
            return f"{self.pool.display}: {self.label_reason}"
        shown = ", ".join(str(t) for t in self.untolerated)
        word = "taint" if len(self.untolerated) == 1 else "taints"
        return f"{self.pool.display}: {word} {shown} not tolerated"


class PodPlacement(Struct, frozen=True, eq=False, dict=True):
    """Every pool's verdict for one placement. Shared by every pod with the same constraints
    (:meth:`Cluster.placement`), so what is derived from it alone is derived once: the filtered
    lists below, and what rules keep with :meth:`memo`. The lists returned are fresh copies."""

    verdicts: tuple[PoolVerdict, ...]
    _memo: dict = field(default_factory=dict)

    @cached_property
    def serving(self) -> tuple[PoolVerdict, ...]:
        """The pools the pod is judged on. A pod asking for extended resources (a GPU, a MIG
        profile, GPUs through a resource claim) lands only on pools whose nodes may have them
        (:func:`offers`): those, when its node selection reaches one of them. Otherwise (no pool
        offers them, or its selection reaches none that does) every pool, judged as written:
        that the pools it reaches lack what it asks is XPL003's and XPL005's finding."""
        found = tuple(v for v in self.verdicts if v.offers != "no")
        if found and any(v.labels != "no" for v in found):
            return found
        return self.verdicts

    @cached_property
    def _candidates(self) -> tuple[PoolVerdict, ...]:
        return tuple(v for v in self.serving if v.possible)

    @cached_property
    def _label_matches(self) -> tuple[PoolVerdict, ...]:
        return tuple(v for v in self.serving if v.labels != "no")

    @cached_property
    def selector_matches(self) -> tuple[PoolVerdict, ...]:
        """The pools the pod's node selection allows, whatever they offer."""
        return tuple(v for v in self.verdicts if v.labels != "no")

    @cached_property
    def _any_elsewhere(self) -> bool:
        return any(v.elsewhere for v in self._candidates)

    @property
    def candidates(self) -> list[PoolVerdict]:
        return list(self._candidates)

    @property
    def label_matches(self) -> list[PoolVerdict]:
        return list(self._label_matches)

    @property
    def repelled_everywhere(self) -> bool:
        """Some pool matches the pod's labels and every such pool repels it with a taint (XPL002's
        finding; GPU005 defers to it: one cause, the stronger finding)."""
        return bool(self._label_matches) and not self._candidates

    @property
    def known_candidates(self) -> list[PoolVerdict] | None:
        """The candidates, if all of them are pools of the project (None if a pool described
        nowhere may take the pod)."""
        return None if self._any_elsewhere else list(self._candidates)

    def memo(self, key: Any, build: Any) -> Any:
        """``build()``, computed once per placement (for what depends only on the placement and
        the run's options: the capacities of the candidate pools, say). ``key`` names the rule
        and every option the result depends on."""
        return once(self, key, build)


_ABSENT = object()
_OTHER = "\x00another value"
_MAX_COMBINATIONS = 512


def _assignments(placement: Placement, view: LabelView) -> tuple[dict[str, str], list[tuple[str, list[Any]]]] | None:
    keys = list(dict.fromkeys([*placement.node_selector,
                               *(req.key for term in placement.terms for req in term)]))
    fixed: dict[str, str] = {}
    free: list[tuple[str, list[Any]]] = []
    size = 1
    for key in keys:
        state, value = view.state(key)
        if state == "known":
            fixed[key] = value  # type: ignore[assignment]
        elif state == "unknown":
            mentioned = [placement.node_selector[key]] if key in placement.node_selector else []
            for term in placement.terms:
                for req in term:
                    if req.key != key:
                        continue
                    mentioned += req.values
                    if req.operator in ("Gt", "Lt") and len(req.values) == 1 and _is_int(req.values[0]):
                        step = 1 if req.operator == "Gt" else -1  # a value on the far side of the bound
                        mentioned.append(str(int(req.values[0]) + step))
            ruled_out = dict(view.excluded).get(key, ())
            choices = [_ABSENT, _OTHER, *(v for v in dict.fromkeys(mentioned) if v not in ruled_out)]
            free.append((key, choices))
            size *= len(choices)
            if size > _MAX_COMBINATIONS:
                return None
    return fixed, free


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def label_verdict(placement: Placement, view: LabelView) -> tuple[str, str]:
    """("yes" | "no" | "maybe", why not) for one pool's labels against a pod's placement."""
    if not placement.constrained:
        return "yes", ""
    found = _assignments(placement, view)
    if found is None:
        return "maybe", ""
    fixed, free = found
    outcomes = set()
    for combination in product(*(choices for _, choices in free)):
        labels = dict(fixed)
        for (key, _), value in zip(free, combination):
            if value is not _ABSENT:
                labels[key] = value
        outcomes.add(placement.matches(labels))
        if len(outcomes) == 2:
            return "maybe", ""
    if outcomes == {True}:
        return "yes", ""
    return "no", _label_reason(placement, view)


def _shown(view: LabelView, key: str) -> str:
    state, value = view.state(key)
    return f"the pool has {key}={value}" if state == "known" else f"the pool has no label {key}"


def _label_reason(placement: Placement, view: LabelView) -> str:
    for key, wanted in placement.node_selector.items():
        state, value = view.state(key)
        if state == "absent" or state == "known" and value != wanted:
            return f"nodeSelector {key}={wanted} does not match ({_shown(view, key)})"
    parts = []
    for term in placement.terms:
        for req in term:
            state, value = view.state(req.key)
            if state == "unknown":
                continue
            labels = {req.key: value} if state == "known" else {}
            if not req.matches(labels):  # type: ignore[arg-type]
                values = ", ".join(req.values)
                shown = f"{req.key} {req.operator} ({values})" if req.values else f"{req.key} {req.operator}"
                parts.append(f"{shown}: {_shown(view, req.key)}")
                break
    if len(parts) == 1:
        return f"required node affinity {parts[0]}"
    if parts:
        return "required node affinity matches no term (" + "; ".join(parts) + ")"
    return "required node affinity matches no term"


def taint_verdict(pool: NodePool, tolerations: list[Any]) -> tuple[str, tuple[Taint, ...]]:
    untolerated = tuple(t.taint for t in pool.effective_taints
                        if t.taint.repels and not tolerated_by(tolerations, t.taint))
    if untolerated:
        return "no", untolerated
    if not pool.taints_known:
        return "maybe", ()
    return "ok", ()


def _placement_signature(pod: Any, admissions: tuple) -> tuple:
    """Everything :func:`place` reads from a pod: node name, what it asks for that pools may not
    offer, and each admission's placement and tolerations."""
    return (frozen(pod.spec.get("nodeName")), _asked(pod),
            tuple((tuple(sorted(a.placement.node_selector.items())), a.placement.terms, a.placement.unknown_terms,
                   tuple(frozen(t) for t in a.tolerations)) for a in admissions))


def _asked(pod: Any) -> tuple[str, ...]:
    """The extended resources a pool must offer for the pod (GPUs, MIG profiles, DRA GPUs)."""
    from mlops_lint.model.dra import claimed_gpus
    from mlops_lint.model.k8s import gpu_resources

    names = set()
    for container in pod.containers:
        for entries in (container.requests, container.limits):
            names.update(name for name, res in gpu_resources(entries).items() if res.value is None or res.value > 0)
        if any(claimed.value is None or claimed.value > 0 for claimed in claimed_gpus(container)):
            names.add("dra:gpu")
    return tuple(sorted(names))


def offers(pool: NodePool, resource: str) -> str:
    """Whether one node of ``pool`` has ``resource``: "yes", "no" or "maybe" (unknown VM size,
    a resource the catalogue does not say). A pool AKS partitions with ``--gpu-instance-profile``
    offers exactly that MIG profile, with no MIG Manager label."""
    from mlops_lint.model.mig import aks_instance_profile, is_mig_resource, normalise_profile

    if pool.source == "elsewhere":
        return "maybe"
    vm = pool.vm
    if vm is None:
        return "maybe"
    if resource in ("nvidia.com/gpu", "amd.com/gpu", "dra:gpu", "nvidia.com/gpu.shared"):
        wanted = "amd.com/gpu" if resource == "amd.com/gpu" else "nvidia.com/gpu"
        if not vm.is_gpu or vm.gpu_resource != wanted:
            return "no"
        return "maybe" if isinstance(pool.gpu_instance_profile, str) and pool.gpu_instance_profile else "yes"
    if is_mig_resource(resource):
        if not vm.is_gpu or not vm.mig_capable:
            return "no"
        setting = pool.gpu_instance_profile
        if isinstance(setting, str) and setting:
            given = aks_instance_profile(vm.gpu_key or "", setting)
            if given is None:
                return "maybe"
            return "yes" if given.name == normalise_profile(resource) else "no"
        return "maybe"  # the GPU Operator's MIG Manager may partition it
    return "maybe"


def place(cluster: Cluster, pod: Any) -> PodPlacement | None:
    """Every pool's verdict for ``pod`` (a :class:`linter.model.k8s.PodSpec`); None when the
    cluster has no pools or the pod names its node (``nodeName`` bypasses the scheduler).
    A pod that admission may place several ways (Kueue flavors, ``linter.model.admission``) gets,
    per pool, its best verdict over them: a pool is a candidate when some admission lets the pod
    land there, so what the rules report holds for every admission."""
    if not cluster.has_pools or pod.spec.get("nodeName"):
        return None
    return _place(cluster, _admissions_of(cluster, pod), _asked(pod))


def _admissions_of(cluster: Cluster, pod: Any) -> tuple:
    from mlops_lint.model.admission import admissions, own

    return admissions(pod, *cluster.project) if cluster.project is not None else (own(pod),)


def _rank(verdict: PoolVerdict) -> int:
    return 0 if verdict.possible else 1 if verdict.labels != "no" else 2


def _place(cluster: Cluster, options: tuple, asked: tuple[str, ...]) -> PodPlacement:
    pools = list(cluster.pools)
    offered = []
    for pool in pools:
        answers = {offers(pool, name) for name in asked}
        offered.append("no" if "no" in answers else "maybe" if "maybe" in answers else "yes")
    best: list[PoolVerdict | None] = [None] * len(pools)
    other = cluster.elsewhere
    best_other: PoolVerdict | None = None
    for option in options:
        placement, tolerations = option.placement, list(option.tolerations)
        for position, pool in enumerate(pools):
            labels, reason = label_verdict(placement, pool.label_view())
            taints, untolerated = taint_verdict(pool, tolerations)
            verdict = PoolVerdict(pool, labels, reason, taints, untolerated, offered[position])
            if best[position] is None or _rank(verdict) < _rank(best[position]):
                best[position] = verdict
        if other is not None:
            labels, reason = label_verdict(placement, other.label_view())
            verdict = PoolVerdict(other, labels, reason, "maybe", (), "maybe")
            if best_other is None or _rank(verdict) < _rank(best_other):
                best_other = verdict
    verdicts = [v for v in best if v is not None]
    if best_other is not None:
        verdicts.append(best_other)
    return PodPlacement(tuple(verdicts))


def summarize(verdicts: Iterable[PoolVerdict], limit: int = 6) -> str:
    """``gpunp: taint sku=gpu:NoSchedule not tolerated; cpupool: nodeSelector …``."""
    items = [v.why_not() for v in verdicts]
    if len(items) > limit:
        items = items[:limit] + [f"and {len(items) - limit} more"]
    return "; ".join(items)


def describe_pool(pool: NodePool) -> str:
    """``gpunp (Standard_NC4as_T4_v3, 1 x NVIDIA Tesla T4)``."""
    vm = pool.vm
    if vm is None:
        return f"`{pool.display}` ({pool.describe_vm()})"
    if vm.is_gpu:
        count = f"{vm.gpus} x " if vm.gpus else ""
        return f"`{pool.display}` ({vm.name}, {count}{vm.gpu_model})"
    return f"`{pool.display}` ({vm.name})"


def changed_after_creation(origin: Origin | None, pool: NodePool) -> bool:
    """Whether ``origin`` is a later command than the one that created ``pool``."""
    return origin is not None and pool.origin is not None and origin.command is not pool.origin.command


def known_pools_summary(verdicts: Iterable[PoolVerdict], limit: int = 6) -> str:
    """:func:`summarize` over the project's own pools (the stand-in for the rest is left out)."""
    return summarize([v for v in verdicts if not v.elsewhere], limit)


def selector_anchor(pod: Any, verdicts: Iterable[PoolVerdict]) -> tuple[Span, tuple[str | int, ...]]:
    """Where a placement finding points: the nodeSelector entry no pool matches, else the required
    node affinity, else ``nodeSelector:``; with the node path."""
    spec = pod.spec
    selector = spec.get_map("nodeSelector")
    views = [v.pool.label_view() for v in verdicts]
    if selector is not None:
        for key, wanted in pod.placement.node_selector.items():
            states = [view.state(key) for view in views]
            if all(s == "absent" or s == "known" and value != wanted for s, value in states):
                return selector.key_span(key), pod.path + ("nodeSelector", key)
    affinity = spec.get_map("affinity")
    node_affinity = affinity.get_map("nodeAffinity") if affinity is not None else None
    if node_affinity is not None and "requiredDuringSchedulingIgnoredDuringExecution" in node_affinity.kspans:
        return (node_affinity.key_span("requiredDuringSchedulingIgnoredDuringExecution"),
                pod.path + ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
    if "nodeSelector" in spec.kspans:
        return spec.key_span("nodeSelector"), pod.path + ("nodeSelector",)
    return pod.span, pod.path


def workload_name(pod: Any) -> str:
    """``pod template of Job ml-training/train`` / ``Worker replicas of PyTorchJob ml-training/ddp``."""
    obj = pod.obj
    where = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
    return f"{pod.describe()} of {obj.kind} `{where}`"


def resource_anchor(request: PodRequest) -> tuple[Span, tuple[str | int, ...]]:
    """The value of the container entry that asks the most of a resource, with its node path."""
    container, entry = request.container, request.entry
    section = "requests" if entry.name in container.requests else "limits"
    return entry.value_span, container.path + ("resources", section, entry.name)



def taint_note(placement: PodPlacement) -> str:
    """``; ruled out by taints: gpunp: taint sku=gpu:NoSchedule not tolerated`` (or "")."""
    excluded = [v for v in placement.verdicts if v.labels != "no" and v.taints == "no" and not v.elsewhere]
    return f"; ruled out by taints: {summarize(excluded)}" if excluded else ""


def _memoised_place(cluster: Cluster, pod: Any) -> PodPlacement | None:
    """``place``, shared by every pod with the same constraints and admissions (see Cluster.placement)."""
    options = _admissions_of(cluster, pod)
    signature = _placement_signature(pod, options)
    found = cluster._by_signature.get(signature, _UNSET)
    if found is _UNSET:
        found = cluster._by_signature[signature] = _place(cluster, options, _asked(pod))
    return found


_UNSET = object()
register_placer(_memoised_place)
