"""fixtures/iac/: a Terraform module, a Bicep file and an ARM template that each define a cluster, a System pool
and GPU pools breaking AKS001-AKS007, with a training Job XPL001 places on them; and
their fixed twins, which pass. Each folder is a project of its own (a `.mlops-lint.yaml` root)."""

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
