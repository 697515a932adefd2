"""Fixtures double as tests: ``fixtures/rules/<CODE>/`` holds ``fail.*``, ``pass.*`` and ``expected.txt``.

For every folder the engine runs with only that rule selected (ruff's ``for_rule``), from the
repository root, and:

(a) in each ``fail.*`` the findings are exactly the lines directly below a ``# expect: CODE``
    comment (semgrep's ``# ruleid:``; several codes may be listed, comma separated);
(b) ``pass.*`` gives no finding at all;
(c) the reports of the fail files equal the rule's own snapshots, each rewritten by
    ``pytest --update-golden`` (review the diff): ``expected.txt`` the text report,
    ``expected.json`` the JSON report exactly as printed (its version replaced), and
    ``expected.sarif`` the SARIF log (version, working directory and absolute root left out) --
    the one place the rule's SARIF descriptor (short and full description, help text and
    markdown: its docs) is pinned. A rule the fixtures also select (``# select:``) or that the
    engine adds (SCH001 on a parse error) keeps its place and shape there, its docs replaced by a
    pointer to its own snapshot, so changing one rule's docs changes one file (the findings of
    those rules on these fixtures stay in this rule's snapshots, as in ``expected.txt``). The
    rule's findings on the whole violating tree are its fourth snapshot,
    ``expected-violating.json`` (tests/test_reference_fixtures.py); ``pytest --update-golden
    tests/test_rule_fixtures.py tests/test_reference_fixtures.py -k <ID>`` writes all four;
(d) every finding points inside its file, at the line's text: the column is at or after the
    first non-space character and a one-line span ends within the line.

A fixture that needs more rules than its own (LNT001 reports suppressions of other rules) says so
in a ``# select: LNT001, GPU001`` comment; the union over the files of a run is selected. A rule
that needs settings reads them from the ``.mlops-lint.yaml`` in its folder (every rule's folder is a
project root of its own, so `mlops-lint fixtures/` uses the same settings). A fail file that only gives
the others their context (the ``az aks`` script whose node pools the manifests are placed on) says
so in a ``# context: why`` comment: it expects nothing and must get no finding.
A rule that judges the config's own ``node-pools`` (AKS001-AKS005) has its config forms in the
subfolders ``config-fail/`` and ``config-pass/``, each a project of its own whose
``.mlops-lint.yaml`` is linted with the rule: its findings are the ``# expect:`` lines, and none
in ``config-pass/`` (:func:`test_config_forms`).
Expectations are read from the fixture text here, in the test; the linter itself never greps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import msgspec
import pytest

from mlops_lint.config import Config, load_config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.engine.selection import ALWAYS
from mlops_lint.registry import load_registry
from mlops_lint.report import render
from mlops_lint.result import Result, RunReport
from snapshots import check_golden, descriptors_owned_by, dump, stable_json, stable_sarif

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "rules"
FOLDERS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []

CODE = r"[A-Z]{2,4}[0-9]{3}"
EXPECT = re.compile(rf"^\s*(?:#|//)\s*expect:\s*({CODE}(?:\s*,\s*{CODE})*)\s*$")  # `//` in Bicep
SELECT = re.compile(r"^\s*#\s*select:\s*([A-Za-z0-9_,\s-]+?)\s*$")
CONTEXT = re.compile(r"^\s*#\s*context:\s*\S")


# ---------------------------------------------------------------------------------------------
# Reading fixtures (test-side only)


def fixture_lines(path: Path) -> list[str]:
    """The file's lines as the loaders count them (binary fixtures are read leniently)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    return [line.rstrip("\r") for line in text.split("\n")]


def expectations(path: Path) -> set[tuple[int, str]]:
    """(line, code) for every line directly below a ``# expect: CODE[, CODE]`` comment."""
    lines = fixture_lines(path)
    expected: set[tuple[int, str]] = set()
    for index, line in enumerate(lines):
        match = EXPECT.match(line)
        if match is None:
            continue
        target = index + 2  # 1-based number of the next line
        assert target <= len(lines) and lines[target - 1].strip(), (
            f"{path}:{index + 1}: `# expect:` must sit directly above a non-blank line"
        )
        assert not EXPECT.match(lines[target - 1]), (
            f"{path}:{index + 1}: stacked `# expect:` comments; list the codes in one"
        )
        for code in match.group(1).split(","):
            expected.add((target, code.strip()))
    return expected


