"""Every place mlops-lint opens a file for writing, or reads a cache entry, refuses to follow a
link (issue 32: "Every write and every cache read refuses links").

``test_every_write_site_is_known`` walks the source for calls that open a file for writing or
replace one (``open(..., "w")``, ``os.open``, ``write_text``, ``mkstemp``, ``os.replace`` ...) and
the cache reads (``read_entry``), and checks each stands in a function listed in ``SITES`` with
the test that plants a link there: a new write site fails until it is listed and tested. The
other tests plant the links.

Not covered here: the kustomize build cache (``linter/engine/kustomize.py``), whose link tests
are its owner's (tests for issue 32 items 03 and 04).
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
LINTER = REPO / "linter"

# (module, function) -> how it refuses links, and the test below that plants one
SITES = {
    ("linter/cachedata.py", "read_entry"): "O_NOFOLLOW|O_NONBLOCK, then fstat: test_a_cache_entry_is_never_read_through_a_link",
    ("linter/cachedata.py", "write_entry"): "mkstemp (O_EXCL|O_NOFOLLOW) renamed over the name: test_a_cache_entry_replaces_a_link",
    ("linter/cache.py", "Cache.open"): "read_entry: test_a_whole_cached_run_never_writes_through_links_planted_in_its_folder",
    ("linter/ruleindex.py", "read"): "read_entry: test_a_cache_entry_is_never_read_through_a_link",
    ("linter/cache.py", "_tag"): "O_CREAT|O_EXCL|O_NOFOLLOW: test_the_cache_tag_is_never_written_through_a_link",
    ("linter/config.py", "write_init"): "O_EXCL|O_NOFOLLOW, or mkstemp renamed over: test_init_never_writes_through_a_link",
    ("linter/output.py", "write_file"): "a link refused; O_NOFOLLOW for a device: test_reports_and_baselines_refuse_a_link",
    ("linter/output.py", "_replace"): "mkstemp renamed over a path write_file checked: test_reports_and_baselines_refuse_a_link",
    ("linter/output.py", "reader_gone"): "opens /dev/null, a name of the system's",
    ("linter/output.py", "stdout_closed"): "opens /dev/null and descriptor 1, the system's",
    ("linter/fix/run.py", "_write"): "O_NOFOLLOW, lstat, bounds: test_fix_refuses_links_to_files_and_folders",
    ("linter/fix/run.py", "_put_back"): "mkstemp renamed over the path _write checked: tests/test_hostile_writes.py",
    ("linter/discover.py", "read_head"): "reads only (O_RDONLY|O_NONBLOCK), fstat",
    ("linter/sources/files.py", "read_source"): "reads only (O_RDONLY|O_NONBLOCK), fstat",
    ("linter/docs.py", "main"): "writes the repository's own docs/rules (a developer's command), never the linted tree",
    ("linter/sources/helm.py", "_write_new"): "O_CREAT|O_EXCL|O_NOFOLLOW in _render_copy's own mkdtemp folder, names "
                                              "that leave it refused: test_the_helm_binary_copy_writes_only_new_files_in_its_own_folder",
    ("linter/sources/helm_sdk.py", "read_no_link"): "reads only (O_RDONLY|O_NOFOLLOW|O_NONBLOCK), fstat: a chart's "
                                                    "linked file is never given to Helm (tests/test_helm.py, .Files.Get)",
    # the kustomize build cache: h1's (issue 32 items 03, 04), tested there
    ("linter/engine/kustomize.py", "*"): "kustomize build cache and wrapper: see tests for issue 32 items 03, 04, 36",
}

WRITE_CALL = re.compile(
    r"""open\([^)]*['"](?:w|a|x|wb|ab|xb|w\+|r\+|a\+)['"]|os\.open\(|\.write_text\(|\.write_bytes\(|os\.replace\("""
    r"""|os\.rename\(|mkstemp\(|NamedTemporaryFile|shutil\.(?:copy|move)|os\.link\(|os\.symlink\(|read_entry\(""")


def _functions(tree: ast.AST) -> list[tuple[int, int, str]]:
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _sites() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(LINTER.rglob("*.py")):
        text = path.read_text("utf-8")
        if not WRITE_CALL.search(text):
            continue
        functions = _functions(ast.parse(text))
        module = path.relative_to(REPO).as_posix()
        for number, line in enumerate(text.splitlines(), 1):
            code = line.split("#", 1)[0]
            if not WRITE_CALL.search(code) or line.lstrip().startswith(("def ", '"', "'")):
                continue
            inner = [f for f in functions if f[0] <= number <= f[1]]
            name = min(inner, key=lambda f: f[1] - f[0])[2] if inner else "<module>"
            outer = name.split(".")[0] if "." in name and not name[0].isupper() else name
            found.setdefault((module, outer), []).append(number)
    return found


def test_every_write_site_is_known() -> None:
    found = _sites()
    unknown = {site: lines for site, lines in found.items()
               if site not in SITES and (site[0], "*") not in SITES}
    assert not unknown, ("a new place opens a file for writing or reads a cache entry: make it refuse links "
                         f"(O_NOFOLLOW, open-then-fstat), test that, and list it in SITES: {unknown}")
    assert ("linter/fix/run.py", "_write") in found and ("linter/output.py", "write_file") in found  # the walk works


