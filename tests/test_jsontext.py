"""The JSON text of the reports (``linter.report.jsontext.dumps``): always the str, or the exception,
of ``json.dumps(data, indent=2, ensure_ascii=False)``, and orjson's fast path for what reports hold.

Each edge case where orjson writes otherwise (a float's exponent, NaN, an Enum, a subclass, a lone
surrogate, an int beyond 64 bits, a non-str key, deep nesting, a cycle) is checked by name; random
report-shaped data and random runs are checked by property, with orjson's own output compared too,
so a newer orjson that changed an escape or the layout would fail here.
"""

from __future__ import annotations

import enum
import json
import uuid
from dataclasses import dataclass

from msgspec.structs import replace
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_samples import REPORT_TEXT, random_results, sample_report
from strategies import FUZZ

from mlops_lint.model.position import Span
from mlops_lint.report import json_report, render, sarif
from mlops_lint.report.jsontext import _plain, dumps
from mlops_lint.result import Note, Result


def reference(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def outcome(encode, data: Any) -> tuple[str, str]:
    """``("text", str)`` or ``("raises", "TypeName: message")``."""
    try:
        return "text", encode(data)
    except (TypeError, ValueError, RecursionError) as exc:
        return "raises", f"{type(exc).__name__}: {exc}"


def orjson_text(data: Any) -> str:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


class Name(str):
    pass


class Count(int):
    pass


class Colour(enum.Enum):
    RED = 1


class Level(str, enum.Enum):
    ERROR = "error"


@dataclass
class Point:
    x: int = 1


CONTROLS = "".join(map(chr, range(0x20))) + "\x7f" + "".join(map(chr, range(0x80, 0xA0)))

# what orjson writes exactly as json does: given to orjson
PLAIN = {
    "control characters": {"m": CONTROLS},
    "escapes": ['"quoted"', "back\\slash", "a/b", "\b\f\n\r\t"],
    "line and paragraph separators": "a\u2028b\u2029c",
    "non-ASCII": "ünïcødé — ✓ 名前 🚀 \ufeff \ufffe \uffff \U0010ffff \u202eevil",
    "ints at 64 bits": [2**63 - 1, 2**63, 2**64 - 1, -(2**63), 0, -1],
    "bools and None": [True, False, None, {"t": True, "n": None}],
    "empty containers": [{}, [], {"a": {}}, {"b": []}, [[]], [{}], "", ()],
    "key order": {"z": 1, "a": 2, "m": {"y": 1, "b": 2}, "": 0, "é": 3},
    "tuples": {"span": (1, 2, (3, 4)), "empty": ()},
    "a scalar": "just text",
    "nesting at orjson's limit": nested(254),
}

# what orjson would write otherwise, or where json raises: never given to orjson
NOT_PLAIN = {
    "floats": [0.1, 1e16, 1e-7, 1.0, -0.0, 1e300, 5e-324, 123456789.123],
    "NaN and infinities": [float("nan"), float("inf"), float("-inf")],
    "an Enum": {"severity": Colour.RED},
    "a str Enum": [Level.ERROR],
    "a UUID": uuid.UUID(int=1),
    "a str subclass": {"message": Name("text")},
    "an int subclass": [Count(3)],
    "a subclass among plain items": [{"x": 1}, [Name("y")]],
    "a dataclass": {"point": Point()},
    "bytes": b"bytes",
    "a set": {1, 2},
    "nesting past orjson's limit": nested(255),  # orjson 3.8 takes 255 levels, 3.13 only 254
    "deep nesting": nested(300),
}

# plain types that orjson refuses and json writes (or raises on): orjson is tried, then json
REFUSED = {
    "a lone high surrogate": "\ud800",
    "a lone low surrogate": {"path": "bad\udcff.yaml"},
    "a surrogate pair as two code points": "\ud83d\ude80",
    "a surrogate in a key": {"\udcff": 1},
    "an int beyond 64 bits": [2**64, -(2**63) - 1, 10**400],
    "int keys": {1: "one", 2: "two"},
    "bool and None keys": {True: 1, None: 2},
    "a str subclass key": {Name("k"): 1},
    "a float key": {1.5: "x"},
}


@pytest.mark.parametrize("name", PLAIN)
def test_plain_data_is_written_by_orjson_as_json_writes_it(name: str) -> None:
    data = PLAIN[name]
    assert _plain(data)
    assert orjson_text(data) == reference(data)
    assert dumps(data) == reference(data)


@pytest.mark.parametrize("name", NOT_PLAIN)
def test_other_types_are_left_to_json(name: str) -> None:
    data = NOT_PLAIN[name]
    assert not _plain(data)
    assert outcome(dumps, data) == outcome(reference, data)


@pytest.mark.parametrize("name", REFUSED)
def test_what_orjson_refuses_is_written_by_json(name: str) -> None:
    data = REFUSED[name]
    with pytest.raises(orjson.JSONEncodeError):
        orjson_text(data)
    assert outcome(dumps, data) == outcome(reference, data)


def test_where_orjson_would_differ_it_does() -> None:
    """The reasons for the fallbacks above still hold (if orjson changes, the docs should too)."""
    assert orjson_text(1e-7) != reference(1e-7)
    assert orjson_text(float("nan")) == "null"
    for value in (Colour.RED, uuid.UUID(int=1), Point()):
        assert orjson_text(value) and outcome(reference, value)[0] == "raises"


def test_a_cycle_raises_as_json_does() -> None:
    loop: list = []
    loop.append(loop)
    mapping: dict = {}
    mapping["self"] = [mapping]
    for data in (loop, mapping):
        assert not _plain(data)
        assert outcome(dumps, data) == ("raises", "ValueError: Circular reference detected")


# ---- random data ---------------------------------------------------------------------------

TRICKY = st.sampled_from([*CONTROLS, "\u2028", "\u2029", "\ufeff", "\uffff", "\U0010ffff", "\ud800", "\udfff",
                          '"', "\\", "/", "é", "—", "🚀", "\u202e"])
CHARACTERS = st.one_of(st.characters(exclude_categories=()), TRICKY)  # lone surrogates included
TEXT = st.text(CHARACTERS, max_size=20)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-(2**63), 2**64 - 1), TEXT)
ODD_SCALARS = st.one_of(SCALARS, st.floats(), st.sampled_from([Name("n"), Count(2), Colour.RED, Level.ERROR]))
KEYS = st.one_of(TEXT, st.sampled_from(["rule", "message", "line", "$schema", "ruleId"]))


