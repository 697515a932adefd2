"""The reference manifests: the article's examples, corrected, lint clean; their broken variants
make every rule of the catalogue fire, with goldens of each report format.

``fixtures/conforming/`` is linted exactly as a user would (`mlops-lint fixtures/conforming`, default
settings: its ``.mlops-lint.yaml`` holds only a comment and makes it a project root of its own);
``fixtures/violating/`` carries its own ``.mlops-lint.yaml`` (trusted registries, required labels),
found the usual way, upward from the PATH. Every fixture set is a project, so `mlops-lint fixtures/`
lints each set apart from the others.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from linter.cli import main
from linter.config import Config
from linter.engine import LintRequest, lint
from linter.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
CONFORMING = REPO / "fixtures" / "conforming"
VIOLATING = REPO / "fixtures" / "violating"
REPORTS = REPO / "fixtures" / "reports"

# One file set per example of the article (issue 3's list), by folder.
ARTICLE_EXAMPLES = {
    "gpu-pod": "Schedule GPU workloads",
    "node-pool-job": "Isolate GPU workloads with taints and tolerations",
    "cluster": "Provision an AKS GPU node pool / Configure cluster autoscaling",
    "device-plugin": "Verify or install the NVIDIA device plugin",
    "mig": "Partition A100 and H100 GPUs with MIG",
    "pytorchjob": "Run a PyTorchJob / Configure NCCL communication with AKS CNI",
    "tfjob": "Run a TFJob",
    "kaito": "Fine-tune a model with KAITO",
    "kueue": "Allocate multi-tenant GPU quota with Kueue",
    "volcano": "Use Volcano as an alternative",
    "priorities": "Configure training and inference priorities",
    "shm": "Increase /dev/shm for ML data loaders",
    "blob-dataset": "Access large datasets with the Azure Blob CSI driver",
    "azure-files": "Share training data with Azure Files",
    "checkpointed-job": "Checkpoint to persistent storage",
    "monitoring": "Collect NVIDIA GPU metrics / Export training throughput metrics",
}
# Produced by the engine or opt-in: no manifest makes them fire at default settings.
# the suppression stage's (unused, expired, without a reason) and a rule's crash: their own fixtures show them
# LNT005 needs a profile given against the project's own cluster (its fixtures and
# tests/test_profile_inference.py): a reference set's config gives none, or the one it makes
NOT_BY_MANIFESTS = {"LNT001", "LNT002", "LNT003", "LNT004", "LNT005"}


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--no-color", "--jobs", "1"], catch_exceptions=False)
    return result.exit_code, result.stdout


@lru_cache(maxsize=None)
def violating_report(fmt: str) -> tuple[int, str]:
    return run_cli("fixtures/violating", "--format", fmt)


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.mark.parametrize("folder", sorted(ARTICLE_EXAMPLES))
def test_every_article_example_has_a_file_set(folder: str) -> None:
    files = [p for p in (CONFORMING / folder).iterdir() if p.is_file()]
    assert files, f"fixtures/conforming/{folder} ({ARTICLE_EXAMPLES[folder]}) is empty"


def test_conforming_manifests_are_clean_at_default_settings() -> None:
    code, out = run_cli("fixtures/conforming", "--format", "json")
    report = json.loads(out)
    shown = "\n".join(f"{f['path']}:{f['line']}:{f['column']} {f['rule']} {f['message']}" for f in report["findings"])
    assert report["findings"] == [], f"the conforming manifests gave findings:\n{shown}"
    assert code == 0
    assert report["summary"]["files"] >= len(ARTICLE_EXAMPLES)


def test_every_conforming_set_is_clean_when_all_fixtures_are_linted_at_once() -> None:
    """`mlops-lint fixtures/`: each fixture set is a project of its own (a root), so the conforming
    sets borrow nothing from the violating sets beside them (a PriorityClass marked globalDefault,
    a default-deny NetworkPolicy, another set's node pools), and each set keeps its own config."""
    code, out = run_cli("fixtures", "--format", "json", "--no-cache")
    report = json.loads(out)
    conforming = [f for f in report["findings"]
                  if f["path"].startswith(("fixtures/conforming/", "fixtures/cluster/conforming/"))]
    assert conforming == [] and code == 1
    alone = json.loads(violating_report("json")[1])["findings"]
    together = [f for f in report["findings"] if f["path"].startswith("fixtures/violating/")]
    assert together == alone  # the violating set's own config (IMG004, OBS004) applies in both runs


def test_conforming_files_are_all_linted_not_skipped() -> None:
    report = lint(LintRequest(paths=[CONFORMING], config=Config(), registry=load_registry(), cwd=REPO))
    linted = {path for path, status in report.file_status.items() if status == "linted"}
    expected = {p.relative_to(REPO).as_posix() for p in CONFORMING.rglob("*")
                if p.is_file() and p.suffix in (".yaml", ".sh") and p.name != ".mlops-lint.yaml"}
    assert expected <= linted, f"not linted: {sorted(expected - linted)}"


def test_violating_manifests_make_every_rule_fire() -> None:
    code, out = violating_report("json")
    assert code == 1
    fired = {f["rule"] for f in json.loads(out)["findings"]}
    catalogue = {meta.code for meta in load_registry().rules if meta.status != "removed"}
    missing = sorted(catalogue - NOT_BY_MANIFESTS - fired)
    assert not missing, f"no violating manifest makes these rules fire: {missing}"


def test_violating_findings_stay_in_the_violating_files() -> None:
    _, out = violating_report("json")
    for finding in json.loads(out)["findings"]:
        assert finding["path"].startswith("fixtures/violating/"), finding


@pytest.mark.parametrize("fmt,name", [("text", "violating.txt"), ("json", "violating.json"), ("sarif", "violating.sarif")])
def test_violating_reports_match_goldens(fmt: str, name: str, update_golden: bool) -> None:
    _, out = violating_report(fmt)
    if fmt == "json":  # the version moves with every release; the golden pins the findings
        data = json.loads(out)
        data["version"] = "<version>"
        out = json.dumps(data, indent=2, sort_keys=True) + "\n"
    if fmt == "sarif":
        data = json.loads(out)
        for run in data["runs"]:
            run["tool"]["driver"]["version"] = "<version>"
            run["tool"]["driver"].pop("semanticVersion", None)
            for invocation in run.get("invocations", []):
                invocation.pop("workingDirectory", None)
            run.get("originalUriBaseIds", {}).pop("%SRCROOT%", None)
        out = json.dumps(data, indent=2, sort_keys=True) + "\n"
    golden = REPORTS / name  # outside the linted folder, so a golden never lints itself
    if update_golden:
        golden.write_text(out, encoding="utf-8")
        return
    assert golden.is_file(), f"{golden.relative_to(REPO)} is missing: run `pytest --update-golden` and review the diff"
    assert out == golden.read_text(encoding="utf-8"), f"{golden.relative_to(REPO)} is out of date (pytest --update-golden)"