def declared_select(files: list[Path]) -> set[str]:
    chosen: set[str] = set()
    for path in files:
        for line in fixture_lines(path):
            match = SELECT.match(line)
            if match:
                chosen.update(token.strip() for token in match.group(1).split(",") if token.strip())
    return chosen


def is_context(path: Path) -> bool:
    """A fail file that only gives the others their context (``# context: …``)."""
    return any(CONTEXT.match(line) for line in fixture_lines(path))


def fail_files(code: str) -> list[Path]:
    """The fail fixtures (not their ``.fixed`` goldens: tests/test_fix_golden.py)."""
    return sorted(p for p in (FIXTURES / code).iterdir()
                  if p.name.startswith("fail") and p.is_file() and not p.name.endswith(".fixed"))


def pass_files(code: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / code).iterdir()
                  if p.name.startswith("pass") and p.is_file() and not p.name.endswith(".fixed"))


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


# ---------------------------------------------------------------------------------------------
# Running the engine


@dataclass(frozen=True)
class Run:
    files: tuple[Path, ...]
    select: tuple[str, ...]
    report: RunReport

    def active(self, path: Path | None = None) -> list[Result]:
        return [r for r in self.report.active if path is None or r.path == rel(path)]


def fixture_config(code: str) -> Config:
    """``fixtures/rules/<CODE>/.mlops-lint.yaml`` (IMG004's trusted-registries, node pools …; most
    folders' hold only a comment: the defaults). Its folder is not made the project root: fail and
    pass files stay separate projects."""
    path = FIXTURES / code / ".mlops-lint.yaml"
    if not path.is_file():
        return Config()
    return msgspec.structs.replace(load_config(path, load_registry()), root=None)


@lru_cache(maxsize=None)
def _run(code: str, which: str) -> Run:
    files = fail_files(code) if which == "fail" else pass_files(code)
    select = tuple(sorted({code} | declared_select(files)))
    # SCH001 and LNT002 run beside any selection (engine.selection.ALWAYS); a rule's snapshots pin
    # that rule (and the ones its fixtures select), so they are left out unless selected
    ignore = sorted(set(ALWAYS) - set(select))
    report = lint(LintRequest(paths=list(files), config=fixture_config(code), registry=load_registry(),
                              select=list(select), ignore=ignore, cwd=REPO))
    return Run(tuple(files), select, report)


@pytest.fixture
def at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def run_fixture(code: str, which: str) -> Run:
    return _run(code, which)


# ---------------------------------------------------------------------------------------------
# The text report (SPEC section 4), rendered by linter.report


def render_text(report: RunReport) -> str:
    """The text report exactly as the CLI prints it without colour: one
    ``path:line:col: SEVERITY ID slug: message [Kind namespace/name]`` line per finding, grouped by
    file, then notes and the summary line."""
    return render(report, "text", color=False)


def describe(results: list[Result]) -> str:
    return "\n".join(f"  {r.line}:{r.column} {r.rule}: {r.message}" for r in results) or "  (none)"


# ---------------------------------------------------------------------------------------------
# The tests


def test_fixture_folders_exist() -> None:
    assert FOLDERS, f"no fixture folders under {FIXTURES}"


@pytest.mark.parametrize("code", FOLDERS)
def test_fail_findings_are_the_expected_lines(code: str, at_repo_root: None) -> None:
    run = run_fixture(code, "fail")
    assert run.files, f"fixtures/rules/{code}: no fail.* file"
    shown = {rel(p) for p in run.files}
    stray = [r for r in run.report.active if r.path not in shown]
    assert not stray, f"findings outside the fail files:\n{describe(stray)}"
    assert any(not is_context(p) for p in run.files), f"fixtures/rules/{code}: only `# context:` fail files"
    for path in run.files:
        expected = expectations(path)
        if is_context(path):
            assert not expected, f"{rel(path)} is a `# context:` file: it must not expect findings"
            assert run.active(path) == [], f"{rel(path)} is a `# context:` file but got:\n{describe(run.active(path))}"
            continue
        assert expected, f"{rel(path)} has no `# expect:` comment"
        assert {c for _, c in expected} <= set(run.select), f"{rel(path)} expects a rule that is not selected"
        assert any(c == code for _, c in expected), f"{rel(path)} never expects {code}"
        results = run.active(path)
        actual = {(r.line, r.rule) for r in results}
        lines = fixture_lines(path)
        missing = "\n".join(f"  {line}: {c}: {lines[line - 1].strip()}" for line, c in sorted(expected - actual))
        extra = "\n".join(f"  {line}: {c}: {lines[line - 1].strip()}" for line, c in sorted(actual - expected))
        assert actual == expected, (
            f"{rel(path)}: findings differ from the `# expect:` comments\n"
            f"expected but not reported:\n{missing or '  (none)'}\nreported but not expected:\n{extra or '  (none)'}\n"
            f"all findings:\n{describe(results)}"
        )


