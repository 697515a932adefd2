"""Kueue's model: which workloads it queues, and what a ClusterQueue can ever admit.

Read from the Kueue API (``kueue.x-k8s.io`` v1beta1 and v1beta2, whose CRDs name the fields
used here) and from Kueue's own admission code, so a verdict here is Kueue's:

- **Queue names.** A workload is queued when its ``metadata.labels`` (or, the older form,
  ``metadata.annotations``) carry ``kueue.x-k8s.io/queue-name``; a CronJob's Jobs get the
  label from ``spec.jobTemplate.metadata``. The name refers to a LocalQueue of the workload's
  own namespace; the LocalQueue's ``spec.clusterQueue`` names a (cluster-scoped) ClusterQueue.
- **Suspension.** Kueue starts a job by un-suspending it: ``spec.suspend`` (batch Job, JobSet,
  RayJob, RayCluster, TrainJob, AppWrapper; ``spec.jobTemplate.spec.suspend`` of a CronJob),
  ``spec.runPolicy.suspend`` (Kubeflow jobs). Pods, Deployments, StatefulSets and
  LeaderWorkerSets have no such field: Kueue holds their pods with a scheduling gate.
- **Quotas.** ``spec.resourceGroups[]``: each group lists ``coveredResources`` and ``flavors``;
  each flavor gives every covered resource a ``nominalQuota`` and optional ``borrowingLimit`` and
  ``lendingLimit``. A ClusterQueue joins a cohort through ``spec.cohort`` (v1beta1) or
  ``spec.cohortName`` (v1beta2); a Cohort object adds its own quota and may name a
  ``spec.parentName``.
- **What can ever be admitted** (:class:`QuotaTree`) is Kueue's ``potentialAvailable``
  (``pkg/cache/resource_node.go``): a node's subtree quota is its own nominal quota plus what its
  children lend (their subtree quota minus the part ``lendingLimit`` keeps for them); a ClusterQueue
  can reach its guaranteed part plus what its parent could ever give it, capped at its own quota
  plus ``borrowingLimit``. Hierarchical cohorts are followed exactly as Kueue does; a cohort named
  by no Cohort object is a root without quota or limits; a cycle disables the whole tree.
- **Pod sets** (:func:`podsets`): the pods Kueue admits together, per template, with the count
  Kueue gives them (a Job: ``parallelism`` capped by ``completions``, or the
  ``kueue.x-k8s.io/job-min-parallelism`` of partial admission; a Kubeflow replica type: its
  ``replicas``; a JobSet replicated job: ``replicas`` x its Job's pods …) and the per-pod request
  of Kubernetes' ``PodRequests`` (limits stand in for missing requests; app containers and native
  sidecars add up, an init container runs beside the sidecars started before it, the pod needs
  the larger). LimitRange defaults and RuntimeClass overhead, which Kueue adds too, are not known
  here: leaving them out only makes a request smaller, never a verdict wrong.
- **Flavor assignment** (:func:`admission_problems`): Kueue gives each pod set one flavor per
  resource group, tried in order; a flavor qualifies when the pod set tolerates its ``NoSchedule``/
  ``NoExecute`` ``nodeTaints`` (with the flavor's own ``tolerations``) and its nodeSelector and
  required node affinity, restricted to the label keys the group's flavors use, match the
  flavor's ``nodeLabels`` (``flavorSelector``). A requested resource no group covers is
  "unavailable in ClusterQueue". Only what Kueue can *never* admit is reported: a pod set no
  qualifying flavor can hold even with everything borrowed, or a workload whose pod sets together
  need more than all the group's flavors could ever give.

  A ClusterQueue that covers resources pods never request by that name (``cpu_credits``) is
  taken to use Kueue's resource transformations, so requested extended resources it does not
  cover are not judged there.
- **Several definitions** of one LocalQueue or ClusterQueue (samples, overlays): the ones nearest
  the workload (its file, else its folder, else all) are used, and a verdict must hold for each.
- **Priorities**: PriorityClasses (``value``, ``preemptionPolicy`` defaulting to
  ``PreemptLowerPriority``, ``globalDefault``, the built-in ``system-*`` classes), the places a
  workload names a class (pod templates, a Volcano Job's or PodGroup's ``priorityClassName``, a
  Kubeflow ``schedulingPolicy.priorityClass``, Kueue's ``kueue.x-k8s.io/priority-class`` label for
  a WorkloadPriorityClass), and the priority a pod ends up with.

The small public API other models use: :func:`cluster_queue_quota` (``{(flavor, resource): nominal
quota}``), :func:`flavor_node_labels`, :func:`flavor_node_taints`, :func:`cohort_of`,
:func:`resource_groups`, :func:`quota_tree` (``potential_available(cq, (flavor, resource))``: the most
a ClusterQueue can ever hold, borrowing included), :func:`cluster_queues_of` and :func:`podsets`.
"""

from __future__ import annotations

import itertools
import posixpath
import weakref
from fractions import Fraction
from typing import Any, Iterable, Iterator, Mapping

from msgspec import Struct

from mlops_lint.model.document import K8sObject
from mlops_lint.model.k8s import PodSpec, Workload, is_gpu_resource
from mlops_lint.model.position import Span
from mlops_lint.model.quantity import parse_quantity
from mlops_lint.model.selectors import Placement, Requirement, Taint, label_value, labels_of, parse_taint, tolerated_by
from mlops_lint.model.tree import YMap

KUEUE_GROUP = "kueue.x-k8s.io"
QUEUE_NAME_KEY = "kueue.x-k8s.io/queue-name"  # a label; the deprecated annotation has the same key
WORKLOAD_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"

Path = tuple[str | int, ...]
FlavorResource = tuple[str, str]
INFINITE = float("inf")  # a quota Kueue would accept but that is not known here (templated, unparsable)


def is_kueue(obj: K8sObject, *kinds: str) -> bool:
    return obj.group == KUEUE_GROUP and (not kinds or obj.kind in kinds)


