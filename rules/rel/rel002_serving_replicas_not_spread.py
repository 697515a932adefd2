"""The replicas of a model server may all land on one node.

## What it does
Flags a Deployment or StatefulSet that serves a model (a container running a model-server image
or command, as REL001 recognises them) with `replicas` of 2 or more, and a KServe
InferenceService whose predictor keeps `minReplicas` of 2 or more, when the pod template (the
predictor's pod spec) has neither `topologySpreadConstraints` nor a pod anti-affinity
(`affinity.podAntiAffinity` with at least one required or preferred term: an empty list keeps
nothing apart). The finding points at the `replicas` (or `minReplicas`) value.

A workload without a literal count (one replica, or an autoscaler's count) and single-replica
servers are not judged; nor are other Deployments, Jobs and training workloads. Kinds whose
copies of the model are groups of pods placed together on purpose are left out: a LeaderWorkerSet
(each of its `replicas` is a leader and its workers, which the LWS controller and its
`exclusive-topology` annotation keep in one topology domain, each pod usually holding a node's
GPUs) and a multi-node KServe predictor (`workerSpec`); a constraint over the pods' labels would
also pull a group's own pods apart. So is a KubeRay RayService, whose worker `replicas` count Ray
nodes, not copies of the model: Ray Serve places the model's replicas over them
(`max_replicas_per_node` spreads them) and one replica may span several workers.

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

For a KServe InferenceService, the same applies to the predictor:
```yaml
spec:
  predictor:
    minReplicas: 2
    model:
      modelFormat: {name: huggingface}
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

and on the predictor (its pod spec is inline):
```yaml
spec:
  predictor:
    minReplicas: 2
    topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: ScheduleAnyway
      labelSelector: {matchLabels: {serving.kserve.io/inferenceservice: llm}}
    model:
      modelFormat: {name: huggingface}
```

## Known problems
- Whether to spread over nodes or zones, and whether strictly (`DoNotSchedule`, which can leave
  replicas pending on a small GPU pool) is the user's choice: there is no automatic fix.
- Cluster-level default spreading (a scheduler profile's `defaultConstraints`) is not seen.

## References
- Kubernetes, Pod topology spread constraints: https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
- AKS, Resiliency and reliability best practices: https://learn.microsoft.com/azure/aks/best-practices-app-cluster-reliability
"""

from mlops_lint.model.serving import replicated_server
from mlops_lint.rule import WORKLOAD, Finding, rule

MIN_REPLICAS = 2


def spread(pod) -> bool:
    """Whether the pod template spreads its replicas (topology spread or pod anti-affinity)."""
    if pod.spec.get("topologySpreadConstraints"):
        return True
    affinity = pod.spec.get("affinity")
    anti = affinity.get("podAntiAffinity") if isinstance(affinity, dict) else None
    # a term to keep apart by: an empty list (or a map of empty lists) keeps nothing apart
    return isinstance(anti, dict) and any(
        isinstance(terms, list) and terms for key, terms in anti.items()
        if key in ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"))


@rule(code="REL002", name="serving-replicas-not-spread", severity="info", scope=WORKLOAD, tags=("reliability", "serving"))
def check(workload, ctx):
    if not workload.pods:
        return
    found = replicated_server(workload)
    if found is None or found.count < MIN_REPLICAS or found.groups or any(spread(pod) for pod in found.pods):
        return
    field = " (`minReplicas`)" if found.key == "minReplicas" else ""
    yield Finding(
        found.holder.value_span(found.key),
        f"{workload.kind} `{workload.obj.name}` serves a model ({found.sign}) with {found.count} replicas"
        f"{field} but neither `topologySpreadConstraints` nor a pod anti-affinity: the scheduler may put "
        "every replica on one node, and one node drain or GPU failure takes the model offline",
        node=found.node,
        fix="add `topologySpreadConstraints` over `kubernetes.io/hostname` (or zones) with the pods' labels, "
            "or a preferred `podAntiAffinity`"
            + (" (on the predictor: its pod spec is inline)" if found.key == "minReplicas" else ""),
    )
