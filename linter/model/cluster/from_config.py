"""Node pools from ``node-pools:`` of the config (SPEC section 3), for pools the scripts do not
define. In the ``aks-automatic`` profile only these (and the NodePools) count (SPEC section 5).

The values are the config's (read and validated by :mod:`linter.config`). When the run lints the
config file (a ``.mlops-lint.yaml`` under the PATHs, :func:`linter.engine.projects.add_configs`),
its loader (:mod:`linter.sources.config_pools`) gives them as its text holds them (a fix run's
text may have changed since the config was loaded) and says where each entry writes each setting: every
setting then has its :class:`Origin` (the key's span, the value's span) in the config's display
path, the pool counts as defined in a linted file (``source == "config"``, ``in_linted_file``),
and the AKS rules report on it there as on a script's or a ``.tf`` file's pool. An entry whose
place is not known (a ``pyproject.toml`` config, an excluded one, an item the text does not
match) stays a cluster fact, as before.

The config's own reading of the autoscaler: ``min-count``/``max-count`` without
``enable-cluster-autoscaler`` mean the pool autoscales (SPEC's ``max-count: 4``), and then a bound
left out is not known rather than missing; ``enable-cluster-autoscaler`` written says it as the
CLI's switch does (``autoscaler_origin``).
"""

from __future__ import annotations

from typing import Any, Iterable

from mlops_lint.model.cluster.pools import Cluster, NodePool, Origin, PoolTaint
from mlops_lint.model.selectors import parse_taint

COUNTS = {"node-count": "node_count", "min-count": "min_count", "max-count": "max_count"}  # as count_origin names them


def _placed(placed: Any, index: int, name: str) -> Any:
    """The mapping the config's text writes entry ``index`` with, when it is that entry."""
    entries = getattr(placed, "entries", None) or ()
    entry = entries[index] if index < len(entries) else None
    if entry is None or str(entry.get("name", "")) != name:
        return None
    return entry


def config_pools(cluster: Cluster, pools: Iterable[dict[str, Any]], path: str, placed: Any = None) -> None:
    """Add the config's pools to ``cluster`` (a name the scripts or Terraform define is theirs);
    ``placed``: where the config's text writes them (:class:`linter.sources.config_pools.ConfigPools`)."""
    names = {p.name for p in cluster.pools if p.in_linted_file}
    values = getattr(placed, "values", None)
    if values is not None and len(values) == len(getattr(placed, "entries", ())):
        pools = values  # as the linted text holds them
    for index, entry in enumerate(pools):
        name = str(entry.get("name", ""))
        if name in names:
            continue  # the scripts define it
        labels = {str(k): str(v) for k, v in (entry.get("labels") or {}).items()}
        taints = [t for t in (parse_taint(text) for text in entry.get("taints") or ()) if t is not None]
        autoscaler = bool(entry.get("enable-cluster-autoscaler", "min-count" in entry or "max-count" in entry))
        written = _placed(placed, index, name)
        where = (lambda key: Origin(placed.path, written.key_span(key), written.vspans.get(key))
                 if key in written.kspans else None) if written is not None else (lambda key: None)
        taints_origin = where("taints")
        pool = NodePool(
            name=name, display=name, cluster=None, source="config",
            path=placed.path if written is not None else path,
            origin=Origin(placed.path, written.key_span("name")) if written is not None else None,
            mode=str(entry.get("mode", "User")).capitalize(), mode_origin=where("mode"),
            vm_size=str(entry["vm-size"]) if entry.get("vm-size") else None, vm_origin=where("vm-size"),
            labels=labels, labels_origin=where("labels"),
            taints=[PoolTaint(t, taints_origin) for t in taints], taints_origin=taints_origin,
            node_count=entry.get("node-count", 3 if not autoscaler else None),
            min_count=entry.get("min-count"), max_count=entry.get("max-count"),
            count_origin={COUNTS[key]: origin for key in COUNTS if (origin := where(key)) is not None},
            autoscaler=autoscaler, autoscaler_origin=where("enable-cluster-autoscaler"),
            spot=str(entry.get("priority", "Regular")).lower() == "spot",
            max_pods=entry.get("max-pods"), os_type=str(entry.get("os-type", "Linux")),
            gpu_instance_profile=entry.get("gpu-instance-profile"), gpu_driver=entry.get("gpu-driver"),
            entry=written,
        )
        cluster.pools.append(pool)
        cluster.complete = True
