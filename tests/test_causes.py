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


# ---------------------------------------------------------------------------------------------
# §3 NCCL rules only where NCCL is the backend

PYTORCHJOB = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: dist
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: myacr.azurecr.io/train:1.0
{command}
            env:
            - name: NCCL_DEBUG
              value: INFO
{env}
            resources:
              limits:
                nvidia.com/gpu: 1
"""
NCCL_RULES = ["DST003", "DST004", "DST005", "DST006"]


@pytest.mark.parametrize("command,env", [
    ('            args: ["--backend", "gloo"]', ""),
    ('            args: ["--backend=mpi"]', ""),
    ('            command: ["python", "train.py", "--dist-backend=gloo"]', ""),
    ('            command: ["torchrun", "train.py", "--dist_backend", "gloo"]', ""),
    ("            command: [\"python\", \"-c\", \"import torch.distributed as d; d.init_process_group(backend='gloo')\"]", ""),
    ('            command: ["sh", "-c", "python -c \\"import torch.distributed as d; d.init_process_group(\'gloo\')\\""]', ""),
    ("", "            - name: DIST_BACKEND\n              value: gloo"),
    ("", "            - name: BACKEND\n              value: mpi"),
])
def test_nccl_rules_skip_containers_that_choose_another_backend(command, env):
    assert rules(lint_text(PYTORCHJOB.format(command=command, env=env), select=NCCL_RULES)) == []


@pytest.mark.parametrize("command,env", [
    ("", ""),
    ('            args: ["--backend", "nccl"]', ""),
    ('            args: ["--backend", "cpu:gloo,cuda:nccl"]', ""),
    ("", "            - name: DIST_BACKEND\n              value: $(BACKEND)"),  # unknown: NCCL assumed
])
def test_nccl_rules_still_fire_where_nccl_may_be_the_backend(command, env):
    found = {rule for rule, _ in rules(lint_text(PYTORCHJOB.format(command=command, env=env), select=NCCL_RULES))}
    assert found == {"DST003", "DST004", "DST006"}


# ---------------------------------------------------------------------------------------------
# §3 GPU005 and XPL002 on the same toleration gap: the stronger one alone

GPU_POOL = """az aks nodepool add --resource-group rg --cluster-name aks --name gpunp \\
  --node-vm-size Standard_NC4as_T4_v3 --node-count 1 --labels accelerator=nvidia \\
  --node-taints sku=gpu:NoSchedule
"""
GPU_POD = """apiVersion: v1
kind: Pod
metadata:
  name: gpu
spec:
  nodeSelector: {accelerator: nvidia}
  containers:
  - name: c
    image: myacr.azurecr.io/c:1.0
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def test_a_toleration_gap_on_known_pools_is_xpl002_alone(tmp_path):
    found = lint_files(tmp_path, {"pool.sh": GPU_POOL, "pod.yaml": GPU_POD}, select=["GPU005", "XPL002"])
    assert [f.rule for f in found] == ["XPL002"]


def test_without_pools_gpu005_reports_the_gap(tmp_path):
    found = lint_files(tmp_path, {"pod.yaml": GPU_POD}, select=["GPU005", "XPL002"])
    assert [f.rule for f in found] == ["GPU005"]
