"""QUE019 kueue-integration-disabled: cases beyond the fixtures (fixtures/rules/QUE019/ holds the
fail and pass files: a Configuration inside a ConfigMap, one of its own without `integrations`,
and one that enables every queued kind)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()


def results(path: Path, cwd: Path = REPO, config=None):
    report = lint(LintRequest(paths=[path], config=config, registry=REGISTRY, select=["QUE019"], cwd=cwd))
    return [r for r in report.active if r.rule == "QUE019"]


def findings(path: Path, cwd: Path = REPO) -> list[tuple[int, str]]:
    return [(r.line, r.rule) for r in results(path, cwd, Config())]


@pytest.mark.parametrize("name", ["fail.yaml", "fail-defaults.yaml"])
def test_the_fail_fixtures_are_reported_at_their_expect_lines(name: str) -> None:
    folder = REPO / "fixtures" / "rules" / "QUE019"
    lines = (folder / name).read_text("utf-8").splitlines()
    expected = [(i + 2, "QUE019") for i, line in enumerate(lines) if line.strip() == "# expect: QUE019"]
    got = [(r.line, r.rule) for r in results(folder, REPO, Config()) if Path(r.path).name == name]
    assert expected and got == expected


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


CONFIG = """
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
integrations:
  frameworks:
  FRAMEWORKS
"""
CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: kueue-manager-config
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    integrations:
      frameworks:
      - "batch/job"
"""
PYTORCHJOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: team-a-queue
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: myacr.azurecr.io/train:1.0.0}]
"""


def _config(*frameworks: str) -> str:
    return CONFIG.replace("FRAMEWORKS", "\n  ".join(f'- "{f}"' for f in frameworks))


def test_the_finding_names_the_framework_and_the_configuration(tmp_path: Path) -> None:
    _write(tmp_path, {".mlops-lint.yaml": "{}\n", "kueue/manager.yaml": CONFIGMAP, "jobs/train.yaml": PYTORCHJOB})
    [result] = results(tmp_path, tmp_path)
    assert (Path(result.path).name, result.line, result.column) == ("train.yaml", 7, 32)
    assert "`kubeflow.org/pytorchjob` integration is not enabled" in result.message
    # the line of `frameworks:` inside the ConfigMap's literal block
    assert "kueue/manager.yaml:10) enables `batch/job`" in result.message
    assert result.severity == "error"


def test_no_configuration_no_verdict(tmp_path: Path) -> None:
    _write(tmp_path, {".mlops-lint.yaml": "{}\n", "jobs/train.yaml": PYTORCHJOB})
    assert results(tmp_path, tmp_path) == []


def test_enabled_by_name_or_as_an_external_framework(tmp_path: Path) -> None:
    _write(tmp_path, {".mlops-lint.yaml": "{}\n", "kueue.yaml": _config("batch/job", "kubeflow.org/pytorchjob"),
                      "jobs/train.yaml": PYTORCHJOB})
    assert results(tmp_path, tmp_path) == []
    external = _config("batch/job") + '  externalFrameworks:\n  - "PyTorchJob.v1.kubeflow.org"\n'
    _write(tmp_path, {"kueue.yaml": external})
    assert results(tmp_path, tmp_path) == []


def test_every_nearest_configuration_must_leave_it_out(tmp_path: Path) -> None:
    # two setups in other folders: one enables PyTorchJobs, so the sample may be meant for it
    _write(tmp_path, {".mlops-lint.yaml": "{}\n", "e2e/a/config.yaml": _config("batch/job"),
                      "e2e/b/config.yaml": _config("batch/job", "kubeflow.org/pytorchjob"),
                      "samples/train.yaml": PYTORCHJOB})
    assert results(tmp_path, tmp_path) == []
    # a Configuration beside the workload is the nearest: it alone decides
    _write(tmp_path, {"samples/config.yaml": _config("batch/job")})
    assert [Path(r.path).name for r in results(tmp_path, tmp_path)] == ["train.yaml"]


def test_templated_frameworks_are_not_judged(tmp_path: Path) -> None:
    _write(tmp_path, {".mlops-lint.yaml": "{}\n", "kueue.yaml": _config("{{ .Values.framework }}"),
                      "jobs/train.yaml": PYTORCHJOB})
    assert results(tmp_path, tmp_path) == []


@pytest.mark.parametrize("marker, fires", [(None, False), (".mlops-lint.yaml", True)])
def test_repositories_side_by_side(tmp_path: Path, marker: str | None, fires: bool) -> None:
    # a folder of unrelated repositories: one repository's Configuration does not govern another's jobs
    corpus = tmp_path / "corpus"
    _write(corpus, {"kueue/config/manager.yaml": _config("batch/job"), "trainer/examples/train.yaml": PYTORCHJOB})
    if marker:
        (corpus / marker).write_text("{}\n", "utf-8")
    assert bool(results(corpus, tmp_path)) is fires


ONE_CAUSE = """
apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta1
    kind: Configuration
    integrations:
      frameworks:
      - "batch/job"FRAMEWORK
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: cpu-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: cpu-flavor, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: default}
spec:
  levels: [{nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: team-queue, namespace: team-a}
spec: {clusterQueue: team-cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: kueue-high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: kueue-low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: pod-high}
value: 1000
preemptionPolicy: Never  # (QUE012 would judge pod-low preemptible by it, whatever Kueue does)
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: pod-low}
value: 10
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: unsuspended
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: no-such-queue, kueue.x-k8s.io/priority-class: kueue-high}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          priorityClassName: pod-low
          containers:
          - name: pytorch
            image: myacr.azurecr.io/bert-train:1.0
            command: [torchrun, train.py]
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: too-big
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: team-queue, kueue.x-k8s.io/priority-class: kueue-low}
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-zone
        spec:
          priorityClassName: pod-high
          containers:
          - name: pytorch
            image: myacr.azurecr.io/bert-train:1.0
            command: [torchrun, train.py]
            resources: {limits: {cpu: "8", nvidia.com/gpu: 1}}
"""
JOB_QUEUE_RULES = ["QUE001", "QUE002", "QUE005", "QUE006", "QUE012", "QUE017", "QUE018"]


def test_a_kind_kueue_does_not_manage_gets_only_the_integration_finding(tmp_path: Path) -> None:
    """One cause, one finding: a PyTorchJob whose integration the Configuration leaves out is not
    managed by Kueue, so the rules that judge what Kueue does with a queued job (QUE001 suspension,
    QUE002 its LocalQueue, QUE005 and QUE006 its ClusterQueue's quota, QUE012 Kueue's preemption,
    QUE017 Kueue's topology annotations, QUE018 Kueue's workload priority) leave it to QUE019. With the integration enabled each
    of them judges the same jobs (before, they did so in both cases)."""
    def rules(framework: str) -> list[tuple[str, int]]:
        _write(tmp_path, {"all.yaml": ONE_CAUSE.replace("FRAMEWORK", framework)})
        report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY,
                                  select=[*JOB_QUEUE_RULES, "QUE019"], cwd=tmp_path))
        return sorted({(r.rule, r.line) for r in report.active if r.rule.startswith("QUE")})

    assert rules("") == [("QUE019", 62), ("QUE019", 80)]  # each PyTorchJob's queue-name
    enabled = rules('\n      - "kubeflow.org/pytorchjob"')
    assert sorted({rule for rule, _ in enabled}) == JOB_QUEUE_RULES
