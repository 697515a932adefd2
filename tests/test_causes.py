"""Issue #16's root causes of wrong findings, one minimal reproduction each: every test here fails
if its cause comes back (placeholders judged as values, one object counted twice, scripts read in
file order, two findings for one cause, messages that say what is not true)."""

from __future__ import annotations

from pathlib import Path

import pytest

from linter.config import Config
from linter.engine import LintRequest, lint
from linter.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()


def lint_text(text: str, name: str = "job.yaml", select: list[str] | None = None):
    """Active findings of one file read from stdin as ``name``."""
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=select,
                              stdin=(name, text.encode()), cwd=REPO))
    return report.active


def lint_files(tmp_path: Path, files: dict[str, str], select: list[str] | None = None):
    """Active findings of a project of several files (a ``.mlops-lint.yaml`` makes it one root)."""
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=select, cwd=tmp_path))
    return report.active


def rules(findings) -> list[tuple[str, int]]:
    return sorted((f.rule, f.line) for f in findings)


POD = """apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: trainer
    image: {image}
"""


# ---------------------------------------------------------------------------------------------
# §4 Placeholders are not values


@pytest.mark.parametrize("image", ["<your-image>", "your-acr.azurecr.io/trainer", "REPLACE_ME", "IMG_PLACEHOLDER",
                                   "myacr.azurecr.io/<image>", "${IMAGE}", "{{ .Values.image }}", "[trainer|server]",
                                   "nvcr.io/nvidia/pytorch@sha256:…", "..."])
def test_placeholder_images_are_not_judged(image):
    assert rules(lint_text(POD.format(image=f'"{image}"'), select=["IMG001", "IMG002", "IMG003", "IMG004"])) == []


def test_a_real_image_is_still_judged():
    assert rules(lint_text(POD.format(image="pytorch/pytorch"), select=["IMG001", "IMG002"])) == [
        ("IMG001", 8), ("IMG002", 8)]


# ---------------------------------------------------------------------------------------------
# §3 One finding per cause

PRIVILEGED = """apiVersion: apps/v1
kind: {kind}
metadata:
  name: agent
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec:
      containers:
      - name: agent
        image: myacr.azurecr.io/agent:1.0
        securityContext:
          privileged: true
"""


@pytest.mark.parametrize("kind", ["Deployment", "DaemonSet"])
def test_privileged_is_sec004_alone(kind):
    found = lint_text(PRIVILEGED.format(kind=kind), select=["SEC001", "SEC002", "SEC004"])
    assert rules(found) == [("SEC004", 14)]


def test_sec004_advice_fits_the_container():
    workload = lint_text(PRIVILEGED.format(kind="Deployment"), select=["SEC004"])[0].message
    agent = lint_text(PRIVILEGED.format(kind="DaemonSet"), select=["SEC004"])[0].message
    assert "gets its GPUs from the device plugin" in workload and "node agent" not in workload
    assert "a node agent (device plugin, MIG manager, profiler, exporter)" in agent
    assert "request GPUs through the device plugin" not in agent


PLUGIN = """apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: kube-system
spec:
  selector: {matchLabels: {name: nvidia-device-plugin-ds}}
  template:
    metadata: {labels: {name: nvidia-device-plugin-ds}}
    spec:
      priorityClassName: system-node-critical
      tolerations:
      - operator: Exists
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
        securityContext:
          privileged: true
        volumeMounts:
        - {name: device-plugin, mountPath: /var/lib/kubelet/device-plugins}
      volumes:
      - name: device-plugin
        hostPath: {path: /var/lib/kubelet/device-plugins}
"""


def test_privileged_device_plugin_is_sec004_alone():
    found = lint_text(PLUGIN, select=["SEC001", "SEC002", "SEC004", "GPU010"])
    assert rules(found) == [("SEC004", 18)]


WINDOWS = """apiVersion: v1
kind: Pod
metadata:
  name: win
spec:
{placement}
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore:ltsc2022
"""


@pytest.mark.parametrize("placement", [
    "  os: {name: windows}",
    "  nodeSelector: {kubernetes.io/os: windows}",
    "  nodeSelector: {beta.kubernetes.io/os: windows}",
    "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
    "[{matchExpressions: [{key: kubernetes.io/os, operator: In, values: [windows]}]}]}}}",
])
def test_windows_pods_are_not_asked_linux_only_fields(placement):
    assert rules(lint_text(WINDOWS.format(placement=placement), select=["SEC001", "SEC002"])) == []


@pytest.mark.parametrize("placement", [
    "  nodeSelector: {kubernetes.io/os: linux}",
    "  os: {name: linux}\n  nodeSelector: {kubernetes.io/os: windows}",  # spec.os.name decides
    "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
    "[{matchExpressions: [{key: kubernetes.io/os, operator: In, values: [windows, linux]}]}]}}}",
])
def test_linux_pods_still_are(placement):
    assert [rule for rule, _ in rules(lint_text(WINDOWS.format(placement=placement), select=["SEC001", "SEC002"]))] == [
        "SEC001", "SEC002"]


# ---------------------------------------------------------------------------------------------
# §5 Messages that say what is true

GPU_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: myacr.azurecr.io/train:1.0
        command: ["torchrun", "train.py"]
        resources:
          limits:
            nvidia.com/gpu: 1
{more}"""


def test_res007_a_pod_with_only_gpu_limits_is_besteffort():
    [finding] = lint_text(GPU_JOB.format(more=""), select=["RES007"])
    assert "the pod is BestEffort" in finding.message and "Burstable" not in finding.message


def test_res007_a_cpu_request_makes_it_burstable():
    [finding] = lint_text(GPU_JOB.format(more="          requests:\n            cpu: 2\n"), select=["RES007"])
    assert "the pod is Burstable, not Guaranteed" in finding.message


def test_res007_a_zero_request_does_not_count():
    [finding] = lint_text(GPU_JOB.format(more="          requests:\n            cpu: 0\n"), select=["RES007"])
    assert "the pod is BestEffort" in finding.message
