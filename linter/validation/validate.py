"""Validators per group/kind/version, built once and reused, and the issues of one object.

A :class:`Validator` holds a JSON Schema, its compiled yes/no check (:mod:`.checker`), and lists
every error of an invalid object with :mod:`.explain`, or, where the schema uses a keyword that
module does not evaluate, with a ``jsonschema`` validator built the first time it is needed.
Built-in validators are cached per process (the data never changes); validators of custom
resources live with the CRD they come from (:mod:`.crds`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from mlops_lint.model.memo import once
from mlops_lint.model.placeholder import has_placeholder, is_placeholder
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq
from mlops_lint.validation import builtin, bundle, celrules, kustomize, removed
from mlops_lint.validation.checker import compile_check
from mlops_lint.validation.convert import LIST_MAP_KEYS, UNCHECKED_PATTERN, Lazy
from mlops_lint.validation.regex import searcher
from mlops_lint.validation.messages import (
    KEY,
    PARENT,
    VALUE,
    Issue,
    fold,
    raw_issues,
    suggestion,
)

# Keywords of an object's schema that read its members together or through another schema: an
# object whose top-level schema has one is listed whole (see Validator._parts).
_ACROSS_MEMBERS = frozenset({
    "$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas",
    "dependencies", "patternProperties", "propertyNames", "unevaluatedProperties",
})
MEMBER_ISSUES_KEPT = 4096  # distinct (member, value) answers kept per validator


class Validator:
    """A schema (possibly shallow, see :mod:`.convert`), its fast check, and what lists every
    error (:mod:`.explain`, else on demand the ``jsonschema`` validator). ``shallow=False``: the
    schema is plain JSON Schema (a built-in kind's), read as it is, not through :class:`Lazy`.

    An invalid object's errors are listed per top-level member (``spec``, ``metadata`` …), as
    ``jsonschema``'s ``properties`` keyword descends into them, and each member's issues are kept
    per distinct value: copies of one object (overlays, replicated manifests) that differ only in
    their names list their ``spec`` once. The object's own keywords (``required``, unknown fields)
    are checked on each object."""

    __slots__ = ("schema", "_check", "_full", "_lister", "_root", "_shallow", "_split", "_members")

    def __init__(self, schema: dict[str, Any], *, shallow: bool = True):
        self.schema = schema
        self._check = compile_check(schema)
        self._full: Any = None  # jsonschema's validator, built the first time .explain cannot list
        self._lister: Any = None  # a linter.validation.explain.Lister, built with the first invalid object
        self._root: Any = None  # the schema as both read it (CRD nodes converted when first read)
        self._shallow = shallow
        self._split: Any = _MISSING  # (the object's keywords, its properties) or None: see _parts
        self._members: dict[tuple, list[Issue]] = {}

    def issues(self, instance: Any) -> list[Issue]:
        try:
            if self._check(instance):
                return []
            from mlops_lint.validation.explain import Unsupported  # an invalid object's: a valid one's run never needs it

            try:  # listed by our own walk of the schema, else by jsonschema (see .explain)
                return self._listed(instance, self._explained)
            except Unsupported:
                pass
            if self._full is None:
                self._full = _full_validator()(self._schema_root())
            try:
                return self._listed(instance, self._jsonschema)
            except RecursionError:
                raise
            except Exception as exc:  # noqa: BLE001 - a CRD's schema jsonschema cannot evaluate
                return [_unusable(exc)]
        except RecursionError:  # nesting near the loader's depth limit, against a recursive schema
            return [Issue((), VALUE, "the object is nested too deeply to be validated", "other")]

    def _explained(self, value: Any, schema: Any, key: str | None) -> list:
        if self._lister is None:
            from mlops_lint.validation.explain import Lister

            self._lister = Lister(self._schema_root())
        return self._lister.errors(value, self._root if schema is None else schema, () if key is None else (key,))

    def _jsonschema(self, value: Any, schema: Any, key: str | None) -> list:
        if schema is None:
            return list(self._full.iter_errors(value))
        return list(self._full.descend(value, schema, path=key))

    def _schema_root(self) -> Any:
        if self._root is None:
            self._root = Lazy(self.schema) if self._shallow else self.schema
        return self._root

    def _listed(self, instance: Any, errors: Any) -> list[Issue]:
        """The issues of an invalid ``instance``, its errors listed by ``errors(value, schema,
        key)`` (the whole object against the root schema when ``schema`` is None)."""
        split = self._parts() if isinstance(instance, dict) else None
        if split is None:
            return fold(raw_issues(errors(instance, None, None)))
        own, properties = split
        fresh: list[tuple[tuple | None, list]] = [(None, errors(instance, own, None))]
        known: list[Issue] = []
        for key, subschema in properties.items():  # as the properties keyword descends
            if key not in instance:
                continue
            value = instance[key]
            member = (key, _exact(value))
            hit = self._members.get(member)
            if hit is not None:
                known.extend(hit)
            else:
                fresh.append((member, errors(value, subschema, key)))
        found = list(known)
        for member, listed in fresh:
            issues = raw_issues(listed)
            if member is not None:
                if len(self._members) >= MEMBER_ISSUES_KEPT:
                    self._members.clear()
                self._members[member] = issues
            found.extend(issues)
        return fold(found)

    def _parts(self) -> tuple[dict[str, Any], Any] | None:
        """The object's schema split as ``jsonschema`` evaluates it: its own keywords (with its
        properties accepting anything, so that ``additionalProperties`` still knows them) and the
        properties, whose members are independent of each other. None when a keyword reads across
        members (``allOf``, ``patternProperties`` …): such an object is listed whole."""
        if self._split is not _MISSING:
            return self._split
        root: Any = self._schema_root()
        reference = root.get("$ref") if not self._shallow else None
        if set(root) == {"$defs", "$ref"} and isinstance(reference, str) and reference.startswith("#/$defs/"):
            root = root["$defs"].get(reference[len("#/$defs/"):])  # a built-in kind's definition
        properties = root.get("properties") if isinstance(root, dict) else None
        if not isinstance(properties, dict) or any(keyword in _ACROSS_MEMBERS for keyword in root):
            self._split = None
        else:
            own = {keyword: (root[keyword] if keyword != "properties" else dict.fromkeys(properties, True))
                   for keyword in root}
            self._split = (own, properties)
        return self._split


_MISSING = object()


def _exact(value: Any) -> Any:
    """A hashable stand-in for a parsed value that is equal only for values every message words
    alike: types kept apart (``1``, ``1.0``, ``"1"``, ``true``), a float by its text (``-0.0`` is
    not ``0.0``), keys in their order (unlike :func:`linter.model.tree.frozen`, which is equal
    wherever the API server sees no difference)."""
    if isinstance(value, dict):
        return ("map", tuple((key, _exact(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("seq", tuple(_exact(item) for item in value))
    if isinstance(value, (str, int, type(None))):  # bool is an int: its type name keeps it apart
        return (type(value).__name__, value)
    return (type(value).__name__, repr(value))


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

    from mlops_lint.validation.explain import list_map_duplicates

    def list_map_keys(validator: Any, keys: list[str], instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "array"):
            return
        for where, message in list_map_duplicates(instance, tuple(keys)):
            yield ValidationError(message, path=where, validator="x-list-map-keys", validator_value=keys,
                                  instance=instance, schema=schema)

    def pattern(validator: Any, expression: Any, instance: Any, schema: Any) -> Any:
        """JSON Schema's ``pattern``, with RE2 (linear time) as the API server has it (:mod:`.regex`)."""
        if not isinstance(instance, str):
            return
        search = searcher(expression) if isinstance(expression, str) else None
        if search is None:
            yield from unchecked_pattern(validator, expression, instance, schema)
        elif search(instance) is None:
            yield ValidationError(f"{instance!r} does not match {expression!r}")

    def unchecked_pattern(validator: Any, expression: Any, instance: Any, schema: Any) -> Any:
        if isinstance(instance, str):
            yield ValidationError("not checked: RE2 cannot compile the pattern", validator=UNCHECKED_PATTERN,
                                  validator_value=expression, instance=instance, schema=schema)

    extended = validators.extend(Draft202012Validator, {LIST_MAP_KEYS: list_map_keys, "pattern": pattern,
                                                        UNCHECKED_PATTERN: unchecked_pattern})
    registry = _registry()
    return lambda schema: extended(schema, registry=registry)


