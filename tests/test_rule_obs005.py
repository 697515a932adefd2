"""OBS005 monitor-api-group-mismatch: cases beyond the fixtures (fixtures/rules/OBS005/ holds the fail and pass files).

Each case is a project of its own in a temporary folder (a monitor's verdict depends on the
project's other files: the evidence of which Prometheus runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]


def findings(paths: list[Path]) -> list[tuple[str, int, str]]:
    report = lint(LintRequest(paths=paths, config=Config(), registry=load_registry(), select=["OBS005"], cwd=REPO))
    return [(Path(r.path).name, r.line, r.rule) for r in report.active]


def project(tmp_path: Path, files: dict[str, str]) -> list:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["OBS005"],
                              cwd=tmp_path))
    return [r for r in report.active if r.rule == "OBS005"]


def test_the_fail_fixture_is_reported_at_its_expect_lines_and_only_with_its_cluster() -> None:
    folder = REPO / "fixtures" / "rules" / "OBS005"
    lines = (folder / "fail.yaml").read_text("utf-8").splitlines()
    expected = [("fail.yaml", i + 2, "OBS005") for i, line in enumerate(lines) if line.strip() == "# expect: OBS005"]
    assert expected and findings([folder / "fail.sh", folder / "fail.yaml"]) == expected
    assert findings([folder / "fail.yaml"]) == []  # without the script nothing says managed Prometheus runs


OSS_MONITOR = """\
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: dcgm
  namespace: gpu-operator
spec:
  selector:
    matchLabels:
      app: nvidia-dcgm-exporter
  podMetricsEndpoints:
  - port: metrics
"""
MANAGED_MONITOR = OSS_MONITOR.replace("monitoring.coreos.com/v1", "azmonitoring.coreos.com/v1").replace("dcgm\n", "dcgm-managed\n")
AMA_SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: ama-metrics-settings-configmap
  namespace: kube-system
data:
  schema-version: v1
"""
PROMETHEUS = """\
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata:
  name: k8s
  namespace: monitoring
spec:
  serviceMonitorSelector: {}
"""
AZ_ON = "az aks create --resource-group rg --name aks --enable-azure-monitor-metrics\n"
TF_ON = """\
resource "azurerm_kubernetes_cluster" "aks" {
  name                = "aks"
  location            = "westeurope"
  resource_group_name = "rg"
  dns_prefix          = "aks"
  monitor_metrics {}
  default_node_pool {
    name       = "system"
    vm_size    = "Standard_D4s_v5"
    node_count = 2
  }
}
"""
BICEP_ON = """\
resource aks 'Microsoft.ContainerService/managedClusters@2024-02-01' = {
  name: 'aks'
  location: 'westeurope'
  properties: {
    dnsPrefix: 'aks'
    azureMonitorProfile: {
      metrics: {
        enabled: true
      }
    }
    agentPoolProfiles: [
      {
        name: 'system'
        vmSize: 'Standard_D4s_v5'
        count: 2
        mode: 'System'
      }
    ]
  }
}
"""


@pytest.mark.parametrize(("evidence", "said"), [
    ({"cluster.sh": AZ_ON}, "`az aks create --enable-azure-monitor-metrics` at cluster.sh:1"),
    ({"main.tf": TF_ON}, "`monitor_metrics {}` at main.tf:6"),
    ({"main.bicep": BICEP_ON}, "azureMonitorProfile.metrics.enabled"),
    ({"ama.yaml": AMA_SETTINGS}, "ConfigMap `ama-metrics-settings-configmap` at ama.yaml:2"),
    ({"managed.yaml": MANAGED_MONITOR}, "PodMonitor `dcgm-managed` at managed.yaml:2"),
])
def test_an_operator_monitor_where_managed_prometheus_runs(tmp_path: Path, evidence: dict, said: str) -> None:
    found = project(tmp_path, {"monitor.yaml": OSS_MONITOR, **evidence})
    assert [(Path(r.path).name, r.line, r.column) for r in found] == [("monitor.yaml", 1, 13)]
    assert said in found[0].message and "Use `apiVersion: azmonitoring.coreos.com/v1`" in found[0].message


@pytest.mark.parametrize("others", [
    {},  # nothing says which Prometheus runs
    {"cluster.sh": AZ_ON.replace("--enable-", "--disable-")},
    {"ama.yaml": AMA_SETTINGS.replace("kube-system", "monitoring")},  # not the agent's ConfigMap
    {"ama.yaml": AMA_SETTINGS, "prometheus.yaml": PROMETHEUS},  # both run: the Operator reads it
    {"cluster.sh": AZ_ON + "helm upgrade --install kps prometheus-community/kube-prometheus-stack -n monitoring\n"},
])
def test_an_operator_monitor_is_left_alone(tmp_path: Path, others: dict) -> None:
    assert project(tmp_path, {"monitor.yaml": OSS_MONITOR, **others}) == []


def test_evidence_of_another_top_folder_does_not_count_in_a_folder_of_projects(tmp_path: Path) -> None:
    files = {"repo-a/ama.yaml": AMA_SETTINGS, "repo-b/monitor.yaml": OSS_MONITOR, "repo-b/other.yaml": AMA_SETTINGS.replace("kube-system", "x")}
    assert project(tmp_path, files) == []
    files["repo-b/ama.yaml"] = AMA_SETTINGS
    assert [(Path(r.path).name, r.line) for r in project(tmp_path, files)] == [("monitor.yaml", 1)]


def test_a_managed_monitor_where_only_the_operator_runs(tmp_path: Path) -> None:
    found = project(tmp_path, {"managed.yaml": MANAGED_MONITOR, "prometheus.yaml": PROMETHEUS})
    assert [(Path(r.path).name, r.line, r.column) for r in found] == [("managed.yaml", 1, 13)]
    assert "Prometheus `k8s` (prometheus.yaml:2)" in found[0].message
    assert "Use `apiVersion: monitoring.coreos.com/v1`" in found[0].message


@pytest.mark.parametrize("others", [
    {"prometheus.yaml": PROMETHEUS.replace("  serviceMonitorSelector: {}\n", "  replicas: 1\n")},  # selects no monitor
    {"prometheus.yaml": PROMETHEUS, "ama.yaml": AMA_SETTINGS},
    {"prometheus.yaml": PROMETHEUS, "cluster.sh": AZ_ON},
    {"prometheus.yaml": PROMETHEUS, "monitor.yaml": OSS_MONITOR},  # the Operator has monitors of its own
    {},
])
def test_a_managed_monitor_is_left_alone(tmp_path: Path, others: dict) -> None:
    assert project(tmp_path, {"managed.yaml": MANAGED_MONITOR, **others}) == []


@pytest.mark.parametrize("label", ["release: kube-prometheus-stack", "prometheus: k8s"])
def test_a_monitor_addressed_to_an_operator_release_is_left_alone(tmp_path: Path, label: str) -> None:
    monitor = OSS_MONITOR.replace("  namespace: gpu-operator\n", f"  namespace: gpu-operator\n  labels:\n    {label}\n")
    assert project(tmp_path, {"monitor.yaml": monitor, "cluster.sh": AZ_ON}) == []
    assert len(project(tmp_path, {"monitor.yaml": OSS_MONITOR})) == 1  # the same project without the label
