"""Placement words users actually write (issue 33 item 5): GPU006 names the selector it found and
why it is not known to reach only GPU nodes; a label the project's own pools put only on GPU pools
counts; ``karpenter.sh/nodepool`` of a GPU-only NodePool counts; GPU007 asks AKS-managed MIG pools
for no MIG Manager labels. The cases are ../shared/repros/trust/gpu006-custom-pool-label and
gpu007-aks-managed-mig-no-selector, written out here."""

from __future__ import annotations

from pathlib import Path

from mlops_lint.config import load_config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

RAY_WORKER = """apiVersion: v1
kind: Pod
metadata: {name: gpu-worker}
spec:
  restartPolicy: Never
  nodeSelector:
    NodeGroupType: g5-gpu-karpenter
    type: karpenter
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: ray-worker
    image: public.ecr.aws/data-on-eks/ray2.24.0-py310-vllm-gpu:v1
    resources:
      requests: {cpu: "10", memory: 60G, nvidia.com/gpu: 1}
      limits: {cpu: "10", memory: 60G, nvidia.com/gpu: 1}
"""

MIG_POOL = """az aks nodepool add \\
    --name migpool \\
    --resource-group myResourceGroup \\
    --cluster-name myAKSCluster \\
    --node-vm-size Standard_ND96asr_v4 \\
    --node-count 1 \\
    --node-taints sku=gpu:NoSchedule \\
    --gpu-instance-profile MIG1g \\
    --gpu-mig-strategy Mixed
"""

MIG_POD = """apiVersion: v1
kind: Pod
metadata: {name: nvidia-mixed}
spec:
  tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
  containers:
  - name: nvidia-mixed
    image: nvidia/cuda:12.1.1-base-ubuntu22.04
    resources:
      requests: {nvidia.com/mig-1g.5gb: 1}
      limits: {nvidia.com/mig-1g.5gb: 1}
"""

GPU_POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {SELECTOR}
  tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
  containers:
  - name: c
    image: x
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def findings(folder: Path, **files: str) -> list[tuple[str, str, int, str]]:
    """GPU006 and GPU007 on ``folder`` after writing ``files`` ({name: text}) into it, with its
    ``.mlops-lint.yaml`` when there is one."""
    for name, text in files.items():
        (folder / name).write_text(text)
    registry = load_registry()
    config = load_config(None, registry, start=folder)
    report = lint(LintRequest(paths=[folder], config=config, registry=registry, select=["GPU006", "GPU007"],
                              cwd=folder, jobs=1))
    return sorted((f.rule, f.path, f.line, f.message) for f in report.active)


def test_gpu006_names_the_selector_it_found_and_the_setting_that_teaches_it(tmp_path: Path) -> None:
    (found,) = findings(tmp_path, **{"ray-worker.yaml": RAY_WORKER})
    assert found[:3] == ("GPU006", "ray-worker.yaml", 6)
    assert ("but its nodeSelector `{NodeGroupType: g5-gpu-karpenter, type: karpenter}` is not known to keep it to "
            "GPU nodes (none of its labels is a known GPU node label or one of `gpu-node-labels` (accelerator=nvidia), "
            "and no node pool of the project shows that only GPU pools carry it)") in found[3]
    assert found[3].endswith("add that label to `gpu-node-labels` in the config")
    (tmp_path / ".mlops-lint.yaml").write_text("gpu-node-labels: {NodeGroupType: g5-gpu-karpenter}\n")
    assert findings(tmp_path) == []


def test_a_label_only_the_projects_gpu_pools_carry_keeps_a_pod_to_gpu_nodes(tmp_path: Path) -> None:
    pools = ("az aks nodepool add -g rg --cluster-name c -n gpunp -s Standard_NC6s_v3 --labels NodeGroupType=gpu "
             "--node-taints sku=gpu:NoSchedule\n"
             "az aks nodepool add -g rg --cluster-name c -n cpunp -s Standard_D4s_v5 --labels NodeGroupType={cpu}\n")
    pod = GPU_POD.replace("{SELECTOR}", "{NodeGroupType: gpu}")
    assert findings(tmp_path, **{"pools.sh": pools.format(cpu="cpu"), "pod.yaml": pod}) == []
    (found,) = findings(tmp_path, **{"pools.sh": pools.format(cpu="gpu")})
    assert "its nodeSelector `{NodeGroupType: gpu}` is not known to keep it to GPU nodes (it also matches node pool " \
           "`cpunp` (Standard_D4s_v5), not known to be GPU pools)" in found[3]


