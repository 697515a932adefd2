"""A GPU pod that no NodePool can make a node for, on AKS Automatic or node auto-provisioning.

## What it does
In a project whose nodes node auto-provisioning (NAP) makes (the `aks-automatic` profile, given
or inferred, or a cluster the project makes Automatic or NAP: see NAP001), flags pod templates
that ask for a GPU (`nvidia.com/gpu`, a MIG profile, `amd.com/gpu`, GPUs through a resource
claim) when no NodePool can make a node that has the GPU and takes the pod. The NodePools are
AKS's `default` NodePool (the D family only: no GPU) unless the project writes its own
`default`, plus the project's `karpenter.sh/v1` NodePools for AKS's provider (a `nodeClassRef`
to an `AKSNodeClass`, or none), each judged per VM size its requirements allow:

- no NodePool allows a GPU size (no `karpenter.azure.com/sku-family In [N]`, GPU count,
  manufacturer or GPU size among the requirements): the finding points at the GPU request;
- the NodePools that allow one all repel the pod: a `nodeSelector` or required node affinity
  on a label their template does not set and their requirements do not let Karpenter choose
  (`accelerator: nvidia`, the article's pool label), or a template taint the pod does not
  tolerate. The finding points at the selector entry (else the affinity), or at
  `tolerations:` (else the GPU request), and names each NodePool and why.

A NodePool takes the pod only within its `spec.limits` (`nvidia.com/gpu`, `amd.com/gpu`, `cpu`,
`memory`): Karpenter never makes a node whose capacity exceeds them, so a limit below the pod's
request, or below one node's capacity of every size the NodePool allows, keeps that NodePool
from serving the pod. When the NodePools that would take the pod are all stopped by their limits,
the finding points at the GPU request and names each NodePool's limit.

Kueue's flavors are applied as admission applies them (their node labels and tolerations). A pod
with `nodeName` is not judged, nor a DaemonSet's (its pods follow the nodes that exist; NAP makes
no node for them), nor a KAITO Workspace's (KAITO provisions its GPU nodes itself). A NodePool whose requirements exclude GPU sizes (`sku-family In [D, E]`,
`sku-gpu-count In [0]`) offers none, whatever its sizes. In the `aks-automatic` profile this rule replaces GPU005, whose
fixed `sku=gpu:NoSchedule` taint is the Standard recipe's, not a NodePool's.

In a project that makes a Standard cluster beside the NAP one (`aks-standard`), a pod that can
land on a pool of the Standard cluster that has its GPUs (its labels, affinity and taints match,
as XPL001 reads them) is not judged: it may well be meant for that cluster, where NAP makes no
node and the placement rules (XPL, GPU005) judge it.

## Why is this bad?
The article: "AKS Automatic can provision eligible GPU capacity in response to pending pods. The
workload must still request nvidia.com/gpu, and any node selectors, affinities, tolerations …
must be satisfiable." NAP makes a node only from a NodePool whose template satisfies the pod,
and AKS's default NodePool allows only D-family VMs. A GPU pod no NodePool can serve stays
Pending with no node ever coming, and a selector copied from the Standard recipe
(`accelerator: nvidia`, which a Standard pool sets with `--labels`) matches no node NAP makes.

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

Use instead (with a GPU NodePool in the project):
```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
      requirements:
      - {key: karpenter.azure.com/sku-family, operator: In, values: [N]}
      taints:
      - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
---
    spec:
      nodeSelector:
        karpenter.sh/nodepool: gpu
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: trainer
        resources:
          limits:
            nvidia.com/gpu: 1
```

## Known problems
- The project's NodePools are taken to be all the cluster has besides AKS's default one: a
  GPU NodePool another repository applies is not seen; suppress the finding there, or lint the
  NodePools with the workloads.
- Subscription quota and regional availability are not judged; nor are NodePool `limits` that
  the nodes already running use up (only what one node needs is compared with them).

## References
- AKS, Node auto-provisioning NodePools: https://learn.microsoft.com/azure/aks/node-auto-provisioning-node-pools
- Karpenter, NodePools (requirements, taints, labels): https://karpenter.sh/docs/concepts/nodepools/
"""

from mlops_lint.model.admission import refused_queue
from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.cluster.modes import managed_cluster
from mlops_lint.model.cluster.placement import selector_anchor
from mlops_lint.model.gpunodes import entry_node, gpu_entries
from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.nap import over_limits
from mlops_lint.model.napcluster import provisioning_cluster
from mlops_lint.model.podrequests import pod_requests
from mlops_lint.rule import POD, Finding, rule


def _standard_cluster_takes(pod: PodSpec, ctx) -> bool:
    """The pod can land on a pool, with its GPUs, of a cluster the project does not make NAP or
    Automatic (a Standard one beside the NAP one): it may be meant for that cluster."""
    cluster = cluster_of(ctx.index, ctx.config)
    if not cluster.auto_provisioning:
        return False
    placement = cluster.placement(pod)
    return placement is not None and any(
        v.possible and v.offers != "no" and not v.elsewhere and v.pool.nodepool is None
        and not cluster.auto_provisioned(v.pool.cluster) for v in placement.verdicts)


