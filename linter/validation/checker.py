"""A yes/no check compiled from a JSON Schema into nested closures: the fast path.

Most objects are valid, and for them only "valid" matters. ``compile_check(schema)`` turns the
schema into plain Python closures (references are compiled once each, so recursive schemas such
as a CRD's ``JSONSchemaProps`` work), and a check is then a walk over the object with no schema
interpretation left. Compilation is lazy: a property's check is built the first time an object
has that property, and a :class:`~linter.validation.convert.Sub` (a CRD node not converted yet)
is converted then too, so a run pays only for the parts of a schema its objects use.

Invalid objects go to :mod:`.explain` (or, for keywords it does not evaluate, ``jsonschema``)
for the full, positioned list of errors, so this check must never accept what ``jsonschema``
rejects (tests/test_schemas.py checks that property); keywords it does not implement make the
node answer "invalid" (the slow path decides), never "valid".

Measured on the corpus (1,984 objects with a schema, 79 schemas, Kubernetes 1.35, after
loading): this check, plus ``jsonschema`` for the 177 invalid objects, 0.24 s; ``jsonschema``
alone 1.01 s; ``fastjsonschema`` as the fast path 48 s, nearly all of it generating and compiling
code for the CRDs (each inlines a PodTemplateSpec per replica type). Built-in kinds alone (1,571
objects): 0.08 s, 0.80 s and 1.7 s.
"""

from __future__ import annotations

from typing import Any, Callable

from mlops_lint.validation.convert import LIST_MAP_KEYS, UNCHECKED_PATTERN, Sub
from mlops_lint.validation.regex import searcher

Check = Callable[[Any], bool]

# Keywords that never affect validity here (annotations, and extensions already converted).
_IGNORED = frozenset({
    "description", "title", "format", "default", "example", "examples", "externalDocs", "$schema", "$id",
    "$comment", "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "nullable", "id",
})
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (dict,), "array": (list,), "null": (type(None),),
}


