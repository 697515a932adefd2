"""``sarif_om`` objects -> plain JSON data with the SARIF property names.

``sarif_om`` classes are attrs classes whose fields carry ``metadata["schema_property_name"]``
(``rule_index`` -> ``ruleIndex``, ``schema_uri`` -> ``$schema``). A field is written unless it
equals its declared default (``None`` for most, ``-1`` for indexes, ``"en-US"`` for languages), so
what the builder leaves unset stays out. ``level`` is always written: a result without one takes
its rule's ``defaultConfiguration.level``, not the schema default ``warning``.
"""

from __future__ import annotations

from typing import Any

import attr

_ALWAYS_WRITTEN = frozenset({"level"})


def _default(field: attr.Attribute) -> Any:
    default = field.default
    if isinstance(default, attr.Factory):  # type: ignore[arg-type]
        return default.factory()
    return default


def _is_default(field: attr.Attribute, value: Any) -> bool:
    if field.name in _ALWAYS_WRITTEN or field.default is attr.NOTHING:
        return False
    default = _default(field)
    return type(value) is type(default) and value == default  # True == 1, but not a default


def to_json(value: Any) -> Any:
    """Recursively convert attrs objects, dicts and lists; scalars pass through."""
    if attr.has(type(value)):
        out = {}
        for field in attr.fields(type(value)):
            item = getattr(value, field.name)
            if not _is_default(field, item):
                out[field.metadata.get("schema_property_name", field.name)] = to_json(item)
        return out
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value
