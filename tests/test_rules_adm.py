"""ADM001: the project's ValidatingAdmissionPolicies evaluated against its objects."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.vap import plural
from mlops_lint.registry import load_registry

REGISTRY = load_registry()

POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: gpu-limits
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["batch"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["jobs"]
  validations:
  - expression: "object.spec.template.spec.containers.all(c, !has(c.resources.requests) || !('nvidia.com/gpu' in c.resources.requests) || (has(c.resources.limits) && 'nvidia.com/gpu' in c.resources.limits))"
    message: GPU containers must set nvidia.com/gpu in limits
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: gpu-limits
spec:
  policyName: gpu-limits
  validationActions: [{action}]
{match}---
apiVersion: v1
kind: Namespace
metadata:
  name: research
  labels: {{team: research}}
---
apiVersion: v1
kind: Namespace
metadata:
  name: sandbox
  labels: {{team: sandbox}}
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: {namespace}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests:
            nvidia.com/gpu: 1
{limits}"""


def run(tmp_path: Path, *, action: str = "Deny", match: str = "", namespace: str = "research", limits: str = "",
        jobs: int = 1) -> list[tuple[str, str, int, int, str]]:
    (tmp_path / "policy.yaml").write_text(POLICY.format(action=action, match=match), encoding="utf-8")
    (tmp_path / "job.yaml").write_text(JOB.format(namespace=namespace, limits=limits), encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["ADM001"],
                              cwd=tmp_path, jobs=jobs))
    return [(r.rule, r.severity, r.line, r.column, r.message) for r in report.active]


@pytest.mark.parametrize("action,severity,verb", [("Deny", "error", "denies"), ("Warn", "warning", "warns about"),
                                                  ("Audit", "info", "audits")])
def test_validation_actions_map_to_severities(tmp_path: Path, action: str, severity: str, verb: str) -> None:
    assert run(tmp_path, action=action) == [(
        "ADM001", severity, 2, 1,
        f"ValidatingAdmissionPolicy `gpu-limits` (policy.yaml:2, bound by `gpu-limits`) {verb} Job `research/train`: "
        "GPU containers must set nvidia.com/gpu in limits")]


def test_a_job_that_keeps_the_policy_is_silent(tmp_path: Path) -> None:
    assert run(tmp_path, limits="          limits:\n            nvidia.com/gpu: 1\n") == []


SELECT_RESEARCH = "  matchResources:\n    namespaceSelector:\n      matchLabels: {team: research}\n"


def test_a_namespace_selector_that_excludes_the_job_keeps_it_silent(tmp_path: Path) -> None:
    assert [f[0] for f in run(tmp_path, match=SELECT_RESEARCH, namespace="research")] == ["ADM001"]
    assert run(tmp_path, match=SELECT_RESEARCH, namespace="sandbox") == []


def test_a_selector_on_labels_of_a_namespace_the_project_does_not_define_is_not_guessed(tmp_path: Path) -> None:
    assert run(tmp_path, match=SELECT_RESEARCH, namespace="elsewhere") == []
    by_name = "  matchResources:\n    namespaceSelector:\n      matchLabels: {kubernetes.io/metadata.name: elsewhere}\n"
    assert [f[0] for f in run(tmp_path, match=by_name, namespace="elsewhere")] == ["ADM001"]


def test_parallel_and_serial_runs_agree(tmp_path: Path) -> None:
    assert run(tmp_path, jobs=2) == run(tmp_path, jobs=1) != []


def test_a_hostile_policy_expression_is_bounded(tmp_path: Path) -> None:
    hostile = POLICY.replace(
        "  - expression: \"object.spec",
        "  - expression: \"object.metadata.name.split('').all(a, object.metadata.name.split('').all(b, "
        "object.metadata.name.split('').all(c, a + b + c != 'zzz')))\"\n    message: blow-up\n"
        "  - expression: \"object.spec")
    (tmp_path / "policy.yaml").write_text(hostile.format(action="Deny", match=""), encoding="utf-8")
    (tmp_path / "job.yaml").write_text(JOB.format(namespace="research", limits="").replace("name: train",
                                       "name: " + "t" * 250, 1), encoding="utf-8")
    started = time.perf_counter()
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["ADM001"],
                              cwd=tmp_path))
    assert time.perf_counter() - started < 10
    assert [r.message.rsplit(": ", 1)[-1] for r in report.active] == ["GPU containers must set nvidia.com/gpu in limits"]


def test_plural_follows_kubernetes_default_pluralisation() -> None:
    assert [plural(k) for k in ("Job", "NetworkPolicy", "Ingress", "Endpoints", "PyTorchJob", "Gateway")] == [
        "jobs", "networkpolicies", "ingresses", "endpoints", "pytorchjobs", "gateways"]


OPTIONAL_VALIDATION = ("  - expression: \"object.spec.?template.?spec.?priorityClassName.orValue('') != ''\"\n"
                       "    message: set a PriorityClass\n")
OPTIONAL_VARIABLE = ("  variables:\n"
                     "  - name: priority\n"
                     "    expression: \"object.spec.template.spec.?priorityClassName.orValue('')\"\n")


