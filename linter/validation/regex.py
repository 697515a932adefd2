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

import re
from functools import lru_cache
from typing import Any, Callable

from mlops_lint.validation.builtin import QUANTITY_PATTERN


# Patterns of our own (not of a CRD a pull request brings) whose meaning is the same in Python's
# ``re`` and in RE2 (explicit ASCII classes, no nested unbounded repetition, so no backtracking
# blow-up): matched by ``re``, whose C search costs about a tenth of a call through google-re2's
# Python wrapper. The Kubernetes quantity pattern is in every built-in schema and most CRDs.
_TRUSTED = frozenset({QUANTITY_PATTERN})
_MEMO_SIZE = 4096  # answers kept per pattern: manifests repeat their values ("1", "8Gi", "Always")


@lru_cache(maxsize=1)
def _re2() -> tuple[Any, Any]:
    """google-re2 and its options, imported by the first pattern not of our own (a run whose
    schemas hold none, as a one-file run on a built-in kind, never loads it)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print each compile error to stderr
    options.never_capture = True  # only "does it match" is asked
    return re2, options


@lru_cache(maxsize=4096)
def searcher(pattern: str) -> Callable[[str], object] | None:
    """A function telling whether a string matches ``pattern`` somewhere (unanchored, as JSON
    Schema's ``pattern``; truthy or None, like ``re``'s ``search``), compiled by RE2, or None when
    RE2 cannot compile it. Answers are remembered per pattern for the first strings asked."""
    if pattern in _TRUSTED:
        return re.compile(pattern).search
    re2, options = _re2()
    try:
        search = re2.compile(pattern, options=options).search
    except (re2.error, TypeError, ValueError):
        return None
    answers: dict[str, bool] = {}

    def matches_(text: str) -> object:
        found = answers.get(text)
        if found is None:
            found = search(text) is not None
            if len(answers) < _MEMO_SIZE:
                answers[text] = found
        return True if found else None

    return matches_


@lru_cache(maxsize=256)
def finder(pattern: str) -> Any:
    """``pattern`` compiled by RE2 with its capturing groups (CEL's ``find``/``findAll`` return what
    matched), or None when RE2 cannot compile it."""
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options=options)
    except (re2.error, TypeError, ValueError):
        return None


def matches(pattern: str, text: str) -> bool:
    """Whether ``text`` matches ``pattern`` somewhere (``pattern`` must compile: :func:`searcher`)."""
    search = searcher(pattern)
    return search is not None and search(text) is not None
