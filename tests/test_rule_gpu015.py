"""GPU015 node-agent-skips-gpu-nodes: cases beyond the fixtures (fixtures/rules/GPU015/ holds the fail and pass files).

Each case is a project of its own: a cluster definition and one DaemonSet."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]


def findings(paths: list[Path]) -> list[tuple[str, int, str]]:
    report = lint(LintRequest(paths=paths, config=Config(), registry=load_registry(), select=["GPU015"], cwd=REPO))
    return [(Path(r.path).name, r.line, r.rule) for r in report.active]


def test_the_fail_fixture_is_reported_at_its_expect_lines_and_only_with_its_cluster() -> None:
    folder = REPO / "fixtures" / "rules" / "GPU015"
    lines = (folder / "fail.yaml").read_text("utf-8").splitlines()
    expected = [("fail.yaml", i + 2, "GPU015") for i, line in enumerate(lines) if line.strip() == "# expect: GPU015"]
    assert len(expected) == 3 and findings([folder / "fail.sh", folder / "fail.yaml"]) == expected
    assert findings([folder / "fail.yaml"]) == []  # no cluster in the project: no GPU pool taint known


CLUSTER = """\
az aks create --resource-group rg --name aks --node-vm-size Standard_D4s_v5 --node-count 3
az aks nodepool add --resource-group rg --cluster-name aks --name gpunp --node-vm-size Standard_NC24ads_A100_v4 \\
  --node-count 1 {flags}
"""
AGENT = """\
apiVersion: apps/v1
kind: {kind}
metadata:
  name: agent
  namespace: kube-system
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:{extra}
      containers:
      - name: agent
        image: {image}