def kueue_objects(index: Any, kind: str) -> list[K8sObject]:
    return index.memo(("kueue", kind), lambda: [obj for obj in index.of_kind(kind) if obj.group == KUEUE_GROUP])


def kueue_names(index: Any, kind: str) -> tuple[str, ...]:
    """The names of the project's Kueue objects of ``kind``, sorted (for suggestions)."""
    return index.memo(("kueue-names", kind), lambda: tuple(sorted({obj.name for obj in kueue_objects(index, kind)})))


def kueue_name_set(index: Any, kind: str) -> frozenset[str]:
    return index.memo(("kueue-name-set", kind), lambda: frozenset(kueue_names(index, kind)))


def priority_class_names(index: Any) -> frozenset[str]:
    return index.memo("priority-class-names", lambda: frozenset(pc.name for pc in priority_classes(index)))


def named_kueue_objects(index: Any, kind: str, name: str) -> list[K8sObject]:
    return [obj for obj in index.named(kind, name) if obj.group == KUEUE_GROUP]


def has_kueue_kind(index: Any, kind: str) -> bool:
    """Whether the project holds an object of Kueue's ``kind`` (a reference rule's condition)."""
    return index.has_kind(kind) and bool(kueue_objects(index, kind))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# ---------------------------------------------------------------------------------------------
# Which objects Kueue queues, and how it holds them back


# (group, kind) -> path of the boolean Kueue flips to start the job (None: Kueue gates the pods)
SUSPEND_FIELDS: dict[tuple[str, str], Path | None] = {
    ("batch", "Job"): ("spec", "suspend"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "suspend"),
    ("jobset.x-k8s.io", "JobSet"): ("spec", "suspend"),
    ("ray.io", "RayJob"): ("spec", "suspend"),
    ("ray.io", "RayCluster"): ("spec", "suspend"),
    ("trainer.kubeflow.org", "TrainJob"): ("spec", "suspend"),
    ("workload.codeflare.dev", "AppWrapper"): ("spec", "suspend"),
    **{("kubeflow.org", kind): ("spec", "runPolicy", "suspend")
       for kind in ("PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob")},
    ("", "Pod"): None,
    ("apps", "Deployment"): None,
    ("apps", "StatefulSet"): None,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): None,
}


def is_kueue_managed_kind(obj: K8sObject) -> bool:
    """A kind Kueue has an integration for (batch Job and CronJob, JobSet, Kubeflow jobs, Ray,
    TrainJob, AppWrapper, plain Pods, Deployments, StatefulSets, LeaderWorkerSets)."""
    return (obj.group, obj.kind) in SUSPEND_FIELDS


class QueueRef(Struct, frozen=True):
    """A workload's ``kueue.x-k8s.io/queue-name``: the LocalQueue it is submitted to."""

    name: str
    span: Span  # the value
    node: Path  # where it sits in the object
    source: str  # "label" | "annotation"

    @property
    def where(self) -> str:
        return f"{self.source} `{QUEUE_NAME_KEY}`"


def _queue_metadata(obj: K8sObject) -> tuple[YMap | None, Path]:
    if obj.kind == "CronJob" and obj.group == "batch":
        spec = obj.body.get_map("spec")
        job = spec.get_map("jobTemplate") if spec is not None else None
        return (job.get_map("metadata") if job is not None else None), ("spec", "jobTemplate", "metadata")
    return obj.body.get_map("metadata"), ("metadata",)


def queue_ref(obj: K8sObject) -> QueueRef | None:
    """The queue a Kueue-managed object is submitted to (the label wins over the annotation, as
    in Kueue's ``QueueName``); None when it names none or Kueue does not manage its kind."""
    if not is_kueue_managed_kind(obj):
        return None
    meta, base = _queue_metadata(obj)
    if meta is None:
        return None
    for section, source in (("labels", "label"), ("annotations", "annotation")):
        items = meta.get_map(section)
        if items is None:
            continue
        value = items.get(QUEUE_NAME_KEY)
        if value is not None and label_value(value):
            return QueueRef(label_value(value), items.value_span(QUEUE_NAME_KEY), base + (section, QUEUE_NAME_KEY), source)
    return None


class SuspendField(Struct, frozen=True):
    """Where a queued object's suspend flag is (or would go) and what it says."""

    path: Path  # of the flag
    value: Any  # as written; None when absent
    present: bool
    span: Span  # the value when present, else the nearest existing parent key

    @property
    def dotted(self) -> str:
        return ".".join(map(str, self.path))

    @property
    def suspended(self) -> bool:
        return self.value is True


def suspend_field(obj: K8sObject) -> SuspendField | None:
    """The object's suspend flag, or None when its kind has none (Pods, Deployments …)."""
    path = SUSPEND_FIELDS.get((obj.group, obj.kind))
    if path is None:
        return None
    node: Any = obj.body
    span = obj.span
    for depth, step in enumerate(path):
        if not isinstance(node, YMap):
            return SuspendField(path, None, False, span)
        if step not in node:
            return SuspendField(path, None, False, span)
        if depth == len(path) - 1:
            return SuspendField(path, node.get(step), True, node.value_span(str(step)))
        span = node.key_span(str(step))
        node = node.get(step)
    return SuspendField(path, None, False, span)  # pragma: no cover - the loop always returns


# ---------------------------------------------------------------------------------------------
# ClusterQueues, Cohorts and ResourceFlavors


class Quota(Struct, frozen=True):
    nominal: Fraction | float  # INFINITE when not a known quantity
    borrowing_limit: Fraction | float | None = None
    lending_limit: Fraction | float | None = None


class FlavorRef(Struct, frozen=True):
    """A ``resourceGroups[g].flavors[f].name`` of a ClusterQueue or Cohort."""

    name: str
    span: Span
    node: Path


class ResourceGroup(Struct, frozen=True):
    index: int
    covered: tuple[str, ...]
    flavors: tuple[FlavorRef, ...]
    span: Span  # the group's ``coveredResources:`` key, else the group item
    node: Path

    @property
    def flavor_names(self) -> tuple[str, ...]:
        return tuple(ref.name for ref in self.flavors)


