"""docs/article-coverage.md maps the article's checkable practices to rules; this keeps it true.

Every rule id the table names exists; every "covered" row's proof (``RULE at file:line``) holds:
its snippet in tests/data/article_coverage/<ID>/ is linted as a project of its own and the rule
fires at that line; the counts the page states are the table's. A "partly" or "not covered" row
whose gap was tried keeps its snippet in tests/data/article_coverage_gaps/<ID>/, on which none of
the row's rules may fire (a rule that closes the gap fails this until the row says covered). A snippet is copied out of the git
work tree first: linted in place, the work tree would be its project and the snippets of other
rows (pools, queues, device plugins) would change its findings."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "article-coverage.md"
SNIPPETS = REPO / "tests" / "data" / "article_coverage"
GAPS = REPO / "tests" / "data" / "article_coverage_gaps"  # tried forms a row's rules miss
ARTICLE = REPO.parent / "shared" / "seed" / "mlops-aks-best-practices.txt"
VERDICTS = ("covered", "partly", "not covered")
RULE_ID = re.compile(r"^[A-Z]{3}\d{3}$")
PROOF = re.compile(r"^([A-Z]{3}\d{3}) at ([^:/\s]+):(\d+)$")
COUNTS = re.compile(r"Checkable practices: \*\*(\d+)\*\*; covered: \*\*(\d+)\*\*, partly: \*\*(\d+)\*\*, "
                    r"not covered: \*\*(\d+)\*\*\.")


def _rows() -> list[dict[str, str]]:
    rows = []
    for line in DOC.read_text("utf-8").splitlines():
        if not re.match(r"^\| A\d{3} \|", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 7, line
        ident, practice, section, lines, rules, verdict, proof = cells
        rows.append({"id": ident, "practice": practice, "section": section, "lines": lines,
                     "rules": [] if rules == "none" else [r.strip().strip("`") for r in rules.split(",")],
                     "verdict": verdict, "proof": proof})
    return rows


ROWS = _rows()
COVERED = [r for r in ROWS if r["verdict"] == "covered"]


def test_table_rows_are_well_formed() -> None:
    assert len(ROWS) >= 100
    assert [r["id"] for r in ROWS] == [f"A{n:03d}" for n in range(1, len(ROWS) + 1)]
    for row in ROWS:
        assert row["verdict"] in VERDICTS, row
        assert row["practice"] and row["section"] and row["proof"], row  # a gap is explained too
        assert re.fullmatch(r"\d+(-\d+)?(, \d+(-\d+)?)*", row["lines"]), row
        if row["verdict"] == "covered":
            assert row["rules"], row
        assert len({r["practice"] for r in ROWS}) == len(ROWS)


@pytest.mark.skipif(not ARTICLE.exists(), reason="the article (../shared/seed) is not beside the checkout")
def test_cited_lines_exist_in_the_article() -> None:
    total = len(ARTICLE.read_text("utf-8").splitlines())
    for row in ROWS:
        for part in row["lines"].split(", "):
            first, _, last = part.partition("-")
            assert 1 <= int(first) <= int(last or first) <= total, row


def test_every_rule_id_in_the_table_exists() -> None:
    codes = {meta.code for meta in load_registry().rules}
    named = {rule for row in ROWS for rule in row["rules"]}
    assert named and all(RULE_ID.match(rule) for rule in named), named
    assert sorted(named - codes) == []
    for row in COVERED:
        match = PROOF.match(row["proof"])
        assert match, row
        assert match.group(1) in codes and match.group(1) in row["rules"], row


def test_counts_in_the_doc_match_the_table() -> None:
    match = COUNTS.search(DOC.read_text("utf-8"))
    assert match, "the counts line is missing"
    total, covered, partly, missing = map(int, match.groups())
    verdicts = Counter(r["verdict"] for r in ROWS)
    assert (total, covered, partly, missing) == (
        len(ROWS), verdicts["covered"], verdicts["partly"], verdicts["not covered"])


def test_each_covered_row_has_its_snippet_and_only_those() -> None:
    assert sorted(p.name for p in SNIPPETS.iterdir() if p.is_dir()) == sorted(r["id"] for r in COVERED)


GAP_ROWS = [r for r in ROWS if (GAPS / r["id"]).is_dir()]


def test_gap_snippets_belong_to_rows_that_are_not_covered() -> None:
    by_id = {r["id"]: r for r in ROWS}
    assert GAP_ROWS and sorted(p.name for p in GAPS.iterdir()) == sorted(r["id"] for r in GAP_ROWS)
    for row in GAP_ROWS:
        assert by_id[row["id"]]["verdict"] != "covered" and row["rules"], row
        assert f"(gap snippet {row['id']})" in row["proof"], row


def _lint_copy(source: Path, tmp_path: Path, registry):
    project = tmp_path / source.name
    shutil.copytree(source, project)
    report = lint(LintRequest(paths=[project], config=None, registry=registry, cwd=project))
    assert not report.nothing_linted and report.files_linted, report.notes
    return project, report.active


@pytest.fixture(scope="module")
def registry():
    return load_registry()


@pytest.mark.parametrize("row", COVERED, ids=[r["id"] for r in COVERED])
def test_covered_practice_snippet_fires_the_named_rule(row: dict, tmp_path: Path, registry) -> None:
    rule, name, line = PROOF.match(row["proof"]).groups()
    project, results = _lint_copy(SNIPPETS / row["id"], tmp_path, registry)
    assert (project / name).is_file(), row
    assert int(line) <= len((project / name).read_text("utf-8").splitlines()), row
    hits = sorted({(Path(r.path).name, r.line) for r in results if r.rule == rule})
    assert (name, int(line)) in hits, f"{row['id']}: {rule} fired at {hits}, not {name}:{line}"


@pytest.mark.parametrize("row", GAP_ROWS, ids=[r["id"] for r in GAP_ROWS])
def test_gap_snippet_is_still_missed(row: dict, tmp_path: Path, registry) -> None:
    _, results = _lint_copy(GAPS / row["id"], tmp_path, registry)
    fired = sorted({r.rule for r in results} & set(row["rules"]))
    assert fired == [], f"{row['id']}: {fired} now fire on the gap snippet; re-judge the row"