@rule(code="NAP002", name="gpu-pod-unprovisionable", severity="warning", scope=POD, tags=("aks", "gpu", "scheduling"))
def check(pod: PodSpec, ctx):
    if pod.workload is not None and (pod.workload.kind == "DaemonSet" or pod.obj.group == "kaito.sh"):
        # a DaemonSet's pods follow the nodes that exist (NAP makes none for them); KAITO provisions
        # the GPU nodes of its Workspaces itself (their resource.instanceType)
        return
    entries = gpu_entries(pod)
    if not entries or pod.spec.get("nodeName"):
        return
    managed = managed_cluster(ctx.index, ctx.config)
    if managed is None or _standard_cluster_takes(pod, ctx):
        return
    placement = provisioning_cluster(ctx.index, ctx.config).placement(pod)
    if placement is None:
        return
    serving = [v for v in placement.verdicts if v.offers != "no"]
    possible = [v for v in serving if v.possible]
    capped = _capped(possible, pod) if possible else None
    if (possible and capped is None) or refused_queue(pod, ctx):
        return
    container, section, resource = entries[0]
    asked = f"{resource.name} ({container.kind_label} `{container.name}`)"
    if capped is not None:
        yield Finding(resource.key_span, f"{pod.describe()} asks for {asked} but the `limits` of every NodePool that "
                      f"takes it stop NAP from making a node for it ({managed.why}): {capped}; NAP never makes a node "
                      "for it and it stays Pending",
                      node=entry_node(container, section, resource),
                      fix="raise the NodePool's `limits` to at least one node of a size that fits the pod "
                          "(Karpenter compares a node's whole capacity with them)")
        return
    if not serving:
        own = sorted({str(v.pool.name) for v in placement.verdicts if v.pool.path})
        theirs = (f"the project's NodePools ({', '.join(own)}) allow no VM size with it" if own
                  else "the project has no NodePool that allows a GPU size")
        yield Finding(resource.key_span, f"{pod.describe()} asks for {asked} but no NodePool can make a node with it: "
                      f"AKS's default NodePool allows the D family only and {theirs} ({managed.why}); NAP never "
                      "makes a node for it and it stays Pending",
                      node=entry_node(container, section, resource),
                      fix="add a NodePool whose requirements allow GPU sizes "
                          "(`karpenter.azure.com/sku-family In [N]`) with the pod's labels and taints")
        return
    if all(v.labels == "no" for v in serving):
        span, node = selector_anchor(pod, serving)
        fix = "select a label the GPU NodePool's template sets (`karpenter.sh/nodepool: <name>`), or set it there"
    elif "tolerations" in pod.spec.kspans:
        span, node = pod.spec.kspans["tolerations"], pod.path + ("tolerations",)
        fix = "tolerate the GPU NodePool's taints"
    else:
        span, node = resource.key_span, entry_node(container, section, resource)
        fix = "tolerate the GPU NodePool's taints"
    yield Finding(span, f"{pod.describe()} asks for {asked} but no NodePool that can make a node with it takes "
                  f"the pod ({managed.why}): {_by_nodepool(serving)}; NAP never makes a node for it and it stays Pending",
                  node=node, fix=fix)


def _capped(verdicts, pod, limit: int = 6) -> str | None:
    """When each NodePool (size) that takes the pod is stopped by its ``spec.limits``: one reason
    per NodePool (``gpu` (nodepool.yaml:9): its `limits` cap …``); else None."""
    requests = pod_requests(pod)
    first: dict[str, str] = {}
    for verdict in verdicts:
        why = over_limits(verdict.pool.nodepool, verdict.pool.vm_size, requests)
        if why is None:
            return None
        obj = verdict.pool.nodepool
        first.setdefault(str(verdict.pool.name), f"`{verdict.pool.name}` ({obj.path}:{obj.span.line}): {why}")
    items = list(first.values())
    if len(items) > limit:
        items = items[:limit] + [f"and {len(items) - limit} more"]
    return "; ".join(items)


def _by_nodepool(verdicts, limit: int = 6) -> str:
    """``gpu: taint nvidia.com/gpu=true:NoSchedule not tolerated; …``: one reason per NodePool
    (its sizes are judged alike on labels and taints; the first size's reason)."""
    first = {}
    for verdict in verdicts:
        first.setdefault(str(verdict.pool.name), verdict)
    items = [f"`{name}`: {verdict.why_not().split(': ', 1)[1]}" for name, verdict in first.items()]
    if len(items) > limit:
        items = items[:limit] + [f"and {len(items) - limit} more"]
    return "; ".join(items)
