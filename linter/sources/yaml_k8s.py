"""Kubernetes YAML and JSON: parse once, with exact positions, safely.

The fast path composes nodes with libyaml (PyYAML's ``CSafeLoader``: C parser and composer, node
marks with line and column) and converts them, iteratively, into :mod:`linter.model.tree`
containers. Nothing is ever *constructed* from a tag: ``!!python/object`` and custom tags are read
as the plain data under them.

Scalars follow YAML 1.1, as Kubernetes' own decoder (go-yaml via sigs.k8s.io/yaml) does: plain
``yes``/``no``/``on``/``off`` are booleans, ``0777`` is octal, and a plain ``1e3`` is a number.
Timestamps and binary stay strings, as they do after Kubernetes' YAML-to-JSON step.

Hostile input is bounded before it can hurt: nesting depth (libyaml's composer recurses in C and
crashes the process on very deep input, so depth is measured from the event stream first when the
text could be that deep), alias expansion (a billion-laughs document is rejected by its expanded
size; aliases otherwise share one converted object), recursive aliases, and file size.

Comments are needed only for suppressions, so they are read only in files that contain the
``mlops-lint`` marker, from the gaps between libyaml's scanner tokens.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from linter.model.document import K8S, Comment, Document, K8sObject, ParseIssue
from linter.model.position import Span
from linter.model.tree import YMap, YSeq
from linter.sources.comments import place_comments
from linter.sources.text import load_decoded

try:  # libyaml is part of every PyYAML wheel; the pure-Python loader is a slow fallback.
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_PLAIN = "!mlops-lint/plain"


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """libyaml's composer with scalar resolution deferred to :func:`_scalar`.

    PyYAML's resolver runs a list of regular expressions per scalar from Python; a first-character
    dispatch in :func:`_plain` gives the same YAML 1.1 answers at a fraction of the cost.
    """

    def resolve(self, kind, value, implicit):  # noqa: D401 - libyaml callback
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _TAG + ("seq" if kind is SequenceNode else "map")

MAX_DEPTH = 256
MAX_EXPANDED_NODES = 200_000
MARKER = "mlops-lint"

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _MERGE = (_TAG + t for t in ("str", "int", "float", "bool", "null", "merge"))
_TRUE = {"yes", "true", "on"}
_GO_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+$")


class _YamlError(Exception):
    def __init__(self, message: str, span: Span):
        super().__init__(message)
        self.message = message
        self.span = span


_new_span = tuple.__new__


def _span(node: Any) -> Span:
    start, end = node.start_mark, node.end_mark
    return _new_span(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1))


def _key_span(node: Any) -> Span:
    """A key's span; a multi-line key is cut to its first line."""
    start, end = node.start_mark, node.end_mark
    if end.line != start.line:
        return _new_span(Span, (start.line + 1, start.column + 1, start.line + 1, start.column + 2))
    return _new_span(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1))


# ---------------------------------------------------------------------------------------------
# Scalars


def _int(text: str) -> int | str:
    value = text.replace("_", "")
    sign = 1
    if value[:1] in "+-":
        sign = -1 if value[0] == "-" else 1
        value = value[1:]
    try:
        if value.startswith(("0b", "0B")):
            return sign * int(value[2:], 2)
        if value.startswith(("0x", "0X")):
            return sign * int(value[2:], 16)
        if value.startswith(("0o", "0O")):
            return sign * int(value[2:], 8)
        if len(value) > 1 and value.startswith("0"):
            return sign * int(value, 8)
        return sign * int(value)
    except ValueError:  # sexagesimal 1:20 and other YAML 1.1 oddities: go-yaml keeps them as text
        return text


def _float(text: str) -> float | str:
    value = text.replace("_", "").lower()
    if value in (".inf", "+.inf"):
        return float("inf")
    if value == "-.inf":
        return float("-inf")
    if value == ".nan":
        return float("nan")
    try:
        return float(value)
    except ValueError:
        return text


