"""The result cache and the run's map-reduce: a warm run gives the cold run's bytes, whatever
changed in between is re-linted (and what depends on it), and a bad cache is only a miss.

Every test lints a copy of real fixtures in tmp_path through the CLI, once cold and once warm,
and compares the reports byte for byte with an uncached run.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main

REPO = Path(__file__).resolve().parents[1]


def lint(cwd: Path, *args: str) -> str:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, [*args, "--no-color", "--fail-on", "never"], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(REPO / "fixtures" / "violating", root)
    shutil.copytree(REPO / "fixtures" / "conforming", root / "conforming")
    (root / "suppressed.yaml").write_text(  # comments, annotations, and one that suppresses nothing
        "# mlops-lint: disable-file=OBS004\n"
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n"
        "  annotations: {mlops-lint.io/ignore: \"GPU001\"}\nspec:\n  containers:\n"
        "  - name: c\n    image: nvcr.io/nvidia/pytorch:24.05-py3  # mlops-lint: disable=IMG002 pinned by CI\n"
        "    resources: {requests: {nvidia.com/gpu: 1}}\n")
    return root


def cache_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("run-*.cache"))


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_warm_run_gives_the_cold_runs_bytes(project: Path, tmp_path: Path, fmt: str) -> None:
    cache = tmp_path / "cache"
    plain = lint(project, ".", "--format", fmt, "--no-cache", "--select", "ALL,LNT001")
    cold = lint(project, ".", "--format", fmt, "--cache-dir", str(cache), "--select", "ALL,LNT001")
    assert len(cache_files(cache)) == 1
    warm = lint(project, ".", "--format", fmt, "--cache-dir", str(cache), "--select", "ALL,LNT001")
    assert plain == cold == warm
    assert "LNT001" in plain and "OBS004" in plain  # the unused suppression
    if fmt == "text":
        assert "suppressed" in plain.splitlines()[-1]


def test_no_cache_writes_nothing(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "user-cache"
    monkeypatch.delenv("MLOPS_LINT_NO_CACHE")
    monkeypatch.setenv("MLOPS_LINT_CACHE_DIR", str(folder))
    lint(project, ".", "--no-cache")
    assert not folder.exists()
    lint(project, ".")  # on by default, in $MLOPS_LINT_CACHE_DIR
    assert len(cache_files(folder)) == 1
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_a_changed_file_is_relinted(project: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    lint(project, ".", "--cache-dir", cache)
    shm = project / "shm.yaml"
    shm.write_text(shm.read_text().replace("sizeLimit", "sizeLimitX", 1))
    assert lint(project, ".", "--cache-dir", cache) == lint(project, ".", "--no-cache")


def test_a_changed_reference_object_relints_the_files_that_look_it_up(tmp_path: Path) -> None:
    """A LimitRange in another file decides RES001 for a Pod: changing it changes the Pod's findings."""
    (tmp_path / "limits.yaml").write_text(
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: d, namespace: ml}\nspec:\n  limits:\n"
        "  - type: Container\n    defaultRequest: {cpu: 500m, memory: 1Gi}\n")
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n"
        "  - name: c\n    image: x@sha256:" + "a" * 64 + "\n")
    cache = str(tmp_path / "cache")
    before = lint(tmp_path, ".", "--select", "RES001", "--cache-dir", cache)
    assert "RES001" not in before
    (tmp_path / "limits.yaml").write_text((tmp_path / "limits.yaml").read_text().replace("ml}", "other}"))
    after = lint(tmp_path, ".", "--select", "RES001", "--cache-dir", cache)
    assert "pod.yaml:6:5: WARNING RES001" in after or "pod.yaml" in after and "RES001" in after
    assert after == lint(tmp_path, ".", "--select", "RES001", "--no-cache")


def test_project_rule_findings_follow_a_file_that_changed(tmp_path: Path) -> None:
    """STO003 (a PROJECT rule) reduces facts of every file: a second workload mounting a
    ReadWriteOnce claim appears in a new file and the finding follows, cached or not."""
    shutil.copytree(REPO / "fixtures" / "rules" / "STO003", tmp_path / "sto")
    cache = str(tmp_path / "cache")
    first = lint(tmp_path, ".", "--select", "STO003", "--cache-dir", cache)
    assert "STO003" in first
    for path in sorted((tmp_path / "sto").glob("fail*")):
        path.unlink()
    second = lint(tmp_path, ".", "--select", "STO003", "--cache-dir", cache)
    assert second == lint(tmp_path, ".", "--select", "STO003", "--no-cache")
    assert "STO003" not in second


def test_config_change_is_a_new_run_key(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    lint(project, ".", "--cache-dir", str(cache))
    config = project / ".mlops-lint.yaml"
    config.write_text(config.read_text() + "\nseverity: {IMG002: error}\n" if "severity" not in config.read_text()
                      else config.read_text().replace("severity:", "severity: {IMG002: error}\nxseverity:", 1))
    assert lint(project, ".", "--cache-dir", str(cache), "--no-cache") == lint(project, ".", "--cache-dir", str(cache))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "foreign"])
