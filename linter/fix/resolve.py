"""Turning a rule's :class:`~linter.fix.Plan` into a :class:`~linter.fix.Fix`: text edits at the
exact spans the YAML loader gave, in the file's own style.

``resolve(plan, text, path)`` reads only the plan's nodes and the file's decoded ``text``; it is
pure (cached helpers aside) and never raises for odd input: whatever it cannot do exactly and
safely gives ``None``, never a guess.

What each intent becomes:

- ``SetKey(node, path, value)``: the existing mappings along ``path`` are followed; an existing
  scalar at its end is replaced in place (a quoted string stays quoted the same way); a ``dict``
  value over an existing mapping is merged into it key by key (keys it does not name are kept);
  any other existing value is replaced. The missing rest of the path is inserted as one fragment
  under the deepest mapping that exists: in a block mapping as new lines after the last line of
  its last entry (after a trailing comment on that line, after the last line of a nested block or
  a ``|`` scalar), at the column of its keys, nested levels indented by the file's own step (2, 4,
  ...; sequences under their key indented or not, as the file does); in a flow mapping as
  ``, key: value`` before the ``}`` (JSON style when its keys are double-quoted). A key whose value
  is null (``securityContext:``) or an empty ``{}``/``[]`` under a block mapping gets the fragment
  as its block value. A value that already equals ``value`` gives no edit.
- ``AppendItem(node, key, item)``: appended to the block sequence (same dash column and item
  indentation) or flow sequence ``[a, b]``; ``key: [item]`` created as ``SetKey`` would when
  missing. An item already in the sequence gives no edit.
- ``DeleteItem(node, key, indexes)``: each item goes with its own text only. In a block
  sequence that is from the line break before its dash line to the end of its last line (the
  comment on its lines goes, a comment line above it stays, and a key inserted after it stays a
  line of its own); when every item goes, ``[]`` follows the key's colon (a list stays a list).
  In a flow sequence an item goes with the comma after it (the last one with the comma before
  it); only white space and commas may go along, so a comment between them is no fix.
- ``DeleteKey(node, key)``: the entry goes as an item does (its key line to the end of its
  value's last line; in flow style with its comma). A key after a list item's dash, or the only
  key of a block mapping (what is left would read as null), is no fix.
- ``Replace(span, text)``: as given, when the span lies in the text.
- ``InsertLine(anchor, text, after, align)``: one new line beside an IaC attribute, indented as
  its line, below its last line or above its first (see :class:`~linter.fix.InsertLine`).

Each operation type names its ``kind``; :data:`_OPERATIONS` maps a kind to the type and the
resolver's method for it, the one switch on the edit kind (a new operation is a type in
``linter.fix``, a method here and a line there). The resolver's own edits are :class:`_TextEdit`.

Intents of one plan are resolved together: several intents under one mapping become one
fragment (``resources.limits`` and ``resources.requests`` share one ``resources:``); insertions
at one point are ordered inner block first; edits that would overlap make the plan ``None``.

A node is trusted only when its spans match the text: its span lies in the text, every key's span
lies inside the mapping's span and holds that key's text, a block mapping's keys share a column,
a value starts after its key (an alias's value is its anchor's, elsewhere). Views merged from two
objects, built objects whose spans point elsewhere, merge keys (``<<``) and aliases on the way
give ``None``. Files with line breaks other than LF and CRLF give ``None`` for node intents.

New scalars are quoted as PyYAML's emitter decides (YAML 1.1, as Kubernetes reads YAML), then
checked against the loader's own resolution (a plain ``1e3`` is a number to go-yaml): cached, so
thousands of findings cost one dump per distinct value.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from functools import lru_cache
from typing import Any, NamedTuple

import yaml

from mlops_lint.fix import AppendItem, DeleteItem, DeleteKey, Edit, Fix, InsertLine, Plan, Replace, SetKey
from mlops_lint.fix.apply import TextIndex, text_index
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq, frozen
from mlops_lint.sources.yaml_k8s import has_other_breaks, plain_scalar

Pos = tuple[int, int]


class _TextEdit(NamedTuple):
    """One edit of the text: replace what stands from ``start`` to ``end`` with ``text``;
    insertions at one point are joined in ``order`` (inner blocks first)."""

    start: Pos
    end: Pos
    order: tuple
    text: str


class _Unsafe(Exception):
    """The plan cannot be resolved exactly: no fix."""


def resolve(plan: Plan, text: str, path: str) -> Fix | None:
    """The edits of ``plan`` against ``text`` (the decoded text of the file ``path`` its nodes
    come from), or None when any intent cannot be resolved safely or nothing needs to change."""
    try:
        edits = _Resolver(text).run(plan.intents)
    except _Unsafe:
        return None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, RecursionError):
        return None  # a node that is not what a loader builds: no fix rather than a traceback
    if not edits:
        return None
    return Fix(plan.title, tuple(Edit(path, span, new) for span, new in edits), plan.safe)


# ---------------------------------------------------------------------------------------------
# Scalars and fragments

_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")
_DUMP = {"allow_unicode": True, "width": 1 << 30, "sort_keys": False}


def _dump_one(value: Any, flow: bool, style: str | None) -> str:
    out = yaml.safe_dump([value], default_flow_style=flow, default_style=style, **_DUMP)
    return out[1:-2] if flow else out[2:-1]  # "[v]\n" / "- v\n"


@lru_cache(maxsize=8192, typed=True)
def scalar_text(value: Any, flow: bool = False, style: str | None = None) -> str:
    """``value`` (a scalar) as YAML text for a value position in block (or flow) context.

    Strings are plain when PyYAML's emitter allows it and the loader reads the plain text back
    as the same string; else single-quoted, or double-quoted with escapes when they hold line
    breaks or characters YAML does not print. ``style`` (``'"'`` or ``"'"``) asks for a quoting
    style (kept from the scalar being replaced)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _dump_one(value, flow, None)
    if not isinstance(value, str):
        raise _Unsafe
    if _BREAKS.search(value):
        style = '"'
    out = _dump_one(value, flow, style)
    if "\n" in out:  # PyYAML folded it anyway: escapes keep it on one line
        out = json.dumps(value, ensure_ascii=False)
    if out[:1] not in ("'", '"') and plain_scalar(out) != value:
        out = _dump_one(value, flow, "'")
        if "\n" in out:
            out = json.dumps(value, ensure_ascii=False)
    return out


@lru_cache(maxsize=8192)
def key_text(key: str, flow: bool = False) -> str:
    """``key`` as a simple key (quoted when a plain key would read as something else)."""
    if not isinstance(key, str):
        raise _Unsafe
    if _BREAKS.search(key):
        return json.dumps(key, ensure_ascii=False)
    out = yaml.safe_dump({key: 0}, default_flow_style=flow, **_DUMP)
    out = out[1:-5] if flow else out[:-4]  # "{k: 0}\n" / "k: 0\n"
    if out.startswith("?") or "\n" in out:
        return json.dumps(key, ensure_ascii=False)
    return out


