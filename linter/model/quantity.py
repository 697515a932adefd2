"""Kubernetes resource quantities, parsed exactly (``500m``, ``1.5``, ``8Gi``, ``8G``, ``1e3``).

The grammar is Kubernetes' own (``k8s.io/apimachinery/pkg/api/resource``): a signed decimal
number, then a binary-SI suffix (``Ki`` … ``Ei``), a decimal-SI suffix (``n u m k M G T P E``) or
a decimal exponent (``e3``, ``E-2``). Values are :class:`fractions.Fraction`, so ``0.1 + 0.2``
compares as it should and ``1Gi`` is exactly 1073741824.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
MAX_QUANTITY_CHARS = 1000  # far beyond any real quantity; below Python's 4300-digit int conversion limit
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")


def parse_quantity(value: Any) -> Fraction | None:
    """The exact value of a quantity, or ``None`` if it is not one (booleans are not)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return Fraction(str(value))
    if not isinstance(value, str):
        return None
    return _parse_text(value)


@lru_cache(maxsize=4096)
def _parse_text(value: str) -> Fraction | None:
    """A quantity string's value (memoised: a project repeats a few dozen quantities; Fractions
    are immutable)."""
    if len(value) > MAX_QUANTITY_CHARS:  # Python refuses to convert such digit strings (ValueError)
        return None
    match = _QUANTITY.match(value.strip())
    if match is None:
        return None
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    exponent = int(suffix[1:])
    if abs(exponent) > 64:
        return None
    return number * Fraction(10) ** exponent


def format_quantity(value: Fraction) -> str:
    """A short human form: whole numbers as they are, fractions to three decimals."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.3f}".rstrip("0").rstrip(".")


def is_whole(value: Fraction) -> bool:
    return value.denominator == 1


_BINARY_DESCENDING = sorted(_BINARY.items(), key=lambda item: -item[1])
_DECIMAL_DESCENDING = [(suffix, factor) for suffix, factor in sorted(_DECIMAL.items(), key=lambda item: -item[1])
                       if factor > 1]


def format_bytes(value: int, like: Any = None) -> str:
    """A whole number of bytes as a quantity a person would write: the largest suffix that divides
    it exactly (``8589934592`` -> ``8Gi``), binary first unless ``like`` (the quantity it derives
    from) is written with a decimal suffix (``1500M`` beside ``3G``); plain digits otherwise."""
    decimal_first = isinstance(like, str) and bool(re.search(r"[kMGTPE]$", like.strip()))
    families = (_DECIMAL_DESCENDING, _BINARY_DESCENDING) if decimal_first else (_BINARY_DESCENDING, _DECIMAL_DESCENDING)
    for family in families:
        for suffix, factor in family:
            if value >= factor and value % factor == 0:
                return f"{value // factor}{suffix}"
    return str(value)
