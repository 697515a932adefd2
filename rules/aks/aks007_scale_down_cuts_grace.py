"""A training pod's grace period longer than the autoscaler lets scale-down wait.

## What it does
For each pod template of a training workload (Job, CronJob, PyTorchJob, TFJob, MPIJob, Volcano
Job, RayJob, JobSet, a run-to-completion Pod) that can land on a node pool with the cluster
autoscaler enabled, compares `terminationGracePeriodSeconds` (30 when unset) with the
autoscaler profile's `max-graceful-termination-sec` of that pool's cluster (set with
`--cluster-autoscaler-profile` on `az aks create` / `az aks update`; AKS's default is 600).
Fires when the pod's grace period is longer. The finding points at
`terminationGracePeriodSeconds` (else the pod template's `spec:`) and names the pools and where
the profile value is set.

## Why is this bad?
When the autoscaler removes an underused node it evicts the pods and waits at most
`max-graceful-termination-sec` for them to exit, then kills them, whatever their own grace period
says. A trainer that needs its grace period to write a checkpoint on SIGTERM loses the work done
since the last one. The article tunes `max-graceful-termination-sec=120` and warns that "long
termination grace periods can delay scale-down"; its checkpointing Job sets
`terminationGracePeriodSeconds: 120` so that both agree.

## Example
```yaml
# the cluster: az aks update ... --cluster-autoscaler-profile max-graceful-termination-sec=120
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 600
```

Use instead:
```yaml
# az aks update ... --cluster-autoscaler-profile max-graceful-termination-sec=600
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 600
```

## Known problems
- Only pools the pod can land on (labels, affinity, taints) and whose autoscaler is enabled in
  the project's scripts or config count. When the profile value is not determined by the script
  (`$PROFILE`), the pool is not judged.
- Pods that are not training workloads (Deployments serving models) are not checked: they are
  rescheduled, not resumed from a checkpoint.

## References
- AKS, cluster autoscaler profile settings: https://learn.microsoft.com/azure/aks/cluster-autoscaler#use-the-cluster-autoscaler-profile
- Cluster autoscaler FAQ, scale-down and graceful termination: https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md
"""

from mlops_lint.model.cluster import cluster_of, workload_name
from mlops_lint.model.k8s import PodSpec
from mlops_lint.rule import POD, Finding, rule


@rule(code="AKS007", name="scale-down-cuts-grace", severity="warning", scope=POD,
      tags=("aks", "autoscaling", "checkpoint"))
def check(pod: PodSpec, ctx):
    if pod.workload is None or not pod.workload.is_training:
        return
    cluster = cluster_of(ctx.index, ctx.config)
    placement = cluster.placement(pod)
    if placement is None:
        return
    raw = pod.spec.get("terminationGracePeriodSeconds", 30)
    if not isinstance(raw, int) or isinstance(raw, bool):
        return
    cut = [(pool, cap) for pool, cap in placement.memo("AKS007", lambda: cluster.graceful_termination_caps(placement)) if raw > cap[0]]
    if not cut:
        return
    pools = ", ".join(f"`{pool.display}`" for pool, _ in cut)
    limit, origin = min((cap for _, cap in cut), key=lambda c: c[0])
    where = f"set at {origin.path}:{origin.target.line}" if origin is not None else "the AKS default"
    written = "terminationGracePeriodSeconds" in pod.spec
    span = pod.spec.value_span("terminationGracePeriodSeconds") if written else pod.span
    given = f"terminationGracePeriodSeconds {raw}" if written else "the default grace period of 30 s"
    yield Finding(
        span,
        f"{workload_name(pod)}: {given} is longer than the cluster autoscaler's max-graceful-termination-sec "
        f"{limit} ({where}) on autoscaled pool{'s' if len(cut) > 1 else ''} {pools}: "
        f"a scale-down kills the pod after {limit} s, before a checkpoint on SIGTERM can finish; raise "
        f"max-graceful-termination-sec to at least {raw} or shorten the grace period",
        node=pod.path + ("terminationGracePeriodSeconds",),
    )
