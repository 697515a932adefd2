"""The per-file time budget (config ``file-timeout``): a last guard behind the bounds of every
loader and model, so that no single file can hang the gate.

Each file's loading and rules run under a real-time timer (``setitimer``). When it rings, the
signal handler raises :class:`OutOfTime` (a ``BaseException``: the runner's guard around each
rule catches ``Exception`` only), which unwinds to :func:`linter.engine.passes.lint_files`; that
file becomes one finding naming what ran out of time (loading it, or which rule), and the run
goes on with the next file. Workers run their files under the same timer. Where there is no
``setitimer`` (not POSIX) or off the main thread, files run without a budget. Code that holds
the interpreter in C without returning to Python (a regular expression backtracking) cannot be
interrupted this way; the bounds in the loaders and the model keep such code from hostile input.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class OutOfTime(BaseException):
    """The file's budget ran out (raised by the timer's signal handler)."""


def _ring(signum: int, frame: object) -> None:
    raise OutOfTime()


def available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Run the block with ``seconds`` of real time; past them :class:`OutOfTime` is raised in it."""
    if not seconds or not available():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def message(seconds: float, what: str) -> str:
    return (f"{what} ran out of this file's time budget ({seconds:g} s, `file-timeout`); the file was not "
            "linted further and its other findings are not reported")