"""
FLUENT_BIT = "fluent/fluent-bit:3.1.4"


def project(tmp_path: Path, flags: str = "--node-taints sku=gpu:NoSchedule", image: str = FLUENT_BIT,
            extra: str = "", kind: str = "DaemonSet", vm: str | None = None) -> list:
    cluster = CLUSTER.format(flags=flags)
    if vm is not None:
        cluster = cluster.replace("Standard_NC24ads_A100_v4", vm)
    (tmp_path / "cluster.sh").write_text(cluster, "utf-8")
    (tmp_path / "agent.yaml").write_text(AGENT.format(kind=kind, image=image, extra=extra), "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["GPU015"],
                              cwd=tmp_path))
    return [r for r in report.active if r.rule == "GPU015"]


@pytest.mark.parametrize("image", [
    FLUENT_BIT, "fluent/fluentd-kubernetes-daemonset:v1.16", "k8s.gcr.io/fluentd-elasticsearch:v2.0.4", "quay.io/prometheus/node-exporter:v1.8.2",
    "mcr.microsoft.com/oss/kubernetes-csi/azuredisk-csi:v1.30.3", "mcr.microsoft.com/oss/kubernetes-csi/azurefile-csi:v1.30.3",
    "quay.io/cilium/cilium:v1.15.6", "docker.io/calico/node:v3.28.0", "mcr.microsoft.com/containernetworking/azure-cns:v1.6.5",
    "registry.k8s.io/kube-proxy:v1.30.3", "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.19",
    "mcr.microsoft.com/azuremonitor/containerinsights/ciprod/prometheus-collector/images:6.9.0-main",
    "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.7-3.5.0-ubuntu22.04",
])
def test_each_known_agent_is_reported_at_its_pod_spec(tmp_path: Path, image: str) -> None:
    found = project(tmp_path, image=image)
    assert [(Path(r.path).name, r.line, r.column) for r in found] == [("agent.yaml", 14, 5)]
    assert "`sku=gpu:NoSchedule` of `gpunp`" in found[0].message and "cluster.sh:2" in found[0].message


def test_the_tolerations_key_is_reported_and_the_hint_names_every_taint(tmp_path: Path) -> None:
    extra = "\n      tolerations:\n      - key: CriticalAddonsOnly\n        operator: Exists"
    found = project(tmp_path, flags="--node-taints sku=gpu:NoSchedule,nvidia.com/gpu:NoExecute", extra=extra)
    assert [(r.line, r.column) for r in found] == [(15, 7)]
    assert "taints `sku=gpu:NoSchedule`, `nvidia.com/gpu:NoExecute`" in found[0].message
    assert found[0].fix == ("add the tolerations `{key: sku, operator: Equal, value: gpu, effect: NoSchedule}`; "
                            "`{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}`")


def test_a_spot_gpu_pool_taint_counts(tmp_path: Path) -> None:
    found = project(tmp_path, flags="--priority Spot --eviction-policy Delete --spot-max-price -1")
    assert len(found) == 1 and "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in found[0].message


@pytest.mark.parametrize(("flags", "image", "extra", "kind", "vm"), [
    ("", FLUENT_BIT, "", "DaemonSet", None),  # the GPU pool has no taint
    ("--node-taints sku=gpu:PreferNoSchedule", FLUENT_BIT, "", "DaemonSet", None),  # does not repel
    ("--node-taints dedicated=batch:NoSchedule", FLUENT_BIT, "", "DaemonSet", "Standard_D16s_v5"),  # not a GPU pool
    ("--node-taints sku=gpu:NoSchedule", FLUENT_BIT, "\n      tolerations:\n      - operator: Exists", "DaemonSet", None),
    ("--node-taints sku=gpu:NoSchedule", FLUENT_BIT, "\n      tolerations:\n      - key: sku\n        operator: Exists",
     "DaemonSet", None),
    ("--node-taints sku=gpu:NoSchedule", FLUENT_BIT, "\n      nodeSelector:\n        kubernetes.azure.com/agentpool: nodepool1",
     "DaemonSet", None),  # meant for the system pool only
    ("--node-taints sku=gpu:NoSchedule", "registry.k8s.io/pause:3.9", "", "DaemonSet", None),  # not a known agent
    ("--node-taints sku=gpu:NoSchedule", "$(AGENT_IMAGE)", "", "DaemonSet", None),  # image not known
    ("--node-taints sku=gpu:NoSchedule", "nvcr.io/nvidia/k8s-device-plugin:v0.17.1", "", "DaemonSet", None),  # GPU010's
    ("--node-taints sku=gpu:NoSchedule", FLUENT_BIT, "", "Deployment", None),  # not on every node
])
def test_left_alone(tmp_path: Path, flags: str, image: str, extra: str, kind: str, vm: str | None) -> None:
    assert project(tmp_path, flags=flags, image=image, extra=extra, kind=kind, vm=vm) == []


def test_a_terraform_gpu_pool(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text("""\
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpu"
  kubernetes_cluster_id = "x"
  vm_size               = "Standard_NC24ads_A100_v4"
  node_count            = 1
  node_taints           = ["sku=gpu:NoSchedule"]
}
""", "utf-8")
    (tmp_path / "agent.yaml").write_text(AGENT.format(kind="DaemonSet", image=FLUENT_BIT, extra=""), "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["GPU015"],
                              cwd=tmp_path))
    found = [r for r in report.active if r.rule == "GPU015"]
    assert [(Path(r.path).name, r.line) for r in found] == [("agent.yaml", 14)]
    assert "`gpu`" in found[0].message and "main.tf:1" in found[0].message


@pytest.mark.parametrize(("selector", "reported"), [
    ("node-role.kubernetes.io/control-plane: \"true\"", False),  # a label the pool does not tell: other nodes
    ("nvidia.com/gpu.present: \"true\"", True),  # unknown on the pool, but it pins GPU nodes
    ("kubernetes.io/os: linux", True),  # every Linux pool, the GPU pool among them
    ("accelerator: nvidia", True),  # the pool's own label
])
def test_node_selection_decides_whether_the_gpu_pool_is_meant(tmp_path: Path, selector: str, reported: bool) -> None:
    found = project(tmp_path, flags="--node-taints sku=gpu:NoSchedule --labels accelerator=nvidia",
                    extra=f"\n      nodeSelector:\n        {selector}")
    assert len(found) == (1 if reported else 0)
