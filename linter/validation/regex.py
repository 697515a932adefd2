"""Schema ``pattern``s matched the way the API server matches them: RE2, in linear time.

Kubernetes evaluates a CRD's ``pattern`` with Go's ``regexp`` (RE2 syntax and semantics: no
backtracking, so no input takes more than linear time; ``\\d`` and ``\\w`` are ASCII). Python's
``re`` backtracks: ``^([a-z0-9]+-?)*[a-z0-9]$`` against forty ``a``s and a ``_`` would run for
hours, and a pull request controls both the CRD and the object. So every schema pattern is
compiled with ``google-re2`` (Google's RE2 itself). A pattern RE2 cannot compile (a lookahead, a
backreference: constructs the API server refuses in a CRD too) gives None: the value is *not
checked* against it, which SCH002 says in an info-level finding, never a guess.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print each compile error to stderr
_OPTIONS.never_capture = True  # only "does it match" is asked


@lru_cache(maxsize=4096)
def searcher(pattern: str) -> Callable[[str], object] | None:
    """The ``search`` of ``pattern`` compiled by RE2 (unanchored, as JSON Schema's ``pattern``), or
    None when RE2 cannot compile it."""
    try:
        return re2.compile(pattern, options=_OPTIONS).search
    except (re2.error, TypeError, ValueError):
        return None


def matches(pattern: str, text: str) -> bool:
    """Whether ``text`` matches ``pattern`` somewhere (``pattern`` must compile: :func:`searcher`)."""
    search = searcher(pattern)
    return search is not None and search(text) is not None
