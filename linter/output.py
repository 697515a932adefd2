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
import re
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
    baseline is worse than none). A link at ``path`` is refused, never followed nor replaced (a
    checkout may commit ``reports/x.sarif`` as a link to a file of the CI user's), and so is a
    relative path through a linked folder (``reports`` a link elsewhere). A name of a
    standard stream (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``) is
    written to that open descriptor, at its offset and in its mode (appended when the shell opened
    it with ``>>``, down a pipe); another device or FIFO is opened and written in place. Neither
    is ever renamed over.
    """
    stream = _stream_descriptor(path)
    data = text.encode("utf-8")
    if stream is not None:
        try:
            _write_descriptor(stream, data)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {_reason(exc)}") from None
        return
    linked = _linked_folder(path)
    if linked is not None:
        raise OutputError(f"cannot write {path}: the folder {linked} is a symbolic link (to {os.readlink(linked)}), "
                          "which is never written through; remove it or name another folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the folder {path.parent}: {_reason(exc)}") from None
    try:
        try:
            existing: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISLNK(existing.st_mode):
            raise OutputError(f"cannot write {path}: it is a symbolic link (to {os.readlink(path)}), which is never "
                              "written through nor replaced; remove it or name another file")
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            if stat.S_ISDIR(existing.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            # a device or a FIFO: nothing to rename over; O_NOFOLLOW: not a link put there since
            flags = os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
            descriptor = os.open(path, flags)
            try:
                if stat.S_ISREG(os.fstat(descriptor).st_mode):  # replaced by a file since: not in place
                    raise OutputError(f"cannot write {path}: it changed while being written")
                _write_descriptor(descriptor, data)
            finally:
                os.close(descriptor)
            return
        _replace(path, data, existing)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_reason(exc)}") from None


def _linked_folder(path: Path) -> str | None:
    """The first folder of a relative ``path`` (below the working folder, where a checkout's
    committed links are) that is a symbolic link, or None: ``-o reports/x.sarif`` with
    ``reports`` a link to another folder would write there."""
    if path.is_absolute():
        return None
    here = ""
    for part in path.parts[:-1]:
        if part == "..":
            return None  # above the working folder: the user's own spelling
        here = os.path.join(here, part)
        if os.path.islink(here):
            return here
    return None


# names that are the process's own open descriptors (Linux, macOS, BSD): written to the descriptor
_STREAMS = {"/dev/stdout": 1, "/dev/stderr": 2}
_FD_NAME = re.compile(r"/(?:dev/fd|proc/self/fd)/([0-9]{1,9})")


def _stream_descriptor(path: Path) -> int | None:
    """The descriptor ``path`` names when it names one of this process's own (``/dev/stdout``,
    ``/dev/fd/3``, ``/proc/self/fd/1``), or None. Only the name counts: a link elsewhere that
    points at ``/dev/stdout`` is a link, refused as any other."""
    name = os.path.normpath(os.path.abspath(os.fspath(path)))
    if name in _STREAMS:
        return _STREAMS[name]
    match = _FD_NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def _write_descriptor(descriptor: int, data: bytes) -> None:
    """All of ``data`` to an open descriptor (what the text report printed before it is flushed
    first, so the two keep their order on one stream)."""
    if descriptor in (1, 2):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


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
