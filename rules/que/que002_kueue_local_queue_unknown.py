"""A workload's `kueue.x-k8s.io/queue-name` names no LocalQueue of its namespace.

## What it does
Flags every object Kueue can manage (batch Job and CronJob, JobSet, Kubeflow jobs, RayJob,
RayCluster, TrainJob, AppWrapper, Pod, Deployment, StatefulSet, LeaderWorkerSet) whose
`kueue.x-k8s.io/queue-name` label (or the older annotation; a CronJob's in
`spec.jobTemplate.metadata`) names no LocalQueue of the project in the object's namespace
(`default` when the manifest names none). Names filled in later (`${QUEUE}`, `{{ … }}`) are not
judged. The finding points at the label's value and suggests
the closest LocalQueue name of that namespace, or says where a LocalQueue of that name lives.

This is a reference rule: it runs only when the project defines at least one LocalQueue (a
project without any is taken to get its queues from elsewhere).

A workload whose framework the project's Kueue `Configuration` leaves out of
`integrations.frameworks` is left to QUE019: Kueue does not manage it, whatever queue it names.

## Why is this bad?
Kueue maps "each team's namespace to its assigned quota through a LocalQueue". A job whose
queue does not exist is never admitted (`LocalQueue … doesn't exist`): a job stays suspended, a
Pod or Deployment's pods stay gated, and nothing starts: the team waits for GPUs that its ClusterQueue has free. LocalQueues are namespaced, so a
LocalQueue of the same name in another namespace does not count.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: sweep-42
  namespace: research
  labels:
    kueue.x-k8s.io/queue-name: reseach-queue
```

Use instead:
```yaml
  labels:
    kueue.x-k8s.io/queue-name: research-queue   # a LocalQueue of namespace research
```

## Known problems
LocalQueues created outside the project (by a platform repository) are unknown to the linter:
add their manifests to the project, or suppress the finding. Kueue's default LocalQueue
(`LocalQueueDefaulting`) applies only to jobs without the label and is not involved.

## References
- Kueue, LocalQueue: https://kueue.sigs.k8s.io/docs/concepts/local_queue/
- Kueue, Run a Kubernetes Job: https://kueue.sigs.k8s.io/docs/tasks/run/jobs/
"""

from mlops_lint.model.k8s import is_templated
from mlops_lint.model.kueue import QUEUE_NAME_KEY, has_kueue_kind, kueue_objects, local_queues, queue_ref
from mlops_lint.model.kueueconfig import ignored_by_kueue
from mlops_lint.rule import OBJECT, Finding, rule
from mlops_lint.suggest import close_matches


def _local_queues(index) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The project's LocalQueue names by namespace, and the namespaces by LocalQueue name (each
    sorted, without repeats): built once per index, not scanned per finding."""
    names: dict[str, set[str]] = {}
    namespaces: dict[str, set[str]] = {}
    for lq in kueue_objects(index, "LocalQueue"):
        namespace = lq.namespace or "default"
        names.setdefault(namespace, set()).add(lq.name)
        namespaces.setdefault(lq.name, set()).add(namespace)
    return ({k: sorted(v) for k, v in names.items()}, {k: sorted(v) for k, v in namespaces.items()})


@rule(code="QUE002", name="kueue-local-queue-unknown", severity="error", scope=OBJECT, tags=("queues", "kueue"))
def check(obj, ctx):
    ref = queue_ref(obj)
    if ref is None or is_templated(ref.name) or not has_kueue_kind(ctx.index, "LocalQueue"):
        return
    if ignored_by_kueue(obj, ctx.index, ctx.config):
        return  # Kueue does not manage its kind here, whatever the queue: QUE019's finding
    namespace = obj.namespace or "default"
    if local_queues(ctx.index, ref.name, namespace, obj):
        return
    by_namespace, by_name = ctx.index.memo("QUE002-local-queues", lambda: _local_queues(ctx.index))
    here = by_namespace.get(namespace, [])
    elsewhere = by_name.get(ref.name, [])
    close = ctx.index.memo(("QUE002-close", namespace, ref.name),  # once per name and namespace
                           lambda: close_matches(ref.name, here))
    if close:
        hint = f"; did you mean `{close[0]}`?"
    elif elsewhere:
        hint = (f"; a LocalQueue `{ref.name}` exists in namespace {', '.join(f'`{n}`' for n in elsewhere)}, but "
                "a workload can only use LocalQueues of its own namespace")
    elif here:
        hint = f"; namespace `{namespace}` has {', '.join(f'`{n}`' for n in here[:4])}"
    else:
        hint = f"; the project defines no LocalQueue in namespace `{namespace}`"
    yield Finding(
        ref.span,
        f"{obj.kind} `{obj.name}` is queued to LocalQueue `{ref.name}`, which does not exist in namespace "
        f"`{namespace}`: Kueue never admits it, so it never starts{hint}",
        node=ref.node,
        fix=f"{QUEUE_NAME_KEY}: {close[0]}" if close else None,
    )
