"""Applying resolved edits to a file's decoded text, and choosing which fixes go in one pass.

Positions are the loaders' (1-based lines counted at LF, columns in code points, end exclusive);
a leading byte-order mark, which every loader drops before parsing, is not counted on line 1.
A ``\\n`` in an edit's text becomes the file's own line break (CRLF when the file's first line
break is CRLF), and every character outside the edits is kept as it was. Encoding and BOM of the
bytes are the caller's: decode with ``linter.sources.text.decode``, apply, encode back the same way.

Fixes that touch the same bytes cannot all be applied at once: :func:`select_non_overlapping`
takes whole fixes in order and defers any fix that conflicts with one taken before it (the engine
re-lints and resolves the deferred ones in a next pass), so a fix is applied whole or not at all.
:func:`apply_edits` itself refuses overlapping edits (:class:`OverlapError`).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import accumulate
from typing import Iterable, Sequence

from mlops_lint.fix import Edit, Fix
from mlops_lint.model.position import Span


_PLUS_ONE = (1).__add__


class OverlapError(ValueError):
    """Two edits of one text touch the same characters (or an edit is outside the text)."""


class TextIndex:
    """Line starts of a text, to turn (line, col) into offsets and back; built once per text."""

    __slots__ = ("text", "starts", "base", "newline")

    def __init__(self, text: str):
        self.text = text
        self.base = 1 if text.startswith("\ufeff") else 0  # loaders count columns after the BOM
        # each line's start: the running sum of the lengths of the lines before it, plus their LFs
        # (C-speed iteration; a loop of find() calls cost a tenth of resolving the run's fixes)
        lines = text.split("\n")
        lines.pop()
        self.starts = list(accumulate(map(_PLUS_ONE, map(len, lines)), initial=0))
        first = text.find("\n")
        self.newline = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line(self, number: int) -> str:
        """Line ``number`` (1-based) without its line break (a CR before the LF is dropped too)."""
        start = self.starts[number - 1] + (self.base if number == 1 else 0)
        end = self.starts[number] - 1 if number < len(self.starts) else len(self.text)
        if end > start and self.text[end - 1] == "\r" and number < len(self.starts):
            end -= 1
        return self.text[start:end]

    def line_end(self, number: int) -> int:
        """The column just after the last character of line ``number`` (before CR LF)."""
        return len(self.line(number)) + 1

    def offset(self, line: int, col: int) -> int:
        """The offset of (line, col); raises :class:`OverlapError` outside the text."""
        starts = self.starts
        if 1 < line < len(starts) and col >= 1:  # neither the first line (BOM) nor the last: most calls
            at = starts[line - 1] + col - 1
            if at < starts[line]:  # at most the line's LF
                return at
        if not 1 <= line <= len(self.starts) or col < 1:
            raise OverlapError(f"position {line}:{col} is outside the text")
        start = self.starts[line - 1] + (self.base if line == 1 else 0)
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        if start + col - 1 > end:
            raise OverlapError(f"position {line}:{col} is past the end of line {line}")
        return start + col - 1

    def inside(self, span: Span) -> bool:
        """Whether ``span`` lies in the text, start before end."""
        try:
            return self.offset(span.line, span.col) <= self.offset(span.end_line, span.end_col)
        except OverlapError:
            return False

    def slice(self, span: Span) -> str:
        return self.text[self.offset(span.line, span.col):self.offset(span.end_line, span.end_col)]


@lru_cache(maxsize=8)
def text_index(text: str) -> TextIndex:
    """The index of ``text``, cached: one file's thousands of findings share it (a ``str`` caches
    its hash, so a hit costs an identity check)."""
    return TextIndex(text)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with ``edits`` applied (all of one file; any order).

    Edits are sorted by position; insertions at the same point keep the order given. Edits that
    overlap (or an insertion strictly inside a replaced range, or a span outside the text) raise
    :class:`OverlapError` and nothing is applied: choose the fixes of a pass with
    :func:`select_non_overlapping` first.
    """
    index = text_index(text)
    placed = []
    for order, edit in enumerate(edits):
        span = edit.span
        start, end = index.offset(span.line, span.col), index.offset(span.end_line, span.end_col)
        if end < start:
            raise OverlapError(f"edit at {span.line}:{span.col} ends before it starts")
        placed.append((start, end, order, edit.text))
    placed.sort()
    newline = index.newline
    out = []
    last = 0
    for start, end, _, new in placed:
        if start < last:
            raise OverlapError(f"edits overlap at offset {start}")
        out.append(text[last:start])
        if "\n" in new:
            new = new.replace("\r\n", "\n")
            if newline != "\n":
                new = new.replace("\n", newline)
        out.append(new)
        last = end
    out.append(text[last:])
    return "".join(out)


def _conflict(a: tuple[tuple[int, int], tuple[int, int]], b: tuple[tuple[int, int], tuple[int, int]]) -> bool:
    (a0, a1), (b0, b1) = a, b
    if a0 == a1 and b0 == b1:  # two insertions: only at the same point (their order is unknown)
        return a0 == b0
    if a0 == a1:  # an insertion strictly inside a replaced range
        return b0 < a0 < b1
    if b0 == b1:
        return a0 < b0 < a1
    return a0 < b1 and b0 < a1


def select_non_overlapping(fixes: Sequence[Fix]) -> tuple[list[Fix], list[Fix]]:
    """Split ``fixes`` (in the order given: earlier ones win) into those that can be applied in
    one pass and those deferred to the next: a fix is deferred whole when any of its edits
    overlaps an edit of a fix taken before it (same file), or inserts at the very point another
    taken fix inserts at (whose text goes first would be a guess). Adjacent edits do not conflict.
    """
    taken: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    applied: list[Fix] = []
    deferred: list[Fix] = []
    for fix in fixes:
        ranges = [(edit.path, ((edit.span.line, edit.span.col), (edit.span.end_line, edit.span.end_col)))
                  for edit in fix.edits]
        if any(_conflict(r, other) for path, r in ranges for other in taken.get(path, ())):
            deferred.append(fix)
            continue
        for path, r in ranges:
            taken.setdefault(path, []).append(r)
        applied.append(fix)
    return applied, deferred


def apply_fixes(text: str, path: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix], list[Fix]]:
    """Apply to ``text`` (the file ``path``) every fix of ``fixes`` that fits in one pass: returns
    the new text, the fixes applied and the fixes deferred (see :func:`select_non_overlapping`).
    Edits of other files in a fix are not applied here; a fix with edits in several files is
    applied by the caller file by file after the same selection."""
    applied, deferred = select_non_overlapping(fixes)
    edits = [edit for fix in applied for edit in fix.edits if edit.path == path]
    return apply_edits(text, edits), applied, deferred


def edit_regions(text: str, edits: Iterable[Edit]) -> list[tuple[int, int, int, int]]:
    """Where each edit of :func:`apply_edits` stands: (start, end) of the range it replaces in
    ``text`` and (start, end) of its text in the result, as character offsets, in order."""
    index = text_index(text)
    placed = []
    for order, edit in enumerate(edits):
        span = edit.span
        placed.append((index.offset(span.line, span.col), index.offset(span.end_line, span.end_col), order, edit.text))
    placed.sort()
    newline = index.newline
    regions = []
    gained = 0
    for start, end, _, new in placed:
        if "\n" in new:
            new = new.replace("\r\n", "\n")
            if newline != "\n":
                new = new.replace("\n", newline)
        regions.append((start, end, start + gained, start + gained + len(new)))
        gained += len(new) - (end - start)
    return regions
