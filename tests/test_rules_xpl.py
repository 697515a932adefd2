"""XPL007 gang-exceeds-pool-capacity beyond its fixtures: which pods form a gang (Kubeflow
replicas, JobSet replicas x parallelism, one LeaderWorkerSet group, Volcano tasks, a batch Job
admitted as a gang), the pools summed, and what is left unjudged."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REGISTRY = load_registry()

# two 2-GPU A100 nodes at most (autoscaled) and two fixed 1-GPU T4 nodes
POOLS = (
    {"name": "a100np", "vm-size": "Standard_NC48ads_A100_v4", "labels": {"accelerator": "nvidia", "gpu": "a100"},
     "taints": ["sku=gpu:NoSchedule"], "min-count": 0, "max-count": 2},
    {"name": "t4np", "vm-size": "Standard_NC4as_T4_v3", "labels": {"accelerator": "nvidia", "gpu": "t4"},
     "taints": ["sku=gpu:NoSchedule"], "enable-cluster-autoscaler": False, "node-count": 2},
)

POD = """
        spec:
          nodeSelector: SELECTOR
          tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
          containers:
          - name: pytorch
            image: myacr.azurecr.io/trainer@sha256:3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c
            resources:
              limits: {nvidia.com/gpu: GPUS}
"""


def pytorchjob(workers: int, gpus: int = 2, selector: str = "{gpu: a100}", extra: str = "") -> str:
    template = textwrap.indent(textwrap.dedent(POD).replace("SELECTOR", selector).replace("GPUS", str(gpus)), "        ")
    return (f"apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: ddp, namespace: ml}}\nspec:\n{extra}"
            f"  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template:{template}"
            f"    Worker:\n      replicas: {workers}\n      template:{template}")


def run(tmp_path: Path, text: str, pools=POOLS) -> list:
    (tmp_path / "job.yaml").write_text(text, encoding="utf-8")
    config = Config(root=tmp_path, node_pools=pools)
    report = lint(LintRequest(paths=[tmp_path / "job.yaml"], config=config, registry=REGISTRY, select=["XPL007"],
                              cwd=tmp_path))
    return report.active


@pytest.mark.parametrize("workers, fires", [(1, False), (2, True), (5, True)])
def test_kubeflow_replicas_against_the_autoscaler_maximum(tmp_path: Path, workers: int, fires: bool) -> None:
    results = run(tmp_path, pytorchjob(workers))
    if not fires:
        assert results == []
        return
    (result,) = results
    assert (result.line, result.column) == (16, 40)  # the Master's nvidia.com/gpu value
    assert f"runs {workers + 1} GPU pods" in result.message and f"{2 * (workers + 1)} nvidia.com/gpu" in result.message
    assert "at most 4: `a100np` (2 nodes x 2 GPUs)" in result.message and f"Worker {workers} x 2" in result.message


def test_pools_of_every_template_are_summed(tmp_path: Path) -> None:
    # 6 one-GPU pods on any NVIDIA pool: 4 + 2 GPUs
    assert run(tmp_path, pytorchjob(5, gpus=1, selector="{accelerator: nvidia}")) == []
    (result,) = run(tmp_path, pytorchjob(6, gpus=1, selector="{accelerator: nvidia}"))
    assert "at most 6: `a100np` (2 nodes x 2 GPUs); `t4np` (2 nodes x 1 GPU)" in result.message


@pytest.mark.parametrize("extra", [
    "  elasticPolicy: {minReplicas: 1, maxReplicas: 8}\n",
    "  runPolicy:\n    schedulingPolicy: {minAvailable: 2}\n",
    "  runPolicy:\n    schedulingPolicy: {minAvailable: '${MIN}'}\n",
])
def test_a_gang_smaller_than_the_job_is_not_judged(tmp_path: Path, extra: str) -> None:
    assert run(tmp_path, pytorchjob(5, extra=extra)) == []
    whole = "  runPolicy:\n    schedulingPolicy: {minAvailable: 6}\n"
    assert [r.rule for r in run(tmp_path, pytorchjob(5, extra=whole))] == ["XPL007"]


def test_unknown_pools_and_unplaceable_pods_are_left_to_others(tmp_path: Path) -> None:
    unknown = ({**POOLS[0], "vm-size": None}, POOLS[1])
    assert run(tmp_path, pytorchjob(5), pools=unknown) == []  # an unknown VM size: any number of GPUs
    unbounded = ({k: v for k, v in POOLS[0].items() if k != "max-count"}, POOLS[1])
    assert run(tmp_path, pytorchjob(5), pools=unbounded) == []  # no --max-count: unknown size
    assert run(tmp_path, pytorchjob(5, gpus=4)) == []  # no node has 4 GPUs: XPL003's finding
    assert run(tmp_path, pytorchjob(5, selector="{gpu: h100}")) == []  # no pool matches: XPL001's
    assert run(tmp_path, pytorchjob(5), pools=()) == []  # no pools described at all


LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm, namespace: serving}
spec:
  replicas: 4
  leaderWorkerTemplate:
    size: SIZE
    leaderTemplate:
      spec:
        nodeSelector: {gpu: a100}
        tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
        containers:
        - name: leader
          image: myacr.azurecr.io/vllm@sha256:3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c
          resources: {limits: {nvidia.com/gpu: 2}}
    workerTemplate:
      spec:
        nodeSelector: {gpu: a100}
        tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
        containers:
        - name: worker
          image: myacr.azurecr.io/vllm@sha256:3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c
          resources: {limits: {nvidia.com/gpu: 2}}
"""


