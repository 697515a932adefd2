"""Reading a file and loading it with the loader of its kind: the one way every part of
mlops-lint opens a file it lints (the engine's passes, and ``crd-paths`` in
:mod:`linter.validation.crds`).

A file is opened non-blocking and checked with ``fstat``, so a FIFO or a device put in place of a
file after discovery is refused instead of blocking the run, and it is never read past the size
limit. A loader is written never to raise; should one still raise, that file becomes an SCH001
that says so, and the run goes on.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from mlops_lint.discover import SourceFile
from mlops_lint.model.document import BICEP, CONFIG, DOCKERFILE, SHELL, TERRAFORM, Document, ParseIssue
from mlops_lint.sources.arm import is_template
from mlops_lint.model.position import Span


class Unreadable(Exception):
    """A file that could not be read, and why (a sentence for a finding or an error)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# What a fix run has changed but not written yet (real path -> bytes): read_source gives these
# bytes instead of the file's, so each pass of --fix (and --diff, which writes nothing) lints the
# files as the fixes so far left them (linter.fix.run)
OVERLAY: dict[str, bytes] = {}


def read_source(path: os.PathLike | str, limit: int | None = None) -> bytes:
    """A file's bytes, at most ``limit`` + 1 of them (so an oversized file is never read whole).

    Opened non-blocking and checked with ``fstat``, so a FIFO or device put in place of a file
    after discovery is refused instead of blocking the run. Raises :class:`Unreadable`.
    """
    import stat

    from mlops_lint.sources.text import MAX_FILE_BYTES, too_large

    limit = MAX_FILE_BYTES if limit is None else limit
    if OVERLAY:
        changed = OVERLAY.get(os.path.realpath(path))  # a link reads what its target will hold
        if changed is not None:
            if len(changed) > limit:
                raise Unreadable(too_large(len(changed), limit))
            return changed
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Unreadable(f"cannot read the file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not read: not a regular file")
        if info.st_size > limit:
            raise Unreadable(too_large(info.st_size, limit))
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(f"cannot read the file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def unread(display: str, kind: str, reason: str) -> Document:
    """The document of a file that could not be read: one issue on its first line."""
    return Document(path=display, kind=kind, errors=[ParseIssue(Span(1, 1, 1, 2), reason)])


def guarded(load: Callable[[Any, str], Any], source: Any, display: str, kind: str,
            module: str = "mlops_lint.sources.yaml_k8s") -> Any:
    """``load(source, display)``; should a loader (written never to raise) still raise, the file
    becomes an SCH001 that says so (and the run goes on) instead of a traceback that stops every
    other file."""
    try:
        return load(source, display)
    except Exception as exc:  # noqa: BLE001 - one file must never stop the run
        detail = " ".join(str(exc).split())[:300]
        message = (f"mlops-lint could not read this file ({module} raised {type(exc).__name__}: {detail}); "
                   "it was not linted (please report this)")
        return unread(display, kind, message)


def load_bytes(data: bytes, display: str, kind: str) -> Document:
    """Parse one file's bytes with the loader of its kind (never raises for bad input)."""
    if kind == DOCKERFILE:
        from mlops_lint.sources import dockerfile as loader
    elif kind == SHELL:
        from mlops_lint.sources import shell as loader
    elif kind == TERRAFORM:
        from mlops_lint.sources import terraform as loader
    elif kind == BICEP:
        from mlops_lint.sources import bicep as loader
    elif kind == CONFIG:  # the project's .mlops-lint.yaml: where its node pools are written
        from mlops_lint.sources import config_pools as loader
    elif is_template(data, display):  # a .json ARM template: its node pools, read as Bicep's
        from mlops_lint.sources import arm as loader
    else:
        from mlops_lint.sources import yaml_k8s as loader
    return guarded(loader.load, data, display, kind, loader.__name__)


def load_file(source: SourceFile, display: str) -> Document:
    """A discovered file, read and loaded (an unreadable file is a document with that issue)."""
    try:
        data = read_source(source.path)
    except Unreadable as exc:
        return unread(display, source.kind, exc.reason)
    return load_bytes(data, display, source.kind)
