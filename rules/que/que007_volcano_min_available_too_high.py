"""A gang's `minAvailable` asks for more pods than the job runs.

## What it does
Flags:

- a Volcano `Job` (`batch.volcano.sh`) whose `spec.minAvailable` is larger than the sum of its
  tasks' `replicas` (a task without `replicas` runs none: the field has no default);
- a Volcano task whose own `minAvailable` is larger than its `replicas`;
- a Kubeflow training job (PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob) whose
  `spec.runPolicy.schedulingPolicy.minAvailable` (the PodGroup's `minMember` under gang
  scheduling) is larger than the sum of its replica specs' `replicas` (default 1 each).

Values that are not literal integers (templates) are not judged. The finding points at the
`minAvailable` value.

## Why is this bad?
Gang scheduling starts a job only when `minAvailable` pods can run together: Volcano provides a
"PodGroup-based all-or-nothing scheduling model". A gang that asks for more pods than the job
has can never be complete: Volcano's admission webhook rejects such a Job ("job 'minAvailable'
should not be greater than total replicas in tasks"), and without the webhook, or for a Kubeflow
PodGroup, the pods wait Pending forever while the ones that started hold their GPUs.

## Example
```yaml
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: volcano-gpu-training
spec:
  minAvailable: 4
  schedulerName: volcano
  tasks:
  - replicas: 2
    name: worker
```

Use instead:
```yaml
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - replicas: 2
    name: worker
```

## Fix safety
Unsafe. The fix lowers `minAvailable` to the number of pods the job (or the task) runs, the
largest gang that can ever be complete: every pod must then be placed together, which is what a
gang asking for more than all of them meant. The other repair is raising `replicas` (the
`minAvailable` may be right and the replica count stale), so review which one was intended, then
apply with `--unsafe-fixes`.

## References
- Volcano, VolcanoJob (minAvailable): https://volcano.sh/en/docs/vcjob/
- Volcano, job admission webhook (`validateJobCreate`): https://github.com/volcano-sh/volcano/blob/master/pkg/webhooks/admission/jobs/validate/admit_job.go
- Kubeflow Training Operator, job scheduling with gang scheduling: https://www.kubeflow.org/docs/components/trainer/legacy-v1/user-guides/job-scheduling/
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.model.distributed import KUBEFLOW, replica_specs
from mlops_lint.model.k8s import REPLICA_SPEC_FIELDS
from mlops_lint.rule import Finding, Kind, rule

VOLCANO_BATCH = "batch.volcano.sh"


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _lower(holder, pods: int):
    """``minAvailable`` lowered to the pods there are: the whole gang, all of them together."""
    return plan(f"set `minAvailable: {pods}` (every pod the job runs)", set_path(holder, ("minAvailable",), pods),
                safe=False)


def _volcano(obj):
    spec = obj.body.get_map("spec")
    tasks = spec.get_seq("tasks") if spec is not None else None
    if tasks is None:
        return
    total, known, missing = 0, True, []
    for index, task in tasks.maps():
        name = task.get("name") or f"#{index}"
        replicas = _int(task.get("replicas")) if "replicas" in task else 0
        if "replicas" not in task:
            missing.append(str(name))
        if replicas is None:
            known = False
            continue
        total += replicas
        task_min = _int(task.get("minAvailable"))
        if task_min is not None and task_min > replicas:
            yield Finding(task.value_span("minAvailable"),
                          f"task `{name}` of Volcano Job `{obj.name}` needs {task_min} pods running together "
                          f"(`minAvailable`) but runs {replicas}: Volcano rejects the Job; set `minAvailable` to at most "
                          f"{replicas}", node=("spec", "tasks", index, "minAvailable"), fix=f"minAvailable: {replicas}",
                          autofix=_lower(task, replicas))
    minimum = _int(spec.get("minAvailable"))
    if known and minimum is not None and minimum > total:
        note = f" ({', '.join(f'`{n}`' for n in missing)} set{'s' if len(missing) == 1 else ''} no replicas: none)" \
            if missing else ""
        yield Finding(spec.value_span("minAvailable"),
                      f"Volcano Job `{obj.name}` needs {minimum} pods running together (`minAvailable`) but its tasks "
                      f"run {total}{note}: the gang can never be complete and Volcano rejects the Job; set "
                      f"`minAvailable` to at most {total}", node=("spec", "minAvailable"), fix=f"minAvailable: {total}",
                      autofix=_lower(spec, total))


def _kubeflow(obj):
    spec = obj.body.get_map("spec")
    run_policy = spec.get_map("runPolicy") if spec is not None else None
    policy = run_policy.get_map("schedulingPolicy") if run_policy is not None else None
    minimum = _int(policy.get("minAvailable")) if policy is not None else None
    if minimum is None:
        return
    total = 0
    for replica in replica_specs(obj):
        replicas = replica.body.get("replicas", 1)
        if _int(replicas) is None:
            return
        total += replicas
    if minimum > total:
        yield Finding(policy.value_span("minAvailable"),
                      f"{obj.kind} `{obj.name}` asks its gang scheduler for {minimum} pods together "
                      f"(`schedulingPolicy.minAvailable`) but its replica specs run {total}: the PodGroup can never "
                      f"be complete and no pod starts; set `minAvailable` to at most {total}",
                      node=("spec", "runPolicy", "schedulingPolicy", "minAvailable"), fix=f"minAvailable: {total}",
                      autofix=_lower(policy, total))


@rule(code="QUE007", name="volcano-min-available-too-high", severity="error",
      scope=Kind("Job", *REPLICA_SPEC_FIELDS), tags=("queues", "gang-scheduling", "volcano"))
def check(obj, ctx):
    if obj.kind == "Job" and obj.group == VOLCANO_BATCH:
        yield from _volcano(obj)
    elif obj.group == KUBEFLOW and obj.kind in REPLICA_SPEC_FIELDS:
        yield from _kubeflow(obj)
