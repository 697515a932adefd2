"""Real-world YAML nobody here wrote: no crash, no rule error, every file accounted for."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from linter.config import Config
from linter.engine import LintRequest, lint
from linter.registry import load_registry

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CORPUS = SHARED / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present (user machine)")


@pytest.fixture(scope="module")
def corpus_report():
    return lint(LintRequest(paths=[CORPUS], config=Config(), registry=load_registry(), select=["ALL", "LNT001"],
                            jobs=2, cwd=CORPUS))


def test_every_corpus_file_is_accounted_for(corpus_report) -> None:
    on_disk = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json")}
    assert set(corpus_report.file_status) == on_disk
    statuses = set(corpus_report.file_status.values())
    assert statuses <= {"linted", "parse error"} | {s for s in statuses if s.startswith("skipped: ")}
    parse_errors = {r.path for r in corpus_report.results if r.rule == "SCH001"}
    for path, status in corpus_report.file_status.items():
        if status == "parse error":
            assert path in parse_errors


def test_no_rule_errors_and_positions_inside_files(corpus_report) -> None:
    assert [r for r in corpus_report.results if r.rule == "LNT002"] == []
    assert corpus_report.results, "the catalogue finds nothing on 1,356 real files: something is off"
    line_counts: dict[str, int] = {}
    for result in corpus_report.results:
        if result.path not in line_counts:
            line_counts[result.path] = max(1, (CORPUS / result.path).read_bytes().count(b"\n") + 1)
        assert 1 <= result.span.line <= line_counts[result.path], result
        assert result.span.col >= 1 and result.span.end_line >= result.span.line


def test_corpus_parse_errors_are_real(corpus_report) -> None:
    """Only the broken Markdown excerpts (and no real manifest) fail to parse."""
    broken = {r.path for r in corpus_report.results if r.rule == "SCH001" and not r.message.startswith("duplicate key")}
    assert all(".mdblock-" in path for path in broken), sorted(broken)


def test_corpus_sarif_and_json_are_valid(corpus_report) -> None:
    from linter.report import render

    sarif_schema = json.loads((SHARED / "sarif" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(sarif_schema).validate(json.loads(render(corpus_report, "sarif")))
    findings_schema = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "findings.schema.json").read_text())
    jsonschema.validate(json.loads(render(corpus_report, "json")), findings_schema)
