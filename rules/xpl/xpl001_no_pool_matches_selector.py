"""A pod whose nodeSelector or required node affinity matches no node pool.

## What it does
Builds the cluster's node pools from the project's `az aks` scripts (or `node-pools:` in the
config) and, for each pod template with a `nodeSelector` or a required node affinity, checks the
labels every pool's nodes carry: the pool's `--labels` and the labels AKS sets itself
(`kubernetes.azure.com/agentpool`, `agentpool`, `kubernetes.azure.com/mode`,
`node.kubernetes.io/instance-type`, `kubernetes.io/os`, `kubernetes.azure.com/accelerator=nvidia`
on NVIDIA GPU sizes, `kubernetes.azure.com/scalesetpriority=spot` on Spot pools). Fires when
no pool can match, with Kubernetes' semantics: every nodeSelector entry must hold and, when
there is a required affinity, at least one of its terms (`In`, `NotIn`, `Exists`,
`DoesNotExist`, `Gt`, `Lt`). The message names each pool and the entry that rules it out; the
finding points at the nodeSelector entry no pool has, else at the required affinity.

{{pod-views}}

{{placement}}

## Why is this bad?
A pod that matches no node stays Pending forever, and the cluster autoscaler cannot help: "a
pending GPU pod triggers scale-up only when its complete scheduling requirements match a node
pool template". The article pairs the pool's `--labels accelerator=nvidia workload=training`
with the pod's `nodeSelector` for exactly this reason; a typo on either side (`nvida`,
`gpu-pool` for `gpunp`) is found only when the job never starts.

## Example
```yaml
# the pool: az aks nodepool add --name gpunp --labels accelerator=nvidia workload=training ...
      nodeSelector:
        accelerator: nvidia-a100
```

Use instead:
```yaml
      nodeSelector:
        accelerator: nvidia
        workload: training
```

## Known problems
- Labels outside the pool's `--labels` that carry a DNS prefix (`nvidia.com/gpu.product` from
  GPU feature discovery, `topology.kubernetes.io/zone`, anything added with `kubectl label`) are
  unknown, never taken as absent: a pod selecting them is not flagged. Labels without a prefix
  that `--labels` does not set are taken as absent (the article sets node labels through the
  pool), except the deprecated bare `accelerator` on GPU pools, which AKS may still set.
- When no `az aks create` is in the project, the cluster was created elsewhere and has pools the
  project does not describe (at least its system pool). A pod is then flagged only when it
  selects on a label key the project's own pools set (`accelerator`, `workload`), i.e. it targets
  those pools. With node auto-provisioning (`--node-provisioning-mode Auto`, `--sku automatic`)
  nothing is flagged from scripts; in the `aks-automatic` profile only `node-pools:` of the
  config count.
- Values the scripts do not determine (`--labels team=$TEAM`) are unknown: they may match.
- Pods that name their node (`nodeName`) bypass the scheduler and are not checked.
- Every manifest of the project is taken to run on the clusters its scripts describe (all of
  them together, when the scripts set up several); a repository whose manifests target another
  cluster should lint them with their own config root.

## References
- Kubernetes, Assigning pods to nodes: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
- AKS, Use labels in an AKS cluster: https://learn.microsoft.com/azure/aks/use-labels
"""

from mlops_lint.model.cluster import cluster_of, known_pools_summary, selector_anchor, workload_name
from mlops_lint.model.k8s import PodSpec
from mlops_lint.rule import POD, Finding, rule


@rule(code="XPL001", name="no-pool-matches-selector", severity="error", scope=POD, tags=("cluster", "scheduling"))
def check(pod: PodSpec, ctx):
    if not pod.placement.constrained:
        return
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    if placement is None or placement.selector_matches:
        return
    span, node = selector_anchor(pod, placement.verdicts)
    yield Finding(
        span,
        f"{workload_name(pod)}: no node pool has the nodes it selects, so it stays Pending: "
        f"{known_pools_summary(placement.verdicts)}",
        node=node,
    )