_BOOLS = {v: v.lower() in _TRUE for w in ("yes", "no", "true", "false", "on", "off") for v in (w, w.title(), w.upper())}
_NULLS = {"", "~", "null", "Null", "NULL"}
_INT_RE = re.compile(
    r"""^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?0o[0-7_]+)$"""
)
_FLOAT_RE = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"""
    r"""|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"""
)
_NUMERIC_START = frozenset("0123456789+-.")


def _plain(text: str) -> Any:
    """Resolve a plain (unquoted) scalar as YAML 1.1 / go-yaml do."""
    if not text or text in _NULLS:
        return None
    first = text[0]
    if first in _NUMERIC_START:
        if _INT_RE.match(text):
            return _int(text)
        if _FLOAT_RE.match(text) or _GO_FLOAT.match(text):
            return _float(text)
        return text
    if first in "yYnNtTfFoO":
        return _BOOLS.get(text, text)
    return text


def _scalar(node: ScalarNode) -> Any:
    tag, text = node.tag, node.value
    if tag == _PLAIN:
        return _plain(text)
    if tag == _STR:
        return text
    if tag == _INT:
        return _int(text)
    if tag == _FLOAT:
        return _float(text)
    if tag == _BOOL:
        return text.lower() in _TRUE
    if tag == _NULL:
        return None
    return text  # timestamps, binary, merge as a value, custom and !!python tags: the text itself


# ---------------------------------------------------------------------------------------------
# Nodes -> tree


class _Converter:
    """Nodes to tree, recursively (depth is bounded first); aliases share one converted object.

    ``memo`` maps a container node to (converted value, expanded size); the expanded size is what
    the document would weigh with every alias copied out, which is how an alias bomb is caught
    without ever expanding it.
    """

    __slots__ = ("memo", "active", "duplicates")

    def __init__(self, duplicates: list[ParseIssue]):
        self.memo: dict[int, tuple[Any, int]] = {}
        self.active: set[int] = set()
        self.duplicates = duplicates

    def convert(self, node: Any, depth: int = 0) -> tuple[Any, int]:
        if node.__class__ is ScalarNode:
            tag = node.tag
            if tag == _PLAIN:
                return _plain(node.value), 1
            return (node.value if tag == _STR else _scalar(node)), 1
        key = id(node)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if key in self.active:
            raise _YamlError("recursive alias: an anchor is used inside its own value", _span(node))
        if depth >= MAX_DEPTH:
            raise _YamlError(f"nesting deeper than {MAX_DEPTH} levels; the file was not linted", _span(node))
        self.active.add(key)
        if node.__class__ is SequenceNode:
            value, size = self._sequence(node, depth + 1)
        else:
            value, size = self._mapping(node, depth + 1)
        self.active.discard(key)
        if size > MAX_EXPANDED_NODES:
            raise _YamlError(
                f"aliases expand this document to more than {MAX_EXPANDED_NODES:,} nodes "
                "(an alias bomb?); it was not linted",
                _span(node),
            )
        self.memo[key] = (value, size)
        return value, size

    def _sequence(self, node: SequenceNode, depth: int) -> tuple[YSeq, int]:
        seq = YSeq(_span(node))
        append, spans, convert = seq.append, seq.ispans.append, self.convert
        size = 1
        for child in node.value:
            value, child_size = convert(child, depth)
            append(value)
            spans(_span(child))
            size += child_size
        return seq, size

    def _mapping(self, node: MappingNode, depth: int) -> tuple[YMap, int]:
        result = YMap(_span(node))
        kspans, vspans, convert = result.kspans, result.vspans, self.convert
        merged: list[YMap] = []
        size = 1
        for knode, vnode in node.value:
            value, child_size = convert(vnode, depth)
            size += child_size + 1
            if knode.__class__ is ScalarNode:
                if knode.tag == _MERGE or (knode.tag == _PLAIN and knode.value == "<<"):
                    sources = value if isinstance(value, list) else [value]
                    for source in sources:
                        if not isinstance(source, YMap):
                            raise _YamlError(
                                "a merge key (<<) must refer to a mapping or a list of mappings", _span(vnode)
                            )
                        merged.append(source)
                    continue
                key = knode.value
            else:
                key = str(convert(knode, depth)[0])
            if key in result:
                self.duplicates.append(
                    ParseIssue(
                        _key_span(knode),
                        f'duplicate key "{key}" (first at line {kspans[key].line}); the last value wins',
                    )
                )
            result[key] = value
            kspans[key] = _key_span(knode)
            vspans[key] = _span(vnode)
        for source in merged:  # explicit keys win over merged ones, earlier merges over later ones
            for key, value in source.items():
                if key not in result:
                    result[key] = value
                    kspans[key] = source.kspans.get(key, source.span)
                    vspans[key] = source.vspans.get(key, source.span)
        return result, size


def _convert(root: Any, duplicates: list[ParseIssue]) -> Any:
    return _Converter(duplicates).convert(root)[0]


# ---------------------------------------------------------------------------------------------
# Depth guard


# libyaml's composer recurses in C: past some thousands of levels it overflows the stack and kills
# the process. Text that could nest deeper than this is measured from the event stream first.
COMPOSER_SAFE_DEPTH = 2000
_DEEP_BLOCK = re.compile(r"(?:^|\n)[ \t?:-]{%d}" % (COMPOSER_SAFE_DEPTH // 2))


def _could_be_deep(text: str) -> bool:
    """A cheap upper bound on nesting: flow brackets, or a very long indentation prefix."""
    if text.count("[") + text.count("{") > COMPOSER_SAFE_DEPTH // 2:
        return True
    return _DEEP_BLOCK.search(text) is not None


def _check_depth(text: str) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise _YamlError(f"nesting deeper than {MAX_DEPTH} levels; the file was not linted", _span(event))
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


# ---------------------------------------------------------------------------------------------
# Comments


def read_comments(text: str) -> list[Comment]:
    """Comments of a YAML text, exactly placed.

    libyaml's scanner drops comments but gives every token's exact start and end; a ``#`` that
    no token covers and that follows white space (or starts a line) is, by YAML's grammar, a
    comment. (ruamel.yaml's round-trip comment tokens were measured too: they merge consecutive
    comment lines and can carry the mark of the preceding line break, which puts directives on
    the wrong line.)
    """
    return _comments_between_tokens(text)


def _comments_between_tokens(text: str) -> list[Comment]:
    """Comments are the ``#`` runs that no token covers (libyaml's scanner drops them)."""
    lines = text.splitlines()
    covered: dict[int, list[tuple[int, int]]] = {}
    try:
        for token in yaml.scan(text, Loader=_Loader):
            start, end = token.start_mark, token.end_mark
            for line in range(start.line, end.line + 1):
                begin = start.column if line == start.line else 0
                stop = end.column if line == end.line else 1 << 30
                covered.setdefault(line, []).append((begin, stop))
    except yaml.YAMLError:
        pass
    comments = []
    for index, line in enumerate(lines):
        position = line.find("#")
        while position != -1:
            inside = any(b <= position < e for b, e in covered.get(index, ()))
            if not inside and (position == 0 or line[position - 1] in " \t"):
                comments.append(Comment(index + 1, position + 1, line[position + 1:].strip()))
                break
            position = line.find("#", position + 1)
    return comments