def test_a_pool_name_selector_of_a_project_gpu_pool_counts_though_the_rest_of_the_cluster_is_unknown(
        tmp_path: Path) -> None:
    """AKS labels nodes with their pool's name: a pool the project does not describe has another one."""
    pools = "az aks nodepool add -g rg --cluster-name c -n gpunp -s Standard_NC6s_v3 --node-taints sku=gpu:NoSchedule\n"
    assert findings(tmp_path, **{"pools.sh": pools,
                                 "pod.yaml": GPU_POD.replace("{SELECTOR}", "{kubernetes.azure.com/agentpool: gpunp}")}) == []
    (tmp_path / "pod.yaml").write_text(GPU_POD.replace("{SELECTOR}", "{agentpool: otherpool}"))
    assert [f[0] for f in findings(tmp_path)] == ["GPU006"]


NODEPOOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
      requirements:
      - {key: karpenter.azure.com/sku-family, operator: In, values: [N]}
      taints: [{key: sku, value: gpu, effect: NoSchedule}]
"""


def test_karpenter_nodepool_selector_of_a_gpu_only_nodepool_keeps_a_pod_to_gpu_nodes(tmp_path: Path) -> None:
    """The NodePool allows every N-family size (too many to list): its nodes are GPU nodes all the same,
    whether or not the project describes the rest of the cluster."""
    pod = GPU_POD.replace("{SELECTOR}", "{karpenter.sh/nodepool: gpu}")
    assert findings(tmp_path, **{"nodepool.yaml": NODEPOOL, "pod.yaml": pod}) == []
    (tmp_path / "pools.sh").write_text("az aks create -g rg -n c -s Standard_D4s_v5 --node-provisioning-mode Auto\n")
    mixed = NODEPOOL.replace("operator: In, values: [N]", "operator: In, values: [N, D]")
    # a NAP cluster makes the project aks-automatic (inferred), where GPU006 is off and NAP002 judges
    # NodePools; a project that says aks-standard keeps GPU006's reading of a NodePool selector
    assert findings(tmp_path, **{"nodepool.yaml": mixed}) == []
    (tmp_path / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    (tmp_path / "nodepool.yaml").write_text(NODEPOOL)
    assert findings(tmp_path) == []
    (tmp_path / "nodepool.yaml").write_text(mixed)
    assert [f[0] for f in findings(tmp_path)] == ["GPU006"]


def test_gpu007_asks_aks_managed_mig_pools_for_no_mig_manager_labels(tmp_path: Path) -> None:
    pinned = MIG_POD.replace("spec:\n", "spec:\n  nodeSelector: {kubernetes.azure.com/agentpool: migpool}\n", 1)
    found = findings(tmp_path, **{"pool.sh": MIG_POOL, "pod.yaml": MIG_POD, "pod-agentpool.yaml": pinned})
    assert not [f for f in found if f[0] == "GPU007"], found
    assert not [f for f in found if f[1] == "pod-agentpool.yaml"], found  # the pool-name selector pins the GPU pool
    # a MIG-capable pool the GPU Operator may partition (no --gpu-instance-profile): GPU007 asks for the labels
    (tmp_path / "pool.sh").write_text(MIG_POOL.replace("    --gpu-instance-profile MIG1g \\\n", ""))
    assert [f[:2] for f in findings(tmp_path) if f[0] == "GPU007"] == [("GPU007", "pod-agentpool.yaml"),
                                                                         ("GPU007", "pod.yaml")]


def test_gpu007_on_a_terraform_aks_managed_mig_pool(tmp_path: Path) -> None:
    main = """resource "azurerm_kubernetes_cluster_node_pool" "mig" {
  name                  = "migpool"
  kubernetes_cluster_id = var.cluster_id
  vm_size               = "Standard_ND96asr_v4"
  node_taints           = ["sku=gpu:NoSchedule"]
  gpu_instance          = "MIG1g"
}
variable "cluster_id" {}
"""
    found = findings(tmp_path, **{"main.tf": main, "pod.yaml": MIG_POD})
    assert not [f for f in found if f[0] == "GPU007"], found


def test_a_kaito_workspace_is_placed_by_kaito(tmp_path: Path) -> None:
    """KAITO gives its inference pods a node affinity for resource.labelSelector (seen on the
    corpus: kaito-project/kaito examples/custom-model-integration)."""
    workspace = """apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata: {name: workspace-custom-llm}
resource:
  instanceType: Standard_NC24ads_A100_v4
  labelSelector:
    matchLabels: {apps: custom-llm}
inference:
  template:
    spec:
      containers:
      - name: custom-llm-container
        image: mcr.microsoft.com/aks/kaito/kaito-base:0.2.0
        resources:
          limits: {nvidia.com/gpu: 1}
"""
    assert findings(tmp_path, **{"workspace.yaml": workspace}) == []
