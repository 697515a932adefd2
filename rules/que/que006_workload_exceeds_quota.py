"""A queued workload needs more than its ClusterQueue can ever admit.

## What it does
For every workload queued with `kueue.x-k8s.io/queue-name` whose LocalQueue and ClusterQueue are
in the project, computes what Kueue computes and flags each resource it can never admit:

- **Requests.** Per pod, Kubernetes' effective request (a limit stands in for a missing request;
  app containers and native sidecars add up; an init container runs beside the sidecars started
  before it; the pod needs the larger), times the pods Kueue admits together: a Job's
  `parallelism` (default 1) capped by `completions`, or its `kueue.x-k8s.io/job-min-parallelism`
  with partial admission; a CronJob's job template likewise; each Kubeflow replica type's
  `replicas` (a PyTorchJob is the sum over Master and Worker); a JobSet's replicated jobs
  (`replicas` x their Job's pods); Ray head and worker groups; a StatefulSet's `replicas`; a Pod or
  a Deployment pod one at a time. With a `pods` quota, each pod counts one `pods`.
- **Quota.** What the ClusterQueue can ever hold of a (flavor, resource), with nothing else
  admitted: its `nominalQuota`, plus what its cohort could lend it: the other ClusterQueues'
  quota (less what their `lendingLimit` keeps back) and the Cohort objects' own quota, up the
  cohort tree (`parentName`), capped by its own `borrowingLimit` (Kueue's `potentialAvailable`).
- **Flavors.** Kueue gives each pod set one flavor per resource group: a flavor whose
  `nodeTaints` (NoSchedule, NoExecute) the pods tolerate (with the flavor's `tolerations`) and
  whose `nodeLabels` match the pods' nodeSelector and required node affinity (only the label
  keys the group's flavors use count).

It reports (1) a requested resource that no resource group covers ("resource unavailable in
ClusterQueue"); (2) a pod set that no matching flavor can hold; (3) a pod set that matches no
flavor at all; (4) pod sets that together need more than all the group's flavors could give.
The finding points at the request of the container that asks the most of the resource.

A workload whose framework the project's Kueue `Configuration` leaves out of
`integrations.frameworks` is left to QUE019: Kueue does not manage it, so does not admit it at all.

## Why is this bad?
"A ClusterQueue quota is a scheduling quota": Kueue admits a workload only when its whole request
fits, all pods at once ("Admit distributed workers as a group"). A workload larger than anything
its ClusterQueue can ever reach, borrowing included, is never admitted: it stays suspended in the
queue, and with `StrictFIFO` it blocks every job behind it. The article's four-GPU team queue
cannot run a job of three 2-GPU workers.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: pretrain
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue      # -> ClusterQueue team-a-gpu, 4 GPUs, no cohort
spec:
  suspend: true
  parallelism: 8
  template:
    spec:
      containers:
      - name: trainer
        resources:
          requests: {nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 1}
```

Use instead:
```yaml
spec:
  suspend: true
  parallelism: 4             # or raise the ClusterQueue's quota, or join a cohort that can lend
```

## Options
- `exclude-resource-prefixes` (list of strings): resources Kueue is configured to ignore (its
  `resources.excludeResourcePrefixes`); requests of such resources are not checked. Default: none.

## Known problems
- GPU resources the ClusterQueue does not cover at all are QUE005's when the queue's flavors cover
  GPU nodes (reported once, on the ClusterQueue), and this rule's otherwise.
- LimitRange defaults and RuntimeClass overhead, which Kueue adds to the requests, are not added
  here: a request can only come out smaller, so every finding still holds.
- Kueue's resource transformations (its configuration, not in the project) turn requested
  resources into others. When a ClusterQueue covers a resource that pods do not request by that
  name (`cpu_credits`, `nvidia.com/total-gpucores`), transformations are taken to be in use and an
  uncovered extended resource is not reported; cpu, memory, ephemeral-storage, hugepages and GPUs
  still are. When the project defines a LocalQueue or ClusterQueue several times, the definitions
  nearest the workload (its file, else its folder) are used, and a finding needs every one of them
  to fail. Definitions in several files are alternatives (variant files, of which one is
  applied): a ClusterQueue in a cohort lends the quota of one of its definitions, and a
  ResourceFlavor defined several times refuses a pod set only when every definition does.
- The other ClusterQueues and Cohorts of a cohort must be in the project to be counted; quota
  lent by ClusterQueues defined elsewhere is missed, which can make a workload look too large.
- Topology-aware scheduling, DRA devices and admission checks are not modelled; nor are elastic
  (workload-slicing) jobs.

## References
- Kueue, ClusterQueue (quotas, cohorts, borrowing and lending limits): https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/
- Kueue, Cohort: https://kueue.sigs.k8s.io/docs/concepts/cohort/
- Kueue, partial admission: https://kueue.sigs.k8s.io/docs/tasks/run/jobs/#partial-admission
- Kubernetes, resources of init containers and sidecars: https://kubernetes.io/docs/concepts/workloads/pods/init-containers/#resource-sharing-within-containers
"""

