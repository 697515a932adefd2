"""The text of a JSON report: what ``json.dumps(data, indent=2, ensure_ascii=False)`` gives, written
by orjson wherever orjson writes the same characters.

CPython has no C encoder for indented output: ``json.dumps(..., indent=2)`` runs the pure-Python
one, some 0.2 s on a SARIF log of 7,000 findings, which orjson (compiled) writes in 0.01 s. The
two write the same text for dicts, lists and tuples of str, int, bool and None, those exact types:
keys in insertion order, the same escapes (``\\n``, ``\\"``, ``\\u001b`` …; non-ASCII text, DEL, C1
controls and U+2028/U+2029 as they are), the same layout (``{}`` and ``[]`` when empty). Where
such data still differs, orjson raises and ``json`` writes: a lone surrogate (``"\\ud800"``, kept
as it is in the str, as before), an int beyond 64 bits, a key that is not exactly a str (``{1: …}``
becomes ``"1"``).

Any other type is never given to orjson, which would write it otherwise or where ``json`` raises:
a float (``1e16`` or ``1e-7`` for ``1e+16`` and ``1e-07``, ``null`` for NaN), an Enum or a UUID, a
subclass of str, int, dict or list, a dataclass; nor nesting past 254 levels (orjson's limit), nor
a cycle. :func:`_plain` checks first, and such data goes to ``json``, which writes it or raises as
it did before. Reports are plain data, so they take the fast path (``tests/test_jsontext.py``
checks that, each case above, and the equality on random data).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_SCALARS = frozenset({str, int, bool, type(None)})
_CONTAINERS = frozenset({dict, list, tuple})
_PLAIN = _SCALARS | _CONTAINERS
_MAX_DEPTH = 254  # orjson 3.13 refuses 255 nested containers (3.8: 256), and so a cycle


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` holds only types that orjson writes as ``json`` does (dict keys are left to
    orjson: it refuses any but exact str ones)."""
    kind = type(value)
    if kind is dict:
        items = value.values()
    elif kind is list or kind is tuple:
        items = value
    else:
        return kind in _SCALARS
    if depth >= _MAX_DEPTH:
        return False
    for item in items:
        kind = type(item)
        if kind not in _SCALARS and (kind not in _CONTAINERS or not _plain(item, depth + 1)):
            return False
    return True


def dumps(data: Any) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)``, the same str (or the same exception)."""
    if _plain(data):
        try:
            return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:  # a lone surrogate, an int beyond 64 bits
            pass
    return json.dumps(data, indent=2, ensure_ascii=False)
