"""A platform DaemonSet that must run on every node does not tolerate the taints of the project's GPU pools.

## What it does
Checks DaemonSets that run a known node agent, one whose absence from a node breaks that node's
monitoring, storage, networking or health reporting:

- monitoring: NVIDIA's DCGM exporter, the Azure Monitor agents (`…/azuremonitor/containerinsights/ciprod…`:
  `ama-logs`, `ama-metrics`), the Prometheus node exporter;
- logs: Fluent Bit, Fluentd (`fluentd`, `fluentd-kubernetes-daemonset`, `fluentd-elasticsearch`);
- storage: the Azure CSI node plugins (`blob-csi`, `azuredisk-csi`, `azurefile-csi`);
- networking: Cilium, Calico's `calico/node`, Azure CNS, kube-proxy;
- node health: node-problem-detector.

It reads the project's cluster (`az aks` scripts, Terraform, Bicep/ARM, the config's
`node-pools`, node auto-provisioning `NodePool`s: `linter.model.cluster`) and flags the
DaemonSet when a pool whose nodes are all GPU nodes (a GPU VM size, or a NodePool allowing only
GPU sizes) has a `NoSchedule` or `NoExecute` taint (its own, or the Spot taint AKS adds) that
the DaemonSet's tolerations do not tolerate, while its node selection reaches that pool: it has
none, or its nodeSelector and required node affinity match the pool's known labels, or they
pin GPU nodes (`nvidia.com/gpu.present: "true"`, `accelerator: nvidia`…, as GPU004 reads them).
A selection on labels the pool's definition does not tell (`node-role.kubernetes.io/control-plane`)
may mean other nodes and is left alone. A toleration without a key and with `operator: Exists`
tolerates every taint. A DaemonSet that selects only other nodes (`agentpool: system`) is left
alone, as is a project that defines no tainted GPU pool. The NVIDIA device plugin is GPU010's,
and DaemonSets the GPU Operator renders itself are configured through its ClusterPolicy.

The finding points at the pod template's `tolerations:` (else its `spec:`).

## Why is this bad?
A DaemonSet runs only on the nodes whose taints it tolerates. One that misses the GPU taint
never starts on GPU nodes, silently: no GPU or node metrics and no logs from the nodes that cost
the most, no Blob or disk volumes for the training pods there, no network policy or service
routing on them. The article: "Ensure that required platform DaemonSets, such as networking,
monitoring, storage, and the device plugin, tolerate the GPU taint."

## Example
```yaml
# the project: az aks nodepool add --name gpunp --node-vm-size Standard_NC24ads_A100_v4 --node-taints sku=gpu:NoSchedule
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: fluent-bit
  namespace: logging
spec:
  selector:
    matchLabels:
      app: fluent-bit
  template:
    metadata:
      labels:
        app: fluent-bit
    spec:
      tolerations:
      - key: CriticalAddonsOnly
        operator: Exists
      containers:
      - name: fluent-bit
        image: cr.fluentbit.io/fluent/fluent-bit:3.1.4
```

Use instead:
```yaml
    spec:
      tolerations:
      - key: CriticalAddonsOnly
        operator: Exists
      - key: sku
        operator: Equal
        value: gpu
        effect: NoSchedule
```

## Known problems
- Only the agents above are recognised (by image); a DaemonSet of another agent, or one whose
  image is a variable, is not checked.
- A taint added to GPU nodes outside the project's cluster definitions (`kubectl taint`, a
  GPU Operator setting) is not known; nor are pools the project does not define.

## References
- AKS, use GPUs (taints and tolerations for GPU node pools): https://learn.microsoft.com/azure/aks/use-nvidia-gpu
- Kubernetes, Taints and tolerations (DaemonSets): https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- AKS, best practices for advanced scheduler features: https://learn.microsoft.com/azure/aks/operator-best-practices-advanced-scheduler
"""

from __future__ import annotations

from mlops_lint.model.cluster import cluster_of
from mlops_lint.model.cluster.placement import describe_pool
from mlops_lint.model.gpunodes import gpu_label_pins
from mlops_lint.model.images import repository_path
from mlops_lint.model.k8s import image_reference
from mlops_lint.model.nvidia import is_dcgm_exporter, is_device_plugin, is_operator_operand
from mlops_lint.rule import Finding, Kind, rule

