"""The cluster the project describes: its node pools and the cluster autoscaler profile.

Built once per run (:func:`cluster_of`, memoised on the :class:`~linter.index.ProjectIndex`),
each concept in its own module:

* :mod:`.pools`: the data. :class:`~.pools.NodePool` (one record whatever defined it, with the
  :class:`~.pools.Origin` of each setting), what is known of its labels and taints, and the
  :class:`~.pools.Cluster`;
* one reader per source, each producing pools with their origins, read in this order:
  :mod:`.from_az` (the ``az aks`` commands of the shell scripts, files sorted by path),
  :mod:`.from_terraform` (``azurerm_kubernetes_cluster`` and its node pools in ``*.tf``),
  :mod:`.from_bicep` (``managedClusters`` ``agentPoolProfiles`` and ``agentPools`` in ``*.bicep``
  and in ARM templates, ``*.json`` read by :mod:`linter.sources.arm`),
  :mod:`.from_config` (``node-pools:`` of the config, for pools the scripts do not define, at
  the lines of the config's text when the run lints it; in the ``aks-automatic`` profile only
  these count, SPEC section 5), :mod:`.from_nodepools`
  (node auto-provisioning NodePools, in every profile);
* :mod:`.autoscaler`: the ``--cluster-autoscaler-profile`` keys and values;
* :mod:`.placement`: which pools a pod template can land on, and how messages name them;
* :mod:`.capacity`: what one node of a pool offers.

Unknown is never guessed: a value a source does not determine is UNKNOWN, and rules only
report what holds for every reading. The names the rules use are re-exported here.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Iterable

from mlops_lint.model.cluster.autoscaler import (  # noqa: F401 - re-exported for the rules
    ProfileEntry, autoscaler_profile_keys, parse_duration, profile_entries, profile_value_problem)
from mlops_lint.model.cluster.capacity import (  # noqa: F401 - re-exported for the rules
    Capacity, format_bytes, format_cpu, gpus_of, node_capacity)
from mlops_lint.model.cluster.from_config import config_pools
from mlops_lint.model.cluster.from_nodepools import add_nodepools
from mlops_lint.model.cluster.from_terraform import hint  # noqa: F401 - re-exported for the rules
from mlops_lint.model.cluster.placement import (  # noqa: F401 - re-exported for the rules
    PodPlacement, PoolVerdict, changed_after_creation, describe_pool, known_pools_summary, label_verdict,
    offers, place, resource_anchor, selector_anchor, summarize, taint_note,
    taint_verdict, workload_name)
from mlops_lint.model.cluster.pools import (  # noqa: F401 - re-exported for the rules
    DEFAULT_MAX_GRACEFUL_TERMINATION_SEC, ELSEWHERE, SPOT_TAINT, Cluster, LabelView, NodePool, Origin,
    PoolTaint, ProfileSetting)
from mlops_lint.model.document import BICEP, CONFIG, TERRAFORM
from mlops_lint.model.podrequests import PodRequest, pod_requests  # noqa: F401 - re-exported for the rules

if TYPE_CHECKING:  # the script model is read only when a script exists (see linter.model.unknown)
    from mlops_lint.model.azcli import ShellScript


def build_cluster(scripts: Iterable[ShellScript], config: Any = None, terraform: Iterable[Any] = (),
                  bicep: Iterable[Any] = (), placed: Any = None) -> Cluster:
    """The cluster the scripts (in the given order), the Terraform files and the config describe;
    ``placed``: where the config's text writes its pools (linter.sources.config_pools.ConfigPools),
    when the run lints it."""
    cluster = Cluster()
    automatic = getattr(config, "profile", None) == "aks-automatic"
    if not automatic:
        scripts = list(scripts)
        if scripts:
            from mlops_lint.model.cluster.from_az import read_scripts

            read_scripts(cluster, scripts)
        terraform = list(terraform)
        if terraform:
            from mlops_lint.model.cluster.from_terraform import read_terraform

            read_terraform(cluster, terraform)
        bicep = list(bicep)
        if bicep:
            from mlops_lint.model.cluster.from_bicep import read_bicep

            read_bicep(cluster, bicep)
    pools = getattr(config, "node_pools", ()) or ()
    if pools:
        config_path = getattr(config, "path", None)
        config_pools(cluster, pools, str(config_path) if config_path is not None else ".mlops-lint.yaml", placed)
    return cluster


_CACHE: "weakref.WeakKeyDictionary[Any, tuple[int, Any, Cluster]]" = weakref.WeakKeyDictionary()


def cluster_of(index: Any, config: Any) -> Cluster:
    """The project's cluster, built once per index (and config)."""
    cached = _CACHE.get(index)
    if cached is not None and cached[0] == id(config) and cached[1] is config:
        return cached[2]
    scripts = sorted((d for d in index.scripts if d.shell is not None), key=lambda d: d.path)
    for document in scripts:
        if not document.shell.path:
            document.shell.path = document.path
    iac = sorted((d for d in getattr(index, "iac", ()) if d.iac is not None), key=lambda d: d.path)
    placed = [d.iac for d in iac if d.kind == CONFIG]  # the project's config, when the run lints it
    cluster = build_cluster([d.shell for d in scripts], config, [d.iac for d in iac if d.kind == TERRAFORM],
                            [d.iac for d in iac if d.kind == BICEP], placed[0] if len(placed) == 1 else None)
    add_nodepools(cluster, index)
    cluster.project = (index, config)
    _CACHE[index] = (id(config), config, cluster)
    return cluster

def on_aks_managed_mig_pools(pod: Any, index: Any, config: Any) -> bool:
    """Every pool of the project the pod's labels can reach (among those that may offer what it
    asks for) is made with ``--gpu-instance-profile`` (AKS-managed MIG: a fixed layout, no MIG
    Manager labels). The pools the project does not describe are not counted when one of its
    pools offers the MIG profile asked for: the project says where its MIG slices come from, and
    nothing in it says a MIG Manager runs anywhere (with or without a node selector)."""
    placement = cluster_of(index, config).placement(pod)
    if placement is None:
        return False
    matches = placement.label_matches
    own = [v for v in matches if not v.elsewhere]
    if not own or not all(isinstance(v.pool.gpu_instance_profile, str) and v.pool.gpu_instance_profile for v in own):
        return False
    return len(own) == len(matches) or any(v.offers == "yes" for v in own)


