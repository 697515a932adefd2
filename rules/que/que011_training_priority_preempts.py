"""A PriorityClass used by training workloads lets them preempt other pods.

## What it does
Flags a PriorityClass (`scheduling.k8s.io`) of the project whose `preemptionPolicy` is not
`Never` (unset means `PreemptLowerPriority`) when at least one training workload runs with it: a
Job, CronJob, Kubeflow job, Volcano Job, RayJob, JobSet or run-to-completion Pod whose pod
template names the class in `priorityClassName` (a Volcano Job's `spec.priorityClassName` counts
for tasks that name none), or names no class while the class is the `globalDefault`. The finding
points at the `preemptionPolicy` value, or at the class's name when the field is unset, and
names the training workloads that use it.


One workload (kind, namespace and name) written in several files is named and counted once.

## Why is this bad?
Preemption is for work that cannot wait: the article's classes "allow inference pods to preempt
lower-priority pods while preventing batch training pods from preempting other workloads", with
`preemptionPolicy: Never` on the training class. A training class that may preempt lets a large
pending gang evict running inference replicas or other teams' jobs (whose progress since their
last checkpoint is lost) whenever it outranks them; with `Never`, the training pods still get
their higher place in the scheduling queue but wait for capacity instead of taking it.

## Example
```yaml
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: training-batch
value: 10000
```

Use instead:
```yaml
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: training-batch
value: 10000
preemptionPolicy: Never
```

## Fix safety
Unsafe. The fix sets `preemptionPolicy: Never` on the PriorityClass (in whichever file defines
it), the article's `training-batch` class. It changes every pod that uses the class, not only
the training workloads named: an inference Deployment sharing it would stop preempting too, and
then a dedicated training class is the better repair. A PriorityClass's `preemptionPolicy`
cannot be updated in place either: applying the fixed class fails until it is deleted and
created again.

## Known problems
A class shared by training and latency-sensitive serving is flagged because of the training
workloads; give training its own class. The built-in `system-*` classes are not in the project
and are not checked.

## References
- Kubernetes, Non-preempting PriorityClass: https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/#non-preempting-priority-class
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.model.document import distinct, identity
from mlops_lint.model.kueue import DEFAULT_PREEMPTION_POLICY, pod_priority, preemption_policy, priority_classes
from mlops_lint.rule import PROJECT, Finding, rule


def training_classes(obj, ctx):
    """(class name, workload) for each PriorityClass a training workload's pods run with."""
    workload = ctx.index.workload(obj)
    if workload is None or not workload.is_training:
        return
    for name in dict.fromkeys(pod_priority(pod, ctx.index).class_name for pod in workload.pods):
        if name is not None:
            yield name, obj.stub()


@rule(code="QUE011", name="training-priority-preempts", severity="warning", scope=PROJECT, requires=("PriorityClass",),
      collect=training_classes, tags=("priorities", "preemption"))
def check(found, ctx):
    classes = [pc for pc in priority_classes(ctx.index) if preemption_policy(pc) != "Never"]
    if not classes:
        return
    users: dict[str, list] = {}
    for name, workload in found:
        users.setdefault(name, []).append(workload)
    for pc in classes:
        used = distinct(users.get(pc.name, ()), key=identity)  # one object in several files is one workload
        if not used:
            continue
        shown = ", ".join(f"{o.kind} `{o.namespace or 'default'}/{o.name}`" for o in used[:3])
        more = f" and {len(used) - 3} more" if len(used) > 3 else ""
        if "preemptionPolicy" in pc.body:
            span, node = pc.body.value_span("preemptionPolicy"), ("preemptionPolicy",)
            policy = f"`preemptionPolicy: {preemption_policy(pc)}`"
        else:
            span, node = pc.metadata.value_span("name"), ("metadata", "name")
            policy = f"no `preemptionPolicy` (so {DEFAULT_PREEMPTION_POLICY})"
        yield Finding(
            span,
            f"PriorityClass `{pc.name}` has {policy} and training workloads run with it ({shown}{more}): a pending "
            "training pod evicts running lower-priority pods instead of waiting; set `preemptionPolicy: Never` on "
            "the training class",
            obj=pc, node=node, fix="preemptionPolicy: Never",
            autofix=plan(f"set `preemptionPolicy: Never` on PriorityClass `{pc.name}`",
                         set_path(pc.body, ("preemptionPolicy",), "Never"), safe=False),
        )
