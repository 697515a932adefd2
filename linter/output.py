"""Where the command's output goes: standard output, or a file the user named (``-o``,
``--write-baseline``, ``init``). The one place that writes them, so that every subcommand meets
the same environment the same way:

- a file's missing parent folders are created (``-o reports/x.sarif`` in a fresh CI checkout);
- a reader that went away (``mlops-lint rules | head -1``) ends the output quietly: what is left
  is discarded, and the command's exit status is what it would have been;
- any other failure to write (a full disk, ``/dev/full``, a read-only folder, a folder where the
  file should be) is an :class:`OutputError`, one line for the user, which the CLI turns into
  exit status 2, never a traceback.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

# what a failed write to a stream meets in the environment (a full disk, a device that fails, a
# closed descriptor), as opposed to a bug
WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EIO, errno.EBADF, errno.EROFS, errno.EDQUOT, errno.EFBIG})


class OutputError(Exception):
    """Output could not be written; ``str()`` is the whole message for the user."""


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def write_file(path: Path, text: str) -> None:
    """``text`` into ``path`` as UTF-8, creating the folders above it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the folder {path.parent}: {_reason(exc)}") from None
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_reason(exc)}") from None


def reader_gone() -> None:
    """Standard output's reader closed the pipe: point the descriptor at /dev/null, so that
    nothing written later (nor the flush at exit) fails again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's captured stream)
        pass


def stream_error(exc: OSError) -> OutputError | None:
    """The :class:`OutputError` a failed write to standard output is, or None for another error
    (text printed by click itself: ``--help``, ``--version``)."""
    if exc.errno in WRITE_ERRORS:
        return OutputError(f"cannot write to standard output: {_reason(exc)}")
    return None


def echo(text: str, *, nl: bool = True) -> None:
    """``text`` on standard output, flushed (so that a failure is met here, not at exit)."""
    import click

    try:
        click.echo(text, nl=nl)
        sys.stdout.flush()
    except BrokenPipeError:
        reader_gone()
    except OSError as exc:
        raise OutputError(f"cannot write to standard output: {_reason(exc)}") from None
