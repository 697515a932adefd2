"""Hostile trees against what mlops-lint writes (issue 32, ``../shared/repros/hostile/`` 12, 13,
15, 16, 17, 19, 20, 21, 33): ``--fix`` never writes outside the project, into a tool folder, over
a read-only file or over an edit saved meanwhile, and never changes a value through an alias or
a block scalar at the end of a file; ``-o`` never writes through a committed link and writes a
standard stream in place (appended to a log, down a pipe)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: a
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {nvidia.com/gpu: 1}
          limits: {cpu: "1"}
"""
FIXED_LIMITS = 'limits: {cpu: "1", nvidia.com/gpu: 1}'
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree (its top is the project root), the working folder."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def check(*args: str) -> tuple[int, str]:
    import mlops_lint.cli

    result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", "--no-color", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def test_the_job_is_fixed_where_nothing_forbids_it(repo: Path) -> None:
    """The control for the refusals below: the same file, written normally, is fixed."""
    (repo / "job.yaml").write_text(JOB)
    check("--fix", "job.yaml")
    assert FIXED_LIMITS in (repo / "job.yaml").read_text()


# -- 12: a named file reached through a linked folder out of the project


@pytest.mark.parametrize("named", ["d/job.yaml", "d", "d/"])
def test_fix_never_writes_through_a_linked_folder_out_of_the_project(repo: Path, named: str) -> None:
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "job.yaml").write_text(JOB)
    (repo / "d").symlink_to("../outside")
    code, out = check("--fix", named)
    assert (outside / "job.yaml").read_text() == JOB
    assert "not fixed: it is outside the project (reached through a link), which --fix never writes" in out
    assert "Fixed" not in out


def test_a_linked_folder_inside_the_project_is_fixed_as_its_target(repo: Path) -> None:
    (repo / "real").mkdir()
    (repo / "real" / "job.yaml").write_text(JOB)
    (repo / "d").symlink_to("real")
    check("--fix", "d/job.yaml")
    assert FIXED_LIMITS in (repo / "real" / "job.yaml").read_text()


# -- 17: tool folders, also when named


@pytest.mark.parametrize("named", [".git", ".git/x", ".git/x/job.yaml", "node_modules/x/job.yaml"])
def test_fix_never_writes_into_a_tool_folder_even_when_named(repo: Path, named: str) -> None:
    for folder in (repo / ".git" / "x", repo / "node_modules" / "x"):
        folder.mkdir(parents=True)
        (folder / "job.yaml").write_text(JOB)
    code, out = check("--fix", named)
    assert (repo / ".git" / "x" / "job.yaml").read_text() == JOB
    assert (repo / "node_modules" / "x" / "job.yaml").read_text() == JOB
    assert "GPU001" not in out  # not even linted: the walk from the top never enters them


def test_the_fix_writer_refuses_a_tool_folder_on_its_own(repo: Path) -> None:
    """The writer's own check, whatever discovery gave it."""
    from mlops_lint.fix.run import _unwritable

    (repo / ".git" / "x").mkdir()
    (repo / ".git" / "x" / "job.yaml").write_text(JOB)
    (repo / "venv2").mkdir()
    (repo / "venv2" / "pyvenv.cfg").write_text("home = /usr\n")
    (repo / "venv2" / "job.yaml").write_text(JOB)
    (repo / "job.yaml").write_text(JOB)
    bounds = (os.path.realpath(repo),)
    assert _unwritable(str(repo / ".git" / "x" / "job.yaml"), bounds) == \
        "it is in a tool folder (.git/), which --fix never writes"
    assert _unwritable(str(repo / "venv2" / "job.yaml"), bounds) == \
        "it is in a virtual environment, which --fix never writes"
    assert _unwritable(str(repo / "job.yaml"), bounds) is None


# -- 15: a read-only file