# the last component of an agent image's repository -> (what it is, what GPU nodes lose without it)
_METRICS = "no metrics from those nodes"
_AGENTS: dict[str, tuple[str, str]] = {
    "node-exporter": ("Prometheus node exporter", _METRICS),
    "fluent-bit": ("Fluent Bit log agent", "no container logs from those nodes"),
    "fluentd": ("Fluentd log agent", "no container logs from those nodes"),
    "fluentd-kubernetes-daemonset": ("Fluentd log agent", "no container logs from those nodes"),
    "fluentd-elasticsearch": ("Fluentd log agent", "no container logs from those nodes"),
    "blob-csi": ("Azure Blob CSI node plugin", "pods there cannot mount Blob volumes"),
    "azuredisk-csi": ("Azure Disk CSI node plugin", "pods there cannot mount Azure Disk volumes"),
    "azurefile-csi": ("Azure Files CSI node plugin", "pods there cannot mount Azure Files volumes"),
    "cilium": ("Cilium agent", "pods there get no Cilium networking or network policy"),
    "azure-cns": ("Azure CNS agent", "pods there get no pod IP addresses"),
    "kube-proxy": ("kube-proxy", "Service traffic is not routed on those nodes"),
    "node-problem-detector": ("node-problem-detector", "node problems (GPU XID errors among them) go unreported there"),
}
# by repository path (the last components), where the last one alone is too generic
_AGENT_PATHS: dict[str, tuple[str, str]] = {
    "calico/node": ("Calico node agent", "pods there get no Calico networking or network policy"),
}
_AZURE_MONITOR = "azuremonitor/containerinsights/ciprod"


def _agent(workload) -> tuple[str, str] | None:
    if is_dcgm_exporter(workload):
        return ("NVIDIA DCGM exporter", "no GPU metrics from those nodes")
    for pod in workload.pods:
        for container in pod.app_containers:
            reference = image_reference(container.image)
            if reference is None:
                continue
            path = repository_path(reference[0])
            if path.startswith(_AZURE_MONITOR):
                return ("Azure Monitor agent", "no Container insights logs or managed Prometheus metrics from those nodes")
            last = path.rsplit("/", 1)[-1]
            found = _AGENTS.get(last) or next((v for k, v in _AGENT_PATHS.items() if path.endswith(k)), None)
            if found is not None:
                return found
    return None


@rule(code="GPU015", name="node-agent-skips-gpu-nodes", severity="warning", scope=Kind("DaemonSet"),
      tags=("gpu", "placement"))
def check(obj, ctx):
    if obj.group != "apps":
        return
    workload = ctx.index.workload(obj)
    if workload is None or not workload.pods or is_device_plugin(workload) or is_operator_operand(workload):
        return
    agent = _agent(workload)
    if agent is None:
        return
    cluster = cluster_of(ctx.index, ctx.config)
    if not cluster.has_pools:
        return
    what, loss = agent
    for pod in workload.pods:
        placement = cluster.placement(pod)
        if placement is None:
            continue
        pinned = None  # computed when a pool's labels may or may not match
        missed = []
        for v in placement.verdicts:
            if not v.pool.only_gpu_nodes or v.elsewhere or v.taints != "no" or v.labels == "no":
                continue
            if v.labels == "maybe":  # a selector on labels the pool's definition does not tell
                if pinned is None:
                    pinned = gpu_label_pins(pod.placement, ctx.config) is not None
                if not pinned:
                    continue  # it may be meant for other nodes (a control-plane-only agent)
            missed.append(v)
        if not missed:
            continue
        taints = list(dict.fromkeys(t for v in missed for t in v.untolerated))
        pools = ", ".join(describe_pool(v.pool) + (f" ({v.pool.path}:{v.pool.origin.span.line})"
                                                   if v.pool.origin is not None else "") for v in missed[:4])
        more = f" and {len(missed) - 4} more" if len(missed) > 4 else ""
        shown = ", ".join(f"`{t}`" for t in taints)
        hint = "; ".join(f"`{{key: {t.key}, operator: {'Equal' if t.value else 'Exists'}"
                         + (f", value: {t.value}" if t.value else "") + f", effect: {t.effect}}}`" for t in taints)
        word = "taint" if len(taints) == 1 else "taints"
        yield Finding(
            pod.spec.kspans.get("tolerations", pod.span),
            f"{what} DaemonSet `{obj.name}` does not tolerate the GPU pool {word} {shown} of {pools}{more}: it never "
            f"runs on those GPU nodes, so {loss}",
            node=pod.path + ("tolerations",), fix=f"add the toleration{'s' if len(taints) > 1 else ''} {hint}")
