"""Bounds on what the model works out from hostile input: past them a value is unknown.

Every byte the linter reads may come from someone who wants the gate to hang or run out of
memory, so what the loaders and the model *derive* (an expanded variable, a number read from a
string, a nested JSON array) is bounded here, in one place, far above anything a real file holds.
"""

from __future__ import annotations

# An expanded ARG/ENV/shell variable longer than this is unknown: forty levels of
# ``A1=${A0}${A0}`` double the value each time (2^40 characters), and every file under the root
# is read for context, so one such file would take down runs that target other files.
MAX_VALUE_CHARS = 64 * 1024

# What expansions add to one file's values in total (the characters beyond the text they were
# expanded from): each value is bounded above, but ``C_i="${B}-i"`` lines, each a few bytes, would
# otherwise each hold a value of MAX_VALUE_CHARS. Past it a further amplified value is unknown.
MAX_EXPANDED_CHARS = 1024 * 1024

# A number written with more digits than this is not a number the model uses (Python refuses to
# convert more than 4,300 digits, and no quantity, replica count or port needs a tenth of them).
MAX_NUMBER_DIGITS = 100

# JSON arrays (ENTRYPOINT ["..."]) nested deeper than this are not read as exec form.
MAX_JSON_DEPTH = 64


def whole_number(text: str) -> int | None:
    """``text`` (digits only) as an int, None when it is not digits or has more than
    MAX_NUMBER_DIGITS of them (such a count is never valid, and Python refuses to convert or
    print ints past 4,300 digits)."""
    return int(text) if text.isdigit() and len(text) <= MAX_NUMBER_DIGITS else None


def json_too_deep(text: str) -> bool:
    """Whether JSON ``text`` may nest deeper than MAX_JSON_DEPTH (brackets counted, strings
    included: an upper bound), so that decoding it could exhaust the interpreter's stack."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest > MAX_JSON_DEPTH


class ExpansionBudget:
    """What one file's expansions may still add (MAX_EXPANDED_CHARS in all, see above)."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_EXPANDED_CHARS

    def allows(self, written: int, expanded: int) -> bool:
        """Whether a value of ``expanded`` characters, expanded from ``written`` characters of
        text, may be kept (its growth is then counted); False once the budget would be exceeded."""
        grown = expanded - written
        if grown <= 0:
            return True
        if grown > self.left:
            return False
        self.left -= grown
        return True