def test_a_cache_entry_is_never_read_through_a_link(tmp_path: Path) -> None:
    from mlops_lint.cachedata import read_entry

    real = tmp_path / "real.cache"
    real.write_bytes(b'{"format": 11}')
    (tmp_path / "run-x.cache").symlink_to(real)
    assert read_entry(real, 1 << 20) == bytearray(b'{"format": 11}')  # the control
    assert read_entry(tmp_path / "run-x.cache", 1 << 20) is None
    (tmp_path / "fifo.cache").symlink_to("/dev/zero")
    assert read_entry(tmp_path / "fifo.cache", 1 << 20) is None


def test_a_cache_entry_replaces_a_link(tmp_path: Path) -> None:
    from mlops_lint.cachedata import write_entry

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "run-x.cache").symlink_to(victim)
    assert write_entry(folder, "run-x.cache", b"{}", "run-")
    assert victim.read_text() == "precious\n"
    assert not (folder / "run-x.cache").is_symlink() and (folder / "run-x.cache").read_bytes() == b"{}"


def test_the_cache_tag_is_never_written_through_a_link(tmp_path: Path) -> None:
    from mlops_lint.cache import _tag

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "CACHEDIR.TAG").symlink_to(victim)
    _tag(tmp_path)
    assert victim.read_text() == "precious\n"
    (tmp_path / "dangling").mkdir()
    (tmp_path / "dangling" / "CACHEDIR.TAG").symlink_to(tmp_path / "nowhere")
    _tag(tmp_path / "dangling")
    assert not (tmp_path / "nowhere").exists()


def test_a_whole_cached_run_never_writes_through_links_planted_in_its_folder(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import mlops_lint.cli
    from mlops_lint.cache import SUFFIX

    project = tmp_path / "p"
    project.mkdir()
    (project / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    cache = tmp_path / "cache"
    monkeypatch.chdir(project)
    args = ["check", "--cache-dir", str(cache), "."]
    first = CliRunner().invoke(mlops_lint.cli.main, args)
    assert first.exit_code == 0
    entries = [p for p in cache.rglob(f"*{SUFFIX}")]
    assert entries
    victim = tmp_path / "victim"
    victim.write_bytes(entries[0].read_bytes())  # a valid entry: read, it would be a hit
    for entry in entries:
        entry.unlink()
        entry.symlink_to(victim)
    again = CliRunner().invoke(mlops_lint.cli.main, [*args, "--format", "json"])
    assert again.exit_code == 0
    before = victim.read_bytes()
    CliRunner().invoke(mlops_lint.cli.main, args)
    assert victim.read_bytes() == before  # never written through, by either run


def test_init_never_writes_through_a_link(tmp_path: Path) -> None:
    from mlops_lint.config import write_init

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    project = tmp_path / "p"
    project.mkdir()
    (project / ".mlops-lint.yaml").symlink_to(victim)
    write_init(project, force=True)
    assert victim.read_text() == "precious\n"
    assert not (project / ".mlops-lint.yaml").is_symlink()


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_reports_and_baselines_refuse_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str) -> None:
    import mlops_lint.cli

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    project = tmp_path / "p"
    (project / "out").mkdir(parents=True)
    (project / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (project / "out" / "file.json").symlink_to(victim)
    monkeypatch.chdir(project)
    result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", ".", option, "out/file.json"])
    assert victim.read_text() == "precious\n"
    assert result.exit_code == 2
    assert "cannot write out/file.json: it is a symbolic link" in result.stderr
    (project / "out" / "file.json").unlink()  # the control: a plain path is written
    result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", ".", option, "out/file.json"])
    assert result.exit_code == 0 and (project / "out" / "file.json").is_file()


def test_fix_refuses_links_to_files_and_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mlops_lint.cli

    job = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n"
           "      restartPolicy: Never\n      containers:\n      - name: a\n        image: x/y:1\n"
           "        resources:\n          requests: {nvidia.com/gpu: 1}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "job.yaml").write_text(job)
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / "d").symlink_to(outside)
    (project / "link.yaml").symlink_to(outside / "job.yaml")
    monkeypatch.chdir(project)
    result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", "--fix", "d/job.yaml", "link.yaml", "."])
    assert (outside / "job.yaml").read_text() == job
    assert (project / "link.yaml").is_symlink()
    assert "Fixed" not in result.stdout


def test_the_helm_binary_copy_writes_only_new_files_in_its_own_folder(tmp_path: Path) -> None:
    """`--fix` with the `helm` binary renders a temporary copy of the chart (linter.sources.helm
    ._render_copy): each file is created new in the copy's own folder (O_EXCL, O_NOFOLLOW), never
    through a link or over a file, and a name that would leave the copy is refused."""
    from types import SimpleNamespace

    from mlops_lint.sources import helm

    target = tmp_path / "target"
    target.write_text("keep\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    for path in (link, target):
        with pytest.raises(FileExistsError):
            helm._write_new(str(path), b"pwned\n")
    assert target.read_text() == "keep\n"
    helm._write_new(str(tmp_path / "new.yaml"), b"a: 1\n")
    assert (tmp_path / "new.yaml").read_bytes() == b"a: 1\n"
    escape = tmp_path / "escaped.yaml"
    for name in ("../../escaped.yaml", "templates/../../../escaped.yaml", "/abs.yaml"):
        prepared = SimpleNamespace(plan=SimpleNamespace(folder=str(tmp_path / "chart")),
                                   files=SimpleNamespace(files=[("Chart.yaml", b"name: c\n"), (name, b"x: 1\n")]),
                                   todo=[0], specs=[{"values": []}])
        [answer] = helm._render_copy(prepared, "/nonexistent/helm", 5.0)
        assert "could not copy the chart" in answer["error"] and name in answer["error"]
    assert not escape.exists()
