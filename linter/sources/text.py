"""Bytes to text: BOMs, UTF-16/32 with and without BOM, invalid UTF-8, binary files.

Every source loader starts here, so an encoding problem is reported the same way for YAML,
Dockerfiles and shell scripts: as a :class:`DecodeError` carrying a line and a message that a
person can act on.
"""

from __future__ import annotations

import codecs
from typing import Callable

from mlops_lint.model.document import Document, ParseIssue
from mlops_lint.model.position import Span

MAX_FILE_BYTES = 16 * 1024 * 1024


class DecodeError(Exception):
    def __init__(self, message: str, span: Span = Span(1, 1, 1, 2)):
        super().__init__(message)
        self.message = message
        self.span = span


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def too_large(size: int, max_bytes: int = MAX_FILE_BYTES) -> str:
    return (f"file is {size / 1048576:.1f} MiB, larger than the {max_bytes // 1048576} MiB that mlops-lint "
            "parses; it was not linted")


_TEXT_CONTROLS = frozenset("\t\n\r")


def _sniff_utf16(data: bytes) -> str | None:
    """UTF-16 without a BOM: ASCII-heavy text has every other byte NUL, and the bytes beside the
    NULs are ASCII text (not the 0xff or control bytes of a binary file that happens to alternate)."""
    sample = data[:4096]
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    half = len(sample) // 2
    for low, high, encoding in ((even, odd, "utf-16-le"), (odd, even, "utf-16-be")):
        if high.count(0) >= half * 0.7 and low.count(0) <= half * 0.1:
            text_like = sum(1 for b in low if 0x20 <= b < 0x7f or chr(b) in _TEXT_CONTROLS)
            if text_like >= len(low) * 0.7:
                return encoding
    return None


def _line_of_offset(data: bytes, offset: int) -> Span:
    """The 1-based line and code-point column of a byte offset (the bytes before it on its line
    are decoded leniently, so a column counts characters, as every other span does)."""
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", "replace")) + 1
    return Span(line, col, line, col + 1)


def decode(data: bytes, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Decode a source file to text, or raise :class:`DecodeError`.

    Line ends are kept as they are (the YAML parser and the line splitters understand CRLF).
    """
    if len(data) > max_bytes:
        raise DecodeError(too_large(len(data), max_bytes))
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(encoding)
            except UnicodeDecodeError as exc:
                raise DecodeError(f"invalid {encoding.upper()} after the byte-order mark: {exc.reason}") from None
    if b"\x00" in data:
        encoding = _sniff_utf16(data)
        if encoding is not None:
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                pass
        offset = data.index(b"\x00")
        raise DecodeError(
            "file contains a NUL byte: it is binary, or text in an encoding other than UTF-8/UTF-16",
            _line_of_offset(data, offset),
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"invalid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); save the file as UTF-8",
            _line_of_offset(data, exc.start),
        ) from None


def encoding_of(data: bytes) -> tuple[bytes, str]:
    """(byte-order mark, encoding) that :func:`decode` reads ``data`` with, so that a writer can
    encode a changed text back the same way (``bom + text.encode(encoding)``)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return bom, encoding
    if b"\x00" in data:
        encoding = _sniff_utf16(data)
        if encoding is not None:
            return b"", encoding
    return b"", "utf-8"


def load_decoded(data: bytes, path: str, kind: str, load_text: Callable[[str, str], Document]) -> Document:
    """Decode ``data`` and hand the text to a loader; an encoding problem is the file's SCH001."""
    try:
        text = decode(data)
    except DecodeError as exc:
        return Document(path=path, kind=kind, errors=[ParseIssue(exc.span, exc.message)])
    loaded = load_text(text, path)
    if isinstance(loaded, Document) and loaded.text is None:  # a YAML Stream keeps its own (Stream.document)
        loaded.text = text[1:] if text.startswith("\ufeff") else text
    return loaded
