"""Records as columns: how the result cache writes a list of findings, its layout derived from the
record types.

A warm run reads every finding of the project back, so findings are not stored row by row (one
tagged value per field, :mod:`linter.cachedata`'s way) but as one JSON column per field, checked
and built by C-level passes over each column (``str.join`` of a column of strings, the set of a
column's types, ``min``/``max`` of an index column, ``map`` of the record's own constructor)
rather than by a Python loop over rows. The columns are not listed by hand: :func:`layout`
reads a :class:`msgspec.Struct`'s fields and their annotations and picks each field's
:class:`Column` by its type, nested records included (a finding's ``ObjectRef``, its
``Suppression``\\ s, its resolved ``Fix`` and that fix's ``Edit``\\ s). A record is written as
``[count, {field: column, ...}]``, keyed by field name: a field added to a record gets its
column without an edit here, and data written for another layout (a field more or less) is
:class:`~linter.cachedata.Invalid`, never values read into the wrong field.

The columns, by annotation:

- ``str``, ``int``, ``bool``, a ``Literal`` of strings: the values as a JSON list (a ``Literal``
  is checked against its values, so a planted severity is refused);
- ``Span``: four integers per value, one flat list;
- ``tuple[str | int, ...]``: a list of lists; ``tuple[A, B, C]``: ``[count, [column of A, of B, of C]]``;
- a record: its own ``[count, {field: column}]``; ``tuple[Record, ...]``: the item count of each
  value, then the items of all values as one record column;
- ``X | None`` and, at a record's top level (``interned``), every hashable type but ``Span``,
  ``int``, ``bool``: *interned*, ``[table, index of each]``, the table each distinct value once
  (as the column of ``X``), the index -1 for None. A project's findings repeat their rules,
  paths, messages and objects, so reading them builds one string per path, rule and message
  instead of one per finding, and small indices are Python's shared integers;
- anything else (``Any``, a union of several types, a mutable container of records): each value
  tagged as :func:`linter.cachedata.encode` writes it, checked against the annotation when read
  (slow, but exact).

A column refuses (``valid`` is False) whatever it could not give back exactly (a ``str``
subclass, an ``int`` beyond 64 bits, a ``bool`` where an ``int`` is declared), so what is
stored reads back equal; :meth:`Column.decode` raises Invalid (or TypeError/ValueError, which
the caller turns into Invalid) for data that could not have been written by :meth:`Column.encode`.
"""

from __future__ import annotations

import types
import typing
from itertools import chain, islice, repeat
from typing import Any, Iterable

from mlops_lint.cachedata import INT_MAX, Invalid, decode as decode_value, encode as encode_value
from mlops_lint.cachedata import checker as value_checker
from mlops_lint.model.position import Span

_INT = frozenset({int})
_STR = frozenset({str})
_BOOL = frozenset({bool})
_join = "".join


class Column:
    """How the values of one field are written as one JSON value and read back."""

    interned = False

    def valid(self, values: list) -> bool:
        """Whether every value is one this column gives back exactly."""
        raise NotImplementedError

    def encode(self, values: list) -> Any:
        """The column of ``values`` (each :meth:`valid`)."""
        raise NotImplementedError

    def decode(self, data: Any, count: int | None) -> Iterable:
        """``count`` values (None: as many as ``data`` holds; :meth:`length` tells), or Invalid."""
        raise NotImplementedError

    def length(self, data: Any) -> int:
        """How many values the column ``data`` holds (for a table, whose length is its own)."""
        if type(data) is not list:
            raise Invalid("a column that is no list")
        return len(data)


def _sized(data: Any, count: int | None, width: int = 1) -> list:
    if type(data) is not list or (count is not None and len(data) != width * count):
        raise Invalid("a column of the wrong length")
    return data


class Strings(Column):
    def __init__(self, choices: tuple[str, ...] | None = None):
        self.choices = frozenset(choices) if choices is not None else None

    def valid(self, values: list) -> bool:
        if self.choices is not None:
            return _STR.issuperset(map(type, values)) and self.choices.issuperset(values)
        return _STR.issuperset(map(type, values))

    def encode(self, values: list) -> Any:
        return values

    def decode(self, data: Any, count: int | None) -> Iterable:
        _join(_sized(data, count))  # TypeError unless every item is a string
        if self.choices is not None and not self.choices.issuperset(data):
            raise Invalid("a value outside its choices")
        return data


class Plain(Column):
    """``int`` or ``bool``: the values as they are (an ``int`` within 64 bits, never a ``bool``)."""

    def __init__(self, kind: type):
        self.kind = kind
        self.kinds = frozenset({kind})

    def valid(self, values: list) -> bool:
        return self.kinds.issuperset(map(type, values)) and (
            self.kind is not int or all(-INT_MAX <= n <= INT_MAX for n in values))

    def encode(self, values: list) -> Any:
        return values

    def decode(self, data: Any, count: int | None) -> Iterable:
        if not self.kinds.issuperset(map(type, _sized(data, count))):
            raise Invalid(f"a column of {self.kind.__name__} holding something else")
        return data


