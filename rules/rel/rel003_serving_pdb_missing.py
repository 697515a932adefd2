"""A multi-replica model server without a PodDisruptionBudget.

## What it does
Flags a Deployment or StatefulSet that serves a model (a container running a model-server image
or command, as REL001 recognises them) with `replicas` of 2 or more when no PodDisruptionBudget
(`policy/v1`) of the project selects its pods: a PDB whose namespace is the workload's (either
unwritten counts as a match) and whose `selector` matches the pod template's labels. The finding
points at the `replicas` value.

Single-replica servers (a PDB cannot keep one replica up through a drain without blocking it),
workloads without a literal `replicas`, other Deployments, Jobs and training workloads are not
judged.

## Why is this bad?
The article points at AKS's resiliency and reliability practices, and notes that disruption
budgets shape how the cluster autoscaler scales down. Node image upgrades, cluster upgrades and
the autoscaler's scale-down all drain nodes with the eviction API, which respects only
PodDisruptionBudgets: without one, a drain may evict every replica of the model at once (they
often share a node, see REL002), and the service is down until the replacements have pulled their
image and loaded the weights, which for an LLM takes minutes.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: serving}
spec:
  replicas: 3
  template:
    metadata:
      labels: {app: llm}
```

Use instead (beside it):
```yaml
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: llm, namespace: serving}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: llm}
```

## Known problems
- A PDB created outside the linted files (another chart, the platform team's repository) is not
  seen; suppress the finding there.
- The budget (`minAvailable` or `maxUnavailable`, and how much) is the user's choice: there is no
  automatic fix.

## References
- Kubernetes, Specifying a Disruption Budget for your Application: https://kubernetes.io/docs/tasks/run-application/configure-pdb/
- AKS, Resiliency and reliability best practices: https://learn.microsoft.com/azure/aks/best-practices-app-cluster-reliability
"""

from mlops_lint.model.selectors import selector_matches
from mlops_lint.model.serving import long_running_server
from mlops_lint.rule import WORKLOAD, Finding, rule
from mlops_lint.rules.rel.rel002_serving_replicas_not_spread import MIN_REPLICAS, replicas


def budgets(index) -> list:
    return index.memo("REL003-pdbs", lambda: [o for o in index.of_kind("PodDisruptionBudget") if o.group == "policy"])


def covered(pdb, namespace: str | None, labels) -> bool:
    if pdb.namespace and namespace and pdb.namespace != namespace:
        return False
    spec = pdb.body.get("spec")
    return isinstance(spec, dict) and selector_matches(spec.get("selector"), labels)


@rule(code="REL003", name="serving-pdb-missing", severity="warning", scope=WORKLOAD, tags=("reliability", "serving"))
def check(workload, ctx):
    count = replicas(workload)
    if count is None or count < MIN_REPLICAS or not workload.pods:
        return
    sign = long_running_server(workload)
    if sign is None:
        return
    labels = workload.pods[0].labels
    namespace = workload.obj.namespace
    if any(covered(pdb, namespace, labels) for pdb in budgets(ctx.index)):
        return
    spec = workload.obj.body.get_map("spec")
    app = next(iter(labels.items()), None)
    selector = f"`selector: {{matchLabels: {{{app[0]}: {app[1]}}}}}`" if app else "a selector of its pods' labels"
    yield Finding(
        spec.value_span("replicas"),
        f"{workload.kind} `{workload.obj.name}` serves a model ({sign}) with {count} replicas but no "
        "PodDisruptionBudget selects its pods: a node upgrade or autoscaler scale-down may evict every replica at once",
        node=("spec", "replicas"),
        fix=f"add a PodDisruptionBudget with `maxUnavailable: 1` and {selector}",
    )
