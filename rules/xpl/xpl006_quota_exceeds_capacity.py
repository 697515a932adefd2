"""A ClusterQueue GPU quota larger than the node pools behind its flavor can ever provide.

## What it does
For each Kueue ClusterQueue, takes every flavor's `nominalQuota` of `nvidia.com/gpu` (or
`amd.com/gpu`) and the node pools the flavor stands for: the pools whose node labels match the
ResourceFlavor's `spec.nodeLabels` (every pool when it has none), with the labels AKS sets
itself (see XPL001). A pool can provide at most `--max-count` nodes when the cluster autoscaler
is on, else its `--node-count`, times the GPUs of one node of its VM size. Fires when the quota
is larger than the sum over the matching pools; the finding points at the `nominalQuota` and
names each pool's share.


A pool is keyed by its cluster and name: the same pool created by several scripts counts once.

## Why is this bad?
Kueue admits workloads against the quota, not against the cluster: with more quota than GPUs,
admitted jobs wait as Pending pods for nodes the autoscaler is not allowed to add, holding their
quota while other teams queue behind them, and gang-scheduled jobs may never start. The article:
"A ClusterQueue quota is a scheduling quota, not an Azure subscription quota. Ensure that the AKS
cluster can provision the underlying VM capacity and that Azure GPU quota is sufficient for the
aggregate admitted workload."

## Example
```yaml
# the pool: az aks nodepool add --name gpunp --node-vm-size Standard_NC4as_T4_v3 --max-count 4 --labels accelerator=nvidia ...
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a-gpu
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: nvidia-gpu          # ResourceFlavor with nodeLabels {accelerator: nvidia}
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 16
```

Use instead:
```yaml
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 4         # or raise the pool's --max-count to 16
```

## Known problems
- Only `nominalQuota` is compared: borrowing through a cohort is capacity another queue lends,
  not new GPUs. Several queues sharing one pool are each compared with the whole pool.
- A pool whose size, VM size or GPU count is unknown, and the pools a cluster made elsewhere has
  beside the project's (unless the flavor selects on a label key the project's pools set), may
  provide any number of GPUs: no finding then. A pool without the autoscaler can be scaled by
  hand; its `--node-count` (3 when not given) is what the scripts describe.
- MIG resources (`nvidia.com/mig-*`) are not compared.

## References
- Kueue, ClusterQueue: https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/
- Kueue, ResourceFlavor: https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/
- AKS, Use the cluster autoscaler: https://learn.microsoft.com/azure/aks/cluster-autoscaler
"""

from mlops_lint.model.cluster import cluster_of, gpus_of, label_verdict
from mlops_lint.model.document import K8sObject
from mlops_lint.model.kueue import INFINITE, flavor_node_labels, is_kueue, named
from mlops_lint.model.quantity import format_quantity, parse_quantity
from mlops_lint.model.selectors import Placement
from mlops_lint.rule import Finding, Kind, rule

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")


def _gpu_quotas(cq: K8sObject):
    """(flavor, resource, quantity, span, node) of each GPU nominalQuota, as written."""
    spec = cq.body.get_map("spec")
    groups = spec.get_seq("resourceGroups") if spec is not None else None
    for gi, group in groups.maps() if groups is not None else ():
        flavors = group.get_seq("flavors")
        for fi, flavor in flavors.maps() if flavors is not None else ():
            resources = flavor.get_seq("resources")
            for ri, resource in resources.maps() if resources is not None else ():
                if resource.get("name") in GPU_RESOURCES and "nominalQuota" in resource:
                    yield (str(flavor.get("name")), resource["name"], parse_quantity(resource["nominalQuota"]),
                           resource.value_span("nominalQuota"),
                           ("spec", "resourceGroups", gi, "flavors", fi, "resources", ri, "nominalQuota"))


def _capacity(labels: dict, resource: str, cluster):
    """(most GPUs the pools matching a flavor's node labels can have, their shares) or None when
    unbounded or unknown."""
    wanted = Placement(labels)
    shares = []
    total = 0
    for pool in [*cluster.pools, *([cluster.elsewhere] if cluster.elsewhere is not None else [])]:
        if label_verdict(wanted, pool.label_view())[0] == "no":
            continue
        nodes, per_node = pool.max_nodes(), gpus_of(pool, resource)
        if pool.source == "elsewhere" or per_node is None:
            return None
        if per_node == 0:
            continue  # a CPU pool (or another vendor's GPUs) adds nothing, however large
        if nodes is None:
            return None
        total += nodes * per_node
        shares.append(f"`{pool.display}` ({nodes} node{'s' * (nodes != 1)} x {per_node} GPU{'s' * (per_node != 1)})")
    return total, shares


@rule(code="XPL006", name="quota-exceeds-capacity", severity="warning", scope=Kind("ClusterQueue"),
      tags=("cluster", "queues", "gpu"))
def check(cq: K8sObject, ctx):
    if not is_kueue(cq, "ClusterQueue"):
        return
    cluster = cluster_of(ctx.index, ctx.config)
    if not cluster.has_pools:
        return
    for flavor_name, resource, quota, span, node in _gpu_quotas(cq):
        flavors = named(ctx.index, "ResourceFlavor", flavor_name, cq)
        if quota is None or quota == INFINITE or not flavors:
            continue
        wanted = flavor_node_labels(flavors[0])
        found = cluster.memo(("XPL006", tuple(wanted.items()), resource), lambda: _capacity(wanted, resource, cluster))
        if found is None or quota <= found[0]:
            continue
        total, shares = found
        labels = ", ".join(f"{k}={v}" for k, v in flavor_node_labels(flavors[0]).items()) or "none: every node"
        pools = "; ".join(shares) or f"no matching node pool has {resource}"
        yield Finding(
            span,
            f"ClusterQueue `{cq.name}` gives flavor `{flavor_name}` a nominalQuota of {format_quantity(quota)} "
            f"{resource}, "
            f"but the node pools its nodeLabels ({labels}) match can have at most {total}: {pools}; lower the quota "
            "or raise the pools' --max-count",
            node=node,
        )
