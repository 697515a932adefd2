"""A Volcano gang of GPU pods with no lifecycle policy for an evicted or a failed pod.

## What it does
Reads a Volcano `Job` (`batch.volcano.sh`) whose pods must run together and ask for GPUs: its
gang (`spec.minAvailable`, else what Volcano's admission sets: each task's `minAvailable` or
else its replicas, summed) is more than one
pod, and a container of a task requests a GPU. It fires when the job's lifecycle policies do not
say what happens when one of those pods is lost: `PodEvicted` (preemption, node drain, a
scale-down, a reclaimed Spot node) and `PodFailed` (the trainer crashed or a node failed). An
event counts as handled when a job-level policy (`spec.policies`) names it (`event:` or
`events:`), or names `"*"` (any event), or when every task that runs has such a policy of its
own; a policy on an `exitCode` counts for `PodFailed`. Whatever action the policy takes
(`RestartJob`, `RestartTask`, `AbortJob`, `TerminateJob`, `CompleteJob`) is the author's choice
and is not judged. The finding points at the job's `policies:` key when it has one, else at
`spec:`, and names the events left unhandled.

Left alone: a job of one pod, a gang without GPUs, and tasks that set no replicas.

## Why is this bad?
The article picks Volcano for "a dedicated batch scheduler with gang scheduling, queues, and job
lifecycle policies", and its GPU training Job answers both events with `RestartJob`. Without a
policy Volcano only keeps the task's replica count: an evicted worker is recreated on its own
and a failed one is left failed, while the rest of the gang keeps running. A distributed trainer
cannot take a single new rank into a running collective, so the survivors hang in NCCL (or
wait for a peer that never comes) while holding every GPU of the gang; restarting the whole job
from its last checkpoint is what brings the ranks back together.

## Example
```yaml
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: volcano-gpu-training
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - replicas: 2
    name: worker
    template:
      spec:
        containers:
        - name: worker
          image: myacr.azurecr.io/trainer:1.0.0
          resources:
            limits: {nvidia.com/gpu: 1}
```

Use instead:
```yaml
spec:
  minAvailable: 2
  schedulerName: volcano
  policies:
  - event: PodEvicted
    action: RestartJob
  - event: PodFailed
    action: RestartJob
```

## Known problems
- A job whose pods really are independent (a sweep of single-GPU trials that set `minAvailable`
  to their count only to start together) is reported too: set `minAvailable: 1` if the trials
  need not run together, or write the policies you want.
- Policies a Volcano plugin or an admission webhook adds at creation are not seen.

## References
- Volcano, VolcanoJob (policies, lifecycle events and actions): https://volcano.sh/en/docs/vcjob/
- Volcano, Job lifecycle policies design: https://github.com/volcano-sh/volcano/blob/master/docs/design/job-api.md
"""

from mlops_lint.model.gpunodes import requests_gpu
from mlops_lint.model.k8s import Workload
from mlops_lint.rule import WORKLOAD, Finding, rule

VOLCANO_BATCH = "batch.volcano.sh"
EVENTS = ("PodEvicted", "PodFailed")


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _handled(policies) -> set[str] | None:
    """The events of :data:`EVENTS` a ``policies`` list handles (None: not a list)."""
    if not isinstance(policies, list):
        return None
    found: set[str] = set()
    for policy in policies:
        if not isinstance(policy, dict):
            continue
        named = []
        if isinstance(policy.get("event"), str):
            named.append(policy["event"])
        if isinstance(policy.get("events"), list):
            named += [e for e in policy["events"] if isinstance(e, str)]
        if "*" in named:
            return set(EVENTS)
        found.update(e for e in named if e in EVENTS)
        if "exitCode" in policy:
            found.add("PodFailed")
    return found


def _gang(spec, tasks) -> int | None:
    """The pods that must run together: ``minAvailable``, else (left out or 0) what Volcano's
    admission sets, each task's own ``minAvailable`` or else its replicas, summed."""
    minimum = _int(spec.get("minAvailable"))
    if minimum:
        return minimum
    if "minAvailable" in spec and minimum is None:
        return None  # a placeholder
    total = 0
    for _, task in tasks.maps():
        count = task.get("minAvailable") if "minAvailable" in task else task.get("replicas", 0)
        if _int(count) is None:
            return None
        total += count
    return total


@rule(code="QUE020", name="volcano-failure-policy-missing", severity="warning", scope=WORKLOAD,
      tags=("queues", "gang-scheduling", "volcano", "resilience"))
def check(workload: Workload, ctx):
    obj = workload.obj
    if obj.kind != "Job" or obj.group != VOLCANO_BATCH:
        return
    spec = obj.body.get_map("spec")
    tasks = spec.get_seq("tasks") if spec is not None else None
    if tasks is None:
        return
    gang = _gang(spec, tasks)
    if gang is None or gang < 2 or not any(requests_gpu(pod) for pod in workload.pods):
        return
    handled = _handled(spec.get("policies")) or set()
    running = [task for _, task in tasks.maps() if _int(task.get("replicas")) != 0 and "replicas" in task]
    if running:
        per_task = [_handled(task.get("policies")) or set() for task in running]
        handled |= set.intersection(*per_task)
    missing = [event for event in EVENTS if event not in handled]
    if not missing:
        return
    if "policies" in spec.kspans:
        span, node = spec.key_span("policies"), ("spec", "policies")
    else:
        span, node = obj.body.key_span("spec"), ("spec",)
    shown = " and ".join(f"`{event}`" for event in missing)
    yield Finding(
        span,
        f"Volcano Job `{obj.name}` runs a gang of {gang} GPU pods but {shown} {'has' if len(missing) == 1 else 'have'} "
        f"no lifecycle policy for the whole gang (in `spec.policies` or on every task): a lost pod is only recreated "
        f"on its own (or left failed) while the rest of the gang holds its GPUs and waits; "
        f"add policies that restart the job from its checkpoint (`event: {missing[0]}`, `action: RestartJob`)",
        node=node,
        fix="\n".join(f"- event: {event}\n  action: RestartJob" for event in missing),
    )
