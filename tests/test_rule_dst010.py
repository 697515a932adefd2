"""DST010 tfjob-replica-layout-invalid: cases beyond the fixtures (fixtures/rules/DST010/ holds the
fail and pass files): each layout, the counts the operator defaults, case of the replica types,
positions and messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()


def tfjob(*replicas: tuple[str, object]) -> str:
    """A TFJob with the replica types given as (name, replicas; None: left out)."""
    lines = ["apiVersion: kubeflow.org/v1", "kind: TFJob", "metadata: {name: tf, namespace: ml}", "spec:",
             "  tfReplicaSpecs:"]
    for role, count in replicas:
        lines.append(f"    {role}:")
        if count is not None:
            lines.append(f"      replicas: {count}")
        lines.append("      template: {spec: {containers: [{name: tensorflow, image: tensorflow/tensorflow:2.16.1}]}}")
    return "\n".join(lines) + "\n"


def run(tmp_path: Path, text: str) -> list[tuple[int, int, str]]:
    (tmp_path / "job.yaml").write_text(text, "utf-8")
    report = lint(LintRequest(paths=[tmp_path / "job.yaml"], config=Config(root=tmp_path), registry=REGISTRY,
                              select=["DST010"], cwd=tmp_path))
    return [(r.line, r.column, r.message) for r in report.active]


def test_the_fail_fixture_is_reported_at_its_expect_lines() -> None:
    path = REPO / "fixtures" / "rules" / "DST010" / "fail.yaml"
    lines = path.read_text("utf-8").splitlines()
    expected = [i + 2 for i, line in enumerate(lines) if line.strip() == "# expect: DST010"]
    report = lint(LintRequest(paths=[path], config=Config(), registry=REGISTRY, select=["DST010"], cwd=REPO))
    assert len(expected) == 4 and [r.line for r in report.active] == expected


def test_chief_beside_master_is_reported_at_the_second(tmp_path: Path) -> None:
    (found,) = run(tmp_path, tfjob(("Chief", 1), ("Worker", 2), ("Master", 1)))
    assert found[:2] == (12, 5)  # the `Master:` key
    assert found[2].startswith("`Master` beside `Chief`: a TFJob has at most one Chief or Master")


def test_two_chiefs_at_the_count(tmp_path: Path) -> None:
    (found,) = run(tmp_path, tfjob(("chief", 3), ("Worker", 2)))
    assert found[:2] == (7, 17)
    assert "runs 3 replicas; TensorFlow allows at most one 'chief' task" in found[2]


@pytest.mark.parametrize("replicas, fires", [
    ((("PS", 2),), True),                                 # parameter servers alone
    ((("PS", None), ("Worker", 0)), True),                # PS defaults to 1; the Worker is scaled away
    ((("ps", 1), ("worker", 1)), False),                  # any case of the names
    ((("PS", 2), ("Chief", None)), False),                # a Chief (replicas defaults to 1) trains
    ((("PS", 0), ("Evaluator", 1)), False),               # no parameter server runs
    ((("PS", 1), ("Worker", "${WORKERS}")), False),       # a count not known may be workers
    ((("Worker", 2), ("Evaluator", 1)), False),
    ((("Worker", 2), ("Evaluator", 2)), True),
    ((("Master", 2), ("Worker", 2)), False),              # a legacy master is not TensorFlow's chief
])
def test_layouts(tmp_path: Path, replicas, fires: bool) -> None:
    assert bool(run(tmp_path, tfjob(*replicas))) is fires


def test_ps_without_workers_message(tmp_path: Path) -> None:
    (found,) = run(tmp_path, tfjob(("PS", 2)))
    assert found[:2] == (6, 5)
    assert found[2].startswith("`PS` replicas without a Worker, Chief or Master: parameter servers only hold")


def test_other_groups_and_kinds_are_not_judged(tmp_path: Path) -> None:
    assert run(tmp_path, tfjob(("PS", 2)).replace("kubeflow.org/v1", "example.com/v1")) == []