class Spans(Column):
    """Four integers per span, one flat list."""

    def valid(self, values: list) -> bool:
        return ({Span}.issuperset(map(type, values)) and _INT.issuperset(map(type, chain.from_iterable(values)))
                and all(-INT_MAX <= n <= INT_MAX for n in chain.from_iterable(values)))

    def encode(self, values: list) -> Any:
        return list(chain.from_iterable(values))

    def decode(self, data: Any, count: int | None) -> Iterable:
        if type(data) is not list or len(data) % 4:
            raise Invalid("a span column of the wrong length")
        _sized(data, count, 4)
        if not _INT.issuperset(map(type, data)):
            raise Invalid("a span holding something other than integers")
        numbers = iter(data)
        return map(tuple.__new__, repeat(Span), zip(numbers, numbers, numbers, numbers))

    def length(self, data: Any) -> int:
        return super().length(data) // 4


class Parts(Column):
    """``tuple[str | int, ...]`` (a node path): a list of lists."""

    def __init__(self, kinds: frozenset[type]):
        self.kinds = kinds

    def valid(self, values: list) -> bool:
        return ({tuple}.issuperset(map(type, values)) and self.kinds.issuperset(map(type, chain.from_iterable(values)))
                and all(-INT_MAX <= n <= INT_MAX for n in chain.from_iterable(values) if type(n) is int))

    def encode(self, values: list) -> Any:
        return [list(value) for value in values]

    def decode(self, data: Any, count: int | None) -> Iterable:
        if not ({list}.issuperset(map(type, _sized(data, count)))
                and self.kinds.issuperset(map(type, chain.from_iterable(data)))):
            raise Invalid("a tuple column of the wrong shape")
        return map(tuple, data)


class Fixed(Column):
    """``tuple[A, B, C]``: one column per position, ``[count, [column, ...]]``."""

    def __init__(self, columns: list[Column]):
        self.columns = columns

    def valid(self, values: list) -> bool:
        width = len(self.columns)
        return ({tuple}.issuperset(map(type, values)) and all(len(value) == width for value in values)
                and all(column.valid([value[i] for value in values]) for i, column in enumerate(self.columns)))

    def encode(self, values: list) -> Any:
        return [len(values), [column.encode([value[i] for value in values]) for i, column in enumerate(self.columns)]]

    def decode(self, data: Any, count: int | None) -> Iterable:
        size, parts = _record_block(data, count)
        if type(parts) is not list or len(parts) != len(self.columns):
            raise Invalid("a tuple column of the wrong shape")
        return zip(*(column.decode(part, size) for column, part in zip(self.columns, parts)))

    def length(self, data: Any) -> int:
        return _record_block(data, None)[0]


def _record_block(data: Any, count: int | None) -> tuple[int, Any]:
    if not (type(data) is list and len(data) == 2 and type(data[0]) is int and data[0] >= 0
            and (count is None or data[0] == count)):
        raise Invalid("a record column of the wrong shape")
    return data[0], data[1]


class Record(Column):
    """A record (a :class:`msgspec.Struct` whose ``__init__`` stores its fields and nothing else):
    ``[count, {field: column, ...}]``, each field's column by its annotation (:func:`column`).
    Built by mapping the class over the columns (msgspec's ``__init__``, in C)."""

    def __init__(self, cls: type, interned: bool):
        hints = typing.get_type_hints(cls)
        self.cls = cls
        self.names: tuple[str, ...] = cls.__struct_fields__
        self.columns: dict[str, Column] = {name: column(hints.get(name, Any), interned) for name in self.names}
        self.hashable = bool(cls.__struct_config__.frozen) and all(map(_hashable, self.columns.values()))

    def valid(self, values: list) -> bool:
        cls = self.cls
        return {cls}.issuperset(map(type, values)) and all(
            column.valid([getattr(value, name) for value in values]) for name, column in self.columns.items())

    def encode(self, values: list) -> Any:
        return [len(values), {name: column.encode([getattr(value, name) for value in values])
                              for name, column in self.columns.items()}]

    def decode(self, data: Any, count: int | None) -> Iterable:
        size, fields = _record_block(data, count)
        if type(fields) is not dict or fields.keys() != self.columns.keys():
            raise Invalid(f"a {self.cls.__qualname__} column of another layout")
        made = list(map(self.cls, *(column.decode(fields[name], size) for name, column in self.columns.items())))
        if len(made) != size:
            raise Invalid(f"a {self.cls.__qualname__} column of the wrong length")
        return made

    def length(self, data: Any) -> int:
        return _record_block(data, None)[0]


_COUNTS = Plain(int)


