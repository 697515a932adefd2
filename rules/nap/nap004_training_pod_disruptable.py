"""A training pod that node auto-provisioning may consolidate away, without `karpenter.sh/do-not-disrupt`.

## What it does
For each pod template of a training workload (a run-to-completion workload, such as a Job, a
Kubeflow or Volcano job, a RayJob or a JobSet, that shows it trains: an ML operator's kind, a
GPU it does not leave idle, or a training word such as `train`, `torchrun` or `--epochs` in its
images, commands or names; a CPU Job whose only sign is `python`, `checkpoint` or a serving
image may be a conversion or data job and is not judged; a workload whose every app container
only waits or looks at the node, as `sleep infinity` in a session to shell into, trains nothing
whatever its kind)
that node auto-provisioning (NAP) may place on a NodePool that
consolidates underused nodes, flags a template without the annotation
`karpenter.sh/do-not-disrupt: "true"`. A NodePool consolidates underused nodes when its
`disruption.consolidationPolicy` is `WhenEmptyOrUnderutilized` (Karpenter's default, and AKS's
default NodePool's), unless a disruption budget of `nodes: "0"` without a `schedule` blocks it
(for every reason or for `Underutilized`). The NodePools are the project's and, in a project
whose nodes NAP makes (see NAP001), AKS's default one. The finding points at the template's
`annotations:` (else its `metadata:`, else its `spec:`).

Templates of a training workload whose pods hold no training progress are not judged: a Trainer
v2 runtime's `dataset-initializer` and `model-initializer` steps (they download, and an evicted
one downloads again) and a RayJob's `submitterPodTemplate` (its Job retries the submission; the
head and the workers hold the run).

## Why is this bad?
Consolidation deletes a node whose pods fit elsewhere (or on a cheaper node) and evicts them:
a Deployment's replica comes back elsewhere, but a training pod restarts from its last
checkpoint, or from scratch, and a distributed job loses every worker's progress since then.
The article wants training to "recover from eviction or preemption" and long jobs protected from
disruption they did not ask for; Karpenter's documented way is the pod annotation
`karpenter.sh/do-not-disrupt: "true"`, which keeps voluntary disruption (consolidation, drift,
expiry) off the node while the pod runs.

## Example
```yaml
spec:
  template:
    spec:
      containers:
      - name: trainer
```

Use instead:
```yaml
spec:
  template:
    metadata:
      annotations:
        karpenter.sh/do-not-disrupt: "true"
    spec:
      containers:
      - name: trainer
```

## Fix safety
Safe. The fix adds `karpenter.sh/do-not-disrupt: "true"` to the pod template's annotations
(creating `metadata:` and `annotations:`): exactly what the finding asks, and it changes only
how Karpenter treats the pod's node while the pod runs. No fix for a TrainJob's view (its pod is
a shared runtime's) or a bare Pod.

## Known problems
- A workload asking for another cloud's accelerator (`google.com/tpu`, `aws.amazon.com/neuron`)
  runs on no AKS node and is not judged.
- A NodePool's `terminationGracePeriod` still ends the protection (NAP003 judges the grace).
- The annotation set by a mutating webhook or a Kueue flavor is not seen.

## References
- Karpenter, Disruption (consolidation, `karpenter.sh/do-not-disrupt`): https://karpenter.sh/docs/concepts/disruption/
- AKS, Node auto-provisioning disruption: https://learn.microsoft.com/azure/aks/node-auto-provisioning-disruption
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.model.k8s import ML_GROUPS, TRAINING_WORDS, PodSpec, runs_any_program, trains_shown
from mlops_lint.model.cluster.modes import nap_in_play as in_play
from mlops_lint.model.nap import consolidates_underutilized
from mlops_lint.model.napcluster import hosts
from mlops_lint.rule import POD, Finding, rule

ANNOTATION = "karpenter.sh/do-not-disrupt"


def _trains(workload) -> str | None:
    """Why the workload is a training run that eviction sets back, else None: it trains
    (:attr:`~linter.model.k8s.Workload.trains`) and holds a GPU, is an ML operator's kind, or shows
    a training word (a CPU Job whose only sign is `python`, `checkpoint` or a serving image may be
    a conversion or a data job)."""
    sign = workload.trains
    if sign is None or workload.uses_gpu:
        return sign
    word = sign.split("`")[1].lower() if sign.count("`") >= 2 else ""
    if word.startswith(TRAINING_WORDS):
        return sign
    if runs_any_program(workload):
        # Ray and MPI on CPUs run batches and demos (a Ray Data resize, MPI's `pi`) as often as
        # training: judged only when the entrypoint or pods show training
        return trains_shown(workload)
    if workload.obj.group in ML_GROUPS:  # the training operators (PyTorchJob, TrainJob, …): training by kind
        return sign
    return None


# accelerators of other clouds: a workload asking for one runs on no AKS node (not judged)
_FOREIGN = ("google.com/", "aws.amazon.com/", "habana.ai/")


def _foreign(workload) -> bool:
    return any(str(name).startswith(_FOREIGN) for pod in workload.pods for container in pod.containers
               for name in (*container.requests, *container.limits))


# pods of a training workload that hold no training progress: Trainer v2's initializer steps (a
# runtime's replicated job name, or its trainjob-ancestor-step label) and a RayJob's submitter
_INITIALIZERS = frozenset({"dataset-initializer", "model-initializer"})


def _holds_no_progress(pod: PodSpec) -> bool:
    if pod.step in _INITIALIZERS or (pod.role in _INITIALIZERS and pod.obj.group == "trainer.kubeflow.org"):
        return True
    return pod.role == "submitter" and pod.obj.group == "ray.io"


def _annotated(pod: PodSpec) -> bool:
    meta = pod.metadata
    annotations = meta.get("annotations") if meta is not None else None
    return isinstance(annotations, dict) and str(annotations.get(ANNOTATION, "")).strip().lower() == "true"


@rule(code="NAP004", name="training-pod-disruptable", severity="warning", scope=POD,
      tags=("aks", "autoscaling", "checkpoint"))
def check(pod: PodSpec, ctx):
    trains = _trains(pod.workload) if pod.workload is not None else None
    if trains is None or _holds_no_progress(pod) or _annotated(pod) or not in_play(ctx.index, ctx.config) or _foreign(pod.workload):
        return
    consolidating = [name for name, obj in hosts(pod, ctx.index, ctx.config) if consolidates_underutilized(obj)]
    if not consolidating:
        return
    meta = pod.metadata if pod.template is not None else None
    if meta is not None and "annotations" in meta.kspans:
        span, node = meta.kspans["annotations"], pod.path[:-1] + ("metadata", "annotations")
    elif pod.template is not None and "metadata" in pod.template.kspans:
        span, node = pod.template.kspans["metadata"], pod.path[:-1] + ("metadata",)
    else:
        span, node = pod.span, pod.path
    names = ", ".join(f"`{name}`" for name in consolidating[:6]) + (" …" if len(consolidating) > 6 else "")
    fix = None
    if pod.template is not None and pod.origin is None:
        fix = plan(f'annotate the pod template `{ANNOTATION}: "true"`',
                   set_path(pod.template, ("metadata", "annotations", ANNOTATION), "true"))
    yield Finding(
        span,
        f"{pod.describe()} of a training workload ({trains}) has no `{ANNOTATION}: \"true\"` annotation and may land on "
        f"NodePool{'s' if len(consolidating) > 1 else ''} {names}, which consolidate{'s' if len(consolidating) == 1 else ''} "
        "underused nodes (WhenEmptyOrUnderutilized): Karpenter may evict it mid-run and it restarts from its last checkpoint",
        node=node + (ANNOTATION,) if node[-1] == "annotations" else node,
        fix=f'metadata: {{annotations: {{{ANNOTATION}: "true"}}}}',
        autofix=fix,
    )
