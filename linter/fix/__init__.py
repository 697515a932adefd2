"""Fixes: what a rule proposes (a :class:`Plan` of intents) and what it becomes (a :class:`Fix` of
text edits at exact spans).

A rule knows *what* to change but not the bytes of the file: it yields a ``Finding`` whose
``autofix`` is a :class:`Plan`, a few intents over the nodes it already holds (``SetKey`` under a
mapping, ``AppendItem`` to a sequence, ``Replace`` of a known span, ``InsertLine`` beside an IaC
attribute). The engine, which has the
file's text, resolves the plan into a :class:`Fix` (``linter.fix.resolve``): text edits that
touch only the bytes they must, indented like their parent, in the file's own style. Every byte
outside an edit stays as it was. Reports carry the resolved edits; ``--fix`` applies them.

Safety follows ruff: a *safe* fix keeps the workload's meaning apart from the rule's intent; an
*unsafe* one changes behaviour beyond it (dropping capabilities may break a container), and is
applied only with ``--unsafe-fixes`` (or ``fix: {unsafe: true}``).
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from linter.model.position import Span

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

    node: Any  # YMap
    path: tuple[str, ...]
    value: Any


class AppendItem(Struct, frozen=True):
    """Append ``item`` to the sequence at ``node[key]``, creating the sequence when ``key`` is
    missing or null (``env:`` of a container, ``tolerations:`` of a pod); an item already in the
    sequence is not appended again."""

    node: Any  # YMap
    key: str
    item: Any


class Replace(Struct, frozen=True):
    """A raw text edit at a span the loader knows (Dockerfile and shell fixes, a scalar's text)."""

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

    anchor: Span
    text: str
    after: bool = True
    align: str = ""


Intent = SetKey | AppendItem | Replace | InsertLine


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