def _quantity(value: Any) -> Fraction | float | None:
    if value is None:
        return None
    parsed = parse_quantity(value)
    return parsed if parsed is not None else INFINITE


def resource_groups(obj: K8sObject) -> list[ResourceGroup]:
    """``spec.resourceGroups`` of a ClusterQueue or Cohort."""
    spec = obj.body.get_map("spec")
    groups = spec.get_seq("resourceGroups") if spec is not None else None
    result: list[ResourceGroup] = []
    for gi, group in groups.maps() if groups is not None else ():
        covered = group.get("coveredResources")
        names = tuple(str(r) for r in covered) if isinstance(covered, list) else ()
        flavors = group.get_seq("flavors")
        refs = []
        for fi, flavor in flavors.maps() if flavors is not None else ():
            name = _str(flavor.get("name"))
            if name is not None:
                refs.append(FlavorRef(name, flavor.value_span("name"), ("spec", "resourceGroups", gi, "flavors", fi, "name")))
        result.append(ResourceGroup(gi, names, tuple(refs), group.kspans.get("coveredResources", groups.item_span(gi)),
                                    ("spec", "resourceGroups", gi)))
    return result


def flavor_refs(obj: K8sObject) -> Iterator[FlavorRef]:
    for group in resource_groups(obj):
        yield from group.flavors


def quotas(obj: K8sObject) -> dict[FlavorResource, Quota]:
    """Every (flavor, resource) quota a ClusterQueue or Cohort declares."""
    spec = obj.body.get_map("spec")
    groups = spec.get_seq("resourceGroups") if spec is not None else None
    result: dict[FlavorResource, Quota] = {}
    for _, group in groups.maps() if groups is not None else ():
        flavors = group.get_seq("flavors")
        for _, flavor in flavors.maps() if flavors is not None else ():
            name = _str(flavor.get("name"))
            resources = flavor.get_seq("resources")
            if name is None or resources is None:
                continue
            for _, resource in resources.maps():
                resource_name = _str(resource.get("name"))
                if resource_name is None:
                    continue
                nominal = _quantity(resource.get("nominalQuota"))
                result[(name, resource_name)] = Quota(
                    nominal if nominal is not None else Fraction(0),
                    _quantity(resource.get("borrowingLimit")),
                    _quantity(resource.get("lendingLimit")),
                )
    return result


def cluster_queue_quota(cq: K8sObject) -> dict[FlavorResource, Fraction | float]:
    """``{(flavor, resource): nominalQuota}`` of a ClusterQueue (or Cohort); a quota that is not
    a literal quantity (a template placeholder) is ``INFINITE``."""
    return {fr: quota.nominal for fr, quota in quotas(cq).items()}


def cohort_of(cq: K8sObject) -> str | None:
    """The cohort a ClusterQueue belongs to: ``spec.cohort`` (v1beta1) or ``spec.cohortName``
    (v1beta2)."""
    spec = cq.body.get_map("spec")
    if spec is None:
        return None
    return _str(spec.get("cohortName")) or _str(spec.get("cohort"))


def cohort_parent(cohort: K8sObject) -> str | None:
    spec = cohort.body.get_map("spec")
    return _str(spec.get("parentName")) if spec is not None else None


def _flavor_spec(flavor: K8sObject) -> YMap:
    return flavor.body.get_map("spec") or YMap(flavor.body.span)


def flavor_node_labels(flavor: K8sObject) -> dict[str, str]:
    """A ResourceFlavor's ``spec.nodeLabels`` (the nodes it stands for; empty: every node)."""
    return labels_of(_flavor_spec(flavor).get("nodeLabels"))


def flavor_node_taints(flavor: K8sObject) -> list[Taint]:
    """A ResourceFlavor's ``spec.nodeTaints`` (well-formed ones)."""
    items = _flavor_spec(flavor).get("nodeTaints")
    result = []
    for item in items if isinstance(items, list) else ():
        taint = parse_taint(item) if isinstance(item, Mapping) else None
        if taint is not None:
            result.append(taint)
    return result


def flavor_tolerations(flavor: K8sObject) -> list[Mapping[str, Any]]:
    items = _flavor_spec(flavor).get("tolerations")
    return [t for t in items if isinstance(t, Mapping)] if isinstance(items, list) else []


# ---------------------------------------------------------------------------------------------
# Lookups (several definitions of one name: the one in the referring file first)


def _prefer_near(found: list[K8sObject], near: K8sObject | None) -> list[K8sObject]:
    """``found`` with the definitions closest to ``near`` first (its own file, then its folder)."""
    if near is None or len(found) < 2:
        return found
    folder = posixpath.dirname(near.path)
    return sorted(found, key=lambda obj: (obj.path != near.path, posixpath.dirname(obj.path) != folder))


def nearest(found: list[K8sObject], near: K8sObject | None) -> list[K8sObject]:
    """The definitions a manifest most likely goes with, when the project defines one name several
    times (alternative samples, overlays): those in its own file, else in its folder, else all."""
    if near is None or len(found) < 2:
        return found
    same = [obj for obj in found if obj.path == near.path]
    if same:
        return same
    folder = posixpath.dirname(near.path)
    return [obj for obj in found if posixpath.dirname(obj.path) == folder] or found


def local_queues(index: Any, name: str, namespace: str, near: K8sObject | None = None) -> list[K8sObject]:
    """The project's LocalQueues ``namespace/name``."""
    namespace = namespace or "default"
    found = [lq for lq in named_kueue_objects(index, "LocalQueue", name) if (lq.namespace or "default") == namespace]
    return _prefer_near(found, near)


def cluster_queue_name(lq: K8sObject) -> str | None:
    spec = lq.body.get_map("spec")
    return _str(spec.get("clusterQueue")) if spec is not None else None


