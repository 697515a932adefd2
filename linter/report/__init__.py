"""Reports: every format is an :class:`~linter.report.common.Emitter`, a pure ``RunReport -> str``.

The CLI picks the format, decides colour (TTY, ``--no-color``) and where the text goes; nothing
here writes to a file or a stream.

A format's module is imported when it is first rendered: a text run never imports the SARIF
object model (``sarif_om`` and ``attrs``, the largest import of a one-file run).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module

from mlops_lint.report.common import Emitter, RenderOptions
from mlops_lint.report.text import summary_line
from mlops_lint.result import RunReport

from mlops_lint.formats import MODULES as _MODULES


class _Emitters(Mapping):
    """``format -> emit``, importing a format's module on first lookup."""

    def __getitem__(self, fmt: str) -> Emitter:
        return import_module(_MODULES[fmt]).emit

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


EMITTERS: Mapping[str, Emitter] = _Emitters()
FORMATS = tuple(EMITTERS)  # linter.formats.FORMATS


def render(report: RunReport, fmt: str, *, color: bool = False, show_suppressed: bool = False) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); ``color``/``show_suppressed`` affect text only."""
    try:
        emitter = EMITTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return emitter(report, RenderOptions(color=color, show_suppressed=show_suppressed))


__all__ = ["EMITTERS", "FORMATS", "Emitter", "RenderOptions", "render", "summary_line"]
