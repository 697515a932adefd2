"""A ClusterQueue over GPU nodes has no GPU quota, yet GPU jobs are queued to it.

## What it does
Flags a Kueue `ClusterQueue` when all of these hold:

- a workload of the project is queued to it (its `kueue.x-k8s.io/queue-name` names a LocalQueue
  of its namespace whose `spec.clusterQueue` is this ClusterQueue) and requests a GPU resource
  (`nvidia.com/gpu`, `nvidia.com/gpu.shared`, `nvidia.com/mig-<profile>`, `amd.com/gpu`, in
  requests or limits);
- no resource group of the ClusterQueue lists that resource in `coveredResources`;
- at least one of its flavors covers GPU nodes: the ResourceFlavor's `nodeLabels` select GPU nodes
  (the configured `gpu-node-labels`, or keys only GPU nodes carry such as
  `kubernetes.azure.com/accelerator` or `nvidia.com/gpu.present`), its `nodeTaints` hold a GPU
  taint, or it has no `nodeLabels` at all (a flavor for every node, GPU nodes included).

One finding per missing GPU resource, at the `coveredResources:` key of the first resource group
that holds such a flavor, naming the flavor and the workloads that are stuck.


One workload (kind, namespace and name) written in several files is named and counted once.

A workload whose framework the project's Kueue `Configuration` leaves out of
`integrations.frameworks` is not queued to the ClusterQueue (Kueue does not manage it: QUE019).

## Why is this bad?
The article's ClusterQueues carry "CPU, memory, and nvidia.com/gpu quotas". Kueue admits a
workload only when its ClusterQueue covers every resource it requests: a GPU job sent to a queue
without GPU quota is inadmissible ("resource nvidia.com/gpu unavailable in ClusterQueue") and
stays suspended forever, while the GPU nodes the queue's flavor describes sit idle.

## Example
```yaml
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a-gpu
spec:
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: nvidia-gpu          # nodeLabels: {accelerator: nvidia}
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: memory, nominalQuota: 256Gi}
```

Use instead:
```yaml
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: nvidia-gpu
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: memory, nominalQuota: 256Gi}
      - {name: nvidia.com/gpu, nominalQuota: "4"}
```

## Known problems
- When the ClusterQueue's flavors are not ResourceFlavors of the project, or none of them covers
  GPU nodes, the stuck GPU jobs are reported by QUE006 (workload-exceeds-quota) on each job
  instead, so the two rules never report the same gap twice.
- When the project defines the LocalQueue or ClusterQueue several times (alternative samples,
  overlays), the definitions nearest the job (its file, else its folder) are used, and the gap is
  reported only when none of them covers the GPU resource.
- Kueue's `resources.excludeResourcePrefixes` setting makes Kueue ignore resources; a GPU resource
  excluded there is reported all the same.

## References
- Kueue, ClusterQueue: https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/
- Kueue, ResourceFlavor: https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/
"""

from mlops_lint.model.document import distinct, identity
from mlops_lint.model.k8s import is_gpu_resource
from mlops_lint.model.kueue import cluster_queues_of, covered_resources, gpu_flavors, queue_ref, resource_groups
from mlops_lint.model.kueueconfig import ignored_by_kueue
from mlops_lint.rule import PROJECT, Finding, rule
from mlops_lint.validation.validate import malformed


def _gpus(workload) -> set[str]:
    found: set[str] = set()
    for container in workload.containers():
        for section in (container.requests, container.limits):
            found.update(name for name, res in section.items()
                         if is_gpu_resource(name) and (res.value is None or res.value > 0))
    return found


def uncovered(obj, ctx):
    """(ClusterQueue, GPU resource, workload) for each GPU resource a queued workload requests that
    no definition of its ClusterQueue covers."""
    if queue_ref(obj) is None or ignored_by_kueue(obj, ctx.index, ctx.config):
        return  # (a kind Kueue does not manage here is not queued to it: QUE019's finding)
    workload = ctx.index.workload(obj)
    gpus = _gpus(workload) if workload is not None else ()
    queues = cluster_queues_of(ctx.index, obj) if gpus else []
    if any(malformed(cq, ctx, "spec", "resourceGroups") for cq in queues):
        return  # the API server refuses that ClusterQueue's resource groups: SCH002's finding, not a quota gap
    for resource in gpus:
        if any(resource in covered_resources(cq) for cq in queues):
            continue  # one definition of its ClusterQueue covers it: not a gap we can be sure of
        for cq in queues:
            yield cq.key, resource, obj.stub()


@rule(code="QUE005", name="kueue-gpu-quota-missing", severity="error", scope=PROJECT, requires=("ClusterQueue",),
      collect=uncovered, tags=("queues", "kueue", "gpu"))
def check(found, ctx):
    index = ctx.index
    users: dict[tuple, tuple] = {}
    for key, resource, workload in found:
        cq = index.by_key(key)
        if cq is not None:
            users.setdefault(key, (cq, {}))[1].setdefault(resource, []).append(workload)
    for cq, needs in users.values():
        missing = sorted(set(needs) - covered_resources(cq))
        flavors = gpu_flavors(cq, index, ctx.config) if missing else []
        if not flavors:
            continue
        flavor, why = flavors[0]
        group = next((g for g in resource_groups(cq) if flavor in g.flavor_names), None)
        span = group.span if group is not None else cq.body.key_span("spec")
        node = group.node + ("coveredResources",) if group is not None else ("spec",)
        for resource in missing:
            jobs = distinct(needs[resource], key=identity)  # one object in several files is one job
            shown = ", ".join(f"{j.kind} `{j.namespace or 'default'}/{j.name}`" for j in jobs[:3])
            more = f" and {len(jobs) - 3} more" if len(jobs) > 3 else ""
            yield Finding(
                span,
                f"ClusterQueue `{cq.name}` has no {resource} quota, yet {shown}{more} queued to it "
                f"request{'s' if len(jobs) == 1 else ''} {resource} and its flavor `{flavor}` covers GPU nodes "
                f"({why}): Kueue never admits a workload that requests a resource its ClusterQueue does not cover; "
                f"add {resource} to `coveredResources` with a `nominalQuota` in each flavor",
                obj=cq, node=node,
            )
