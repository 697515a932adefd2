"""A pod requests a GPU but tolerates none of the GPU nodes' taints.

## What it does
Flags pod templates with a container that requests or limits a GPU (`nvidia.com/gpu`,
`nvidia.com/mig-<profile>`, `amd.com/gpu`; a zero quantity is no request) when none of its
tolerations tolerates a GPU taint: the configured `gpu-taints` (default `sku=gpu:NoSchedule`,
the article's pool taint) or a taint GPU nodes are known to carry (`nvidia.com/gpu`,
`amd.com/gpu`, `kubernetes.azure.com/accelerator` or `gpu` with any value). Tolerations match as
Kubernetes matches them: an empty effect covers every effect, `operator: Exists` ignores the
value, `operator: Exists` without a key tolerates everything. The finding points at
`tolerations:` when the pod has some, else at the GPU request.

{{pod-views}}

{{dra-gpus}}

{{placement}}

## Why is this bad?
GPU pools are tainted so that "ordinary application pods" stay away from expensive GPU nodes
(the article's pool carries `sku=gpu:NoSchedule`). A GPU pod without the matching toleration is
repelled by every GPU node and stays Pending, and the cluster autoscaler will not add a GPU node
for it either, since the new node would carry the same taint. The article's GPU pods all carry
`key: sku, operator: Equal, value: gpu, effect: NoSchedule`.

## Example
```yaml
    spec:
      nodeSelector:
        accelerator: nvidia
      containers:
      - name: trainer
        resources:
          limits:
            nvidia.com/gpu: 1
```

Use instead:
```yaml
    spec:
      nodeSelector:
        accelerator: nvidia
      tolerations:
      - key: sku
        operator: Equal
        value: gpu
        effect: NoSchedule
      containers:
      - name: trainer
        resources:
          limits:
            nvidia.com/gpu: 1
```

## Fix safety
Safe, when one GPU taint is configured (the default `sku=gpu:NoSchedule`). The fix appends that
taint's toleration to the pod's `tolerations` (creating the list): `{key: sku, operator: Equal,
value: gpu, effect: NoSchedule}` for the default, the article's toleration. A toleration only
lets the pod onto nodes that carry the taint; where it goes is still decided by its node
selection (GPU006), so the fix does exactly what the finding asks. No fix when several GPU
taints are configured (which pool the pod is for is not known), for a TrainJob (its pod spec is
the runtime's, shared by other TrainJobs), or when `tolerations` is not a list.

## Known problems
- Set `gpu-taints:` to the taints your GPU pools really carry; `gpu-taints: []` says they carry
  none, and the rule is silent.
- When the project describes the cluster (`az aks` scripts or `node-pools:`) and every pool the
  pod's labels can reach is one of them with taints the pod tolerates, the pod schedules and
  the rule is silent (pool taints themselves are AKS001's and XPL002's business).
- When every pool the pod's labels can reach repels it with a taint, XPL002 reports it, naming
  the pools and their taints, and this rule stays quiet: one cause, the stronger finding (the
  project's pools are known). Keep XPL002 enabled beside this rule.
- A pod queued to a ClusterQueue whose resource groups break its schema (SCH002 reports them)
  is not judged: the tolerations its flavors would inject are unknown, one cause one finding.
- AKS itself adds no GPU taint; a cluster whose GPU pools are untainted gets findings until
  `gpu-taints: []` says so.
- The rule is off in the `aks-automatic` profile: node auto-provisioning makes GPU nodes from
  NodePools whose taints are the project's own, and NAP002 (gpu-pod-unprovisionable) judges the
  pod against them instead of a fixed `sku=gpu` taint.

## References
- Kubernetes, Taints and tolerations: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- AKS, Use GPUs (GPU pool taint `sku=gpu:NoSchedule`): https://learn.microsoft.com/azure/aks/use-nvidia-gpu
"""

from mlops_lint.model.admission import refused_queue
from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.gpunodes import (configured_gpu_taints, entry_node, gpu_entries, gpu_toleration,
                                   tolerates_gpu_taints_at_admission)
from mlops_lint.fix import AppendItem
from mlops_lint.fix.plans import plan
from mlops_lint.model.k8s import PodSpec
from mlops_lint.rule import POD, Finding, rule


def _pools_decide(pod: PodSpec, ctx) -> bool:
    """The project's node pools answer for this pod: it schedules on the known pools it matches,
    or every pool it matches repels it, which XPL002 reports naming the pools and taints."""
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    if placement is None:
        return False
    if placement.repelled_everywhere:
        return True
    matches = placement.label_matches
    return bool(matches) and all(not v.elsewhere and v.taints == "ok" for v in matches)


def _tolerate(pod: PodSpec, taint):
    """The toleration of the one configured GPU taint (the article's `{key: sku, operator: Equal,
    value: gpu, effect: NoSchedule}` by default), appended to the pod's tolerations."""
    if pod.origin is not None:
        return None  # a TrainJob's view: its pod spec is a shared runtime's (runtimePatches would be the place)
    holder = pod.spec
    if holder.get("tolerations") is not None and not isinstance(holder.get("tolerations"), list):
        return None
    item = {"key": taint.key, "operator": "Equal" if taint.value else "Exists"}
    if taint.value:
        item["value"] = taint.value
    item["effect"] = taint.effect
    return plan(f"tolerate the GPU taint `{taint}`", AppendItem(holder, "tolerations", item))


@rule(code="GPU005", name="gpu-taint-not-tolerated", severity="warning", scope=POD, tags=("gpu", "scheduling"))
def check(pod: PodSpec, ctx):
    entries = gpu_entries(pod)
    taints = configured_gpu_taints(ctx.config)
    if not entries or not taints:
        return
    if gpu_toleration(pod.tolerations, ctx.config) is not None or _pools_decide(pod, ctx):
        return
    if tolerates_gpu_taints_at_admission(pod, ctx.index, ctx.config) or refused_queue(pod, ctx):
        return  # a Kueue flavor's tolerations (or a ClusterQueue SCH002 refuses: its flavors are unknown)
    container, section, resource = entries[0]
    if "tolerations" in pod.spec.kspans:
        span, node = pod.spec.kspans["tolerations"], pod.path + ("tolerations",)
        has = "its tolerations match"
    else:
        span, node = resource.key_span, entry_node(container, section, resource)
        has = "it has no tolerations, so it tolerates"
    first = taints[0]
    value = f", value: {first.value}" if first.value else ""
    operator = "Equal" if first.value else "Exists"
    yield Finding(
        span,
        f"{pod.describe()} asks for {resource.name} ({container.kind_label} `{container.name}`) but {has} none "
        f"of the GPU taints ({', '.join(str(t) for t in taints)}): tainted GPU nodes repel it and it stays Pending",
        node=node,
        fix=f"add `tolerations: [{{key: {first.key}, operator: {operator}{value}, effect: {first.effect}}}]`",
        autofix=_tolerate(pod, first) if len(taints) == 1 else None,
    )