def _lint_policy(tmp_path: Path, policy: str) -> list[tuple[str, str, str, int, int, str]]:
    (tmp_path / "policy.yaml").write_text(policy, encoding="utf-8")
    (tmp_path / "job.yaml").write_text(JOB.format(namespace="research", limits=""), encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["ADM001"],
                              cwd=tmp_path, jobs=1))
    return [(r.rule, r.severity, Path(r.path).name, r.line, r.column, r.message) for r in report.active]


def test_a_validation_the_engine_cannot_compile_is_one_info_at_the_policy_and_never_a_denial(tmp_path: Path) -> None:
    # Kubernetes' optional syntax `object.?field` (in its CEL environment since 1.29) is not in the engine
    policy = POLICY.format(action="Deny", match="").replace("  validations:\n", "  validations:\n" + OPTIONAL_VALIDATION)
    assert _lint_policy(tmp_path, policy) == [
        # the validation that compiles still judges the Job
        ("ADM001", "error", "job.yaml", 2, 1,
         "ValidatingAdmissionPolicy `gpu-limits` (policy.yaml:2, bound by `gpu-limits`) denies Job `research/train`: "
         "GPU containers must set nvidia.com/gpu in limits"),
        ("ADM001", "info", "policy.yaml", 2, 1,
         "ValidatingAdmissionPolicy `gpu-limits`: validations[0].expression `object.spec.?template.?spec."
         "?priorityClassName.orValue('') != ''` is not checked: the CEL engine cannot compile it (ERROR: <input>:1:12: "
         "unsupported syntax '.?'); the objects it binds are judged without those expressions"),
    ]


def test_a_variable_the_engine_cannot_compile_leaves_the_policys_objects_unjudged_and_says_so(tmp_path: Path) -> None:
    policy = POLICY.format(action="Deny", match="").replace("  validations:\n", OPTIONAL_VARIABLE + "  validations:\n")
    assert _lint_policy(tmp_path, policy) == [
        ("ADM001", "info", "policy.yaml", 2, 1,
         "ValidatingAdmissionPolicy `gpu-limits`: variables[0].expression `object.spec.template.spec."
         "?priorityClassName.orValue('')` is not checked: the CEL engine cannot compile it (ERROR: <input>:1:26: "
         "unsupported syntax '.?'); its objects are not judged"),
    ]


KYVERNO_POLICY = """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: gpu-limits
spec:
  validationActions: [{action}]
  matchConstraints:
    resourceRules:
    - apiGroups: ["batch"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["jobs"]
{extra}  validations:
  - expression: "object.spec.template.spec.containers.all(c, !has(c.resources.requests) || !('nvidia.com/gpu' in c.resources.requests) || (has(c.resources.limits) && 'nvidia.com/gpu' in c.resources.limits))"
    message: GPU containers must set nvidia.com/gpu in limits
"""


def _lint_kyverno(tmp_path: Path, *, action: str = "Deny", extra: str = "", limits: str = "") -> list[tuple]:
    (tmp_path / "policy.yaml").write_text(KYVERNO_POLICY.format(action=action, extra=extra), encoding="utf-8")
    (tmp_path / "job.yaml").write_text(JOB.format(namespace="research", limits=limits), encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["ADM001"],
                              cwd=tmp_path, jobs=1))
    return [(r.severity, Path(r.path).name, r.line, r.column, r.message) for r in report.active]


@pytest.mark.parametrize("action,severity,verb", [("Deny", "error", "denies"), ("Warn", "warning", "warns about"),
                                                  ("Audit", "info", "audits")])
def test_a_kyverno_validating_policy_is_evaluated_like_a_vap(tmp_path: Path, action: str, severity: str,
                                                             verb: str) -> None:
    assert _lint_kyverno(tmp_path, action=action) == [
        (severity, "job.yaml", 2, 1, f"Kyverno ValidatingPolicy `gpu-limits` (policy.yaml:2) {verb} Job `research/train`: "
                                     "GPU containers must set nvidia.com/gpu in limits")]
    assert _lint_kyverno(tmp_path, limits="          limits:\n            nvidia.com/gpu: 1\n") == []


def test_a_kyverno_policy_that_admission_does_not_evaluate_or_that_matches_elsewhere_is_silent(tmp_path: Path) -> None:
    assert _lint_kyverno(tmp_path, extra="  evaluation:\n    admission:\n      enabled: false\n") == []
    assert _lint_kyverno(tmp_path, extra="  matchConditions:\n  - name: elsewhere\n"
                                         "    expression: \"object.metadata.namespace == 'sandbox'\"\n") == []


def test_a_kyverno_expression_reading_kyvernos_own_libraries_is_not_checked_and_says_so(tmp_path: Path) -> None:
    # resource.Get (Kyverno's resource library) is not in the engine: never a denial, one info at the policy
    extra = ("  variables:\n  - name: quota\n"
             "    expression: \"resource.Get('v1', 'configmaps', 'research', 'gpu-quota').data.max\"\n")
    assert _lint_kyverno(tmp_path, extra=extra) == [
        ("info", "policy.yaml", 2, 1, "Kyverno ValidatingPolicy `gpu-limits`: variables[0].expression "
                                      "`resource.Get('v1', 'configmaps', 'research', 'gpu-quota').data.max` is not "
                                      "checked: it calls Kyverno's `resource` library, which the engine does not "
                                      "have; its objects are not judged")]
