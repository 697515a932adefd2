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
import stat
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
    """``text`` into ``path`` as UTF-8, creating the folders above it.

    A regular file (or a new one) is written whole or not at all: the text goes to a temporary
    file beside it, which is then renamed over it, so a full disk or a failed write never leaves
    an empty or partial file (an empty ``.mlops-lint.yaml`` is a valid config; half a report or
    baseline is worse than none). A device or pipe (``-o /dev/stdout``) is written in place, and
    a link is followed to the file it names.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the folder {path.parent}: {_reason(exc)}") from None
    data = text.encode("utf-8")
    try:
        target = Path(os.path.realpath(path))
        try:
            existing: os.stat_result | None = os.stat(target)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            if stat.S_ISDIR(existing.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            with open(target, "wb") as handle:  # a device or a pipe: nothing to rename over
                handle.write(data)
            return
        _replace(target, data, existing)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_reason(exc)}") from None


def _replace(target: Path, data: bytes, existing: "os.stat_result | None") -> None:
    """``data`` into a new temporary file beside ``target`` (``O_EXCL``, never a link), flushed
    to disk, then renamed over ``target``; the temporary file is removed on any failure."""
    import tempfile

    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    _PENDING.add(temporary)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if existing is not None:
            os.chmod(temporary, stat.S_IMODE(existing.st_mode))
        else:  # what open() would have made: 0o666 less the umask (mkstemp makes 0o600)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    finally:
        _PENDING.discard(temporary)


_PENDING: set[str] = set()  # temporary files being written (removed if the run is interrupted)


def interrupted(signum: int, frame: object) -> None:
    """SIGINT (Ctrl-C): one line, exit status 130, at once. The workers die with the process
    (linter.engine.workers); a temporary file being written is removed, never left behind."""
    for temporary in list(_PENDING):
        try:
            os.unlink(temporary)
        except OSError:
            pass
    try:
        os.write(2, b"mlops-lint: interrupted\n")
    except OSError:
        pass
    os._exit(130)


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


_STDOUT_CLOSED = False


def stdout_closed() -> None:
    """The process started with standard output closed: /dev/null takes descriptor 1 (so no file
    the run opens lands there and gets the report), and :func:`echo` refuses to write."""
    global _STDOUT_CLOSED
    _STDOUT_CLOSED = True
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != 1:
            os.dup2(devnull, 1)
            os.close(devnull)
        sys.stdout = open(1, "w", closefd=False)
    except OSError:
        pass


def echo(text: str, *, nl: bool = True) -> None:
    """``text`` on standard output, flushed (so that a failure is met here, not at exit)."""
    import click

    if _STDOUT_CLOSED:
        raise OutputError("cannot write to standard output: it is closed")
    try:
        click.echo(text, nl=nl)
        sys.stdout.flush()
    except BrokenPipeError:
        reader_gone()
    except OSError as exc:
        raise OutputError(f"cannot write to standard output: {_reason(exc)}") from None


# What the few non-ASCII symbols of mlops-lint's own text become on a stream that cannot encode
# them (a Latin-1, cp437, cp850, ISO-8859-15 or KOI8-R terminal or log); anything else (a file
# name, text quoted from a manifest) becomes "?".
ASCII_FALLBACK = {"…": "...", "→": "->", "–": "-", "—": "-", "·": "-", "×": "x", "µ": "u", "‘": "'", "’": "'",
                  "“": '"', "”": '"', "≥": ">=", "≤": "<=", "✓": "ok", "✗": "x"}
FALLBACK_ERRORS = "mlops-lint-fallback"


def _fallback(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start:error.end]
    return "".join(ASCII_FALLBACK.get(ch, "?") for ch in text), error.end


def fit_streams() -> None:
    """Standard output and error never fail on a character their encoding lacks: it is written as
    its ASCII fallback (``…`` as ``...``). UTF-8 streams are unchanged."""
    import codecs

    try:
        codecs.lookup_error(FALLBACK_ERRORS)
    except LookupError:
        codecs.register_error(FALLBACK_ERRORS, _fallback)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        if reconfigure is not None and encoding not in ("utf-8", "utf8"):
            try:
                reconfigure(errors=FALLBACK_ERRORS)
            except (OSError, ValueError):
                pass
