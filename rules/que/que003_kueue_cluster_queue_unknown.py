"""A LocalQueue points at a ClusterQueue the project does not define.

## What it does
Flags a Kueue `LocalQueue` (`kueue.x-k8s.io`, v1beta1 or v1beta2) whose `spec.clusterQueue`
names no ClusterQueue of the project. ClusterQueues are cluster-scoped, so any ClusterQueue of
that name counts, whatever namespace the manifests put it in. The finding points at the
`clusterQueue` value and suggests the closest ClusterQueue name.

This is a reference rule: it runs only when the project defines at least one ClusterQueue (a
project without any is taken to get them from elsewhere, such as a platform repository).

## Why is this bad?
The LocalQueue is how "each team's namespace" is mapped "to its assigned quota": the quota lives
in the ClusterQueue. A LocalQueue whose ClusterQueue does not exist is inactive, and every job
submitted to it stays suspended as inadmissible; nothing says so at apply time.

## Example
```yaml
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: gpu-queue
  namespace: team-a
spec:
  clusterQueue: team-a-gpus
```

Use instead:
```yaml
spec:
  clusterQueue: team-a-gpu
```

## Known problems
ClusterQueues created outside the project are unknown to the linter: add their manifests to the
project, or suppress the finding.

## References
- Kueue, LocalQueue: https://kueue.sigs.k8s.io/docs/concepts/local_queue/
- Kueue, ClusterQueue: https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/
"""

from mlops_lint.model.kueue import cluster_queue_name, has_kueue_kind, is_kueue, kueue_names, named
from mlops_lint.rule import Finding, Kind, rule
from mlops_lint.suggest import close_matches


@rule(code="QUE003", name="kueue-cluster-queue-unknown", severity="error", scope=Kind("LocalQueue"),
      tags=("queues", "kueue"))
def check(obj, ctx):
    if not is_kueue(obj) or not has_kueue_kind(ctx.index, "ClusterQueue"):
        return
    name = cluster_queue_name(obj)
    if name is None or named(ctx.index, "ClusterQueue", name):
        return
    known = kueue_names(ctx.index, "ClusterQueue")
    # the same for every LocalQueue naming this ClusterQueue (in a monorepo, one per team namespace)
    close = ctx.index.memo(("QUE003-close", name), lambda: close_matches(name, known))
    hint = f"; did you mean `{close[0]}`?" if close else f"; the project defines {', '.join(f'`{n}`' for n in known[:4])}"
    spec = obj.body.get_map("spec")
    yield Finding(
        spec.value_span("clusterQueue"),
        f"LocalQueue `{obj.name}` points at ClusterQueue `{name}`, which the project does not define: the "
        f"LocalQueue is inactive and every job submitted to it stays suspended{hint}",
        node=("spec", "clusterQueue"),
        fix=f"clusterQueue: {close[0]}" if close else None,
    )