def named(index: Any, kind: str, name: str, near: K8sObject | None = None) -> list[K8sObject]:
    """The project's cluster-scoped Kueue objects of ``kind`` called ``name``."""
    return _prefer_near(named_kueue_objects(index, kind, name), near)


def cluster_queues_of(index: Any, obj: K8sObject) -> list[K8sObject]:
    """The ClusterQueues a queued object's LocalQueue points at (empty when either is unknown).
    Several when the project defines the LocalQueue or ClusterQueue more than once: those nearest
    the object (:func:`nearest`); a verdict should then hold for every one of them."""
    ref = queue_ref(obj)
    if ref is None:
        return []
    result: list[K8sObject] = []
    for lq in nearest(local_queues(index, ref.name, obj.namespace, obj), obj):
        cq_name = cluster_queue_name(lq)
        for cq in nearest(named(index, "ClusterQueue", cq_name, obj), obj) if cq_name else ():
            if not any(cq is seen for seen in result):
                result.append(cq)
    return result


# ---------------------------------------------------------------------------------------------
# What a ClusterQueue can ever admit (Kueue's potentialAvailable)


class QuotaTree:
    """ClusterQueues and cohorts of a project, as Kueue's resource nodes."""

    def __init__(self, index: Any):
        self._cq_quotas: dict[int, dict[FlavorResource, Quota]] = {}
        self._cq_parent: dict[int, str | None] = {}
        self._cohort_quotas: dict[str, dict[FlavorResource, Quota]] = {}
        self._cohort_parent: dict[str, str | None] = {}
        # cohort -> ClusterQueue -> its definitions in that cohort (several for variant files, as the
        # index groups them: alternatives, of which one is deployed, so one lends; a verdict must hold
        # for each)
        self._children_cqs: dict[str, dict[int, list[int]]] = {}
        self._children_cohorts: dict[str, list[str]] = {}
        self._variant: set[int] = set()  # ClusterQueues with an alternative in their cohort
        for cq in kueue_objects(index, "ClusterQueue"):
            key = id(cq)
            self._cq_quotas[key] = quotas(cq)
            parent = cohort_of(cq)
            self._cq_parent[key] = parent
            if parent is not None:
                self._cohort_parent.setdefault(parent, None)
                self._children_cqs.setdefault(parent, {}).setdefault(id(index.alternatives(cq)[0]), []).append(key)
        for names in self._children_cqs.values():
            for keys in names.values():
                if len(keys) > 1:
                    self._variant.update(keys)
        for cohort in kueue_objects(index, "Cohort"):
            if cohort.name in self._cohort_quotas:
                continue  # a second definition of one cohort: the first wins
            self._cohort_quotas[cohort.name] = quotas(cohort)
            self._cohort_parent[cohort.name] = cohort_parent(cohort)
        for name, parent in list(self._cohort_parent.items()):
            if parent is not None:
                self._cohort_parent.setdefault(parent, None)  # a parent named by no object: a plain root
                self._children_cohorts.setdefault(parent, []).append(name)
        self._subtree: dict[tuple[str, FlavorResource], Fraction | float] = {}
        self._cyclic = {name for name in self._cohort_parent if self._in_cycle(name)}

    def _in_cycle(self, name: str) -> bool:
        seen = set()
        current: str | None = name
        while current is not None:
            if current in seen:
                return True
            seen.add(current)
            current = self._cohort_parent.get(current)
        return False

    def _root_cyclic(self, name: str | None) -> bool:
        seen = set()
        while name is not None and name not in seen:
            if name in self._cyclic:
                return True
            seen.add(name)
            name = self._cohort_parent.get(name)
        return False

    @staticmethod
    def _guaranteed(quota: Quota | None, subtree: Fraction | float) -> Fraction | float:
        if quota is None or quota.lending_limit is None:
            return Fraction(0)
        return max(Fraction(0), subtree - quota.lending_limit)

    def _lends(self, cq: int, fr: FlavorResource) -> Fraction | float:
        quota = self._cq_quotas[cq].get(fr)
        sub = quota.nominal if quota is not None else Fraction(0)
        return sub - self._guaranteed(quota, sub)

    def _cohort_subtree(self, name: str, fr: FlavorResource, me: int | None = None) -> Fraction | float:
        """What the cohort ``name`` and everything under it can lend of ``fr``. A ClusterQueue
        defined in several variant files lends as one: ``me``'s own definition when ``me`` is one
        of them (the one being judged), else the most any of its definitions lends."""
        key = (name, fr, me)
        if key in self._subtree:
            return self._subtree[key]
        own = self._cohort_quotas.get(name, {}).get(fr)
        total: Fraction | float = own.nominal if own is not None else Fraction(0)
        for child in self._children_cohorts.get(name, ()):
            sub = self._cohort_subtree(child, fr, me)
            total += sub - self._guaranteed(self._cohort_quotas.get(child, {}).get(fr), sub)
        for keys in self._children_cqs.get(name, {}).values():
            total += self._lends(me, fr) if me in keys else max(self._lends(cq, fr) for cq in keys)
        self._subtree[key] = total
        return total

    def _cohort_potential(self, name: str, fr: FlavorResource, me: int | None = None) -> Fraction | float:
        subtree = self._cohort_subtree(name, fr, me)
        parent = self._cohort_parent.get(name)
        if parent is None:
            return subtree
        quota = self._cohort_quotas.get(name, {}).get(fr)
        available = self._guaranteed(quota, subtree) + self._cohort_potential(parent, fr, me)
        if quota is not None and quota.borrowing_limit is not None:
            available = min(subtree + quota.borrowing_limit, available)
        return available

    def knows(self, cq: K8sObject) -> bool:
        return id(cq) in self._cq_quotas

    def disabled(self, cq: K8sObject) -> bool:
        """A ClusterQueue in a cohort tree with a cycle: Kueue admits nothing there."""
        return self._root_cyclic(self._cq_parent.get(id(cq)))

    def potential_available(self, cq: K8sObject, fr: FlavorResource) -> Fraction | float:
        """The most of ``fr`` the ClusterQueue can ever hold at once (nothing else admitted)."""
        key = id(cq)
        own = self._cq_quotas.get(key, {}).get(fr) if key in self._cq_quotas else quotas(cq).get(fr)
        subtree = own.nominal if own is not None else Fraction(0)
        parent = self._cq_parent.get(key) if key in self._cq_quotas else cohort_of(cq)
        if parent is None:
            return subtree
        me = key if key in self._variant else None
        available = self._guaranteed(own, subtree) + self._cohort_potential(parent, fr, me)
        if own is not None and own.borrowing_limit is not None:
            available = min(subtree + own.borrowing_limit, available)
        return available

    def borrowable(self, cq: K8sObject, fr: FlavorResource) -> Fraction | float:
        """What borrowing adds to the ClusterQueue's own nominal quota, at most."""
        own = quotas(cq).get(fr)
        nominal = own.nominal if own is not None else Fraction(0)
        return max(Fraction(0), self.potential_available(cq, fr) - nominal)