def test_fix_leaves_a_read_only_file_alone_and_says_so(repo: Path) -> None:
    job = repo / "job.yaml"
    job.write_text(JOB)
    job.chmod(0o444)
    code, out = check("--fix", "job.yaml")
    assert job.read_text() == JOB
    assert oct(job.stat().st_mode & 0o777) == "0o444"
    assert "note: job.yaml: not fixed: it is read-only (mode -r--r--r--), which --fix respects" in out
    assert "Fixed" not in out


# -- 16: an edit saved while --fix writes


EDIT = "# saved by the editor\n"


def test_an_edit_saved_while_the_fix_is_written_is_kept(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor saves as soon as the temporary file appears (what the repro's race does)."""
    import tempfile

    job = repo / "job.yaml"
    job.write_text(JOB)
    real = tempfile.mkstemp

    def mkstemp_then_edit(*args, **kwargs):
        made = real(*args, **kwargs)
        if str(kwargs.get("suffix", "")).endswith(".mlops-lint-fix"):
            with open(job, "a") as handle:
                handle.write(EDIT)
        return made

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp_then_edit)
    code, out = check("--fix", "job.yaml")
    assert job.read_text() == JOB + EDIT
    assert "not fixed: the file changed while it was being fixed; it was left as it is now" in out
    assert not [p for p in repo.iterdir() if p.name.endswith(".mlops-lint-fix")]


def test_an_edit_saved_at_the_instant_of_the_rename_is_put_back(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = repo / "job.yaml"
    job.write_text(JOB)
    real = os.replace

    def edit_then_replace(source, target, *args, **kwargs):
        if str(source).endswith(".mlops-lint-fix") and not (repo / "edited").exists():
            (repo / "edited").write_text("")
            with open(job, "a") as handle:
                handle.write(EDIT)
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", edit_then_replace)
    code, out = check("--fix", "job.yaml")
    assert job.read_text() == JOB + EDIT
    assert "not fixed: the file changed while it was being fixed" in out


# -- 19, 20, 21: -o


def test_report_is_never_written_through_a_committed_link(repo: Path) -> None:
    home = repo.parent / "home"
    home.mkdir()
    (home / ".bashrc").write_text("export PATH=$HOME/bin:$PATH  # precious\n")
    (repo / "reports").mkdir()
    (repo / "reports" / "mlops-lint.sarif").symlink_to("../../home/.bashrc")
    (repo / "cm.yaml").write_text(CM)
    import mlops_lint.cli

    result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", ".", "--format", "sarif", "-o",
                                                  "reports/mlops-lint.sarif"])
    assert (home / ".bashrc").read_text() == "export PATH=$HOME/bin:$PATH  # precious\n"
    assert (repo / "reports" / "mlops-lint.sarif").is_symlink()
    assert result.exit_code == 2
    assert ("cannot write reports/mlops-lint.sarif: it is a symbolic link (to ../../home/.bashrc), which is never "
            "written through nor replaced") in result.stderr


def test_write_file_refuses_a_link_to_a_stream_committed_in_the_tree(tmp_path: Path) -> None:
    from mlops_lint.output import OutputError, write_file

    (tmp_path / "out.json").symlink_to("/dev/stdout")
    with pytest.raises(OutputError, match="is a symbolic link"):
        write_file(tmp_path / "out.json", "{}")


