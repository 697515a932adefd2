"""GPU014 gpu-driver-missing: cases beyond the fixtures (fixtures/rules/GPU014/ holds the fail and pass files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

POOL = ("#!/bin/bash\naz aks nodepool add --resource-group rg --cluster-name ml-aks --name gpunp "
        "--node-vm-size SIZE --node-taints sku=gpu:NoSchedule DRIVER\n")
POLICY = "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\nspec:\n  driver:\n    enabled: ENABLED\n"


def run(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, int, str]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["GPU014"],
                              cwd=tmp_path))
    return [(Path(r.path).name, r.line, r.column, r.message) for r in report.active]


def pool(driver: str, size: str = "Standard_NC24ads_A100_v4") -> str:
    return POOL.replace("SIZE", size).replace("DRIVER", driver)


def test_reported_at_the_driver_value_with_no_operator(tmp_path: Path) -> None:
    script = pool("--gpu-driver none")
    found = run(tmp_path, {"pools.sh": script})
    col = script.splitlines()[1].index(" none") + 2
    assert [(n, line, c) for n, line, c, _ in found] == [("pools.sh", 2, col)]
    assert "the project installs no GPU Operator with its driver" in found[0][3]
    assert "`gpunp` (Standard_NC24ads_A100_v4" in found[0][3]


def test_a_policy_without_its_driver_is_named(tmp_path: Path) -> None:
    found = run(tmp_path, {"pools.sh": pool("--gpu-driver None"), "policy.yaml": POLICY.replace("ENABLED", "false")})
    assert len(found) == 1 and "ClusterPolicy `cluster-policy` (policy.yaml:2) sets `driver.enabled: false`" in found[0][3]


@pytest.mark.parametrize("files", [
    {"pools.sh": pool("--gpu-driver none"), "policy.yaml": POLICY.replace("ENABLED", "true")},
    {"pools.sh": pool("--gpu-driver none"), "policy.yaml": POLICY.replace("    enabled: ENABLED\n", "    version: 550\n")},
    {"pools.sh": pool("--gpu-driver none") + "helm install op nvidia/gpu-operator -n gpu-operator\n"},
    {"pools.sh": pool("--gpu-driver none") + "helm install op nvidia/gpu-operator -f values.yaml\n"},  # unknown
    {"pools.sh": pool("--gpu-driver install")},
    {"pools.sh": pool("")},
    {"pools.sh": pool("--gpu-driver $DRIVER")},
    {"pools.sh": pool("--gpu-driver none --enable-managed-gpu")},
    {"pools.sh": pool("--gpu-driver None", "Standard_ND96isr_MI300X_v5")},  # AMD: AKS installs no driver anyway
    {"pools.sh": pool("--gpu-driver none", "Standard_D4s_v5")},  # not a GPU size
])
def test_near_misses(tmp_path: Path, files: dict[str, str]) -> None:
    assert run(tmp_path, files) == []


def test_the_operator_chart_without_its_driver(tmp_path: Path) -> None:
    script = pool("--gpu-driver none") + "helm install op nvidia/gpu-operator --set driver.enabled=false\n"
    found = run(tmp_path, {"pools.sh": script})
    assert len(found) == 1 and "sets `driver.enabled=false`" in found[0][3]


def test_an_operator_of_another_top_folder_does_not_count(tmp_path: Path) -> None:
    files = {"repo-a/pools.sh": pool("--gpu-driver none"), "repo-b/policy.yaml": POLICY.replace("ENABLED", "true")}
    assert [(n, line) for n, line, _, _ in run(tmp_path, files)] == [("pools.sh", 2)]


@pytest.mark.parametrize("attribute, fires", [('gpu_driver = "None"', True), ('gpu_driver = "Install"', False),
                                              ("gpu_driver = var.driver", False)])
def test_terraform(tmp_path: Path, attribute: str, fires: bool) -> None:
    tf = ('variable "driver" {}\nresource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n  name = "tfgpu"\n'
          f'  vm_size = "Standard_NC4as_T4_v3"\n  {attribute}\n}}\n')
    found = run(tmp_path, {"main.tf": tf})
    assert [(n, line, col) for n, line, col, _ in found] == ([("main.tf", 5, 16)] if fires else [])


@pytest.mark.parametrize("sets, fires", [
    ("", False),  # the operator's driver is on by default
    ('  set {\n    name  = "driver.enabled"\n    value = "false"\n  }\n', True),
    ('  set = [{ name = "driver.enabled", value = false }]\n', True),
    ('  values = [file("operator-values.yaml")]\n', False),  # a values file may turn it on: unknown
])
def test_the_operator_installed_by_terraform(tmp_path: Path, sets: str, fires: bool) -> None:
    """The Helm provider's helm_release installs the GPU Operator as a script's helm install does."""
    tf = ('resource "helm_release" "gpu_operator" {\n  name       = "gpu-operator"\n'
          '  repository = "https://helm.ngc.nvidia.com/nvidia"\n  chart      = "gpu-operator"\n' + sets + "}\n")
    found = run(tmp_path, {"pools.sh": pool("--gpu-driver none"), "operator.tf": tf})
    assert [n for n, _, _, _ in found] == (["pools.sh"] if fires else [])
    if fires:
        assert "Helm chart `https://helm.ngc.nvidia.com/nvidia/gpu-operator`, release `gpu-operator` (operator.tf:4)" \
            in found[0][3]
