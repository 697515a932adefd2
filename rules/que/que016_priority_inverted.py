"""A training priority class ranks at or above the class model serving runs with.

## What it does
Flags a PriorityClass (`scheduling.k8s.io`) of the project that training workloads run with when
its `value` is at or above the value of a PriorityClass that model-serving workloads run with, and
the same for Kueue `WorkloadPriorityClass`es named by the `kueue.x-k8s.io/priority-class` label.

- Training workloads: Jobs, CronJobs, Kubeflow jobs, Volcano Jobs, RayJobs, JobSets and
  run-to-completion Pods that show they train (an ML operator's kind, a framework or training
  word in an image, command or name, or a GPU they use for more than `nvidia-smi`).
- Serving workloads: KServe InferenceServices, KubeRay RayServices, KAITO inference Workspaces,
  and Deployments, StatefulSets and LeaderWorkerSets whose container runs a model server (its
  image is vLLM, Triton, TensorFlow Serving, TorchServe, TGI, Ollama, … or its command starts
  `vllm serve`, `tritonserver` and the like).
- A pod that names no class runs with the project's `globalDefault` class, if there is one. The
  built-in `system-*` classes are not judged. One class used by both sides is flagged only when
  workloads of both sides name it: a `globalDefault` class that both just fall back to is no
  ranking at all.

The finding points at the training class's `value` (a class without a literal whole-number value
is not judged) and names the serving class and a workload of each side. A class defined in
several variant files is judged by its lowest value on the training side and its highest on the
serving side, so every combination is inverted. Dangling `kueue.x-k8s.io/priority-class` labels are QUE010's.

## Why is this bad?
The article: "Latency-sensitive inference commonly requires a higher priority than interruptible
batch training", with `training-batch` at 10000 and `inference-critical` at 100000, "so
latency-sensitive inference can preempt interruptible training". With the order reversed (or
equal), a pending inference replica cannot preempt a training pod to get a GPU: a scale-up under
load waits for a training job to finish, and if training may preempt (QUE011) it evicts the
serving replicas instead. Kueue's workload priority decides admission the same way, and the
article asks to "coordinate both policies so they express the same business priority".

## Example
```yaml
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: training-batch
value: 100000
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: inference-critical
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
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: inference-critical
value: 100000
```

## Known problems
- A class shared by training and serving is flagged (the two cannot be ordered); give each its
  own class.
- Which value to change is a policy decision: there is no automatic fix.
- A workload that serves through an image or command the linter does not know as a model server
  is not counted as serving.

## References
- Kubernetes, Pod priority and preemption: https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
- Kueue, WorkloadPriorityClass: https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/
"""

from mlops_lint.model.document import ObjectStub
from mlops_lint.model.kueue import (
    SYSTEM_PRIORITY_CLASSES,
    WORKLOAD_PRIORITY_LABEL,
    is_kueue_managed_kind,
    pod_priority,
    priority_classes_named,
    priority_refs,
    priority_value,
)
from mlops_lint.model.serving import serving_sign
from mlops_lint.rule import PROJECT, Finding, rule

TRAINING, SERVING = "training", "serving"
PRIORITY_CLASS, WORKLOAD_CLASS = "PriorityClass", "WorkloadPriorityClass"


def classes_in_use(obj, ctx):
    """(class kind, class name, side, workload) for each priority class a training or serving
    workload runs with: its pods' PriorityClass and its Kueue WorkloadPriorityClass label."""
    workload = ctx.index.workload(obj)
    if workload is None or workload.generic:
        return
    if workload.is_training:
        if workload.trains is None:
            return  # a `sleep` or hello-world Job is not the training the article ranks
        side = TRAINING
    elif serving_sign(workload) is not None:
        side = SERVING
    else:
        return
    stub = obj.stub()
    seen = {}
    for pod in workload.pods:
        priority = pod_priority(pod, ctx.index)
        if priority.class_name is not None and priority.class_name not in SYSTEM_PRIORITY_CLASSES:
            seen[priority.class_name] = seen.get(priority.class_name, False) or not priority.defaulted
    for name, named in seen.items():
        yield PRIORITY_CLASS, name, side, stub, named
    if is_kueue_managed_kind(obj):
        for ref in priority_refs(obj, None):
            if ref.workload_class:
                yield WORKLOAD_CLASS, ref.name, side, stub, True


def _values(index, kind: str, name: str) -> list[tuple[int, object]]:
    """The definitions of the class with a value, each with it."""
    found = []
    for obj in priority_classes_named(index, kind, name):
        value = priority_value(obj)
        if value is not None:
            found.append((value, obj))
    return found


def _shown(stub: ObjectStub) -> str:
    return f"{stub.kind} `{stub.namespace or 'default'}/{stub.name}`"


@rule(code="QUE016", name="priority-inverted", severity="warning", scope=PROJECT,
      requires=("PriorityClass", "WorkloadPriorityClass"), collect=classes_in_use, tags=("priorities", "preemption"))
def check(found, ctx):
    users: dict[tuple[str, str, str], ObjectStub] = {}
    named: set[tuple[str, str, str]] = set()  # classes a workload of that side names (not only by default)
    for kind, name, side, stub, by_name in found:
        users.setdefault((kind, name, side), stub)
        if by_name:
            named.add((kind, name, side))
    for kind in (PRIORITY_CLASS, WORKLOAD_CLASS):
        serving = []
        for (k, name, side), stub in users.items():
            if k == kind and side == SERVING:
                values = _values(ctx.index, kind, name)
                if values:
                    serving.append((max(v for v, _ in values), name, stub))
        if not serving:
            continue
        for (k, name, side), stub in sorted(users.items(), key=lambda item: item[0]):
            if k != kind or side != TRAINING:
                continue
            values = _values(ctx.index, kind, name)
            if not values:
                continue
            low = min(v for v, _ in values)
            # one class for both sides is judged only when both name it: a global default that every
            # pod gets is no ranking of training against serving
            shared = (kind, name, TRAINING) in named and (kind, name, SERVING) in named
            below = [s for s in serving if s[0] <= low and (s[1] != name or shared)]
            if not below:
                continue
            # the dedicated serving class nearest below (a class training shares is the last choice)
            value, serving_name, serving_stub = min(
                below, key=lambda s: ((kind, s[1], TRAINING) in users and s[1] != name, -s[0], s[1]))
            field = "label `" + WORKLOAD_PRIORITY_LABEL + "`" if kind == WORKLOAD_CLASS else "priorityClassName"
            for _, pc in values:
                span, node = pc.body.value_span("value"), ("value",)  # _values keeps classes with a value
                if serving_name == name:
                    relation = (f"also the class serving runs with ({_shown(serving_stub)}), so inference cannot "
                                "preempt training")
                else:
                    relation = (f"at or above {kind} `{serving_name}` ({value}) that serving runs with "
                                f"({_shown(serving_stub)}): a pending inference replica cannot preempt training "
                                "to get capacity")
                yield Finding(
                    span,
                    f"{kind} `{name}` ({priority_value(pc)}) is used by training ({_shown(stub)}, through its "
                    f"{field}) and is {relation}; rank inference above training",
                    obj=pc, node=node,
                    fix=(f"give training its own {kind}" if serving_name == name else
                         f"set `{name}`'s value below `{serving_name}`'s {value} (or raise the serving class)"),
                )
