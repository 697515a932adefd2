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


@pytest.mark.parametrize("damage", ["truncate", "garbage", "foreign", "format 11", "format 11 columns"])
def test_a_damaged_cache_is_a_miss(project: Path, tmp_path: Path, damage: str) -> None:
    from mlops_lint.cache import FORMAT, Cache

    cache = tmp_path / "cache"
    expected = lint(project, ".", "--format", "json", "--cache-dir", str(cache))
    [file] = cache_files(cache)
    data = file.read_bytes()
    if damage == "truncate":
        file.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        file.write_bytes(os.urandom(4096))
    elif damage == "foreign":
        file.write_text(json.dumps({"format": 5, "key": "someone else's", "files": {}, "results": [], "project": None}))
    elif damage == "format 11":  # the previous layout's entry under the current key: a miss by its header
        file.write_bytes(data.replace(b'{"format":%d,' % FORMAT, b'{"format":11,', 1))
    else:  # the previous layout's twenty columns under the current header: a miss by its shape
        payload = json.loads(data)
        payload["results"] = [[] for _ in range(20)]
        file.write_text(json.dumps(payload, separators=(",", ":")))
    if damage.startswith("format 11"):  # read, nothing of it is taken
        assert not Cache.open(cache, file.stem.rsplit("-", 1)[1])._load()
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
    assert data["fix_lines"] == [fix_line(result.fix)] == ["securityContext: {allowPrivilegeEscalation: false}"]
    assert _decode_results(data) == [(result, None)]
    data["fix_lines"] = ["\x1b]0;owned\x07"]
    with pytest.raises(Invalid):
        _decode_results(data)
    data["fix_lines"] = []  # a line short
    with pytest.raises(Invalid):
        _decode_results(data)


def test_resolved_fixes_read_back_by_column_and_a_damaged_column_is_a_miss() -> None:
    """Resolved fixes are kept as the columns of Fix's fields (titles, edit counts, the edits as
    the columns of Edit's: paths, spans, texts; safe flags): every fix reads back equal, edits in
    order and split per fix; any column of the wrong type or length is Invalid, never a fix built
    from the wrong edits."""
    import copy

    from mlops_lint.cachecolumns import column
    from mlops_lint.cachedata import Invalid
    from mlops_lint.fix import Edit, Fix
    from mlops_lint.model.position import Span

    fixes = [Fix("add it", (Edit("a.yaml", Span(1, 1, 1, 1), "x: 1\n"), Edit("a.yaml", Span(4, 2, 4, 9), "")),
                 safe=False),
             Fix("drop it", ()),
             Fix("set it", (Edit("b/c.yaml", Span(7, 3, 7, 5), "true"),))]
    fix = column(Fix)
    assert fix.valid(fixes)
    data = json.loads(json.dumps(fix.encode(fixes)))
    counts, edits = data[1]["edits"]
    assert data[0] == 3 and counts == [2, 0, 1] and edits[1]["path"] == ["a.yaml", "a.yaml", "b/c.yaml"]
    assert list(fix.decode(data, 3)) == fixes and list(fix.decode(fix.encode([]), 0)) == []
    damages = [
        lambda d: d[1]["title"].__setitem__(0, 1),  # a title that is no string
        lambda d: d[1]["safe"].__setitem__(0, 0),  # a flag that is no bool
        lambda d: d[1]["edits"][0].__setitem__(0, 3),  # counts that name more edits than there are
        lambda d: d[1]["edits"][0].__setitem__(1, -1),  # a negative count
        lambda d: d[1]["edits"][1][1]["span"].pop(),  # a span short
        lambda d: d[1]["edits"][1][1]["span"].__setitem__(0, "1"),  # a line that is no integer
        lambda d: d[1]["edits"][1][1]["text"].__setitem__(0, None),  # a text that is no string
        lambda d: d[1].pop("safe"),  # a column short: another layout
        lambda d: d[1].__setitem__("extra", []),  # a column over: another layout
        lambda d: d.__setitem__(0, 4),  # a count that is not the columns'
    ]
    for damage in damages:
        broken = copy.deepcopy(data)
        damage(broken)
        with pytest.raises((Invalid, TypeError, ValueError)):
            list(fix.decode(broken, 3))
    assert not fix.valid([Fix("odd", (Edit("a.yaml", Span(1, 1, 1, 1 << 70), ""),))])


# --- the layout is derived from the record types: every field of every record is carried --------


def _records(cls: type, seen: dict) -> dict:
    """``cls`` and every record type its fields' annotations name, recursively."""
    import typing

    if cls in seen:
        return seen
    seen[cls] = typing.get_type_hints(cls)
    for hint in seen[cls].values():
        for arg in (hint, *typing.get_args(hint), *(a for t in typing.get_args(hint) for a in typing.get_args(t))):
            if isinstance(arg, type) and hasattr(arg, "__struct_fields__"):
                _records(arg, seen)
    return seen


