"""AKS010 gpu-pool-not-autoscaled: cases beyond the fixtures (fixtures/rules/AKS010/ holds the fail
and pass files of every pool source: az scripts, Terraform, Bicep, ARM, config node-pools)."""

from __future__ import annotations

from pathlib import Path

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()


def results(path: Path, cwd: Path = REPO):
    report = lint(LintRequest(paths=[path], config=Config(), registry=REGISTRY, select=["AKS010"], cwd=cwd))
    return [r for r in report.active if r.rule == "AKS010"]


def findings(path: Path, cwd: Path = REPO) -> list[tuple[int, str]]:
    return [(r.line, r.rule) for r in results(path, cwd)]


def test_the_fail_fixture_is_reported_at_its_expect_line() -> None:
    path = REPO / "fixtures" / "rules" / "AKS010" / "fail.sh"
    lines = path.read_text("utf-8").splitlines()
    expected = [(i + 2, "AKS010") for i, line in enumerate(lines) if line.strip() == "# expect: AKS010"]
    assert expected and findings(path) == expected


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cluster.sh"
    path.write_text("#!/usr/bin/env bash\n" + text, "utf-8")
    return path


ADD = "az aks nodepool add -g rg --cluster-name aks -n gpunp --node-vm-size Standard_NC24ads_A100_v4 "


def test_a_fixed_count_is_reported_at_its_value_with_the_hint(tmp_path: Path) -> None:
    path = _script(tmp_path, ADD + "--node-count 2 --labels accelerator=nvidia\n")
    [result] = results(path, tmp_path)
    assert (result.line, result.column) == (2, len(ADD) + len("--node-count ") + 1)
    assert "fixed size of 2 nodes" in result.message and "`gpunp`" in result.message
    assert "--enable-cluster-autoscaler --min-count 0 --max-count 2" in result.message
    assert result.severity == "info"


def test_the_cli_default_count_is_reported_at_the_vm_size(tmp_path: Path) -> None:
    path = _script(tmp_path, ADD + "--labels accelerator=nvidia\n")
    [result] = results(path, tmp_path)
    assert (result.line, result.column) == (2, ADD.index("--node-vm-size") + 1)
    assert "3 nodes (the CLI's default count)" in result.message


def test_a_later_update_that_turns_the_autoscaler_on_clears_it(tmp_path: Path) -> None:
    # the article's order: the pool exists, then `nodepool update --enable-cluster-autoscaler`
    path = _script(tmp_path, ADD + "--node-count 1\n"
                   "az aks nodepool update -g rg --cluster-name aks -n gpunp --enable-cluster-autoscaler "
                   "--min-count 0 --max-count 8\n")
    assert findings(path, tmp_path) == []


def test_an_update_in_another_file_counts_too(tmp_path: Path) -> None:
    _script(tmp_path, ADD + "--node-count 1\n")
    (tmp_path / "scale.sh").write_text(
        "az aks nodepool update -g rg --cluster-name aks -n gpunp --enable-cluster-autoscaler "
        "--min-count 0 --max-count 8\n", "utf-8")
    assert findings(tmp_path, tmp_path) == []


def test_nothing_in_a_node_auto_provisioning_project(tmp_path: Path) -> None:
    path = _script(tmp_path, "az aks create -g rg -n aks --node-provisioning-mode Auto\n" + ADD + "--node-count 2\n")
    assert findings(path, tmp_path) == []


def test_system_spot_and_unknown_counts(tmp_path: Path) -> None:
    path = _script(tmp_path, ADD.replace("gpunp", "sysnp") + "--mode System --node-count 2\n"
                   + ADD.replace("gpunp", "varnp") + '--node-count "$N"\n'
                   + ADD.replace("gpunp", "spotnp") + "--priority Spot --node-count 2\n")
    # a System pool and a count the script does not determine are not judged; a fixed Spot pool is
    assert [(r.line, "`spotnp`" in r.message) for r in results(path, tmp_path)] == [(4, True)]


def test_bounds_without_the_switch_are_left_to_aks004(tmp_path: Path) -> None:
    path = _script(tmp_path, ADD + "--node-count 1 --min-count 0 --max-count 3\n")
    report = lint(LintRequest(paths=[path], config=Config(), registry=REGISTRY, select=["AKS004", "AKS010"],
                              cwd=tmp_path))
    assert sorted({r.rule for r in report.active}) == ["AKS004"]


def test_a_terraform_pool_without_a_count_is_not_judged(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n  name = "gpunp"\n'
        '  kubernetes_cluster_id = var.id\n  vm_size = "Standard_NC24ads_A100_v4"\n}\n'
        'resource "azurerm_kubernetes_cluster_node_pool" "fixed" {\n  name = "fixednp"\n'
        '  kubernetes_cluster_id = var.id\n  vm_size = "Standard_NC24ads_A100_v4"\n  node_count = 4\n}\n', "utf-8")
    [result] = results(tmp_path, tmp_path)
    assert (result.line, result.column) == (10, len("  node_count = ") + 1)
    assert "auto_scaling_enabled = true, min_count = 0, max_count = 4" in result.message


def test_node_auto_provisioning_spares_only_its_own_cluster(tmp_path: Path) -> None:
    # a NAP cluster beside a Standard one: the Standard cluster's fixed GPU pool is still judged
    # (two kinds of cluster: the profile is not inferred, the project is linted as aks-standard)
    path = _script(tmp_path, "az aks create -g rg -n napaks --node-provisioning-mode Auto\n"
                   "az aks nodepool add -g rg --cluster-name napaks -n napgpu "
                   "--node-vm-size Standard_NC24ads_A100_v4 --node-count 2\n"
                   "az aks create -g rg -n aks\n" + ADD + "--node-count 2\n")
    assert [(r.line, "`gpunp`" in r.message) for r in results(path, tmp_path)] == [(5, True)]
    # a NAP mode whose cluster name the script does not determine may be any cluster
    path.write_text(path.read_text("utf-8").replace("-n napaks", '-n "$NAME"'), "utf-8")
    assert results(path, tmp_path) == []
