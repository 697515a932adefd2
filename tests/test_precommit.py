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


def _try_repo(sample: Path, home: Path, *files: str, hook: str = "mlops-lint") -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--files", *files]
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


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_fix_hook_repairs_the_file_and_fails_the_commit_until_the_fix_is_staged(
        tmp_path: Path, pre_commit_home: Path) -> None:
    sample = tmp_path / "sample"
    sample.mkdir()
    _git(sample, "init", "-q")
    (sample / "job.yaml").write_text(BAD)
    _git(sample, "add", ".")
    _git(sample, "commit", "-qm", "sample")

    fixing = _try_repo(sample, pre_commit_home, "job.yaml", hook="mlops-lint-fix")
    assert fixing.returncode == 1, fixing.stdout + fixing.stderr  # pre-commit: the hook changed a file
    assert "files were modified by this hook" in fixing.stdout, fixing.stdout
    assert (sample / "job.yaml").read_text() == BAD.replace(
        'limits: {cpu: "4", memory: 16Gi}', 'limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}')
    _git(sample, "add", ".")
    again = _try_repo(sample, pre_commit_home, "job.yaml", hook="mlops-lint-fix")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout


def _readme_block(heading: str, language: str) -> str:
    section = (REPO / "README.md").read_text().split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    return section.split(f"```{language}\n", 1)[1].split("```", 1)[0]


README_URL = "https://github.com/mlops-lint/mlops-lint"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_readme_snippet_as_written_then_autoupdate_and_the_hook_skips_what_a_full_run_skips(
        tmp_path: Path, pre_commit_home: Path) -> None:
    """The README's snippet, with its repository URL pointing at this clone: `pre-commit
    autoupdate` pins a commit in place of `rev: main`, and the hook, given every staged file by
    name, passes where `mlops-lint .` passes (chart templates, templates, excluded files, files
    that only look like Dockerfiles, JSON that is no manifest, tool folders)."""
    snippet = _readme_block("In pre-commit", "yaml")
    assert f"repo: {README_URL}" in snippet and "rev: main" in snippet and "pre-commit autoupdate" in snippet
    sample = tmp_path / "sample"
    sample.mkdir()
    _git(sample, "init", "-q")
    (sample / ".pre-commit-config.yaml").write_text(snippet.replace(README_URL, str(REPO)))
    (sample / ".mlops-lint.yaml").write_text('exclude: ["vendor/"]\n')
    traps = {
        "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
        "chart/templates/job.yaml": "{{- if .Values.on }}\napiVersion: batch/v1\nkind: Job\n{{- end }}\n",
        "vendor/job.yaml": BAD,
        "deploy/job.yaml.j2": BAD,
        "docs/Dockerfile.md": "# The image\n\nFROM python:latest\n",
        "Dockerfile.j2": "FROM {{ base }}\n",
        ".vscode/settings.json": '{\n  // editor settings\n  "editor.tabSize": 2,\n}\n',
        "tsconfig.json": '{\n  /* comments */\n  "compilerOptions": {"strict": true,},\n}\n',
        "deploy/ok.yaml": GOOD,
    }
    for name, content in traps.items():
        (sample / name).parent.mkdir(parents=True, exist_ok=True)
        (sample / name).write_text(content)
    _git(sample, "add", ".")
    _git(sample, "commit", "-qm", "sample")
    env = {**os.environ, "PRE_COMMIT_HOME": str(pre_commit_home), "PRE_COMMIT_COLOR": "never"}
    update = subprocess.run([sys.executable, "-m", "pre_commit", "autoupdate"], cwd=sample, capture_output=True,
                            text=True, timeout=300, env=env)
    assert update.returncode == 0, update.stdout + update.stderr
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    assert f"rev: {head}" in (sample / ".pre-commit-config.yaml").read_text()
    full = subprocess.run([sys.executable, "-m", "mlops_lint", "."], cwd=sample, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert full.returncode == 0, full.stdout + full.stderr
    hook = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=sample,
                          capture_output=True, text=True, timeout=900, env=env)
    assert hook.returncode == 0 and "mlops-lint" in hook.stdout and "Passed" in hook.stdout, hook.stdout + hook.stderr
    # the hook is no rubber stamp: a violation staged in the same repository fails it
    (sample / "deploy" / "bad.yaml").write_text(BAD.replace("name: train", "name: bad"))
    _git(sample, "add", ".")
    failing = subprocess.run([sys.executable, "-m", "pre_commit", "run"], cwd=sample, capture_output=True, text=True,
                             timeout=900, env=env)
    assert failing.returncode == 1 and "deploy/bad.yaml:12:46: ERROR GPU001" in failing.stdout, failing.stdout


def test_readme_ci_install_line_installs_this_repository(tmp_path: Path) -> None:
    """The CI snippet's install line, with the README's repository URL pointing at this clone,
    resolves to this project (pip's dry run, nothing installed, nothing downloaded)."""
    workflow = _readme_block("In CI (GitHub code scanning)", "yaml")
    (line,) = [line.strip() for line in workflow.splitlines() if "pip install" in line]
    assert line == f'- run: pip install "git+{README_URL}@main"', line
    spec = line.split('"')[1].replace(f"git+{README_URL}", f"git+file://{REPO}")
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index",
                           "--no-build-isolation", "--quiet", "--report", str(report), spec],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    import json

    (installed,) = json.loads(report.read_text())["install"]
    assert installed["metadata"]["name"] == "mlops-lint"
    assert installed["download_info"]["vcs_info"]["requested_revision"] == "main"
