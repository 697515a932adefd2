"""What every report shares: the Emitter protocol, options, severity maps, ordering and counts."""

from __future__ import annotations

import re

from typing import Protocol

from msgspec import Struct

from mlops_lint import __version__
from mlops_lint.model.position import Span
from mlops_lint.result import Note, Result, RunReport

TOOL_NAME = "mlops-lint"
INFORMATION_URI = "https://github.com/mlops-lint/mlops-lint"

# One severity vocabulary in, one word per output format out.
TEXT_WORD = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


class RenderOptions(Struct, frozen=True):
    color: bool = False  # ANSI colour (text only); the CLI decides TTY / --no-color
    show_suppressed: bool = False  # print suppressed results too (text only)


class Emitter(Protocol):
    """A report format: a pure function from a run to the bytes to write (as str)."""

    def __call__(self, report: RunReport, options: RenderOptions) -> str: ...


class Tally(Struct, frozen=True):
    files: int  # linted
    skipped: int
    errors: int
    warnings: int
    info: int
    suppressed: int
    with_findings: int = 0  # files with an active finding
    signal: int = 0  # active findings of the ml and aks families (linter.families)

    @property
    def problems(self) -> int:
        return self.errors + self.warnings + self.info


def tally(report: RunReport) -> Tally:
    """Counts of active results per severity, plus suppressed results and files."""
    from mlops_lint.families import SIGNAL, family_of

    counts = report.counts()
    active = report.active
    families = {meta.code: meta.family for meta in report.rules}
    return Tally(
        files=report.files_linted,
        skipped=report.files_skipped,
        errors=counts["error"],
        warnings=counts["warning"],
        info=counts["info"],
        suppressed=len(report.results) - len(active),
        with_findings=len({r.path for r in active}),
        signal=sum(1 for r in active if (families.get(r.rule) or family_of(r.rule)) in SIGNAL),
    )


def run_note(report: RunReport) -> list[Note]:
    """The run-level note of a run that linted nothing (path ""), for the machine reports."""
    return [Note("", f"No files linted: {report.nothing_linted}")] if report.nothing_linted else []


def ordered(results: list[Result]) -> list[Result]:
    """Results in report order (path, line, column, rule), whatever order they came in."""
    return sorted(results, key=Result.sort_key)


def ordered_notes(notes: list[Note]) -> list[Note]:
    return sorted(notes, key=lambda n: (n.path, n.message))


def tool_version(report: RunReport) -> str:
    return report.version or __version__


def annotation_span(span: Span) -> Span:
    """A span consumers accept: the end strictly after the start (an empty span covers one column)."""
    if (span.end_line, span.end_col) <= (span.line, span.col):
        return Span(span.line, span.col, span.line, span.col + 1)
    return span


# control characters (C0 with the line feed, DEL, C1), the line and paragraph separators, and the
# bidirectional marks, embeddings, overrides and isolates (Trojan Source: text that displays in
# another order than it reads)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters (ESC, CR, LF, tab, C1 …) shown as ``\\xNN`` and the
    line separators and bidirectional controls as ``\\uNNNN``: names and values come from the
    linted files, and printed raw a line feed in a file name could start a line of its own (a
    forged ``::error`` workflow command in a CI log), an escape sequence or a carriage return
    could rewrite or hide the lines around it, and a bidi override could show it reordered."""
    return _CONTROL.sub(_escaped, text)
