"""Schema errors in words, each at the node it is about.

``jsonschema`` finds every error of an invalid object; each becomes an :class:`Issue` with the
path of the offending node and where on it to point (its value, its key, or, for a missing field,
the parent's key), and a message that says what was expected:
``spec.replicas: expected integer, got string "3"``,
``unknown field "spec.tempate" (did you mean "template"?)``,
``missing required field "spec.template.spec.containers"``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from msgspec import Struct

from mlops_lint.suggest import close_matches
from mlops_lint.validation.builtin import QUANTITY_PATTERN
from mlops_lint.validation.convert import UNCHECKED_PATTERN

VALUE, KEY, PARENT = "value", "key", "parent"
_NAME = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")
_TYPE_WORDS = {"object": "mapping", "array": "list"}
MAX_ENUM_SHOWN = 8


class Issue(Struct, frozen=True):
    """One schema error: ``path`` is the node inside the object, ``anchor`` where to point."""

    path: tuple[str | int, ...]
    anchor: str  # VALUE | KEY | PARENT
    message: str
    category: str  # type | unknown-field | required | enum | pattern | range | unique | one-of | unchecked | other
    severity: str | None = None  # "info" for what could not be checked (the rule's own severity otherwise)

    @property
    def sort_key(self) -> tuple:
        return (tuple((isinstance(p, int), str(p)) for p in self.path), self.message)


def dotted(path: Iterable[str | int]) -> str:
    """``spec.template.spec.containers[0].name``; odd keys in brackets: ``labels["app.kubernetes.io/name"]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _NAME.match(part):
            text += f".{part}" if text else part
        else:
            text += f"[{_quote(part)}]"
    return text


def _quote(text: str, limit: int = 60) -> str:
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value:g}"
    if isinstance(value, str):
        return f"string {_quote(value, 40)}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return _quote(value, 40)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def type_words(kinds: Any) -> str:
    kinds = [kinds] if isinstance(kinds, str) else [k for k in kinds if k != "null"] or list(kinds)
    words = [_TYPE_WORDS.get(k, k) for k in kinds]
    if "integer" in words and "number" in words:
        words.remove("integer")
    return " or ".join(words)


def suggestion(name: str, candidates: Iterable[str], cutoff: float = 0.75) -> str | None:
    """The candidate ``name`` most likely misspells (a missing required field is tried first)."""
    options = sorted(c for c in candidates if isinstance(c, str))
    for option in options:
        if option.lower() == name.lower():
            return option
    close = close_matches(name, options, cutoff=cutoff)
    return close[0] if close else None


def _at(path: tuple) -> str:
    return f"{dotted(path)}: " if path else ""


def translate(errors: Iterable[Any]) -> list[Issue]:
    """Issues of jsonschema errors, deduplicated, a typo's missing-field twin folded in."""
    return fold(raw_issues(errors))


def raw_issues(errors: Iterable[Any]) -> list[Issue]:
    """Each jsonschema error as issues, before :func:`fold` (which works across them)."""
    issues: list[Issue] = []
    for error in errors:
        issues.extend(_translate(error))
    return issues


def fold(issues: list[Issue]) -> list[Issue]:
    """Drop a "missing required field" that an unknown field at the same place spells wrong
    (``tempate`` for ``template``), and a wrong type beside the enum it is not in: one mistake, one
    finding."""
    suggested = {(i.path[:-1], s) for i in issues if i.category == "unknown-field" and (s := _suggested(i))}
    enums = {i.path for i in issues if i.category == "enum"}  # "expected one of …, got integer 7" says the type too
    seen: set[tuple] = set()
    result = []
    for issue in issues:
        if issue.category == "required" and (issue.path[:-1], issue.path[-1]) in suggested:
            continue
        if issue.category == "type" and issue.path in enums:
            continue
        key = (issue.path, issue.message)
        if key not in seen:
            seen.add(key)
            result.append(issue)
    return sorted(result, key=lambda i: i.sort_key)


def _suggested(issue: Issue) -> str | None:
    match = re.search(r'\(did you mean "([^"]+)"\?\)$', issue.message)
    return match.group(1) if match else None