_TREES: "weakref.WeakKeyDictionary[Any, QuotaTree]" = weakref.WeakKeyDictionary()


def quota_tree(index: Any) -> QuotaTree:
    """The project's quota tree, built once per index."""
    tree = _TREES.get(index)
    if tree is None:
        tree = QuotaTree(index)
        _TREES[index] = tree
    return tree


# ---------------------------------------------------------------------------------------------
# Pod sets: the pods of a workload that Kueue admits together


class PodSet(Struct, frozen=True):
    pod: PodSpec
    name: str  # the replica type, task or template ("main" for a single template)
    count: int  # pods Kueue needs quota for (the least it may admit, with partial admission)
    per_pod: dict[str, Any]  # resource -> linter.model.cluster.PodRequest (amount, container, entry)

    def total(self, resource: str) -> Fraction:
        request = self.per_pod.get(resource)
        return request.amount * self.count if request is not None else Fraction(0)

    def describe(self) -> str:
        return f"{self.name} pods" if self.name != "main" else "pods"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _job_count(job_spec: YMap | None, annotations: Mapping[str, Any]) -> int | None:
    """Pods Kueue admits for a batch Job: ``parallelism`` (default 1) capped by ``completions``;
    with partial admission (``kueue.x-k8s.io/job-min-parallelism``), that minimum."""
    if job_spec is None:
        return 1
    raw = job_spec.get("parallelism", 1)
    count = _int(raw)
    if count is None:
        return None
    completions = _int(job_spec.get("completions"))
    if completions is not None:
        count = min(count, completions)
    minimum = annotations.get(MIN_PARALLELISM_ANNOTATION)
    try:
        minimum_count = int(str(minimum)) if minimum is not None else None
    except ValueError:
        minimum_count = None
    if minimum_count is not None and 0 < minimum_count < count:
        count = minimum_count
    return count


def podsets(workload: Workload) -> list[PodSet] | None:
    """The pod sets Kueue would admit for a workload it manages; None for other kinds (a Volcano
    Job, a DaemonSet) or when a count is not a literal number."""
    from mlops_lint.model.podrequests import pod_requests

    obj = workload.obj
    kind = (obj.group, obj.kind)
    if kind not in SUSPEND_FIELDS:
        return None
    result: list[PodSet] = []
    for pod in workload.pods:
        if kind == ("batch", "Job"):
            count = _job_count(obj.body.get_map("spec"), obj.annotations)
        elif kind == ("batch", "CronJob"):
            spec = obj.body.get_map("spec")
            job = spec.get_map("jobTemplate") if spec is not None else None
            job_meta = job.get_map("metadata") if job is not None else None
            annotations = job_meta.get("annotations") if job_meta is not None else None
            count = _job_count(job.get_map("spec") if job is not None else None,
                               annotations if isinstance(annotations, dict) else {})
        elif kind in (("", "Pod"), ("apps", "Deployment")):
            count = 1  # a Deployment's pods are admitted one by one
        elif kind == ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"):
            # Kueue admits each group (a leader and size-1 workers) as a workload of its own
            spec = obj.body.get_map("spec")
            groups = _int(spec.get("replicas")) if spec is not None and "replicas" in spec else 1
            count = pod.replicas // groups if isinstance(pod.replicas, int) and groups else None
        else:
            count = pod.replicas if isinstance(pod.replicas, int) else None
        if count is None:
            return None
        result.append(PodSet(pod, pod.role or "main", count, pod_requests(pod)))
    return result


# ---------------------------------------------------------------------------------------------
# GPU nodes


_EXTRA_GPU_LABEL_KEYS = ("cloud.google.com/gke-accelerator", "nvidia.com/gpu.count", "nvidia.com/gpu.machine")
_NOT_GPU_VALUES = frozenset({"", "false", "none", "0", "cpu", "no"})
_GPU_TAINT_KEYS = frozenset({"nvidia.com/gpu", "kubernetes.azure.com/accelerator", "gpu", "amd.com/gpu"})


def labels_select_gpu_nodes(labels: Mapping[str, str], config: Any) -> bool:
    """Whether node labels describe GPU nodes: a configured GPU node label, or a label key only
    GPU nodes carry (``kubernetes.azure.com/accelerator``, ``nvidia.com/gpu.present`` …)."""
    from mlops_lint.config import KNOWN_GPU_NODE_LABEL_KEYS

    wanted = config.effective_gpu_node_labels if config is not None else {}
    if any(labels.get(key) == str(value) for key, value in wanted.items()):
        return True
    return any(key in labels and labels[key].lower() not in _NOT_GPU_VALUES
               for key in (*KNOWN_GPU_NODE_LABEL_KEYS, *_EXTRA_GPU_LABEL_KEYS))


def taint_marks_gpu_nodes(taint: Taint, config: Any) -> bool:
    configured = config.effective_gpu_taints if config is not None else ()
    if any(parse_taint(t) == taint for t in configured):
        return True
    return taint.key in _GPU_TAINT_KEYS