from mlops_lint.model.kueue import (
    admission_problems,
    cluster_queues_of,
    cohort_of,
    format_amount,
    queue_ref,
    quota_tree,
    quotas,
)
from mlops_lint.model.kueueconfig import ignored_by_kueue
from mlops_lint.model.position import Span
from mlops_lint.rule import WORKLOAD, Finding, rule
from mlops_lint.validation.validate import malformed


def _anchor(problem, workload) -> tuple[Span, tuple]:
    request = problem.anchor
    if request is not None:
        container, entry = request.container, request.entry
        section = "requests" if entry.name in container.requests else "limits"
        return entry.value_span, container.path + ("resources", section, entry.name)
    return problem.podset.pod.span, problem.podset.pod.path


def _quota_text(cq, flavor: str, resource: str, index) -> str:
    quota = quotas(cq).get((flavor, resource))
    nominal = quota.nominal if quota is not None else 0
    text = f"{format_amount(resource, nominal)} in flavor `{flavor}`"
    extra = quota_tree(index).borrowable(cq, (flavor, resource))
    if extra > 0:
        text += f" plus up to {format_amount(resource, extra)} borrowed in cohort `{cohort_of(cq)}`"
    return text


def _message(problem, workload, cq, index) -> str:
    obj, podset, resource = workload.obj, problem.podset, problem.resource
    who = f"{obj.kind} `{obj.name}`"
    request = problem.anchor
    per = f" ({podset.count} x {format_amount(resource, request.amount)})" if request is not None else ""
    need = format_amount(resource, problem.need)
    if problem.kind == "uncovered":
        return (f"{who} requests {resource} ({need} for its {podset.describe()}), which ClusterQueue `{cq.name}` does "
                f"not cover: Kueue never admits a workload with a resource its ClusterQueue has no quota for; add "
                f"{resource} to a resource group of `{cq.name}`, or drop the request")
    if problem.kind == "no-flavor":
        return (f"{who}: no flavor of ClusterQueue `{cq.name}` can take its {podset.describe()} "
                f"({problem.detail}), so Kueue never admits it; select and tolerate the nodes of one of its flavors")
    if problem.whole:
        return (f"{who} needs {need} {resource} for all its pod sets together, but ClusterQueue `{cq.name}` can "
                f"never hold more than {format_amount(resource, problem.can)} of it over all its flavors: Kueue "
                "never admits it; shrink the job or raise the quota")
    if problem.detail:
        return (f"{who}: among the flavors of ClusterQueue `{cq.name}` that fit its {podset.describe()} "
                f"({', '.join(f'`{f}`' for f in problem.flavors)}), {problem.detail}, and Kueue gives a pod set one "
                "flavor per resource group, so it never admits it; raise the quota of one flavor")
    best = max(problem.flavors, key=lambda f: quota_tree(index).potential_available(cq, (f, resource)))
    return (f"{who} needs {need} {resource} for its {podset.describe()}{per}, but ClusterQueue `{cq.name}` can "
            f"never give one pod set more than {_quota_text(cq, best, resource, index)}: Kueue admits the pods "
            "together or not at all, so it never admits it; lower the parallelism or requests, or raise the quota")


@rule(code="QUE006", name="workload-exceeds-quota", severity="error", scope=WORKLOAD, tags=("queues", "kueue"),
      options={"exclude-resource-prefixes": list[str]}, defaults={"exclude-resource-prefixes": []})
def check(workload, ctx):
    if queue_ref(workload.obj) is None or ignored_by_kueue(workload.obj, ctx.index, ctx.config):
        return  # (Kueue does not manage its kind here, so does not admit it at all: QUE019's finding)
    verdicts = []
    for cq in cluster_queues_of(ctx.index, workload.obj):
        if malformed(cq, ctx, "spec", "resourceGroups"):
            return  # the API server refuses its resource groups: SCH002's finding, its quota is unknown
        problems = admission_problems(workload, cq, ctx.index, ctx.config, ctx.options["exclude-resource-prefixes"])
        if not problems:
            return  # admissible there (or not decidable): one fitting definition is enough
        verdicts.append((cq, problems))
    if not verdicts:
        return
    cq, problems = verdicts[0]
    for problem in problems:
        span, node = _anchor(problem, workload)
        yield Finding(span, _message(problem, workload, cq, ctx.index), node=node)
