"""Reports: every format is an :class:`~linter.report.common.Emitter`, a pure ``RunReport -> str``.

The CLI picks the format, decides colour (TTY, ``--no-color``) and where the text goes; nothing
here writes to a file or a stream.
"""

from __future__ import annotations

from linter.report import github, json_report, sarif, text
from linter.report.common import Emitter, RenderOptions
from linter.report.text import summary_line
from linter.result import RunReport

EMITTERS: dict[str, Emitter] = {
    "text": text.emit,
    "json": json_report.emit,
    "sarif": sarif.emit,
    "github": github.emit,
}
FORMATS = tuple(EMITTERS)  # ("text", "json", "sarif", "github")


def render(report: RunReport, fmt: str, *, color: bool = False, show_suppressed: bool = False) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); ``color``/``show_suppressed`` affect text only."""
    try:
        emitter = EMITTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return emitter(report, RenderOptions(color=color, show_suppressed=show_suppressed))


__all__ = ["EMITTERS", "FORMATS", "Emitter", "RenderOptions", "render", "summary_line"]