def _translate(error: Any) -> list[Issue]:
    path = tuple(error.absolute_path)
    validator, value, instance, schema = error.validator, error.validator_value, error.instance, error.schema
    if validator == "required":
        missing = [name for name in value if isinstance(instance, dict) and name not in instance]
        return [Issue(path + (name,), PARENT, f'missing required field "{dotted(path + (name,))}"', "required")
                for name in missing]
    if validator == "additionalProperties" and isinstance(instance, dict):
        known = schema.get("properties", {}) if isinstance(schema, dict) else {}
        required = schema.get("required", []) if isinstance(schema, dict) else []
        missing = [name for name in required if isinstance(name, str) and name not in instance]
        issues = []
        for key in instance:
            if key in known:
                continue
            hint = suggestion(key, missing, cutoff=0.6) or suggestion(key, known)
            extra = f' (did you mean "{hint}"?)' if hint else ""
            issues.append(Issue(path + (key,), KEY, f'unknown field "{dotted(path + (key,))}"{extra}', "unknown-field"))
        return issues
    if validator == "type":
        return [Issue(path, VALUE, f"{_at(path)}expected {type_words(value)}, got {describe(instance)}", "type")]
    if validator in ("enum", "const"):
        options = value if validator == "enum" else [value]
        shown = ", ".join(_literal(v) for v in options[:MAX_ENUM_SHOWN] if v is not None)
        more = f" (or {len(options) - MAX_ENUM_SHOWN} more)" if len(options) > MAX_ENUM_SHOWN else ""
        word = "one of " if len(options) > 1 else ""
        return [Issue(path, VALUE, f"{_at(path)}expected {word}{shown}{more}, got {describe(instance)}", "enum")]
    if validator == "pattern":
        if value == QUANTITY_PATTERN:
            expected = "a quantity such as 500m, 2 or 8Gi"
        else:
            expected = f"a value matching {value}"
        return [Issue(path, VALUE, f"{_at(path)}expected {expected}, got {describe(instance)}", "pattern")]
    if validator == UNCHECKED_PATTERN:
        return [Issue(path, VALUE, f"{_at(path)}not checked against the pattern {_quote(str(value), 80)} of its schema: "
                                   "RE2, the regular expressions of the API server, cannot compile it (a Kubernetes "
                                   "API server refuses such a CustomResourceDefinition)", "unchecked", "info")]
    if validator in _BOUNDS:
        return [Issue(path, VALUE, f"{_at(path)}{_BOUNDS[validator](value, instance)}", "range")]
    if validator == "uniqueItems" and isinstance(instance, list):
        index = _first_duplicate(instance)
        where = path + (index,)
        return [Issue(where, VALUE, f"{dotted(where)}: duplicate item {describe(instance[index])} (the items must be "
                                    "unique)", "unique")]
    if validator == "x-list-map-keys":
        item = path[:-1] if path and isinstance(path[-1], str) else path
        message = error.message.replace("(first at [", f"(first at {dotted(item[:-1])}[", 1)
        return [Issue(path, VALUE, f"{dotted(item)}: {message}", "unique")]
    if validator in ("oneOf", "anyOf"):
        return _alternatives(error, path)
    if validator == "not":
        return [Issue(path, VALUE, f"{_at(path)}{describe(instance)} is not allowed here", "other")]
    if validator in ("allOf", "$ref") and error.context:
        return [i for sub in error.context for i in _translate(sub)]
    return [Issue(path, VALUE, f"{_at(path)}{error.message}", "other")]


def _length(unit: str) -> Any:
    def word(count: int) -> str:
        return f"{count} {unit}{'' if count == 1 else 's'}"
    return word


_CHARS, _ITEMS, _FIELDS = _length("character"), _length("item"), _length("field")
_BOUNDS = {
    "minimum": lambda v, x: f"expected at least {v}, got {_literal(x)}",
    "maximum": lambda v, x: f"expected at most {v}, got {_literal(x)}",
    "exclusiveMinimum": lambda v, x: f"expected more than {v}, got {_literal(x)}",
    "exclusiveMaximum": lambda v, x: f"expected less than {v}, got {_literal(x)}",
    "multipleOf": lambda v, x: f"expected a multiple of {v}, got {_literal(x)}",
    "minLength": lambda v, x: f"expected at least {_CHARS(v)}, got {len(x)}",
    "maxLength": lambda v, x: f"expected at most {_CHARS(v)}, got {len(x)}",
    "minItems": lambda v, x: f"expected at least {_ITEMS(v)}, got {len(x)}",
    "maxItems": lambda v, x: f"expected at most {_ITEMS(v)}, got {len(x)}",
    "minProperties": lambda v, x: f"expected at least {_FIELDS(v)}, got {len(x)}",
    "maxProperties": lambda v, x: f"expected at most {_FIELDS(v)}, got {len(x)}",
}


def _first_duplicate(items: list) -> int:
    from mlops_lint.validation.checker import json_equal

    for j in range(1, len(items)):
        for i in range(j):
            if json_equal(items[i], items[j]):
                return j
    return 0


def _alternatives(error: Any, path: tuple) -> list[Issue]:
    branches = error.validator_value
    instance = error.instance
    if all(isinstance(b, dict) and set(b) == {"required"} for b in branches):  # "set one of these fields"
        groups = [" and ".join(f'"{n}"' for n in b["required"]) for b in branches]
        present = [g for g, b in zip(groups, branches) if isinstance(instance, dict) and all(n in instance for n in b["required"])]
        if error.validator == "oneOf" and len(present) > 1:
            text = f"set only one of {', '.join(groups)} (found {' and '.join(present)})"
        else:
            text = f"set {'exactly' if error.validator == 'oneOf' else 'at least'} one of {', '.join(groups)}"
        return [Issue(path, PARENT if path else VALUE, f"{_at(path)}{text}", "one-of")]
    if all(isinstance(b, dict) and set(b) <= {"type"} and "type" in b for b in branches):
        kinds = [b["type"] for b in branches]
        flat = [k for kind in kinds for k in ([kind] if isinstance(kind, str) else kind)]
        return [Issue(path, VALUE, f"{_at(path)}expected {type_words(flat)}, got {describe(instance)}", "type")]
    from jsonschema.exceptions import best_match

    best = best_match(error.context) if error.context else None
    if best is not None:
        inner = _translate(best)
        if inner:
            return inner
    return [Issue(path, VALUE, f"{_at(path)}{describe(instance)} matches none of the allowed forms", "one-of")]
