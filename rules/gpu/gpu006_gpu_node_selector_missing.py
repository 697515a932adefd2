"""A pod requests a GPU but nothing selects GPU nodes for it.

## What it does
Flags pod templates with a container that requests or limits a GPU when neither the
`nodeSelector` nor every term of the required node affinity
(`requiredDuringSchedulingIgnoredDuringExecution`, `In` or `Exists`) pins a GPU node label:
a configured `gpu-node-labels` pair (default `accelerator=nvidia`), a label only GPU nodes carry
(`kubernetes.azure.com/accelerator`, the bare `accelerator`, `sku=gpu` (the AKS docs label GPU
pools as they taint them), any `nvidia.com/…` or `amd.com/…`
label set by GPU feature discovery or the GPU Operator, `karpenter.azure.com/sku-gpu-*`,
`karpenter.azure.com/sku-family=N`, GKE's `cloud.google.com/gke-accelerator`), or
`node.kubernetes.io/instance-type` in GPU VM sizes only. When the project describes the cluster
(`az aks` scripts, Terraform, `node-pools:`, NodePools), a placement whose labels can reach only
the project's GPU pools also counts: a label only its GPU pools carry (`NodeGroupType: gpu` set
by `--labels` on the GPU pool alone), a pool's name (`kubernetes.azure.com/agentpool: gpunp`: a
pool the project does not describe has another name), or `karpenter.sh/nodepool` of a NodePool
whose requirements allow only GPU sizes. A pod queued to Kueue is kept to GPU nodes by the
`nodeLabels` of the flavor holding its GPUs too, when its ClusterQueue gives the GPUs a resource
group of their own (covering a GPU resource the pod asks for, and neither cpu nor memory): Kueue
injects them into its nodeSelector, and they select the nodes whose GPUs that quota counts,
whatever the label (Kueue's HAMi sample's `gpu: "on"`). A flavor without `nodeLabels`, the labels
of a CPU group's flavor, or a flavor for cpu and GPUs alike (a zone, a capacity type) keep it
nowhere in particular.
When the pod has a node selection, or its Kueue flavors inject `nodeLabels` at admission, the
message names them (the flavors too) and says why it is not known to reach only GPU nodes (the non-GPU pools of the project it also
matches, or that none of its labels is known), and that `gpu-node-labels` teaches the label. Preferred node affinity does not: it does not keep a pod off other nodes.
The rule is off in the `aks-automatic` profile. The finding points at `nodeSelector:`, else
`affinity:`, else the pod template's `spec:`.

{{pod-views}}

{{dra-gpus}}

{{placement}}

A pod that asks only for MIG devices (`nvidia.com/mig-…`) and selects no node at all is left to
GPU007, which asks it for the MIG Manager's `nvidia.com/mig.config` labels: those exist only on
GPU nodes, so its fix settles this rule too (one cause, the more specific finding). With
AKS-managed MIG pools, where GPU007 is silent, this rule still judges it.

## Why is this bad?
The article: "A toleration permits scheduling but doesn't force the pod onto a GPU node. Pair
tolerations with a GPU resource request and a node selector or node affinity." A node
selector makes the placement explicit: the pod targets the pool built for it ("targets a node
pool labeled accelerator=nvidia"), the cluster autoscaler knows which pool to scale for a
pending pod, and a GPU pod cannot land on a different GPU pool (a T4 pool instead of the A100
pool, or a MIG pool) whose devices happen to be free.

## Example
```yaml
    spec:
      tolerations:
      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
      containers:
      - name: trainer
        resources:
          limits: {nvidia.com/gpu: 1}
```

Use instead:
```yaml
    spec:
      nodeSelector:
        accelerator: nvidia
      tolerations:
      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
```

## Fix safety
Unsafe. The fix adds the configured `gpu-node-labels` (default `accelerator: nvidia`, the
article's pool label) to the pod's `nodeSelector`, keeping the keys it already selects. It
restricts where the pod may run: on a cluster whose GPU nodes do not carry that label the pod
stays Pending, so it is right only when the label is the GPU pool's; review it, then apply with
`--unsafe-fixes`. No fix when the nodeSelector already sets one of those keys to another value,
when the project's node pools are known (which pool's labels to use is the user's choice, and
XPL001 would judge a guess), or for a TrainJob (its pod spec is the runtime's, shared by other
TrainJobs).

## Known problems
- Set `gpu-node-labels:` to the labels your GPU pools carry; pods that select pools by other
  labels (`NodeGroupType: g5-gpu`) are recognised only when the project's `az aks` scripts,
  Terraform, NodePools or the config's `node-pools:` say that only GPU pools carry them.
- A KAITO `Workspace`'s inference template is not judged: KAITO gives the pods it makes a node
  affinity for the nodes its `resource.labelSelector` selects (the GPU nodes it provisions).
- A pod that names its node (`nodeName`) or selects nodes by `matchFields` is taken to be
  placed, and so is one whose labels match none of the project's pools (XPL001 reports that).
- A pod queued to a ClusterQueue whose resource groups break its schema (SCH002 reports them)
  is not judged: the labels its flavors would inject are unknown, one cause one finding.

## References
- Kubernetes, Assigning pods to nodes: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
- AKS, Use labels in an AKS cluster (`kubernetes.azure.com/accelerator`): https://learn.microsoft.com/azure/aks/use-labels
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.model.admission import admissions, refused_queue
from mlops_lint.model.cluster import cluster_of, on_aks_managed_mig_pools
from mlops_lint.model.gpunodes import gpu_entries, places_on_gpu_nodes
from mlops_lint.model.mig import is_mig_resource
from mlops_lint.model.k8s import PodSpec
from mlops_lint.rule import POD, Finding, rule


def _select(pod: PodSpec, labels, ctx):
    """The configured GPU node labels added to the pod's nodeSelector; none when a label is
    already there with another value (the user's choice), when the project's node pools are known
    (which pool's labels to use is theirs: XPL001 would judge a guess), or for a TrainJob's view
    (its pod spec is a shared runtime's)."""
    if not labels or pod.origin is not None or cluster_of(ctx.index, ctx.config).has_pools:
        return None
    selector = pod.spec.get("nodeSelector")
    if selector is not None and not isinstance(selector, dict):
        return None
    selector = selector or {}
    if any(key in selector and str(selector[key]) != str(value) for key, value in labels.items()):
        return None
    missing = {str(k): str(v) for k, v in labels.items() if k not in selector}
    shown = ", ".join(f"{k}: {v}" for k, v in missing.items())
    return plan(f"add `nodeSelector: {{{shown}}}`",
                *(set_path(pod.spec, ("nodeSelector", key), value) for key, value in missing.items()), safe=False)


@rule(code="GPU006", name="gpu-node-selector-missing", severity="warning", scope=POD, tags=("gpu", "scheduling"))
def check(pod: PodSpec, ctx):
    entries = gpu_entries(pod)
    if not entries or places_on_gpu_nodes(pod, ctx.index, ctx.config) or refused_queue(pod, ctx):
        return  # (queued to a ClusterQueue SCH002 refuses: its flavors' placement is unknown)
    if pod.obj.kind == "Workspace" and pod.obj.group == "kaito.sh":
        return  # KAITO places the inference pods on the nodes its resource.labelSelector selects
    if (all(is_mig_resource(resource.name) for _, _, resource in entries) and not pod.placement.constrained
            and not on_aks_managed_mig_pools(pod, ctx.index, ctx.config)):
        return  # GPU007 asks this MIG pod for the MIG Manager's labels, which only GPU nodes carry
    container, _, resource = entries[0]
    for key in ("nodeSelector", "affinity"):
        if key in pod.spec.kspans:
            span, node = pod.spec.kspans[key], pod.path + (key,)
            break
    else:
        span, node = pod.span, pod.path
    labels = ctx.config.effective_gpu_node_labels
    shown = ", ".join(f"{k}: {v}" for k, v in labels.items()) or "accelerator: nvidia"
    found, injected = _selection(pod), _injected(pod, ctx)
    what, hint = "neither its nodeSelector nor a required node affinity keeps it to GPU nodes", ""
    if injected and found is None:
        what = (f"neither its nodeSelector nor a required node affinity keeps it to GPU nodes, and the nodeLabels "
                f"Kueue injects at admission ({injected}) are not known to either")
        hint = "; if a label of them marks your GPU pools, add that label to `gpu-node-labels` in the config"
    elif found is not None:
        with_injected = f" (with the nodeLabels Kueue injects at admission: {injected})" if injected else ""
        what = f"its {found}{with_injected} is not known to keep it to GPU nodes ({_why(pod, ctx)})"
        hint = "; if a label of it marks your GPU pools, add that label to `gpu-node-labels` in the config"
    yield Finding(
        span,
        f"{pod.describe()} asks for {resource.name} ({container.kind_label} `{container.name}`) but {what}: it may "
        f"wait on, or land in, a pool it is not meant for, and the autoscaler cannot tell which pool to scale for it{hint}",
        node=node,
        fix=f"add `nodeSelector: {{{shown}}}` (the labels of the GPU pool it is meant for)",
        autofix=_select(pod, labels, ctx),
    )


def _selection(pod: PodSpec) -> str | None:
    """The node selection the pod has, as the message names it (None: it has none)."""
    placement = pod.placement
    parts = []
    if placement.node_selector:
        pairs = ", ".join(f"{k}: {v}" for k, v in placement.node_selector.items())
        parts.append(f"nodeSelector `{{{pairs}}}`")
    if placement.terms:
        parts.append("required node affinity")
    return " and ".join(parts) or None


def _injected(pod: PodSpec, ctx) -> str:
    """The nodeLabels Kueue's ResourceFlavors inject into the pod's nodeSelector at admission
    (those it does not select itself), with the flavors of each admission that injects some
    (``linter.model.admission``); empty when none does."""
    own = pod.placement.node_selector
    shown: list[str] = []
    for admission in admissions(pod, ctx.index, ctx.config):
        added = {k: v for k, v in admission.placement.node_selector.items() if own.get(k) != v}
        if not added:
            continue
        pairs = ", ".join(f"{k}: {v}" for k, v in added.items())
        flavors = ", ".join(f"`{name}`" for name in admission.flavors)
        text = f"`{{{pairs}}}` from ResourceFlavor{'s' if len(admission.flavors) > 1 else ''} {flavors}"
        if text not in shown:
            shown.append(text)
    return "; or ".join(shown[:2]) + (f"; or {len(shown) - 2} more" if len(shown) > 2 else "")


def _why(pod: PodSpec, ctx) -> str:
    """Why the selection is not known to reach only GPU nodes: the project's non-GPU pools it
    matches, else that no label of it is one GPU nodes are known to carry."""
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    own = [v.pool for v in placement.selector_matches if not v.elsewhere] if placement is not None else []
    other = [p for p in own if not p.only_gpu_nodes]
    if other:
        names = ", ".join(f"`{p.display}` ({p.describe_vm()})" for p in other[:3])
        more = f" and {len(other) - 3} more" if len(other) > 3 else ""
        return f"it also matches node pool{'s' if len(other) > 1 else ''} {names}{more}, not known to be GPU pools"
    configured = ", ".join(f"{k}={v}" for k, v in ctx.config.effective_gpu_node_labels.items()) or "none"
    return (f"none of its labels is a known GPU node label or one of `gpu-node-labels` ({configured}), "
            "and no node pool of the project shows that only GPU pools carry it")