@pytest.mark.parametrize("code", FOLDERS)
def test_pass_has_no_findings(code: str, at_repo_root: None) -> None:
    run = run_fixture(code, "pass")
    assert run.files, f"fixtures/rules/{code}: no pass.* file"
    for path in run.files:
        assert not expectations(path), f"{rel(path)}: a pass file must not expect findings"
    assert run.report.file_status and all(s == "linted" for s in run.report.file_status.values()), (
        f"pass files must be linted, not skipped: {run.report.file_status}"
    )
    assert run.report.active == [], f"pass files of {code} gave findings:\n{describe(run.report.active)}"


@pytest.mark.parametrize("code", FOLDERS)
def test_text_report_matches_golden(code: str, at_repo_root: None, update_golden: bool) -> None:
    check_golden(FIXTURES / code / "expected.txt", render_text(run_fixture(code, "fail").report), update_golden)


@pytest.mark.parametrize("code", FOLDERS)
def test_json_report_matches_golden(code: str, at_repo_root: None, update_golden: bool) -> None:
    out = stable_json(render(run_fixture(code, "fail").report, "json"))
    check_golden(FIXTURES / code / "expected.json", out, update_golden)


@pytest.mark.parametrize("code", FOLDERS)
def test_sarif_report_matches_golden(code: str, at_repo_root: None, update_golden: bool) -> None:
    data = stable_sarif(render(run_fixture(code, "fail").report, "sarif"))
    (run,) = data["runs"]
    ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert code in ids, f"the SARIF log of {code}'s fixtures has no descriptor of {code}: {ids}"
    check_golden(FIXTURES / code / "expected.sarif", dump(descriptors_owned_by(data, code)), update_golden)


@pytest.mark.parametrize("code", FOLDERS)
@pytest.mark.parametrize("which", ["fail", "pass"])
def test_positions_point_at_the_text(code: str, which: str, at_repo_root: None) -> None:
    run = run_fixture(code, which)
    by_path = {rel(p): fixture_lines(p) for p in run.files}
    for result in run.report.results:  # suppressed ones too: their spans are reported in SARIF
        lines = by_path[result.path]
        span = result.span
        assert 1 <= span.line <= len(lines), result
        text = lines[span.line - 1]
        first = len(text) - len(text.lstrip()) + 1
        assert text.strip(), f"{result.path}:{span.line}: finding on a blank line: {result}"
        assert first <= span.col <= len(text), f"{result.path}:{span.line}: column {span.col} is not on {text!r}"
        assert (span.end_line, span.end_col) > (span.line, span.col), result
        if span.end_line == span.line:
            assert span.end_col <= len(text) + 1, f"{result.path}:{span.line}: span ends past {text!r}"
        else:
            assert span.end_line <= len(lines), result


CONFIG_FORMS = [code for code in FOLDERS if (FIXTURES / code / "config-fail").is_dir()]


@pytest.mark.parametrize("code", CONFIG_FORMS)
def test_config_forms(code: str, at_repo_root: None) -> None:
    """``config-fail/.mlops-lint.yaml``: the rule's findings on the config's node pools are its
    ``# expect:`` lines, at the text; ``config-pass/``'s gives none. Both are linted files."""
    for which in ("fail", "pass"):
        folder = FIXTURES / code / f"config-{which}"
        path = folder / ".mlops-lint.yaml"
        report = lint(LintRequest(paths=[folder], config=None, registry=load_registry(), select=[code], cwd=REPO))
        assert report.file_status == {rel(path): "linted"}, report.file_status
        expected = expectations(path)
        assert bool(expected) == (which == "fail") and {c for _, c in expected} <= {code}, rel(path)
        assert {(r.line, r.rule) for r in report.active} == expected, f"{rel(path)}:\n{describe(report.active)}"
        lines = fixture_lines(path)
        for result in report.active:
            text = lines[result.line - 1]
            assert len(text) - len(text.lstrip()) < result.column <= len(text), (result, text)
