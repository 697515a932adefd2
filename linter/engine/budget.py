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
import time


class OutOfTime(BaseException):
    """The file's budget ran out (raised by the timer's signal handler)."""


def available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class Clock:
    """The budget of each file of one pass: ``with Clock(seconds) as clock:`` around the loop,
    ``clock.start()`` / ``clock.stop()`` around each file.

    The timer is armed once for the whole pass and ticks (at most once a second); a file only
    sets its deadline, so the budget costs a clock read per file, not system calls (installing a
    handler per file cost ~50 us a file, 0.5 s at 10,000 files). A file that runs out is
    interrupted at the first tick past its deadline."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds if seconds and seconds > 0 else None
        self.deadline = float("inf")
        self.armed = False
        self.previous: object = None

    def __enter__(self) -> "Clock":
        if self.seconds is not None and available():
            tick = min(1.0, self.seconds / 4)
            self.previous = signal.signal(signal.SIGALRM, self._ring)
            signal.setitimer(signal.ITIMER_REAL, tick, tick)
            self.armed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)  # type: ignore[arg-type]
            self.armed = False

    def start(self) -> None:
        if self.armed:
            self.deadline = time.monotonic() + self.seconds  # type: ignore[operator]

    def stop(self) -> None:
        self.deadline = float("inf")

    def _ring(self, signum: int, frame: object) -> None:
        if time.monotonic() >= self.deadline:
            self.deadline = float("inf")
            raise OutOfTime()


def message(seconds: float, what: str) -> str:
    return (f"{what} ran out of this file's time budget ({seconds:g} s, `file-timeout`); the file was not "
            "linted further and its other findings are not reported")
