"""Pods that must run together need more GPUs than the node pools they can land on can ever have.

## What it does
Takes the pods of a gang, the pods that must all run at once before any of them makes progress:

- every replica of a Kubeflow training job (PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob,
  JAXJob), every pod of a JobSet's replicated jobs (replicas x parallelism), one group of a
  LeaderWorkerSet (its leader and `size - 1` workers), every task of a Volcano Job;
- a batch `Job` that runs two or more pods at once (`parallelism`, capped by `completions`)
  whose pods find each other, as QUE013 reads it: an Indexed Job with a `subdomain`, or a
  command or environment that starts a rendezvous (`torchrun`, `MASTER_ADDR`, `WORLD_SIZE`,
  `mpirun` …). Independent pods (a sweep, even one Kueue admits whole) can run a few at a time.

It adds up the whole GPUs (`nvidia.com/gpu`, `amd.com/gpu`) those pods request, per resource,
and compares the sum with the most the node pools they can land on can ever hold: for each pool
any of the gang's GPU pods can land on (XPL001's placement: node selectors, affinity, taints,
Kueue flavors, the pools that offer the GPU), `--max-count` nodes when the cluster autoscaler is
on, else `--node-count`, times the GPUs of one node of its VM size. Fires when the gang needs more
than the sum over those pools. The finding points at the GPU request of the gang's first GPU pod
template and names each pool's share.

## Why is this bad?
A gang starts only when every one of its pods is placed. With fewer GPUs in all the pools it may
use than it asks for, the autoscaler can never add enough nodes: the job waits forever with some
pods Pending (the autoscaler logs that the pool is at its maximum), and without gang admission
the pods already placed hold their GPUs while they wait. The article: "A pending GPU pod triggers
scale-up only when its complete scheduling requirements match a node pool template. Check the GPU
resource request, VM capacity, labels, taints, tolerations, affinity, topology constraints,
persistent volume topology, maximum node count, and Azure quota", and "for a distributed job that
can't make progress until every worker is running, partial placement can waste GPU capacity."

## Example
```yaml
# the pool: az aks nodepool add --name a100np --node-vm-size Standard_NC48ads_A100_v4 (2 GPUs)
#   --enable-cluster-autoscaler --min-count 0 --max-count 2 --labels gpu=a100 ...
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llm-finetune
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template: ...        # nodeSelector gpu: a100, nvidia.com/gpu: 2
    Worker:
      replicas: 3
      template: ...        # nodeSelector gpu: a100, nvidia.com/gpu: 2
```

Use instead:
```yaml
    Worker:
      replicas: 1          # 4 pods x 2 GPUs need 8: or raise the pool's --max-count to 4
```

## Known problems
- Only a bound is checked: the pods may still not fit for want of CPU or memory, or because a
  node's GPUs are split between pods of different sizes. Pods of several clusters' pools are
  summed together.
- A pool whose size, VM size or GPU count is unknown, and the pools a cluster made elsewhere has
  beside the project's, may provide any number of GPUs: no finding then. Node auto-provisioning
  NodePools are bounded by their `limits`, which are not read: no finding either.
- A gang smaller than the job is not modelled: an elastic PyTorchJob (`elasticPolicy`), a
  Kubeflow `schedulingPolicy.minAvailable` or a Volcano `minAvailable` below the pod count (or not
  a literal number), a Volcano task's own `minAvailable`, and
  a pod count that is not a literal number leave the job unjudged or count one pod.
- In a folder of unrelated repositories linted by path (no git work tree, no config), a gang is
  judged only when every pool it can land on is defined in its own top-level folder (or in the
  config): see `linter.model.locality`.
- MIG profiles and GPUs claimed through Dynamic Resource Allocation are not counted; Kubeflow
  Trainer v2 TrainJobs and KubeRay clusters are not checked.

## References
- AKS, Use the cluster autoscaler: https://learn.microsoft.com/azure/aks/cluster-autoscaler
- Kueue, all-or-nothing with ready pods: https://kueue.sigs.k8s.io/docs/tasks/manage/setup_wait_for_pods_ready/
- Volcano, PodGroup: https://volcano.sh/en/docs/podgroup/
"""

from __future__ import annotations

from fractions import Fraction

from mlops_lint.model.cluster import cluster_of, gpus_of, pod_requests, resource_anchor
from mlops_lint.model.distributed import KUBEFLOW, job_pods_talk
from mlops_lint.model.k8s import REPLICA_SPEC_FIELDS
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.quantity import format_quantity
from mlops_lint.rule import WORKLOAD, Finding, rule

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
_GANG_KINDS = {("jobset.x-k8s.io", "JobSet"), ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
               ("batch.volcano.sh", "Job"), ("batch", "Job")}


def _int(value, default=None):
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _gang_job(workload) -> int | None:
    """How many pods a batch Job runs at once when they must all run together (two or more that
    find each other: linter.model.distributed.job_pods_talk), else None."""
    spec = workload.obj.body.get_map("spec")
    parallelism = _int(spec.get("parallelism"), 1)
    completions = _int(spec.get("completions"))
    count = min(parallelism, completions) if completions is not None else parallelism
    return count if count >= 2 and job_pods_talk(workload) else None


