"""A pod asking for more GPUs than any node pool it can land on has per node.

## What it does
For each pod template that requests `nvidia.com/gpu` or `amd.com/gpu`, takes the pod's effective
request (Kubernetes' rule: the sum over app containers and native sidecars, or the largest init
container if that is more; a limit alone counts as the request) and the node pools the pod can
land on (labels, required node affinity and taints, as XPL001/XPL002 read them). Fires when every
such pool is known and none has that many GPUs of that vendor on one VM, from the VM size
catalogue (`Standard_NC4as_T4_v3`: 1, `Standard_NC64as_T4_v3`: 4, `Standard_ND96isr_H100_v5`: 8;
CPU sizes: 0). The finding points at the container's GPU request and names each pool's count.
MIG resources (`nvidia.com/mig-*`) are XPL005's. GPUs a pod takes through Dynamic Resource
Allocation (a `ResourceClaimTemplate` or `ResourceClaim` of the project whose request names the
`gpu.nvidia.com` device class, or a `DeviceClass` selecting that driver) count as `nvidia.com/gpu`,
as many as the claim's `count` says (each claim once per pod, however many containers use it);
the finding then points at the container's `resources.claims` entry.

{{pod-views}}

{{placement}}

## Why is this bad?
One pod runs on one node: a pod asking for 2 GPUs never fits a 1-GPU VM, however far the pool
scales out, so it stays Pending and the autoscaler never finds a node group to grow. The article
asks to "select an NC-series size based on GPU memory, GPU count, CPU-to-GPU ratio" and to
"align replica counts with the number of GPUs and processes required"; multi-GPU training needs
a multi-GPU size or more replicas with fewer GPUs each.

## Example
```yaml
# the pool: az aks nodepool add --name gpunp --node-vm-size Standard_NC4as_T4_v3 ...
        resources:
          limits:
            nvidia.com/gpu: 4
```

Use instead:
```yaml
# az aks nodepool add --name gpunp4 --node-vm-size Standard_NC64as_T4_v3 ...  (4 x T4)
        resources:
          limits:
            nvidia.com/gpu: 4
```

## Known problems
- GPU sharing changes what a node advertises: with the GPU Operator's time-slicing or MPS
  (`replicas:` in the device plugin config), one GPU appears as several `nvidia.com/gpu`. Such a
  cluster is not described by `az` scripts; suppress the rule for it.
- Fractional NVads A10 v5 sizes count as one GPU (what the device plugin advertises for a vGPU
  partition).
- Pools whose VM size is unknown (not in the catalogue, or a value the script does not determine)
  and pools a cluster made elsewhere has beside the project's may fit: no finding then.

## References
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- Azure, GPU-accelerated VM sizes: https://learn.microsoft.com/azure/virtual-machines/sizes/overview#gpu-accelerated
"""

from fractions import Fraction

from msgspec import Struct

from mlops_lint.model.cluster import cluster_of, gpus_of, pod_requests, resource_anchor, taint_note, workload_name
from mlops_lint.model.dra import ClaimedGpu, claimed_gpus
from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.quantity import format_quantity
from mlops_lint.rule import POD, Finding, rule

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")


def _counts(pools, name):
    """(pool, GPUs of ``name`` per node) of each candidate pool, and the most (None when a pool's
    count is unknown): the same for every pod of one placement."""
    counts = [(v.pool, gpus_of(v.pool, name)) for v in pools]
    most = None if any(count is None for _, count in counts) else max(count for _, count in counts)
    return counts, most


class _Claimed(Struct, frozen=True):
    """The GPUs of a pod's resource claims, read like a PodRequest."""

    amount: Fraction
    entry: ClaimedGpu


def _claimed(pod: PodSpec):
    """The pod's GPUs through resource claims of the NVIDIA GPU class (each claim and request once)."""
    seen, total, first = set(), Fraction(0), None
    for container in pod.containers:
        for claimed in claimed_gpus(container):
            if claimed.device_class != "gpu.nvidia.com":
                continue  # MIG devices are not whole GPUs
            if claimed.value is None:
                return None  # allocationMode: All
            if (claimed.claim, claimed.name) not in seen:
                seen.add((claimed.claim, claimed.name))
                total += claimed.value
                first = first or claimed
    return _Claimed(total, first) if first is not None else None


def _anchor(request):
    if isinstance(request, _Claimed):
        return request.entry.key_span, request.entry.node
    return resource_anchor(request)


@rule(code="XPL003", name="gpu-count-exceeds-vm", severity="error", scope=POD, tags=("cluster", "gpu"))
def check(pod: PodSpec, ctx):
    requests = {name: r for name, r in pod_requests(pod).items() if name in GPU_RESOURCES}
    claimed = _claimed(pod)
    if claimed is not None:
        own = requests.get("nvidia.com/gpu")
        requests["nvidia.com/gpu"] = _Claimed(claimed.amount + (own.amount if own is not None else 0), claimed.entry)
    if not requests:
        return
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    pools = placement.known_candidates if placement is not None else None
    if not pools:
        return
    for name, request in requests.items():
        counts, most = placement.memo(("XPL003", name), lambda: _counts(pools, name))
        if most is None or most >= request.amount:
            continue
        shown = "; ".join(f"`{pool.display}` ({pool.describe_vm()}) has {count or 'no'} {name}"
                          for pool, count in counts)
        tainted = [v for v in placement.verdicts if v.labels != "no" and v.taints == "no" and not v.elsewhere
                   and (gpus_of(v.pool, name) or 0) >= request.amount]
        advice = (f"tolerate {tainted[0].untolerated[0]} to use `{tainted[0].pool.display}`" if tainted
                  else "use a VM size with enough GPUs or fewer GPUs per pod")
        span, node = _anchor(request)
        yield Finding(
            span,
            f"{workload_name(pod)}: each pod asks for {format_quantity(request.amount)} {name}, more than one node "
            f"of any pool it can land on has: {shown}{taint_note(placement)}; {advice}",
            node=node,
        )
