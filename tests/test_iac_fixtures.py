"""fixtures/iac/: a Terraform module, a Bicep file and an ARM template that each define a cluster, a System pool
and GPU pools breaking AKS001-AKS007, with a training Job XPL001 places on them; and
their fixed twins, which pass. Each folder is a project of its own (a `.mlops-lint.yaml` root).
fixtures/iac/config/ writes such pools as the config's `node-pools` (all but AKS006, which judges
an autoscaler profile a config cannot write), at the config's own lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import load_config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

IAC = Path(__file__).resolve().parents[1] / "fixtures" / "iac"
SELECT = ["AKS001", "AKS002", "AKS003", "AKS004", "AKS005", "AKS006", "AKS007",
          "XPL001", "XPL002", "XPL003", "XPL004", "XPL005", "XPL006"]
SOURCE = {"terraform": "main.tf", "bicep": "main.bicep", "arm": "azuredeploy.json"}


def run(folder: Path):
    registry = load_registry()
    config = load_config(folder / ".mlops-lint.yaml", registry)
    return lint(LintRequest(paths=[folder], config=config, registry=registry, select=SELECT, cwd=folder, jobs=1))


@pytest.mark.parametrize("source", sorted(SOURCE))
def test_violating_module_fires_every_aks_rule_at_its_own_source(source: str) -> None:
    report = run(IAC / source / "violating")
    found = sorted((f.rule, f.path) for f in report.active)
    where = SOURCE[source]
    assert found == sorted([("AKS001", where), ("AKS001", where), ("AKS002", where), ("AKS002", where),
                            ("AKS003", where), ("AKS003", where), ("AKS004", where), ("AKS005", where),
                            ("AKS006", where),
                            ("AKS007", "train.yaml"), ("XPL001", "train.yaml")]), found
    aks007 = next(f for f in report.active if f.rule == "AKS007")
    assert f"max-graceful-termination-sec 60 (set at {where}:" in aks007.message


@pytest.mark.parametrize("source", sorted(SOURCE))
def test_conforming_twin_passes(source: str) -> None:
    report = run(IAC / source / "conforming")
    assert report.active == [], [(f.rule, f.path, f.line, f.message) for f in report.active]
    assert set(report.file_status.values()) == {"linted"}


def test_config_node_pools_fire_every_aks_rule_in_the_config() -> None:
    report = run(IAC / "config" / "violating")
    config = ".mlops-lint.yaml"
    assert sorted((f.rule, f.path, f.line, f.column) for f in report.active) == sorted([
        ("AKS001", config, 8, 5), ("AKS002", config, 8, 5), ("AKS003", config, 9, 5),
        ("AKS001", config, 14, 5), ("AKS002", config, 14, 5), ("AKS003", config, 15, 5), ("AKS004", config, 17, 16),
        ("AKS005", config, 20, 27), ("XPL001", "train.yaml", 10, 22), ("AKS007", "train.yaml", 26, 38)])
    aks007 = next(f for f in report.active if f.rule == "AKS007")
    assert "max-graceful-termination-sec 600 (the AKS default)" in aks007.message
    assert report.file_status == {config: "linted", "train.yaml": "linted"}


def test_config_conforming_twin_passes() -> None:
    report = run(IAC / "config" / "conforming")
    assert report.active == [], [(f.rule, f.path, f.line, f.message) for f in report.active]
    assert report.file_status == {".mlops-lint.yaml": "linted", "train.yaml": "linted"}
