"""The pre-commit hook, installed the way users get it: `pre-commit try-repo` on this repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DIGEST = "b" * 64
# A hardened GPU training Job that passes every rule but GPU001 (its GPU limit is missing).
BAD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3@sha256:%s
        resources:
          requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
          limits: {cpu: "4", memory: 16Gi}
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
      securityContext: {runAsNonRoot: true, runAsUser: 1000}
      volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 4Gi}}]
""" % DIGEST
GOOD = BAD.replace("limits: {cpu: \"4\", memory: 16Gi}", "limits: {cpu: \"4\", memory: 16Gi, nvidia.com/gpu: 1}")
assert GOOD != BAD


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _try_repo(sample: Path, home: Path, *files: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "mlops-lint", "--files", *files]
    return subprocess.run(command, cwd=sample, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"})


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_hook_fails_on_violation_and_passes_when_clean(tmp_path: Path, pre_commit_home: Path) -> None:
    sample = tmp_path / "sample"
    sample.mkdir()
    _git(sample, "init", "-q")
    (sample / "job.yaml").write_text(BAD)
    (sample / "ok.yaml").write_text(GOOD.replace("name: train", "name: ok"))
    (sample / "README.md").write_text("sample\n")
    _git(sample, "add", ".")
    _git(sample, "commit", "-qm", "sample")

    failing = _try_repo(sample, pre_commit_home, "job.yaml", "README.md")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    # the request that has no matching limit, in flow style: line 12, column of `nvidia.com/gpu`
    assert "job.yaml:12:46: ERROR GPU001 gpu-limit-missing" in failing.stdout, failing.stdout

    passing = _try_repo(sample, pre_commit_home, "ok.yaml", "README.md")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