def json_data(scalars: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=6), st.lists(inner, max_size=4).map(tuple),
                                st.dictionaries(KEYS, inner, max_size=6)),
        max_leaves=40,
    )


@FUZZ
@given(json_data(SCALARS))
def test_random_plain_data_is_written_as_json_writes_it(data: Any) -> None:
    assert _plain(data)
    assert outcome(dumps, data) == outcome(reference, data)
    text = outcome(orjson_text, data)
    assert text == outcome(reference, data) or text[0] == "raises"  # orjson itself: the same, or a refusal


@FUZZ
@given(json_data(ODD_SCALARS), st.dictionaries(st.one_of(st.integers(), st.none(), st.booleans()), SCALARS, max_size=3))
def test_random_data_of_any_type_is_written_as_json_writes_it(data: Any, odd_keys: dict) -> None:
    assert outcome(dumps, data) == outcome(reference, data)
    assert outcome(dumps, [data, odd_keys]) == outcome(reference, [data, odd_keys])


# ---- the reports ---------------------------------------------------------------------------


@FUZZ
@given(st.lists(random_results(), max_size=12), st.lists(st.builds(Note, REPORT_TEXT, REPORT_TEXT), max_size=2),
       st.sampled_from(["", "/work/repo with space", "/tmp/ünï"]))
def test_reports_take_the_fast_path_and_keep_their_bytes(found: list[Result], notes: list[Note], root: str) -> None:
    report = replace(sample_report(), results=sorted(found, key=Result.sort_key), notes=notes, root=root)
    for fmt, module in (("json", json_report), ("sarif", sarif)):
        data = module.document(report)
        assert _plain(data), fmt  # orjson writes it: a report never falls back to json's Python encoder
        assert orjson_text(data) == reference(data)
        assert render(report, fmt) == reference(data) + "\n"


def test_a_lone_surrogate_in_a_message_is_written_as_json_writes_it() -> None:
    """Paths are escaped (``linter.discover.shown``) and sources decoded strictly, but a plugin's
    message could still hold one: json wrote it into the str (the write then fails), and still does."""
    odd = Result("GPU001", "gpu-limit-missing", "error", "bad \udcff name", "a.yaml", Span(1, 1, 1, 2))
    report = replace(sample_report(), results=[odd])
    assert render(report, "json") == reference(json_report.document(report)) + "\n"


def test_the_sample_reports_are_written_by_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {fmt: reference(module.document(sample_report())) + "\n" for fmt, module in (("json", json_report),
                                                                                          ("sarif", sarif))}

    def refuse(*args, **kwargs):
        raise AssertionError("json.dumps called: the report left the fast path")

    monkeypatch.setattr(json, "dumps", refuse)
    for fmt, text in expected.items():
        assert render(sample_report(), fmt) == text
