"""The replicas of a model server may all land on one node.

## What it does
Flags a Deployment or StatefulSet that serves a model (a container running a model-server image
or command, as REL001 recognises them) with `replicas` of 2 or more when its pod template has
neither `topologySpreadConstraints` nor a pod anti-affinity (`affinity.podAntiAffinity`, required
or preferred). The finding points at the `replicas` value.

A workload without `replicas` (one replica, or an autoscaler's count) and single-replica servers
are not judged; nor are other Deployments, Jobs and training workloads.

## Why is this bad?
The article asks for autoscaling "to support high model request volumes at peak times" and
points at AKS's resiliency and reliability practices, which spread replicas across nodes and
availability zones. The scheduler does not do that by itself: GPU pools are small and
bin-packing places the replicas where the GPUs are free, often on one node. A node upgrade, a
Spot eviction or a failed GPU then takes every replica of the model down at once, and the service
is out until new nodes join and the weights load again.

## Example
```yaml
spec:
  replicas: 3
  template:
    metadata:
      labels: {app: llm}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
```

Use instead:
```yaml
spec:
  replicas: 3
  template:
    metadata:
      labels: {app: llm}
    spec:
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: ScheduleAnyway
        labelSelector: {matchLabels: {app: llm}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
```

## Known problems
- Whether to spread over nodes or zones, and whether strictly (`DoNotSchedule`, which can leave
  replicas pending on a small GPU pool) is the user's choice: there is no automatic fix.
- Cluster-level default spreading (a scheduler profile's `defaultConstraints`) is not seen.

## References
- Kubernetes, Pod topology spread constraints: https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
- AKS, Resiliency and reliability best practices: https://learn.microsoft.com/azure/aks/best-practices-app-cluster-reliability
"""

from mlops_lint.model.serving import long_running_server
from mlops_lint.rule import WORKLOAD, Finding, rule

MIN_REPLICAS = 2


def replicas(workload) -> int | None:
    """The literal ``spec.replicas`` of a Deployment or StatefulSet, else None."""
    spec = workload.obj.body.get_map("spec")
    value = spec.get("replicas") if spec is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def spread(pod) -> bool:
    """Whether the pod template spreads its replicas (topology spread or pod anti-affinity)."""
    if pod.spec.get("topologySpreadConstraints"):
        return True
    affinity = pod.spec.get("affinity")
    return isinstance(affinity, dict) and bool(affinity.get("podAntiAffinity"))


@rule(code="REL002", name="serving-replicas-not-spread", severity="info", scope=WORKLOAD, tags=("reliability", "serving"))
def check(workload, ctx):
    count = replicas(workload)
    if count is None or count < MIN_REPLICAS or not workload.pods:
        return
    sign = long_running_server(workload)
    if sign is None or any(spread(pod) for pod in workload.pods):
        return
    spec = workload.obj.body.get_map("spec")
    yield Finding(
        spec.value_span("replicas"),
        f"{workload.kind} `{workload.obj.name}` serves a model ({sign}) with {count} replicas but neither "
        "`topologySpreadConstraints` nor a pod anti-affinity: the scheduler may put every replica on one node, "
        "and one node drain or GPU failure takes the model offline",
        node=("spec", "replicas"),
        fix="add `topologySpreadConstraints` over `kubernetes.io/hostname` (or zones) with the pods' labels, "
            "or a preferred `podAntiAffinity`",
    )
