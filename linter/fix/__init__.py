"""Fixes: what a rule proposes (a :class:`Plan` of intents) and what it becomes (a :class:`Fix` of
text edits at exact spans).

A rule knows *what* to change but not the bytes of the file: it yields a ``Finding`` whose
``autofix`` is a :class:`Plan`, a few named edit operations over the nodes it already holds:

- ``SetKey`` inserts a key (and the missing mappings on its path) or replaces its value;
- ``AppendItem`` appends to a list (creating it), ``DeleteItem`` removes list items;
- ``DeleteKey`` removes a mapping's entry;
- ``Replace`` rewrites a span the loader gave, ``InsertLine`` adds a line beside an IaC attribute.

Each operation type names its ``kind`` (the resolver's one switch,
``linter.fix.resolve._OPERATIONS``) and, for the node operations, the ``steps``: the key path
below its ``node`` that it reads or edits, which a mapper of built objects (kustomize) checks in
the resource file before it moves the operation onto that file's node. The
engine, which has the
file's text, resolves the plan into a :class:`Fix` (``linter.fix.resolve``): text edits that
touch only the bytes they must, indented like their parent, in the file's own style. Every byte
outside an edit stays as it was. Reports carry the resolved edits; ``--fix`` applies them.

Safety follows ruff: a *safe* fix keeps the workload's meaning apart from the rule's intent; an
*unsafe* one changes behaviour beyond it (dropping capabilities may break a container), and is
applied only with ``--unsafe-fixes`` (or ``fix: {unsafe: true}``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from msgspec import Struct

from mlops_lint.model.position import Span

# ---------------------------------------------------------------------------------------------
# What reports carry and --fix applies (small, picklable, cached)


class Edit(Struct, frozen=True):
    """Replace the text at ``span`` of the file ``path`` with ``text``.

    ``span`` is 1-based, lines and columns in code points of the decoded text, end exclusive (as
    every span here); ``span.line, span.col == span.end_line, span.end_col`` is an insertion. Line
    breaks in ``text`` are ``\\n``: the writer turns them into the file's own (CRLF stays CRLF).
    """

    path: str  # display path of the file, like Result.path
    span: Span
    text: str


class Fix(Struct, frozen=True):
    """A resolved fix: edits that never overlap each other, sorted by position."""

    title: str  # what it does, imperative: "add `limits: nvidia.com/gpu: 1`"
    edits: tuple[Edit, ...]
    safe: bool = True


# ---------------------------------------------------------------------------------------------
# What rules propose (hold the parsed nodes; resolved where the file's text is at hand)


class SetKey(Struct, frozen=True):
    """Make ``node[path[0]][path[1]]…`` equal ``value``: missing mappings on the way are created
    (as one block, indented like ``node``'s keys, or in flow style inside a flow mapping); an
    existing scalar at the end of the path is replaced in place (its quoting style kept where the
    new value allows). ``value`` is plain data: a scalar, or dicts and lists of them; a dict over
    an existing mapping is merged into it key by key (keys it does not name are kept), anything
    else replaces what is there. ``node`` is a ``linter.model.tree.YMap`` loaded from the file the
    plan's ``path`` names."""

    kind: ClassVar[str] = "set_key"
    node: Any  # YMap
    path: tuple[str, ...]
    value: Any

    @property
    def steps(self) -> tuple[str, ...]:
        return tuple(self.path)


class AppendItem(Struct, frozen=True):
    """Append ``item`` to the sequence at ``node[key]``, creating the sequence when ``key`` is
    missing or null (``env:`` of a container, ``tolerations:`` of a pod); an item already in the
    sequence is not appended again."""

    kind: ClassVar[str] = "append_item"
    node: Any  # YMap
    key: str
    item: Any

    @property
    def steps(self) -> tuple[str, ...]:
        return (self.key,)


class DeleteItem(Struct, frozen=True):
    """Remove the items at ``indexes`` of the sequence at ``node[key]`` (the other items, and every
    comment but those on the removed items' own lines, stay as they are). In a block sequence an
    item goes with its lines (a comment line above it stays: whose it is is a guess); in a flow
    sequence with the comma that separates it. Removing every item leaves ``key: []`` (never a
    null). No fix when the removal cannot be exact: an item sharing its line with something else
    (``- - a``, a dash alone on its line), a comment between flow items it would take along, an
    index outside the sequence."""

    kind: ClassVar[str] = "delete_item"
    node: Any  # YMap
    key: str
    indexes: tuple[int, ...]

    @property
    def steps(self) -> tuple[str, ...]:
        return (self.key,)


class DeleteKey(Struct, frozen=True):
    """Remove the entry ``key`` (key, value and the comments on its lines) from the mapping
    ``node``; a key not there gives no edit. No fix when the removal cannot be exact: the key is
    the first of a list item (``- key: v``, its dash would go too), the mapping's only key in
    block style (the mapping would read as null), or a comment between flow entries would go."""

    kind: ClassVar[str] = "delete_key"
    node: Any  # YMap
    key: str

    @property
    def steps(self) -> tuple[str, ...]:
        return (self.key,)


class Replace(Struct, frozen=True):
    """A raw text edit at a span the loader knows (Dockerfile and shell fixes, a scalar's text)."""

    kind: ClassVar[str] = "replace"
    steps: ClassVar[None] = None  # a span of the text, no node
    span: Span
    text: str


class InsertLine(Struct, frozen=True):
    """A new line holding ``text`` (one line, no line break), below the last line of ``anchor``
    (``after``) or above its first, indented as that first line is (its leading white space
    copied): an attribute added beside another in Terraform, Bicep or an ARM template. Resolved
    only when ``anchor`` is the first thing on its line, and, below, nothing but white space or a
    ``#`` / ``//`` comment follows it on its last line (else no fix). ``align``: a separator
    (``=``) the new line pads its name before, to the column where the anchor's line has it (as
    ``terraform fmt`` aligns neighbouring attributes), when the name fits."""

    kind: ClassVar[str] = "insert_line"
    steps: ClassVar[None] = None  # a span of the text, no node
    anchor: Span
    text: str
    after: bool = True
    align: str = ""


Intent = SetKey | AppendItem | DeleteItem | DeleteKey | Replace | InsertLine
NODE_OPERATIONS = (SetKey, AppendItem, DeleteItem, DeleteKey)  # the intents that edit a node


class Plan(Struct, frozen=True):
    """What a rule yields as ``Finding.autofix``: intents applied together, as one fix.

    ``path`` names the file the intents' nodes come from when it is not the finding's own file
    (a PROJECT rule fixing a StorageClass elsewhere in the project); ``None`` is the finding's.
    A plan whose nodes do not sit in that file's text as they claim (a view merged from two
    objects) resolves to no fix, never to a wrong one; a kustomize-built object's plan is
    translated to its resource file's nodes where the build left them as they are written, else
    no fix (``linter.engine.kustomize.Mapper.source_plan``).
    """

    title: str
    intents: tuple[Intent, ...]
    safe: bool = True
    path: str | None = None

    @classmethod
    def safe_fix(cls, title: str, *intents: Intent, path: str | None = None) -> "Plan":
        return cls(title, tuple(intents), True, path)

    @classmethod
    def unsafe_fix(cls, title: str, *intents: Intent, path: str | None = None) -> "Plan":
        return cls(title, tuple(intents), False, path)