def pointer_target(root: Any, ref: Any) -> Any:
    """What a ``$ref`` that is a JSON pointer into ``root`` (``#/$defs/…``) names, or None when it
    names nothing there (another document, a missing key, not a string)."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node: Any = root
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _never(_: Any) -> bool:
    return False


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema has it: true and 1 differ, 1 and 1.0 do not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return a == b


def unique_items(items: list) -> bool:
    """Whether no two items are equal as JSON Schema compares them (uniqueItems)."""
    seen: set = set()
    rest: list = []
    for item in items:
        if isinstance(item, bool):
            key: Any = ("b", item)
        elif isinstance(item, (int, float)):
            key = ("n", item)
        elif isinstance(item, str):
            key = ("s", item)
        else:
            for other in rest:
                if json_equal(item, other):
                    return False
            rest.append(item)
            continue
        if key in seen:
            return False
        seen.add(key)
    return True


class _Compiler:
    def __init__(self, root: dict[str, Any]):
        self.root = root
        self.refs: dict[str, Check | None] = {}

    def ref(self, ref: str) -> Check | None:
        if ref in self.refs:
            compiled = self.refs[ref]
            if compiled is not _PENDING:
                return compiled
        else:
            self.refs[ref] = _PENDING  # a recursive reference: the slot is filled in below
            target = pointer_target(self.root, ref)
            self.refs[ref] = self.compile(target) if target is not None else _never
            return self.refs[ref]
        refs = self.refs

        def deferred(x: Any) -> bool:
            check = refs[ref]
            return True if check is None else check(x)

        return deferred

    def compile(self, schema: Any) -> Check | None:
        """The check of ``schema``; None when it accepts everything."""
        if isinstance(schema, Sub):
            schema = schema.convert()
        if schema is True or schema == {}:
            return None
        if schema is False or not isinstance(schema, dict):
            return _never
        checks: list[Check] = []
        for key in schema:
            if key not in _KNOWN and key not in _IGNORED and not key.startswith("x-"):
                return _never  # not implemented: let jsonschema decide
        if "$ref" in schema:
            target = self.ref(schema["$ref"])
            if target is not None:
                checks.append(target)
        kind = schema.get("type")
        if "type" in schema and not isinstance(kind, (str, list)):
            return _never  # no type's name (a CRD's `type: ~`): let jsonschema decide
        kinds = None if kind is None else ([kind] if isinstance(kind, str) else list(kind))
        type_check = types_check(kinds) if kinds is not None else None
        if type_check is _never:
            return _never
        # The member check of "type: object" (or array, or ["object", "null"] …) tests the type of
        # a value that is not a mapping (a list) itself: one closure, not a type check beside it.
        object_check = self._object(schema, other=_other_types(kinds, type_check, "object"))
        items_check = None
        if "items" in schema:
            items = schema["items"]
            if isinstance(items, list):
                return _never
            items_check = self._items(items, other=_other_types(kinds, type_check, "array"))
        scalar_checks = _scalar_checks(schema)
        if _never in scalar_checks:
            return _never
        if type_check is not None and not (object_check is not None and "object" in kinds
                                           or items_check is not None and "array" in kinds):
            enum = schema.get("enum")
            if "string" in kinds and isinstance(enum, list) and all(isinstance(v, str) for v in enum):
                pass  # the enum's own check tests that the value is a string
            elif "string" in kinds and scalar_checks and _STRING_KEYS.issuperset(k for k in schema if k in _KNOWN):
                scalar_checks = [_string_check(type_check, schema)]  # a quantity: its type and pattern
            else:
                checks.append(type_check)
        if "enum" in schema:
            checks.append(_enum_check(list(schema["enum"])))
        if "const" in schema:
            const = schema["const"]
            checks.append(lambda x, c=const: json_equal(x, c))
        if object_check is not None:
            checks.append(object_check)
        if items_check is not None:
            checks.append(items_check)
        if LIST_MAP_KEYS in schema:
            checks.append(_list_map_check(tuple(schema[LIST_MAP_KEYS])))
        checks.extend(scalar_checks)
        for key in ("allOf", "anyOf", "oneOf"):
            if key in schema:
                subs = [self._lazy(s) for s in schema[key]]
                if key == "allOf":
                    checks.append(lambda x, subs=subs: all(s(x) for s in subs))
                elif key == "anyOf":
                    checks.append(lambda x, subs=subs: any(s(x) for s in subs))
                else:
                    checks.append(lambda x, subs=subs: sum(1 for s in subs if s(x)) == 1)
        if "not" in schema:
            negated = self._lazy(schema["not"])
            checks.append(lambda x, negated=negated: not negated(x))
        if not checks:
            return None
        if len(checks) == 1:
            return checks[0]
        frozen = tuple(checks)

        def every(x: Any) -> bool:
            for check in frozen:
                if not check(x):
                    return False
            return True

        return every

    def _lazy(self, schema: Any) -> Check:
        """A check that compiles ``schema`` the first time it runs."""
        compiled: Check | None = None

        def first(x: Any) -> bool:
            nonlocal compiled
            if compiled is None:
                compiled = self.compile(schema) or _always
            return compiled(x)

        return first

    def _items(self, items: Any, other: Check | None = None) -> Check:
        """The check of every item; a value that is not a list is judged by ``other`` (the type
        check, for ``type: array``), or passes."""
        item_check: Any = _MISSING  # compiled the first time a list has an item
        compile_ = self.compile

        def each(x: Any) -> bool:
            nonlocal item_check
            if x.__class__ is not list and not isinstance(x, list):
                return True if other is None else other(x)
            if not x:
                return True
            if item_check is _MISSING:
                item_check = compile_(items)
            if item_check is None:
                return True
            for value in x:
                if not item_check(value):
                    return False
            return True

        return each

    def _object(self, schema: dict[str, Any], other: Check | None = None) -> Check | None:
        """The check of an object's members; a value that is not a mapping is judged by ``other``
        (the type check, for ``type: object``), or passes. None when it accepts every object."""
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        required = tuple(schema.get("required") or ())
        low, high = schema.get("minProperties"), schema.get("maxProperties")
        if not properties and extra is True and not required and low is None and high is None:
            return None
        compiled: dict[str, Any] = {}  # filled the first time an object has the property
        # None: any other member passes; False: none may be there; else compiled when first needed
        extra_check: Any = None if extra is True else (False if extra is False else _MISSING)
        missing = _MISSING
        compile_ = self.compile
        bounds = _bounds(required, low, high)
        if not properties and extra_check is missing:
            return self._map(extra, bounds, other)

        def check(x: Any) -> bool:
            nonlocal extra_check
            if not isinstance(x, dict):
                return True if other is None else other(x)
            if bounds is not None and not bounds(x):
                return False
            for key, value in x.items():
                try:
                    sub = compiled[key]
                except KeyError:
                    if key in properties:
                        sub = compiled[key] = compile_(properties[key])
                    else:
                        if extra_check is None:
                            continue
                        if extra_check is False:
                            return False
                        if extra_check is missing:
                            extra_check = compile_(extra) or _always
                        if not extra_check(value):
                            return False
                        continue
                if sub is not None and not sub(value):
                    return False
            return True

        return check

    def _map(self, extra: Any, bounds: Check | None, other: Check | None) -> Check:
        """:meth:`_object` of a map (no properties, every member against the ``extra`` schema)."""
        value_check: Any = _MISSING  # compiled the first time a mapping has a member
        compile_ = self.compile

        def check(x: Any) -> bool:
            nonlocal value_check
            if not isinstance(x, dict):
                return True if other is None else other(x)
            if bounds is not None and not bounds(x):
                return False
            if not x:
                return True
            if value_check is _MISSING:
                value_check = compile_(extra) or _always
            for value in x.values():
                if not value_check(value):
                    return False
            return True

        return check


def _bounds(required: tuple, low: Any, high: Any) -> Check | None:
    """The check of a mapping's required members and member count; None when it has neither."""
    if not required and low is None and high is None:
        return None

    def bounded(x: dict) -> bool:
        for name in required:
            if name not in x:
                return False
        return (low is None or len(x) >= low) and (high is None or len(x) <= high)

    return bounded


