"""GitHub Actions workflow commands: one ``::error file=…,line=…::message`` per active finding,
then one ``::notice`` per note (a ``::warning`` when the run linted no file). Paths are relative to
the repository (SARIF's ``%SRCROOT%``, ``report.uris``), where GitHub looks for the file, wherever
the command ran."""

from __future__ import annotations

from mlops_lint.report.common import GITHUB_COMMAND, RenderOptions, annotation_span, ordered, ordered_notes, printable
from mlops_lint.result import Note, Result, RunReport


def escape_data(text: str) -> str:
    """GitHub's escaping of a command's message (``%``, CR, LF), after other control characters
    from the linted files are shown as ``\\xNN``."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """GitHub's escaping of a property value: the message escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(result: Result) -> str:
    """One workflow command; columns only on one-line spans (GitHub drops them otherwise)."""
    span = annotation_span(result.span)
    props = [("file", result.path), ("line", str(span.line))]
    if span.end_line == span.line:
        props.append(("col", str(span.col)))
    props.append(("endLine", str(span.end_line)))
    if span.end_line == span.line:
        props.append(("endColumn", str(span.end_col)))
    props.append(("title", f"{result.rule} {result.slug}"))
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{GITHUB_COMMAND[result.severity]} {joined}::{escape_data(result.message)}"


def notice(note: Note) -> str:
    """A note (a chart's templates skipped, a folder not read) as a ``::notice``, not tied to a
    file: its path may be a folder or ``<stdin>``, so it is named in the message."""
    return f"::notice title={escape_property('mlops-lint note')}::{escape_data(f'{note.path}: {note.message}')}"


def emit(report: RunReport, options: RenderOptions) -> str:
    from msgspec.structs import replace

    uris = report.uris
    lines = [annotation(replace(r, path=uris[r.path]) if r.path in uris else r) for r in ordered(report.active)]
    if report.nothing_linted:
        lines.append(f"::warning title={escape_property('mlops-lint')}::"
                     f"{escape_data(f'No files linted: {report.nothing_linted}')}")
    lines.extend(notice(Note(uris.get(note.path, note.path), note.message)) for note in ordered_notes(report.notes))
    return "".join(f"{line}\n" for line in lines)
