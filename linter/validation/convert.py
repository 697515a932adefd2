"""A CustomResourceDefinition's ``openAPIV3Schema`` as JSON Schema (draft 2020-12), the way the
API server reads it (structural schemas, ``apiextensions.k8s.io/v1``):

- **Pruning.** Fields a structural schema does not specify are unknown: with kubectl's default
  ``--validate=strict`` they are errors ("unknown field"), so every object node gets
  ``additionalProperties: false`` unless it keeps unknown fields
  (``x-kubernetes-preserve-unknown-fields: true``) or is a map (``additionalProperties``).
- ``x-kubernetes-int-or-string``: an integer or a string (its ``pattern`` still applies to
  strings, as for quantities).
- ``x-kubernetes-embedded-resource``: a nested object with ``apiVersion`` and ``kind`` (required)
  and a ``metadata`` that is an ObjectMeta.
- ``x-kubernetes-list-type: set``: items are unique; ``map`` with ``x-kubernetes-list-map-keys``:
  no two items share the same key values (the ``x-list-map-keys`` keyword, which :mod:`.checker`
  and the ``jsonschema`` validator of :mod:`.validate` implement).
- ``default``: the API server defaults before it validates, so a required field with a default
  may be left out.
- ``nullable``: ``null`` is a value. Without it, ``null`` in an optional field is pruned by the
  API server (the field counts as unset), while in a required field it is an error.
- The root's ``metadata`` is always ObjectMeta (CRDs may only restrict ``name``), ``apiVersion`` and
  ``kind`` are strings, and ``status`` is never validated (it is live state).
- ``x-kubernetes-validations`` (CEL rules) cannot be evaluated here and are skipped, like
  ``format`` (which the API server checks only for a few names) and ``default``.
- Inside ``allOf``/``anyOf``/``oneOf``/``not`` (value validations: they never prune), nodes are
  converted without any of the above.
- ``pattern`` is RE2 (:mod:`.regex`), linear time as in the API server; a pattern RE2 cannot
  compile is not checked, and SCH002 says so (info) for each string value it would have checked.
- OpenAPI 3.0's boolean ``exclusiveMinimum``/``exclusiveMaximum`` become JSON Schema's numbers.

Conversion is **shallow**: :func:`shallow` converts one node and leaves its children as
:class:`Sub` placeholders, which the fast check converts only when an object reaches them (a
custom resource uses a small part of a CRD that inlines a PodTemplateSpec per replica type);
:func:`deep` converts everything, for ``jsonschema``, only when an object is invalid.
"""

from __future__ import annotations

from typing import Any

from mlops_lint.validation.regex import searcher

OBJECT_META_REF = "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
LIST_MAP_KEYS = "x-list-map-keys"
UNCHECKED_PATTERN = "x-unchecked-pattern"  # a pattern RE2 cannot compile: not checked, and said so


class Sub:
    """A child schema not converted yet: the OpenAPI node, and how to convert it."""

    __slots__ = ("raw", "logic", "allow_null")

    def __init__(self, raw: Any, logic: bool, allow_null: bool = False):
        self.raw = raw
        self.logic = logic
        self.allow_null = allow_null

    def convert(self) -> dict[str, Any]:
        schema = shallow(self.raw, logic=self.logic)
        return _allow_null(schema) if self.allow_null else schema


_INT_OR_STRING_ANYOF = [{"type": "integer"}, {"type": "string"}]
_LOGIC = ("allOf", "anyOf", "oneOf")
_COPIED = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "multipleOf",
           "uniqueItems")


# The types of a structural schema. Any other ``type`` is refused by the API server when the CRD
# is created; here it constrains nothing (the resources of such a CRD are not judged by it).
_KNOWN_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


def _types(node: dict[str, Any]) -> list[str]:
    if node.get("x-kubernetes-int-or-string"):
        return ["integer", "string"]
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind] if kind in _KNOWN_TYPES else []
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str) and k in _KNOWN_TYPES]
    return []


def _nullable(node: Any) -> bool:
    return isinstance(node, dict) and (node.get("nullable") is True or "null" in _types(node))


