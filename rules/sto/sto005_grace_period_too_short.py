"""A checkpointing training pod is killed too soon after SIGTERM to save its last checkpoint.

## What it does
Flags pod templates of training workloads (Job, CronJob, Kubeflow and Volcano jobs, RayJob,
JobSet, a run-to-completion Pod) that write checkpoints and whose
`terminationGracePeriodSeconds` is below 60 seconds, or unset (Kubernetes then gives 30). A pod
writes checkpoints when one of its containers (app containers and native sidecars) has a
writable mount whose path, volume name or claim name mentions checkpoints (`checkpoint` or
`ckpt`, any case), or names a checkpoint destination in an env var or flag
(`CHECKPOINT_DIR=/ckpt`, `--checkpoint-dir /ckpt`, a trainer's `--output_dir ./out` or
`--save-dir`), the same evidence STO001 and STO002 use.
The finding points at the value, or at the pod template's `spec:` key when the field is unset.

## Why is this bad?
On preemption, eviction, a node drain or a scale-down the kubelet sends SIGTERM, waits the grace
period, then sends SIGKILL. A trainer that saves on SIGTERM needs that time to serialise model,
optimizer and data-loader state to network storage; killed halfway it leaves a partial file, and
the run resumes from an older checkpoint or not at all. The article: "Write checkpoints
periodically and before graceful termination", and its checkpointed Job sets
`terminationGracePeriodSeconds: 120` and "handles SIGTERM so preemption can preserve recent
progress". Long checkpoints also make "preemption expensive".

## Example
```yaml
    spec:
      restartPolicy: OnFailure
      containers:
      - name: trainer
        volumeMounts:
        - name: checkpoints
          mountPath: /checkpoints
```

Use instead:
```yaml
    spec:
      restartPolicy: OnFailure
      terminationGracePeriodSeconds: 120
      containers:
      - name: trainer
        volumeMounts:
        - name: checkpoints
          mountPath: /checkpoints
```

## Options
- `min-grace-period-seconds` (integer): the shortest grace period accepted. Default: 60.

## Fix safety
Unsafe. The fix sets the pod template's `terminationGracePeriodSeconds` to the rule's minimum
(`min-grace-period-seconds`, 60 by default), adding it or raising a lower value: the smallest
value the rule accepts, so the pod holds its node no longer than needed and is the least likely
to outlast the cluster autoscaler's `max-graceful-termination-sec` (there is no fix when an
autoscaled pool the pod can land on waits less than that: AKS007 would report the fixed value).
It changes behaviour beyond saving the checkpoint: a pod that ignores SIGTERM now takes that
long to stop on every deletion, rollout or scale-down, with its GPUs held. The right value is
the measured time of a final checkpoint save (the article's Job gives 120 s, as the hint says):
raise it when saves take longer.

## Known problems
- Only training workloads are checked; an inference server that mounts a model "checkpoint"
  reads it. The evidence is the same as STO002's (see its Known problems): a trainer that
  checkpoints without saying so in a mount, env var or flag is not seen.
- The right grace period depends on the checkpoint's size and the storage's throughput; measure
  the save time and raise the option accordingly. AKS007 checks that the cluster autoscaler's
  `max-graceful-termination-sec` does not cut the period short on scale-down.

## References
- Kubernetes, Pod termination: https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination
- Kubernetes, PodSpec `terminationGracePeriodSeconds`: https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#lifecycle
"""

from __future__ import annotations

from mlops_lint.fix.plans import plan, pod_map, set_path
from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.storage import pod_checkpoint_evidence
from mlops_lint.rule import POD, Finding, rule

KUBERNETES_DEFAULT = 30



def _autoscaler_cuts(pod: PodSpec, ctx, seconds: int) -> bool:
    """Whether an autoscaled pool the pod can land on stops waiting before ``seconds`` (AKS007
    would report the fixed value): then no fix, the two limits are for the user to reconcile."""
    cluster = cluster_of(ctx.index, ctx.config)
    if not cluster.has_pools:
        return False
    placement = cluster.placement(pod)
    if placement is None:
        return False
    return any(seconds > cap[0] for _, cap in placement.memo("AKS007", lambda: cluster.graceful_termination_caps(placement)))


@rule(code="STO005", name="grace-period-too-short", severity="warning", scope=POD, tags=("storage", "checkpoints"),
      options={"min-grace-period-seconds": int}, defaults={"min-grace-period-seconds": 60})
def check(pod: PodSpec, ctx):
    if pod.workload is None or not pod.workload.is_training:
        return
    minimum = ctx.options["min-grace-period-seconds"]
    value = pod.spec.get("terminationGracePeriodSeconds")
    if "terminationGracePeriodSeconds" in pod.spec and (not isinstance(value, int) or isinstance(value, bool)):
        return  # filled in later, or not a number (the schema rules say so)
    if (KUBERNETES_DEFAULT if value is None else value) >= minimum:
        return
    why = pod_checkpoint_evidence(pod)
    if why is None:
        return
    who = f"{pod.role} pods write" if pod.role else "the pod writes"
    if value is None:
        span, said = pod.span, f"terminationGracePeriodSeconds is unset (Kubernetes gives {KUBERNETES_DEFAULT} s)"
    else:
        span, said = pod.spec.value_span("terminationGracePeriodSeconds"), f"terminationGracePeriodSeconds is {value}"
    yield Finding(
        span,
        f"{who} checkpoints ({why}) but {said}: SIGKILL follows SIGTERM before a final checkpoint can be "
        f"saved; allow at least {minimum} s",
        node=pod.path + ("terminationGracePeriodSeconds",),
        fix=f"terminationGracePeriodSeconds: {max(minimum, 120)}",
        autofix=None if _autoscaler_cuts(pod, ctx, minimum) else plan(f"set `terminationGracePeriodSeconds: {minimum}` (the rule's minimum)",
                     set_path(pod_map(pod, "terminationGracePeriodSeconds"), ("terminationGracePeriodSeconds",),
                              minimum), safe=False),
    )
