"""A pod requesting more CPU or memory than a node of any pool it can land on offers.

## What it does
For each pod template, takes its effective `cpu` and `memory` requests (Kubernetes' rule: the
sum over app containers and native sidecars, or the largest init container if that is more; a
limit alone counts as the request) and the node pools the pod can land on (labels, required node
affinity, taints). Fires when every such pool is known and one node of none of them can hold the
request. A node's capacity comes from its VM size: the GPU size catalogue, or for CPU sizes the
vCPUs in the name and the family's memory per vCPU (`Standard_D8s_v5`: 8 vCPUs, 32 GiB). By
default AKS's node reservations are subtracted, as the scheduler sees them (node allocatable):
kube-reserved CPU (140m on 4 cores, 260m on 16 …) and kube-reserved memory plus the kubelet's
eviction threshold. The finding points at the request of the container asking the most.

{{pod-views}}

{{placement}}

## Why is this bad?
The scheduler places a pod only on a node whose allocatable resources cover its requests; a
pod larger than every node stays Pending, and the autoscaler cannot add a node that would fit
("a pending GPU pod triggers scale-up only when its complete scheduling requirements match a node
pool template. Check the GPU resource request, VM capacity …"). The article's own example asks
for 4 CPUs on a 4-vCPU `Standard_NC4as_T4_v3` node, which AKS's reservation leaves with 3.86.

## Example
```yaml
# the pool: az aks nodepool add --name gpunp --node-vm-size Standard_NC4as_T4_v3 ...  (4 vCPUs, 28 GiB)
        resources:
          requests:
            cpu: "4"
            memory: 16Gi
            nvidia.com/gpu: 1
```

Use instead:
```yaml
        resources:
          requests:
            cpu: "3"
            memory: 16Gi
            nvidia.com/gpu: 1
```

## Options
- `subtract-aks-reserved` (boolean): compare requests with node allocatable, i.e. the VM less
  AKS's kube-reserved CPU and memory and the eviction threshold (default `true`); `false`
  compares with the whole VM. Memory reservation follows the config's `kubernetes-version`
  (before 1.29 AKS reserves a tiered share of memory and 750 Mi; from 1.29, 20 MB per pod and
  100 Mi), and, without one, the smaller 1.29+ rule with the pool's `--max-pods` (30 when unset,
  the smallest CLI default).

## Known problems
- DaemonSets take their share of every node too; their requests are not subtracted, so a pod
  just below allocatable may still not fit.
- Pools whose VM size is unknown, B- and M-series sizes (whose memory the name does not tell),
  and pools a cluster made elsewhere has beside the project's may fit: no finding then.
- Azure prints some VM memory in "GB" and some in "GiB" for the same kind of number; both are
  read as GiB, the larger reading.

## References
- Kubernetes, Resource management for pods and containers: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
- AKS, Node resource reservations: https://learn.microsoft.com/azure/aks/node-resource-reservations
- Azure, VM size naming conventions: https://learn.microsoft.com/azure/virtual-machines/vm-naming-conventions
"""

from mlops_lint.model.cluster import (cluster_of, format_bytes, format_cpu, node_capacity, pod_requests, resource_anchor,
                                  taint_note, workload_name)
from mlops_lint.model.k8s import PodSpec
from mlops_lint.rule import POD, Finding, rule


def _shown(resource, amount):
    return format_cpu(amount) if resource == "cpu" else format_bytes(amount)


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _capacities(pools, subtract, version):
    """One node's capacity per candidate pool, and per resource the largest (None when a pool's
    is unknown: the pod may fit there). The same for every pod of one placement."""
    capacities = [(v.pool, node_capacity(v.pool, subtract_reserved=subtract, kubernetes_version=version))
                  for v in pools]
    largest = {}
    for name in ("cpu", "memory"):
        amounts = [getattr(cap, name) if cap is not None else None for _, cap in capacities]
        largest[name] = None if any(amount is None for amount in amounts) else max(amounts)
    return capacities, largest


@rule(code="XPL004", name="pod-exceeds-node", severity="error", scope=POD, tags=("cluster", "resources"),
      options={"subtract-aks-reserved": bool}, defaults={"subtract-aks-reserved": True})
def check(pod: PodSpec, ctx):
    requests = {name: r for name, r in pod_requests(pod).items() if name in ("cpu", "memory")}
    if not requests:
        return
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    pools = placement.known_candidates if placement is not None else None
    if not pools:
        return
    subtract = ctx.options["subtract-aks-reserved"]
    version = ctx.config.kubernetes_version
    capacities, largest = placement.memo(("XPL004", subtract, _hashable(version)),
                                         lambda: _capacities(pools, subtract, version))
    for name, request in requests.items():
        most = largest[name]
        if most is None or request.amount <= most:
            continue
        parts = []
        for pool, cap in capacities:
            whole = f"{cap.vm_cpu} vCPUs" if name == "cpu" else _shown(name, cap.vm_memory)
            shown = f"{_shown(name, getattr(cap, name))} allocatable of {whole}" if subtract else whole
            parts.append(f"`{pool.display}` ({pool.describe_vm()}): {shown}")
        span, node = resource_anchor(request)
        yield Finding(
            span,
            f"{workload_name(pod)}: each pod requests {name} {_shown(name, request.amount)}, more than one node of any "
            f"pool it can land on offers: {'; '.join(parts)}{taint_note(placement)}; lower the request or use a larger "
            "VM size",
            node=node,
        )
