"""A Volcano Job is not scheduled by Volcano.

## What it does
Flags a Volcano `Job` (`batch.volcano.sh`) whose `spec.schedulerName` is missing or names a
scheduler other than Volcano's, and each of its task templates whose pod `spec.schedulerName`
names another scheduler (a task's own scheduler name wins over the Job's for its pods). The
finding points at the scheduler name, or at the Job's `spec:` key when it sets none.

## Why is this bad?
The gang lives in Volcano's scheduler: "Volcano provides a scheduler and PodGroup-based
all-or-nothing scheduling model", and the article's Volcano Job sets `schedulerName: volcano`.
Pods handed to the default scheduler are placed one by one, so a job "that can't make progress
until every worker is running" starts some workers and leaves them holding GPUs while the rest
wait, and Volcano's queues, fair share and preemption policies never see them. Volcano's
mutating webhook fills in `volcano` only when the name is empty and the webhook is installed
and reachable; writing it keeps the manifest correct without that dependency.

## Example
```yaml
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: volcano-gpu-training
spec:
  minAvailable: 2
  tasks:
  - replicas: 2
    name: worker
```

Use instead:
```yaml
spec:
  minAvailable: 2
  schedulerName: volcano
```

## Options
- `volcano-scheduler-names` (list of strings): the names Volcano's scheduler runs under in your
  clusters (its `--scheduler-name` flags). Default: `volcano`.

## Fix safety
A missing `schedulerName` is safe to fix; another scheduler's name is unsafe.

- No `schedulerName` on the Job: the fix writes `schedulerName: volcano` (the first of
  `volcano-scheduler-names`), what Volcano's webhook fills in where it runs.
- The Job or a task names another scheduler: the fix replaces it with `volcano`. That hands the
  pods to another scheduler, which is the finding's point, but a Volcano scheduler deployed under
  another name (add it to `volcano-scheduler-names` instead) would lose them: review it, then
  apply with `--unsafe-fixes`. A task's own `schedulerName` could also simply be removed.

## References
- Volcano, VolcanoJob (schedulerName): https://volcano.sh/en/docs/vcjob/
- Volcano, job mutating webhook (`patchDefaultScheduler`): https://github.com/volcano-sh/volcano/blob/master/pkg/webhooks/admission/jobs/mutate/mutate_job.go
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.rule import Finding, Kind, rule


@rule(code="QUE008", name="volcano-scheduler-missing", severity="error", scope=Kind("Job"),
      tags=("queues", "gang-scheduling", "volcano"),
      options={"volcano-scheduler-names": list[str]}, defaults={"volcano-scheduler-names": ["volcano"]})
def check(obj, ctx):
    if obj.group != "batch.volcano.sh":
        return
    names = [str(n) for n in ctx.options["volcano-scheduler-names"]]
    wanted = names[0] if names else "volcano"
    spec = obj.body.get_map("spec")
    if spec is None:
        return
    scheduler = spec.get("schedulerName")
    if not isinstance(scheduler, str) or not scheduler:
        yield Finding(obj.body.key_span("spec"),
                      f"Volcano Job `{obj.name}` sets no `schedulerName`: its pods are gang-scheduled only if Volcano's "
                      f"webhook fills in `{wanted}`; write `schedulerName: {wanted}`",
                      node=("spec", "schedulerName"), fix=f"schedulerName: {wanted}",
                      autofix=plan(f"set `schedulerName: {wanted}`", set_path(spec, ("schedulerName",), wanted)))
    elif scheduler not in names and "$" not in scheduler and "{{" not in scheduler:
        yield Finding(spec.value_span("schedulerName"),
                      f"Volcano Job `{obj.name}` hands its pods to scheduler `{scheduler}`, not Volcano's: they are "
                      f"placed one by one, without the gang (`minAvailable`) or the Volcano queue; set "
                      f"`schedulerName: {wanted}`", node=("spec", "schedulerName"), fix=f"schedulerName: {wanted}",
                      autofix=plan(f"set `schedulerName: {wanted}`", set_path(spec, ("schedulerName",), wanted),
                                   safe=False))
    workload = ctx.index.workload(obj)
    for pod in workload.pods if workload is not None else ():
        own = pod.spec.get("schedulerName")
        if isinstance(own, str) and own and own not in names and "$" not in own and "{{" not in own:
            yield Finding(pod.spec.value_span("schedulerName"),
                          f"task `{pod.role}` of Volcano Job `{obj.name}` hands its pods to scheduler `{own}`, which "
                          "overrides the Job's: they are placed one by one, outside the gang; remove it or set "
                          f"`{wanted}`", node=pod.path + ("schedulerName",), fix=f"schedulerName: {wanted}",
                          autofix=plan(f"set the task's `schedulerName: {wanted}`",
                                       set_path(pod.spec, ("schedulerName",), wanted), safe=False))