def _data(value: Any) -> Any:
    """A rule's plain data as fresh dicts and lists (tuples are sequences)."""
    if isinstance(value, dict):
        return {k: _data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_data(v) for v in value]
    return value


_QUOTE_OPENERS = (": ", "- ", "[", ", ")


@lru_cache(maxsize=8)
def quote_of(text: str) -> str:
    """The quote ``text``'s writer opens strings with: ``"`` when more of its values and items
    open with it than with ``'`` (YAML's single quote, PyYAML's choice, otherwise)."""
    double = sum(text.count(opener + '"') for opener in _QUOTE_OPENERS)
    single = sum(text.count(opener + "'") for opener in _QUOTE_OPENERS)
    return '"' if double > single else "'"


def _scalar(value: Any, flow: bool, text: str) -> str:
    """``scalar_text``, a string that needs quotes quoted as the file (``text``) quotes them."""
    out = scalar_text(value, flow)
    if out[:1] == "'" and quote_of(text) == '"':
        return scalar_text(value, flow, '"')
    return out


def _flow(value: Any, as_json: bool, text: str) -> str:
    if as_json:
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key_text(k, True)}: {_flow(v, False, text)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v, False, text) for v in value) + "]"
    return _scalar(value, True, text)


def _flow_entry(key: str, value: Any, as_json: bool, text: str) -> str:
    return f"{json.dumps(key, ensure_ascii=False) if as_json else key_text(key, True)}: {_flow(value, as_json, text)}"


