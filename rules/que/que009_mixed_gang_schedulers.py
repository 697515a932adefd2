"""Kueue and Volcano both govern workloads of one namespace.

## What it does
Per namespace, collects the workloads Kueue queues (a `kueue.x-k8s.io/queue-name` label or
annotation on a kind Kueue manages) and those Volcano schedules (a Volcano `Job`; a pod template
whose `schedulerName` is Volcano's; a pod template annotated with a Volcano PodGroup
`scheduling.k8s.io/group-name` or queue `scheduling.volcano.sh/queue-name`). When a namespace has
both, every Volcano-governed workload there is flagged, at its `schedulerName` value (else its
annotation, else its `kind:`), naming the Kueue-queued workloads beside it. A single workload
that is both queued by Kueue and scheduled by Volcano is flagged too.

## Why is this bad?
The article: "Standardize on one primary queueing and gang-scheduling system unless you have a
tested interoperability design. Multiple admission controllers or schedulers can otherwise make
pending and preemption behavior difficult to reason about." Kueue's quota does not see the GPUs
Volcano's gangs hold, Volcano's queues do not see Kueue's admitted jobs, and each system may
preempt the other's pods, so a team's jobs can stay pending behind capacity neither queue
reports as used.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: sweep
  namespace: research
  labels:
    kueue.x-k8s.io/queue-name: research-queue
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gang-eval
  namespace: research
spec:
  schedulerName: volcano
```

Use instead:
```yaml
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gang-eval
  namespace: ml-batch          # Volcano's namespace; Kueue governs research
```

## Options
- `volcano-scheduler-names` (list of strings): the names Volcano's scheduler runs under (as in
  QUE008). Default: `volcano`.

## Known problems
The rule needs every workload of the project, so it runs only when the project defines a queue
of either system (a Kueue LocalQueue or ClusterQueue, or a Volcano Queue): that is where a project
shows which queueing it has set up; a project of bare workloads is not checked. A tested
interoperability design (Kueue admitting, Volcano placing) can be recorded with a suppression.
Manifests that name no namespace are taken to be in `default`, as everywhere in the linter; a
folder of unrelated samples applied to different namespaces can therefore look mixed.

## References
- Kueue, overview: https://kueue.sigs.k8s.io/docs/overview/
- Volcano, PodGroup and queue: https://volcano.sh/en/docs/podgroup/
"""

from mlops_lint.model.document import distinct, identity
from mlops_lint.model.kueue import QUEUE_NAME_KEY, queue_ref
from mlops_lint.rule import PROJECT, Finding, rule

VOLCANO_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/queue-name")


def _volcano(workload, names):
    """(span, node, what) saying how Volcano governs the workload, or None."""
    obj = workload.obj
    spec = obj.body.get_map("spec")
    is_job = obj.kind == "Job" and obj.group == "batch.volcano.sh"
    if is_job and spec is not None and spec.get("schedulerName") in names:
        return spec.value_span("schedulerName"), ("spec", "schedulerName"), "is a Volcano Job"
    for pod in workload.pods:
        scheduler = pod.spec.get("schedulerName")
        if scheduler in names:
            return pod.spec.value_span("schedulerName"), pod.path + ("schedulerName",), f"has pods scheduled by `{scheduler}`"
        meta = pod.metadata
        annotations = meta.get_map("annotations") if meta is not None else None
        for key in VOLCANO_ANNOTATIONS if annotations is not None else ():
            if key in annotations:
                node = pod.path[:-1] + ("metadata", "annotations", key)
                return annotations.value_span(key), node, f"has pods in a Volcano PodGroup (`{key}`)"
    if is_job:
        return obj.span, ("kind",), "is a Volcano Job"
    return None


def schedulers(obj, ctx):
    """(namespace, workload, queued by Kueue, how it is Volcano's) of each workload that is either."""
    workload = ctx.index.workload(obj)
    if workload is None:
        return
    queued = queue_ref(obj) is not None
    found = _volcano(workload, [str(n) for n in ctx.options["volcano-scheduler-names"]])
    if queued or found is not None:
        yield obj.namespace or "default", obj.stub(), queued, found


@rule(code="QUE009", name="mixed-gang-schedulers", severity="warning", scope=PROJECT,
      requires=("LocalQueue", "ClusterQueue", "Queue"), tags=("queues", "gang-scheduling"), collect=schedulers,
      options={"volcano-scheduler-names": list[str]}, defaults={"volcano-scheduler-names": ["volcano"]})
def check(found, ctx):
    kueue: dict[str, list] = {}
    volcano: dict[str, list] = {}
    for namespace, obj, queued, how in found:
        if queued:
            kueue.setdefault(namespace, []).append(obj)
        if how is not None:
            volcano.setdefault(namespace, []).append((obj, *how))
    for namespace, entries in sorted(volcano.items()):
        queued = kueue.get(namespace)
        if not queued:
            continue
        for obj, span, node, what in entries:
            if any(o.key == obj.key for o in queued):
                message = (f"{obj.kind} `{obj.name}` is queued by Kueue (`{QUEUE_NAME_KEY}`) and {what}: two systems "
                           "admit and preempt it; let one of them govern it")
            else:
                shown = distinct(queued, key=identity)  # one object in several files is one workload
                others = ", ".join(f"{o.kind} `{o.name}`" for o in shown[:3]) + (" …" if len(shown) > 3 else "")
                message = (f"{obj.kind} `{obj.name}` {what}, but Kueue queues workloads of namespace `{namespace}` "
                           f"too ({others}): neither system sees the other's GPUs; keep one queueing and "
                           "gang-scheduling system per namespace")
            yield Finding(span, message, obj=obj, node=node)
