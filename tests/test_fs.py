"""The file system as a pull request can shape it: link loops, links out of the tree, files
that cannot be read, files that vanish or turn into FIFOs between discovery and reading, odd
names, a PATH that is a file, a folder or neither, and ``.gitignore``.

Every case ends in findings or notes, never a traceback or a hang; runs that could hang are made
in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from invariants import check_report, lint_paths
from sandbox import run

from mlops_lint import discover
from mlops_lint.config import Config, load_config
from mlops_lint.registry import load_registry

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: c
    image: busybox:latest
"""


def pod(name: str = "p") -> str:
    return POD.format(name=name)


def statuses(report) -> dict[str, str]:
    return dict(report.file_status)


def by_rule(report, rule: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for result in report.results:
        if result.rule == rule:
            found.setdefault(result.path, []).append(result.message)
    return found


# -- links -----------------------------------------------------------------------------------


def test_symlink_loops_are_findings_not_crashes(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(pod())
    os.symlink("loop-b.yaml", tmp_path / "loop-a.yaml")
    os.symlink("loop-a.yaml", tmp_path / "loop-b.yaml")
    os.symlink("self.yaml", tmp_path / "self.yaml")
    os.symlink(".", tmp_path / "again")  # a folder linked to itself: never walked
    os.symlink(tmp_path, tmp_path / "up")
    report = lint_paths([tmp_path], tmp_path)
    errors = by_rule(report, "SCH001")
    assert set(errors) == {"loop-a.yaml", "loop-b.yaml", "self.yaml"}
    assert all(m == ["cannot read the file: Too many levels of symbolic links"] for m in errors.values())
    assert statuses(report)["good.yaml"] == "linted" and "IMG001" in {r.rule for r in report.results}
    # given by name, a looping link is the same finding (Python's Path.resolve raised RuntimeError here)
    report = lint_paths([tmp_path / "loop-a.yaml"], tmp_path)
    assert by_rule(report, "SCH001") == {"loop-a.yaml": ["cannot read the file: Too many levels of symbolic links"]}


def test_links_out_of_the_project_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(pod("outside"))
    project = tmp_path / "project"
    (project / "deploy").mkdir(parents=True)
    (project / "deploy" / "job.yaml").write_text(pod("inside"))
    os.symlink(outside / "secret.yaml", project / "deploy" / "link-out.yaml")
    os.symlink("../../outside/secret.yaml", project / "deploy" / "relative-out.yaml")
    os.symlink("job.yaml", project / "deploy" / "link-in.yaml")
    os.symlink(outside, project / "deploy" / "dir-out")
    for config in (Config(), None):  # without a config (the folder given is the project) and with one
        if config is None:
            (project / ".mlops-lint.yaml").write_text("fail-on: error\n")
            config = load_config(project / ".mlops-lint.yaml", load_registry())
        report = lint_paths([project / "deploy"], project, config)
        assert set(statuses(report)) == {"deploy/job.yaml", "deploy/link-in.yaml", "deploy/link-out.yaml",
                                         "deploy/relative-out.yaml"}
        assert statuses(report)["deploy/link-out.yaml"] == "skipped: link out of the project"
        assert statuses(report)["deploy/relative-out.yaml"] == "skipped: link out of the project"
        assert statuses(report)["deploy/link-in.yaml"] == "linted"  # inside: read, under its own name
        assert not [r for r in report.results if "outside" in r.message or "secret" in r.path]
        notes = {n.path: n.message for n in report.notes}
        assert notes["deploy/link-out.yaml"].startswith("not read: the link points outside the project (")
    # a link given by name is refused the same way (issue 32: the name may come from the tree, as
    # pre-commit passes it); a link inside the project is read under its own name
    report = lint_paths([project / "deploy" / "link-out.yaml", project / "deploy" / "link-in.yaml"], project)
    assert statuses(report) == {"deploy/link-out.yaml": "skipped: link out of the project",
                                "deploy/link-in.yaml": "linted"}
    assert {n.path: n.message for n in report.notes}["deploy/link-out.yaml"].startswith(
        "not read: the link points outside the project (")


def test_dangling_link_is_a_finding(tmp_path: Path) -> None:
    os.symlink("gone.yaml", tmp_path / "dangling.yaml")
    report = lint_paths([tmp_path], tmp_path)
    assert by_rule(report, "SCH001") == {"dangling.yaml": ["cannot read the file: No such file or directory"]}


# -- unreadable ------------------------------------------------------------------------------


def test_unreadable_file_is_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: opening the file fails with EACCES (what a chmod 000 file gives a non-root user)."""
    (tmp_path / "ok.yaml").write_text(pod("ok"))
    (tmp_path / "locked.yaml").write_text(pod("locked"))
    real_open = os.open

    def refusing_open(path, flags, *args, **kwargs):
        if os.fspath(path).endswith("locked.yaml"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    report = lint_paths([tmp_path], tmp_path)
    assert by_rule(report, "SCH001") == {"locked.yaml": ["cannot read the file: Permission denied"]}
    assert statuses(report) == {"locked.yaml": "parse error", "ok.yaml": "linted"}


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_unreadable_file_and_folder_for_real(tmp_path: Path) -> None:
    """chmod 000 for real. Root reads such files anyway (CAP_DAC_OVERRIDE), so as root the CLI runs
    with that capability (and CAP_DAC_READ_SEARCH) dropped from its bounding set."""
    (tmp_path / "ok.yaml").write_text(pod("ok"))
    (tmp_path / "locked.yaml").write_text(pod("locked"))
    (tmp_path / "sealed").mkdir()
    (tmp_path / "sealed" / "inner.yaml").write_text(pod("inner"))
    os.chmod(tmp_path / "locked.yaml", 0)
    os.chmod(tmp_path / "sealed", 0)
    try:
        as_root = os.geteuid() == 0
        try:
            outcome = run([".", "--format", "json", "--jobs", "1"], tmp_path, drop_dac=as_root)
        except (OSError, Exception) as exc:  # noqa: BLE001 - prctl refused (no CAP_SETPCAP in this container)
            if as_root:
                pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE: {exc}")
            raise
        report = json.loads(outcome.stdout)
        if as_root and not [f for f in report["findings"] if f["path"] == "locked.yaml" and f["rule"] == "SCH001"]:
            pytest.skip("running as root and the permission bits were not enforced")
        assert outcome.returncode == 1 and "Traceback" not in outcome.err
        (error,) = [f for f in report["findings"] if f["path"] == "locked.yaml"]
        assert error["message"] == "cannot read the file: Permission denied" and (error["line"], error["column"]) == (1, 1)
        assert {"path": "sealed", "message": "folder not read: Permission denied"} in report["notes"]
        assert any(f["path"] == "ok.yaml" for f in report["findings"])
    finally:
        os.chmod(tmp_path / "locked.yaml", 0o644)
        os.chmod(tmp_path / "sealed", 0o755)


# -- files that change under the run ---------------------------------------------------------


def _walk_then(action):
    real_walk = discover.walk

    def walk(*args, **kwargs):
        found = real_walk(*args, **kwargs)
        action()
        return found

    return walk


@pytest.mark.parametrize("jobs", [1, 2])
def test_file_vanishing_between_discovery_and_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """The hook runs right after discovery, before anything is read (in-process and with the
    forked workers of a parallel run, which needs 48 files or more)."""
    for index in range(60):
        (tmp_path / f"p{index:02d}.yaml").write_text(pod(f"p{index}"))
    (tmp_path / "limits.yaml").write_text("apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\nspec: {limits: []}\n")
    monkeypatch.setattr(discover, "walk", _walk_then(lambda: [(tmp_path / "p07.yaml").unlink(),
                                                              (tmp_path / "limits.yaml").unlink()]))
    report = lint_paths([tmp_path], tmp_path, jobs=jobs)
    errors = by_rule(report, "SCH001")
    assert errors == {"p07.yaml": ["cannot read the file: No such file or directory"],
                      "limits.yaml": ["cannot read the file: No such file or directory"]}
    assert sum(1 for s in statuses(report).values() if s == "linted") == 59


def test_file_replaced_by_a_fifo_after_discovery_does_not_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pipe.yaml").write_text(pod())
    (tmp_path / "ok.yaml").write_text(pod("ok"))

    def swap() -> None:
        (tmp_path / "pipe.yaml").unlink()
        os.mkfifo(tmp_path / "pipe.yaml")

    monkeypatch.setattr(discover, "walk", _walk_then(swap))
    report = lint_paths([tmp_path], tmp_path)  # opening a FIFO for reading would block forever
    assert by_rule(report, "SCH001") == {"pipe.yaml": ["not read: not a regular file"]}


def test_folder_vanishing_during_the_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "x.yaml").write_text(pod())
    (tmp_path / "ok.yaml").write_text(pod("ok"))
    real_scandir = os.scandir

    def scandir(path="."):
        if isinstance(path, (str, os.PathLike)) and os.fspath(path).endswith("gone"):
            shutil.rmtree(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report = lint_paths([tmp_path], tmp_path)
    assert statuses(report) == {"ok.yaml": "linted"}
    assert [(n.path, n.message) for n in report.notes] == [("gone", "folder not read: No such file or directory")]


def test_fifos_and_devices_are_never_opened(tmp_path: Path) -> None:
    """A FIFO named like a manifest, like a script, or with no suffix at all (sniffed for a shebang),
    in the tree and given by name, and a device given by name: skipped with a note, no hang."""
    (tmp_path / "ok.yaml").write_text(pod())
    for name in ("pipe.yaml", "pipe.sh", "runme", "Dockerfile"):
        os.mkfifo(tmp_path / name)
    outcome = run([".", "pipe.yaml", "runme", "/dev/zero", "--format", "json", "--jobs", "1"], tmp_path, timeout=60)
    assert outcome.returncode == 1 and "Traceback" not in outcome.err, outcome.err
    report = json.loads(outcome.stdout)
    skipped = {n["path"] for n in report["notes"] if n["message"] == "not read: not a regular file"}
    assert {"pipe.yaml", "pipe.sh", "Dockerfile", "runme", "/dev/zero"} <= skipped
    assert {f["path"] for f in report["findings"]} == {"ok.yaml"}


# -- names -----------------------------------------------------------------------------------

ODD_NAMES = ["with space.yaml", "模型 训练.yaml", "emoji-🚀.yaml", "comma,colon:percent%.yaml", "quote'\"s.yaml",
             "#hash&amp?.yaml", "new\nline.yaml", "tab\tname.yaml", "-dash.yaml", "back\\slash.yaml"]


def test_odd_file_names_in_every_format(tmp_path: Path) -> None:
    folder = tmp_path / "dir with spaces" / "ünï"
    folder.mkdir(parents=True)
    for name in ODD_NAMES:
        (folder / name).write_text(pod())
    raw = os.fsencode(folder) + b"/latin1-\xe9.yaml"  # a name that is not UTF-8
    with open(raw, "w") as handle:
        handle.write(pod())
    report = lint_paths([tmp_path], tmp_path)
    prefix = "dir with spaces/ünï/"
    expected = {prefix + n for n in ODD_NAMES} | {prefix + "latin1-\\xe9.yaml"}
    assert set(statuses(report)) == expected and set(statuses(report).values()) == {"linted"}
    files = {prefix + n: (folder / n).read_bytes() for n in ODD_NAMES}
    files[prefix + "latin1-\\xe9.yaml"] = pod().encode()
    rendered = check_report(report, files)  # JSON and SARIF valid, positions inside
    for text in rendered.values():
        text.encode("utf-8")  # no lone surrogates anywhere
    sarif = json.loads(rendered["sarif"])
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    latin1 = prefix + "latin1-\\xe9.yaml"  # SARIF names its bytes (issue 32 item 22): %E9, not the escape
    assert {unquote(u) for u in uris if not u.endswith("latin1-%E9.yaml")} == expected - {latin1}
    assert sum(u.endswith("latin1-%E9.yaml") for u in uris) == 1
    assert all(" " not in u and "\n" not in u and "#" not in u.split("/")[-1] for u in uris)
    github = rendered["github"].splitlines()
    assert len(github) == len([r for r in report.results if not r.suppressions])  # a newline in a name is escaped
    assert any("file=dir with spaces/ünï/comma%2Ccolon%3Apercent%25.yaml," in line for line in github)
    assert any("new%0Aline.yaml" in line for line in github)


def test_non_utf8_name_through_the_cli(tmp_path: Path) -> None:
    with open(os.fsencode(tmp_path) + b"/bad-\xff.yaml", "w") as handle:
        handle.write(pod())
    for fmt in ("text", "json", "sarif", "github"):
        outcome = run([".", "--format", fmt, "--jobs", "1"], tmp_path)
        assert outcome.returncode == 1 and "Traceback" not in outcome.err, outcome.err
        text = outcome.stdout.decode("utf-8")  # valid UTF-8
        if fmt == "json":
            assert {f["path"] for f in json.loads(text)["findings"]} == {"bad-\\xff.yaml"}
        elif fmt == "sarif":
            results = json.loads(text)["runs"][0]["results"]
            assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {"bad-%FF.yaml"}  # the name's own byte
        else:
            assert "bad-\\xff.yaml" in text


# -- PATH forms ------------------------------------------------------------------------------


def test_path_that_is_a_file_a_folder_a_link_or_missing(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "a.yaml").write_text(pod("a"))
    (tmp_path / "deploy" / "notes.txt").write_text(pod("txt"))
    (tmp_path / "deploy" / "README.md").write_text("# Title\n\nkey: [unclosed\n")
    os.symlink("deploy", tmp_path / "linked")
    # a folder: only lintable names; a file named with a suffix of no lintable kind: skipped with
    # a note, not read as YAML (issue 33 item 10)
    assert set(statuses(lint_paths([tmp_path / "deploy"], tmp_path))) == {"deploy/a.yaml"}
    for name in ("notes.txt", "README.md"):
        report = lint_paths([tmp_path / "deploy" / name], tmp_path)
        assert statuses(report) == {f"deploy/{name}": "skipped: name of no lintable kind"}
        assert not report.results
        assert [n.message.split(":")[0] for n in report.notes if n.path == f"deploy/{name}"] == ["not read"]
    # a link to a folder given by name is walked (as the folder it names)
    assert set(statuses(lint_paths([tmp_path / "linked"], tmp_path))) == {"deploy/a.yaml"}
    # the same file twice (by two spellings) is linted once
    report = lint_paths([tmp_path / "deploy", tmp_path / "deploy" / "a.yaml", tmp_path / "deploy" / ".." / "deploy"], tmp_path)
    assert statuses(report) == {"deploy/a.yaml": "linted"}
    assert sum(1 for r in report.results if r.rule == "IMG001") == 1
    missing = run(["nope.yaml"], tmp_path)
    assert missing.returncode == 2 and "path does not exist: nope.yaml" in missing.err


def test_empty_folder_and_folder_of_nothing_lintable(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("hi")
    for folder in ("empty", "docs"):
        outcome = run([folder, "--format", "sarif", "--jobs", "1"], tmp_path)
        assert outcome.returncode == 0 and json.loads(outcome.stdout)["runs"][0]["results"] == []


# -- .gitignore and skipped folders ----------------------------------------------------------


def test_gitignore_is_not_read_but_exclude_is(tmp_path: Path) -> None:
    """SPEC section 2 lists what is skipped (.git, node_modules, .venv, config ``exclude``), and
    .gitignore is not on it: in a CI gate a committed .gitignore must not hide a committed
    manifest (``git add -f`` tracks ignored files). ``exclude:`` is the way to skip folders."""
    (tmp_path / ".gitignore").write_text("rendered/\n*.tmp.yaml\n")
    (tmp_path / "rendered").mkdir()
    (tmp_path / "rendered" / "job.yaml").write_text(pod("rendered"))
    (tmp_path / "x.tmp.yaml").write_text(pod("tmp"))
    for skipped in (".git", "node_modules", ".venv"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "config.yaml").write_text(pod(skipped))
    report = lint_paths([tmp_path], tmp_path)
    assert set(statuses(report)) == {"rendered/job.yaml", "x.tmp.yaml"}
    (tmp_path / ".mlops-lint.yaml").write_text("exclude: [rendered/, '*.tmp.yaml']\n")
    config = load_config(tmp_path / ".mlops-lint.yaml", load_registry())
    report = lint_paths([tmp_path], tmp_path, config)
    assert "rendered/job.yaml" not in statuses(report) and "x.tmp.yaml" not in statuses(report)


def test_discovery_never_opens_what_it_does_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only regular files are opened, each once for a shebang sniff at most, and never for writing."""
    (tmp_path / "run").write_text("#!/bin/bash\naz aks update -g rg -n c\n")
    (tmp_path / "data.bin").write_bytes(b"\x00" * 10)
    os.mkfifo(tmp_path / "fifo")
    opened: list[tuple[str, int]] = []
    real_open = os.open

    def spy(path, flags, *args, **kwargs):
        opened.append((os.fspath(path), flags))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    found = discover.walk([tmp_path], root=None)
    assert [f.path.name for f in found.files] == ["run"]
    names = [Path(p).name for p, _ in opened]
    assert "fifo" not in names and "data.bin" not in names and names.count("run") == 1
    assert all(not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) for _, flags in opened)
    assert all(stat.S_ISREG(os.stat(p).st_mode) for p, _ in opened)


_PART = st.sampled_from(["a", "tmp", "x y", "ç", "..", ".", "b10k", "tmpx", "t"])


@settings(max_examples=300, deadline=None)
@given(path=st.lists(_PART, max_size=5),
                                cwd=st.lists(_PART, max_size=4),
                                slashes=st.sampled_from(["/", "//"]))
def test_display_paths_are_what_relative_to_gives(path: list[str], cwd: list[str], slashes: str) -> None:
    """The string shortcut of display_path gives pathlib's lexical answer for every pair."""
    from mlops_lint.engine import display_path

    target, base = Path(slashes + "/".join(path)), Path(slashes + "/".join(cwd))
    try:
        expected = target.relative_to(base).as_posix()
    except ValueError:
        expected = target.as_posix()
    assert display_path(target, base) == expected


def test_the_walk_takes_each_files_type_from_the_listing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regular files cost no system call of their own (their type comes with the folder's
    listing); links, FIFOs and names without a suffix are still looked at."""
    (tmp_path / "deploy").mkdir()
    for index in range(20):
        (tmp_path / "deploy" / f"m{index}.yaml").write_text("kind: ConfigMap\n")
    (tmp_path / "deploy" / "README.md").write_text("not lintable\n")
    (tmp_path / "deploy" / "build").write_text("#!/bin/sh\naz aks list\n")
    (tmp_path / "deploy" / "link.yaml").symlink_to(tmp_path / "deploy" / "m0.yaml")
    os.mkfifo(tmp_path / "deploy" / "pipe.yaml")
    looked: list[str] = []
    real_lstat, real_stat = os.lstat, os.stat
    monkeypatch.setattr(discover.os, "lstat", lambda p, *a, **k: looked.append(os.fspath(p)) or real_lstat(p, *a, **k))
    monkeypatch.setattr(discover.os, "stat", lambda p, *a, **k: looked.append(os.fspath(p)) or real_stat(p, *a, **k))
    found = discover.walk([tmp_path], root=tmp_path)
    names = sorted(f.path.name for f in found.files)
    assert names == sorted([*(f"m{i}.yaml" for i in range(20)), "build", "link.yaml"])
    assert [(p.name, why) for p, why in found.skipped] == [("pipe.yaml", "not a regular file")]
    assert [p for p in looked if os.path.basename(p).startswith("m") and not p.endswith("/m0.yaml")] == []  # m0: the link's target


def test_a_cache_folder_is_not_linted(tmp_path):
    """A folder holding CACHEDIR.TAG (the result cache writes one) is skipped: the cache's own JSON
    under the project would otherwise be a context file whose change invalidates every cached file."""
    from mlops_lint.discover import walk

    (tmp_path / "job.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    cache = tmp_path / ".cache" / "mlops-lint"
    cache.mkdir(parents=True)
    (cache / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    (cache / "run-0.1.0-abc.json").write_text("{}")
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "x.yaml").write_text("a: 1\n")
    found = sorted(f.path.relative_to(tmp_path).as_posix() for f in walk([tmp_path], root=None).files)
    assert found == ["inner/x.yaml", "job.yaml"]


# The project's context walk takes the folders the targets' walk listed from it (walk's reuse):
# every layout below must give the context walk the same files either way, whatever PATHs.
_LAYOUT = {
    "a/job.yaml": "kind: Job", "a/b/pvc.yaml": "kind: PersistentVolumeClaim", "a/b/notes.txt": "x",
    "venvish/pyvenv.cfg": "", "venvish/in-venv.yaml": "kind: Pod",
    "cache/CACHEDIR.TAG": "", "cache/cached.yaml": "kind: Pod",
    "chart/Chart.yaml": "name: c", "chart/templates/t.yaml": "kind: Pod", "chart/values.yaml": "a: 1",
    "skipped/x.yaml": "kind: Pod", "node_modules/m.yaml": "kind: Pod",
    "deep/er/est/d.yaml": "kind: Pod", "Dockerfile": "FROM python:3.12", "run.sh": "#!/bin/sh\nexit 0\n",
}
_PATHS = ["a", "a/b", "venvish", "cache", "chart", "chart/templates", "skipped", "node_modules", "deep/er",
          "deep", "a/job.yaml", "Dockerfile"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PATHS), min_size=1, max_size=4), st.booleans())
def test_the_context_walk_reusing_the_targets_walk_finds_the_same_files(tmp_path_factory, chosen, excludes) -> None:
    root = tmp_path_factory.mktemp("layout")
    for name, text in _LAYOUT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    exclude = ["skipped/", "deep/er/est/"] if excludes else []
    targets = discover.walk([root / p for p in chosen], root=root, exclude=exclude)
    fresh = discover.walk([root], root=root, exclude=exclude)
    reused = discover.walk([root], root=root, exclude=exclude, reuse=targets.walked)
    assert [(f.path, f.kind) for f in reused.files] == [(f.path, f.kind) for f in fresh.files]
    assert not any(key.endswith("venvish") for key in targets.walked)  # a walk from above skips it whole


def test_the_context_walk_does_not_list_the_targets_folders_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, text in _LAYOUT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    targets = discover.walk([tmp_path / "a", tmp_path / "deep"], root=tmp_path)
    listed: list[str] = []
    real = os.scandir
    monkeypatch.setattr(discover.os, "scandir", lambda path: (listed.append(os.fspath(path)), real(path))[1])
    context = discover.walk([tmp_path], root=tmp_path, reuse=targets.walked)
    assert os.fspath(tmp_path) in listed and os.fspath(tmp_path / "chart") in listed
    assert not [path for path in listed if path.startswith((os.fspath(tmp_path / "a"), os.fspath(tmp_path / "deep")))]
    assert {f.path for f in targets.files} < {f.path for f in context.files}


# -- testdata folders ------------------------------------------------------------------------


def _testdata_tree(root: Path) -> None:
    """A project whose test inputs sit in `testdata/` folders (Go's convention: kube-linter's
    violating fixtures, gpu-operator's internal/state/testdata/golden)."""
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "job.yaml").write_text(pod("deployed"))
    golden = root / "internal" / "state" / "testdata" / "golden"
    golden.mkdir(parents=True)
    (golden / "a.yaml").write_text(pod("golden-a"))
    (golden / "b.yaml").write_text(pod("golden-b"))
    (golden / "notes.md").write_text("not lintable, not counted")
    (root / "cli" / "testdata").mkdir(parents=True)
    (root / "cli" / "testdata" / "c.yaml").write_text(pod("cli"))


TESTDATA_NOTE = ("in 2 `testdata/` folders under it not linted (test inputs and outputs, never deployed); name a "
                 "folder on the command line to lint it, or set `lint-testdata: true` in the config")


def test_testdata_folders_are_skipped_with_a_note(tmp_path: Path) -> None:
    _testdata_tree(tmp_path)
    report = lint_paths([tmp_path], tmp_path)
    assert {path for path, status in statuses(report).items() if status == "linted"} == {"deploy/job.yaml"}
    assert {path: status for path, status in statuses(report).items() if status != "linted"} == {
        "cli/testdata/c.yaml": "skipped: test data (testdata/)",
        "internal/state/testdata/golden/a.yaml": "skipped: test data (testdata/)",
        "internal/state/testdata/golden/b.yaml": "skipped: test data (testdata/)"}
    assert [(n.path, n.message) for n in report.notes if "testdata" in n.message] == [(".", "3 files " + TESTDATA_NOTE)]
    # the same note on stdout and in the JSON report (nothing is silent)
    outcome = run([".", "--jobs", "1"], tmp_path)
    assert "note: .: 3 files " + TESTDATA_NOTE in outcome.stdout.decode()
    outcome = run([".", "--format", "json", "--jobs", "1"], tmp_path)
    assert {"path": ".", "message": "3 files " + TESTDATA_NOTE} in json.loads(outcome.stdout)["notes"]


def test_one_testdata_folder_is_named_in_the_note(tmp_path: Path) -> None:
    _testdata_tree(tmp_path)
    report = lint_paths([tmp_path / "internal"], tmp_path)
    assert [(n.path, n.message) for n in report.notes if "testdata" in n.message] == [
        ("internal/state/testdata", "2 files in this `testdata/` folder not linted (test inputs and outputs, never "
                                    "deployed); name a folder on the command line to lint it, or set "
                                    "`lint-testdata: true` in the config")]
    assert report.files_linted == 0 and report.nothing_linted  # said, and not a pass of nothing


def test_a_testdata_folder_or_file_named_on_the_command_line_is_linted(tmp_path: Path) -> None:
    _testdata_tree(tmp_path)
    for named, linted in (("internal/state/testdata", {"internal/state/testdata/golden/a.yaml",
                                                       "internal/state/testdata/golden/b.yaml"}),
                          ("internal/state/testdata/golden", {"internal/state/testdata/golden/a.yaml",
                                                              "internal/state/testdata/golden/b.yaml"}),
                          ("cli/testdata/c.yaml", {"cli/testdata/c.yaml"})):
        report = lint_paths([tmp_path / named], tmp_path)
        assert {p for p, status in statuses(report).items() if status == "linted"} == linted, named
        assert not [n for n in report.notes if "testdata" in n.message], named


def test_lint_testdata_in_the_config_lints_them(tmp_path: Path) -> None:
    _testdata_tree(tmp_path)
    (tmp_path / ".mlops-lint.yaml").write_text("lint-testdata: true\n")
    config = load_config(tmp_path / ".mlops-lint.yaml", load_registry())
    assert config.lint_testdata is True
    report = lint_paths([tmp_path], tmp_path, config)
    assert {p for p, status in statuses(report).items() if status == "linted"} == {
        "deploy/job.yaml", "cli/testdata/c.yaml", "internal/state/testdata/golden/a.yaml",
        "internal/state/testdata/golden/b.yaml"}
    assert not [n for n in report.notes if "testdata" in n.message]
    (tmp_path / ".mlops-lint.yaml").write_text("lint-testdata: yes please\n")
    outcome = run(["."], tmp_path)
    assert outcome.returncode == 2 and b".mlops-lint.yaml" in outcome.stderr and b"lint-testdata" in outcome.stderr


def test_an_excluded_testdata_file_is_not_counted(tmp_path: Path) -> None:
    _testdata_tree(tmp_path)
    (tmp_path / ".mlops-lint.yaml").write_text("exclude: ['cli/']\n")
    config = load_config(tmp_path / ".mlops-lint.yaml", load_registry())
    report = lint_paths([tmp_path], tmp_path, config)
    assert [n.message.split(" not linted")[0] for n in report.notes if "testdata" in n.message] == [
        "2 files in this `testdata/` folder"]
