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

import operator
import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from mlops_lint.model.bounds import MAX_NUMBER_DIGITS
from mlops_lint.model.document import K8S, Comment, Document, K8sObject, ParseIssue
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq
from mlops_lint.sources.comments import place_comments
from mlops_lint.sources.text import load_decoded

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

    # libyaml calls these two around every node, for path resolvers (none is ever added here):
    # C functions that take their arguments and do nothing instead of two Python calls per node
    # (7 % of composing)
    descend_resolver = staticmethod(operator.is_)  # (parent, index) -> ignored
    ascend_resolver = staticmethod(tuple)  # () -> ignored

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
    if len(value) > MAX_NUMBER_DIGITS + 3:  # sign and base prefix: past the bound it stays text
        return text
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

    ``memo`` maps a container node to (converted value, expanded size, height); the expanded size
    is what the document would weigh with every alias copied out, which is how an alias bomb is
    caught without ever expanding it, and the height bounds how deep a tree gets through chains
    of aliases (each alias puts its anchor's whole tree one level further down).
    """

    __slots__ = ("memo", "active", "duplicates", "aliased")

    def __init__(self, duplicates: list[ParseIssue]):
        self.memo: dict[int, tuple[Any, int, int]] = {}
        self.active: set[int] = set()
        self.duplicates = duplicates
        self.aliased = False  # whether any alias was met (for the message of an oversized document)

    def convert(self, node: Any, depth: int = 0) -> tuple[Any, int, int]:
        if node.__class__ is ScalarNode:
            tag = node.tag
            if tag == _PLAIN:
                return _plain(node.value), 1, 0
            return (node.value if tag == _STR else _scalar(node)), 1, 0
        key = id(node)
        hit = self.memo.get(key)
        if hit is not None:
            self.aliased = True
            if depth + hit[2] > MAX_DEPTH:
                raise _YamlError(f"aliases nest this document deeper than {MAX_DEPTH} levels; the file was not linted",
                                 _span(node))
            return hit
        if key in self.active:
            raise _YamlError("recursive alias: an anchor is used inside its own value", _span(node))
        if depth >= MAX_DEPTH:
            raise _YamlError(f"nesting deeper than {MAX_DEPTH} levels; the file was not linted", _span(node))
        self.active.add(key)
        if node.__class__ is SequenceNode:
            value, size, height = self._sequence(node, depth + 1)
        else:
            value, size, height = self._mapping(node, depth + 1)
        self.active.discard(key)
        if size > MAX_EXPANDED_NODES:
            if self.aliased:
                message = (f"aliases expand this document to more than {MAX_EXPANDED_NODES:,} nodes "
                           "(an alias bomb?); it was not linted")
            else:
                message = f"document has more than {MAX_EXPANDED_NODES:,} nodes; it was not linted (split it)"
            raise _YamlError(message, _span(node))
        self.memo[key] = (value, size, height + 1)
        return value, size, height + 1

    def _sequence(self, node: SequenceNode, depth: int) -> tuple[YSeq, int, int]:
        seq = YSeq(_span(node))
        append, spans, convert = seq.append, seq.ispans.append, self.convert
        size = 1
        height = 0
        for child in node.value:
            value, child_size, child_height = convert(child, depth)
            append(value)
            spans(_span(child))
            size += child_size
            if child_height > height:
                height = child_height
        return seq, size, height

    def _mapping(self, node: MappingNode, depth: int) -> tuple[YMap, int, int]:
        result = YMap(_span(node))
        kspans, vspans, convert = result.kspans, result.vspans, self.convert
        merged: list[YMap] = []
        size = 1
        height = 0
        for knode, vnode in node.value:
            value, child_size, child_height = convert(vnode, depth)
            size += child_size + 1
            if child_height > height:
                height = child_height
            if knode.__class__ is ScalarNode:
                if knode.tag == _MERGE or (knode.tag == _PLAIN and knode.value == "<<"):
                    sources = value if isinstance(value, list) else [value]
                    for source in sources:
                        if not isinstance(source, YMap):
                            raise _YamlError(
                                "a merge key (<<) must refer to a mapping or a list of mappings", _key_span(knode)
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
        _merge_keys(result, merged)
        return result, size, height


class _Unaliased(_Converter):
    """For text with no anchor (``&``), so no alias: no node is met twice, and a text below
    PRESCAN_CHARS cannot hold MAX_EXPANDED_NODES nodes, so neither the memo nor the expanded size
    and height are needed: containers are converted with their scalar children inline (a third
    of the converter's time: no (value, size, height) tuple and no call per scalar)."""

    __slots__ = ()

    def convert(self, node: Any, depth: int = 0) -> tuple[Any, int, int]:
        return self._value(node, depth), 0, 0

    def _value(self, node: Any, depth: int) -> Any:
        cls = node.__class__
        if cls is ScalarNode:
            tag = node.tag
            if tag == _PLAIN:
                return _plain(node.value)
            return node.value if tag == _STR else _scalar(node)
        if depth >= MAX_DEPTH:
            raise _YamlError(f"nesting deeper than {MAX_DEPTH} levels; the file was not linted", _span(node))
        if cls is SequenceNode:
            return self._items(node, depth + 1)
        return self._members(node, depth + 1)

    def _items(self, node: SequenceNode, depth: int) -> YSeq:
        start, end = node.start_mark, node.end_mark
        seq = YSeq(_new_span(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1)))
        append, spans, value_of = seq.append, seq.ispans.append, self._value
        for child in node.value:
            if child.__class__ is ScalarNode:
                tag = child.tag
                append(_plain(child.value) if tag == _PLAIN else (child.value if tag == _STR else _scalar(child)))
            else:
                append(value_of(child, depth))
            start, end = child.start_mark, child.end_mark
            spans(_new_span(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1)))
        return seq

    def _members(self, node: MappingNode, depth: int) -> YMap:
        start, end = node.start_mark, node.end_mark
        result = YMap(_new_span(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1)))
        kspans, vspans, value_of = result.kspans, result.vspans, self._value
        merged: list[YMap] | None = None
        for knode, vnode in node.value:
            if vnode.__class__ is ScalarNode:
                tag = vnode.tag
                value = _plain(vnode.value) if tag == _PLAIN else (vnode.value if tag == _STR else _scalar(vnode))
            else:
                value = value_of(vnode, depth)
            if knode.__class__ is ScalarNode:
                key = knode.value
                if key == "<<" and knode.tag == _PLAIN or knode.tag == _MERGE:
                    sources = value if isinstance(value, list) else [value]
                    for source in sources:
                        if not isinstance(source, YMap):
                            raise _YamlError(
                                "a merge key (<<) must refer to a mapping or a list of mappings", _key_span(knode)
                            )
                    merged = [*(merged or ()), *sources]
                    continue
            else:
                key = str(value_of(knode, depth))
            start, end = knode.start_mark, knode.end_mark
            line = start.line + 1
            if end.line != start.line:  # a multi-line key is cut to its first line
                key_span = _new_span(Span, (line, start.column + 1, line, start.column + 2))
            else:
                key_span = _new_span(Span, (line, start.column + 1, line, end.column + 1))
            if key in result:
                self.duplicates.append(
                    ParseIssue(key_span, f'duplicate key "{key}" (first at line {kspans[key].line}); the last value wins')
                )
            result[key] = value
            kspans[key] = key_span
            start, end = vnode.start_mark, vnode.end_mark
            vspans[key] = _new_span(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1))
        if merged:
            _merge_keys(result, merged)
        return result


