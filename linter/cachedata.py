"""What the cache folder holds, as JSON that can build data and nothing else.

The result cache (:mod:`linter.cache`) and the rule index (:mod:`linter.ruleindex`) live in a
folder that CI restores from elsewhere (actions/cache) and that other users may share, so a file
there is input from anyone. They are JSON (written and read by orjson): reading one calls no
constructor, method or import that the file names, only this module's own builders.

Values are JSON as they are where JSON has them (``str``, ``bool``, ``None``, 64-bit ``int``,
finite ``float``, ``list``); everything else is a one-member object whose member name says what
it is: ``{"T": [...]}`` a tuple, ``{"D": [[k, v], ...]}`` a dict, ``{"S": [l, c, el, ec]}`` a
:class:`~linter.model.position.Span`, ``{"C": "module:Class", "V": [...]}`` a record of
mlops-lint's own modules (``linter.*``, built-in ``rules.*``) with its fields in order, and so on
(:func:`encode`). A record (a :class:`msgspec.Struct`, whose ``__init__`` only stores its fields)
is built only after every field's value has been checked against the field's type
annotation (:func:`checker`): a file of the right syntax but the wrong shape is :class:`Invalid`,
which the caller treats as a miss. :func:`encode` refuses (:class:`Invalid`) whatever it could
not give back exactly, so an outcome that would not read back equal is never stored.
"""

from __future__ import annotations

import os
import math
import stat
import sys
import tempfile
import types
import typing
from collections import abc
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq

INT_MIN, INT_MAX = -(2 ** 63), 2 ** 63 - 1


class Invalid(ValueError):
    """A value this format cannot hold, or data that is not what it says it is."""


def _is_int(value: Any) -> bool:
    return type(value) is int and INT_MIN <= value <= INT_MAX


# ---------------------------------------------------------------------------------------------
# encode: Python value -> JSON-ready value (refuses what it cannot give back exactly)