_PENDING: Any = object()
_MISSING: Any = object()
_KNOWN = frozenset({
    LIST_MAP_KEYS, UNCHECKED_PATTERN, "$ref", "type", "enum", "const", "properties", "additionalProperties", "required", "minProperties",
    "maxProperties", "items", "minItems", "maxItems", "uniqueItems", "pattern", "minLength", "maxLength",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "allOf", "anyOf", "oneOf", "not",
})


def _always(_: Any) -> bool:
    return True


def _other_types(kinds: list[str] | None, type_check: Check | None, kind: str) -> Check | None:
    """What judges a value that is not of ``kind`` (a mapping, a list) in the member check of a
    node whose ``type`` is ``kinds``: its type check when that check would otherwise stand beside
    the member check, else nothing (the value passes the member check)."""
    if kinds is None or kind not in kinds:
        return None
    return _never if kinds == [kind] else type_check


def types_check(kinds: list[str]) -> Check:
    """Draft 2020-12's ``type`` test of ``kinds``: a float with an integral value is an integer, a
    boolean is no number."""
    if any(not isinstance(kind, str) or kind not in _TYPES for kind in kinds):
        return _never
    allowed = tuple({t for kind in kinds for t in _TYPES[kind]})
    bool_ok = "boolean" in kinds
    integral_float = "integer" in kinds and "number" not in kinds

    def check(x: Any) -> bool:
        if x.__class__ is bool:
            return bool_ok
        if isinstance(x, allowed):
            return True
        return integral_float and x.__class__ is float and x.is_integer()

    return check


def _list_map_check(keys: tuple[str, ...]) -> Check:
    """``x-kubernetes-list-type: map``: no two items with the same values of ``keys``."""

    def check(x: Any) -> bool:
        if not isinstance(x, list) or len(x) < 2:
            return True
        seen: set = set()
        for item in x:
            if not isinstance(item, dict):
                continue
            key = list_map_key(item, keys)
            if key in seen:
                return False
            seen.add(key)
        return True

    return check


