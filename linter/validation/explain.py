"""Every error of an invalid object, listed without ``jsonschema`` for the keywords schemas of
Kubernetes kinds and CRDs use, as ``jsonschema``'s Draft 2020-12 validator (with the
extensions of :mod:`.validate`) would list them.

:mod:`.checker` says whether an object is valid; an invalid one needs every error, positioned.
``jsonschema`` lists them, but importing it costs more than listing the errors of a typical
invalid object (a missing required field, an unknown field, a wrong type or enum value) many
times over, and a run that meets one invalid object would pay it. :func:`errors` walks the
schema as ``jsonschema`` does and yields the same errors (what :mod:`.messages` reads of them:
the keyword, its value, the instance, the schema holding the keyword and the path) for
``type``, ``properties``, ``additionalProperties``, ``required``, ``items``, ``enum``,
``const``, ``$ref``, ``allOf``, the bounds (``minimum`` … ``maxProperties``), ``pattern``,
``uniqueItems``, ``not``, ``anyOf``/``oneOf`` whose branches are only types or only required
fields, and the list-map keys. Anything else it meets on its way (another keyword
``jsonschema`` evaluates, a schema of an odd shape, a float ``multipleOf``) raises
:class:`Unsupported`, and the caller asks ``jsonschema`` instead: same answer, slower.
tests/test_schemas.py holds both to the same issues.
"""

from __future__ import annotations

from typing import Any, Iterator

from mlops_lint.validation.checker import json_equal, list_map_key, pointer_target, types_check, unique_items
from mlops_lint.validation.convert import LIST_MAP_KEYS, UNCHECKED_PATTERN, Sub
from mlops_lint.validation.regex import searcher


class Unsupported(Exception):
    """The schema uses what :func:`errors` does not evaluate: ask ``jsonschema``."""


class Error:
    """One error, with the attributes of ``jsonschema.ValidationError`` that :mod:`.messages` reads."""

    __slots__ = ("validator", "validator_value", "instance", "schema", "absolute_path", "message", "context")

    def __init__(self, validator: str, value: Any, instance: Any, schema: Any, path: tuple, message: str = ""):
        self.validator = validator
        self.validator_value = value
        self.instance = instance
        self.schema = schema
        self.absolute_path = path
        self.message = message
        self.context: list = []


# The keywords jsonschema's Draft 2020-12 validator (as :mod:`.validate` extends it) evaluates and
# this module does not: met on the way, they send the object to jsonschema.
_UNSUPPORTED = frozenset({
    "$dynamicRef", "contains", "dependentRequired", "dependentSchemas", "if", "patternProperties",
    "prefixItems", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    "$id", "$anchor", "$dynamicAnchor",  # a new base for `$ref`s below: jsonschema's resolver
})
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_BOUNDS = {  # keyword -> when a number breaks it (as jsonschema compares: NaN breaks none)
    "minimum": lambda x, v: x < v, "maximum": lambda x, v: x > v,
    "exclusiveMinimum": lambda x, v: x <= v, "exclusiveMaximum": lambda x, v: x >= v,
}
_LENGTHS = {  # keyword -> (the type it applies to, whether len(x) must be at least (True) or at most the value)
    "minLength": (str, True), "maxLength": (str, False), "minItems": (list, True), "maxItems": (list, False),
    "minProperties": (dict, True), "maxProperties": (dict, False),
}


def list_map_duplicates(instance: list, keys: tuple[str, ...]) -> Iterator[tuple[list, str]]:
    """The items of a list-type map that repeat an earlier item's keys: (where, message), as the
    ``x-list-map-keys`` keyword reports them (shared with :mod:`.validate`'s jsonschema keyword)."""
    first: dict[tuple, int] = {}
    for index, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        key = list_map_key(item, keys)
        if key in first:
            shown = ", ".join(f"{k} {_show(item.get(k))}" for k in keys)
            where = [index, keys[0]] if keys[0] in item else [index]
            yield where, (f"duplicate entry with {shown} (first at [{first[key]}]; the list is keyed by "
                          f"{' and '.join(keys)})")
        else:
            first[key] = index


def _show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else ("unset" if value is None else str(value))


