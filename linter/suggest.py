"""``did you mean …?``: the names a misspelt one is closest to.

One place imports :mod:`difflib`, and only when a name is wrong: a run with no unknown name
(most one-file runs) never loads it.
"""

from __future__ import annotations

from typing import Iterable


def close_matches(word: str, possibilities: Iterable[str], n: int = 1, cutoff: float = 0.75) -> list[str]:
    """:func:`difflib.get_close_matches` of ``word`` among ``possibilities`` (best first)."""
    import difflib

    return difflib.get_close_matches(word, list(possibilities), n=n, cutoff=cutoff)