def _members(workload) -> list[tuple] | None:
    """(pod template, pods of it in one gang) of the workload's gang, or None when it is no gang
    (or a gang smaller than the job, which is not modelled)."""
    obj = workload.obj
    spec = obj.body.get_map("spec")
    if spec is None:
        return None
    kind = (obj.group, obj.kind)
    if kind == ("batch", "Job"):
        count = _gang_job(workload)
        return [(pod, count) for pod in workload.pods] if count is not None else None
    if kind == ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"):
        lws = spec.get_map("leaderWorkerTemplate")
        size = _int(lws.get("size"), 1) if lws is not None else 1
        one = {"leader": 1, "worker": size - 1}
        return [(pod, one.get(pod.role, size)) for pod in workload.pods]
    if obj.group == KUBEFLOW:
        if "elasticPolicy" in spec:
            return None
        policy = spec.get_map("runPolicy")
        scheduling = policy.get_map("schedulingPolicy") if policy is not None else None
        total = sum(_int(pod.replicas, 1) for pod in workload.pods)
        if scheduling is not None and "minAvailable" in scheduling and _int(scheduling.get("minAvailable"), 0) < total:
            return None  # the gang may be smaller than the job
    elif kind == ("batch.volcano.sh", "Job"):
        total = sum(_int(pod.replicas, 1) for pod in workload.pods)
        if any("minAvailable" in task for task in _tasks(spec)) or _int(spec.get("minAvailable"), 0) < total:
            return None  # the gang may be smaller than the job
    return [(pod, _int(pod.replicas, 1)) for pod in workload.pods]


def _tasks(spec):
    tasks = spec.get_seq("tasks")
    return [task for _, task in tasks.maps()] if tasks is not None else []


def _supply(verdicts, resource):
    """(most GPUs the pools can ever hold, each pool's share) or None when one is unknown."""
    total, shares = 0, []
    for verdict in verdicts:
        pool = verdict.pool
        per_node, nodes = gpus_of(pool, resource), pool.max_nodes()
        if per_node is None or nodes is None:
            return None
        if per_node == 0:
            continue
        total += nodes * per_node
        shares.append(f"`{pool.display}` ({nodes} node{'s' * (nodes != 1)} x {per_node} GPU{'s' * (per_node != 1)})")
    return total, shares


@rule(code="XPL007", name="gang-exceeds-pool-capacity", severity="error", scope=WORKLOAD,
      tags=("cluster", "gpu", "gang-scheduling"))
def check(workload, ctx):
    obj = workload.obj
    if workload.generic or not ((obj.group == KUBEFLOW and obj.kind in REPLICA_SPEC_FIELDS)
                                or (obj.group, obj.kind) in _GANG_KINDS):
        return
    if not any(pod.uses_gpu for pod in workload.pods):
        return
    cluster = cluster_of(ctx.index, ctx.config)
    if not cluster.has_pools:
        return
    members = _members(workload)
    if not members or sum(count for _, count in members) < 2:
        return
    for resource in GPU_RESOURCES:
        demand, parts, pools, first = Fraction(0), [], {}, None
        for pod, count in members:
            request = pod_requests(pod).get(resource)
            if request is None or count <= 0:
                continue
            placement = cluster.placement(pod)
            candidates = placement.known_candidates if placement is not None else None
            if not candidates:
                return  # an unknown pool may take it, or none can (XPL001/XPL002's finding)
            if max((gpus_of(v.pool, resource) or 0) for v in candidates) < request.amount:
                return  # one pod fits on no node: XPL003's finding
            for verdict in candidates:
                pools.setdefault(id(verdict.pool), verdict)
            demand += request.amount * count
            parts.append(f"{pod.role} {count} x {format_quantity(request.amount)}" if pod.role
                         else f"{count} pods x {format_quantity(request.amount)}")
            first = first or request
        if first is None:
            continue
        unit = unit_of(ctx.index, ctx.config, [obj.path, *(v.pool.path for v in pools.values())])
        if not all(together(unit, v.pool.path, obj.path) for v in pools.values()):
            return  # a pool of another repository linted beside this one (linter.model.locality)
        supply = _supply(pools.values(), resource)
        if supply is None or demand <= supply[0]:
            continue
        total, shares = supply
        pods = sum(count for pod, count in members if resource in pod_requests(pod))
        span, node = resource_anchor(first)
        group = "each group of " if obj.kind == "LeaderWorkerSet" else ""
        yield Finding(
            span,
            f"{group}{obj.kind} `{obj.name}` runs {pods} GPU pods that must run together, asking for "
            f"{format_quantity(demand)} {resource} in all ({', '.join(parts)}), but the node pools they can land "
            f"on can have at most {total}: {'; '.join(shares) or f'none has {resource}'}; the gang never starts",
            node=node,
            fix="raise the pools' --max-count (or --node-count), or run fewer or smaller pods",
        )
