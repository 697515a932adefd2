"""Which kind of AKS cluster the project makes: AKS Automatic, node auto-provisioning, or Standard.

The readers (:mod:`.from_az`, :mod:`.from_terraform`, :mod:`.from_bicep`) record a
:class:`~.pools.ClusterMode` for every command or resource that makes a cluster (and for
``az aks update --node-provisioning-mode Auto``). From them:

* :func:`live` reads the records in order (files by path, then line by line): a NAP record
  that a later ``az aks update --node-provisioning-mode Manual`` of the same (or an undetermined)
  cluster turns off no longer counts, and the Manual record says the cluster is Standard (AKS
  Automatic keeps NAP: a Manual update does not undo an Automatic record);
* :func:`project_kind` decides what the project's clusters are: ``automatic`` when one is made
  AKS Automatic or switched to node auto-provisioning (NAP) and no other one is known to be
  Standard, ``standard`` when every one is Standard, ``mixed`` when both kinds are made, None
  when the project makes no cluster (or only ones whose kind it does not determine);
* :func:`modes_of` gives the records of a project's index, read once per run: the cluster
  model's own in the ``aks-standard`` profile, where it reads the scripts and IaC files anyway,
  else read from them for this purpose only (``aks-automatic`` does not read them for pools).

The profile inference (:mod:`linter.engine.profile`) reads the same records before the run, from
the project's files; LNT005 reports an explicit profile the records contradict, NAP001 asks
whether the project's cluster is NAP.
"""

from __future__ import annotations

from typing import Any, Iterable

from msgspec import Struct

from mlops_lint.model.cluster.pools import AUTOMATIC, MANUAL, NAP, STANDARD, ClusterMode
from mlops_lint.model.document import BICEP, TERRAFORM
from mlops_lint.model.memo import once
from mlops_lint.model.unknown import UNKNOWN

MIXED = "mixed"


class ProjectKind(Struct, frozen=True):
    """What the project's clusters are (``automatic``, ``standard`` or ``mixed``), the record
    that says so first (an Automatic or NAP one for ``automatic`` and ``mixed``), and for
    ``mixed`` the first Standard one."""

    kind: str
    evidence: ClusterMode
    other: ClusterMode | None = None


def may_be_same(a: Any, b: Any) -> bool:
    """Two records may be of one cluster (a name not determined may be any)."""
    return a is None or b is None or a is UNKNOWN or b is UNKNOWN or a == b


def live(modes: Iterable[ClusterMode]) -> list[ClusterMode]:
    """The records in reading order without the NAP ones a later ``--node-provisioning-mode
    Manual`` of the same (or an undetermined) cluster turns off."""
    modes = list(modes)
    if not any(m.kind == MANUAL for m in modes):
        return modes
    return [m for i, m in enumerate(modes) if not (
        m.kind == NAP and any(n.kind == MANUAL and may_be_same(m.cluster, n.cluster) for n in modes[i + 1:]))]


def project_kind(modes: Iterable[ClusterMode]) -> ProjectKind | None:
    """What the records say of the project's clusters (None: nothing known), read in order
    (:func:`live`). A Standard cluster that a NAP record may switch (``az aks update
    --node-provisioning-mode Auto`` of the same or an undetermined name) is a NAP one."""
    modes = live(modes)
    managed = [m for m in modes if m.kind in (AUTOMATIC, NAP)]
    standard = [m for m in modes if m.kind in (STANDARD, MANUAL)
                and not any(may_be_same(m.cluster, n.cluster) for n in managed)]
    if managed and standard:
        return ProjectKind(MIXED, managed[0], standard[0])
    if managed:
        return ProjectKind(AUTOMATIC, managed[0])
    if standard:
        return ProjectKind(STANDARD, standard[0])
    return None