def _convert(root: Any, duplicates: list[ParseIssue], text: str | None = None) -> Any:
    """``root`` as a tree; given the ``text`` it was composed from, without the alias machinery
    when the text cannot hold an alias."""
    return _converter(text)(duplicates).convert(root)[0]


def _converter(text: str | None = None) -> type[_Converter]:
    """The converter for the documents of ``text``, chosen once per stream: a file of many
    documents is not rescanned for ``&`` per document (100k documents were quadratic). Each
    document still gets its own converter (its memo is keyed by node ids, which a later
    document's nodes may reuse)."""
    if text is not None and len(text) <= PRESCAN_CHARS and "&" not in text:
        return _Unaliased
    return _Converter


# ---------------------------------------------------------------------------------------------
# Depth guard


# libyaml's composer recurses in C: past some thousands of levels it overflows the stack and kills
# the process. Text that could nest deeper than this is measured from the event stream first.
COMPOSER_SAFE_DEPTH = 2000
# line starts are found as "\n" (a literal the regex engine skips to) and the text's first line
# on its own: a pattern opening with ^ or an alternation is tried at every character
_DEEP_BLOCK = re.compile(r"[ \t?:-]{%d}" % (COMPOSER_SAFE_DEPTH // 2))
_DEEP_LINE = re.compile(r"\n[ \t?:-]{%d}" % (COMPOSER_SAFE_DEPTH // 2))


def _could_be_deep(text: str) -> bool:
    """A cheap upper bound on nesting: flow brackets, or a very long indentation prefix."""
    if text.count("[") + text.count("{") > COMPOSER_SAFE_DEPTH // 2:
        return True
    return _DEEP_BLOCK.match(text) is not None or _DEEP_LINE.search(text) is not None


# libyaml's composer builds every node of a document (about 400 bytes each) before the converter
# sees any of them, so text that could hold more nodes than the converter accepts is counted from
# the event stream first, which costs a fraction of composing and stops at the limit.
PRESCAN_CHARS = 1 << 18  # 256 Ki characters: below this a document cannot cost more than ~60 MB
MAX_FILE_NODES = 1_000_000  # over all documents of one file: bounds a file's memory (~200 MB)


def node_bound(text: str) -> int:
    """An upper bound on the nodes of ``text``, from character counts alone (C-speed): every node
    is a document's root or is introduced by an indicator (a ``:`` brings a key and a value, a
    ``-`` an item, ``,`` ``[`` ``{`` ``?`` at most two). Real manifests stay far below it (a 1.5 MB
    CRD: ~31k), so only text that could be too big pays for :func:`_prescan`."""
    count = text.count
    return (1 + count("---") + count("-") + count("[")
            + 2 * (count(":") + count(",") + count("{") + count("?")))


def _prescan(text: str) -> None:
    """Depth, nodes per document and nodes per file, from the event stream (raises _YamlError)."""
    depth = 0
    in_document = 0
    in_file = 0
    node_events = (yaml.ScalarEvent, yaml.AliasEvent)
    try:
        for event in yaml.parse(text, Loader=_Loader):
            cls = event.__class__
            if cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                depth += 1
                if depth > MAX_DEPTH:
                    raise _YamlError(f"nesting deeper than {MAX_DEPTH} levels; the file was not linted", _span(event))
            elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                depth -= 1
                continue
            elif cls is yaml.DocumentStartEvent:
                in_document = 0
                continue
            elif cls not in node_events:
                continue
            in_document += 1
            in_file += 1
            if in_document > MAX_EXPANDED_NODES:
                raise _YamlError(f"document has more than {MAX_EXPANDED_NODES:,} nodes; the file was not linted "
                                 "(split it)", _span(event))
            if in_file > MAX_FILE_NODES:
                raise _YamlError(f"file has more than {MAX_FILE_NODES:,} nodes; it was not linted (split it)",
                                 _span(event))
    except yaml.YAMLError:
        return  # a syntax error: composing reports it, after linting the documents before it


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


def _mark_span(mark: Any) -> Span:
    return Span(mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 2)


def _char_at(text: str, mark: Any) -> str:
    """The character at a libyaml mark (its ``index`` counts code points, as our columns do)."""
    index = getattr(mark, "index", None)
    return text[index] if isinstance(index, int) and 0 <= index < len(text) else ""


def _word_at(text: str, mark: Any) -> str:
    index = getattr(mark, "index", None)
    if not isinstance(index, int):
        return ""
    match = re.compile(r"[^\s,\[\]{}]{1,80}").match(text, index)
    return match.group(0) if match else ""


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "above"


def _explain(exc: yaml.MarkedYAMLError, text: str) -> tuple[str, Any] | None:
    """libyaml's problem in a user's words, and the mark to report it at (None: not known)."""
    problem, context = exc.problem or "", exc.context or ""
    mark, start = exc.problem_mark, exc.context_mark
    if "cannot start any token" in problem or "tab character" in problem:
        char = _char_at(text, mark)
        if char == "\t":
            return "a tab character here: YAML is indented with spaces only", mark
        if char in ("@", "`"):
            return f"a plain value cannot start with `{char}`: put the value in quotes", mark
        return f"`{char}` cannot start a value here: put the value in quotes" if char else None, mark
    if problem == "mapping values are not allowed in this context":
        return ("unexpected `:` here: quote a value that contains `: `, or indent this line like the keys "
                "above it"), mark
    if problem == "mapping keys are not allowed in this context":
        return "unexpected `?` here: quote a value that starts with `? `", mark
    if "could not find expected ':'" in problem:
        return ("expected `key: value`: this line (or a line it continues) has no `:`; check for a missing "
                "colon, a `...` left in an example, or an unrendered template"), start or mark
    if "did not find expected key" in problem:
        return ("this line does not line up with the keys of the mapping above it: expected another "
                "`key: value` at the same indentation"), mark
    if "did not find expected '-' indicator" in problem:
        return ("this line does not line up with the list above it: expected another `- item` at the same "
                "indentation"), mark
    if "flow mapping" in context and "expected ',' or '}'" in problem:
        return f"expected `,` or `}}` inside the `{{…}}` that starts at {_where(start)}", mark
    if "flow sequence" in context and "expected ',' or ']'" in problem:
        return f"expected `,` or `]` inside the `[…]` that starts at {_where(start)}", mark
    if "quoted scalar" in context and "end of stream" in problem:
        return f"the quoted string that starts at {_where(start)} is never closed", start or mark
    if "quoted scalar" in context and "escape character" in problem:
        return ("unknown escape sequence in a double-quoted string: write `\\\\` for a backslash, or use "
                "single quotes"), mark
    if problem == "found undefined alias":
        name = _word_at(text, mark)
        return f"the alias `{name}` refers to no anchor (`&{name[1:]}`) defined before it", mark
    if "duplicate anchor" in context:
        return f"an anchor (`&name`) is defined twice in one document (first at {_where(start)}): rename one", mark
    if "expected <document start>" in problem:
        return "text after the end of a document (`...`): start a new document with `---`", mark
    if "did not find expected node content" in problem:
        char = _char_at(text, mark)
        return (f"expected a value here, found `{char}`" if char.strip() else "expected a value here"), mark
    if "unknown directive" in problem:
        return ("a line that starts with `%` before a document is a directive, and this one is unknown: "
                "quote the value or remove the line"), mark
    if "while scanning an anchor" in context or "while scanning an alias" in context:
        return "`&` and `*` start an anchor or alias and must be followed by a name: quote the value", mark
    if "block scalar" in context:
        return "after `|` or `>` only an indentation digit, `+`/`-` and a comment may follow on that line", mark
    if "expected <block end>" in problem:
        return "this line does not line up with the block above it: check its indentation", mark
    return None


_ODD_BLANKS = {"\t": "a tab", "\u00a0": "a non-breaking space (U+00A0)", "\u2007": "a figure space (U+2007)",
               "\u202f": "a narrow no-break space (U+202F)", "\u3000": "an ideographic space (U+3000)"}
_LEADING = re.compile("[ \t\u00a0\u2007\u202f\u3000]*")


def _odd_indentation(text: str, line0: int) -> str:
    """What broke the indentation, when the error's line (or the one before it) is indented with
    a tab or a space YAML does not count as indentation (a non-breaking space pasted from a web
    page): named with its column, else nothing."""
    lines = text.split("\n", line0 + 1)
    for number in (line0, line0 - 1):
        if not 0 <= number < len(lines):
            continue
        line = lines[number]
        lead = _LEADING.match(line).group(0)  # type: ignore[union-attr]
        for col, char in enumerate(lead, 1):
            if char in _ODD_BLANKS:
                return (f"; line {number + 1} is indented with {_ODD_BLANKS[char]} at column {col}, which YAML "
                        "does not count as indentation: replace it with plain spaces")
    return ""


def _inside(span: Span, text: str) -> Span:
    """A span moved inside the text: libyaml puts "end of stream" one line past a last line that
    has no line break."""
    lines = text.split(_line_end(text))
    if span.line <= len(lines) and span.col <= len(lines[span.line - 1]) + 1:
        return span
    line = min(span.line, len(lines))
    col = min(span.col, len(lines[line - 1]) + 1) if span.line <= len(lines) else len(lines[line - 1]) + 1
    return Span(line, col, line, col + 1)


def _yaml_error(exc: yaml.YAMLError, text: str) -> tuple[Span, str]:
    """Where a libyaml error is and what it means, in the words of someone fixing the file."""
    if isinstance(exc, yaml.reader.ReaderError):
        # libyaml gives the offset in the UTF-8 bytes it read; columns count code points
        offset = len(text.encode("utf-8")[:exc.position].decode("utf-8", "ignore"))
        starts = [0] + [m.end() for m in _YAML_BREAKS.finditer(text, 0, offset)]  # lines as libyaml counts them
        line, col = len(starts), offset - starts[-1] + 1
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        message = (f"invalid YAML: control character U+{ord(char):04X} is not allowed in YAML text; remove it or "
                   "write it as an escape in a double-quoted string")
        return Span(line, col, line, col + 1), message
    if isinstance(exc, yaml.MarkedYAMLError):
        explained = _explain(exc, text)
        if explained is not None and explained[0]:
            message, mark = explained
            mark = mark or exc.problem_mark or exc.context_mark
            if mark is not None and not message.startswith("a tab character"):
                message += _odd_indentation(text, mark.line)
            return (_mark_span(mark) if mark is not None else Span(1, 1, 1, 2)), "invalid YAML: " + message
        parts = [p for p in (exc.context, exc.problem) if p]
        mark = exc.problem_mark or exc.context_mark
        return ((_mark_span(mark) if mark is not None else Span(1, 1, 1, 2)),
                "invalid YAML: " + ", ".join(parts) if parts else "invalid YAML")
    return Span(1, 1, 1, 2), f"invalid YAML: {exc}"


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


# JSON that YAML refuses: an astral character escaped as a surrogate pair ("\ud83d\ude80", what
# Python's json.dumps writes for an emoji) and raw characters YAML does not print (DEL, C1
# controls, U+FFFE/U+FFFF). kubectl decodes a document that starts with "{" as JSON, so such
# manifests apply; they are rewritten to YAML escapes before parsing and positions mapped back.
_SURROGATE_PAIR = re.compile(r"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})")
_JSON_ONLY_CHARS = re.compile("[\x7f-\x84\x86-\x9f\ufffe\uffff]")
_JSON_START = re.compile(r"\s*\{")


def _json_as_yaml(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with JSON-only escapes and characters rewritten, and the edits made: (index in
    the new text where an edit ends, characters the new text gained there)."""
    edits: list[tuple[int, int]] = []
    out: list[str] = []
    last = 0
    gained = 0

    def emit(start: int, end: int, replacement: str) -> None:
        nonlocal last, gained
        out.append(text[last:start])
        out.append(replacement)
        gained += len(replacement) - (end - start)
        edits.append((end + gained, len(replacement) - (end - start)))
        last = end

    found = sorted([(m.start(), m.end(), m) for m in _SURROGATE_PAIR.finditer(text)]
                   + [(m.start(), m.end(), m) for m in _JSON_ONLY_CHARS.finditer(text)], key=lambda t: t[0])
    for start, end, match in found:
        if start < last:
            continue
        if match.re is _SURROGATE_PAIR:
            high, low = int(match.group(2), 16), int(match.group(3), 16)
            code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            emit(start, end, f"{match.group(1)}\\U{code:08X}")
        else:
            emit(start, end, f"\\u{ord(match.group(0)):04x}")
    out.append(text[last:])
    return "".join(out), edits


# ---------------------------------------------------------------------------------------------
# Documents: each parsed on its own
#
# A line that starts with ``---`` begins a document wherever it stands (YAML forbids it inside
# content, even inside a block scalar), so a file splits at those lines into its documents with
# no parsing. Each is composed on its own, behind as many empty lines as precede it, which keeps
# every position exact. That lets the engine parse the documents other files look up (a PVC, a
# ClusterQueue) before the rest, and lets a syntax error in one document leave the others linted:
# kubectl, too, decodes every document of a file on its own. Files this cannot be done for exactly
# (directives, document-end markers, JSON escapes rewritten, line breaks other than LF and CRLF,
# and text big or deep enough to be measured first) are composed as one stream, which stops at
# an error.

_DOC_START = re.compile(r"---(?=[ \t\r\n]|\Z)")
_DOC_LINE = re.compile(r"\n---(?=[ \t\r\n]|\Z)")
_STREAM_ONLY = re.compile(r"%|\.\.\.(?=[ \t\r\n]|\Z)")  # directives, document ends
_STREAM_ONLY_LINE = re.compile(r"\n(?:%|\.\.\.(?=[ \t\r\n]|\Z))")
_CONTENT = re.compile(r"^[ \t]*[^ \t\r\n#]", re.M)  # a line that is neither blank nor a comment


# a key that makes a file a manifest even when it does not parse: `apiVersion` at any depth (a
# List's items, a flow mapping, quoted), `kind` at the top of a document
_MANIFEST_KEY = re.compile(r"""(?:^|[\s{,])["']?apiVersion["']?[ \t]*:|^["']?kind["']?[ \t]*:""", re.M)


class Stream:
    """One YAML file: its documents parsed on demand (:meth:`parse`), then whole (:meth:`document`)."""

    __slots__ = ("path", "text", "original", "edits", "pieces", "parsed")
    kind = K8S

    def __init__(self, text: str, path: str):
        if text.startswith("\ufeff"):
            text = text[1:]
        self.path = path
        self.original, self.edits = text, []
        if _JSON_START.match(text) and ("\\u" in text or _JSON_ONLY_CHARS.search(text)):
            text, self.edits = _json_as_yaml(text)
        self.text = text
        # (first line, text, index of its document) of each document; None: one stream
        self.pieces = _pieces(text) if not self.edits else None
        self.parsed: dict[int, tuple[list[K8sObject], list[ParseIssue], list[ParseIssue]]] = {}

    def parse(self, wanted: Any = None) -> list[K8sObject]:
        """Parse the documents whose text ``wanted`` accepts (all when None; every one, for a file
        read as one stream); returns the objects parsed so far."""
        if self.pieces is None:
            if 0 not in self.parsed:
                self.parsed[0] = _whole(self.text, self.path)
        else:
            for number, (_, text, _) in enumerate(self.pieces):
                if number not in self.parsed and (wanted is None or wanted(text)):
                    self.parsed[number] = self._piece(number)
        return self.objects()

    def objects(self) -> list[K8sObject]:
        """The objects of the documents parsed so far, in file order."""
        return [obj for number in sorted(self.parsed) for obj in self.parsed[number][0]]

    def _piece(self, number: int) -> tuple[list[K8sObject], list[ParseIssue], list[ParseIssue]]:
        line, piece, index = self.pieces[number]  # type: ignore[index]
        text = "\n" * line + piece if line else piece  # libyaml scans empty lines at ~3 ns each
        objects: list[K8sObject] = []
        duplicates: list[ParseIssue] = []
        errors: list[ParseIssue] = []
        try:
            for node in yaml.compose_all(text, Loader=_Loader):
                if node is not None:
                    _objects(_convert(node, duplicates, piece), self.path, index, objects)
        except _YamlError as exc:
            errors.append(ParseIssue(exc.span, exc.message))
        except yaml.YAMLError as exc:
            errors.append(ParseIssue(*_error(exc, text, self.text)))
        except (RecursionError, MemoryError):  # pragma: no cover - guarded by _pieces; last line of defence
            errors.append(ParseIssue(Span(line + 1, 1, line + 1, 2), "document too deeply nested or too large to parse"))
        return objects, duplicates, errors

    def document(self) -> Document:
        """The whole file: every document parsed (those :meth:`parse` gave, as they were)."""
        self.parse()
        doc = Document(path=self.path, kind=K8S, text=self.original)
        duplicates: list[ParseIssue] = []
        for number in sorted(self.parsed):
            objects, found, errors = self.parsed[number]
            doc.objects.extend(objects)
            duplicates.extend(found)
            doc.errors.extend(errors)
        doc.errors[:0] = duplicates
        text, original = self.text, self.original
        if not doc.errors and not doc.objects:
            doc.skipped = "no Kubernetes object (apiVersion and kind)"
        elif doc.errors and not doc.objects and self.path.lower().endswith(".json") and "apiVersion" not in original:
            # editor settings, tsconfig.json with comments: JSON that is no manifest, skipped as
            # silently as a YAML file without apiVersion (SPEC section 2)
            doc.errors = []
            doc.skipped = "not Kubernetes JSON (it does not parse and names no apiVersion)"
        elif (doc.errors and not doc.objects and _MANIFEST_KEY.search(original) is None
              and all(issue.message.startswith(("invalid YAML", "duplicate key")) for issue in doc.errors)):
            # Helm values, CI configs: YAML with no object whose syntax error or duplicate key is
            # not a manifest's (issue 33 item 10), skipped as a valid one would be; a broken
            # manifest still names its apiVersion (anywhere) or its kind (at the top). What the
            # guards refuse (an alias bomb, deep nesting) is still said: its content is unknown
            doc.errors = []
            doc.skipped = "no Kubernetes object (apiVersion and kind)"
        if MARKER in text:
            doc.comments = place_comments(read_comments(text), text.splitlines())
        if self.edits or _has_other_breaks(text):
            _Renumber(text, original, self.edits).document(doc)
        doc.errors = [ParseIssue(_inside(issue.span, original), issue.message) for issue in doc.errors]
        return doc


def _pieces(text: str) -> list[tuple[int, str, int]] | None:
    """The documents of ``text`` as (first line, text, index in the stream), or None when the file
    must be composed as one stream (see above)."""
    if (len(text) > PRESCAN_CHARS or _could_be_deep(text) or _has_other_breaks(text)
            or _STREAM_ONLY.match(text) is not None or _STREAM_ONLY_LINE.search(text) is not None):
        return None
    starts = [0] + [m.start() + 1 for m in _DOC_LINE.finditer(text)]
    pieces = []
    line = 0
    index = 0
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(text)
        piece = text[start:end]
        pieces.append((line, piece, index))
        # what precedes the first `---` is a document only if it holds more than comments
        if number > 0 or _DOC_START.match(piece) is not None or _CONTENT.search(piece) is not None:
            index += 1
        line += piece.count("\n")
    return pieces


def _error(exc: yaml.YAMLError, parsed: str, whole: str) -> tuple[Span, str]:
    span, message = _yaml_error(exc, parsed)
    if "{{" in whole:
        message += " (the file looks like a template: render it first, e.g. `helm template . | mlops-lint -`)"
    return span, message


def _whole(text: str, path: str) -> tuple[list[K8sObject], list[ParseIssue], list[ParseIssue]]:
    """A file composed as one stream: the documents before an error are still linted."""
    objects: list[K8sObject] = []
    duplicates: list[ParseIssue] = []
    errors: list[ParseIssue] = []
    try:
        if (len(text) > PRESCAN_CHARS and node_bound(text) > MAX_EXPANDED_NODES) or _could_be_deep(text):
            _prescan(text)
        converter = _converter(text)
        for index, node in enumerate(yaml.compose_all(text, Loader=_Loader)):
            if node is None:
                continue
            _objects(converter(duplicates).convert(node)[0], path, index, objects)
    except _YamlError as exc:
        errors.append(ParseIssue(exc.span, exc.message))
    except yaml.YAMLError as exc:
        errors.append(ParseIssue(*_error(exc, text, text)))
    except (RecursionError, MemoryError):  # pragma: no cover - guarded above; last line of defence
        errors.append(ParseIssue(Span(1, 1, 1, 2), "document too deeply nested or too large to parse"))
    return objects, duplicates, errors


def load_text(text: str, path: str) -> Document:
    """Load YAML/JSON text into a :class:`Document` (never raises for bad input)."""
    return Stream(text, path).document()


# libyaml (and str.splitlines) also break lines at a lone CR, NEL, LINE SEPARATOR and PARAGRAPH
# SEPARATOR; git, GitHub, SARIF viewers and our other loaders count lines at LF only. Files with
# such characters (rare: text pasted from the web) get their positions renumbered: to LF lines,
# or, in a file without a single LF (classic Mac OS line ends), to CR lines, as YAML, editors and
# the file's author count them (LF lines would put every finding on line 1).
_LONE_CR = re.compile("\r(?!\n)")


def _line_end(text: str) -> str:
    """What ends a line of ``text`` in the positions reported: LF, or CR when it has no LF."""
    return "\r" if "\n" not in text and "\r" in text else "\n"


def _has_other_breaks(text: str) -> bool:
    return ("\x85" in text or "\u2028" in text or "\u2029" in text
            or ("\r" in text and _LONE_CR.search(text) is not None))


_YAML_BREAKS = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


class _Renumber:
    """libyaml's (line, column) in the parsed text to LF lines of the original text, through the
    character index (and back over the edits of :func:`_json_as_yaml`)."""

    def __init__(self, parsed: str, original: str, edits: list[tuple[int, int]]):
        import bisect

        self._bisect = bisect.bisect_right
        self.starts = [0] + [m.end() for m in _YAML_BREAKS.finditer(parsed)]  # libyaml's lines
        end = _line_end(original)
        self.lf_starts = [0] + [m.end() for m in re.finditer(re.escape(end), original)]  # LF (or CR) lines
        self.edit_ends = [end for end, _ in edits]
        self.gained = [0]
        for _, delta in edits:
            self.gained.append(self.gained[-1] + delta)
        self.seen: set[int] = set()

    def point(self, line: int, col: int) -> tuple[int, int]:
        start = self.starts[line - 1] if 0 < line <= len(self.starts) else self.starts[-1]
        index = start + col - 1
        index -= self.gained[self._bisect(self.edit_ends, index)]
        lf_line = self._bisect(self.lf_starts, index)
        return lf_line, index - self.lf_starts[lf_line - 1] + 1

    def span(self, span: Span) -> Span:
        line, col = self.point(span.line, span.col)
        end_line, end_col = self.point(span.end_line, span.end_col)
        return Span(line, col, end_line, end_col)

    def tree(self, node: Any) -> None:
        stack = [node]
        while stack:
            item = stack.pop()
            if id(item) in self.seen:
                continue
            self.seen.add(id(item))
            if isinstance(item, YMap):
                item.span = self.span(item.span)
                item.kspans = {k: self.span(v) for k, v in item.kspans.items()}
                item.vspans = {k: self.span(v) for k, v in item.vspans.items()}
                stack.extend(v for v in item.values() if isinstance(v, (YMap, YSeq)))
            elif isinstance(item, YSeq):
                item.span = self.span(item.span)
                item.ispans[:] = [self.span(v) for v in item.ispans]
                stack.extend(v for v in item if isinstance(v, (YMap, YSeq)))

    def document(self, doc: Document) -> None:
        from msgspec.structs import replace

        for obj in doc.objects:
            self.tree(obj.body)
        doc.errors = [ParseIssue(self.span(e.span), e.message) for e in doc.errors]
        doc.comments = [replace(c, line=self.point(c.line, c.col)[0], col=self.point(c.line, c.col)[1],
                                next_line=self.point(c.next_line, 1)[0] if c.next_line else 0) for c in doc.comments]


def load(data: bytes, path: str) -> Document:
    return load_decoded(data, path, K8S, load_text)


def stream(data: bytes, path: str) -> "Stream | Document":
    """A file's bytes as a :class:`Stream` to parse in parts, or the Document of an encoding error."""
    return load_decoded(data, path, K8S, Stream)  # type: ignore[arg-type]


def check_bounds(text: str) -> str | None:
    """Why ``text`` is beyond the loader's bounds (too deep for libyaml's composer, too many
    nodes), or None. For YAML read outside a manifest (a CRD file, a ConfigMap value): composing
    it unchecked could crash the process."""
    if len(text) > PRESCAN_CHARS or _could_be_deep(text):
        try:
            _prescan(text)
        except _YamlError as exc:
            return exc.message
    return None


def compose_tree(text: str) -> Any:
    """One YAML document held in a string, as a positioned tree with the loader's scalars and
    bounds (spans count from the string's first line); None when it is not one such document."""
    if check_bounds(text) is not None:
        return None
    try:
        node = yaml.compose(text, Loader=_Loader)
        return None if node is None else _convert(node, [])
    except (yaml.YAMLError, _YamlError, RecursionError):
        return None


# what the fix resolver reads the way the loader does (a new scalar's type, a text libyaml
# breaks lines in differently): one definition, public under these names
plain_scalar = _plain
has_other_breaks = _has_other_breaks


def _merge_keys(result: YMap, merged: list) -> None:
    """YAML merge keys (``<<: *base``): the merged mappings' entries the mapping does not set
    itself, with their spans (explicit keys win over merged ones, earlier merges over later ones)."""
    kspans, vspans = result.kspans, result.vspans
    for source in merged:
        for key, value in source.items():
            if key not in result:
                result[key] = value
                kspans[key] = source.kspans.get(key, source.span)
                vspans[key] = source.vspans.get(key, source.span)
