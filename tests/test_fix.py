"""``--fix``, ``--diff`` and ``--unsafe-fixes`` as users see them: bytes written (and every byte
not edited kept), exit codes, notes, what is never written, the reports' fix data.

The fixes come from test-only rules (tests/fixkit.py: TST001 safe, TST002 unsafe on the same
node, TST003 never converging, TST004 breaking the file), so these tests pin the flow whatever
the real rules propose; tests/test_fix_golden.py pins the real rules' fixes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from fixkit import MANIFEST, registry_with_test_rules

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

FIXED = MANIFEST.replace("fixme: bad", 'fixme: "no"')


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Run ``mlops-lint ARGS`` in ``tmp_path`` with the test rules: (exit code, stdout, stderr)."""
    import mlops_lint.cli

    monkeypatch.setattr(mlops_lint.cli, "_registry", lambda folder=None: registry_with_test_rules())
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", "--no-color", *args],
                                    catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr
    return invoke


def test_fix_writes_the_fix_keeps_every_other_byte_and_a_second_run_changes_nothing(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    code, out, err = cli("--select", "TST001", "--fix", ".")
    assert code == 0
    assert (tmp_path / "cm.yaml").read_text() == FIXED
    assert out == "All checks passed (1 file). Fixed 1 problem.\n"
    code, out, _ = cli("--select", "TST001", "--fix", ".")
    assert (code, out) == (0, "All checks passed (1 file).\n")
    assert (tmp_path / "cm.yaml").read_text() == FIXED


@pytest.mark.parametrize("encoding, bom, newline", [
    ("utf-8", b"\xef\xbb\xbf", "\r\n"), ("utf-8", b"", "\r\n"), ("utf-16-le", b"\xff\xfe", "\n"),
    ("utf-16-be", b"\xfe\xff", "\r\n"), ("utf-32-le", b"\xff\xfe\x00\x00", "\n"),
])
def test_fix_keeps_the_encoding_the_bom_and_the_line_breaks(cli, tmp_path: Path, encoding: str, bom: bytes,
                                                            newline: str) -> None:
    def encoded(text: str) -> bytes:
        return bom + text.replace("\n", newline).encode(encoding)

    (tmp_path / "cm.yaml").write_bytes(encoded(MANIFEST.replace("settings", "réglages")))
    code, _, _ = cli("--select", "TST001", "--fix", "cm.yaml")
    assert code == 0
    assert (tmp_path / "cm.yaml").read_bytes() == encoded(FIXED.replace("settings", "réglages"))


def test_fix_keeps_the_files_mode_and_leaves_no_temporary_file(cli, tmp_path: Path) -> None:
    target = tmp_path / "cm.yaml"
    target.write_text(MANIFEST)
    target.chmod(0o640)
    cli("--select", "TST001", "--fix", ".")
    assert target.read_text() == FIXED
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cm.yaml"]


def test_diff_prints_what_fix_would_do_changes_nothing_and_exits_1(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    code, out, err = cli("--select", "TST001", "--diff", ".")
    assert code == 1
    assert out == ("--- a/cm.yaml\n+++ b/cm.yaml\n@@ -3,5 +3,5 @@\n metadata:\n   name: settings  # a comment kept\n"
                   "   labels:\n-    fixme: bad\n+    fixme: \"no\"\n data: {}\n")
    assert "would fix 1 problem in 1 file" in err
    assert (tmp_path / "cm.yaml").read_text() == MANIFEST
    (tmp_path / "cm.yaml").write_text(FIXED)
    assert cli("--select", "TST001", "--diff", ".")[:2] == (0, "")


def test_diff_marks_a_last_line_without_a_line_break(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST.replace("data: {}\n", "").replace("fixme: bad\n", "fixme: bad"))
    code, out, _ = cli("--select", "TST001", "--diff", ".")
    assert code == 1
    assert out.endswith('-    fixme: bad\n\\ No newline at end of file\n+    fixme: "no"\n\\ No newline at end of file\n')


def test_unsafe_fixes_only_with_the_flag_or_the_config(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    code, out, _ = cli("--select", "TST002", "--fix", ".")
    assert code == 1 and (tmp_path / "cm.yaml").read_text() == MANIFEST
    assert "TST002 fixme-label-too" in out and "[*]" not in out  # not fixable without --unsafe-fixes
    assert out.rstrip().endswith("1 fixable with --fix --unsafe-fixes.")
    code, out, _ = cli("--select", "TST002", ".", "--unsafe-fixes")
    assert "TST002 fixme-label-too" in out and "\n    [*] fix: " in out and "[*] 1 fixable with --fix." in out
    code, out, _ = cli("--select", "TST002", "--fix", "--unsafe-fixes", ".")
    assert code == 0 and (tmp_path / "cm.yaml").read_text() == MANIFEST.replace("fixme: bad", 'fixme: "maybe"')
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    (tmp_path / ".mlops-lint.yaml").write_text("fix: {unsafe: true}\n")
    code, out, _ = cli("--select", "TST002", "--fix", ".")
    assert code == 0 and (tmp_path / "cm.yaml").read_text() == MANIFEST.replace("fixme: bad", 'fixme: "maybe"')


def test_fixes_of_one_node_are_applied_one_at_a_time_the_first_by_position_wins(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    code, out, _ = cli("--select", "TST001,TST002", "--fix", "--unsafe-fixes", "--statistics", ".")
    assert code == 0
    assert (tmp_path / "cm.yaml").read_text() == FIXED  # TST002's fix of the same node re-resolved: nothing left
    assert out == "Fixed:\n1  TST001  fixme-label\n\nAll checks passed (1 file). Fixed 1 problem.\n"


def test_select_ignore_and_unfixable_restrict_what_is_fixed(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    code, out, _ = cli("--select", "TST", "--ignore", "TST001,TST002", "--fix", ".")
    assert code == 0 and (tmp_path / "cm.yaml").read_text() == MANIFEST
    (tmp_path / ".mlops-lint.yaml").write_text("unfixable: [fixme-label]\n")
    code, out, _ = cli("--select", "TST001", "--fix", "--format", "json", ".")
    assert code == 1 and (tmp_path / "cm.yaml").read_text() == MANIFEST
    (finding,) = json.loads(out)["findings"]
    assert (finding["rule"], finding["fix"], finding["autofix"]) == ("TST001", "set it to no", None)
    (tmp_path / ".mlops-lint.yaml").write_text("unfixable: [NOPE001]\n")
    code, _, err = cli("--select", "TST001", "--fix", ".")
    assert code == 2 and "'unfixable' names an unknown rule or prefix 'NOPE001'" in err


def test_passes_are_bounded_and_say_so(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST.replace("fixme: bad", "grow: a"))
    code, out, _ = cli("--select", "TST003", "--fix", ".")
    assert 'grow: "axxxxxxxxxx"' in (tmp_path / "cm.yaml").read_text()  # ten passes, one x each
    assert "note: cm.yaml: fixes still left after 10 passes (TST003), in 1 file: run --fix again" in out
    assert "Fixed 10 problems." in out and code == 1


def test_a_fix_that_would_break_the_file_is_not_applied(cli, tmp_path: Path) -> None:
    text = MANIFEST.replace("    fixme: bad\n", "    fixme: bad\n    breakme: x\n")
    (tmp_path / "cm.yaml").write_text(text)
    code, out, _ = cli("--select", "TST001,TST004", "--fix", ".")
    assert (tmp_path / "cm.yaml").read_text() == text.replace("fixme: bad", 'fixme: "no"')
    assert "note: cm.yaml: not applied: the fix of TST004 would make the file fail to parse" in out
    assert "TST004 break-label" in out and "[*]" not in out and code == 1  # not fixable by --fix, as it found


def test_a_file_changed_since_it_was_linted_is_left_alone(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mlops_lint.engine

    target = tmp_path / "cm.yaml"
    target.write_text(MANIFEST)
    real = mlops_lint.engine.lint_run

    def lint_then_edit(request, wants):
        done = real(request, wants)
        target.write_text(MANIFEST + "# edited meanwhile\n")
        return done

    monkeypatch.setattr(mlops_lint.engine, "lint_run", lint_then_edit)
    code, out, _ = cli("--select", "TST001", "--fix", ".")
    assert target.read_text() == MANIFEST + "# edited meanwhile\n"
    assert "note: cm.yaml: not fixed: the file changed since it was linted; run again" in out


def test_a_file_changed_while_it_was_fixed_is_left_alone(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mlops_lint.fix.run as flow

    target = tmp_path / "cm.yaml"
    target.write_text(MANIFEST)
    real = flow._write

    def edit_then_write(entry):
        target.write_text(MANIFEST + "# edited meanwhile\n")
        return real(entry)

    monkeypatch.setattr(flow, "_write", edit_then_write)
    code, out, _ = cli("--select", "TST001", "--fix", ".")
    assert target.read_text() == MANIFEST + "# edited meanwhile\n"
    assert "note: cm.yaml: not fixed: the file changed while it was being fixed" in out
    assert "Fixed" not in out


def test_symlinks_are_never_replaced_nor_written_through(cli, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.yaml"
    outside.write_text(MANIFEST.replace("settings", "outside"))
    (tmp_path / "real.yaml").write_text(MANIFEST)
    (tmp_path / "link.yaml").symlink_to("real.yaml")
    (tmp_path / "away.yaml").symlink_to(outside)
    code, out, _ = cli("--select", "TST001", "--fix", ".")
    assert (tmp_path / "real.yaml").read_text() == FIXED  # fixed as itself, once
    assert (tmp_path / "link.yaml").is_symlink() and (tmp_path / "away.yaml").is_symlink()
    assert outside.read_text() == MANIFEST.replace("settings", "outside")
    assert "note: link.yaml: not fixed: it is a symbolic link, which --fix never replaces nor writes through" in out
    assert "note: away.yaml: not read: the link points outside the project" in out  # not even linted
    assert "[*]" not in out  # what --fix refuses to write is not reported as fixable


def test_excluded_files_and_context_files_are_never_written(cli, tmp_path: Path) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text('exclude: ["vendor/"]\n')
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "cm.yaml").write_text(MANIFEST)
    (tmp_path / "other.yaml").write_text(MANIFEST.replace("settings", "other"))
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    code, _, _ = cli("--select", "TST001", "--fix", "cm.yaml", "vendor/cm.yaml")
    assert (tmp_path / "cm.yaml").read_text() == FIXED
    assert (tmp_path / "vendor" / "cm.yaml").read_text() == MANIFEST  # excluded, though named
    assert (tmp_path / "other.yaml").read_text() == MANIFEST.replace("settings", "other")  # not a target


def test_a_helm_template_is_never_written(cli, tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(MANIFEST)
    code, out, _ = cli("--select", "TST001", "--fix", "chart/templates/cm.yaml")
    assert (chart / "templates" / "cm.yaml").read_text() == MANIFEST
    assert "Fixed" not in out


def test_fix_and_diff_refuse_stdin(cli) -> None:
    code, _, err = cli("--fix", "-")
    assert code == 2 and "--fix and --diff change files, not stdin" in err


def test_the_json_report_carries_each_fix_as_edits(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    code, out, _ = cli("--select", "TST001,TST002", "--format", "json", ".")
    data = json.loads(out)
    jsonschema.validate(data, json.loads((REPO / "schemas" / "findings.schema.json").read_text()))
    assert [f["autofix"] for f in data["findings"]] == [
        {"title": 'set `fixme: "no"`', "safe": True, "edits": [
            {"path": "cm.yaml", "line": 6, "column": 12, "end_line": 6, "end_column": 15, "text": '"no"'}]},
        {"title": 'set `fixme: "maybe"`', "safe": False, "edits": [
            {"path": "cm.yaml", "line": 6, "column": 12, "end_line": 6, "end_column": 15, "text": '"maybe"'}]},
    ]
    assert "fixed" not in data["summary"]
    code, out, _ = cli("--select", "TST001,TST002", "--format", "json", "--fix", ".")
    data = json.loads(out)
    jsonschema.validate(data, json.loads((REPO / "schemas" / "findings.schema.json").read_text()))
    assert data["summary"]["fixed"] == {"TST001": 1} and data["findings"] == []


def test_statistics_json_counts_the_fixes_per_rule(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST.replace("fixme: bad", "fixme: bad\n    breakme: x"))
    code, out, _ = cli("--select", "TST001,TST004", "--fix", "--statistics", "--format", "json", ".")
    assert json.loads(out) == [
        {"rule": "TST004", "slug": "break-label", "severity": "warning", "count": 1, "fixed": 0},
        {"rule": "TST001", "slug": "fixme-label", "severity": "warning", "count": 0, "fixed": 1},
    ]


def _sarif(cli, tmp_path: Path) -> dict:
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    code, out, _ = cli("--select", "TST001,TST002", "--format", "sarif", ".")
    return json.loads(out)


def test_sarif_carries_fixes_as_artifact_changes(cli, tmp_path: Path) -> None:
    log = _sarif(cli, tmp_path)
    fixes = [result["fixes"] for result in log["runs"][0]["results"]]
    assert fixes[0] == [{"artifactChanges": [{
        "artifactLocation": {"uri": "cm.yaml", "uriBaseId": "%SRCROOT%"},
        "replacements": [{"deletedRegion": {"endColumn": 15, "endLine": 6, "startColumn": 12, "startLine": 6},
                          "insertedContent": {"text": '"no"'}}]}],
        "description": {"text": 'set `fixme: "no"`'}}]
    assert fixes[1][0]["description"] == {"text": 'set `fixme: "maybe"` (unsafe: applied with --unsafe-fixes)'}
    schema = SHARED / "sarif" / "sarif-schema-2.1.0.json"
    if not schema.is_file():
        pytest.skip("../shared/sarif is absent: the SARIF schema is not at hand")
    jsonschema.validate(log, json.loads(schema.read_text()))


def test_sarif_fixes_from_objects_and_from_data_are_the_same() -> None:
    from mlops_lint.fix import Edit, Fix
    from mlops_lint.model.position import Span
    from mlops_lint.report.sarif import result_data, sarif_result
    from mlops_lint.report.sarif_json import to_json
    from mlops_lint.result import Result

    fix = Fix("insert", (Edit("a b/c.yaml", Span(2, 1, 2, 1), "x: 1\n"), Edit("a b/c.yaml", Span(4, 3, 5, 1), "")))
    result = Result("TST001", "fixme-label", "warning", "m", "a b/c.yaml", Span(2, 1, 2, 2), autofix=fix)
    assert result_data(result, 0, "h:1", {"a b/c.yaml": "sub/a b/c.yaml"}) == to_json(
        sarif_result(result, 0, "h:1", {"a b/c.yaml": "sub/a b/c.yaml"}))
    data = result_data(result, 0, "h:1", {"a b/c.yaml": "sub/a b/c.yaml"})
    assert list(data)[:2] == ["message", "fixes"]
    assert data["fixes"][0]["artifactChanges"][0]["artifactLocation"] == {"uri": "sub/a%20b/c.yaml",
                                                                           "uriBaseId": "%SRCROOT%"}


def test_sarif_with_fixes_passes_the_multitool(cli, tmp_path: Path) -> None:
    from test_sarif_multitool import ACCEPTED_WARNINGS, multitool, validate

    from msgspec.structs import replace

    from report_samples import sample_report

    from mlops_lint.fix import Edit, Fix
    from mlops_lint.model.position import Span
    from mlops_lint.report import render

    multitool()
    log = _sarif(cli, tmp_path)
    found = [r for r in validate(json.dumps(log), tmp_path) if r["ruleId"] not in ACCEPTED_WARNINGS]
    assert found == []
    report = sample_report()  # an insertion (an empty deleted region) and a deletion, in files under %SRCROOT%
    first = report.results[0]
    insertion = Fix("insert a line", (Edit(first.path, Span(first.line, 1, first.line, 1), "    suspend: true\n"),
                                      Edit(first.path, Span(first.line + 1, 1, first.line + 2, 1), "")), safe=False)
    report.results[0] = replace(first, autofix=insertion)
    text = render(report, "sarif")
    assert '"deletedRegion":' in text
    assert [r for r in validate(text, tmp_path) if r["ruleId"] not in ACCEPTED_WARNINGS] == []


def test_fix_output_is_the_same_across_jobs(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mlops_lint.engine.workers as workers

    monkeypatch.setattr(workers, "PARALLEL_MIN_FILES", 4)
    outputs = []
    for jobs in ("1", "2"):
        for number in range(10):
            (tmp_path / f"cm{number}.yaml").write_text(MANIFEST.replace("settings", f"s{number}")
                                                       .replace("fixme: bad", "fixme: bad\n    breakme: x"))
        outputs.append(cli("--select", "TST001,TST004", "--fix", "--jobs", jobs, "--format", "json", "."))
        outputs.append(tuple((tmp_path / f"cm{n}.yaml").read_bytes() for n in range(10)))
    assert outputs[0] == outputs[2] and outputs[1] == outputs[3]
    assert json.loads(outputs[0][1])["summary"]["fixed"] == {"TST001": 10}


def test_fix_output_is_the_same_with_the_cache(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mlops_lint.cli

    project = tmp_path / "p"
    project.mkdir()
    cache = tmp_path / "cache"

    def once(*args: str) -> tuple:
        for number in range(3):
            (project / f"cm{number}.yaml").write_text(MANIFEST.replace("settings", f"s{number}"))
        result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-color", "--select", "TST001", "--fix", *args,
                                                      "p"], catch_exceptions=False)
        return result.exit_code, result.stdout, tuple((project / f"cm{n}.yaml").read_bytes() for n in range(3))

    uncached = once("--no-cache")
    assert uncached[2] == (FIXED.replace("settings", "s0").encode(), FIXED.replace("settings", "s1").encode(),
                           FIXED.replace("settings", "s2").encode())
    assert once("--cache-dir", str(cache)) == uncached  # cold
    assert once("--cache-dir", str(cache)) == uncached  # warm


def test_a_suppressed_finding_is_not_fixed(cli, tmp_path: Path) -> None:
    text = MANIFEST.replace("    fixme: bad\n", "    # mlops-lint: disable=TST001 kept on purpose\n    fixme: bad\n")
    (tmp_path / "cm.yaml").write_text(text)
    code, out, _ = cli("--select", "TST001", "--fix", ".")
    assert (code, (tmp_path / "cm.yaml").read_text()) == (0, text)
    assert "Fixed" not in out and "fixable" not in out


def test_a_file_with_several_hard_links_is_left_alone(cli, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(MANIFEST)
    os.link(tmp_path / "cm.yaml", tmp_path.parent / f"{tmp_path.name}-elsewhere.yaml")
    code, out, _ = cli("--select", "TST001", "--fix", "cm.yaml")
    assert (tmp_path / "cm.yaml").read_text() == MANIFEST and (tmp_path / "cm.yaml").stat().st_nlink == 2
    assert "note: cm.yaml: not fixed: it has 2 hard links, which replacing it would split" in out