def gpu_flavor_reason(flavor: K8sObject, config: Any) -> str | None:
    """Why a ResourceFlavor covers GPU nodes (for messages), or None when it does not: its
    ``nodeLabels`` select GPU nodes, its ``nodeTaints`` are GPU taints, or it has no node labels
    at all (a flavor for every node, GPU nodes included)."""
    labels = flavor_node_labels(flavor)
    if not labels:
        return "no nodeLabels: it stands for every node"
    if labels_select_gpu_nodes(labels, config):
        return f"nodeLabels {_labels(labels)}"
    taints = [t for t in flavor_node_taints(flavor) if taint_marks_gpu_nodes(t, config)]
    if taints:
        return f"nodeTaints hold the GPU taint {taints[0]}"
    return None


def gpu_flavors(cq: K8sObject, index: Any, config: Any) -> list[tuple[str, str]]:
    """(name, why) of the ClusterQueue's flavors (ResourceFlavors of the project) that cover GPU
    nodes, in the order the ClusterQueue lists them."""
    found: dict[str, str] = {}
    for ref in flavor_refs(cq):
        if ref.name in found:
            continue
        for flavor in named(index, "ResourceFlavor", ref.name, cq)[:1]:
            reason = gpu_flavor_reason(flavor, config)
            if reason is not None:
                found[ref.name] = reason
    return list(found.items())


def covered_resources(cq: K8sObject) -> set[str]:
    return {resource for group in resource_groups(cq) for resource in group.covered}


def uncovered_gpu_resources_left_to_que005(cq: K8sObject, index: Any, config: Any) -> bool:
    """Whether QUE005 (reported on the ClusterQueue) owns GPU resources the queue does not
    cover: its flavors cover GPU nodes. QUE006 then leaves those resources alone."""
    return bool(gpu_flavors(cq, index, config))


# ---------------------------------------------------------------------------------------------
# Admission: what Kueue can never admit


class Problem(Struct, frozen=True):
    """One reason a ClusterQueue can never admit a workload."""

    kind: str  # "uncovered" | "exceeds" | "no-flavor"
    resource: str
    need: Fraction
    can: Fraction | float
    podset: PodSet
    whole: bool = False  # the workload's pod sets together (not one pod set)
    flavors: tuple[str, ...] = ()
    detail: str = ""

    @property
    def anchor(self) -> Any:
        """The PodRequest (amount, container, entry) to point at, if the resource has one."""
        return self.podset.per_pod.get(self.resource)


def _filtered_placement(placement: Placement, keys: set[str]) -> Placement:
    """``flavorSelector``: nodeSelector and required affinity restricted to ``keys``; a term
    left empty matches every flavor (the terms are ORed)."""
    selector = {k: v for k, v in placement.node_selector.items() if k in keys}
    terms: list[tuple[Requirement, ...]] = []
    for term in placement.terms:
        kept = tuple(req for req in term if req.key in keys)
        if not kept:
            terms = []
            break
        terms.append(kept)
    if placement.unknown_terms:
        terms = []
    return Placement(selector, tuple(terms))


class _Flavor(Struct):
    name: str
    obj: K8sObject | None  # None: not in the project (its labels and taints are unknown)


def _fits(podset: PodSet, flavor: _Flavor, keys: set[str]) -> str | None:
    """None when the pod set may get ``flavor``; else why not (for messages)."""
    if flavor.obj is None:
        return None
    tolerations = [t for _, t in podset.pod.tolerations] + flavor_tolerations(flavor.obj)
    for taint in flavor_node_taints(flavor.obj):
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerated_by(tolerations, taint):
            return f"the pods do not tolerate taint {taint} of flavor `{flavor.name}`"
    if not _filtered_placement(podset.pod.placement, keys).matches(flavor_node_labels(flavor.obj)):
        return (f"the pods' nodeSelector or node affinity does not match flavor `{flavor.name}` "
                f"({_labels(flavor_node_labels(flavor.obj))})")
    return None


