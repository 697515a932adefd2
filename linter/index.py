"""The project model: every object of every file, indexed once, read-only to rules.

Lookups that cross files are O(1): by kind, by (kind, namespace, name), by name within a kind,
and each object's workload view (its pod templates) is built once and shared by every rule.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from typing import Any, Callable, Iterable, Iterator

from mlops_lint.model.document import Document, K8sObject
from mlops_lint.model.k8s import Workload, workload_of
from mlops_lint.model.memo import once
from mlops_lint.refkinds import REFERENCE_KINDS  # what a parallel run's index holds (rules import it from here)

DEFAULT_NAMESPACE = "default"


class PartialIndexError(LookupError):
    pass


class ProjectIndex:
    """Objects by kind / namespace / name / labels, workloads, Dockerfiles and scripts."""

    def __init__(self, documents: Iterable[Document], *, only_kinds: frozenset[str] | None = None):
        self.only_kinds = only_kinds
        self.documents: tuple[Document, ...] = tuple(documents)
        self.objects: tuple[K8sObject, ...] = tuple(o for d in self.documents for o in d.objects)
        by_kind: dict[str, list[K8sObject]] = defaultdict(list)
        by_ref: dict[tuple[str, str, str], K8sObject] = {}
        for obj in self.objects:
            by_kind[obj.kind].append(obj)
            by_ref.setdefault((obj.kind, obj.namespace or DEFAULT_NAMESPACE, obj.name), obj)
        self._by_kind = {kind: tuple(items) for kind, items in by_kind.items()}
        self._by_ref = by_ref
        self._by_key = {obj.key: obj for obj in self.objects}
        by_name: dict[tuple[str, str], list[K8sObject]] = defaultdict(list)
        for obj in self.objects:
            by_name[(obj.kind, obj.name)].append(obj)
        self._by_name = {key: tuple(items) for key, items in by_name.items()}
        # (kind, group, namespace, name) -> its definitions, where the project writes one object in
        # several places (variant files: the deploy applies one of them)
        by_ident: dict[tuple[str, str, str, str], list[K8sObject]] = defaultdict(list)
        for items in self._by_name.values():
            if len(items) > 1:
                for obj in items:
                    by_ident[(obj.kind, obj.group, obj.namespace or DEFAULT_NAMESPACE, obj.name)].append(obj)
        self._alternatives = {id(obj): tuple(items) for items in by_ident.values() if len(items) > 1 for obj in items}
        self._memo: dict[Any, Any] = {}
        # id(obj) -> (weak reference to obj, its view): the reference guards against an id reused by
        # a later object once a worker has let the earlier document go.
        self._workloads: dict[int, tuple[weakref.ref, Workload | None]] = {}
        self._defaults: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self.dockerfiles = tuple(d for d in self.documents if d.dockerfile is not None)
        self.scripts = tuple(d for d in self.documents if d.shell is not None)
        self.iac = tuple(d for d in self.documents if d.iac is not None)  # Terraform files

    def _check(self, kind: str) -> None:
        if self.only_kinds is not None and kind not in self.only_kinds:
            raise PartialIndexError(
                f"kind {kind!r} is not in mlops_lint.refkinds.REFERENCE_KINDS, so a parallel run does not index it; "
                "add it there"
            )

    def of_kind(self, *kinds: str) -> tuple[K8sObject, ...]:
        for kind in kinds:
            self._check(kind)
        if len(kinds) == 1:
            return self._by_kind.get(kinds[0], ())
        return tuple(o for kind in kinds for o in self._by_kind.get(kind, ()))

    def has_kind(self, kind: str) -> bool:
        self._check(kind)
        return kind in self._by_kind

    def get(self, kind: str, name: str, namespace: str | None = None) -> K8sObject | None:
        """The object of ``kind`` named ``name``; ``namespace`` None for cluster-scoped kinds."""
        self._check(kind)
        if namespace is None:
            found = self._by_name.get((kind, name))
            return found[0] if found else None
        return self._by_ref.get((kind, namespace or DEFAULT_NAMESPACE, name))

    def named(self, kind: str, name: str) -> tuple[K8sObject, ...]:
        """Every object of ``kind`` named ``name`` (any namespace, any group), in project order."""
        self._check(kind)
        return self._by_name.get((kind, name), ())

    def alternatives(self, obj: K8sObject) -> tuple[K8sObject, ...]:
        """Every definition of ``obj``'s object (same kind, group, namespace and name) in project
        order, ``obj`` among them; ``(obj,)`` when the project writes it once.

        Variant files (a whole-GPU and a MIG ClusterQueue, an overlay per environment) are
        alternatives, not objects deployed together: a cross-object verdict that depends on such
        an object must hold for every alternative before it reports, and what another object can
        count on from it (quota it lends, say) is the most any alternative gives."""
        return self._alternatives.get(id(obj), (obj,))

    def memo(self, key: Any, build: Callable[[], Any]) -> Any:
        """``build()``, computed once per index: for what rules derive from the whole project
        (every Kueue ClusterQueue, the StorageClass names …), so no lookup rescans it per object."""
        return once(self, key, build)

    def by_key(self, key: tuple) -> K8sObject | None:
        """The object at :attr:`K8sObject.key` (how facts from another process name one)."""
        found = self._by_key.get(key)
        if found is not None:
            self._check(found.kind)
        return found

    def workload(self, obj: K8sObject) -> Workload | None:
        """The workload view of ``obj`` (None if its kind carries no pods), built once."""
        key = id(obj)
        cached = self._workloads.get(key)
        if cached is not None and cached[0]() is obj:
            return cached[1]
        workload = workload_of(obj, self)
        if workload is not None:
            workload.project = self
        self._workloads[key] = (weakref.ref(obj), workload)
        return workload

    def release(self, document: Document) -> None:
        """Forget the views built for a linted file's objects (those of the index's own objects
        stay), so a file's trees are freed once it is linted: a view holds its object."""
        for obj in document.objects:
            if self._by_key.get(obj.key) is not obj:
                cached = self._workloads.pop(id(obj), None)
                if cached is not None and cached[1] is not None:
                    cached[1].dispose()

    def container_defaults(self, namespace: str) -> tuple[frozenset[str], frozenset[str]]:
        """Resources a LimitRange of ``namespace`` fills in for containers: (requests, limits).

        A LimitRange item of type Container defaults a container's limits from ``default`` and
        its requests from ``defaultRequest`` (or, failing that, from ``default``: Kubernetes
        copies the defaulted limit into a missing request). The API server fills ``default`` from
        ``max`` and ``defaultRequest`` from ``min`` when those are unset
        (``SetDefaults_LimitRangeItem``), so a LimitRange with bounds only defaults them too.
        """
        key = namespace or DEFAULT_NAMESPACE
        cached = self._defaults.get(key)
        if cached is not None:
            return cached
        requests: set[str] = set()
        limits: set[str] = set()
        for obj in self.of_kind("LimitRange"):
            if (obj.namespace or DEFAULT_NAMESPACE) != key:
                continue
            spec = obj.body.get("spec")
            items = spec.get("limits") if isinstance(spec, dict) else None
            for item in items if isinstance(items, list) else ():
                if not isinstance(item, dict) or item.get("type", "Container") != "Container":
                    continue
                default, default_request, low, high = (
                    item.get(section) if isinstance(item.get(section), dict) else {}
                    for section in ("default", "defaultRequest", "min", "max")
                )
                limits.update(map(str, default), map(str, high))  # max -> default limit
                requests.update(map(str, default_request), map(str, default), map(str, high), map(str, low))
        result = (frozenset(requests), frozenset(limits))
        self._defaults[key] = result
        return result

    def workloads(self) -> Iterator[Workload]:
        if self.only_kinds is not None:
            raise PartialIndexError("a parallel run does not index every workload; use a PROJECT-scope rule")
        for obj in self.objects:
            workload = self.workload(obj)
            if workload is not None:
                yield workload
