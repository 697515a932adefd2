"""``sarif_om`` objects -> plain JSON data with the SARIF property names.

``sarif_om`` classes are attrs classes whose fields carry ``metadata["schema_property_name"]``
(``rule_index`` -> ``ruleIndex``, ``schema_uri`` -> ``$schema``). A field is written unless it
equals its declared default (``None`` for most, ``-1`` for indexes, ``"en-US"`` for languages), so
what the builder leaves unset stays out. ``level`` is always written: a result without one takes
its rule's ``defaultConfiguration.level``, not the schema default ``warning``.

What to read of a class (each field's attribute, property name and default) is worked out once per
class, not once per object: a log holds some 60 fields per result, most of them left unset.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import attr

_ALWAYS_WRITTEN = frozenset({"level"})
_WRITTEN = object()  # the "default" of a field that is always written: no value is of its type


def _default(field: attr.Attribute) -> Any:
    default = field.default
    if isinstance(default, attr.Factory):  # type: ignore[arg-type]
        return default.factory()
    return default


@cache
def _plan(cls: type) -> tuple[tuple[str, str, Any], ...] | None:
    """``(attribute, property name, default)`` per field of an attrs class, None for other types."""
    if not attr.has(cls):
        return None
    return tuple(
        (
            field.name,
            field.metadata.get("schema_property_name", field.name),
            _WRITTEN if field.name in _ALWAYS_WRITTEN or field.default is attr.NOTHING else _default(field),
        )
        for field in attr.fields(cls)
    )


def to_json(value: Any) -> Any:
    """Recursively convert attrs objects, dicts and lists; scalars pass through."""
    plan = _plan(type(value))
    if plan is not None:
        out = {}
        for name, key, default in plan:
            item = getattr(value, name)
            if type(item) is not type(default) or item != default:  # True == 1, but not a default
                out[key] = to_json(item)
        return out
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value
