"""The typed Dockerfile model: instructions with exact positions, grouped into build stages.

Built by :mod:`linter.sources.dockerfile`; rules read it and never the text. Every span is
1-based (``end_col`` exclusive, see :mod:`linter.model.position`). Keywords are upper case;
stage names are lower case, as BuildKit compares them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from linter.model.k8s import parse_image
from linter.model.position import Span

SCRATCH = "scratch"

# Instructions BuildKit's Dockerfile frontend knows (``command.Commands``).
KNOWN_INSTRUCTIONS = frozenset({
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
    "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
})

# ARGs BuildKit defines for every build: usable in FROM, values known only at build time.
AUTOMATIC_PLATFORM_ARGS = frozenset({
    "TARGETPLATFORM", "TARGETOS", "TARGETARCH", "TARGETVARIANT",
    "BUILDPLATFORM", "BUILDOS", "BUILDARCH", "BUILDVARIANT", "TARGETSTAGE",
})


@dataclass(frozen=True, slots=True)
class Word:
    """One argument word as written (quotes kept), with its span."""

    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class Flag:
    """A builder flag such as ``--from=base``: ``name`` without the dashes, ``value`` None for ``--link``.

    ``value`` has BuildKit's quote removal applied (``--chown='1 2'`` gives ``1 2``).
    ``value_span`` covers the text after ``=`` (None without a value).
    """

    name: str
    value: str | None
    span: Span
    value_span: Span | None


@dataclass(frozen=True, slots=True)
class Heredoc:
    """A here-document attached to RUN/COPY/ADD (``<<EOF`` ... ``EOF``).

    ``content`` is the body exactly as BuildKit keeps it (line ends included, leading tabs not
    yet stripped for ``<<-``); ``expand`` is False when the delimiter was quoted.
    ``marker_span`` is the ``<<EOF`` word, ``span`` the body and the terminator line.
    """

    name: str
    fd: int
    chomp: bool
    expand: bool
    content: str
    marker_span: Span
    span: Span
    terminated: bool = True


@dataclass(slots=True)
class Instruction:
    """One Dockerfile instruction, continuation lines joined.

    ``value`` is the text after the keyword (flags included) as BuildKit joins continuation
    lines; ``args`` the same without the leading builder flags, ``args_span`` its span (None
    when there are no arguments). ``words`` splits ``args`` the way BuildKit does for that
    instruction (quote-aware for ARG/ENV/LABEL, on white space otherwise). For the exec form
    (a JSON array of strings) ``exec_form`` is True and ``exec_args`` holds the strings.
    ``sub`` is the trigger instruction of an ``ONBUILD``. ``stage_index`` is None before the
    first FROM.
    """

    keyword: str
    value: str
    span: Span
    keyword_span: Span
    args: str = ""
    args_span: Span | None = None
    flags: dict[str, list[Flag]] = field(default_factory=dict)
    words: tuple[Word, ...] = ()
    exec_form: bool = False
    exec_args: list[str] | None = None
    stage_index: int | None = None
    heredocs: tuple[Heredoc, ...] = ()
    sub: Instruction | None = None

    def flag(self, name: str) -> Flag | None:
        """The last ``--name`` flag (``name`` with or without dashes), or None."""
        found = self.flags.get(name.lstrip("-"))
        return found[-1] if found else None

    @property
    def effective(self) -> Instruction:
        """The instruction that takes effect: the trigger of an ONBUILD, else itself."""
        return self.sub if self.sub is not None else self

    @property
    def is_known(self) -> bool:
        return self.keyword in KNOWN_INSTRUCTIONS


@dataclass(frozen=True, slots=True)
class ArgDef:
    """One name of an ``ARG`` instruction: ``default`` as written, ``value`` after expansion.

    ``value`` is None when there is no default or it cannot be worked out statically.
    """

    name: str
    default: str | None
    value: str | None
    span: Span


@dataclass(frozen=True, slots=True)
class Directive:
    """A parser directive at the top of the file (``# syntax=...``, ``# escape=```, ``# check=...``)."""

    name: str  # lower case
    value: str
    span: Span


@dataclass(slots=True)
class Stage:
    """A build stage: its FROM and the instructions up to the next FROM.

    ``base`` is the image (or stage) as written, ``base_resolved`` the same with the defaults of
    the ARGs declared before the first FROM substituted (None when a variable has no known
    value), ``base_span`` where ``base`` stands. ``name`` is the ``AS`` alias, lower-cased as
    BuildKit compares stage names. ``parent_stage`` is the index of the earlier stage that
    ``base`` names, None when ``base`` is an image (or ``scratch``).
    """

    index: int
    base: str
    base_resolved: str | None
    base_span: Span | None
    name: str | None
    name_span: Span | None
    platform: str | None
    from_instruction: Instruction
    instructions: list[Instruction] = field(default_factory=list)
    parent_stage: int | None = None

    @property
    def is_scratch(self) -> bool:
        return (self.base_resolved or self.base).lower() == SCRATCH

    @property
    def is_image(self) -> bool:
        """True when the stage pulls an image: not another stage, not ``scratch``."""
        return self.parent_stage is None and not self.is_scratch and bool(self.base)

    @property
    def image(self) -> tuple[str, str | None, str | None] | None:
        """``(name, tag, digest)`` of the resolved base image, None if unknown or not an image."""
        if not self.is_image or self.base_resolved is None:
            return None
        return parse_image(self.base_resolved)

    def of_keyword(self, keyword: str) -> list[Instruction]:
        upper = keyword.upper()
        return [i for i in self.instructions if i.keyword == upper]


@dataclass(slots=True)
class Dockerfile:
    """A whole Dockerfile. ``args`` are the ARGs declared before the first FROM (BuildKit's meta args)."""

    instructions: list[Instruction] = field(default_factory=list)
    stages: list[Stage] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    args: list[ArgDef] = field(default_factory=list)
    escape: str = "\\"

    @property
    def syntax(self) -> str | None:
        for directive in self.directives:
            if directive.name == "syntax":
                return directive.value
        return None

    @property
    def final_stage(self) -> Stage | None:
        """The stage ``docker build`` builds without ``--target``: the last one."""
        return self.stages[-1] if self.stages else None

    def stage_by_name(self, name: str) -> Stage | None:
        wanted = name.lower()
        for stage in self.stages:
            if stage.name == wanted:
                return stage
        return None

    def is_stage_reference(self, base: str, before: int | None = None) -> bool:
        """Whether ``base`` (in a FROM or ``COPY --from``) names a stage rather than an image.

        With ``before``, only stages with a smaller index count (a FROM can name earlier stages).
        """
        return stage_reference(self.stages, base, before) is not None


def stage_reference(stages: list[Stage], base: str, before: int | None = None) -> int | None:
    """The index of the stage named ``base`` (case-insensitive), looking only before ``before``."""
    wanted = base.lower()
    for stage in stages if before is None else stages[:before]:
        if stage.name is not None and stage.name == wanted:
            return stage.index
    return None
