"""custom-rules: the organisation's CEL rules in the config (ORG family), and export-policies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = """\
custom-rules:
  - id: ORG001
    name: training-priority-required
    severity: error
    description: Training Jobs in research use PriorityClass training-low.
    match: {kinds: [Job, PyTorchJob], namespaces: [research]}
    validations:
      - expression: "has(object.spec.template.spec.priorityClassName) && object.spec.template.spec.priorityClassName == 'training-low'"
        message: "training Jobs in research use PriorityClass training-low"
        fieldPath: ".spec.template.spec"
  - id: ORG002
    name: team-label
    severity: warning
    match: {kinds: [Job]}
    validations:
      - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
        messageExpression: "'Job ' + object.metadata.name + ' names no team'"
"""

JOBS = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: research
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: trainer, image: "python:3.12"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: ok
  namespace: research
  labels: {team: research}
spec:
  template:
    spec:
      priorityClassName: training-low
      restartPolicy: Never
      containers:
      - {name: trainer, image: "python:3.12"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: elsewhere
  namespace: sandbox
  labels: {team: sandbox}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: trainer, image: "python:3.12"}
"""


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mlops_lint", *args], cwd=cwd, capture_output=True, text=True)


def project(tmp_path: Path, config: str = CONFIG, jobs: str = JOBS) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / ".mlops-lint.yaml").write_text(config, encoding="utf-8")
    (tmp_path / "jobs.yaml").write_text(jobs, encoding="utf-8")
    return tmp_path


def findings(cwd: Path, *args: str) -> list[tuple[str, str, int, int, str]]:
    done = cli(cwd, "--no-cache", "--format", "json", *args)
    assert done.returncode in (0, 1), done.stderr
    return [(f["rule"], f["severity"], f["line"], f["column"], f["message"]) for f in json.loads(done.stdout)["findings"]
            if not f["suppressed"]]


def test_custom_rules_report_like_built_in_rules(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert findings(root, "--select", "ORG") == [
        ("ORG002", "warning", 2, 1, "Job train names no team"),
        ("ORG001", "error", 8, 5, "training Jobs in research use PriorityClass training-low"),
    ]
    assert [f[0] for f in findings(root, "--select", "ORG", "--ignore", "ORG002")] == ["ORG001"]
    assert [f[0] for f in findings(root)].count("ORG001") == 1  # ALL includes the custom rules


def test_custom_rules_take_severity_overrides_and_inline_suppressions(tmp_path: Path) -> None:
    jobs = JOBS.replace("  template:\n    spec:\n      restartPolicy", "  template:\n    spec:  # mlops-lint: disable=ORG001 "
                        "queued by the batch system\n      restartPolicy", 1)
    root = project(tmp_path, CONFIG + "severity: {ORG002: info}\n", jobs)
    assert [(f[0], f[1]) for f in findings(root, "--select", "ORG")] == [("ORG002", "info")]
    root2 = project(tmp_path / "by-slug", CONFIG, JOBS.replace("kind: Job\nmetadata:\n  name: train",
                                                                 "kind: Job  # mlops-lint: disable=team-label\n"
                                                                 "metadata:\n  name: train", 1))
    assert [f[0] for f in findings(root2, "--select", "ORG")] == ["ORG001"]


def test_an_expression_that_does_not_compile_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    root = project(tmp_path, CONFIG.replace("'team' in object.metadata.labels\"", "'team' in object.metadata.labels(\""))
    done = cli(root, "--no-cache", ".")
    assert done.returncode == 2
    assert ".mlops-lint.yaml:16:9:" in done.stderr and "does not compile" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_custom_rule_outside_the_org_family_is_refused_by_the_schema(tmp_path: Path) -> None:
    root = project(tmp_path, CONFIG.replace("id: ORG002", "id: GPU001"))
    done = cli(root, "--no-cache", ".")
    assert done.returncode == 2 and ".mlops-lint.yaml:" in done.stderr and "Traceback" not in done.stderr


def test_parallel_runs_agree(tmp_path: Path) -> None:
    root = project(tmp_path)
    for i in range(60):
        (root / f"job-{i}.yaml").write_text(JOBS.replace("name: train", f"name: train-{i}"), encoding="utf-8")
    serial = findings(root, "--select", "ORG", "--jobs", "1")
    assert findings(root, "--select", "ORG", "--jobs", "2") == serial and len(serial) == 122


def test_export_policies_is_valid_kubernetes_and_round_trips_through_adm001(tmp_path: Path) -> None:
    root = project(tmp_path)
    exported = cli(root, "export-policies")
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.count("kind: ValidatingAdmissionPolicy\n") == 2
    assert exported.stdout.count("kind: ValidatingAdmissionPolicyBinding\n") == 2
    custom = findings(root, "--select", "ORG")

    enforced = tmp_path / "enforced"
    enforced.mkdir()
    (enforced / "policies.yaml").write_text(exported.stdout, encoding="utf-8")
    (enforced / "jobs.yaml").write_text(JOBS + "---\n" + "".join(
        f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {n}}}\n---\n" for n in ("research", "sandbox")),
        encoding="utf-8")
    assert findings(enforced, "--select", "SCH002") == []  # what was exported is what the API server takes
    admitted = findings(enforced, "--select", "ADM001")
    assert sorted((f[1], f[4].rsplit(": ", 1)[-1]) for f in admitted) == sorted((f[1], f[4]) for f in custom)


def test_export_policies_without_custom_rules_says_so(tmp_path: Path) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text("fail-on: error\n", encoding="utf-8")
    done = cli(tmp_path, "export-policies")
    assert done.returncode == 2 and "no custom-rules to export" in done.stderr
