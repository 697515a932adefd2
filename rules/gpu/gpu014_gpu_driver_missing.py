"""An NVIDIA GPU node pool made without the AKS driver, in a project that installs no other driver.

## What it does
Reads the node pools the project defines (`az aks create` / `az aks nodepool add` / `update` in
shell scripts, `azurerm_kubernetes_cluster_node_pool` and `default_node_pool` in Terraform,
`agentPoolProfiles` and `managedClusters/agentPools` in Bicep or an ARM template) and flags each
pool of an NVIDIA GPU VM size whose driver install is turned off: `--gpu-driver none` (any case),
the retired `--skip-gpu-driver-install`, `gpu_driver = "None"`, `gpuProfile: { driver: 'None' }`.
It fires at that setting unless the project installs a driver another way:

- a GPU Operator `ClusterPolicy` (`nvidia.com/v1`) whose `spec.driver.enabled` is not `false`
  (the operator's default is on);
- a script that installs the GPU Operator chart (`helm install … nvidia/gpu-operator`) without
  `--set driver.enabled=false`, or a Terraform `helm_release` of the chart without a `set` of
  `driver.enabled` to `false` (with a values file or a value that is not written out: unknown, and
  left alone).

A `GPUCluster` (the operator's DRA configuration) installs no driver and does not count.

Pools of AMD sizes (AKS installs no AMD driver, so `None` is required there), pools with
`--enable-managed-gpu` (AKS runs the whole GPU stack) and pools whose VM size is not known are
left alone. In a folder of unrelated repositories linted by path, a ClusterPolicy or install
counts only for the pools of its own top-level folder (`linter.model.locality`).

## Why is this bad?
The article: "AKS GPU configurations can provide managed GPU drivers and device plugin
integration. Verify the effective configuration before installing another plugin". With the
driver install skipped AKS puts nothing GPU-related on the nodes: that setting exists for the
NVIDIA GPU Operator, which brings its own driver. Without the operator's driver the nodes come up
with no NVIDIA kernel module, the device plugin finds no GPU, `nvidia.com/gpu` never appears
under the nodes' allocatable resources (the article's check before submitting training jobs),
and every GPU pod stays Pending on nodes that are billed at GPU prices.

## Example
```sh
az aks nodepool add --resource-group ml-rg --cluster-name ml-aks --name gpunp \
  --node-vm-size Standard_NC24ads_A100_v4 --node-taints sku=gpu:NoSchedule --gpu-driver none
```

```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  driver:
    enabled: false
```

Use instead: let AKS install the driver (drop `--gpu-driver none`, or `--gpu-driver install`),
or keep it and run the GPU Operator with its driver:

```sh
helm install gpu-operator nvidia/gpu-operator -n gpu-operator --create-namespace
```

## Known problems
- A GPU Operator installed outside the project (another repository, a GitOps application) is not
  seen; add the ClusterPolicy, or suppress the finding with the reason.
- A driver installed by a custom DaemonSet is not recognised. Node auto-provisioning's
  `AKSNodeClass` `spec.gpu.mode: None` (NAP skips the driver on the GPU nodes it makes) is not
  read: the NodePools that use such a class are not judged, so a missing driver there is not
  reported (never a finding that should not be).
- There is no automatic fix: which driver to run is a choice.

## References
- AKS, use NVIDIA GPUs (skip the GPU driver installation): https://learn.microsoft.com/azure/aks/use-nvidia-gpu
- AKS, NVIDIA GPU Operator on AKS: https://learn.microsoft.com/azure/aks/nvidia-gpu-operator
- NVIDIA GPU Operator, ClusterPolicy `driver.enabled`: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
"""

from __future__ import annotations

from mlops_lint.model.azcli import ShellScript
from mlops_lint.model.cluster import cluster_of, describe_pool
from mlops_lint.model.installs import GPU_OPERATOR, project_installs
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.nvidia import gpu_operator_policies, policy_deploys
from mlops_lint.rule import SHELL, Finding, rule

NVIDIA = "nvidia.com/gpu"


def _driverless(pool) -> bool:
    vm = pool.vm
    return (pool.in_linted_file and vm is not None and vm.gpu_resource == NVIDIA and pool.managed_gpu is False
            and isinstance(pool.gpu_driver, str) and pool.gpu_driver.strip().lower() == "none"
            and pool.gpu_driver_origin is not None)


def _by_script(ctx, cluster) -> dict[str, list]:
    """(pool, what the project says of the operator's driver) by the file its finding goes to,
    once per cluster."""
    pools = [p for p in cluster.pools if _driverless(p)]
    if not pools:
        return {}
    policies = gpu_operator_policies(ctx.index)
    installs = [i for i in project_installs(ctx.index, terraform=True) if i.component == GPU_OPERATOR]
    unit = unit_of(ctx.index, ctx.config, [*(p.gpu_driver_origin.path for p in pools), *(o.path for o in policies),
                                          *(i.path for i in installs)])
    found: dict[str, list] = {}
    for pool in pools:
        where = pool.gpu_driver_origin.path
        governing = [p for p in policies if together(unit, p.path, where)]
        scripted = [i for i in installs if together(unit, i.path, where)]
        if any(policy_deploys(p, "driver") for p in governing) or any(i.deploys("driver") is not False for i in scripted):
            continue
        off = [f"ClusterPolicy `{p.name}` ({p.path}:{p.span.line}) sets `driver.enabled: false`" for p in governing]
        off += [f"{i.describe()} sets `driver.enabled=false`" for i in scripted]
        found.setdefault(where, []).append((pool, off))
    return found


def _hint(pool) -> str:
    keep = {"terraform": '`gpu_driver = "Install"`', "bicep": "`gpuProfile: { driver: 'Install' }`",
            "arm": '`"gpuProfile": {"driver": "Install"}`'}.get(pool.source, "`--gpu-driver install`")
    return (f"let AKS install the driver ({keep}), or install the NVIDIA GPU Operator with its driver "
            "(`helm install gpu-operator nvidia/gpu-operator -n gpu-operator --create-namespace`)")


@rule(code="GPU014", name="gpu-driver-missing", severity="error", scope=SHELL, tags=("gpu", "aks", "gpu-operator"))
def check(script: ShellScript, ctx):
    cluster = cluster_of(ctx.index, ctx.config)
    for pool, off in cluster.memo("GPU014", lambda: _by_script(ctx, cluster)).get(script.path, ()):
        origin = pool.gpu_driver_origin
        said = "; ".join(off) if off else "the project installs no GPU Operator with its driver"
        yield Finding(
            origin.target,
            f"GPU node pool {describe_pool(pool)} is made without the AKS NVIDIA driver, and {said}: its nodes "
            "have no NVIDIA driver, never advertise `nvidia.com/gpu`, and GPU pods stay Pending on them",
            node=("pool", pool.display, "gpu-driver"),
            fix=_hint(pool),
        )

