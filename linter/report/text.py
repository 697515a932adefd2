"""The human report: ``path:line:col: SEVERITY ID slug: message [Kind ns/name]``, grouped by file."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import groupby
from typing import Iterable

from mlops_lint.report.common import TEXT_WORD, RenderOptions, Tally, ordered, ordered_notes, printable, tally
from mlops_lint.result import Note, Result, RunReport

_RESET = "\x1b[0m"
_BOLD = "1"
_DIM = "2"
_GREEN = "1;32"
_SEVERITY_STYLE = {"error": "1;31", "warning": "1;33", "info": "1;36"}


def _paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{style}m{text}{_RESET}" if color else text


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 or word == "info" else f"{count} {word}s"


# what splitlines or printable would change (linter.report.common._CONTROL)
_SPECIAL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """``text`` with line breaks turned into spaces and control characters escaped: one
    finding, one line, nothing the terminal would act on."""
    if _SPECIAL.search(text) is None:
        return text  # the common case, unchanged
    return printable(" ".join(text.splitlines()))


def suppression_reason(result: Result) -> str:
    """Why a result is suppressed: the justifications, else where the suppression came from."""
    return one_line("; ".join(s.justification or s.where or s.kind for s in result.suppressions))


FIXABLE_MARK = "[*]"  # as ruff marks a finding --fix repairs


def applies(result: Result, report: RunReport | None) -> bool:
    """Whether ``--fix`` would apply ``result``'s fix (unsafe ones where unsafe fixes are on)."""
    fix = result.autofix
    return fix is not None and not result.suppressions and (
        fix.safe or (report is not None and result.path in report.unsafe_fixing))


def format_result(result: Result, *, color: bool = False, report: RunReport | None = None) -> str:
    """One finding as one line, as SPEC section 4 writes it (suppressed ones marked with their
    reason); whether ``--fix`` repairs it is said on the fix line under it (:func:`format_finding`)."""
    span = result.span
    if color:
        location = _paint(f"{_path(result.path)}:{span.line}:{span.col}:", _BOLD, color)
        severity = _paint(TEXT_WORD[result.severity], _SEVERITY_STYLE[result.severity], color)
    else:  # the common case (a file, a pipe, CI): no escape sequences to add
        location, severity = f"{_path(result.path)}:{span.line}:{span.col}:", TEXT_WORD[result.severity]
    message = result.message  # one_line's common case inline: a report prints thousands of these
    if _SPECIAL.search(message) is not None:
        message = one_line(message)
    line = f"{location} {severity} {result.rule} {result.slug}: {message}"
    if result.obj is not None:
        shown = str(result.obj)
        line += f" [{shown if _SPECIAL.search(shown) is None else one_line(shown)}]"
    if result.suppressions:
        line = f"{line} {_paint(f'(suppressed: {suppression_reason(result)})', _DIM, color)}"
    return line


@lru_cache(maxsize=4096)
def _path(path: str) -> str:
    """A display path as printed (paths repeat: once per finding of their file)."""
    return printable(path)


# hint -> its line, as the result cache recorded them with the findings (linter.cache): a warm
# run prints a multi-line hint without importing PyYAML (about 10 ms) to render it again
_KNOWN_LINES: dict[str, str] = {}


def known_fix_lines(pairs: Iterable[tuple[str, str]]) -> None:
    """Lines :func:`fix_line` gave for these hints in an earlier run (each must be what
    :func:`one_line` leaves alone: nothing the terminal would act on)."""
    _KNOWN_LINES.update(pairs)


def is_one_line(text: str) -> bool:
    """Whether :func:`one_line` leaves ``text`` as it is."""
    return _SPECIAL.search(text) is None


@lru_cache(maxsize=1024)
def fix_line(fix: str) -> str:
    """A finding's ``fix`` hint as one line: a YAML snippet that spans lines in flow style
    (``capabilities: {drop: [ALL]}``), any other text with its line breaks made spaces."""
    known = _KNOWN_LINES.get(fix)
    if known is not None:
        return known
    if "\n" in fix.strip():
        import yaml

        try:
            data = yaml.safe_load(fix)
        except yaml.YAMLError:
            data = None
        if isinstance(data, (dict, list)) and data:
            flow = yaml.safe_dump(data, default_flow_style=True, sort_keys=False, width=1 << 30,
                                  allow_unicode=True).strip()
            if isinstance(data, dict):
                flow = flow[1:-1]
            elif len(data) == 1:
                flow = "- " + flow[1:-1]
            return one_line(flow)
    return one_line(fix.strip())


def format_fix(result: Result, *, color: bool = False, fixable: bool = False) -> str:
    """The indented line under a finding that says how to fix it: ``[*] fix:`` when ``--fix``
    repairs it (the hint, else the fix's own title), ``fix:`` for a hint to follow by hand."""
    hint = result.fix or (result.autofix.title if result.autofix is not None else "")
    return _paint(f"    {FIXABLE_MARK + ' ' if fixable else ''}fix: {fix_line(hint)}", _DIM, color)


def format_finding(result: Result, *, color: bool = False, report: RunReport | None = None) -> str:
    """A finding's line (SPEC's format, untouched), and under it its fix hint when it has one,
    marked ``[*]`` (as ruff marks what it repairs) when ``--fix`` would apply its fix."""
    line = format_result(result, color=color, report=report)
    fixable = result.autofix is not None and applies(result, report)
    return f"{line}\n{format_fix(result, color=color, fixable=fixable)}" if result.fix or fixable else line