def _refuse(uri: str) -> Any:
    """``$ref``s resolve inside the schema only: nothing is fetched (no network, no files)."""
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)


def _registry() -> Any:
    from referencing import Registry

    return Registry(retrieve=_refuse)


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
    """Every schema issue of ``obj`` (a K8sObject), or [] when its kind has no known schema; found
    once per object and run (SCH002 and :func:`malformed` share them)."""
    return once(obj, ("schema-issues", id(index), id(config)), lambda: _object_issues(obj, index, config))


def malformed(obj: Any, ctx: Any, *path: str | int) -> bool:
    """Whether the schema says the node at ``path`` of ``obj`` is malformed: an error (not a note)
    inside it, or on a node that holds it. A rule that reads that node stays quiet there, so one
    cause gives one finding: SCH002's (a ClusterQueue resource group without ``coveredResources``
    is SCH002's, not a quota finding on every job queued to it)."""
    for issue in object_issues(obj, ctx.index, ctx.config):
        if issue.severity is None:
            cut = min(len(issue.path), len(path))
            if issue.path[:cut] == path[:cut]:
                return True
    return False


def _object_issues(obj: Any, index: Any, config: Any) -> list[Issue]:
    group, version = split_api_version(obj.api_version)
    release = builtin.release(builtin.effective_version(config))
    if release is None:
        return []
    definition = release.definition(group, version, obj.kind)
    if definition is not None:
        issues = builtin_validator(release, definition).issues(obj.body)
        if obj.kind == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
            issues += celrules.crd_uncompiled(obj.body)  # the CRD's own CEL rules the engine cannot check
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
        crd = bundle.find(index, config, group, obj.kind, version, obj.path)
        if crd is None:
            return []
        validator = crd.validator(version, release, Validator)
        if validator is None:
            return []
        issues = validator.issues(obj.body)
        if not kustomize.is_input(obj.path):  # a patch or base is completed before it is applied
            entry = crd.versions.get(version)
            extra = celrules.cel_issues(obj.body, entry.openapi_schema(), issues) if entry is not None else []
            if extra:
                issues = sorted(issues + extra, key=lambda issue: issue.sort_key)
    if issues and kustomize.is_input(obj.path):
        issues = [i for i in issues if not kustomize.completed_later(i)]
    if issues:
        issues = [i for i in issues if not _placeholder(obj.body, i)]
    return issues


