"""A multi-replica model server without a PodDisruptionBudget.

## What it does
Flags a model server with two or more copies of the model and no PodDisruptionBudget
(`policy/v1`) of the project that selects its pods: a PDB whose namespace is the workload's
(either unwritten counts as a match) and whose `selector` matches the pods' labels. The servers
judged, and the labels their pods carry:

- a Deployment or StatefulSet that serves a model (a container running a model-server image or
  command, as REL001 recognises them) with `replicas` of 2 or more: its pod template's labels;
- a LeaderWorkerSet that serves a model with `replicas` (groups) of 2 or more: its leader's and
  workers' template labels, and `leaderworkerset.sigs.k8s.io/name: <name>`, which the LWS
  controller sets on every pod of the set;
- a KServe InferenceService whose predictor keeps `minReplicas` of 2 or more: the
  InferenceService's and the predictor's `labels`, and the labels KServe sets on the predictor's
  pods (`serving.kserve.io/inferenceservice: <name>`, `component: predictor`).

The finding points at the `replicas` (or `minReplicas`) value.

Single-replica servers (a PDB cannot keep one replica up through a drain without blocking it),
servers without a literal count, other Deployments, Jobs and training workloads are not judged.
Nor is a KubeRay RayService: its worker `replicas` count Ray nodes, not copies of the model (one
Ray Serve replica may span several workers, and Ray's autoscaler changes the count), and its head
pod, which every replica needs, is a single pod a budget can only pin.

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

For a LeaderWorkerSet, a drain that evicts one pod of a group restarts the whole group (the LWS
default `RecreateGroupOnPodRestart`), so a drain of a few nodes can take every group down.

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

(for a LeaderWorkerSet, `matchLabels: {leaderworkerset.sigs.k8s.io/name: <name>}`; for a KServe
InferenceService, `matchLabels: {serving.kserve.io/inferenceservice: <name>}`).

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
from mlops_lint.model.serving import KSERVE_NAME_LABEL, LWS_NAME_LABEL, replicated_server
from mlops_lint.rule import WORKLOAD, Finding, rule
from mlops_lint.rules.rel.rel002_serving_replicas_not_spread import MIN_REPLICAS


def budgets(index) -> list:
    return index.memo("REL003-pdbs", lambda: [o for o in index.of_kind("PodDisruptionBudget") if o.group == "policy"])


def covered(pdb, namespace: str | None, labels) -> bool:
    if pdb.namespace and namespace and pdb.namespace != namespace:
        return False
    spec = pdb.body.get("spec")
    return isinstance(spec, dict) and selector_matches(spec.get("selector"), labels)


@rule(code="REL003", name="serving-pdb-missing", severity="warning", scope=WORKLOAD, tags=("reliability", "serving"))
def check(workload, ctx):
    if not workload.pods:
        return
    found = replicated_server(workload)
    if found is None or found.count < MIN_REPLICAS:
        return
    # the labels each pod carries: its template's, and those its controller adds
    pod_labels = [{**pod.labels, **found.labels} if found.labels else pod.labels for pod in found.pods]
    namespace = workload.obj.namespace
    if any(covered(pdb, namespace, labels) for pdb in budgets(ctx.index) for labels in pod_labels):
        return
    app = next((pair for pair in found.labels.items() if pair[0] in (LWS_NAME_LABEL, KSERVE_NAME_LABEL)), None)
    if app is None:
        app = next(iter(pod_labels[0].items()), None)
    selector = f"`selector: {{matchLabels: {{{app[0]}: {app[1]}}}}}`" if app else "a selector of its pods' labels"
    field = " (`minReplicas`)" if found.key == "minReplicas" else " (groups of pods)" if found.groups else ""
    yield Finding(
        found.holder.value_span(found.key),
        f"{workload.kind} `{workload.obj.name}` serves a model ({found.sign}) with {found.count} replicas{field} "
        "but no PodDisruptionBudget selects its pods: a node upgrade or autoscaler scale-down may evict every "
        "replica at once",
        node=found.node,
        fix=f"add a PodDisruptionBudget with `maxUnavailable: 1` and {selector}",
    )