@pytest.mark.parametrize("size, fires", [(2, False), (3, True)])
def test_a_leaderworkerset_group_is_one_gang(tmp_path: Path, size: int, fires: bool) -> None:
    # 4 groups of 2 pods x 2 GPUs need 16 GPUs in all, but each group is admitted on its own
    results = run(tmp_path, LWS.replace("SIZE", str(size)))
    assert [(r.line, r.column) for r in results] == ([(15, 48)] if fires else [])
    if fires:
        assert "each group of LeaderWorkerSet `vllm` runs 3 GPU pods" in results[0].message
        assert "leader 1 x 2, worker 2 x 2" in results[0].message


JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: trials, namespace: ml}
spec:
  parallelism: 7
  completions: COMPLETIONS
  template:
    metadata:
      LABELS
    spec:
      restartPolicy: Never
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
      containers:
      - name: trial
        image: myacr.azurecr.io/hpo@sha256:3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c
        resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize("labels, command, completions, fires", [
    ("labels: {app: hpo}", "[python, trial.py]", 7, False),  # independent trials: no gang
    ("annotations: {scheduling.k8s.io/group-name: trials}", "[python, trial.py]", 7, False),  # may run a few at once
    ("labels: {kueue.x-k8s.io/queue-name: team-a}", "[python, trial.py]", 7, False),  # admitted whole, run apart
    ("labels: {app: ddp}", "[torchrun, --nnodes=7, train.py]", 7, True),  # ranks that rendezvous
    ("labels: {app: ddp}", "[torchrun, --nnodes=6, train.py]", 6, False),  # at most 6 pods at once
])
def test_a_batch_job_is_a_gang_only_when_its_pods_talk(tmp_path: Path, labels: str, command: str, completions: int,
                                                      fires: bool) -> None:
    text = JOB.replace("LABELS", labels).replace("COMPLETIONS", str(completions)).replace(
        "        resources:", f"        command: {command}\n        resources:")
    assert [r.rule for r in run(tmp_path, text)] == (["XPL007"] if fires else [])


def test_pools_of_another_repository_are_not_combined(tmp_path: Path) -> None:
    """A folder of repositories side by side (no git, no config): a gang is judged only against the
    pools its own top-level folder defines (linter.model.locality)."""
    script = ("#!/bin/bash\naz aks create -g rg -n ml-aks --node-count 1\n"
              "az aks nodepool add -g rg --cluster-name ml-aks -n a100np --node-vm-size Standard_NC48ads_A100_v4 "
              "--enable-cluster-autoscaler --min-count 0 --max-count 2 --labels gpu=a100 --node-taints sku=gpu:NoSchedule\n")
    corpus = tmp_path / "corpus"
    for name, text in {"infra/setup.sh": script, "training/job.yaml": pytorchjob(5)}.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text, encoding="utf-8")

    def findings() -> list:
        return lint(LintRequest(paths=[corpus], config=None, registry=REGISTRY, select=["XPL007"], cwd=tmp_path)).active

    assert findings() == []
    (corpus / ".mlops-lint.yaml").write_text("{}\n", encoding="utf-8")  # one project by the user's word
    assert [Path(r.path).name for r in findings()] == ["job.yaml"]


