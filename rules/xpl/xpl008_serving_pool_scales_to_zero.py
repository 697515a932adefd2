"""A model server that can land only on GPU pools whose autoscaler minimum is 0.

## What it does
Joins the project's serving workloads with the node pools they can land on. A workload serves a
model on the evidence REL001-REL003 use (`linter/model/serving.py`: a KServe InferenceService, a
KubeRay RayService, a KAITO inference Workspace, or a Deployment, StatefulSet or LeaderWorkerSet
whose container runs a model-server image or starts one: `vllm serve`, `tritonserver`, …). Each
pod template of it that answers requests is placed on the project's pools as the XPL rules place
pods (node selector and required affinity, tolerations, the GPUs it asks for). It fires when every
pool the pod can land on is a GPU pool with the cluster autoscaler on and a minimum of 0
(`--min-count 0`, `min_count = 0`, `minCount: 0`, `min-count: 0` in the config's `node-pools:`).
The finding points at the pod's node selection (the selector entry, else the required affinity,
else the pod) and names each pool with the file and line of its minimum.

Left alone: a pod that can also land on a pool kept warm (a minimum above 0, a fixed size, a CPU
pool); a server that scales itself to zero (`replicas: 0`, a KServe predictor's `minReplicas: 0`,
a KubeRay worker group's `minReplicas: 0`: the author chose the cold start); training and batch
workloads (scale to zero is what the article recommends for them); a cluster whose pools the
project does not define (no `az aks create`, no `node-pools:`, node auto-provisioning), where a
pool described elsewhere may take the pod.

{{pod-views}}

{{placement}}

## Why is this bad?
The article allows scale to zero for training only: "Scale-to-zero is appropriate for
interruptible training pools, but it adds VM provisioning, image-pull, dataset-mount, and
model-initialization latency. Keep a nonzero minimum when startup latency has a material effect
on service objectives." A model server whose only pools may shrink to no node waits for all of
that whenever it needs a node the pool does not have: its first replica after a quiet period, a
replica added under load, a pod rescheduled after a node upgrade. Requests fail or queue for
minutes meanwhile. The rule is informational: whether that latency matters is the service's
objective, which the manifests do not say.

## Example
```sh
az aks nodepool add --resource-group ml-rg --cluster-name ml-aks --name gpunp \
  --node-vm-size Standard_NC24ads_A100_v4 --labels accelerator=nvidia \
  --node-taints sku=gpu:NoSchedule \
  --enable-cluster-autoscaler --min-count 0 --max-count 4
```

```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-chat
spec:
  replicas: 2
  template:
    spec:
      nodeSelector:
        accelerator: nvidia   # only gpunp, which may have no node
      tolerations:
      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        resources:
          limits: {nvidia.com/gpu: 1}
```

Use instead:
```sh
# a nonzero minimum on the pool that serves (or a serving pool of its own, kept warm)
az aks nodepool update --resource-group ml-rg --cluster-name ml-aks --name gpunp \
  --update-cluster-autoscaler --min-count 1 --max-count 4
```

## Known problems
- A minimum that covers the server's steady replicas still leaves a replica added under load to
  wait for a VM; the rule asks only for the minimum the article names, not for headroom.
- A server meant to scale to zero without saying so in its own fields (a Knative or KEDA
  autoscaler object beside a Deployment) is reported; suppress the finding there with a reason.
- Pools of a cluster made elsewhere are not known: nothing is reported then.

## References
- AKS, Cluster autoscaler: https://learn.microsoft.com/azure/aks/cluster-autoscaler
- AKS, Scale a node pool to zero: https://learn.microsoft.com/azure/aks/scale-cluster#scale-user-node-pools-to-0
"""

from mlops_lint.model.cluster import cluster_of, selector_anchor, workload_name
from mlops_lint.model.k8s import PodSpec
from mlops_lint.model.serving import replicated_server, serves_requests, serving_sign
from mlops_lint.rule import POD, Finding, rule


def _cold(verdict) -> bool:
    """The pool's nodes all have GPUs and its autoscaler may take it down to no node."""
    pool = verdict.pool
    return (pool.only_gpu_nodes and pool.autoscaler is True and pool.min_count == 0
            and not isinstance(pool.min_count, bool))


def _where(pool) -> str:
    origin = pool.count_origin.get("min_count")
    where = f"{origin.path}:{origin.span.line}" if origin is not None else pool.path
    return f"`{pool.display}` (minimum 0 at {where})"


def _group_scales_to_zero(pod) -> bool:
    """The group the pod template belongs to keeps no replica when idle: a KubeRay worker group
    (`minReplicas: 0`, Ray's autoscaler adds workers on demand), the template's holder otherwise."""
    path = pod.path
    if len(path) < 3 or path[-2:] != ("template", "spec"):
        return False
    node = pod.obj.body
    for step in path[:-2]:
        if isinstance(node, dict):
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            return False
    minimum = node.get("minReplicas") if isinstance(node, dict) else None
    return minimum == 0 and not isinstance(minimum, bool)


def _cold_pools(placement):
    pools = placement.known_candidates
    if not pools or not all(_cold(v) for v in pools):
        return None
    return [v.pool for v in pools]


@rule(code="XPL008", name="serving-pool-scales-to-zero", severity="info", scope=POD,
      tags=("cluster", "autoscaling", "serving"))
def check(pod: PodSpec, ctx):
    workload = pod.workload
    if workload is None or serving_sign(workload) is None or not serves_requests(pod):
        return
    replicas = replicated_server(workload)
    if replicas is not None and replicas.count == 0:
        return  # the server scales itself to zero: the cold start is the author's choice
    if _group_scales_to_zero(pod):
        return
    placement = cluster_of(ctx.index, ctx.config).placement(pod)
    if placement is None:
        return
    pools = placement.memo("XPL008", lambda: _cold_pools(placement))
    if not pools:
        return
    span, node = selector_anchor(pod, placement.verdicts)
    shown = "; ".join(_where(pool) for pool in pools)
    word = "a GPU pool that scales" if len(pools) == 1 else "GPU pools that scale"
    yield Finding(
        span,
        f"{workload_name(pod)}: this model server can land only on {word} to zero nodes when idle: "
        f"{shown}. A request that needs a new node waits for VM provisioning, the image pull and the model "
        f"load; keep a nonzero minimum on a pool it can use (scale to zero suits interruptible training pools)",
        node=node,
    )