def list_map_key(item: dict, keys: tuple[str, ...]) -> tuple:
    values = tuple(item.get(k) for k in keys)
    try:
        hash(values)
    except TypeError:
        return tuple(repr(v) for v in values)
    return tuple((type(v) is bool, v) for v in values)


_STRING_KEYS = frozenset({"type", "pattern", "minLength", "maxLength"})


def _string_check(type_check: Check, schema: dict[str, Any]) -> Check:
    """``type_check`` and the string tests of ``schema`` (pattern, minLength, maxLength) in one
    check, with a fast path for a plain string (whose type passes: the type allows strings)."""
    search = searcher(schema["pattern"]) if "pattern" in schema else None  # compiled by _scalar_checks
    low, high = schema.get("minLength"), schema.get("maxLength")

    def check(x: Any) -> bool:
        if x.__class__ is not str:
            if not type_check(x):
                return False
            if not isinstance(x, str):
                return True
        if low is not None and not len(x) >= low:
            return False
        if high is not None and not len(x) <= high:
            return False
        return search is None or search(x) is not None

    return check


def _enum_check(values: list[Any]) -> Check:
    if all(isinstance(v, str) for v in values):
        strings = frozenset(values)
        return lambda x: isinstance(x, str) and x in strings
    return lambda x: any(json_equal(x, v) for v in values)


def _scalar_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    number = (int, float)

    def numeric(test: Callable[[Any], bool]) -> Check:
        return lambda x: x.__class__ is bool or not isinstance(x, number) or test(x)

    if "pattern" in schema:
        search = searcher(schema["pattern"]) if isinstance(schema["pattern"], str) else None
        if search is None:
            return [_never]  # not RE2: jsonschema's side reports the value as not checked
        checks.append(lambda x: not isinstance(x, str) or search(x) is not None)
    if UNCHECKED_PATTERN in schema:  # a string there goes to the slow path, which says "not checked"
        checks.append(lambda x: not isinstance(x, str))
    if "minLength" in schema:
        n = schema["minLength"]
        checks.append(lambda x: not isinstance(x, str) or len(x) >= n)
    if "maxLength" in schema:
        m = schema["maxLength"]
        checks.append(lambda x: not isinstance(x, str) or len(x) <= m)
    if "minItems" in schema:
        a = schema["minItems"]
        checks.append(lambda x: not isinstance(x, list) or len(x) >= a)
    if "maxItems" in schema:
        b = schema["maxItems"]
        checks.append(lambda x: not isinstance(x, list) or len(x) <= b)
    if schema.get("uniqueItems"):
        checks.append(lambda x: not isinstance(x, list) or unique_items(x))
    for key, test in (("minimum", lambda v, lim: v >= lim), ("maximum", lambda v, lim: v <= lim),
                      ("exclusiveMinimum", lambda v, lim: v > lim), ("exclusiveMaximum", lambda v, lim: v < lim)):
        if key in schema:
            limit = schema[key]
            if isinstance(limit, bool) or not isinstance(limit, number):
                return [_never]  # OpenAPI 3.0's boolean form must have been converted
            checks.append(numeric(lambda x, test=test, limit=limit: test(x, limit)))
    if "multipleOf" in schema:
        step = schema["multipleOf"]
        if isinstance(step, bool) or not isinstance(step, number) or step <= 0:
            return [_never]
        if isinstance(step, int):
            checks.append(numeric(lambda x: (x % step == 0) if isinstance(x, int) else False))
        else:
            checks.append(numeric(lambda x: False))  # float steps: let jsonschema decide
    return checks


def compile_check(schema: dict[str, Any]) -> Check:
    """A function telling whether an instance is valid against ``schema`` (its ``$ref``s are
    JSON pointers into ``schema`` itself, e.g. ``#/$defs/…``)."""
    compiled = _Compiler(schema).compile(schema)
    return compiled if compiled is not None else _always