def _allow_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts null (an optional, non-nullable field set to null is pruned)."""
    if not schema:
        return schema
    if any(key in schema for key in (*_LOGIC, "not")):
        return {"anyOf": [{"type": "null"}, schema]}
    result = dict(schema)
    kind = result.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        if "null" not in kinds:
            result["type"] = [*kinds, "null"]
    if "enum" in result and None not in result["enum"]:
        result["enum"] = [*result["enum"], None]
    return result


def _pattern(node: dict[str, Any], out: dict[str, Any]) -> None:
    """``pattern``, matched with RE2 as the API server does (:mod:`.regex`); one RE2 cannot compile
    becomes ``x-unchecked-pattern``: the values it would check are reported as not checked."""
    value = node.get("pattern")
    if isinstance(value, str):
        out["pattern" if searcher(value) is not None else UNCHECKED_PATTERN] = value


def _is_int_or_string_pair(branches: Any) -> bool:
    return isinstance(branches, list) and len(branches) == 2 and all(
        isinstance(b, dict) and set(b) == {"type"} for b in branches
    ) and sorted(b["type"] for b in branches) == ["integer", "string"]


def shallow(node: Any, *, logic: bool = False) -> dict[str, Any]:
    """One OpenAPI schema node as JSON Schema; its children are :class:`Sub` placeholders."""
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {}
    types = _types(node)
    nullable = node.get("nullable") is True
    if types:
        if nullable and "null" not in types:
            types.append("null")
        out["type"] = types[0] if len(types) == 1 else types
    if "enum" in node and isinstance(node["enum"], list):
        out["enum"] = list(node["enum"]) + ([None] if nullable and None not in node["enum"] else [])
    for key in ("minimum", "maximum"):
        if isinstance(node.get(key), (int, float)) and not isinstance(node.get(key), bool):
            exclusive = node.get("exclusive" + key.capitalize())
            out[("exclusive" + key.capitalize()) if exclusive is True else key] = node[key]
    for key in ("exclusiveMinimum", "exclusiveMaximum"):  # already JSON Schema's numeric form
        value = node.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
    for key in _COPIED:
        if key in node:
            out[key] = node[key]
    _pattern(node, out)
    if isinstance(node.get("items"), dict):
        out["items"] = Sub(node["items"], logic)
    if not logic:
        list_type = node.get("x-kubernetes-list-type")
        if list_type == "set":
            out["uniqueItems"] = True
        elif list_type == "map" and isinstance(node.get("x-kubernetes-list-map-keys"), list):
            out[LIST_MAP_KEYS] = [str(k) for k in node["x-kubernetes-list-map-keys"]]
    _objects(node, out, types, logic)
    for key in _LOGIC:
        branches = node.get(key)
        if isinstance(branches, list):
            if key == "anyOf" and node.get("x-kubernetes-int-or-string") and _is_int_or_string_pair(branches):
                continue  # the int-or-string marker's own anyOf: already the type
            out[key] = [Sub(branch, True) for branch in branches]
    if isinstance(node.get("not"), dict):
        out["not"] = Sub(node["not"], True)
    return out


def _objects(node: dict[str, Any], out: dict[str, Any], types: list[str], logic: bool) -> None:
    properties = node.get("properties")
    embedded = bool(node.get("x-kubernetes-embedded-resource")) and not logic
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    required = [r for r in node["required"] if isinstance(r, str)] if isinstance(node.get("required"), list) else []
    if isinstance(properties, dict) and not logic:  # defaulting runs before validation: a default fills it in
        required = [r for r in required if not (isinstance(properties.get(r), dict) and
                                                properties[r].get("default") is not None)]
    converted: dict[str, Any] = {}
    if isinstance(properties, dict):
        for name, sub in properties.items():
            optional = not logic and name not in required and not _nullable(sub)
            converted[str(name)] = Sub(sub, logic, optional)
    if embedded:
        converted["apiVersion"] = {"type": "string"}
        converted["kind"] = {"type": "string"}
        converted["metadata"] = {"$ref": OBJECT_META_REF}
        required = [*required, *(k for k in ("apiVersion", "kind") if k not in required)]
    if converted or isinstance(properties, dict):
        out["properties"] = converted
    if required:
        out["required"] = required
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = Sub(extra, logic, not logic and not _nullable(extra))
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif not logic and not preserve and ("object" in types or isinstance(properties, dict) or embedded):
        out["additionalProperties"] = False  # structural pruning: anything unspecified is unknown


class Lazy(dict):
    """A converted node whose :class:`Sub` children are converted when first read: what
    ``jsonschema`` gets, so that listing an invalid object's errors converts only the parts of
    the CRD that the object reaches (jsonschema reads schemas through ``[]``, ``get`` and
    ``items``; :func:`deep` gives a plain copy for anything else)."""

    __slots__ = ()

    @staticmethod
    def wrap(value: Any) -> Any:
        if isinstance(value, Sub):
            return Lazy(value.convert())
        if isinstance(value, dict) and not isinstance(value, Lazy):
            return Lazy(value)  # stored back by the caller: each node is wrapped once
        if isinstance(value, list) and any(isinstance(v, Sub) or (isinstance(v, dict) and not isinstance(v, Lazy))
                                           for v in value):
            return [Lazy.wrap(v) for v in value]
        return value

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        wrapped = Lazy.wrap(value)
        if wrapped is not value:
            dict.__setitem__(self, key, wrapped)
        return wrapped

    def get(self, key: Any, default: Any = None) -> Any:  # noqa: SIM401 - dict.get would skip the conversion
        return self[key] if key in self else default

    def items(self) -> Any:  # type: ignore[override]
        return [(key, self[key]) for key in self]

    def values(self) -> Any:  # type: ignore[override]
        return [self[key] for key in self]


def deep(schema: Any) -> Any:
    """``schema`` with every :class:`Sub` converted, recursively (plain JSON Schema)."""
    if isinstance(schema, Sub):
        return deep(schema.convert())
    if isinstance(schema, dict):
        return {key: (deep(value) if key != "$defs" else value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [deep(value) for value in schema]
    return schema


def convert(node: Any) -> dict[str, Any]:
    """A whole OpenAPI schema as JSON Schema."""
    return deep(shallow(node))


def convert_root(schema: Any, *, preserve_unknown: bool = False) -> dict[str, Any]:
    """A custom resource's schema (shallow): ``metadata`` is ObjectMeta, ``status`` is ignored."""
    node = dict(schema) if isinstance(schema, dict) else {"type": "object"}
    if preserve_unknown:
        node["x-kubernetes-preserve-unknown-fields"] = True
    properties = dict(node.get("properties") or {})
    for name in ("metadata", "status", "apiVersion", "kind"):
        properties.pop(name, None)
    node["properties"] = properties
    if isinstance(node.get("required"), list):
        node["required"] = [r for r in node["required"] if r not in ("status", "metadata")]
    node.setdefault("type", "object")
    out = shallow(node)
    out["properties"]["apiVersion"] = {"type": "string"}
    out["properties"]["kind"] = {"type": "string"}
    out["properties"]["metadata"] = {"$ref": OBJECT_META_REF}
    out["properties"]["status"] = {}
    return out
