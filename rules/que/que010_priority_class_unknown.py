"""A workload names a priority class that does not exist.

## What it does
Flags every place that names a PriorityClass (`scheduling.k8s.io`) the project does not define:
a pod template's `priorityClassName` (every kind that carries pods), a Volcano Job's or
PodGroup's `spec.priorityClassName`, and a Kubeflow job's
`spec.runPolicy.schedulingPolicy.priorityClass`. The classes every cluster has,
`system-cluster-critical` and `system-node-critical`, always exist. Kueue's
`kueue.x-k8s.io/priority-class` label is checked the same way against the project's Kueue
`WorkloadPriorityClass` objects. The finding points at the name and suggests the closest class.

This is a reference rule, per kind of class: PriorityClass names are checked only when the
project defines at least one PriorityClass, WorkloadPriorityClass names only when it defines at
least one WorkloadPriorityClass. Names filled in later (`${PRIORITY}`, `{{ … }}`) are not judged.

## Why is this bad?
The article assigns "the class through spec.priorityClassName in the pod template" so that
inference can preempt interruptible training. The Priority admission plugin rejects a pod whose
class does not exist ("no PriorityClass with name … was found"), so a Job or Deployment with a
misspelt class never gets a single pod (Volcano copies a Volcano Job's class into the pods of tasks
that name none), and a PodGroup's gang does not get the priority meant for it. A Kueue workload whose WorkloadPriorityClass does not exist cannot be created, so its job is never
admitted.

## Example
```yaml
spec:
  template:
    spec:
      priorityClassName: training-batchh
```

Use instead:
```yaml
spec:
  template:
    spec:
      priorityClassName: training-batch
```

## Known problems
- SPEC exempts `system-*` names; only the two built-in classes are exempt here, because the API
  server reserves the `system-` prefix and refuses to create any other class with it, so such a
  name can never resolve.
- Classes created outside the project are unknown to the linter: add their manifests to the
  project, or suppress the finding.

## References
- Kubernetes, Pod priority and preemption: https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
- Kueue, WorkloadPriorityClass: https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/
"""

from mlops_lint.model.k8s import is_templated
from mlops_lint.model.kueue import (
    SYSTEM_PRIORITY_CLASSES,
    has_kueue_kind,
    has_priority_classes,
    kueue_name_set,
    priority_class_names,
    priority_refs,
)
from mlops_lint.rule import OBJECT, Finding, rule
from mlops_lint.suggest import close_matches

SYSTEM_CLASS_NAMES = frozenset(SYSTEM_PRIORITY_CLASSES)


def _effect(obj, ref) -> str:
    rejected = f"no PriorityClass with name {ref.name} was found"
    if ref.field == "priorityClassName":
        return f"the API server rejects its pods ({rejected})"
    if obj.kind == "Job":  # a Volcano Job: copied into the pods of tasks that name no class
        return f"Volcano copies it into the pods of tasks that name no class, and the API server rejects them ({rejected})"
    return "the gang scheduler cannot resolve the PodGroup's priority, so the gang does not get the priority intended"


@rule(code="QUE010", name="priority-class-unknown", severity="error", scope=OBJECT, tags=("priorities",))
def check(obj, ctx):
    index = ctx.index
    refs = priority_refs(obj, index.workload(obj))
    if not refs:
        return
    known = {False: None, True: None}
    for ref in refs:
        if is_templated(ref.name) or (not ref.workload_class and ref.name in SYSTEM_PRIORITY_CLASSES):
            continue
        if known[ref.workload_class] is None:
            if ref.workload_class:
                present = has_kueue_kind(index, "WorkloadPriorityClass")
                known[True] = kueue_name_set(index, "WorkloadPriorityClass") if present else frozenset()
            else:
                present = has_priority_classes(index)
                known[False] = priority_class_names(index) | SYSTEM_CLASS_NAMES if present else frozenset()
        names = known[ref.workload_class]
        if not names or ref.name in names:
            continue  # a reference rule: no class of that kind in the project, or the class exists
        close = index.memo(("QUE010-close", ref.workload_class, ref.name),  # only for a finding; once per name
                           lambda: close_matches(ref.name, sorted(names), cutoff=0.7))
        shown = index.memo(("QUE010-shown", ref.workload_class), lambda: sorted(
            n for n in names if n not in SYSTEM_PRIORITY_CLASSES or ref.workload_class))  # once per index
        hint = f"; did you mean `{close[0]}`?" if close else f"; the project defines {', '.join(f'`{n}`' for n in shown[:4])}"
        if ref.workload_class:
            message = (f"{obj.kind} `{obj.name}`: {ref.field} names WorkloadPriorityClass `{ref.name}`, which the "
                       f"project does not define: Kueue cannot create its Workload, so it is never admitted{hint}")
        else:
            message = (f"{obj.kind} `{obj.name}`: {ref.field} `{ref.name}` names no PriorityClass of the project: "
                       f"{_effect(obj, ref)}{hint}")
        yield Finding(ref.span, message, node=ref.node, fix=f"{ref.node[-1]}: {close[0]}" if close else None)
