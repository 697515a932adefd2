"""A job submitted to a Kueue queue is not created suspended.

## What it does
Flags objects that carry the `kueue.x-k8s.io/queue-name` label (or the older annotation of the
same name) and whose suspend flag is not `true`. The flag depends on the kind, as Kueue's
integrations read it:

| kind | flag |
|---|---|
| batch `Job`, `JobSet`, `RayJob`, `RayCluster`, `TrainJob`, `AppWrapper` | `spec.suspend` |
| `CronJob` (label in `spec.jobTemplate.metadata`) | `spec.jobTemplate.spec.suspend` |
| Kubeflow `PyTorchJob`, `TFJob`, `MPIJob`, `XGBoostJob`, `PaddleJob`, `JAXJob` | `spec.runPolicy.suspend` |

Pods, Deployments, StatefulSets and LeaderWorkerSets have no suspend flag: Kueue holds their
pods back with a scheduling gate, so they are not checked. The finding points at the flag when
it is written (`suspend: false`), else at its nearest parent key (`spec:`, `runPolicy:`).

A workload whose framework the project's Kueue `Configuration` leaves out of
`integrations.frameworks` is left to QUE019: Kueue does not manage it, and created suspended it
would never start.

## Why is this bad?
"Kueue provides admission control and quota management before pods begin running": it admits a
job by un-suspending it once the job's quota is free. A queued job created unsuspended starts its
pods at once wherever Kueue's webhook does not suspend it first (the integration for that kind is
not enabled, the namespace is outside `managedJobsNamespaceSelector`, the manifest is applied
before Kueue runs), so its GPUs are taken outside the team's quota and without gang admission,
leaving "partially scheduled jobs" that "reserve GPUs while waiting for remaining workers". GitOps
tools that re-apply the manifest also undo a suspend flag the webhook set. The article's Kueue Job
writes `suspend: true`.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: team-a-two-gpu-training
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue
spec:
  parallelism: 2
```

Use instead:
```yaml
spec:
  suspend: true
  parallelism: 2
```

## Fix safety
Safe. The fix sets the kind's flag from the table above to `true` (`spec.suspend: true`,
`spec.jobTemplate.spec.suspend: true` for a CronJob, `spec.runPolicy.suspend: true` for a
Kubeflow job), adding it, with any missing parent mapping, or replacing a `false` or a
non-boolean value. That is what Kueue's webhook does to a queued job on creation: Kueue then
starts the job by un-suspending it once its quota is free, so the job runs as it would where the
webhook is up, only never outside the queue. There is no fix when the value is a placeholder
filled in later (`{{ .Values.suspend }}`) or a parent on the way is not a mapping.

## Known problems
Kueue's own webhook suspends labelled jobs on creation in the namespaces it manages, so a
missing flag is harmless there as long as the webhook is always up and nothing re-applies the
manifest; the rule asks for the flag anyway, as the article does.

## References
- Kueue, Run a Kubernetes Job: https://kueue.sigs.k8s.io/docs/tasks/run/jobs/
- Kueue, Run a Kubeflow job: https://kueue.sigs.k8s.io/docs/tasks/run/kubeflow/
- Kubernetes, Suspending a Job: https://kubernetes.io/docs/concepts/workloads/controllers/job/#suspending-a-job
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.model.k8s import is_templated
from mlops_lint.model.kueue import queue_ref, suspend_field
from mlops_lint.model.kueueconfig import ignored_by_kueue
from mlops_lint.rule import OBJECT, Finding, rule


@rule(code="QUE001", name="kueue-job-not-suspended", severity="warning", scope=OBJECT, tags=("queues", "kueue"))
def check(obj, ctx):
    ref = queue_ref(obj)
    if ref is None or ignored_by_kueue(obj, ctx.index, ctx.config):
        return  # (Kueue does not manage its kind here: QUE019's finding, and suspended it would never start)
    flag = suspend_field(obj)
    if flag is None or flag.suspended:
        return
    if not flag.present:
        state = f"does not set `{flag.dotted}: true`"
    elif isinstance(flag.value, bool):
        state = f"sets `{flag.path[-1]}: false`"
    else:
        state = f"sets `{flag.path[-1]}` to {flag.value!r}, which is not the boolean `true`"
    yield Finding(
        flag.span,
        f"{obj.kind} `{obj.name}` is queued to LocalQueue `{ref.name}` but {state}: wherever Kueue's webhook does "
        "not suspend it first, its pods start at once, outside the queue's quota; create it suspended and let Kueue "
        "start it",
        node=flag.path,
        fix=f"{flag.dotted}: true",
        autofix=None if isinstance(flag.value, str) and is_templated(flag.value)
        else plan(f"set `{flag.dotted}: true`", set_path(obj.body, flag.path, True)),
    )
