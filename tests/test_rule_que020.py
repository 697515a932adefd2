"""QUE020 volcano-failure-policy-missing: cases beyond the fixtures (fixtures/rules/QUE020/ holds the
fail and pass files): the gang as Volcano sizes it, how a policy names its events, job and task
policies, positions and the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()

TASK = """  - replicas: {replicas}
    name: {name}
{extra}    template:
      spec:
        containers:
        - name: {name}
          image: myacr.azurecr.io/trainer:1.0.0
          resources: {{limits: {{{resource}: 1}}}}
"""


def job(spec: str = "  minAvailable: 2\n", tasks: tuple = ((2, "worker", ""),), resource: str = "nvidia.com/gpu") -> str:
    body = "".join(TASK.format(replicas=r, name=n, extra=e, resource=resource) for r, n, e in tasks)
    return ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: ddp, namespace: ml}\nspec:\n"
            f"  schedulerName: volcano\n{spec}  tasks:\n{body}")


def run(tmp_path: Path, text: str) -> list:
    (tmp_path / "job.yaml").write_text(text, "utf-8")
    report = lint(LintRequest(paths=[tmp_path / "job.yaml"], config=Config(root=tmp_path), registry=REGISTRY,
                              select=["QUE020"], cwd=tmp_path))
    return report.active


def test_the_fail_fixture_is_reported_at_its_expect_lines() -> None:
    path = REPO / "fixtures" / "rules" / "QUE020" / "fail.yaml"
    lines = path.read_text("utf-8").splitlines()
    expected = [i + 2 for i, line in enumerate(lines) if line.strip() == "# expect: QUE020"]
    report = lint(LintRequest(paths=[path], config=Config(), registry=REGISTRY, select=["QUE020"], cwd=REPO))
    assert len(expected) == 3 and [r.line for r in report.active] == expected


def test_no_policies_points_at_spec_and_names_both_events(tmp_path: Path) -> None:
    (result,) = run(tmp_path, job())
    assert (result.line, result.column) == (4, 1)
    assert result.message.startswith("Volcano Job `ddp` runs a gang of 2 GPU pods but `PodEvicted` and `PodFailed` "
                                     "have no lifecycle policy for the whole gang")


def test_one_event_missing_points_at_policies(tmp_path: Path) -> None:
    (result,) = run(tmp_path, job("  minAvailable: 2\n  policies:\n  - {event: PodFailed, action: RestartJob}\n"))
    assert (result.line, result.column) == (7, 3)
    assert "but `PodEvicted` has no lifecycle policy" in result.message


@pytest.mark.parametrize("policies", [
    "  - {event: PodEvicted, action: RestartJob}\n  - {event: PodFailed, action: RestartJob}\n",
    "  - {events: [PodEvicted, PodFailed], action: RestartJob}\n",
    "  - {event: '*', action: AbortJob}\n",
    "  - {events: ['*'], action: RestartJob}\n",
    "  - {event: PodEvicted, action: RestartJob}\n  - {exitCode: 1, action: RestartJob}\n",
])
def test_job_policies_that_handle_both_events(tmp_path: Path, policies: str) -> None:
    assert run(tmp_path, job(f"  minAvailable: 2\n  policies:\n{policies}")) == []


def test_task_policies_count_only_on_every_task(tmp_path: Path) -> None:
    both = "    policies:\n    - {events: [PodEvicted, PodFailed], action: RestartJob}\n"
    assert run(tmp_path, job("  minAvailable: 3\n", ((1, "master", both), (2, "worker", both)))) == []
    assert [r.rule for r in run(tmp_path, job("  minAvailable: 3\n", ((1, "master", both), (2, "worker", ""))))] \
        == ["QUE020"]
    # a task that runs no replica needs none
    assert run(tmp_path, job("  minAvailable: 2\n", ((2, "worker", both), (0, "spare", "")))) == []


@pytest.mark.parametrize("spec, tasks, fires", [
    ("", ((2, "worker", ""),), True),                               # minAvailable left out: every replica
    ("  minAvailable: 0\n", ((1, "a", ""), (1, "b", "")), True),    # 0: Volcano sets the sum
    ("", ((4, "worker", "    minAvailable: 1\n"),), False),         # the task's own minimum: a gang of one
    ("  minAvailable: 1\n", ((8, "trial", ""),), False),            # trials that need not run together
    ("", ((1, "trainer", ""),), False),
    ("  minAvailable: \"${GANG}\"\n", ((2, "worker", ""),), False),  # a placeholder
])
def test_the_gang_as_volcano_sizes_it(tmp_path: Path, spec: str, tasks: tuple, fires: bool) -> None:
    assert bool(run(tmp_path, job(spec, tasks))) is fires


def test_a_gang_without_gpus_is_not_judged(tmp_path: Path) -> None:
    assert run(tmp_path, job(resource="cpu")) == []
