"""A NodePool's `terminationGracePeriod` shorter than a checkpointing pod's grace period.

## What it does
For each pod template of a training workload that writes checkpoints (the evidence STO005
uses: a writable mount, env var or flag naming a checkpoint destination) and that node
auto-provisioning may place on a NodePool of the project (its labels, taints and what it offers
allow it), compares the pod's `terminationGracePeriodSeconds` (30 when unset) with the NodePool's
`spec.template.spec.terminationGracePeriod` (a duration: `30s`, `10m`, `1h`). Fires when the
pod's grace period is longer on some such NodePool. The finding points at
`terminationGracePeriodSeconds` (else the pod template's `spec:`) and names the NodePools and
their values. A NodePool without the field waits for the pods' own grace and is not judged.

## Why is this bad?
Karpenter's node `terminationGracePeriod` "takes precedence over a Pod's
terminationGracePeriodSeconds value, and bypasses any blocked PDBs or the
karpenter.sh/do-not-disrupt annotation": when a node of that NodePool is drained (expiry, drift,
consolidation), the node goes away once it elapses, so a trainer gets at most that long after
SIGTERM to save. The article's checkpointed Job sets `terminationGracePeriodSeconds: 120` and
"handles SIGTERM so preemption can preserve recent progress"; a NodePool that cuts it short
loses the work done since the last checkpoint, as the cluster autoscaler's
`max-graceful-termination-sec` does on AKS Standard (AKS007).

## Example
```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      terminationGracePeriod: 60s
---
    spec:
      terminationGracePeriodSeconds: 120
```

Use instead:
```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      terminationGracePeriod: 10m
---
    spec:
      terminationGracePeriodSeconds: 120
```

## Known problems
- Only the project's NodePools are read (AKS's default NodePool sets no
  `terminationGracePeriod`); a grace period the pod does not write as a number is not judged.

## References
- Karpenter, NodePool `terminationGracePeriod`: https://karpenter.sh/docs/concepts/nodepools/#spectemplatespecterminationgraceperiod
- AKS, Node auto-provisioning disruption: https://learn.microsoft.com/azure/aks/node-auto-provisioning-disruption
"""

from mlops_lint.model.cluster.placement import workload_name
from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.cluster.modes import nap_in_play as in_play
from mlops_lint.model.nap import termination_grace
from mlops_lint.model.napcluster import hosts
from mlops_lint.model.storage import pod_checkpoint_evidence
from mlops_lint.rule import POD, Finding, rule

KUBERNETES_DEFAULT = 30



@rule(code="NAP003", name="nodepool-grace-cuts-checkpoint", severity="warning", scope=POD,
      tags=("aks", "autoscaling", "checkpoint"))
def check(pod: PodSpec, ctx):
    if pod.workload is None or not pod.workload.is_training:
        return
    raw = pod.spec.get("terminationGracePeriodSeconds", KUBERNETES_DEFAULT)
    if not isinstance(raw, int) or isinstance(raw, bool) or not in_play(ctx.index, ctx.config):
        return
    cut = []
    for name, obj in hosts(pod, ctx.index, ctx.config):
        grace = termination_grace(obj) if obj is not None else None
        if grace is not None and raw > grace[0]:
            cut.append((name, obj, grace))
    if not cut:
        return
    why = pod_checkpoint_evidence(pod)
    if why is None:
        return
    shown = ", ".join(f"`{name}` {seconds} s ({obj.path}:{span.line})" for name, obj, (seconds, span) in cut)
    shortest = min(seconds for _, _, (seconds, _) in cut)
    written = "terminationGracePeriodSeconds" in pod.spec
    span = pod.spec.value_span("terminationGracePeriodSeconds") if written else pod.span
    given = f"terminationGracePeriodSeconds {raw}" if written else f"the default grace period of {KUBERNETES_DEFAULT} s"
    yield Finding(
        span,
        f"{workload_name(pod)} writes checkpoints ({why}) with {given}, but NodePool terminationGracePeriod "
        f"{shown} overrides it: a drained node goes away after {shortest} s, before a checkpoint on SIGTERM can "
        f"finish; raise the NodePool's terminationGracePeriod to at least {raw}s",
        node=pod.path + ("terminationGracePeriodSeconds",),
        fix=f"terminationGracePeriod: {raw}s (on the NodePool)",
    )
