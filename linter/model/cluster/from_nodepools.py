"""Node pools from the project's node auto-provisioning NodePools (``karpenter.sh/v1``, read by
:mod:`linter.model.nap`): one pool per VM size their requirements allow."""

from __future__ import annotations

from typing import Any

from mlops_lint.model.cluster.pools import Cluster, NodePool, PoolTaint


def add_nodepools(cluster: Cluster, index: Any) -> None:
    """The project's node auto-provisioning NodePools, as pools (``linter.model.nap``): in the
    ``aks-automatic`` profile too, whose nodes NAP makes."""
    from mlops_lint.model.nap import nodepool_pools

    cluster.pools.extend(nodepool_pools(index.of_kind("NodePool"), NodePool, PoolTaint))