# ``[Honor|Ignore]`` unquoted: YAML reads the docs' choice notation as a list of one ``A|B`` string.
_CHOICE = re.compile(r"[A-Za-z0-9_.-]+(?:\|[A-Za-z0-9_.-]+)+")


def _placeholder(body: Any, issue: Issue) -> bool:
    """Whether ``issue`` is about placeholder text of a documentation-style manifest (``<integer>``,
    ``[Honor|Ignore]``, ``...``, as a value or as a key) or of a template filled in later (a string
    holding ``$RESOURCE_GROUP`` or ``{{ .Values.x }}`` in part: its final text is unknown): an
    unknown value, not a violation."""
    node: Any = body
    for step in issue.path[:-1] if issue.anchor != VALUE else issue.path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return False
    if issue.anchor == VALUE:
        if isinstance(node, str):
            return has_placeholder(node)
        return isinstance(node, YSeq) and len(node) == 1 and isinstance(node[0], str) and bool(_CHOICE.fullmatch(node[0]))
    # a key: `...`, `<name>` (a `$patch` key is a strategic-merge directive, never a placeholder)
    key = issue.path[-1] if issue.path else None
    return issue.anchor == KEY and isinstance(key, str) and not key.startswith("$") and is_placeholder(key)


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


__all__ = ["Validator", "malformed", "object_issues", "span_of", "split_api_version", "KEY", "PARENT", "VALUE"]
