"""Validators per group/kind/version, built once and reused, and the issues of one object.

A :class:`Validator` holds a JSON Schema, its compiled yes/no check (:mod:`.checker`) and, built
only when first needed, a ``jsonschema`` validator that lists every error of an invalid object.
Built-in validators are cached per process (the data never changes); validators of custom
resources live with the CRD they come from (:mod:`.crds`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from linter.model.position import Span
from linter.model.tree import YMap, YSeq
from linter.validation import builtin, crds, kustomize, removed
from linter.validation.checker import compile_check, list_map_key
from linter.validation.convert import LIST_MAP_KEYS, Lazy
from linter.validation.messages import (
    KEY,
    PARENT,
    VALUE,
    Issue,
    suggestion,
    translate,
)


class Validator:
    """A schema (possibly shallow, see :mod:`.convert`), its fast check, and on demand the
    ``jsonschema`` validator that lists every error. ``shallow=False``: the schema is plain JSON
    Schema (a built-in kind's), which ``jsonschema`` reads as it is, not through :class:`Lazy`."""

    __slots__ = ("schema", "_check", "_full", "_shallow")

    def __init__(self, schema: dict[str, Any], *, shallow: bool = True):
        self.schema = schema
        self._check = compile_check(schema)
        self._full: Any = None
        self._shallow = shallow

    def issues(self, instance: Any) -> list[Issue]:
        try:
            if self._check(instance):
                return []
            if self._full is None:
                self._full = _full_validator()(Lazy(self.schema) if self._shallow else self.schema)
            try:
                errors = list(self._full.iter_errors(instance))
            except RecursionError:
                raise
            except Exception as exc:  # noqa: BLE001 - a CRD's schema jsonschema cannot evaluate
                return [_unusable(exc)]
            return translate(errors)
        except RecursionError:  # nesting near the loader's depth limit, against a recursive schema
            return [Issue((), VALUE, "the object is nested too deeply to be validated", "other")]


def _unusable(exc: Exception) -> Issue:
    """The issue of an object whose schema is itself broken (a CRD's ``type: null``, a ``pattern``
    that is no regular expression): the API server rejects such a CRD, so nothing is judged."""
    detail = " ".join(str(exc).split())
    detail = detail if len(detail) <= 200 else detail[:199] + "…"
    return Issue((), VALUE, f"the schema this object is checked against cannot be evaluated ({type(exc).__name__}: "
                 f"{detail}); fix the openAPIV3Schema of its CustomResourceDefinition", "other")


@lru_cache(maxsize=1)
def _full_validator() -> Any:
    """Draft 2020-12, plus the ``x-list-map-keys`` keyword (list-type map, see :mod:`.convert`)."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import ValidationError

    def list_map_keys(validator: Any, keys: list[str], instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "array"):
            return
        first: dict[tuple, int] = {}
        for index, item in enumerate(instance):
            if not isinstance(item, dict):
                continue
            key = list_map_key(item, tuple(keys))
            if key in first:
                shown = ", ".join(f"{k} {_show(item.get(k))}" for k in keys)
                where = [index, keys[0]] if keys[0] in item else [index]
                yield ValidationError(f"duplicate entry with {shown} (first at [{first[key]}]; the list is keyed by "
                                      f"{' and '.join(keys)})", path=where, validator="x-list-map-keys",
                                      validator_value=keys, instance=instance, schema=schema)
            else:
                first[key] = index

    return validators.extend(Draft202012Validator, {LIST_MAP_KEYS: list_map_keys})


def _show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else ("unset" if value is None else str(value))


# ---------------------------------------------------------------------------------------------
# Built-in kinds


_BUILTIN: dict[tuple[str, str], Validator] = {}


def builtin_validator(release: builtin.Release, definition: str) -> Validator:
    key = (release.version, definition)
    validator = _BUILTIN.get(key)
    if validator is None:
        validator = Validator({"$defs": release.defs, "$ref": f"#/$defs/{definition}"}, shallow=False)
        _BUILTIN[key] = validator
    return validator


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


# ---------------------------------------------------------------------------------------------
# One object


def object_issues(obj: Any, index: Any, config: Any) -> list[Issue]:
    """Every schema issue of ``obj`` (a K8sObject), or [] when its kind has no known schema."""
    group, version = split_api_version(obj.api_version)
    release = builtin.release(builtin.effective_version(config))
    if release is None:
        return []
    definition = release.definition(group, version, obj.kind)
    if definition is not None:
        issues = builtin_validator(release, definition).issues(obj.body)
    elif group in release.groups and version in release.groups[group]:
        if (group, obj.kind) in release.kinds or removed.builtin_removal(group, version, obj.kind) is not None:
            return []  # served under another version: SCH003's finding
        if obj.kind in removed.NOT_API_KINDS.get(group, ()):
            return []
        known = {kind for (g, kind), versions in release.kinds.items() if g == group and version in versions}
        hint = suggestion(obj.kind, known)
        extra = f' (did you mean "{hint}"?)' if hint else ""
        return [Issue(("kind",), VALUE, f"{obj.api_version} has no kind \"{obj.kind}\"{extra}", "unknown-kind")]
    else:
        if group in release.groups:  # a built-in group: versions are SCH003's business
            return []
        crd = crds.find(index, config, group, obj.kind, version, obj.path)
        if crd is None:
            return []
        validator = crd.validator(version, release, Validator)
        if validator is None:
            return []
        issues = validator.issues(obj.body)
    if issues and kustomize.is_input(obj.path):
        issues = [i for i in issues if not kustomize.completed_later(i)]
    return issues


# ---------------------------------------------------------------------------------------------
# Positions


def _first_key_span(node: YMap) -> Span:
    for key in node:
        if key in node.kspans:
            return node.kspans[key]
    return node.span


def _node_span(parent: Any, step: Any, *, key: bool) -> Span | None:
    """The span of ``parent[step]``: its key (``key=True``), its value when that is a scalar, else
    its key (a one-line place for a mapping or a list)."""
    if isinstance(parent, YMap) and step in parent.kspans:
        if key or isinstance(parent.get(step), (YMap, YSeq)):
            return parent.kspans[step]
        return parent.vspans.get(step) or parent.kspans[step]
    if isinstance(parent, YSeq) and isinstance(step, int) and 0 <= step < len(parent):
        item = parent[step]
        if isinstance(item, YMap) and item:
            return _first_key_span(item)
        return parent.item_span(step)
    return None


def span_of(obj: Any, issue: Issue) -> Span:
    """Where ``issue`` is in the file: the offending value, the unknown key, or for a missing field
    the key of the mapping it is missing from (the object's ``kind:`` at the top level). A path
    that leaves the tree (it never should) falls back to the deepest node reached."""
    path = issue.path[:-1] if issue.anchor == PARENT else issue.path
    best = obj.span
    node: Any = obj.body
    for depth, step in enumerate(path):
        found = _node_span(node, step, key=issue.anchor in (KEY, PARENT) or depth < len(path) - 1)
        if found is None:
            break
        best = found
        node = node[step]
    return best


__all__ = ["Validator", "object_issues", "span_of", "split_api_version", "KEY", "PARENT", "VALUE"]