def test_a_damaged_cache_is_a_miss(project: Path, tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    expected = lint(project, ".", "--format", "json", "--cache-dir", str(cache))
    [file] = cache_files(cache)
    data = file.read_bytes()
    if damage == "truncate":
        file.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        file.write_bytes(os.urandom(4096))
    else:
        file.write_text(json.dumps({"format": 5, "key": "someone else's", "files": {}, "results": [], "project": None}))
    assert lint(project, ".", "--format", "json", "--cache-dir", str(cache)) == expected
    assert lint(project, ".", "--format", "json", "--cache-dir", str(cache)) == expected  # and rewritten


class _Planted:
    def __reduce__(self):
        return (os.system, ("touch PLANTED",))


def test_a_planted_cache_file_runs_no_code(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    expected = lint(project, ".", "--format", "json", "--cache-dir", str(cache))
    [file] = cache_files(cache)
    file.write_bytes(pickle.dumps({"format": 1, "key": file.stem.rsplit("-", 1)[1], "files": _Planted(), "project": None}))
    assert lint(project, ".", "--format", "json", "--cache-dir", str(cache)) == expected
    assert not (project / "PLANTED").exists() and not (Path.cwd() / "PLANTED").exists()


def test_an_unwritable_cache_folder_is_skipped(project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    assert lint(project, ".", "--cache-dir", str(blocker / "cache")) == lint(project, ".", "--no-cache")


def test_old_run_keys_are_pruned(project: Path, tmp_path: Path) -> None:
    from mlops_lint.cache import KEEP_RUNS

    cache = tmp_path / "cache"
    for n in range(KEEP_RUNS + 3):  # a different rule set each time: a different run key
        lint(project, ".", "--cache-dir", str(cache), "--select", f"RES00{n % 7 + 1},IMG00{n // 7 + 1}")
    assert len(cache_files(cache)) == KEEP_RUNS


def test_cached_parallel_and_serial_runs_agree(tmp_path: Path) -> None:
    """Cold at --jobs 2, warm at --jobs 1, a file changed and re-linted at --jobs 2: one output."""
    copies = tmp_path / "many"
    for index in range(4):
        shutil.copytree(REPO / "fixtures" / "violating", copies / f"copy{index}")
    (copies / ".mlops-lint.yaml").write_text((REPO / "fixtures" / "violating" / ".mlops-lint.yaml").read_text())
    cache = str(tmp_path / "cache")
    plain = lint(copies, ".", "--format", "json", "--jobs", "1", "--no-cache")
    assert len(list(copies.rglob("*"))) >= 48
    assert lint(copies, ".", "--format", "json", "--jobs", "2", "--cache-dir", cache) == plain
    assert lint(copies, ".", "--format", "json", "--jobs", "1", "--cache-dir", cache) == plain
    queues = copies / "copy2" / "queues.yaml"
    queues.write_text("# a line more: every position below moves\n" + queues.read_text())
    changed = lint(copies, ".", "--format", "json", "--jobs", "1", "--no-cache")
    assert changed != plain
    assert lint(copies, ".", "--format", "json", "--jobs", "2", "--cache-dir", cache) == changed
    assert json.loads(changed)["findings"]


def test_results_pickle_with_every_field() -> None:
    """Result, ObjectRef and Suppression pickle as calls with their fields (workers' outcomes: fast
    to load), every field there."""
    import pickle

    from mlops_lint.model.position import Span
    from mlops_lint.result import ObjectRef, Result, Suppression

    suppression = Suppression("inSource", "reviewed", "comment line 3")
    ref = ObjectRef("Job", "ml", "train")
    from mlops_lint.fix import Edit, Fix

    result = Result("GPU001", "gpu-limit-missing", "error", "message", "a.yaml", Span(1, 2, 3, 4), ref,
                    ("spec", 0), "the fix", (suppression,), None,
                    Fix("add it", (Edit("a.yaml", Span(1, 1, 1, 1), "x"),)))
    for value in (suppression, ref, result):
        assert len(value.__reduce__()[1]) == len(value.__struct_fields__)
        assert pickle.loads(pickle.dumps(value)) == value


def test_the_cache_columns_keep_every_field_of_a_result() -> None:
    """A field added to Result without its column would make every cached outcome fail to decode,
    so every warm run would silently lint again (as ``built_from`` did): every field, each set to
    a value other than its default, must read back as it was written."""
    from msgspec.structs import replace

    from mlops_lint.cache import _decode_results, _encode_results
    from mlops_lint.model.position import Span
    from mlops_lint.result import ObjectRef, Result, Suppression

    from mlops_lint.fix import Edit, Fix

    autofix = Fix("add `suspend: true`", (Edit("a.yaml", Span(3, 3, 3, 3), "suspend: true\n  "),
                                          Edit("a.yaml", Span(9, 1, 9, 4), "")), safe=False)
    result = Result("GPU001", "gpu-limit-missing", "error", "message", "a.yaml", Span(1, 2, 3, 4),
                    ObjectRef("Job", "ml", "train"), ("spec", 0), "the fix",
                    (Suppression("inSource", "reviewed", "comment line 3"),), "overlays/prod", autofix)
    defaults = Result("X", "x", "info", "", "b.yaml", Span(1, 1, 1, 2))
    assert all(getattr(result, name) != getattr(defaults, name) for name in Result.__struct_fields__
               if name not in ("span",))
    pairs = [(result, ("a.yaml", 0, ("spec",))), (defaults, None), (replace(defaults, autofix=autofix), None)]
    assert _decode_results(_encode_results(pairs)) == pairs


def test_a_warm_run_prints_multi_line_hints_without_pyyaml(project: Path, tmp_path: Path) -> None:
    """Each hint's line (a YAML snippet in flow style) is kept with the findings, so a warm run
    prints the cold run's bytes without importing PyYAML to render them again."""
    import subprocess
    import sys

    cache = tmp_path / "cache"
    run = [sys.executable, "-X", "importtime", "-m", "mlops_lint", ".", "--no-color", "--fail-on", "never",
           "--cache-dir", str(cache)]
    cold = subprocess.run(run, cwd=project, capture_output=True, text=True, timeout=300)
    warm = subprocess.run(run, cwd=project, capture_output=True, text=True, timeout=300)
    assert warm.stdout == cold.stdout and "fix: securityContext: {" in cold.stdout  # a multi-line hint, in flow style
    imported = {line.rsplit("|", 1)[1].strip() for line in warm.stderr.splitlines() if line.startswith("import time:")}
    assert "mlops_lint.report.text" in imported and "yaml" not in imported


def test_a_hint_line_the_terminal_would_act_on_makes_the_findings_a_miss() -> None:
    from mlops_lint.cache import Invalid, _decode_results, _encode_results
    from mlops_lint.model.position import Span
    from mlops_lint.report.text import fix_line
    from mlops_lint.result import Result

    result = Result("SEC001", "privilege-escalation-allowed", "warning", "m", "a.yaml", Span(1, 1, 1, 2),
                    fix="securityContext:\n  allowPrivilegeEscalation: false\n")
    data = _encode_results([(result, None)])
    assert data[-1] == [fix_line(result.fix)] == ["securityContext: {allowPrivilegeEscalation: false}"]
    assert _decode_results(data) == [(result, None)]
    data[-1] = ["\x1b]0;owned\x07"]
    with pytest.raises(Invalid):
        _decode_results(data)
    data[-1] = []  # a line short
    with pytest.raises(Invalid):
        _decode_results(data)


def test_resolved_fixes_read_back_by_column_and_a_damaged_column_is_a_miss() -> None:
    """Resolved fixes are kept as columns (titles, safe flags, edit counts, each edit's path, span
    and text): every fix reads back equal, edits in order and split per fix; any column of the
    wrong type or length is Invalid, never a fix built from the wrong edits."""
    import copy

    from mlops_lint.cache import Invalid, _decode_fixes, _encode_fixes
    from mlops_lint.fix import Edit, Fix
    from mlops_lint.model.position import Span

    fixes = [Fix("add it", (Edit("a.yaml", Span(1, 1, 1, 1), "x: 1\n"), Edit("a.yaml", Span(4, 2, 4, 9), "")),
                 safe=False),
             Fix("drop it", ()),
             Fix("set it", (Edit("b/c.yaml", Span(7, 3, 7, 5), "true"),))]
    data = _encode_fixes(fixes)
    assert data[2] == [2, 0, 1] and data[3] == ["a.yaml", "a.yaml", "b/c.yaml"]
    assert _decode_fixes(data) == fixes and _decode_fixes(_encode_fixes([])) == []
    damages = [
        lambda d: d[0].__setitem__(0, 1),  # a title that is no string
        lambda d: d[1].__setitem__(0, 0),  # a flag that is no bool
        lambda d: d[2].__setitem__(0, 3),  # counts that name more edits than there are
        lambda d: d[2].__setitem__(1, -1),  # a negative count
        lambda d: d[4].pop(),  # a span short
        lambda d: d[4].__setitem__(0, "1"),  # a line that is no integer
        lambda d: d[5].__setitem__(0, None),  # a text that is no string
        lambda d: d.pop(),  # a column short
    ]
    for damage in damages:
        broken = copy.deepcopy(data)
        damage(broken)
        with pytest.raises(Invalid):
            _decode_fixes(broken)
    with pytest.raises(Invalid):
        _encode_fixes([Fix("odd", (Edit("a.yaml", Span(1, 1, 1, 1 << 70), ""),))])