def _labels(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "no node labels"


_STANDARD_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage", "storage", "pods"})


def native_resource(name: str) -> bool:
    """A resource pods request under that name: cpu, memory, ephemeral-storage, hugepages-*, and
    the GPU resources. A ClusterQueue that covers anything else a workload does not request
    (``cpu_credits``, ``nvidia.com/total-gpucores``) counts the output of Kueue resource
    transformations, which turn requested resources into others."""
    return name in _STANDARD_RESOURCES or name.startswith("hugepages-") or is_gpu_resource(name)


def admission_problems(workload: Workload, cq: K8sObject, index: Any, config: Any,
                       excluded_prefixes: Iterable[str] = ()) -> list[Problem] | None:
    """Why ``cq`` can never admit ``workload`` (empty: it may); None when that cannot be told
    (counts not literal, a cohort tree with a cycle)."""
    sets = podsets(workload)
    tree = quota_tree(index)
    if sets is None or tree.disabled(cq):
        return None
    excluded = tuple(excluded_prefixes)
    groups = resource_groups(cq)
    # a ResourceFlavor written in several variant files: each choice of definitions is a cluster the
    # project may deploy, and the workload is refused only if every one refuses it (the first's why)
    options = {ref.name: named(index, "ResourceFlavor", ref.name, cq) or [None] for group in groups for ref in group.flavors}
    choices = list(itertools.islice(itertools.product(*options.values()), _FLAVOR_CHOICES + 1))
    if len(choices) > _FLAVOR_CHOICES:
        return None  # too many alternative definitions to try each: not decidable
    first: list[Problem] | None = None
    for choice in choices:
        flavors = {name: _Flavor(name, obj) for name, obj in zip(options, choice)}
        problems = _problems(sets, cq, index, config, excluded, groups, flavors, tree)
        if not problems:
            return problems
        first = problems if first is None else first
    return first


_FLAVOR_CHOICES = 16  # combinations of alternative ResourceFlavor definitions admission_problems tries


def _problems(sets: list[PodSet], cq: K8sObject, index: Any, config: Any, excluded: tuple[str, ...],
              groups: list[Any], flavors: dict[str, _Flavor], tree: QuotaTree) -> list[Problem]:
    group_of = {resource: group for group in groups for resource in group.covered}
    gpu_left = None
    requested = {r for podset in sets for r in podset.per_pod}
    transformed = [r for r in group_of if not native_resource(r) and r not in requested]
    problems: list[Problem] = []
    reported: set[str] = set()

    def cap(flavor: str, resource: str) -> Fraction | float:
        return tree.potential_available(cq, (flavor, resource))

    for podset in sets:
        if podset.count <= 0:
            continue
        needs = {r: podset.total(r) for r in podset.per_pod if not r.startswith(excluded) if podset.total(r) > 0}
        if "pods" in group_of:
            needs["pods"] = Fraction(podset.count)
        for resource in sorted(needs):
            if resource in group_of or resource in reported:
                continue
            if not native_resource(resource) and transformed:
                continue  # may be an input of a resource transformation into one of ``transformed``
            if is_gpu_resource(resource):
                if gpu_left is None:
                    gpu_left = uncovered_gpu_resources_left_to_que005(cq, index, config)
                if gpu_left:
                    continue
            problems.append(Problem("uncovered", resource, needs[resource], Fraction(0), podset))
            reported.add(resource)
        for group in groups:
            wanted = {r: needs[r] for r in group.covered if r in needs and r not in reported}
            if not wanted:
                continue
            keys = {k for name in group.flavor_names if flavors[name].obj is not None
                    for k in flavor_node_labels(flavors[name].obj)}
            candidates: list[str] = []
            refusals: list[str] = []
            for name in dict.fromkeys(group.flavor_names):
                why = _fits(podset, flavors[name], keys)
                if why is None:
                    candidates.append(name)
                else:
                    refusals.append(why)
            first = min(wanted)
            if not candidates:
                problems.append(Problem("no-flavor", first, wanted[first], Fraction(0), podset,
                                        flavors=group.flavor_names, detail="; ".join(refusals)))
                reported.update(wanted)
                continue
            if any(all(amount <= cap(f, r) for r, amount in wanted.items()) for f in candidates):
                continue
            exceeded = set()
            for resource, amount in sorted(wanted.items()):
                best = max(cap(f, resource) for f in candidates)
                if amount > best:
                    problems.append(Problem("exceeds", resource, amount, best, podset, flavors=tuple(candidates)))
                    exceeded.add(resource)
            if not exceeded:  # each resource fits some flavor, but no one flavor holds them all
                problems.append(Problem("exceeds", first, wanted[first], max(cap(f, first) for f in candidates), podset,
                                        flavors=tuple(candidates),
                                        detail=f"no single flavor holds all of {', '.join(sorted(wanted))} at once"))
                exceeded.update(wanted)
            reported.update(exceeded)
    # the pod sets together, over every flavor of the resource's group
    totals: dict[str, Fraction] = {}
    biggest: dict[str, tuple[Fraction, PodSet]] = {}
    for podset in sets:
        if podset.count <= 0:
            continue
        for resource in [*podset.per_pod, *(("pods",) if "pods" in group_of else ())]:
            amount = Fraction(podset.count) if resource == "pods" else podset.total(resource)
            if resource not in group_of or resource in reported or amount <= 0 or resource.startswith(excluded):
                continue
            totals[resource] = totals.get(resource, Fraction(0)) + amount
            if resource not in biggest or amount > biggest[resource][0]:
                biggest[resource] = (amount, podset)
    for resource, amount in sorted(totals.items()):
        group = group_of[resource]
        everything = sum((cap(f, resource) for f in dict.fromkeys(group.flavor_names)), Fraction(0))
        if amount > everything:
            problems.append(Problem("exceeds", resource, amount, everything, biggest[resource][1], whole=True,
                                    flavors=group.flavor_names))
    return problems


# ---------------------------------------------------------------------------------------------
# Formatting amounts for messages


_BYTE_RESOURCES = ("memory", "ephemeral-storage", "hugepages-")


def format_amount(resource: str, amount: Fraction | float) -> str:
    """``64``, ``1.5``, ``500m`` for counts and cpu; ``128Gi``, ``1.5Ti`` for bytes."""
    if isinstance(amount, float):
        return "unlimited" if amount == INFINITE else f"{amount:g}"
    if resource.startswith(_BYTE_RESOURCES):
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount >= size:
                value = amount / size
                text = str(value.numerator) if value.denominator == 1 else f"{float(value):.2f}".rstrip("0").rstrip(".")
                return f"{text}{suffix}"
        return str(int(amount)) if amount.denominator == 1 else f"{float(amount):g}"
    if amount.denominator == 1:
        return str(amount.numerator)
    milli = amount * 1000
    if milli.denominator == 1 and amount < 1:
        return f"{milli.numerator}m"
    return f"{float(amount):.3f}".rstrip("0").rstrip(".")


# ---------------------------------------------------------------------------------------------
# Priorities: Kubernetes PriorityClasses (pods) and Kueue WorkloadPriorityClasses (workloads)

SCHEDULING_GROUP = "scheduling.k8s.io"
# The classes every cluster has (``scheduling.SystemPriorityClasses``); other ``system-`` names
# are reserved and cannot be created.
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


def priority_classes(index: Any) -> list[K8sObject]:
    return index.memo("priority-classes",
                      lambda: [pc for pc in index.of_kind("PriorityClass") if pc.group == SCHEDULING_GROUP])


def has_priority_classes(index: Any) -> bool:
    return index.has_kind("PriorityClass") and bool(priority_classes(index))


def priority_value(pc: K8sObject) -> int | None:
    return _int(pc.body.get("value"))


def preemption_policy(pc: K8sObject) -> str:
    """``preemptionPolicy``, defaulting as the API server does to ``PreemptLowerPriority``."""
    value = pc.body.get("preemptionPolicy")
    return value if isinstance(value, str) and value else DEFAULT_PREEMPTION_POLICY


def global_default_class(index: Any) -> K8sObject | None:
    """The project's ``globalDefault: true`` PriorityClass (the highest, should there be several)."""
    def build() -> K8sObject | None:
        found = [pc for pc in priority_classes(index) if pc.body.get("globalDefault") is True]
        return max(found, key=lambda pc: priority_value(pc) or 0) if found else None

    return index.memo("global-default-priority-class", build)


def priority_classes_named(index: Any, kind: str, name: str) -> list[K8sObject]:
    """Every definition of the priority class ``name`` of ``kind``: a ``PriorityClass``
    (scheduling.k8s.io, what pods name) or a Kueue ``WorkloadPriorityClass`` (what the
    ``kueue.x-k8s.io/priority-class`` label names)."""
    group = SCHEDULING_GROUP if kind == "PriorityClass" else KUEUE_GROUP
    return [obj for obj in index.named(kind, name) if obj.group == group]


def priority_class_named(index: Any, name: str, near: K8sObject | None = None) -> K8sObject | None:
    """The PriorityClass ``name`` the pods of ``near`` run with. Defined in several variant files,
    the definitions nearest ``near`` (:func:`nearest`) are its alternatives, and the one with the
    highest value stands for them: "another class may preempt it" then holds for every one."""
    found = nearest(priority_classes_named(index, "PriorityClass", name), near)
    return max(found, key=lambda pc: (priority_value(pc) is None, priority_value(pc) or 0)) if found else None


class PriorityRef(Struct, frozen=True):
    """A place that names a priority class."""

    name: str
    span: Span
    node: Path
    field: str  # for messages: "priorityClassName", "schedulingPolicy.priorityClass", the label
    workload_class: bool = False  # names a Kueue WorkloadPriorityClass, not a PriorityClass


def _ref_at(holder: YMap | None, key: str, node: Path, field_name: str, workload_class: bool = False) -> PriorityRef | None:
    if holder is None:
        return None
    value = holder.get(key)
    if not isinstance(value, str) or not value:
        return None
    return PriorityRef(value, holder.value_span(key), node + (key,), field_name, workload_class)


def priority_refs(obj: K8sObject, workload: Workload | None) -> list[PriorityRef]:
    """Every priority class ``obj`` names: its pod templates' ``priorityClassName``, a Volcano
    Job's or PodGroup's ``spec.priorityClassName``, a Kubeflow job's
    ``spec.runPolicy.schedulingPolicy.priorityClass``, and Kueue's ``kueue.x-k8s.io/priority-class``
    label (a WorkloadPriorityClass)."""
    refs: list[PriorityRef] = []
    for pod in workload.pods if workload is not None else ():
        ref = _ref_at(pod.spec, "priorityClassName", pod.path, "priorityClassName")
        if ref is not None:
            refs.append(ref)
    spec = obj.body.get_map("spec")
    if obj.group in ("batch.volcano.sh", "scheduling.volcano.sh") and obj.kind in ("Job", "PodGroup"):
        ref = _ref_at(spec, "priorityClassName", ("spec",), "spec.priorityClassName")
        if ref is not None:
            refs.append(ref)
    if obj.group == "kubeflow.org" and spec is not None:
        run_policy = spec.get_map("runPolicy")
        policy = run_policy.get_map("schedulingPolicy") if run_policy is not None else None
        ref = _ref_at(policy, "priorityClass", ("spec", "runPolicy", "schedulingPolicy"), "schedulingPolicy.priorityClass")
        if ref is not None:
            refs.append(ref)
    if is_kueue_managed_kind(obj):
        meta, base = _queue_metadata(obj)
        labels = meta.get_map("labels") if meta is not None else None
        ref = _ref_at(labels, WORKLOAD_PRIORITY_LABEL, base + ("labels",), f"label `{WORKLOAD_PRIORITY_LABEL}`", True)
        if ref is not None:
            refs.append(ref)
    return refs


def pod_priority_class_name(pod: PodSpec) -> str | None:
    """The PriorityClass the template's pods run with: their own ``priorityClassName``, else a
    Volcano Job's ``spec.priorityClassName`` (Volcano's job controller copies it into pods)."""
    own = pod.priority_class_name
    if own:
        return own
    obj = pod.obj
    if obj.kind == "Job" and obj.group == "batch.volcano.sh":
        spec = obj.body.get_map("spec")
        value = spec.get("priorityClassName") if spec is not None else None
        return value if isinstance(value, str) and value else None
    return None


class PodPriority(Struct, frozen=True):
    value: int | None  # None: not known (a class the project does not define, a template)
    class_name: str | None  # the class that decides it (the global default when the pod names none)
    defaulted: bool  # no class named: the global default class, or 0


def pod_priority(pod: PodSpec, index: Any) -> PodPriority:
    """The priority the template's pods get, as the Priority admission plugin assigns it."""
    name = pod_priority_class_name(pod)
    if name is None:
        default = global_default_class(index)
        if default is None:
            return PodPriority(0, None, True)
        return PodPriority(priority_value(default), default.name, True)
    if name in SYSTEM_PRIORITY_CLASSES:
        return PodPriority(SYSTEM_PRIORITY_CLASSES[name], name, False)
    pc = priority_class_named(index, name, pod.obj)
    return PodPriority(priority_value(pc) if pc is not None else None, name, False)


def preemptors(index: Any, value: int) -> list[K8sObject]:
    """The project's PriorityClasses whose pods may preempt pods of priority ``value``: a higher
    value and a ``preemptionPolicy`` other than ``Never``; highest first."""
    return index.memo(("preemptors", value), lambda: sorted(
        (pc for pc in priority_classes(index) if (priority_value(pc) or 0) > value and preemption_policy(pc) != "Never"),
        key=lambda pc: (-(priority_value(pc) or 0), pc.name)))