def _example(hint: object, n: int) -> object:
    """A value of ``hint`` built from the annotation (never empty, never None, never 0 or False),
    varied by ``n``; a type this does not know fails the test, so a field of a new kind is met."""
    import types
    import typing

    from mlops_lint.model.position import Span

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is str:
        return f"value {n} \u00e9\U0001f680"
    if hint is int:
        return 1000 + n
    if hint is bool:
        return n % 2 == 0  # the test flips what equals the default
    if hint is Span:
        return Span(n + 1, n + 2, n + 3, n + 4)
    if origin is typing.Literal:
        return args[n % len(args)]
    if origin in (typing.Union, types.UnionType):
        return _example(next(arg for arg in args if arg is not type(None)), n)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return tuple(_example(args[0], n + i) for i in range(2))
    if origin is tuple:
        return tuple(_example(arg, n + i) for i, arg in enumerate(args))
    if isinstance(hint, type) and hasattr(hint, "__struct_fields__"):
        return _instance(hint, n)
    raise AssertionError(f"no example for the annotation {hint!r}: teach _example it")


def _instance(cls: type, n: int) -> object:
    """An instance of ``cls`` with every field set to a value other than its default."""
    import typing

    import msgspec

    hints = typing.get_type_hints(cls)
    values = {}
    for i, (name, default) in enumerate(zip(cls.__struct_fields__, (msgspec.NODEFAULT,) * (
            len(cls.__struct_fields__) - len(cls.__struct_defaults__)) + cls.__struct_defaults__)):
        value = _example(hints[name], n + i)
        if isinstance(default, msgspec._core.Factory):  # noqa: SLF001 - msgspec's field(default_factory=...)
            default = default.factory()
        if value == default:
            value = _example(hints[name], n + i + 1)
        assert value != default, (cls, name)
        values[name] = value
    return cls(**values)


def test_every_field_of_every_record_in_a_finding_reads_back() -> None:
    """The cache's layout comes from the record types: a finding whose every field, and every
    field of the records in it (ObjectRef, Suppression, Fix, Edit, and any added later), holds a
    value other than its default reads back equal after the JSON round trip, so a field that the
    layout did not carry, or carried into another field, fails here."""
    from mlops_lint.cache import _KEYS, _RESULTS, _decode_results, _encode_results
    from mlops_lint.cachedata import dumps, loads
    from mlops_lint.model.document import ObjectKey
    from mlops_lint.result import Result

    records = _records(Result, {})
    assert {cls.__name__ for cls in records} >= {"Result", "ObjectRef", "Suppression", "Fix", "Edit"}
    pairs = [(_instance(Result, n), _example(ObjectKey, n)) for n in range(3)]
    pairs.append((Result("X", "x", "info", "", "b.yaml", pairs[0][0].span), None))  # the defaults
    for cls in records:  # every record's own layout carries each of its fields, in a column of that name
        made = _instance(cls, 7)
        assert all(getattr(made, name) is not None for name in cls.__struct_fields__)
    assert set(_RESULTS.columns) == set(Result.__struct_fields__) and _KEYS.valid([key for _, key in pairs])
    block = _encode_results(pairs)
    assert set(block["results"][1]) == set(Result.__struct_fields__)
    assert _decode_results(loads(dumps(block))) == pairs


def test_a_block_of_another_layout_is_a_miss_not_a_misread() -> None:
    """Columns are keyed by field name and checked against the record's fields: a block written
    for a record with a field more or less (an older or newer mlops-lint) is Invalid, never values
    read into the neighbouring field."""
    from msgspec import Struct

    from mlops_lint.cache import _decode_results, _encode_results
    from mlops_lint.cachecolumns import layout
    from mlops_lint.cachedata import Invalid, dumps, loads
    from mlops_lint.result import Result

    pairs = [(_instance(Result, 1), None)]
    good = loads(dumps(_encode_results(pairs)))
    assert _decode_results(good) == pairs
    fewer = loads(dumps(good))
    del fewer["results"][1]["built_from"]
    wider = loads(dumps(good))
    wider["results"][1]["reviewed"] = [[], [0]]
    old = loads(dumps(good))
    old["results"] = [[] for _ in range(20)]  # format 11's twenty columns
    for block in (fewer, wider, old, {**good, "keys": [[0, [[], [], []]], []]}):
        with pytest.raises(Invalid):
            _decode_results(block)

    class Narrow(Struct, frozen=True):  # a record of another layout, written and read by its own
        rule: str
        span: int

    with pytest.raises(Invalid):
        layout(Result).decode(loads(dumps(layout(Narrow).encode([Narrow("GPU001", 3)]))), None)