class _Layout:
    """How the file indents: a nested mapping's keys ``step`` columns right of its key, a
    sequence's dashes ``seq`` columns right of its key (0: not indented), an item's content
    ``item`` columns right of its dash; strings that need quotes quoted as the file (``text``)
    quotes them."""

    __slots__ = ("step", "seq", "item", "text")

    def __init__(self, step: int, seq: int, item: int = 2, text: str = ""):
        self.step, self.seq, self.item, self.text = step, seq, item, text

    def entries(self, data: dict, col: int, out: list[str]) -> list[str]:
        pad = " " * col
        for key, value in data.items():
            head = f"{pad}{key_text(key)}:"
            if isinstance(value, dict) and value:
                out.append(head)
                self.entries(value, col + self.step, out)
            elif isinstance(value, list) and value:
                out.append(head)
                self.items(value, col + self.seq, out)
            else:
                out.append(f"{head} {self._inline(value)}")
        return out

    def items(self, items: list, col: int, out: list[str], item: int | None = None) -> list[str]:
        pad = " " * col
        item = self.item if item is None else item
        for value in items:
            if isinstance(value, (dict, list)) and value:
                first = len(out)
                if isinstance(value, dict):
                    self.entries(value, col + item, out)
                else:
                    self.items(value, col + item, out)
                out[first] = pad + "-" + " " * (item - 1) + out[first][col + item:]
            else:
                out.append(f"{pad}- {self._inline(value)}")
        return out

    def _inline(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{}"
        if isinstance(value, list):
            return "[]"
        return _scalar(value, False, self.text)


_KEY_LINE = re.compile(r"^( *)((?:- +)*)(.*)$")
_DOC_LINE = re.compile(r"\n---(?=[ \t\r\n]|\Z)")  # the line break before a `---` line (not the first line's)
_SCAN_LINES = 4000


_OPENER = re.compile(r":[^\S\n]*$", re.M)  # the colon that ends a line's text (one a line at most)


def _count_layout(lines: list[str], first: int, stop: int, candidates: list[int], steps: Counter,
                  seqs: Counter) -> None:
    """Count, for each line of ``lines[first:stop]`` that opens a block (``key:`` with nothing
    after it), how far right the next line that is neither blank nor a comment stands (a nested
    mapping's step, or a sequence's dash offset), when that line is before ``stop`` too.
    ``candidates`` are the numbers (sorted) of every line ending with a colon: only those can
    open a block, so the other lines are read only as the line after one."""
    for number in candidates[bisect.bisect_left(candidates, first):bisect.bisect_left(candidates, stop)]:
        body = lines[number].rstrip()
        stripped = body.lstrip(" ")
        if not stripped.endswith(":") or stripped.startswith(("#", "'", '"', "|", ">")) or " #" in body:
            continue
        match = _KEY_LINE.match(body)
        opener = len(match.group(1)) + len(match.group(2))  # type: ignore[union-attr]
        for after in range(number + 1, stop):
            body = lines[after].rstrip()
            stripped = body.lstrip(" ")
            if not stripped or stripped.startswith("#"):
                continue
            indent = len(body) - len(stripped)
            if stripped.startswith("- ") or stripped == "-":
                seqs[indent - opener] += 1
            elif indent > opener:
                steps[indent - opener] += 1
            break


def _pick(counts: Counter, low: int) -> int | None:
    found = [s for s in counts if low <= s <= 8]
    return max(found, key=lambda s: (counts[s], -s)) if found else None


@lru_cache(maxsize=8)
def _layouts(text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """The indentation step and sequence offset of each document of ``text`` (split at ``---``
    lines), as (first lines, layouts): a file's documents may come from different writers.
    A document without evidence takes the file's, and a file without any takes 2 and 0
    (kubectl's style). Only the first 4,000 lines of a document are read."""
    starts = [0]
    seen, line = 0, 0
    for match in _DOC_LINE.finditer(text):
        at = match.start() + 1  # where the `---` line starts
        line += text.count("\n", seen, at)
        seen = at
        starts.append(line)
    lines = text.split("\n")
    candidates, seen, line = [], 0, 0
    for match in _OPENER.finditer(text):
        line += text.count("\n", seen, match.start())
        seen = match.start()
        candidates.append(line)
    total_steps: Counter[int] = Counter()
    total_seqs: Counter[int] = Counter()
    found = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        steps: Counter[int] = Counter()
        seqs: Counter[int] = Counter()
        _count_layout(lines, start, min(end, start + _SCAN_LINES), candidates, steps, seqs)
        total_steps.update(steps)
        total_seqs.update(seqs)
        found.append((_pick(steps, 1), _pick(seqs, 0)))
    step_all = _pick(total_steps, 1) or 2
    seq_all = _pick(total_seqs, 0)
    layouts = []
    for step, seq in found:
        step = step or step_all
        layouts.append((step, seq if seq is not None else (seq_all if seq_all is not None else 0)))
    return [start + 1 for start in starts], layouts


def layout_at(text: str, line: int) -> tuple[int, int]:
    """The (step, sequence offset) of the document that holds ``line``."""
    starts, layouts = _layouts(text)
    return layouts[max(bisect.bisect_right(starts, line) - 1, 0)]


@lru_cache(maxsize=8)
def _text_facts(text: str) -> tuple[bool, bool]:
    """Whether ``text`` may hold a merge key, and whether it has line breaks other than LF and
    CRLF: scanned once per text, not once per finding."""
    return "<<" in text, has_other_breaks(text)


@lru_cache(maxsize=4096)
def _quoted_key(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


_EMPTY_VALUE = re.compile(r"\s*:\s*(?:null|Null|NULL|~|\{\s*\}|\[\s*\])?\s*\Z")
# a key's colon and what stands before its block value: comment lines there belong to the block
# (a replacement removes them with it); a comment on the key's own line stays
_COLON = re.compile(r"\s*:(?:\s*\n[ \t]*#[^\n]*)*\s*\Z")
_COLON_COMMENT = re.compile(r"([ \t]*:)[ \t]+#[^\n]*\n(?:[ \t]*#[^\n]*\n|\s)*\Z")
_PROPS = re.compile(r"(?:[&!][^\s]*\s+)+")
_BLOCK_HEADER = re.compile(r"[|>]([1-9+-]{0,2})")
_MERGE = re.compile(r"<<\s*:")
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s,\[\]{}]")
_ALIAS = re.compile(r"[ \t]*:[ \t]+(\*[^\s,\[\]{}]+)")
_DASH = re.compile(r" *- +\Z")  # what stands before a block sequence item on its dash line
_SEPARATOR = re.compile(r"\s*,\s*\Z")  # between two flow entries
_GAP = re.compile(r"[\s,]*\Z")  # between a bracket and an entry
_KEY_COLON = re.compile(r"([ \t]*:)[ \t]*(?:#.*)?\Z")  # the rest of a key's line before its block value


# ---------------------------------------------------------------------------------------------
# Targets: where new data goes


class _MapTarget:
    """New entries at the end of an existing mapping."""

    __slots__ = ("node", "data")

    def __init__(self, node: YMap):
        self.node, self.data = node, {}


class _FillTarget:
    """A null (or empty ``{}``/``[]``) value of ``parent[key]`` that gets ``data`` as its value."""

    __slots__ = ("parent", "key", "data")

    def __init__(self, parent: YMap, key: str, data: Any):
        self.parent, self.key, self.data = parent, key, data


class _SeqTarget:
    """New items at the end of an existing sequence."""

    __slots__ = ("node", "data", "parent")

    def __init__(self, node: YSeq, parent: YMap):
        self.node, self.data, self.parent = node, [], parent


def _merge(into: dict, data: dict) -> None:
    for key, value in data.items():
        if key not in into:
            into[key] = value
        elif isinstance(into[key], dict) and isinstance(value, dict):
            _merge(into[key], value)
        elif isinstance(into[key], list) and isinstance(value, _Items):
            _append_new(into[key], value)
        elif frozen(into[key]) != frozen(value):
            raise _Unsafe  # two intents want different values at one new key


class _Items(list):
    """Items to append (merged into a pending list rather than compared with it)."""


def _append_new(into: list, items: list) -> None:
    for item in items:
        if all(frozen(item) != frozen(have) for have in into):
            into.append(item)


def _nest(path: tuple[str, ...], value: Any) -> dict:
    for key in reversed(path[1:]):
        value = {key: value}
    return {path[0]: value}


@lru_cache(maxsize=8)
def _shared_nodes(text: str) -> tuple[tuple[Pos, Pos], ...]:
    """The spans (start, end) of the anchored nodes of ``text`` that an alias of the same
    document names: editing one edits every path that aliases it. Read from libyaml's events,
    once per text that holds both ``&`` and ``*``; a text that does not parse shares nothing
    the loaders would have given a fix for."""
    shared: list[tuple[Pos, Pos]] = []
    anchored: list[tuple[str, Pos, Pos]] = []
    aliased: set[str] = set()
    open_: list[tuple[str | None, Pos]] = []
    try:
        for event in yaml.parse(text, Loader=_EventLoader):
            kind = event.__class__
            if kind is yaml.AliasEvent:
                aliased.add(event.anchor)
            elif kind is yaml.ScalarEvent:
                if event.anchor is not None:
                    anchored.append((event.anchor, _pos(event.start_mark), _pos(event.end_mark)))
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                open_.append((event.anchor, _pos(event.start_mark)))
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                anchor, start = open_.pop()
                if anchor is not None:
                    anchored.append((anchor, start, _pos(event.end_mark)))
            elif kind is yaml.DocumentEndEvent:
                shared.extend((start, end) for name, start, end in anchored if name in aliased)
                anchored, aliased = [], set()
    except (yaml.YAMLError, IndexError):
        return tuple(shared)
    return tuple(shared)


def _last_block_scalar(text: str) -> tuple[int, int, str] | None:
    """Where the last node of ``text`` starts (line, column) and its value, when it is a block
    scalar (``|`` or ``>``) that the text ends in; else None."""
    last = None
    try:
        for event in yaml.parse(text, Loader=_EventLoader):
            if event.__class__ is yaml.ScalarEvent:
                last = event
            elif event.__class__ in (yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.AliasEvent):
                last = None
    except yaml.YAMLError:
        return None
    if last is None or last.style not in ("|", ">"):
        return None
    line, col = _pos(last.start_mark)
    return line, col, last.value


def _pos(mark: Any) -> Pos:
    return mark.line + 1, mark.column + 1


try:
    from yaml import CSafeLoader as _EventLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _EventLoader  # type: ignore[assignment]


# ---------------------------------------------------------------------------------------------
# The resolver


class _NodeFacts:
    """What one text's resolvers learn about its nodes, shared by every plan resolved against
    it (a file's findings check the same mappings again and again): facts depend only on the
    text and the node. Facts are keyed by ``id``; :meth:`hold` keeps the node alive while the
    facts live, so no id is reused by another object."""

    __slots__ = ("held", "checked", "unsafe", "aliases", "ends", "layouts")

    def __init__(self) -> None:
        self.held: dict[int, Any] = {}  # id(node) -> node
        self.checked: dict[int, int] = {}  # id(map) -> key column (0 for flow)
        self.unsafe: set[int] = set()  # id(map) of mappings that failed the check
        self.aliases: dict[tuple[int, str], Span] = {}  # (id(map), key) -> span of its `*alias`
        self.ends: dict[int, Pos] = {}  # id(collection) -> where its block's text ends
        self.layouts: dict[tuple[int, int], Any] = {}  # (id(map), key column) -> _Layout

    def hold(self, node: Any) -> int:
        """``node``'s id, to key a fact by (the node is kept: see the class)."""
        ident = id(node)
        self.held[ident] = node
        return ident


@lru_cache(maxsize=8)
def _node_facts(text: str) -> _NodeFacts:
    return _NodeFacts()


class _Resolver:
    def __init__(self, text: str):
        self.text = text
        self.ix: TextIndex = text_index(text)
        self.edits: list[_TextEdit] = []
        self.on_nodes = False  # a node operation was resolved
        self.deletions: dict[tuple, tuple] = {}  # ("item", id(seq)) / ("key", id(map)) -> (map, key, what goes)
        self.targets: dict[tuple, Any] = {}
        self.facts = facts = _node_facts(text)
        self.checked = facts.checked
        self.aliases = facts.aliases

    # -- the text

    def line(self, number: int) -> str:
        if not 1 <= number <= self.ix.line_count:
            raise _Unsafe
        return self.ix.line(number)

    def slice(self, start: Pos, end: Pos) -> str:
        return self.between(start[0], start[1], end[0], end[1])

    def between(self, line: int, col: int, end_line: int, end_col: int) -> str:
        """The text from (line, col) to (end_line, end_col): :meth:`slice` without the tuples."""
        try:
            return self.text[self.ix.offset(line, col):self.ix.offset(end_line, end_col)]
        except ValueError:
            raise _Unsafe from None

    def char_at(self, span: Span) -> str:
        """The first character of a node after its properties (anchor, tag) on its line."""
        line, col = self.line(span.line), span.col - 1
        first = line[col:col + 1]
        if first != "&" and first != "!":  # no properties: the common case, without the expression
            return first
        rest = line[col:]
        match = _PROPS.match(rest)
        if match:
            rest = rest[match.end():]
        return rest[:1]

    def is_flow(self, span: Span) -> bool:
        return self.char_at(span) in ("{", "[")

    def layout(self, line: int) -> tuple[int, int]:
        return layout_at(self.text, line)

    # -- trusting nodes

    def check_map(self, node: Any) -> int:
        """Check a mapping's spans against the text; its key column (0 for a flow mapping)."""
        if not isinstance(node, YMap):
            raise _Unsafe
        facts = self.facts
        ident = facts.hold(node)  # before any fact about it is kept (aliases among them)
        hit = facts.checked.get(ident)
        if hit is not None:
            return hit
        if ident in facts.unsafe:
            raise _Unsafe
        try:
            column = self._check_map(node)
        except _Unsafe:
            facts.unsafe.add(ident)
            raise
        facts.checked[ident] = column
        return column

    def _check_map(self, node: YMap) -> int:
        span = self.clamp(node.span)
        if not self.ix.inside(span):
            raise _Unsafe
        start, end = (span.line, span.col), (span.end_line, span.end_col)
        flow = self.is_flow(span)
        if flow and self.slice((span.end_line, span.end_col - 1), end) != "}":
            raise _Unsafe
        column = 0
        for key in node:
            ks = node.kspans.get(key)
            if not isinstance(key, str) or ks is None or ks.line != ks.end_line:
                raise _Unsafe
            if not (start <= (ks.line, ks.col) and (ks.end_line, ks.end_col) <= end):
                raise _Unsafe  # a merged key, or a view put together from several nodes
            written = self.between(ks.line, ks.col, ks.end_line, ks.end_col)
            if written != key and not (written[:1] in ("'", '"') and _quoted_key(written) == key):
                raise _Unsafe
            if not flow:
                if column and ks.col != column:
                    raise _Unsafe  # keys of a block mapping share a column
                column = ks.col
            vs = node.vspans.get(key)
            if vs is None:
                raise _Unsafe
            if (vs.line, vs.col) < (ks.end_line, ks.end_col):  # an alias: its spans are its anchor's
                alias = _ALIAS.match(self.line(ks.line), ks.col - 1 + (ks.end_col - ks.col))
                if alias is None:
                    raise _Unsafe
                self.aliases[(id(node), key)] = Span(ks.line, alias.start(1) + 1, ks.line, alias.end(1) + 1)
                continue
            value = node[key]
            if vs.line == vs.end_line and not isinstance(value, (YMap, YSeq)):
                written = self.between(vs.line, vs.col, vs.end_line, vs.end_col)
                if written[:1] not in ("'", '"', "|", ">", "&", "!", "*"):
                    read = plain_scalar(written)
                    if not (type(read) is type(value) and read == value) and frozen(read) != frozen(value):
                        raise _Unsafe  # the value written there is not the node's
        if not flow and not column:
            raise _Unsafe  # a block mapping of merged keys only: nowhere to stand
        if _text_facts(self.text)[0] and _MERGE.search(self.slice(start, end)):
            raise _Unsafe
        return column

    def clamp(self, span: Span) -> Span:
        """A span libyaml ends one line past a last line that has no line break, ended at the
        end of the text instead."""
        if span.end_line == self.ix.line_count + 1 and span.end_col == 1:
            last = self.ix.line_count
            return Span(span.line, span.col, last, self.ix.line_end(last))
        return span

    def child(self, parent: YMap, key: str) -> Any:
        """``parent[key]`` after checking that the value's span is the parent's vspan (and that
        it is no alias of a mapping or sequence: editing it would edit its anchor)."""
        value = parent[key]
        if (id(parent), key) in self.aliases and isinstance(value, (YMap, YSeq)):
            raise _Unsafe
        if isinstance(value, (YMap, YSeq)) and value.span != parent.vspans.get(key):
            raise _Unsafe
        return value

    def vspan(self, node: YMap, key: str) -> Span:
        """The span of the value written at ``key``: its ``*alias`` for an alias."""
        return self.aliases.get((id(node), key)) or node.vspans[key]

    def entry_end(self, node: YMap, key: str) -> Pos:
        if (id(node), key) in self.aliases:
            span = self.aliases[(id(node), key)]
            return span.end_line, span.end_col
        return self.content_end(self.child(node, key), node.vspans[key])

    def own_keys(self, node: YMap) -> list[str]:
        return sorted(node, key=lambda k: (node.kspans[k].line, node.kspans[k].col))

    def check_seq(self, seq: Any) -> None:
        if not isinstance(seq, YSeq) or len(seq.ispans) != len(seq):
            raise _Unsafe
        span = self.clamp(seq.span)
        if not self.ix.inside(span):
            raise _Unsafe
        previous = (span.line, span.col)
        for span in seq.ispans:
            if (span.line, span.col) < previous:
                raise _Unsafe  # an alias item
            previous = (span.end_line, span.end_col)
        if previous > (span.end_line, span.end_col):
            raise _Unsafe

    # -- where a node's text ends

    def content_end(self, value: Any, span: Span) -> Pos:
        """Where the last character of a value stands (its block's last line, not the next
        token libyaml ends a block collection at)."""
        if isinstance(value, (YMap, YSeq)) and value and not self.is_flow(span):
            own = value.span == span  # the collection's own span: its end depends on the node alone
            ends, ident = self.facts.ends, self.facts.hold(value)
            end = ends.get(ident) if own else None
            if end is not None:
                return end
            if isinstance(value, YMap):
                self.check_map(value)
                end = self.entry_end(value, self.own_keys(value)[-1])
            else:
                self.check_seq(value)
                end = self.content_end(value[-1], value.ispans[-1])
            if own:
                ends[ident] = end
            return end
        if not isinstance(value, (YMap, YSeq)) and self.char_at(span) in ("|", ">"):
            return self.block_scalar_end(span)
        return span.end_line, span.end_col

    def block_scalar_end(self, span: Span) -> Pos:
        last = span.end_line - 1 if span.end_col == 1 and span.end_line > span.line else span.end_line
        rest = self.line(span.line)[span.col - 1:]
        match = _PROPS.match(rest)
        header = _BLOCK_HEADER.match(rest[match.end():] if match else rest)
        keep = header is not None and "+" in header.group(1)
        if not keep:
            while last > span.line and not self.line(last).strip():
                last -= 1
        return last, self.ix.line_end(last)

    def line_end_after(self, end: Pos) -> Pos:
        """The end of the line ``end`` stands on, when only a comment follows it there."""
        line, col = end
        tail = self.line(line)[col - 1:]
        rest = tail.lstrip(" \t")
        if rest and not (rest.startswith("#") and (len(rest) < len(tail) or col == 1)):
            raise _Unsafe
        return line, self.ix.line_end(line)

    # -- intents

    def run(self, intents: tuple) -> list[tuple[Span, str]]:
        for intent in intents:
            operation = _OPERATIONS.get(getattr(intent, "kind", None))
            if operation is None or type(intent) is not operation[0]:
                raise _Unsafe  # not an operation of linter.fix
            operation[1](self, intent)
        for node, key, gone in self.deletions.values():
            self.render_deletion(node, key, gone)
        replaced = [(edit.start, edit.end) for edit in self.edits if edit.start != edit.end]
        for target in self.targets.values():
            if replaced:
                inside = self.target_point(target)
                if any(start <= inside < end for start, end in replaced):
                    raise _Unsafe  # one intent replaces (or removes) the value another one adds to
            self.render(target)
        if self.on_nodes:
            self.keep_last_block_scalar()
        if "*" in self.text and "&" in self.text:
            shared = _shared_nodes(self.text)
            for start, end, _, _ in self.edits:
                for first, last in shared:
                    if (first < start < last) if start == end else (start < last and first < end):
                        raise _Unsafe  # the node is an anchor other paths share through aliases
        return self.combine()

    # -- the operations (one method each; ``_OPERATIONS`` below is the switch on their kind)

    def op_replace(self, intent: Replace) -> None:
        span = intent.span
        if not isinstance(intent.text, str) or not self.ix.inside(span):
            raise _Unsafe
        self.edits.append(_TextEdit((span.line, span.col), (span.end_line, span.end_col), (0,), intent.text))

    def op_insert_line(self, intent: InsertLine) -> None:
        self.edits.append(self.insert_line(intent))

    def nodes(self) -> None:
        """Before the first node operation: a text with line breaks other than LF and CRLF has
        positions the loaders and the writer count differently."""
        if not self.on_nodes:
            self.on_nodes = True
            if _text_facts(self.text)[1]:
                raise _Unsafe

    def op_set_key(self, intent: SetKey) -> None:
        self.nodes()
        path = tuple(intent.path)
        if not path:
            raise _Unsafe
        self.set_key(intent.node, path, _data(intent.value))

    def op_append_item(self, intent: AppendItem) -> None:
        self.nodes()
        self.append_item(intent.node, intent.key, _data(intent.item))

    def op_delete_item(self, intent: DeleteItem) -> None:
        self.nodes()
        node, key = intent.node, intent.key
        self.check_map(node)
        seq = self.child(node, key) if key in node else None
        if not isinstance(seq, YSeq) or not intent.indexes:
            raise _Unsafe
        self.check_seq(seq)
        for index in intent.indexes:
            if type(index) is not int or not 0 <= index < len(seq):
                raise _Unsafe
        # items of one sequence are removed together (several operations may name them)
        self.deletions.setdefault(("item", id(seq)), (node, key, set()))[2].update(intent.indexes)

    def op_delete_key(self, intent: DeleteKey) -> None:
        self.nodes()
        node, key = intent.node, intent.key
        self.check_map(node)
        if key not in node:
            return
        if (id(node), key) not in self.aliases:
            self.child(node, key)
        self.deletions.setdefault(("key", id(node)), (node, None, set()))[2].add(key)

    def render_deletion(self, node: YMap, key: str | None, gone: set) -> None:
        """The edits of the items ``gone`` of ``node[key]``, or (``key`` None) of the keys
        ``gone`` of ``node``."""
        column = self.check_map(node)
        if key is None:
            keys = self.own_keys(node)
            if column and len(gone) == len(keys):
                raise _Unsafe  # an empty block mapping reads as null
            entries = [(node.kspans[k], self.vspan(node, k), node[k]) for k in keys]
            self.delete_entries(node, entries, [i for i, k in enumerate(keys) if k in gone], "}")
            return
        seq = node[key]
        if len(gone) == len(seq) and not self.is_flow(seq.span):
            # `key: []`, never a null: `[]` after the key's colon (a comment after it stays), and
            # every item goes as it would alone (comment lines between them stay)
            ks = node.kspans[key]
            colon = _KEY_COLON.match(self.slice((ks.end_line, ks.end_col), (ks.end_line, self.ix.line_end(ks.end_line))))
            if colon is None or column == 0:
                raise _Unsafe  # an anchor or a tag on the sequence: not ours to drop
            at = (ks.end_line, ks.end_col + colon.end(1))
            self.add_edit(at, at, (0,), " []")
        self.delete_entries(seq, [(s, s, v) for s, v in zip(seq.ispans, seq)], sorted(gone), "]")

    def delete_entries(self, node: Any, entries: list[tuple[Span, Span, Any]], gone: list[int], close: str) -> None:
        """Remove the entries (or items) at the sorted indexes ``gone`` of a collection whose
        entries are ``entries`` (first span of each, span of its value, value)."""
        if self.is_flow(node.span):
            self.delete_flow(node, entries, gone, close)
            return
        for index in gone:
            first, value_span, value = entries[index]
            start = (first.line, first.col)
            before = self.line(first.line)[:first.col - 1]
            if close == "]":  # the item's dash, alone before it on its line at the sequence's column
                if not _DASH.match(before) or before.index("-") != node.span.col - 1:
                    raise _Unsafe
                if isinstance(value, (YMap, YSeq)) and value.span != value_span:
                    raise _Unsafe
                end = self.content_end(value, value_span)
            else:
                if before.strip(" "):
                    raise _Unsafe  # `- key: v`: the key shares its line with the item's dash
                end = self.entry_end(node, self.own_keys(node)[index])
            if start[0] == 1:
                raise _Unsafe
            end = self.line_end_after(end)  # only a comment may follow it on its last line
            self.keep_anchors(start, end)
            # from the line break before its first line to the end of its last line (before the
            # line break): an insertion after it (at its end) stays a line of its own
            above = start[0] - 1
            self.add_edit((above, self.ix.line_end(above)), end, (0,), "")

    def delete_flow(self, node: Any, entries: list[tuple[Span, Span, Any]], gone: list[int], close: str) -> None:
        """Flow style: each run of removed entries goes with the separator after it (or, for a run
        that ends the collection, the one before it); only white space and commas may go with them."""
        span = node.span
        if self.slice((span.end_line, span.end_col - 1), (span.end_line, span.end_col)) != close:
            raise _Unsafe
        points = [((first.line, first.col), (vs.end_line, vs.end_col)) for first, vs, _ in entries]
        if len(gone) == len(entries):  # everything between the brackets
            opening = self.line(span.line)[span.col - 1:]
            match = _PROPS.match(opening)
            start = (span.line, span.col + (match.end() if match else 0) + 1)
            end = (span.end_line, span.end_col - 1)
            gaps = [(start, points[0][0])] + [(points[i][1], points[i + 1][0]) for i in range(len(points) - 1)]
            gaps.append((points[-1][1], end))
            if any(not _GAP.match(self.slice(a, b)) for a, b in gaps):
                raise _Unsafe
            self.keep_anchors(start, end)
            self.add_edit(start, end, (0,), "")
            return
        runs: list[list[int]] = []
        for index in gone:
            if runs and runs[-1][-1] == index - 1:
                runs[-1].append(index)
            else:
                runs.append([index])
        for run in runs:
            first, last = run[0], run[-1]
            if last + 1 < len(entries):
                start, end = points[first][0], points[last + 1][0]
                gaps = [(points[i][1], points[i + 1][0]) for i in range(first, last + 1)]
            else:
                start, end = points[first - 1][1], points[last][1]
                gaps = [(points[i][1], points[i + 1][0]) for i in range(first - 1, last)]
            if any(not _SEPARATOR.match(self.slice(a, b)) for a, b in gaps):
                raise _Unsafe  # a comment (or something else) between the entries
            self.keep_anchors(start, end)
            self.add_edit(start, end, (0,), "")

    def insert_line(self, intent: InsertLine) -> _TextEdit:
        """The insertion of :class:`~linter.fix.InsertLine`: at the end of the anchor's last line
        (before its line break) or at the anchor's start, with the first line's indentation."""
        span, text = intent.anchor, intent.text
        if not isinstance(text, str) or not text or "\n" in text or "\r" in text or not self.ix.inside(span):
            raise _Unsafe
        first = self.line(span.line)
        indent = first[:span.col - 1]
        if indent.strip(" \t"):
            raise _Unsafe  # something stands before the anchor on its line
        if intent.align:
            theirs, mine = first.find(intent.align, span.col - 1), text.find(intent.align)
            name = text[:mine].rstrip()
            if theirs >= 0 and mine > 0 and first[span.col - 1:theirs].strip() and len(name) < theirs - len(indent):
                text = name.ljust(theirs - len(indent)) + text[mine:]
        if not intent.after:
            start = (span.line, span.col)
            return _TextEdit(start, start, (0,), text + "\n" + indent)
        rest = self.line(span.end_line)[span.end_col - 1:].strip()
        if rest and (not rest.startswith(("#", "//")) or rest.startswith("/*")):
            raise _Unsafe  # more code (or a comment that may go on) after the anchor on its last line
        end = (span.end_line, self.ix.line_end(span.end_line))
        return _TextEdit(end, end, (0,), "\n" + indent + text)

    def keep_last_block_scalar(self) -> None:
        """A text that ends inside a ``|`` or ``>`` block scalar without a final line break gives
        that scalar no trailing line break; a line inserted after it would give it one
        (``eth0`` becomes ``eth0\\n``). Its header then strips it (``|`` becomes ``|-``; the
        indentation indicator is kept), which reads the same value with the line after it."""
        text = self.text
        if not text or text.endswith(("\n", "\r")):
            return
        last = self.ix.line_count
        end = (last, self.ix.line_end(last))
        if not any(start == stop == end and new.startswith("\n") for start, stop, _, new in self.edits):
            return
        header = _last_block_scalar(text)
        if header is None:
            return
        line, col, value = header
        rest = self.line(line)[col - 1:]
        match = _PROPS.match(rest)
        skip = match.end() if match else 0
        found = _BLOCK_HEADER.match(rest[skip:])
        if found is None:
            raise _Unsafe
        indicators = found.group(1)
        if "-" in indicators:
            return
        if value.endswith("\n"):
            raise _Unsafe  # kept line breaks at the very end: no header reads the same with a line after
        first = col + skip + 1
        self.add_edit((line, first), (line, first + len(indicators)), (0,), indicators.replace("+", "") + "-")

    def target_point(self, target: Any) -> Pos:
        if isinstance(target, _FillTarget):
            ks = target.parent.kspans[target.key]
            return ks.end_line, ks.end_col
        return target.node.span.line, target.node.span.col

    def set_key(self, node: YMap, path: tuple[str, ...], value: Any) -> None:
        current = node
        for i, key in enumerate(path):
            self.check_map(current)
            if key not in current:
                self.add_entries(current, _nest(path[i:], value))
                return
            existing = self.child(current, key)
            if i == len(path) - 1:
                self.set_existing(current, key, value)
                return
            if isinstance(existing, YMap) and not self.fillable(current, key):
                current = existing
                continue
            if existing is None or isinstance(existing, YMap):  # null, or an empty {} of a block
                self.fill(current, key, _nest(path[i + 1:], value))
                return
            raise _Unsafe  # a scalar or a list stands where the path goes on

    def set_existing(self, parent: YMap, key: str, value: Any) -> None:
        existing = parent[key]
        if frozen(existing) == frozen(value):
            return
        if isinstance(value, dict) and value and isinstance(existing, YMap):
            if self.fillable(parent, key):
                self.fill(parent, key, value)
                return
            for sub, sub_value in value.items():
                self.set_key(existing, (sub,), sub_value)
            return
        if isinstance(value, (dict, list)) and value and (existing is None or self.fillable(parent, key)):
            self.fill(parent, key, value)
            return
        self.replace_value(parent, key, value)

    def append_item(self, node: YMap, key: str, item: Any) -> None:
        self.check_map(node)
        if key not in node:
            self.add_entries(node, {key: _Items([item])})
            return
        existing = self.child(node, key)
        if isinstance(existing, YSeq):
            if any(frozen(have) == frozen(item) for have in existing):
                return
            if not existing and self.fillable(node, key):
                self.fill(node, key, _Items([item]))
                return
            self.check_seq(existing)
            target = self.targets.setdefault(("seq", id(existing)), _SeqTarget(existing, node))
            _append_new(target.data, [item])
            return
        if existing is None:
            self.fill(node, key, _Items([item]))
            return
        raise _Unsafe  # not a sequence: appending would change what the key holds

    def fillable(self, parent: YMap, key: str) -> bool:
        """An empty ``{}``/``[]`` value under a block mapping: replaced by a block value."""
        value = parent[key]
        if not isinstance(value, (YMap, YSeq)) or value or self.checked.get(id(parent)) == 0:
            return False
        ks, vs = parent.kspans[key], parent.vspans[key]
        return _EMPTY_VALUE.match(self.slice((ks.end_line, ks.end_col), (vs.end_line, vs.end_col))) is not None

    def add_entries(self, node: YMap, data: dict) -> None:
        target = self.targets.setdefault(("map", id(node)), _MapTarget(node))
        _merge(target.data, data)

    def fill(self, parent: YMap, key: str, data: Any) -> None:
        handle = ("fill", id(parent), key)
        target = self.targets.get(handle)
        if target is None:
            self.targets[handle] = _FillTarget(parent, key, data)
        elif isinstance(target.data, dict) and isinstance(data, dict):
            _merge(target.data, data)
        elif isinstance(target.data, list) and isinstance(data, _Items):
            _append_new(target.data, data)
        else:
            raise _Unsafe

    def replace_value(self, parent: YMap, key: str, value: Any) -> None:
        """Replace an existing value (not merged): in place, in the style of what it replaces."""
        column = self.check_map(parent)
        existing = parent[key]
        ks, vs = parent.kspans[key], parent.vspans[key]
        after_key = (ks.end_line, ks.end_col)
        start, end = (vs.line, vs.col), (vs.end_line, vs.end_col)
        flow_parent = column == 0
        alias = self.aliases.get((id(parent), key))
        if alias is not None:  # the alias is replaced; its anchor stays as it is
            start, end = (alias.line, alias.col), (alias.end_line, alias.end_col)
            if isinstance(value, (dict, list)) and value and not flow_parent:
                self.add_edit(after_key, end, (0,), ":\n" + "\n".join(self.block(value, column, parent)))
            elif isinstance(value, (dict, list)):
                self.add_edit(start, end, (0,), _flow(value, self.json_style(parent), self.text))
            else:
                self.add_edit(start, end, (0,), _scalar(value, flow_parent, self.text))
            return
        if self.slice(start, (vs.line, vs.col + 1) if start != end else end) in ("&", "!"):
            raise _Unsafe  # an anchor or tag on the value: not ours to drop
        container = isinstance(value, (dict, list)) and bool(value)
        if container and not flow_parent:
            end = self.content_end(existing, vs)
            self.keep_anchors(start, end)
            lines = "\n" + "\n".join(self.block(value, column, parent))
            comment = self.key_line_comment(after_key, start)
            if comment is None:
                self.add_edit(after_key, end, (0,), ":" + lines)
            else:  # the comment after the key stays on its line
                self.add_edit(comment[1], end, (0,), lines)
            return
        if container or isinstance(value, (dict, list)):
            rendered = _flow(value, self.json_style(parent), self.text)
        elif self.json_style(parent):
            rendered = json.dumps(value, ensure_ascii=False)
        elif isinstance(value, str) and isinstance(existing, str) and self.char_at(vs) in ("'", '"'):
            rendered = scalar_text(value, flow_parent, self.char_at(vs))
        else:
            rendered = _scalar(value, flow_parent, self.text)
        if start == end:  # an empty null: `key:` or `{key}`
            self.add_edit(after_key, end, (0,), ": " + rendered)
            return
        if isinstance(existing, (YMap, YSeq)) and not self.is_flow(vs):
            end = self.content_end(existing, vs)
            self.keep_anchors(start, end)
            comment = self.key_line_comment(after_key, start)
            if comment is None:
                self.add_edit(after_key, end, (0,), ": " + rendered)
            else:  # `key: value  # comment`, the block below removed
                self.add_edit(comment[0], comment[0], (0,), " " + rendered)
                self.add_edit(comment[1], end, (0,), "")
            return
        if isinstance(existing, (YMap, YSeq)):
            self.keep_anchors(start, end)
        if not isinstance(existing, (YMap, YSeq)):
            written = self.slice(start, end)
            if written[:1] in ("|", ">"):
                end = self.block_scalar_end(vs)
            elif written[:1] not in ("'", '"') and frozen(plain_scalar(written)) != frozen(existing):
                raise _Unsafe  # the text there is not the value the node claims
        self.add_edit(start, end, (0,), rendered)

    def key_line_comment(self, after_key: Pos, start: Pos) -> tuple[Pos, Pos] | None:
        """Between a key and its block value: None for just the colon; for a colon and a comment
        on the key's line, (the point after the colon, the end of the key's line); else unsafe
        (an anchor or a tag)."""
        between = self.slice(after_key, start)
        if _COLON.match(between):
            return None
        match = _COLON_COMMENT.match(between)
        if match is None or start[0] == after_key[0]:
            raise _Unsafe
        line = after_key[0]
        return (line, after_key[1] + match.end(1)), (line, self.ix.line_end(line))

    def keep_anchors(self, start: Pos, end: Pos) -> None:
        """Refuse to remove text that defines an anchor when the file has aliases."""
        if "*" in self.text and _ANCHOR.search(self.slice(start, end)):
            raise _Unsafe

    # -- rendering the targets

    def json_style(self, node: YMap) -> bool:
        if self.checked.get(id(node)) != 0 or not node:
            return False
        first = self.own_keys(node)[0]
        ks = node.kspans[first]
        return self.slice((ks.line, ks.col), (ks.line, ks.col + 1)) == '"'

    def local_layout(self, node: YMap, column: int) -> _Layout:
        """The file's layout, with what ``node``'s own nested blocks show taking precedence."""
        layouts, handle = self.facts.layouts, (self.facts.hold(node), column)
        layout = layouts.get(handle)
        if layout is None:
            layouts[handle] = layout = self._local_layout(node, column)
        return layout

    def _local_layout(self, node: YMap, column: int) -> _Layout:
        step = seq = None  # what the node's own blocks show (the last one shown wins)
        for key in node:
            if (id(node), key) in self.aliases:
                continue
            value = node[key]
            vs = node.vspans[key]
            if isinstance(value, YMap) and value and not self.is_flow(vs):
                cols = {s.col for s in value.kspans.values()}
                if len(cols) == 1 and 1 <= min(cols) - column <= 8:
                    step = min(cols) - column
            elif (isinstance(value, YSeq) and value and self.char_at(vs) == "-"
                  and 0 <= vs.col - column <= 8 and vs.line > node.kspans[key].line):
                seq = vs.col - column
        if step is None or seq is None:  # the document's layout for what the node does not show
            file_step, file_seq = self.layout(node.span.line)
            step = file_step if step is None else step
            seq = file_seq if seq is None else seq
        return _Layout(max(step, 1), max(seq, 0), text=self.text)

    def block(self, data: Any, column: int, parent: YMap) -> list[str]:
        """``data`` as the block value of a key of ``parent`` whose keys stand at ``column``."""
        layout = self.local_layout(parent, column)
        if isinstance(data, dict):
            return layout.entries(data, column - 1 + layout.step, [])
        return layout.items(list(data), column - 1 + layout.seq, [])

    def render(self, target: Any) -> None:
        if isinstance(target, _MapTarget):
            self.render_map(target.node, target.data)
        elif isinstance(target, _FillTarget):
            self.render_fill(target)
        else:
            self.render_seq(target.node, target.data, self.json_style(target.parent))

    def render_map(self, node: YMap, data: dict) -> None:
        column = self.check_map(node)
        if column == 0:  # flow
            as_json = self.json_style(node)
            entries = [_flow_entry(k, v, as_json, self.text) for k, v in data.items()]
            self.flow_insert(node, [(node.kspans[k], self.vspan(node, k), node[k]) for k in self.own_keys(node)],
                             entries)
            return
        keys = self.own_keys(node)
        last = keys[-1]
        at = self.line_end_after(self.entry_end(node, last))
        layout = self.local_layout(node, column)
        lines = layout.entries(data, column - 1, [])
        self.add_edit(at, at, (1 - column, 1), "\n" + "\n".join(lines))

    def flow_insert(self, node: Any, entries: list[tuple[Span, Span, Any]], new: list[str]) -> None:
        """New entries (or items) ``new`` at the end of a flow collection whose entries are
        ``entries`` (first span of each, span of its value, value)."""
        span = node.span
        if not entries:
            opening = self.line(span.line)[span.col - 1:]
            match = _PROPS.match(opening)
            at = (span.line, span.col + (match.end() if match else 0) + 1)
            self.add_edit(at, at, (0,), ", ".join(new))
            return
        first, last_value_span, last_value = entries[-1]
        end = (last_value_span.end_line, last_value_span.end_col)
        if isinstance(last_value, (YMap, YSeq)):
            if not self.is_flow(last_value_span):
                raise _Unsafe
        if first.line != span.line and all(entry[0].line != span.line for entry in entries):
            pad = " " * (first.col - 1)
            text = "".join(",\n" + pad + entry for entry in new)
        else:
            text = "".join(", " + entry for entry in new)
        self.add_edit(end, end, (0,), text)

    def render_fill(self, target: _FillTarget) -> None:
        parent, key, data = target.parent, target.key, target.data
        column = self.check_map(parent)
        ks, vs = parent.kspans[key], parent.vspans[key]
        after_key, end = (ks.end_line, ks.end_col), (vs.end_line, vs.end_col)
        between = self.slice(after_key, end)
        if not _EMPTY_VALUE.match(between):
            raise _Unsafe
        if column == 0:
            self.add_edit(after_key, end, (0,), ": " + _flow(data, self.json_style(parent), self.text))
            return
        lines = self.block(data, column, parent)
        indent = len(lines[0]) - len(lines[0].lstrip(" "))
        line_end = self.line_end_after(end)
        if not self.line(end[0])[end[1] - 1:].strip():  # nothing after the value on its line
            self.add_edit(after_key, line_end, (0,), ":\n" + "\n".join(lines))
            return
        if between != ":":
            self.add_edit(after_key, end, (0,), ":")
        self.add_edit(line_end, line_end, (-indent, 0), "\n" + "\n".join(lines))

    def render_seq(self, seq: YSeq, items: list, as_json: bool) -> None:
        if not items:
            return
        span = seq.span
        if self.is_flow(span):
            entries = [(s, s, v) for s, v in zip(seq.ispans, seq)]
            if self.slice((span.end_line, span.end_col - 1), (span.end_line, span.end_col)) != "]":
                raise _Unsafe
            self.flow_insert(seq, entries, [_flow(item, as_json, self.text) for item in items])
            return
        if self.slice((span.line, span.col), (span.line, span.col + 1)) != "-":
            raise _Unsafe
        first = seq.ispans[0]
        offset = first.col - span.col if first.line == span.line and first.col - span.col >= 2 else 2
        step, seq_offset = self.layout(span.line)
        layout = _Layout(step, seq_offset, offset, self.text)
        at = self.line_end_after(self.content_end(seq[-1], seq.ispans[-1]))
        lines = layout.items(items, span.col - 1, [])
        self.add_edit(at, at, (-(span.col - 1), 0), "\n" + "\n".join(lines))

    # -- edits

    def add_edit(self, start: Pos, end: Pos, order: tuple, text: str) -> None:
        self.edits.append(_TextEdit(start, end, order, text))

    def combine(self) -> list[tuple[Span, str]]:
        """Sorted edits, insertions at one point joined (inner blocks first), overlaps refused."""
        edits = sorted(set(self.edits), key=lambda e: (e[0], e[1], e[2]))
        out: list[list] = []
        for start, end, _, new in edits:
            if out and start == end and out[-1][0] == out[-1][1] == start:
                out[-1][2] += new
                continue
            if out and start < out[-1][1]:
                raise _Unsafe
            if out and start == out[-1][1] and out[-1][0] == start and start != end:
                pass  # an insertion then a replacement starting at that point: fine
            out.append([start, end, new])
        return [(Span(s[0], s[1], e[0], e[1]), new) for s, e, new in out
                if not (s != e and self.slice(s, e) == new)]


_OPERATIONS = {
    cls.kind: (cls, method) for cls, method in (
        (SetKey, _Resolver.op_set_key),
        (AppendItem, _Resolver.op_append_item),
        (DeleteItem, _Resolver.op_delete_item),
        (DeleteKey, _Resolver.op_delete_key),
        (Replace, _Resolver.op_replace),
        (InsertLine, _Resolver.op_insert_line),
    )
}  # the one switch on an edit's kind: kind -> (operation type, how it is resolved)
