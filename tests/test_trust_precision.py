"""issue 33 items 3, 4 and 7 on their reproductions (../shared/repros/trust/<folder>, each its own
project), run as a user runs them, plus the cases around each: variant files are alternatives, a
GPU alone is no sign of training, one cause gives one finding."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from linter.cli import main

REPROS = Path(__file__).resolve().parents[1].parent.parent / "shared" / "repros" / "trust"
if not REPROS.is_dir():
    REPROS = Path("/work/shared/repros/trust")


def lint(folder: Path, *extra: str) -> list[dict]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, ["--no-cache", "--jobs", "1", "--format", "json", *extra, "."],
                                    catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)["findings"]


def repro(name: str, tmp_path: Path) -> Path:
    source = REPROS / name
    if not source.is_dir():
        pytest.skip(f"{source} is not on this machine")
    target = tmp_path / name
    shutil.copytree(source, target)
    return target


def found(findings: list[dict], *rules: str) -> list[tuple[str, str, int, int]]:
    return sorted((f["rule"], f["path"], f["line"], f["column"]) for f in findings if not rules or f["rule"] in rules)


# ---------------------------------------------------------------------------------------------
# item 3: variant files are alternatives


def test_que006_alternative_variant_admits(tmp_path: Path) -> None:
    """The whole-GPU ClusterQueue of cluster-queues.yaml admits the Job; its MIG alternative
    (cluster-queues-mig.yaml, same name, same cohort) does not: one alternative is enough."""
    folder = repro("que006-alternative-variant", tmp_path)
    assert found(lint(folder), "QUE006") == []


def test_que006_every_alternative_refuses(tmp_path: Path) -> None:
    """Asking more than either alternative can give is still reported."""
    folder = repro("que006-alternative-variant", tmp_path)
    job = folder / "demo-jobs" / "whole-gpu-job.yaml"
    job.write_text(job.read_text().replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 6"))
    findings = [f for f in lint(folder) if f["rule"] == "QUE006"]
    assert [(f["path"], f["line"], f["column"]) for f in findings] == [("demo-jobs/whole-gpu-job.yaml", 18, 38)]
    assert "ClusterQueue `team-a-cq`" in findings[0]["message"]


# ---------------------------------------------------------------------------------------------
# item 4: training is recognised by evidence, not by a GPU alone


def test_smoke_test_is_not_training(tmp_path: Path) -> None:
    """An nvidia-smi pod on ubuntu keeps its GPU and hygiene findings, not the trainer's."""
    folder = repro("smoke-test-as-training", tmp_path)
    findings = lint(folder)
    assert found(findings, "RES004", "RES007", "IMG003") == []
    assert {f["rule"] for f in findings} == {"SEC001", "SEC002", "SEC003", "IMG002", "RES001", "RES002", "GPU002"}


ARTICLE = REPROS.parent.parent / "seed" / "mlops-aks-best-practices.txt"


def article_blocks() -> list[str]:
    """The article's manifests: each run of YAML lines from an `apiVersion:` line."""
    import re

    yamlish = re.compile(r'^(---|[A-Za-z0-9_.\-/"]+:( |$)|- |\s)')
    lines, blocks, i = ARTICLE.read_text().split("\n"), [], 0
    while i < len(lines):
        if lines[i].startswith("apiVersion:"):
            block = []
            while i < len(lines) and (lines[i] == "" or yamlish.match(lines[i])):
                block.append(lines[i])
                i += 1
            blocks.append("\n".join(block).rstrip() + "\n")
        else:
            i += 1
    return blocks


def test_the_articles_smoke_tests_are_not_trainers(tmp_path: Path) -> None:
    """The article's GPU pods and queued Jobs that run `set -e; nvidia-smi; echo; sleep` hold a
    GPU but train nothing: the trainer rules fire only on its PyTorchJob and TFJob, which run
    NCCL collectives."""
    if not ARTICLE.is_file():
        pytest.skip(f"{ARTICLE} is not on this machine")
    (tmp_path / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    for n, block in enumerate(article_blocks(), 1):
        (tmp_path / f"block{n:02d}.yaml").write_text(block)
    findings = lint(tmp_path, "--select", "RES004,RES007,IMG003,QUE012")
    assert sorted({(f["rule"], f["object"]["kind"]) for f in findings}) == [("RES004", "PyTorchJob"), ("RES004", "TFJob")]