class Items(Column):
    """``tuple[Record, ...]``: ``[count of each value, the items of all values (one record column)]``."""

    def __init__(self, item: Record):
        self.item = item
        self.hashable = item.hashable

    def valid(self, values: list) -> bool:
        return {tuple}.issuperset(map(type, values)) and self.item.valid(list(chain.from_iterable(values)))

    def encode(self, values: list) -> Any:
        return [list(map(len, values)), self.item.encode(list(chain.from_iterable(values)))]

    def decode(self, data: Any, count: int | None) -> Iterable:
        if not (type(data) is list and len(data) == 2):
            raise Invalid("an item column of the wrong shape")
        counts = _COUNTS.decode(data[0], count)
        if counts and min(counts) < 0:
            raise Invalid("a negative item count")
        items = iter(self.item.decode(data[1], sum(counts)))
        return [tuple(islice(items, n)) for n in counts]

    def length(self, data: Any) -> int:
        if not (type(data) is list and len(data) == 2):
            raise Invalid("an item column of the wrong shape")
        return super().length(data[0])


class Interned(Column):
    """``[table, index of each value]``: the table each distinct value once (as ``of`` writes a
    column), -1 for None where the annotation allows it."""

    interned = True

    def __init__(self, of: Column, optional: bool):
        self.of = of
        self.optional = optional

    def valid(self, values: list) -> bool:
        if self.optional:
            values = [value for value in values if value is not None]
        return self.of.valid(values)

    def encode(self, values: list) -> Any:
        table: dict = {}
        indices = [-1 if value is None else table.setdefault(value, len(table)) for value in values]
        return [self.of.encode(list(table)), indices]

    def decode(self, data: Any, count: int | None) -> Iterable:
        if not (type(data) is list and len(data) == 2):
            raise Invalid("an interned column of the wrong shape")
        raw, indices = data
        table = list(self.of.decode(raw, None))
        if len(table) != self.of.length(raw):
            raise Invalid("a table of the wrong length")
        if not _INT.issuperset(map(type, _sized(indices, count))):
            raise Invalid("an index column holding something else")
        if indices and (min(indices) < (-1 if self.optional else 0) or max(indices) >= len(table)):
            raise Invalid("an index out of its table")
        if self.optional:
            table.append(None)
        return map(table.__getitem__, indices)

    def length(self, data: Any) -> int:
        if not (type(data) is list and len(data) == 2):
            raise Invalid("an interned column of the wrong shape")
        return super().length(data[1])

    def table(self, data: Any) -> Any:
        """The table part of the column ``data`` (as written, not decoded)."""
        return data[0]


class Tagged(Column):
    """Anything else: each value as :func:`linter.cachedata.encode` writes it, checked against
    the annotation when read."""

    def __init__(self, hint: Any):
        self.check = value_checker(hint)

    def valid(self, values: list) -> bool:
        try:
            encode_value(values)
        except (Invalid, RecursionError, ValueError):
            return False
        return all(map(self.check, values))

    def encode(self, values: list) -> Any:
        return [encode_value(value) for value in values]

    def decode(self, data: Any, count: int | None) -> Iterable:
        values = [decode_value(item) for item in _sized(data, count)]
        if not all(map(self.check, values)):
            raise Invalid("a value of the wrong type")
        return values


def _is_record(hint: Any) -> bool:
    return isinstance(hint, type) and hasattr(hint, "__struct_fields__") and not hasattr(hint, "__post_init__")


def column(hint: Any, interned: bool = False) -> Column:
    """The column of a field annotated ``hint``; ``interned``: a record's top level, where every
    hashable value but a span or a number is interned (see the module docstring)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if (origin is typing.Union or origin is types.UnionType) and len(args) == 2 and type(None) in args:
        inner = column(args[0] if args[1] is type(None) else args[1])
        return Interned(inner, optional=True) if _hashable(inner) else Tagged(hint)
    found: Column
    if hint is str:
        found = Strings()
    elif origin is typing.Literal and args and all(type(arg) is str for arg in args):
        found = Strings(args)
    elif hint in (int, bool):
        return Plain(hint)
    elif hint is Span:
        return Spans()
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis and _scalars(args[0]):
        found = Parts(_scalars(args[0]))
    elif origin is tuple and args and Ellipsis not in args:
        found = Fixed([column(arg) for arg in args])
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis and _is_record(args[0]):
        found = Items(Record(args[0], False))
    elif _is_record(hint):
        found = Record(hint, False)
    else:
        return Tagged(hint)
    return Interned(found, optional=False) if interned and _hashable(found) else found


def _scalars(hint: Any) -> frozenset[type]:
    """The types of ``str``, ``int`` or a union of them; empty for anything else."""
    kinds = set(typing.get_args(hint)) if typing.get_origin(hint) in (typing.Union, types.UnionType) else {hint}
    return frozenset(kinds) if kinds and kinds <= {str, int} else frozenset()


def _hashable(found: Column) -> bool:
    if isinstance(found, (Record, Items)):
        return found.hashable
    if isinstance(found, Fixed):
        return all(_hashable(part) for part in found.columns)
    return type(found) in (Strings, Plain, Spans, Parts) or found.interned


def layout(cls: type) -> Record:
    """The columns of a list of ``cls`` records (their top level interned)."""
    return Record(cls, interned=True)
