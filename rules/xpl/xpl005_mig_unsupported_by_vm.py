"""A pod asking for a MIG profile that no node pool it can land on can provide.

## What it does
For each pod template that requests a MIG instance (`nvidia.com/mig-<profile>`, the device
plugin's mixed strategy), checks the GPU of every node pool the pod can land on (labels,
required node affinity, taints) against NVIDIA's MIG catalogue: a pool provides the profile only
when its VM size's GPU supports MIG (A100, H100, H200, GB200, RTX PRO 6000 Blackwell; not T4,
V100, A10 or AMD MI300X) and offers that profile (an A100 40GB has `1g.5gb`, not `1g.10gb`), and,
when the pool was created with AKS-managed MIG (`--gpu-instance-profile MIG<n>g`), when the
profile is the one that setting gives. Fires when every such pool is known and none provides
it; the finding points at the MIG request and names each pool's GPU and profiles.

{{pod-views}}

{{placement}}

## Why is this bad?
No node ever advertises the resource, so the pod stays Pending: the article notes that "the
exact profile names and number of instances depend on the GPU model and memory capacity" and
that MIG partitions "a supported A100 or H100 GPU"; its seven `1g.10gb` instances exist only on
80-GB A100 or H100 GPUs. A job written for one GPU generation and scheduled onto another pool,
or onto a pool of T4s, waits forever.

## Example
```yaml
# the pool: az aks nodepool add --name gpunp --node-vm-size Standard_NC4as_T4_v3 --labels accelerator=nvidia ...
      nodeSelector:
        accelerator: nvidia
      containers:
      - name: trial
        resources:
          limits:
            nvidia.com/mig-1g.10gb: 1
```

Use instead:
```yaml
# az aks nodepool add --name a100np --node-vm-size Standard_NC24ads_A100_v4 --labels accelerator=nvidia-a100 ...
      nodeSelector:
        accelerator: nvidia-a100
      containers:
      - name: trial
        resources:
          limits:
            nvidia.com/mig-1g.10gb: 1
```

## Known problems
- The MIG layout applied to a node (MIG Manager's `nvidia.com/mig.config` label) is not known
  from the scripts; this rule only checks that the GPU can offer the profile at all.
- Pools whose VM size is unknown, and pools a cluster made elsewhere has beside the project's,
  may provide it: no finding then. Profile names that are not MIG names at all are GPU008's.

## References
- NVIDIA, MIG supported profiles: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html
- AKS, Create a multi-instance GPU node pool: https://learn.microsoft.com/azure/aks/gpu-multi-instance
"""

from mlops_lint.model.cluster import cluster_of, pod_requests, resource_anchor, taint_note, workload_name
from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.mig import aks_instance_profile, is_mig_resource, normalise_profile, profiles_for
from mlops_lint.rule import POD, Finding, rule


def _why_not(pool, profile: str) -> str | None:
    """Why ``pool`` cannot provide ``profile`` (None when it can, or when that is unknown)."""
    vm = pool.vm
    if vm is None:
        return None
    if not vm.is_gpu:
        return f"`{pool.display}` ({vm.name}) has no GPU"
    if not vm.mig_capable:
        return f"`{pool.display}` ({vm.name}) has {vm.gpu_model} GPUs, which have no MIG"
    offered = profiles_for(vm.gpu_key or "")
    if not offered:
        return None  # a MIG GPU whose profiles the catalogue does not list
    if profile not in offered:
        names = ", ".join(sorted(offered, key=lambda n: (offered[n].compute_slices, n)))
        return f"`{pool.display}` ({vm.name}, {vm.gpu_model}) offers {names}"
    setting = pool.gpu_instance_profile
    if isinstance(setting, str) and setting:
        given = aks_instance_profile(vm.gpu_key or "", setting)
        if given is not None and given.name != profile:
            return f"`{pool.display}` partitions its GPUs with --gpu-instance-profile {setting} ({given.name})"
    return ""


@rule(code="XPL005", name="mig-unsupported-by-vm", severity="error", scope=POD, tags=("cluster", "gpu", "mig"))
def check(pod: PodSpec, ctx):
    requests = {name: r for name, r in pod_requests(pod).items() if is_mig_resource(name)}
    if not requests:
        return
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    pools = placement.known_candidates if placement is not None else None
    if not pools:
        return
    for name, request in requests.items():
        profile = normalise_profile(name)
        if profile is None:
            continue
        reasons = placement.memo(("XPL005", profile), lambda: [_why_not(v.pool, profile) for v in pools])
        if any(reason is None or reason == "" for reason in reasons):
            continue
        span, node = resource_anchor(request)
        yield Finding(
            span,
            f"{workload_name(pod)}: no node pool it can land on provides MIG profile {profile} ({name}), so the "
            f"pod stays Pending: {'; '.join(reasons)}{taint_note(placement)}",
            node=node,
        )
