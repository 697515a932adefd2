"""A pod tolerates the GPU nodes' taint but requests no GPU.

## What it does
Flags pod templates (every pod-carrying kind; each replica type of a Kubeflow job and each
Volcano task on its own) with a toleration for a GPU taint but no container that requests or
limits a GPU (`nvidia.com/gpu`, `nvidia.com/mig-<profile>`, `amd.com/gpu`). GPU taints are the
configured `gpu-taints` (default `sku=gpu:NoSchedule`) plus those GPU nodes are known to carry:
`nvidia.com/gpu`, `amd.com/gpu`, `kubernetes.azure.com/accelerator` and `gpu` with any value.
Tolerations match as Kubernetes matches them (`Toleration.ToleratesTaint`): an empty effect
covers every effect, `operator: Exists` ignores the value, and `operator: Exists` without a
key tolerates every taint, GPU taints included. The finding points at the toleration.

{{pod-views}}

## Why is this bad?
The taint is what keeps "ordinary application pods away from expensive GPU nodes". A pod that
tolerates it without asking for a GPU can be scheduled onto a GPU node and hold its CPU and
memory while the GPU sits idle, or keep the autoscaler from scaling an empty GPU node down. The
article: "A toleration permits scheduling but doesn't force the pod onto a GPU node. Pair
tolerations with a GPU resource request and a node selector or node affinity."

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: feature-store-api
spec:
  template:
    spec:
      tolerations:
      - key: sku
        operator: Equal
        value: gpu
        effect: NoSchedule
      containers:
      - name: api
        image: myacr.azurecr.io/feature-store:1.4.2
        resources:
          requests: {cpu: "2", memory: 4Gi}
```

Use instead: drop the toleration from pods that do not use a GPU, or request the GPU the pod
is meant for:
```yaml
      nodeSelector:
        accelerator: nvidia
      tolerations:
      - key: sku
        operator: Equal
        value: gpu
        effect: NoSchedule
      containers:
      - name: trainer
        resources:
          requests: {nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 1}
```

A container that takes GPUs through Dynamic Resource Allocation (a resource claim whose
`ResourceClaimTemplate` or `ResourceClaim` names the `gpu.nvidia.com` device class) requests a
GPU. A Kubeflow Trainer v2 `TrainingRuntime` / `ClusterTrainingRuntime` is judged through the
TrainJobs that run it (their `resourcesPerNode` give its trainer its GPUs), not on its own.

## Known problems
- DaemonSets are exempt: node agents (networking, monitoring, storage, the device plugin, the
  DCGM exporter) must run on GPU nodes without using a GPU, and the article asks that they
  "tolerate the GPU taint". Their tolerate-everything toleration is by design.
- Pods that take GPUs past the scheduler on purpose, as NVIDIA's node tools do (a container
  sets `NVIDIA_VISIBLE_DEVICES`, or the pod asks for CDI devices with a `cdi.k8s.io/…`
  annotation: the GPU Operator's validators, DCGM diagnostics), are exempt too, and so are pods
  with a resource name that is a placeholder filled in later (`FILLED_BY_VALIDATOR`,
  `{{ .Values.gpuResource }}`): it may be the GPU.
- A pod that requests a GPU but has no nodeSelector or required node affinity for GPU nodes is
  GPU006's finding, not this rule's: one mistake gives one finding, and in the `aks-automatic`
  profile (where GPU006 is off) node provisioning places GPU pods from their requests.
- A Spark pod template (`spark.kubernetes.{driver,executor}.podTemplateFile`) is exempt: Spark
  merges it into the pods it builds and adds their GPU request from its own configuration
  (`spark.executor.resource.gpu.amount`). It is known by Spark's conventions: a `Pod` with a
  container named `spark-kubernetes-executor` or `spark-kubernetes-driver` (the names Spark looks
  for), or a `Pod` whose containers carry no `image` (a stub the API server would reject as a
  pod: whatever fills in the image fills in the rest).
- A toleration of a known GPU taint key with any value counts (the value GPU nodes carry under
  `nvidia.com/gpu` differs between installations); a `sku` toleration counts only for `gpu`.

## References
- Kubernetes, Taints and tolerations: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- AKS, Use GPUs (taint and toleration example): https://learn.microsoft.com/azure/aks/use-nvidia-gpu
"""

from mlops_lint.model.gpunodes import (
    gpu_label_pins,
    gpu_toleration,
    has_placeholder_resource,
    is_wildcard,
    requests_gpu,
    sees_gpus_directly,
)
from mlops_lint.model.k8s import PodSpec
from mlops_lint.rule import POD, Finding, rule

# The containers Spark builds its driver and executor pods around (Spark's Constants.scala).
SPARK_CONTAINERS = frozenset({"spark-kubernetes-executor", "spark-kubernetes-driver"})


def completed_elsewhere(pod: PodSpec) -> bool:
    """A `Pod` that is a template another program completes (Spark's pod template files): one of
    Spark's container names, or containers without an image (no pod is created so)."""
    if pod.obj.kind != "Pod" or pod.obj.group != "":
        return False
    containers = [c for c in pod.containers if c.field == "containers"]
    return bool(containers) and (any(c.name in SPARK_CONTAINERS for c in containers)
                                 or all(c.body.get("image") is None for c in containers))


@rule(code="GPU004", name="gpu-toleration-without-placement", severity="warning", scope=POD,
      tags=("gpu", "scheduling"))
def check(pod: PodSpec, ctx):
    if pod.obj.kind == "DaemonSet" or requests_gpu(pod) or sees_gpus_directly(pod) or has_placeholder_resource(pod):
        return
    if pod.obj.kind in ("TrainingRuntime", "ClusterTrainingRuntime") and pod.obj.group == "trainer.kubeflow.org":
        return  # a template: the TrainJobs that run it give its trainer its GPUs (judged on their views)
    if completed_elsewhere(pod):
        return  # a Spark pod template: Spark adds the GPU request from its configuration
    tolerations = pod.tolerations
    found = gpu_toleration(tolerations, ctx.config)
    if found is None:
        return
    index, taint = found
    toleration = dict(tolerations)[index]
    items = pod.spec.get_seq("tolerations")
    span = toleration.kspans.get("key") or toleration.kspans.get("operator") or (
        items.item_span(index) if items is not None else pod.span)
    what = "every taint (operator: Exists without a key), the GPU taint included" if is_wildcard(toleration) \
        else f"the GPU taint {taint}"
    pin = gpu_label_pins(pod.placement, ctx.config)
    where = f" (and it selects GPU nodes with {pin})" if pin else ""
    yield Finding(
        span,
        f"{pod.describe()} tolerates {what}, but no container requests a GPU{where}: it can take a GPU "
        "node's CPU and memory without using the GPU",
        node=pod.path + ("tolerations", index),
        fix="remove the toleration, or request the GPU the pod is for (nvidia.com/gpu in requests and limits)",
    )