def test_a_severity_outside_the_rules_levels_is_a_miss() -> None:
    """Result.severity is a Literal of linter.rule.SEVERITIES: the column refuses any other level
    both ways (a planted "fatal" would crash the reports' counts)."""
    import typing

    from msgspec.structs import replace

    from mlops_lint.cache import _decode_results, _encode_results
    from mlops_lint.cachedata import Invalid
    from mlops_lint.result import Result
    from mlops_lint.rule import SEVERITIES

    assert typing.get_args(typing.get_type_hints(Result)["severity"]) == SEVERITIES
    result = _instance(Result, 0)
    with pytest.raises(Invalid):
        _encode_results([(replace(result, severity="fatal"), None)])
    block = _encode_results([(result, None)])
    block["results"][1]["severity"][0] = ["fatal"]
    with pytest.raises(Invalid):
        _decode_results(block)


def test_the_value_bound_counts_what_costs_memory_not_the_index_columns() -> None:
    """A cache text is refused before decoding when it holds more lists, objects and strings than
    one per 6 bytes (each costs 49 bytes or more decoded); numbers are not counted (at most about
    9 times their text), so the findings' index columns of a project of many alike files (as
    test_a_cache_entry_written_by_a_run_reads_back writes) are read, not silently a miss."""
    from mlops_lint.cachedata import Invalid, loads

    indices = b"[" + b"0,1,2,3,4,5," * 100_000 + b"0]"
    assert len(loads(indices)) == 600_001
    for planted in (b"[" + b"[]," * 100_000 + b"[]]", b"[" + b'"ab",' * 100_000 + b'"ab"]',
                    b"[" + b"{}," * 100_000 + b"{}]"):
        with pytest.raises(Invalid):
            loads(planted)


def test_an_outcome_holding_a_finding_the_columns_cannot_hold_is_left_out_alone(tmp_path: Path) -> None:
    """Findings are checked for the whole cache file at once; when one does not validate (a span
    beyond 64 bits, a severity no rule has), its outcome alone is not stored (linted again next
    time) and every other outcome reads back equal."""
    from msgspec.structs import replace

    from mlops_lint.cache import Cache
    from mlops_lint.engine.runner import FileOutcome
    from mlops_lint.model.position import Span

    from mlops_lint.result import Result

    good = [(_instance(Result, n), None) for n in range(3)]
    bad_span = replace(good[0][0], span=Span(1, 1, 1, 1 << 70))
    bad_level = replace(good[1][0], severity="fatal")
    outcomes = {"a": FileOutcome("a.yaml", "linted", True, good, [], {}),
                "b": FileOutcome("b.yaml", "linted", True, [good[2], (bad_span, None)], [], {}),
                "c": FileOutcome("c.yaml", "linted", True, [(bad_level, None)], [], {}),
                "d": FileOutcome("d.yaml", "linted", True, good[1:], [], {})}
    cache = Cache(tmp_path, "k" * 40)
    for key, outcome in outcomes.items():
        cache.put(key, outcome)
    cache.save()
    again = Cache.open(tmp_path, "k" * 40)
    assert again.get("b") is None and again.get("c") is None
    assert again.get("a").results == good and again.get("d").results == good[1:]


def _strategy(hint: object):
    """A hypothesis strategy for values of ``hint``, built from the annotation as the layout is
    (a type this does not know fails the test, so a field of a new kind is met)."""
    import types
    import typing

    from hypothesis import strategies as st

    from mlops_lint.model.position import Span

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is str:
        return st.text(st.sampled_from("ab-_./: é名🚀0"), max_size=6)
    if hint is int:
        return st.integers(-(2 ** 63) + 1, 2 ** 63 - 1)
    if hint is bool:
        return st.booleans()
    if hint is Span:
        return st.builds(Span, *[st.integers(0, 10 ** 6)] * 4)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        return st.none() | _strategy(next(arg for arg in args if arg is not type(None)))
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return st.lists(_strategy(args[0]), max_size=3).map(tuple)
    if origin is tuple:
        return st.tuples(*map(_strategy, args))
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*map(_strategy, args))
    if isinstance(hint, type) and hasattr(hint, "__struct_fields__"):
        hints = typing.get_type_hints(hint)
        return st.builds(hint, **{name: _strategy(hints[name]) for name in hint.__struct_fields__})
    raise AssertionError(f"no strategy for the annotation {hint!r}: teach _strategy it")


def test_any_findings_read_back_equal() -> None:
    """Findings drawn from Result's annotations (and those of the records in it), object keys
    from ObjectKey's: whatever the values, the cache's columns give back equal pairs."""
    from hypothesis import given
    from hypothesis import strategies as st

    from mlops_lint.cache import _decode_results, _encode_results
    from mlops_lint.cachedata import dumps, loads
    from mlops_lint.model.document import ObjectKey
    from mlops_lint.result import Result
    from strategies import FUZZ

    @FUZZ
    @given(st.lists(st.tuples(_strategy(Result), st.none() | _strategy(ObjectKey)), max_size=6))
    def round_trip(pairs: list) -> None:
        assert _decode_results(loads(dumps(_encode_results(pairs)))) == pairs

    round_trip()
