"""Node pools from ``node-pools:`` of the config (SPEC section 3), for pools the scripts do not
define. In the ``aks-automatic`` profile only these (and the NodePools) count (SPEC section 5)."""

from __future__ import annotations

from typing import Any, Iterable

from mlops_lint.model.cluster.pools import Cluster, NodePool, PoolTaint
from mlops_lint.model.selectors import parse_taint


def config_pools(cluster: Cluster, pools: Iterable[dict[str, Any]], path: str) -> None:
    """Add the config's pools to ``cluster`` (a name the scripts or Terraform define is theirs)."""
    names = {p.name for p in cluster.pools if p.in_linted_file}
    for entry in pools:
        name = str(entry.get("name", ""))
        if name in names:
            continue  # the scripts define it
        labels = {str(k): str(v) for k, v in (entry.get("labels") or {}).items()}
        taints = [t for t in (parse_taint(text) for text in entry.get("taints") or ()) if t is not None]
        autoscaler = bool(entry.get("enable-cluster-autoscaler", "min-count" in entry or "max-count" in entry))
        pool = NodePool(
            name=name, display=name, cluster=None, source="config", path=path,
            mode=str(entry.get("mode", "User")).capitalize(),
            vm_size=str(entry["vm-size"]) if entry.get("vm-size") else None,
            labels=labels, taints=[PoolTaint(t, None) for t in taints],
            node_count=entry.get("node-count", 3 if not autoscaler else None),
            min_count=entry.get("min-count"), max_count=entry.get("max-count"),
            autoscaler=autoscaler, spot=str(entry.get("priority", "Regular")).lower() == "spot",
            max_pods=entry.get("max-pods"), os_type=str(entry.get("os-type", "Linux")),
            gpu_instance_profile=entry.get("gpu-instance-profile"), gpu_driver=entry.get("gpu-driver"),
        )
        cluster.pools.append(pool)
        cluster.complete = True
