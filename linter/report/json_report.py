"""The machine report (``--format json``): the contract in ``schemas/findings.schema.json``."""

from __future__ import annotations

from typing import Any

from mlops_lint.report.common import RenderOptions, ordered, ordered_notes, run_note, tally, tool_version
from mlops_lint.report.jsontext import dumps
from mlops_lint.fix import Fix
from mlops_lint.result import Result, RunReport


def finding(result: Result) -> dict[str, Any]:
    """One result as a JSON object (suppressed ones included, with ``suppressed: true``)."""
    obj = result.obj
    data = {
        "rule": result.rule,
        "slug": result.slug,
        "severity": result.severity,
        "message": result.message,
        "path": result.path,
        "line": result.span.line,
        "column": result.span.col,
        "end_line": result.span.end_line,
        "end_column": result.span.end_col,
        "object": {"kind": obj.kind, "namespace": obj.namespace, "name": obj.name} if obj else None,
        "fix": result.fix,
        "autofix": autofix(result.autofix),
        "suppressed": result.suppressed,
        "suppressions": [{"kind": s.kind, "justification": s.justification} for s in result.suppressions],
    }
    if result.built_from is not None:  # a finding on a kustomize build: the root it was built from
        data["built_from"] = result.built_from
    return data


def autofix(fix: Fix | None) -> dict[str, Any] | None:
    """A resolved fix as its edits (what ``--fix`` would write), or None."""
    if fix is None:
        return None
    return {"title": fix.title, "safe": fix.safe, "edits": [
        {"path": e.path, "line": e.span.line, "column": e.span.col, "end_line": e.span.end_line,
         "end_column": e.span.end_col, "text": e.text} for e in fix.edits]}


def document(report: RunReport) -> dict[str, Any]:
    """The whole report as plain data, in a fixed key order."""
    counts = tally(report)
    data = {
        "version": tool_version(report),
        "findings": [finding(r) for r in ordered(report.results)],
        "summary": {
            "files": counts.files,
            "skipped": counts.skipped,
            "errors": counts.errors,
            "warnings": counts.warnings,
            "info": counts.info,
            "suppressed": counts.suppressed,
        },
        "notes": [{"path": n.path, "message": n.message} for n in run_note(report) + ordered_notes(report.notes)],
    }
    if report.fixed is not None:  # a --fix run: what it fixed, per rule (the findings are what is left)
        data["summary"]["fixed"] = dict(report.fixed)
    return data


def emit(report: RunReport, options: RenderOptions) -> str:
    return dumps(document(report)) + "\n"
