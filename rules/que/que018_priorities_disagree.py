"""Kueue's workload priority and the pods' PriorityClass rank two workloads in opposite orders.

## What it does
Reads every workload Kueue manages (a Job, JobSet, Kubeflow job, RayJob, Deployment … with a
`kueue.x-k8s.io/priority-class` label) whose pods also name a PriorityClass (`priorityClassName`,
not a built-in `system-*` class), and the values of both classes in the project
(`WorkloadPriorityClass` of `kueue.x-k8s.io`, `PriorityClass` of `scheduling.k8s.io`). It fires
when two such workloads are ranked in opposite orders: Kueue's priority puts workload A strictly
above workload B while the pod priority puts A's pods strictly below B's. The finding points at
A's `priorityClassName` (A is the workload Kueue favours and the scheduler does not) and names B
and the four classes with their values.

Left alone: a workload whose framework the project's Kueue `Configuration` leaves out of
`integrations.frameworks` (Kueue does not manage it, so its workload priority ranks nothing;
QUE019 reports it when it is queued); a workload that names only one of the two (a pod without `priorityClassName` runs at
the global default, which is a choice, not a ranking); classes the project does not define or
whose `value` is not a whole number; equal values on either side. A class defined several times
is read from the definitions nearest the workload (its file, else its folder), and a pair is
reported only when every reading disagrees. In a folder of unrelated repositories linted by path,
only workloads of the same top-level folder are compared (`linter.model.locality`).

## Why is this bad?
The article: "Kubernetes pod priority and Kueue workload priority affect different stages: Kueue
controls queue admission, while Kubernetes priority influences scheduling and pod preemption
after admission. Coordinate both policies so they express the same business priority." When they
disagree, Kueue admits A ahead of B (and may preempt B's workload to make room for it), and then
the scheduler lets B's pods preempt A's pods, or schedules them first when capacity is short: the
job the queue chose waits or is evicted, its GPU time is lost, and the two controllers undo each
other's decisions.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue
    kueue.x-k8s.io/priority-class: prod-high        # 100000
spec:
  template:
    spec:
      priorityClassName: training-batch             # 10000
---
apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-eval
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue
    kueue.x-k8s.io/priority-class: batch-low        # 100
spec:
  template:
    spec:
      priorityClassName: inference-critical         # 100000
```

Use instead: classes that rank the workloads the same way on both sides (here
`nightly-eval` with `priorityClassName: training-batch`, or `train` with the higher PriorityClass).

## Known problems
- Only workloads that name both classes are compared; a workload at the global default pod
  priority is not.
- Which side to change is a policy decision: there is no automatic fix.

## References
- Kueue, WorkloadPriorityClass: https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/
- Kubernetes, Pod priority and preemption: https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
"""

from __future__ import annotations

from msgspec import Struct

from mlops_lint.model.document import ObjectStub
from mlops_lint.model.kueue import (KUEUE_GROUP, SCHEDULING_GROUP, SYSTEM_PRIORITY_CLASSES, WORKLOAD_PRIORITY_LABEL,
                                    is_kueue_managed_kind, nearest, priority_refs, priority_value)
from mlops_lint.model.kueueconfig import ignored_by_kueue
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.position import Span
from mlops_lint.rule import PROJECT, Finding, rule


class Ranked(Struct, frozen=True):
    """A Kueue workload that names both a WorkloadPriorityClass and a PriorityClass."""

    obj: ObjectStub
    workload_class: str
    pod_class: str
    span: Span  # the pods' priorityClassName value
    node: tuple


def ranked_workloads(obj, ctx):
    """The facts QUE018 collects: each Kueue workload's two priority classes (kind first)."""
    if not is_kueue_managed_kind(obj) or ignored_by_kueue(obj, ctx.index, ctx.config):
        return  # (a kind whose integration the project's Kueue Configuration leaves out: Kueue ranks nothing)
    workload = ctx.index.workload(obj)
    if workload is None:
        return
    refs = priority_refs(obj, workload)
    label = next((r for r in refs if r.workload_class), None)
    pods = [r for r in refs if not r.workload_class and r.field == "priorityClassName"
            and r.name not in SYSTEM_PRIORITY_CLASSES]
    if label is None or not pods or len({r.name for r in pods}) != 1:
        return  # templates with different pod classes are not one rank
    yield Ranked(obj.stub(), label.name, pods[0].name, pods[0].span, pods[0].node)


def _range(index, kind: str, group: str, name: str, near, unit) -> tuple[int, int] | None:
    """(lowest, highest) value of the class ``name`` nearest ``near`` (None: not defined with a value)."""
    found = [c for c in index.named(kind, name) if c.group == group and together(unit, c.path, near.path)]
    values = [priority_value(c) for c in nearest(found, near)]
    if not values or any(v is None for v in values):
        return None
    return min(values), max(values)


def _said(low: str, value: tuple[int, int]) -> str:
    return f"`{low}` ({value[0] if value[0] == value[1] else f'{value[0]}-{value[1]}'})"


def _shown(stub: ObjectStub) -> str:
    return f"{stub.kind} `{stub.namespace or 'default'}/{stub.name}` ({stub.path}:{stub.span.line})"


@rule(code="QUE018", name="priorities-disagree", severity="warning", scope=PROJECT,
      requires=("WorkloadPriorityClass",), collect=ranked_workloads, tags=("priorities", "kueue", "preemption"))
def check(found, ctx):
    facts = [f for f in found if isinstance(f, Ranked)]
    if len(facts) < 2:
        return
    unit = unit_of(ctx.index, ctx.config, [f.obj.path for f in facts])
    rows = []
    for fact in sorted(facts, key=lambda f: (f.obj.path, f.span.line, f.span.col)):
        kueue = _range(ctx.index, "WorkloadPriorityClass", KUEUE_GROUP, fact.workload_class, fact.obj, unit)
        pod = _range(ctx.index, "PriorityClass", SCHEDULING_GROUP, fact.pod_class, fact.obj, unit)
        if kueue is not None and pod is not None:
            rows.append((fact, kueue, pod))
    for fact, kueue, pod in rows:
        other = next(((o, k, p) for o, k, p in rows
                      if o is not fact and together(unit, o.obj.path, fact.obj.path)
                      and kueue[0] > k[1] and pod[1] < p[0]), None)
        if other is None:
            continue
        o, k, p = other
        yield Finding(
            fact.span,
            f"Kueue ranks {_shown(fact.obj)} above {_shown(o.obj)}, `{WORKLOAD_PRIORITY_LABEL}` "
            f"{_said(fact.workload_class, kueue)} over {_said(o.workload_class, k)}, but its pods' PriorityClass "
            f"{_said(fact.pod_class, pod)} is below the other's {_said(o.pod_class, p)}: the queue admits it first "
            "and the scheduler then lets the other's pods preempt or overtake its pods; make both priorities "
            "express the same order",
            obj=fact.obj, node=fact.node,
            fix=f"give `{fact.obj.name}` a PriorityClass above `{o.pod_class}`, or a WorkloadPriorityClass below "
                f"`{o.workload_class}`",
        )