def encode(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if INT_MIN <= value <= INT_MAX:
            return value
        raise Invalid("an integer beyond 64 bits")
    if kind is float:
        return value if math.isfinite(value) else {"F": repr(value)}
    if kind is list:
        return [encode(item) for item in value]
    if kind is tuple:
        return {"T": [encode(item) for item in value]}
    if kind is Span:
        if all(_is_int(part) for part in value):
            return {"S": list(value)}
        raise Invalid("a span of non-integers")
    if kind is dict:
        return {"D": [[encode(k), encode(v)] for k, v in value.items()]}
    if kind is frozenset:
        return {"Z": [encode(item) for item in value]}
    if kind is set:
        return {"E": [encode(item) for item in value]}
    if kind is YMap:
        return {"M": [encode(value.span), encode(value.kspans), encode(value.vspans), encode(dict(value))]}
    if kind is YSeq:
        return {"Q": [encode(value.span), encode(value.ispans), encode(list(value))]}
    if kind is Fraction:
        return {"R": [encode(value.numerator), encode(value.denominator)]}
    if kind is type or isinstance(value, types.GenericAlias):
        name = _TYPE_NAMES.get(value)
        if name is None:
            raise Invalid(f"the type {value!r}")
        return {"Y": name}
    name = f"{kind.__module__}:{kind.__qualname__}"
    spec = _spec(name)
    if spec is None or spec.cls is not kind:
        raise Invalid(f"a {kind.__module__}.{kind.__qualname__}")
    try:
        return {"C": name, "V": spec.encode(value)}
    except Invalid:  # a field that does not hold what its annotation says: each value tagged
        return {"C": name, "G": [encode(getattr(value, field)) for field in spec.names]}


# option types a rule declares (RuleMeta.options): a fixed table, by name
_SIMPLE = (int, str, bool, float, bytes, list, dict, tuple, set, frozenset, type(None))
_TYPES: dict[str, Any] = {t.__name__: t for t in _SIMPLE}
_TYPES.update({f"list[{t.__name__}]": list[t] for t in (int, str, bool, float)})
_TYPES.update({f"dict[str, {t.__name__}]": dict[str, t] for t in (int, str, bool, float)})
_TYPE_NAMES = {value: name for name, value in _TYPES.items()}


# ---------------------------------------------------------------------------------------------
# decode: JSON value -> Python value, every record field checked against its annotation


def decode(data: Any) -> Any:
    kind = type(data)
    if kind is str or kind is int or kind is bool or data is None or kind is float:
        return data
    if kind is list:
        return [decode(item) for item in data]
    if kind is not dict or len(data) != (2 if "C" in data else 1):
        raise Invalid("not a value of this format")
    if "C" in data:
        spec = _spec(data["C"]) if type(data["C"]) is str else None
        if spec is None:
            raise Invalid(f"not a record of mlops-lint: {str(data.get('C'))[:80]!r}")
        if "V" in data:
            return spec.decode(data["V"])
        fields = data.get("G")
        if type(fields) is not list or len(fields) != len(spec.names):
            raise Invalid(f"a {spec.cls.__qualname__} of the wrong shape")
        values = [decode(raw) for raw in fields]
        if not all(check(value) for check, value in zip(spec.checks, values)):
            raise Invalid(f"a {spec.cls.__qualname__} of the wrong shape")
        return spec.build(values)
    (tag, body), = data.items()
    if tag == "T":
        return tuple(decode(_list(body)))
    if tag == "S":
        return span(body)
    if tag == "D":
        out = {}
        for pair in _list(body):
            if type(pair) is not list or len(pair) != 2:
                raise Invalid("a dict item that is no pair")
            out[_hashable(decode(pair[0]))] = decode(pair[1])
        return out
    if tag == "Z" or tag == "E":
        items = [_hashable(item) for item in decode(_list(body))]
        return frozenset(items) if tag == "Z" else set(items)
    if tag == "M":
        parts = _list(body, 4)
        node = YMap(span(parts[0]["S"] if type(parts[0]) is dict and "S" in parts[0] else None))
        items, kspans, vspans = decode(parts[3]), decode(parts[1]), decode(parts[2])
        if not (type(items) is dict and all(type(k) is str for k in items) and _spans(kspans) and _spans(vspans)):
            raise Invalid("a mapping node of the wrong shape")
        node.update(items)
        node.kspans, node.vspans = kspans, vspans
        return node
    if tag == "Q":
        parts = _list(body, 3)
        node = YSeq(span(parts[0]["S"] if type(parts[0]) is dict and "S" in parts[0] else None))
        ispans, items = decode(parts[1]), decode(parts[2])
        if type(ispans) is not list or not all(type(s) is Span for s in ispans) or type(items) is not list:
            raise Invalid("a sequence node of the wrong shape")
        node.extend(items)
        node.ispans = ispans
        return node
    if tag == "R":
        numerator, denominator = _list(body, 2)
        if not (_is_int(numerator) and _is_int(denominator)) or denominator <= 0:
            raise Invalid("a fraction of the wrong shape")
        return Fraction(numerator, denominator)  # two 64-bit integers: bounded work
    if tag == "F":
        if body not in ("nan", "inf", "-inf"):
            raise Invalid("a float of the wrong shape")
        return float(body)
    if tag == "Y":
        if type(body) is not str or body not in _TYPES:
            raise Invalid("an unknown type")
        return _TYPES[body]
    raise Invalid(f"an unknown tag {tag[:20]!r}")


def span(data: Any) -> Span:
    if type(data) is list and len(data) == 4 and all(type(part) is int for part in data):
        return tuple.__new__(Span, data)
    raise Invalid("a span of the wrong shape")


def _list(data: Any, length: int | None = None) -> list:
    if type(data) is not list or (length is not None and len(data) != length):
        raise Invalid("not a list of the expected length")
    return data


def _spans(value: Any) -> bool:
    return type(value) is dict and all(type(k) is str and type(s) is Span for k, s in value.items())


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise Invalid("an unhashable key") from None
    return value


# ---------------------------------------------------------------------------------------------
# records: which ones, and what each field may hold


def _allowed_module(name: str) -> bool:
    """mlops-lint's own modules: already imported, or a model module or built-in rule module
    (which the run imports anyway; none has import-time effects). Never ``__main__``-like."""
    if name in sys.modules:
        return name.split(".")[0] == "mlops_lint"
    parts = name.split(".")
    return (len(parts) >= 3 and parts[:2] in (["mlops_lint", "model"], ["mlops_lint", "rules"])) and not any(
        part.startswith("_") or not part.isidentifier() for part in parts)


class _Spec:
    """How one record is written and read: each field by its annotation (:func:`_codec`), as
    a row of JSON values in field order."""

    __slots__ = ("cls", "names", "checks", "encoders", "decoders")

    def __init__(self, cls: type):
        hints = typing.get_type_hints(cls)
        self.cls = cls
        self.names = cls.__struct_fields__
        self.checks = tuple(checker(hints.get(name, Any)) for name in self.names)
        codecs = [_codec(hints.get(name, Any)) for name in self.names]
        self.encoders = tuple(c[0] for c in codecs)
        self.decoders = tuple(c[1] for c in codecs)

    def encode(self, value: Any) -> list:
        return [enc(getattr(value, name)) for name, enc in zip(self.names, self.encoders)]

    def decode(self, row: Any) -> Any:
        if type(row) is not list or len(row) != len(self.names):
            raise Invalid(f"a {self.cls.__qualname__} of the wrong shape")
        return self.build([dec(raw) for dec, raw in zip(self.decoders, row)])

    def build(self, values: list) -> Any:
        """The instance, its fields checked (a record's ``__init__`` stores them and nothing else:
        :func:`_is_record`)."""
        return self.cls(*values)


_SPECS: dict[str, _Spec | None] = {}


def _spec(name: str) -> _Spec | None:
    """How to write and read the record ``module:Qualname`` of mlops-lint, or None."""
    if name in _SPECS:
        return _SPECS[name]
    found = None
    module_name, _, qualname = name.partition(":")
    if qualname.isidentifier() and _allowed_module(module_name):
        try:
            import importlib

            module = sys.modules.get(module_name) or importlib.import_module(module_name)
            cls = vars(module).get(qualname)
            if _is_record(cls) and cls.__module__ == module_name:
                found = _Spec(cls)
        except Exception:  # noqa: BLE001 - a class this format cannot describe is not stored
            found = None
    if len(_SPECS) < 4096:
        _SPECS[name] = found
    return found


def _is_record(cls: Any) -> bool:
    """A :class:`msgspec.Struct` class without ``__post_init__``: calling it stores the values
    given, in field order, and runs nothing else of the class."""
    return isinstance(cls, type) and hasattr(cls, "__struct_fields__") and not hasattr(cls, "__post_init__")


def _plain(kind: type) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    def enc(value: Any) -> Any:
        if type(value) is not kind or (kind is int and not INT_MIN <= value <= INT_MAX):
            raise Invalid(f"not a {kind.__name__}")
        return value

    def dec(value: Any) -> Any:
        if type(value) is not kind:
            raise Invalid(f"not a {kind.__name__}")
        return value
    return enc, dec


def _codec(hint: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """(encode, decode) of a field's value by its annotation: strings, numbers and containers of
    them as plain JSON, a nested record as its row; anything looser (``Any``, a bare
    ``tuple``, a union of several types) tagged as :func:`encode` writes it. A value that does
    not hold what the annotation says is Invalid either way."""
    if hint in (str, int, bool):
        return _plain(hint)
    if hint is Span:
        def enc_span(value: Any) -> list:
            if type(value) is not Span or not all(_is_int(part) for part in value):
                raise Invalid("not a span")
            return list(value)
        return enc_span, span
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if (origin is typing.Union or origin is types.UnionType) and len(args) == 2 and type(None) in args:
        enc_item, dec_item = _codec(args[0] if args[1] is type(None) else args[1])
        return (lambda value: None if value is None else enc_item(value),
                lambda raw: None if raw is None else dec_item(raw))
    if origin in (list, tuple, frozenset) and (
            (origin is not tuple and len(args) == 1) or (origin is tuple and len(args) == 2 and args[1] is Ellipsis)):
        enc_item, dec_item = _codec(args[0])
        plain = args[0] in (str, int, bool)

        def enc_items(value: Any) -> list:
            if type(value) is not origin:
                raise Invalid(f"not a {origin.__name__}")
            return [enc_item(item) for item in value]

        def dec_items(raw: Any) -> Any:
            if type(raw) is not list:
                raise Invalid(f"not a {origin.__name__}")
            items = raw if plain and all(type(item) is args[0] for item in raw) else [dec_item(item) for item in raw]
            return items if origin is list else origin(items)
        return enc_items, dec_items
    if origin is dict and len(args) == 2 and args[0] is str:
        enc_value, dec_value = _codec(args[1])
        plain = args[1] in (str, int, bool)

        def enc_map(value: Any) -> dict:
            if type(value) is not dict or not all(type(key) is str for key in value):
                raise Invalid("not a dict of strings")
            return {key: enc_value(item) for key, item in value.items()}

        def dec_map(raw: Any) -> dict:
            if type(raw) is not dict:
                raise Invalid("not a dict")
            if plain and all(type(item) is args[1] for item in raw.values()):
                return raw
            return {key: dec_value(item) for key, item in raw.items()}
        return enc_map, dec_map
    if _is_record(hint):
        name = f"{hint.__module__}:{hint.__qualname__}"

        def enc_class(value: Any) -> list:
            spec = _spec(name)
            if spec is None or type(value) is not hint:
                raise Invalid(f"not a {hint.__qualname__}")
            return spec.encode(value)

        def dec_class(raw: Any) -> Any:
            spec = _spec(name)
            if spec is None:
                raise Invalid(f"not a {hint.__qualname__}")
            return spec.decode(raw)
        return enc_class, dec_class
    check = checker(hint)

    def dec_tagged(raw: Any) -> Any:
        value = decode(raw)
        if not check(value):
            raise Invalid("a value of the wrong type")
        return value
    return encode, dec_tagged


def _anything(value: Any) -> bool:
    return True


def checker(hint: Any) -> Callable[[Any], bool]:
    """A test of a decoded value against a type annotation (containers item by item)."""
    if hint is Any or hint is object:
        return _anything
    if hint is None or hint is type(None):
        return lambda value: value is None
    if hint is float:
        return lambda value: type(value) in (float, int)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        checks = [checker(arg) for arg in args]
        return lambda value: any(check(value) for check in checks)
    if origin is typing.Literal:
        return lambda value: value in args
    if origin is None:
        if hint is Span:
            return lambda value: type(value) is Span
        if isinstance(hint, type):
            return lambda value: isinstance(value, hint)
        return _anything  # a TypeVar, a Callable, ...: nothing the decoder builds runs code
    if not isinstance(origin, type):
        return _anything
    if origin is tuple and args and args[-1] is not Ellipsis:
        checks = [checker(arg) for arg in args]
        return lambda value: (isinstance(value, tuple) and len(value) == len(checks)
                              and all(check(item) for check, item in zip(checks, value)))
    if issubclass(origin, abc.Mapping) and len(args) == 2:
        key, item = checker(args[0]), checker(args[1])
        return lambda value: isinstance(value, origin) and all(key(k) and item(v) for k, v in value.items())
    if issubclass(origin, (abc.Sequence, abc.Set)) and args and (len(args) == 1 or args[-1] is Ellipsis):
        item = checker(args[0])
        return lambda value: isinstance(value, origin) and not isinstance(value, str) and all(map(item, value))
    return lambda value: isinstance(value, origin)


# ---------------------------------------------------------------------------------------------
# JSON text: orjson for large files (the result cache of a big project), the standard library's
# C scanner and encoder for small ones (the rule index, a small project's cache), so that a
# one-file run does not import orjson (about 5 ms) for a few kilobytes

LARGE = 1 << 20

# Decoded JSON takes more memory than its text: about twice for the entries mlops-lint writes,
# but ``[],`` is a 56-byte list for 3 bytes, 30 times, and ``"ab",`` a 51-byte string for 5. Text
# holding more lists, objects and strings (``[``, ``{`` and every second ``"`` counted) than one
# per MIN_BYTES_PER_VALUE bytes is refused before it is decoded, so a planted entry costs at most
# about ten times its size, not thirty. Numbers, ``true``, ``false`` and ``null`` are not counted:
# each costs at most 36 bytes (a 28-byte int and its slot) for at least 4 bytes of text with its
# comma (``0,`` to ``256,`` are Python's shared integers: only the 8-byte slot), so text made of
# them stays under ten times too; the result cache's index columns are mostly such numbers.
MIN_BYTES_PER_VALUE = 6
_UNCOUNTED = 4096  # small texts are decoded without counting: their cost is small whatever they hold


def _values(data: bytes | bytearray | str) -> int:
    """The values of ``data`` that cost far more decoded than as text: lists, objects, strings."""
    if isinstance(data, str):
        return data.count("[") + data.count("{") + data.count('"') // 2
    return data.count(b"[") + data.count(b"{") + data.count(b'"') // 2


def loads(data: bytes | bytearray | str) -> Any:
    """The JSON value of a cache text; :class:`Invalid` when it holds more lists, objects and
    strings than MIN_BYTES_PER_VALUE allows (counted before anything is decoded)."""
    if len(data) > _UNCOUNTED and _values(data) > len(data) // MIN_BYTES_PER_VALUE:
        raise Invalid("a cache text holding more JSON values than its size allows")
    if len(data) >= LARGE:
        import orjson

        return orjson.loads(data)
    import json

    return json.loads(data)


def dumps(value: Any) -> bytes:
    """JSON text of ``value`` (made of JSON values only); a string that is no UTF-8 (a file name
    read with surrogate escapes) is written as JSON's ``\\udcxx`` escape."""
    import json

    text = json.dumps(value, ensure_ascii=False, check_circular=False, allow_nan=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, check_circular=False, allow_nan=False, separators=(",", ":")).encode("ascii")


def dumps_large(value: Any) -> bytes:
    """:func:`dumps`, by orjson (about 10x faster on a large cache)."""
    import orjson

    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:  # a surrogate-escaped file name
        return dumps(value)


# ---------------------------------------------------------------------------------------------
# Entry files: how the result cache and the rule index read and write theirs

TEMP_SUFFIX = ".tmp"
MAX_BYTES = 1 << 30  # a cache file past this is not read (nor written): 10,000 files take about 40 MB


def read_entry(path: Path, limit: int) -> bytearray | None:
    """The bytes of a cache file: a regular file of at most ``limit`` bytes, opened without following a
    link and without blocking (a FIFO planted under the name opens at once, and is then refused)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        buffer = bytearray(info.st_size + 1)  # one byte more: a file that grew while read is refused
        done = 0
        with memoryview(buffer) as view:
            while done < len(buffer):
                count = os.readv(descriptor, [view[done:]])
                if not count:
                    break
                done += count
        if done != info.st_size:
            return None
        del buffer[done:]
        return buffer
    except OSError:
        return None
    finally:
        os.close(descriptor)


def write_entry(folder: Path, name: str, data: bytes, prefix: str) -> bool:
    """Write ``folder/name`` atomically: a new temporary file (``O_CREAT|O_EXCL|O_NOFOLLOW``, as
    ``tempfile.mkstemp`` makes it, mode 0600) renamed over the name (a rename replaces a link
    planted there; it never writes through it). False when it could not."""
    if len(data) > MAX_BYTES:
        return False
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{prefix}", suffix=TEMP_SUFFIX, dir=folder)
    except OSError:
        return False
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, folder / name)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
