"""QUE018 priorities-disagree: cases beyond the fixtures (fixtures/rules/QUE018/ holds the fail and pass files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

CLASSES = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: low
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: w-low
value: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: w-high
value: 100
"""


def job(name: str, workload_class: str, pod_class: str) -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels:
    kueue.x-k8s.io/queue-name: q
    kueue.x-k8s.io/priority-class: {workload_class}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      priorityClassName: {pod_class}
      containers:
      - name: c
        image: myacr.azurecr.io/c:1.0
"""


def run(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["QUE018"],
                              cwd=tmp_path))
    return [(Path(r.path).name, r.line, r.message) for r in report.active]


def test_the_workload_kueue_favours_is_reported_at_its_pod_class(tmp_path: Path) -> None:
    found = run(tmp_path, {"classes.yaml": CLASSES, "a.yaml": job("a", "w-high", "low"),
                           "b.yaml": job("b", "w-low", "high")})
    assert [(n, line) for n, line, _ in found] == [("a.yaml", 13)]
    assert "Job `default/a` (a.yaml:2) above Job `default/b` (b.yaml:2)" in found[0][2]
    assert "`w-high` (100) over `w-low` (1)" in found[0][2] and "`low` (10) is below the other's `high` (1000)" in found[0][2]


@pytest.mark.parametrize("a, b", [
    (("w-high", "high"), ("w-low", "low")),  # the same order
    (("w-high", "low"), ("w-high", "high")),  # equal Kueue priority
    (("w-high", "low"), ("w-low", "low")),  # equal pod priority
    (("w-high", "low"), ("w-low", "system-cluster-critical")),  # built-in classes are not ranked here
    (("w-high", "low"), ("w-missing", "high")),  # a class the project does not define
])
def test_near_misses(tmp_path: Path, a: tuple, b: tuple) -> None:
    assert run(tmp_path, {"classes.yaml": CLASSES, "a.yaml": job("a", *a), "b.yaml": job("b", *b)}) == []


def test_workloads_of_other_top_folders_are_not_compared(tmp_path: Path) -> None:
    files = {"repo-a/classes.yaml": CLASSES, "repo-a/a.yaml": job("a", "w-high", "low"),
             "repo-b/classes.yaml": CLASSES, "repo-b/b.yaml": job("b", "w-low", "high")}
    assert run(tmp_path, files) == []


def test_a_class_defined_twice_is_judged_by_every_reading(tmp_path: Path) -> None:
    """`low` is 10 in one file and 5000 in another (folder variants): nearest to `a` is its own folder's."""
    variant = CLASSES.replace("value: 10\n", "value: 5000\n")
    files = {"classes.yaml": CLASSES, "a.yaml": job("a", "w-high", "low"), "b.yaml": job("b", "w-low", "high"),
             "other/classes.yaml": variant}
    assert [(n, line) for n, line, _ in run(tmp_path, files)] == [("a.yaml", 13)]
    both = CLASSES + "---\n" + variant.split("---\n")[0]  # `low` twice beside the jobs: 10 and 5000
    assert run(tmp_path / "two", {"classes.yaml": both, "a.yaml": job("a", "w-high", "low"),
                                  "b.yaml": job("b", "w-low", "high")}) == []
