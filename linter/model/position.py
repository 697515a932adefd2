"""Positions: every span in mlops-lint is 1-based, lines and columns (Unicode code points).

Parsers hand out 0-based marks (PyYAML, ruamel.yaml, dockerfile parsers); they are converted
here, once. ``end_col`` is the column *after* the last character, as SARIF and GitHub expect.
"""

from __future__ import annotations

from typing import NamedTuple


class Span(NamedTuple):
    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def from_marks(cls, start_line0: int, start_col0: int, end_line0: int, end_col0: int) -> "Span":
        """Build a span from 0-based parser marks (end is exclusive, as parsers give it)."""
        return cls(start_line0 + 1, start_col0 + 1, end_line0 + 1, end_col0 + 1)

    @classmethod
    def point(cls, line: int, col: int = 1, length: int = 1) -> "Span":
        return cls(line, col, line, col + max(length, 1))

    def __str__(self) -> str:  # pragma: no cover - debugging aid
        return f"{self.line}:{self.col}-{self.end_line}:{self.end_col}"


FILE_START = Span(1, 1, 1, 2)