class Lister:
    """The errors of instances against the schemas of one root (whose ``$ref``s it resolves)."""

    __slots__ = ("root",)

    def __init__(self, root: Any):
        self.root = root

    def errors(self, instance: Any, schema: Any, path: tuple = ()) -> list[Error]:
        """Every error of ``instance`` (at ``path``) against ``schema``; raises :class:`Unsupported`."""
        found: list[Error] = []
        try:
            self._walk(instance, schema, path, found)
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            raise Unsupported from exc  # an odd schema: jsonschema's answer, or its own error
        return found

    def _valid(self, instance: Any, schema: Any) -> bool:
        found: list[Error] = []
        self._walk(instance, schema, (), found)
        return not found

    def _resolve(self, ref: Any) -> Any:
        target = pointer_target(self.root, ref)
        if target is None:
            raise Unsupported  # not a pointer into the root: jsonschema's resolver
        return target

    def _walk(self, x: Any, schema: Any, path: tuple, out: list[Error]) -> None:  # noqa: C901 - one keyword a branch
        if isinstance(schema, Sub):
            schema = schema.convert()
        if schema is True:
            return
        if not isinstance(schema, dict):
            raise Unsupported  # `false`, or not a schema at all
        for keyword in schema:
            value = schema[keyword]
            if keyword == "type":
                kinds = [value] if isinstance(value, str) else value
                if not isinstance(kinds, list) or any(not isinstance(k, str) or k not in _TYPES for k in kinds):
                    raise Unsupported
                if not types_check(kinds)(x):
                    out.append(Error("type", value, x, schema, path))
            elif keyword == "properties":
                if not isinstance(value, dict):
                    raise Unsupported
                if isinstance(x, dict):
                    for name, sub in value.items():
                        if name in x:
                            self._walk(x[name], sub, path + (name,), out)
            elif keyword == "additionalProperties":
                if isinstance(x, dict):
                    self._additional(x, value, schema, path, out)
            elif keyword == "required":
                if not isinstance(value, list):
                    raise Unsupported
                if isinstance(x, dict):
                    for name in value:
                        if name not in x:
                            out.append(Error("required", value, x, schema, path))
            elif keyword == "items":
                if value is True:
                    continue
                if not isinstance(value, (dict, Sub)):
                    raise Unsupported
                if isinstance(x, list):
                    for index, item in enumerate(x):
                        self._walk(item, value, path + (index,), out)
            elif keyword == "enum":
                if not isinstance(value, list):
                    raise Unsupported
                if not any(json_equal(x, option) for option in value):
                    out.append(Error("enum", value, x, schema, path))
            elif keyword == "const":
                if not json_equal(x, value):
                    out.append(Error("const", value, x, schema, path))
            elif keyword == "$ref":
                self._walk(x, self._resolve(value), path, out)
            elif keyword == "allOf":
                if not isinstance(value, list):
                    raise Unsupported
                for sub in value:
                    self._walk(x, sub, path, out)
            elif keyword in ("anyOf", "oneOf"):
                self._alternatives(keyword, x, value, schema, path, out)
            elif keyword == "not":
                if self._valid(x, value):
                    out.append(Error("not", value, x, schema, path))
            elif keyword in _BOUNDS:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise Unsupported
                if not isinstance(x, bool) and isinstance(x, (int, float)) and _BOUNDS[keyword](x, value):
                    out.append(Error(keyword, value, x, schema, path))
            elif keyword in _LENGTHS:
                kind, at_least = _LENGTHS[keyword]
                if isinstance(value, bool) or not isinstance(value, int):
                    raise Unsupported
                if isinstance(x, kind) and (len(x) < value if at_least else len(x) > value):
                    out.append(Error(keyword, value, x, schema, path))
            elif keyword == "multipleOf":
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    continue
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    raise Unsupported  # a float step: jsonschema's own quotient arithmetic
                if x % value:  # as jsonschema computes it for an integer step (NaN % 1 fails)
                    out.append(Error(keyword, value, x, schema, path))
            elif keyword == "uniqueItems":
                if value and isinstance(x, list) and not unique_items(x):
                    out.append(Error(keyword, value, x, schema, path))
            elif keyword == "pattern":
                if isinstance(x, str):
                    search = searcher(value) if isinstance(value, str) else None
                    if search is None:
                        out.append(Error(UNCHECKED_PATTERN, value, x, schema, path))
                    elif search(x) is None:
                        out.append(Error("pattern", value, x, schema, path))
            elif keyword == UNCHECKED_PATTERN:
                if isinstance(x, str):
                    out.append(Error(UNCHECKED_PATTERN, value, x, schema, path))
            elif keyword == LIST_MAP_KEYS:
                if not isinstance(value, list):
                    raise Unsupported
                if isinstance(x, list):
                    for where, message in list_map_duplicates(x, tuple(value)):
                        out.append(Error(LIST_MAP_KEYS, value, x, schema, path + tuple(where), message))
            elif keyword in _UNSUPPORTED:
                raise Unsupported
            # any other keyword (descriptions, x-kubernetes-…, $defs) is not evaluated, as in jsonschema

    def _additional(self, x: dict, value: Any, schema: dict, path: tuple, out: list[Error]) -> None:
        if "patternProperties" in schema:
            raise Unsupported
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            raise Unsupported
        extras = [key for key in x if key not in properties]
        if isinstance(value, (dict, Sub)):
            for key in extras:
                self._walk(x[key], value, path + (key,), out)
        elif value is False:
            if extras:
                out.append(Error("additionalProperties", value, x, schema, path))
        elif value is not True:
            raise Unsupported

    def _alternatives(self, keyword: str, x: Any, branches: Any, schema: dict, path: tuple, out: list[Error]) -> None:
        if not isinstance(branches, list) or not branches:
            raise Unsupported
        valid = sum(1 for branch in branches if self._valid(x, branch))
        if valid == 1 or (valid and keyword == "anyOf"):
            return
        # the wordings of linter.validation.messages that need no jsonschema (else its best match)
        only_required = all(isinstance(b, dict) and set(b) == {"required"} for b in branches)
        only_types = all(isinstance(b, dict) and set(b) <= {"type"} and "type" in b for b in branches)
        if not (only_required or only_types):
            raise Unsupported
        out.append(Error(keyword, branches, x, schema, path))