def statistics(report: RunReport) -> list[tuple[int, str, str, str]]:
    """(count, rule, slug, severity) of the active findings per rule, most frequent first."""
    counts: dict[tuple[str, str, str], int] = {}
    for result in report.active:
        key = (result.rule, result.slug, result.severity)
        counts[key] = counts.get(key, 0) + 1
    return sorted(((n, *key) for key, n in counts.items()), key=lambda row: (-row[0], row[1], row[3]))


def render_statistics(report: RunReport, options: RenderOptions = RenderOptions()) -> str:
    """``--statistics``: one line per rule (count, id, severity, slug), then the summary line."""
    rows = statistics(report)
    width = max((len(str(row[0])) for row in rows), default=1)
    slug_width = max((len(row[2]) for row in rows), default=1)
    lines = [f"{count:>{width}}  {rule}  {_paint(f'{TEXT_WORD[severity]:<7}', _SEVERITY_STYLE[severity], options.color)}"
             f"  {slug:<{slug_width}}".rstrip() for count, rule, slug, severity in rows]
    head = "\n".join(lines) + "\n\n" if lines else ""
    if report.fixed:
        names = {meta.code: meta.name for meta in report.rules}
        fixed = sorted(report.fixed.items(), key=lambda item: (-item[1], item[0]))
        width = max(len(str(count)) for _, count in fixed)
        head += "Fixed:\n" + "".join(f"{count:>{width}}  {rule}  {names.get(rule, '')}".rstrip() + "\n"
                                     for rule, count in fixed) + "\n"
    return head + summary_line(report, color=options.color) + "\n"


def format_note(note: Note) -> str:
    return f"note: {printable(note.path)}: {one_line(note.message)}"


def _summary(counts: Tally, nothing: str = "") -> str:
    """``Found 5 ML/AKS problems and 3 others (…) in 2 files; 12 files linted.``: the ML and AKS
    findings counted first (linter.families), the files with findings, then the files linted;
    ``All checks passed (12 files).``; ``No files linted: why.`` (never a pass)."""
    files = _plural(counts.files, "file")
    if counts.problems:
        by_severity = ", ".join(
            [_plural(counts.errors, "error"), _plural(counts.warnings, "warning"), _plural(counts.info, "info")]
        )
        others = counts.problems - counts.signal
        found = f"{_plural(counts.signal, 'ML/AKS problem')}"
        if others:
            found += f" and {_plural(others, 'other')}"
        line = f"Found {found} ({by_severity}) in {_plural(counts.with_findings, 'file')}; {files} linted"
        if nothing:
            line += f" ({nothing})"
    elif nothing:
        line = f"No files linted: {nothing}"
    else:
        line = f"All checks passed ({files})"
    if counts.suppressed:
        line += f"; {counts.suppressed} suppressed"
    return line + "."


def fix_summary(report: RunReport) -> str:
    """What a fix run fixed, and how many findings ``--fix`` (and ``--unsafe-fixes``) would fix:
    `` Fixed 3 problems. 2 fixable with --fix (1 more with --unsafe-fixes).`` ("" when none)."""
    parts = []
    if report.fixed:
        parts.append(f"Fixed {_plural(sum(report.fixed.values()), 'problem')}.")
    safe = unsafe = 0
    for result in report.results:
        if result.autofix is None or result.suppressions:
            continue
        if applies(result, report):
            safe += 1
        else:
            unsafe += 1
    if safe:
        more = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
        parts.append(f"{FIXABLE_MARK} {safe} fixable with --fix{more}.")
    elif unsafe:
        parts.append(f"{unsafe} fixable with --fix --unsafe-fixes.")
    return "".join(f" {part}" for part in parts)


def summary_line(report: RunReport, *, color: bool = False) -> str:
    """``Found 3 problems (1 error, 2 warnings, 0 info) in 12 files; 1 suppressed.`` (no newline),
    then what --fix fixed or would fix (:func:`fix_summary`)."""
    counts = tally(report)
    worst = "error" if counts.errors else "warning" if counts.warnings else "info" if counts.info else None
    style = _SEVERITY_STYLE[worst] if worst else _SEVERITY_STYLE["warning"] if report.nothing_linted else _GREEN
    return _paint(_summary(counts, report.nothing_linted), style, color) + fix_summary(report)


def render_findings(report: RunReport, options: RenderOptions = RenderOptions()) -> str:
    """The finding lines only, one block per file, blocks separated by a blank line."""
    shown = [r for r in ordered(report.results) if options.show_suppressed or not r.suppressed]
    blocks = [
        "\n".join(format_finding(r, color=options.color, report=report) for r in group)
        for _, group in groupby(shown, key=lambda r: r.path)
    ]
    return "\n\n".join(blocks)


def emit(report: RunReport, options: RenderOptions) -> str:
    """Findings by file, a blank line, notes, then the summary line."""
    findings = render_findings(report, options)
    trailer = [format_note(n) for n in ordered_notes(report.notes)] + [summary_line(report, color=options.color)]
    head = f"{findings}\n\n" if findings else ""
    return head + "\n".join(trailer) + "\n"
