"""The pools node auto-provisioning can make a pod's node from (NAP002-NAP004).

:func:`provisioning_cluster` is a cluster model of its own: the project's NodePools for AKS's
provider (:mod:`linter.model.nap`) and, where the project's nodes are NAP's, AKS's ``default``
NodePool; :func:`hosts` names the NodePools a pod may land on. Kept out of the cluster package
(which :mod:`linter.model.nap` serves) so that neither imports the other back.
"""

from __future__ import annotations

from typing import Any

from mlops_lint.model.cluster.pools import LabelView
from mlops_lint.model.nap import KARPENTER, NODEPOOL_LABEL, excludes_gpu, is_aks_nodepool, nodepool_pools
from mlops_lint.model.selectors import Requirement
from mlops_lint.model.unknown import UNKNOWN

# AKS's own NodePool when node auto-provisioning is on (``--node-provisioning-default-pools Auto``,
# AKS Automatic): on-demand, linux, amd64, the D family only (facts: aks-platform.md, section E)
AKS_DEFAULT_NODEPOOL = "default"
# label domains a node NAP makes may carry beyond its NodePool's: Kubernetes', Karpenter's and AKS's
# well-known labels, and those GPU feature discovery or the GPU Operator add once the node runs
NODE_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.azure.com", "kubernetes.azure.com",
                      "nvidia.com", "amd.com", "azure.com")
_DEFAULT_SIZE = "Standard_D4s_v5"  # a size of the D family: what the default NodePool offers (no GPU)


def provisioning_cluster(index: Any, config: Any) -> Any:
    """The pools node auto-provisioning can make nodes from: the project's NodePools for AKS's
    provider (one pool per size, as the cluster model reads them; a label key a requirement lets
    Karpenter choose is unknown, not absent) and, in a project whose nodes NAP makes
    (:func:`linter.model.cluster.modes.managed_cluster`), AKS's ``default`` NodePool (D family,
    no GPU) unless the project writes its own. Nothing else: the pools of an Automatic cluster are its
    NodePools. Built once per index and config (NAP002)."""
    from mlops_lint.model.memo import once

    return once(index, ("nap-provisioning-cluster", id(config)), lambda: _provisioning(index, config))


def _provisioning(index: Any, config: Any) -> Any:
    from mlops_lint.model.cluster.pools import Cluster, NodePool, PoolTaint

    objects = [obj for obj in index.of_kind("NodePool") if obj.group == KARPENTER and is_aks_nodepool(obj)]
    pools = nodepool_pools(objects, NodePool, PoolTaint)
    for pool in pools:
        if pool.vm_size is UNKNOWN and excludes_gpu(pool.requirements):
            pool.vm_size = _DEFAULT_SIZE  # no GPU size: judged as a node without GPUs (offers no GPU)
        for req in pool.requirements:
            if req.operator != "DoesNotExist" and req.key not in pool.template_label_keys \
                    and not (req.operator == "In" and len(req.values) == 1):
                pool.labels.setdefault(req.key, UNKNOWN)
    from mlops_lint.model.cluster.modes import managed_cluster

    # AKS's default NodePool is assumed where the project's nodes are NAP's (the profile, or a cluster
    # it makes Automatic or NAP): a NodePool alone may be another repository's linted in the same tree
    for pool in pools:
        pool.__dict__["_view"] = _closed_view(pool.label_view())
    if managed_cluster(index, config) is not None and not any(obj.name == AKS_DEFAULT_NODEPOOL for obj in objects):
        family = Requirement("karpenter.azure.com/sku-family", "In", ("D",))
        pools.append(NodePool(
            name=AKS_DEFAULT_NODEPOOL, display="default (AKS's, D family only)", cluster=None, source="nodepool",
            path="", vm_size=_DEFAULT_SIZE, autoscaler=True, requirements=(family,),
            labels={NODEPOOL_LABEL: AKS_DEFAULT_NODEPOOL, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                    "karpenter.sh/capacity-type": "on-demand", "karpenter.azure.com/sku-family": "D",
                    "karpenter.azure.com/sku-gpu-count": "0"}))
    cluster = Cluster(pools=pools, complete=True)
    cluster.project = (index, config)
    return cluster


def hosts(pod: Any, index: Any, config: Any) -> list[tuple[str, Any]]:
    """The NodePools node auto-provisioning may put ``pod`` on (labels, taints and what they
    offer allow it; :func:`provisioning_cluster`): (name, the NodePool object, or None for AKS's
    default NodePool), each once, in project order. Empty when none can take it (NAP002's)."""
    placement = provisioning_cluster(index, config).placement(pod)
    if placement is None:
        return []
    found: dict[str, Any] = {}
    for verdict in placement.verdicts:
        if verdict.possible and verdict.offers != "no":
            found.setdefault(str(verdict.pool.name), verdict.pool.nodepool)
    return list(found.items())


class NapLabelView(LabelView, frozen=True):
    """A NodePool's label view where a key of another domain (``cloud.google.com/…``,
    ``eks.amazonaws.com/…``) is absent, not unknown: Karpenter makes a node only with labels its
    NodePool sets or well-known ones, so no node of AKS's provider carries it."""

    def state(self, key: str) -> tuple[str, str | None]:
        found = LabelView.state(self, key)
        if found[0] == "unknown" and key not in self.unknown and "/" in key and not _known_domain(key):
            return "absent", None
        return found


def _closed_view(view: LabelView) -> NapLabelView:
    return NapLabelView(view.known, view.absent, view.unknown, view.open, view.closed_keys, view.excluded)


def _known_domain(key: str) -> bool:
    domain = key.split("/", 1)[0].lower()
    return any(domain == d or domain.endswith("." + d) for d in NODE_LABEL_DOMAINS)