def _run(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mlops_lint", *args], cwd=cwd, **kwargs)


@pytest.mark.parametrize("name", ["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"])
def test_output_to_stdout_appended_to_a_log_appends(repo: Path, name: str) -> None:
    if not os.path.exists(name):
        pytest.skip(f"{name} does not exist here")
    (repo / "cm.yaml").write_text(CM)
    log = repo.parent / "ci.log"
    log.write_text("earlier build step output\n")
    with open(log, "a") as handle:
        done = _run(["check", ".", "--no-cache", "--format", "json", "-o", name], repo, stdout=handle,
                    stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    text = log.read_text()
    assert text.startswith("earlier build step output\n{\n")
    assert '"findings": []' in text
    assert log.is_file() and not log.is_symlink()


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/stderr"])
def test_output_to_a_standard_stream_that_is_a_pipe(repo: Path, name: str) -> None:
    (repo / "cm.yaml").write_text(CM)
    done = _run(["check", ".", "--no-cache", "--format", "json", "-o", name], repo, capture_output=True)
    assert done.returncode == 0, done.stderr
    stream = done.stdout if name == "/dev/stdout" else done.stderr
    assert stream.startswith(b"{\n") and b'"findings": []' in stream


def test_output_to_a_fifo_is_written_in_place(repo: Path) -> None:
    import threading

    (repo / "cm.yaml").write_text(CM)
    fifo = repo.parent / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    done = _run(["check", ".", "--no-cache", "--format", "json", "-o", str(fifo)], repo, capture_output=True,
                timeout=120)
    reader.join(30)
    assert done.returncode == 0, done.stderr
    assert got and got[0].startswith(b"{\n")
    assert fifo.exists() and not fifo.is_file()  # still the FIFO, not a file renamed over it


# -- 13: an anchored node shared through aliases


ALIASED = """apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: a
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
          limits: &lim {cpu: "4", memory: 16Gi}
      - name: b
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {cpu: "4", memory: 16Gi}
          limits: *lim
"""


def _containers(path: Path) -> list[dict]:
    return yaml.safe_load(path.read_text())["spec"]["template"]["spec"]["containers"]


@pytest.mark.parametrize("layout", ["flow", "block"])
def test_a_fix_never_edits_an_anchor_other_paths_alias(repo: Path, layout: str) -> None:
    text = ALIASED
    if layout == "block":
        text = text.replace('limits: &lim {cpu: "4", memory: 16Gi}', 'limits: &lim\n            cpu: "4"\n            memory: 16Gi')
    job = repo / "job.yaml"
    job.write_text(text)
    code, out = check("--fix", "--unsafe-fixes", "job.yaml")
    containers = _containers(job)
    assert "nvidia.com/gpu" not in containers[1]["resources"]["requests"]
    assert "nvidia.com/gpu" not in containers[1]["resources"]["limits"]
    assert sum(int(c["resources"]["requests"].get("nvidia.com/gpu", 0)) for c in containers) == 1
    code, out = check("job.yaml", "--select", "GPU001")
    assert "GPU001" in out and "[*]" not in out  # reported, with no fix that would edit the anchor


def test_an_anchor_no_alias_names_is_fixed(repo: Path) -> None:
    job = repo / "job.yaml"
    job.write_text(ALIASED.replace("limits: *lim", 'limits: {cpu: "4", memory: 16Gi}'))
    check("--fix", "job.yaml", "--select", "GPU001")
    assert 'limits: &lim {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}' in job.read_text()


# -- 33: a block scalar the file ends in, without a final line break

EOF_JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
          limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
        env:
        - name: NCCL_SOCKET_IFNAME
          value: HEADER
            eth0"""


@pytest.mark.parametrize("header, written", [("|", "|-"), ("|+", "|-"), ("|-", "|-"), (">", ">-"), ("|2", "|2-"),
                                             ("|+2", "|2-"), ("&v |", "&v |-"), ("| # why", "|- # why")])
def test_a_block_scalar_the_file_ends_in_keeps_its_value(repo: Path, header: str, written: str) -> None:
    job = repo / "job.yaml"
    job.write_text(EOF_JOB.replace("HEADER", header))
    before = _containers(job)[0]["env"][0]["value"]
    code, out = check("--fix", "job.yaml")
    after = job.read_text()
    assert _containers(job)[0]["env"][0]["value"] == before == "eth0"
    assert f"value: {written}\n" in after
    assert "tolerations" in after  # the fix was applied, after the scalar
    assert check("--fix", "job.yaml")[1].count("Fixed") == 0  # a second --fix changes nothing


# -- issue 33 item 2: the fix invariant, in the engine itself


def test_the_engine_drops_a_fix_that_changes_data_it_does_not_target(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the resolver's own guards off (as a new rule's bug would leave them), both defects
    reach the engine, which drops the fix with a note and writes nothing it did."""
    import mlops_lint.fix.resolve as resolve

    monkeypatch.setattr(resolve._Resolver, "keep_last_block_scalar", lambda self: None)
    monkeypatch.setattr(resolve, "_shared_nodes", lambda text: ())
    eof = repo / "eof.yaml"
    eof.write_text(EOF_JOB.replace("HEADER", "|"))
    aliased = repo / "aliased.yaml"
    aliased.write_text(ALIASED)
    code, out = check("--fix", "eof.yaml", "aliased.yaml")
    assert _containers(eof)[0]["env"][0]["value"] == "eth0"
    assert eof.read_text() == EOF_JOB.replace("HEADER", "|")  # the only fix here was the dropped one
    assert re.search(r"note: eof\.yaml: not applied: the fix of [A-Z]+[0-9]+ \(.+\) would change "
                     r"spec\.template\.spec\.containers\[0\]\.env\[0\]\.value, which it does not target "
                     r"\(please report this\)", out)
    containers = _containers(aliased)
    assert "nvidia.com/gpu" not in containers[1]["resources"]["limits"]
    assert ("note: aliased.yaml: not applied: the fix of GPU001 (add `limits: nvidia.com/gpu: 1` (equal to the "
            "request)) would change spec.template.spec.containers[1].resources.limits, which it does not target") in out


def test_the_invariant_names_the_path_an_edit_changes_outside_its_target() -> None:
    from mlops_lint.fix import Edit
    from mlops_lint.fix.apply import apply_edits, edit_regions
    from mlops_lint.fix.invariant import unexpected_change
    from mlops_lint.model.position import Span

    def change(text: str, line: int, col: int, end_line: int, end_col: int, new: str) -> str | None:
        edits = [Edit("x", Span(line, col, end_line, end_col), new)]
        return unexpected_change(text, apply_edits(text, edits), edit_regions(text, edits))

    assert change("a: {p: 1}\nb: {p: 1}\n", 1, 9, 1, 9, ", q: 2") is None  # a new key
    assert change("a: &x {p: 1}\nb: *x\n", 1, 12, 1, 12, ", q: 2") == "b"  # through the alias
    assert change("a: {p: 1}\n", 1, 8, 1, 8, ", q: 2") == "a.p"  # text inserted inside a value
    assert change("a:\n  x: [1]\nb:\n", 2, 8, 2, 8, ", 2") is None  # an item appended
    assert change("a:\n  x: 1\nb:\n", 3, 3, 3, 3, "\n  c: [ALL]") is None  # a null filled
    assert change("a:\n  x: 1\n", 2, 6, 2, 7, "2") is None  # the scalar the edit replaces
    assert change("a: |\n  x", 2, 4, 2, 4, "\nb: 1") == "a"  # a block scalar gains a line break
    assert change("a: |-\n  x", 2, 4, 2, 4, "\nb: 1") is None
    assert change("a: 1\n---\nb: 2\n", 1, 5, 1, 5, "\nc: 3\n---\nd: 4") == "the number of documents (2 before, 3 after)"
    assert change("a: 1\n---\nb: &x {q: 1}\nc: *x\n", 3, 12, 3, 12, ", r: 2") == "document 2: c"


def test_report_is_never_written_through_a_committed_folder_link(repo: Path) -> None:
    elsewhere = repo.parent / "autostart"
    elsewhere.mkdir()
    (repo / "reports").symlink_to(elsewhere)
    (repo / "cm.yaml").write_text(CM)
    import mlops_lint.cli

    result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", ".", "-o", "reports/mlops-lint.sarif"])
    assert result.exit_code == 2
    assert list(elsewhere.iterdir()) == []
    assert ("cannot write reports/mlops-lint.sarif: the folder reports is a symbolic link (to "
            f"{elsewhere}), which is never written through") in result.stderr