# ---------------------------------------------------------------------------------------------
# A node auto-provisioning cluster beside a Standard one: the Standard cluster's pools are judged

MIXED_AZ = """\
az aks create -g rg -n napaks --node-provisioning-mode Auto --node-vm-size Standard_D4s_v3
az aks create -g rg -n aks --node-vm-size Standard_D4s_v3
az aks nodepool add -g rg --cluster-name aks -n gpunp --node-vm-size Standard_NC4as_T4_v3 \\
  --enable-cluster-autoscaler --min-count 0 --max-count 2 --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule
"""
MIXED_TF = """\
resource "azurerm_kubernetes_cluster" "nap" {
  name = "napaks"
  default_node_pool {
    name    = "system"
    vm_size = "Standard_D4s_v3"
  }
  node_provisioning_profile {
    mode = "Auto"
  }
}

resource "azurerm_kubernetes_cluster" "std" {
  name = "aks"
  default_node_pool {
    name    = "system"
    vm_size = "Standard_D4s_v3"
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.std.id
  vm_size               = "Standard_NC4as_T4_v3"
  auto_scaling_enabled  = true
  min_count             = 0
  max_count             = 2
  node_labels           = { accelerator = "nvidia" }
  node_taints           = ["sku=gpu:NoSchedule"]
}
"""
FOUR_GPUS = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
      containers:
      - name: main
        image: myacr.azurecr.io/train:1.0
        resources: {limits: {nvidia.com/gpu: 4}}
"""


@pytest.mark.parametrize("name, infra", [("setup.sh", MIXED_AZ), ("main.tf", MIXED_TF)])
def test_a_label_only_the_standard_clusters_pools_set_keeps_the_pod_there(tmp_path: Path, name: str,
                                                                           infra: str) -> None:
    """A NAP cluster beside a Standard one: NAP makes no node with `accelerator: nvidia`, which only
    the Standard cluster's T4 pool sets, so the pod lands on that pool only and XPL003 judges it
    (before, nodes NAP might make stood beside the pool and hid it). A label the NAP cluster's own
    pools set too stays open for the nodes NAP makes."""
    (tmp_path / name).write_text(infra, encoding="utf-8")
    (tmp_path / "job.yaml").write_text(FOUR_GPUS, encoding="utf-8")

    def found() -> list:
        report = lint(LintRequest(paths=[tmp_path], config=Config(root=tmp_path), registry=REGISTRY,
                                  select=["XPL003"], cwd=tmp_path))
        return [(r.rule, Path(r.path).name, r.line, r.column) for r in report.active]

    assert found() == [("XPL003", "job.yaml", 13, 46)]  # the GPU count
    assert "`gpunp` (Standard_NC4as_T4_v3) has 1 nvidia.com/gpu" in lint(LintRequest(
        paths=[tmp_path], config=Config(root=tmp_path), registry=REGISTRY, select=["XPL003"],
        cwd=tmp_path)).active[0].message
    # the NAP cluster's own pool sets the label too: NAP's nodes may carry it, nothing is known
    nap_label = infra.replace("--node-provisioning-mode Auto --node-vm-size Standard_D4s_v3",
                              "--node-provisioning-mode Auto --node-vm-size Standard_D4s_v3 "
                              "--nodepool-labels accelerator=nvidia")
    nap_label = nap_label.replace('''    name    = "system"
    vm_size = "Standard_D4s_v3"
  }
  node_provisioning_profile''', '''    name        = "system"
    vm_size     = "Standard_D4s_v3"
    node_labels = { accelerator = "nvidia" }
  }
  node_provisioning_profile''')
    assert nap_label != infra
    (tmp_path / name).write_text(nap_label, encoding="utf-8")
    assert found() == []