def read_modes(scripts: Iterable[Any], terraform: Iterable[Any], bicep: Iterable[Any]) -> list[ClusterMode]:
    """The records of the given scripts (ShellScript) and IaC files, read as the cluster model
    reads them in the ``aks-standard`` profile."""
    from mlops_lint.model.cluster import build_cluster

    return build_cluster(scripts, None, terraform, bicep).modes


def documents_modes(documents: Iterable[Any]) -> list[ClusterMode]:
    """The records of loaded documents (scripts and IaC files), in path order."""
    documents = sorted(documents, key=lambda d: d.path)
    scripts = []
    for document in documents:
        if document.shell is not None:
            if not document.shell.path:
                document.shell.path = document.path
            scripts.append(document.shell)
    iac = [d for d in documents if d.iac is not None]
    return read_modes(scripts, [d.iac for d in iac if d.kind == TERRAFORM], [d.iac for d in iac if d.kind == BICEP])


def modes_of(index: Any, config: Any) -> list[ClusterMode]:
    """The project's records, read once per index and profile."""
    if getattr(config, "profile", None) != "aks-automatic":
        from mlops_lint.model.cluster import cluster_of

        return cluster_of(index, config).modes
    return once(index, "cluster-modes",
                lambda: documents_modes([*(d for d in index.scripts if d.shell is not None),
                                         *(d for d in getattr(index, "iac", ()) if d.iac is not None)]))


def is_managed(index: Any, config: Any) -> bool:
    """The project's nodes are made by node auto-provisioning (:func:`managed_cluster`)."""
    return managed_cluster(index, config) is not None


class Managed(Struct, frozen=True):
    """The project's nodes are NAP's (:func:`managed_cluster`): ``why`` says so for a message
    (the profile, or the record that makes the cluster Automatic or NAP), ``clusters`` are the
    names of those clusters (None: every cluster of the project)."""

    why: str
    clusters: tuple | None = None

    def covers(self, name: Any) -> bool:
        """A command or resource of the cluster ``name`` (None or UNKNOWN: any) is one of them."""
        from mlops_lint.model.unknown import resolved

        if self.clusters is None:
            return True
        value = resolved(name) if name is not None else None
        return any(may_be_same(value, cluster) for cluster in self.clusters)


def _said(mode: ClusterMode) -> str:
    what = "made AKS Automatic" if mode.kind == AUTOMATIC else "node auto-provisioned"
    return f"the cluster is {what} by {mode.how} at {mode.origin.path}:{mode.origin.target.line}"


def managed_cluster(index: Any, config: Any) -> Managed | None:
    """Whether the project's nodes are made by node auto-provisioning: the ``aks-automatic``
    profile (given, or inferred: the record it was inferred from is named), or clusters the
    project makes Automatic or NAP (those only). Memoised per index and config."""
    return once(index, ("managed-cluster", id(config)), lambda: _managed(index, config))


def _managed(index: Any, config: Any) -> Managed | None:
    automatic = getattr(config, "profile", None) == "aks-automatic"
    if automatic and getattr(config, "profile_from", None) != "inferred":
        return Managed("the profile is aks-automatic")
    found = project_kind(modes_of(index, config))
    if automatic:
        return Managed(_said(found.evidence) if found is not None and found.kind == AUTOMATIC else
                       "the profile is aks-automatic")
    if found is None or found.kind not in (AUTOMATIC, MIXED):
        return None
    managed = [m for m in live(modes_of(index, config)) if m.kind in (AUTOMATIC, NAP)]
    return Managed(_said(found.evidence), tuple(m.cluster for m in managed))


def nap_in_play(index: Any, config: Any) -> bool:
    """Node auto-provisioning makes the project's nodes: the project is managed
    (:func:`managed_cluster`) or has NodePools for AKS's provider (NAP003, NAP004)."""
    from mlops_lint.model.nap import KARPENTER, is_aks_nodepool

    return once(index, ("nap-in-play", id(config)), lambda: (
        any(obj.group == KARPENTER and is_aks_nodepool(obj) for obj in index.of_kind("NodePool"))
        or managed_cluster(index, config) is not None))
