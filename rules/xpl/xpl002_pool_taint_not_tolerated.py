"""A pod that every node pool it could land on repels with a taint.

## What it does
For each pod template, takes the node pools whose labels its `nodeSelector` and required node
affinity allow (see XPL001) and checks their taints against the pod's tolerations, as the
scheduler does (`Toleration.ToleratesTaint`: an empty effect matches every effect, `Exists`
ignores the value, an empty key with `Exists` tolerates everything). Taints are the pool's
`--node-taints` and the `kubernetes.azure.com/scalesetpriority=spot:NoSchedule` taint AKS adds
to Spot pools; `NoSchedule` and `NoExecute` repel, `PreferNoSchedule` does not. Fires when at
least one pool matches the labels and each of them has a taint the pod does not tolerate. The
message names every pool and its untolerated taints; the finding points at `tolerations:`, else
at the pod template's `spec:`.

{{pod-views}}

{{placement}}

## Why is this bad?
The pod stays Pending: "a toleration permits scheduling", and without it the GPU pool's
`sku=gpu:NoSchedule` taint, which the article puts there "to repel workloads that don't
explicitly tolerate GPU nodes", repels this workload too. The usual cause is a GPU job that
selects the GPU pool but forgot (or misspelt) the toleration, or a Spot pool whose AKS taint is
not tolerated.

## Example
```yaml
# the pool: az aks nodepool add --name gpunp --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule
      nodeSelector:
        accelerator: nvidia
      containers:
      - name: trainer
```

Use instead:
```yaml
      nodeSelector:
        accelerator: nvidia
      tolerations:
      - key: sku
        operator: Equal
        value: gpu
        effect: NoSchedule
```

## Known problems
- A pool whose taints a script leaves undetermined (`--node-taints "$TAINTS"`), and the pools a
  cluster made elsewhere has beside the project's, may take the pod: no finding then.
- Taints added outside the scripts (`kubectl taint`, the GPU Operator) are not seen.
- Pods that name their node (`nodeName`) bypass the scheduler and are not checked.
- A GPU pod repelled this way is not also reported by GPU005 (which judges the configured GPU
  taints when the pools are not known): one cause, this finding, which names the pools.

## References
- Kubernetes, Taints and tolerations: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- AKS, Use node taints: https://learn.microsoft.com/azure/aks/use-node-taints
- AKS, Spot node pools: https://learn.microsoft.com/azure/aks/spot-node-pool
"""

from mlops_lint.model.cluster import cluster_of, known_pools_summary, workload_name
from mlops_lint.model.k8s import PodSpec
from mlops_lint.rule import POD, Finding, rule


def _toleration(taint) -> str:
    value = f"\n  operator: Equal\n  value: {taint.value}" if taint.value else "\n  operator: Exists"
    return f"- key: {taint.key}{value}\n  effect: {taint.effect}"


@rule(code="XPL002", name="pool-taint-not-tolerated", severity="error", scope=POD, tags=("cluster", "scheduling"))
def check(pod: PodSpec, ctx):
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    if placement is None:
        return
    if not placement.repelled_everywhere:
        return
    matching = placement.label_matches
    spec = pod.spec
    span = spec.key_span("tolerations") if "tolerations" in spec.kspans else pod.span
    first = matching[0].untolerated[0]
    yield Finding(
        span,
        f"{workload_name(pod)}: every node pool its node selection allows has a taint it does not tolerate, "
        f"so it stays Pending: "
        f"{known_pools_summary(matching)}",
        node=pod.path + ("tolerations",),
        fix=_toleration(first),
    )