# ---------------------------------------------------------------------------------------------
# Documents -> objects


def _problem_span(exc: yaml.MarkedYAMLError) -> Span:
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return Span(1, 1, 1, 2)
    return Span(mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 2)


def _yaml_message(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        return "invalid YAML: " + ", ".join(parts) if parts else "invalid YAML"
    return f"invalid YAML: {exc}"


def _objects(root: Any, path: str, doc_index: int, out: list[K8sObject]) -> None:
    if not isinstance(root, YMap):
        return
    api_version, kind = root.get("apiVersion"), root.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        return
    if kind == "List" or (kind.endswith("List") and isinstance(root.get("items"), YSeq)):
        items = root.get("items")
        if isinstance(items, YSeq):
            for index, item in items.maps():
                if isinstance(item.get("apiVersion"), str) and isinstance(item.get("kind"), str):
                    out.append(_object(item, path, doc_index, ("items", index)))
        return
    out.append(_object(root, path, doc_index, ()))


def _object(body: YMap, path: str, doc_index: int, node_path: tuple) -> K8sObject:
    body.pop("status", None)  # live state (kubectl get -o yaml); never linted
    meta = body.get("metadata")
    name = namespace = ""
    if isinstance(meta, YMap):
        meta.pop("managedFields", None)
        name = meta.get("name") if isinstance(meta.get("name"), str) else ""
        if not name and isinstance(meta.get("generateName"), str):
            name = meta["generateName"]
        namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    return K8sObject(
        api_version=body["apiVersion"],
        kind=body["kind"],
        name=name,
        namespace=namespace,
        body=body,
        path=path,
        doc_index=doc_index,
        node_path=node_path,
    )


def load_text(text: str, path: str) -> Document:
    """Load YAML/JSON text into a :class:`Document` (never raises for bad input)."""
    doc = Document(path=path, kind=K8S)
    duplicates: list[ParseIssue] = []
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        if _could_be_deep(text):
            _check_depth(text)
        for index, node in enumerate(yaml.compose_all(text, Loader=_Loader)):
            if node is None:
                continue
            _objects(_convert(node, duplicates), path, index, doc.objects)
    except _YamlError as exc:  # documents before the bad one are still linted, as kubectl applies them
        doc.errors.append(ParseIssue(exc.span, exc.message))
    except yaml.YAMLError as exc:
        message = _yaml_message(exc)
        if "{{" in text:
            message += " (the file looks like a template: render it first, e.g. `helm template . | mlops-lint -`)"
        span = _problem_span(exc) if isinstance(exc, yaml.MarkedYAMLError) else Span(1, 1, 1, 2)
        doc.errors.append(ParseIssue(span, message))
    except (RecursionError, MemoryError):  # pragma: no cover - guarded above; last line of defence
        doc.errors.append(ParseIssue(Span(1, 1, 1, 2), "document too deeply nested or too large to parse"))
    doc.errors[:0] = duplicates
    if not doc.errors and not doc.objects:
        doc.skipped = "no Kubernetes object (apiVersion and kind)"
    if MARKER in text:
        doc.comments = place_comments(read_comments(text), text.splitlines())
    return doc


def load(data: bytes, path: str) -> Document:
    return load_decoded(data, path, K8S, load_text)
