"""The typed Dockerfile model: instructions with exact positions, grouped into build stages.

Built by :mod:`linter.sources.dockerfile`; rules read it and never the text. Every span is
1-based (``end_col`` exclusive, see :mod:`linter.model.position`). Keywords are upper case;
stage names are lower case, as BuildKit compares them.
"""

from __future__ import annotations

import re

from msgspec import Struct, field

from collections import ChainMap
from collections.abc import Mapping
from types import MappingProxyType

from mlops_lint.model.bounds import MAX_VALUE_CHARS, ExpansionBudget
from mlops_lint.model.k8s import image_reference, image_registry, parse_image
from mlops_lint.model.images import CONDA_CPU_IMAGES, LIBRARY_CPU_IMAGES, repository_path
from mlops_lint.model.position import Span

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


class Word(Struct, frozen=True):
    """One argument word as written (quotes kept), with its span."""

    text: str
    span: Span


class Flag(Struct, frozen=True):
    """A builder flag such as ``--from=base``: ``name`` without the dashes, ``value`` None for ``--link``.

    ``value`` has BuildKit's quote removal applied (``--chown='1 2'`` gives ``1 2``).
    ``value_span`` covers the text after ``=`` (None without a value).
    """

    name: str
    value: str | None
    span: Span
    value_span: Span | None


class Heredoc(Struct, frozen=True):
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


class ShellWord(Struct, frozen=True):
    """One word of a shell command in RUN, CMD or ENTRYPOINT: ``text`` with quotes removed and
    escapes applied (``$VAR`` and ``$(…)`` are kept as written, not expanded); ``quoted`` when any
    part of it was quoted."""

    text: str
    span: Span
    quoted: bool = False


class ShellCommand(Struct, frozen=True):
    """One simple command of a shell-form RUN, CMD or ENTRYPOINT (or of a RUN heredoc that the
    shell runs): its words after the leading ``NAME=value`` assignments (``assignments``), with
    redirections (``> f``, ``2>&1``, ``<<EOF``) and shell keywords that open a compound command
    (``if``, ``then``, ``do``, ``!``, ``{`` …) left out. ``heredoc`` is True when it was read from
    a here-document body. Commands inside ``$(…)`` or ``sh -c '…'`` are not split out."""

    words: tuple[ShellWord, ...]
    assignments: tuple[ShellWord, ...] = ()
    heredoc: bool = False

    @property
    def program(self) -> str:
        """The command's name without its folder (``/usr/bin/pip3`` gives ``pip3``), or ``""``."""
        return self.words[0].text.rsplit("/", 1)[-1] if self.words else ""

    @property
    def span(self) -> Span:
        first, last = self.words[0].span, self.words[-1].span
        return Span(first.line, first.col, last.end_line, last.end_col)


class Instruction(Struct):
    """One Dockerfile instruction, continuation lines joined.

    ``value`` is the text after the keyword (flags included) as BuildKit joins continuation
    lines; ``args`` the same without the leading builder flags, ``args_span`` its span (None
    when there are no arguments). ``words`` splits ``args`` the way BuildKit does for that
    instruction (quote-aware for ARG/ENV/LABEL, on white space otherwise). For the exec form
    (a JSON array of strings) ``exec_form`` is True and ``exec_args`` holds the strings.
    ``sub`` is the trigger instruction of an ``ONBUILD``. ``stage_index`` is None before the
    first FROM. ``commands`` are the simple shell commands of a RUN, CMD or ENTRYPOINT (for the exec
    form, one command whose words all carry ``args_span``; ``exec_spans`` are the elements' own).
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
    commands: tuple[ShellCommand, ...] = ()
    # the exec form of RUN, CMD or ENTRYPOINT: where each string of ``exec_args`` stands, quotes
    # included (for fixes that edit one element; the words of ``commands`` carry ``args_span``)
    exec_spans: tuple[Span, ...] = ()

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


class ArgDef(Struct, frozen=True):
    """One name of an ``ARG`` instruction: ``default`` as written, ``value`` after expansion.

    ``value`` is None when there is no default or it cannot be worked out statically.
    """

    name: str
    default: str | None
    value: str | None
    span: Span


class Directive(Struct, frozen=True):
    """A parser directive at the top of the file (``# syntax=...``, ``# escape=```, ``# check=...``)."""

    name: str  # lower case
    value: str
    span: Span


class Stage(Struct):
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


class Dockerfile(Struct, eq=False):
    """A whole Dockerfile. ``args`` are the ARGs declared before the first FROM (BuildKit's meta args)."""

    instructions: list[Instruction] = field(default_factory=list)
    stages: list[Stage] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    args: list[ArgDef] = field(default_factory=list)
    escape: str = "\\"
    path: str = ""  # the display path of the file (rules read its name and folder, never the file)
    # each stage name -> the first stage with it, for the stages up to ``_named_upto`` (stages are
    # only appended): a ``--from`` or FROM lookup is one dict read, not a walk over the stages
    # before it (thousands of chained stages were quadratic)
    _names: dict[str, int] = field(default_factory=dict)
    _named_upto: int = 0
    _env_cursor: "_EnvWalk | None" = None  # the last env_before walk, resumed by the next question

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
        index = self.stage_names().get(name.lower())
        return None if index is None else self.stages[index]

    def is_stage_reference(self, base: str, before: int | None = None) -> bool:
        """Whether ``base`` (in a FROM or ``COPY --from``) names a stage rather than an image.

        With ``before``, only stages with a smaller index count (a FROM can name earlier stages).
        """
        return stage_reference(self, base, before) is not None

    # -- how stages depend on each other -------------------------------------------------------

    def chain(self, stage: Stage) -> list[Stage]:
        """``stage`` and the stages it is built on (``FROM <stage>``), the first one first."""
        found = [stage]
        while found[-1].parent_stage is not None and found[-1].parent_stage < found[-1].index:
            found.append(self.stages[found[-1].parent_stage])
        return found[::-1]

    def copy_sources(self, stage: Stage) -> list[Stage]:
        """The earlier stages whose files ``stage`` reads: ``COPY/ADD --from=<stage>`` and
        ``RUN --mount=from=<stage>`` (by name or by index, as BuildKit allows)."""
        found: dict[int, Stage] = {}
        for ins in stage.instructions:
            for source in _from_values(ins):
                index = self.stage_index(source, before=stage.index)
                if index is not None and index not in found:
                    found[index] = self.stages[index]
        return list(found.values())

    def stage_index(self, reference: str, before: int) -> int | None:
        """The stage a ``--from`` value names: an earlier stage's name, or its number."""
        if reference.isdigit():
            number = int(reference)
            return number if number < before else None
        return stage_reference(self, reference, before)

    def stage_names(self) -> dict[str, int]:
        """Each stage name -> the index of the first stage with that name."""
        if self._named_upto < len(self.stages):
            for stage in self.stages[self._named_upto:]:
                if stage.name is not None:
                    self._names.setdefault(stage.name, stage.index)
            self._named_upto = len(self.stages)
        return self._names

    @property
    def shipped_stages(self) -> list[Stage]:
        """The stages whose layers end up in an image someone runs: the final stage and every
        stage no other stage uses (a ``--target`` such as ``dev`` or ``cpu``), each with the
        stages it is built on. Stages only copied from (builders) are left out."""
        used: set[int] = set()
        for stage in self.stages:
            if stage.parent_stage is not None:
                used.add(stage.parent_stage)
            used.update(source.index for source in self.copy_sources(stage))
        tips = [s for s in self.stages if s.index not in used or s is self.final_stage]
        shipped: dict[int, Stage] = {}
        for tip in tips:
            for stage in self.chain(tip):
                shipped[stage.index] = stage
        return [shipped[i] for i in sorted(shipped)]

    def env_before(self, stage: Stage, until: Instruction | None = None) -> Mapping[str, str | None]:
        """Variables a RUN of ``stage`` sees (before ``until``, or at the end of the stage): ENV
        from the stage and the stages it is built on, and the stage's own ARGs (a bare ``ARG X``
        takes the default of a meta ARG ``X``). A value is None when it cannot be worked out (no
        default, or it refers to an unknown variable, or the walk's expansions together passed
        MAX_EXPANDED_CHARS); a build argument may override ARG defaults.

        The answer is a read-only view, valid until the next call: the walk is kept and goes on
        from where it stopped when the next question is about a later instruction of the same
        stage, so a rule asking at each instruction in order walks the stage once, not once per
        instruction (which was quadratic)."""
        cursor = self._env_cursor
        if cursor is None or cursor.stage is not stage or not cursor.reaches(until):
            cursor = self._env_cursor = _EnvWalk(self, stage)
        cursor.advance(until)
        return cursor.view


class _EnvWalk:
    """A walk over the instructions of a stage's chain applying ENV and ARG, resumable."""

    __slots__ = ("stage", "meta", "order", "index", "position", "env", "view", "budget")

    def __init__(self, dockerfile: Dockerfile, stage: Stage):
        self.stage = stage
        self.meta = {arg.name: arg.value for arg in dockerfile.args}
        self.order = [(current, ins) for current in dockerfile.chain(stage) for ins in current.instructions]
        self.index = {id(ins): number for number, (_, ins) in enumerate(self.order)}
        self.position = 0
        self.env: dict[str, str | None] = {}
        self.view = MappingProxyType(self.env)
        self.budget = ExpansionBudget()

    def reaches(self, until: Instruction | None) -> bool:
        """Whether ``until`` is at or after where the walk stands (None: the end)."""
        return until is None or self.index.get(id(until), len(self.order)) >= self.position

    def expand(self, value: str) -> str | None:
        result = expand(value, self.env)
        if result is not None and not self.budget.allows(len(value), len(result)):
            return None
        return result

    def advance(self, until: Instruction | None) -> None:
        env, order, stage = self.env, self.order, self.stage
        while self.position < len(order):
            current, ins = order[self.position]
            if ins is until:
                return
            self.position += 1
            if ins.keyword == "ENV":
                for name, value, _ in env_assignments(ins):
                    env[name] = self.expand(value)
            elif ins.keyword == "ARG" and current is stage:
                for word in ins.words:
                    name, eq, default = word.text.partition("=")
                    if not name:
                        continue
                    if eq:
                        env[name] = self.expand(unquote(default))
                    elif name in self.meta:
                        env[name] = self.meta[name]
                    else:
                        env.setdefault(name, None)


def stage_reference(dockerfile: Dockerfile, base: str, before: int | None = None) -> int | None:
    """The index of the stage named ``base`` (case-insensitive), looking only before ``before``."""
    index = dockerfile.stage_names().get(base.lower())
    return index if index is not None and (before is None or index < before) else None


# ---------------------------------------------------------------------------------------------
# Values of flags and ENV words (one word or flag value at a time; the text is never re-read)

_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def unquote(value: str) -> str:
    """Quote removal as BuildKit applies it to ENV, ARG and LABEL values (``"a b"`` gives ``a b``)."""
    out: list[str] = []
    quote = ""
    pos = 0
    while pos < len(value):
        ch = value[pos]
        if ch == "\\" and quote != "'" and pos + 1 < len(value):
            out.append(value[pos + 1])
            pos += 2
            continue
        if ch in "'\"" and (not quote or quote == ch):
            quote = "" if quote else ch
        else:
            out.append(ch)
        pos += 1
    return "".join(out)


def expand(value: str | None, env: dict[str, str | None]) -> str | None:
    """``$NAME`` and ``${NAME}`` replaced by known values; None when one is unknown."""
    if value is None or "$" not in value:
        return value
    unknown = False
    size = len(value)

    def replace(match: re.Match) -> str:
        nonlocal unknown, size
        known = env.get(match.group(1) or match.group(2))
        size += (0 if known is None else len(known)) - len(match.group())  # the result's length
        if known is None or size > MAX_VALUE_CHARS:  # past the bound the value is unknown
            unknown = True
            return ""
        return known

    result = _VARIABLE.sub(replace, value)
    return None if unknown else result


def env_assignments(ins: Instruction) -> list[tuple[str, str, Span]]:
    """``(name, value, span)`` of each variable an ENV or LABEL sets, values with quotes removed
    (``ENV A=1 B="x y"`` and the legacy ``ENV NAME value with spaces``)."""
    words = ins.words
    if not words:
        return []
    if "=" not in words[0].text:
        rest = ins.args[len(words[0].text):].strip() if ins.args.startswith(words[0].text) else ""
        return [(unquote(words[0].text), unquote(rest), words[0].span)]
    found = []
    for word in words:
        name, eq, value = word.text.partition("=")
        if eq and name:
            found.append((unquote(name), unquote(value), word.span))
    return found


def mount_options(flag: Flag) -> dict[str, str]:
    """The ``key=value`` fields of a ``--mount`` flag (``type`` defaults to ``bind``); ``target``
    also answers for ``dst`` and ``destination``, ``source`` for ``src``."""
    fields: dict[str, str] = {}
    for part in (flag.value or "").split(","):
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if key:
            fields[key] = unquote(value.strip()) if eq else "true"
    for alias, name in (("dst", "target"), ("destination", "target"), ("src", "source")):
        if alias in fields:
            fields.setdefault(name, fields[alias])
    fields.setdefault("type", "bind")
    return fields


def _from_values(ins: Instruction) -> list[str]:
    values = [f.value for f in ins.flags.get("from", ()) if f.value] if ins.keyword in ("COPY", "ADD") else []
    if ins.keyword == "RUN":
        values += [m["from"] for m in map(mount_options, ins.flags.get("mount", ())) if m.get("from")]
    return values


# ---------------------------------------------------------------------------------------------
# What a base image is built for: CUDA or CPU only (None: not known)

_PARTS = re.compile(r"[-_.]")
_CUDA_PART = re.compile(r"(?:cu\d{2,3}|cuda\d*(?:\.\d+)*|cudnn\d*|gpu)")
def base_accelerator(image: str | None) -> tuple[str, str] | None:
    """``("cuda", why)`` for a base image known to carry the CUDA runtime, ``("cpu", why)`` for one
    known to carry none, None when the reference does not say (your own base images, say)."""
    reference = image_reference(image)
    if reference is None:
        return None
    name, tag, _ = reference
    tag = (tag or "latest").lower()
    path = repository_path(name.lower())
    repository = path.rsplit("/", 1)[-1]
    tag_parts = _PARTS.split(tag)
    repo_parts = _PARTS.split(repository)
    if "cpu" in tag_parts:
        return "cpu", f"its tag `{tag}` names a CPU build"
    if "cpu" in repo_parts:
        return "cpu", f"its repository `{repository}` is a CPU build"
    if any(_CUDA_PART.fullmatch(p) for p in tag_parts + repo_parts):
        return "cuda", "its name says CUDA or GPU"
    if path == "nvidia/cuda" or path.endswith("/nvidia/cuda") or path.startswith("nvidia/cuda"):
        return "cuda", "it is an NVIDIA CUDA image"
    if image_registry(name) == "nvcr.io" and path.startswith("nvidia/") and not path.startswith(
            ("nvidia/k8s", "nvidia/cloud-native", "nvidia/gpu-operator")):
        return "cuda", "it is an NVIDIA NGC framework image"
    if path in ("pytorch/pytorch",) or path.endswith("/pytorch/pytorch"):
        return "cuda", "PyTorch's Docker Hub images are CUDA builds"
    for family, what in (("tensorflow/tensorflow", "TensorFlow"), ("tensorflow/serving", "TensorFlow Serving"),
                         ("rayproject/ray", "Ray"), ("rayproject/ray-ml", "Ray")):
        if path == family or path.endswith("/" + family):
            return "cpu", f"{what}'s tags without `gpu` or a CUDA version are its CPU images"
    if (path.startswith("jupyter/") or "/jupyter/" in f"/{path}") and repository.endswith("-notebook"):
        return "cpu", "Jupyter's images without a `cuda` tag are CPU builds"
    if path.startswith("azureml/openmpi"):
        return "cpu", "Azure ML's `openmpi` images without `cuda` in the name are CPU builds"
    if path.startswith("distroless/") or path.startswith("chainguard/"):
        return "cpu", "it is a minimal runtime image without CUDA"
    if path.startswith("library/") and path[len("library/"):] in LIBRARY_CPU_IMAGES:
        return "cpu", f"it is the plain `{path[len('library/'):]}` image"
    if path in CONDA_CPU_IMAGES:
        return "cpu", f"it is the plain `{path}` image"
    return None


# ---------------------------------------------------------------------------------------------
# Where a finding stands in the file's structure (for baselines: stable when lines move)


def node_path(stage: Stage, ins: Instruction, *rest: str | int) -> tuple[str | int, ...]:
    """``("stage", <name or index>, KEYWORD, <ordinal among that keyword in the stage>, …)``."""
    ordinal = sum(1 for other in stage.instructions[: stage.instructions.index(ins)] if other.keyword == ins.keyword) \
        if ins in stage.instructions else 0
    return ("stage", stage.name if stage.name is not None else stage.index, ins.keyword, ordinal, *rest)


# ---------------------------------------------------------------------------------------------
# Images a stage pulls besides its base: COPY --from=<image>, RUN --mount=from=<image>


class ImageUse(Struct, frozen=True):
    """An image a stage uses: its FROM base, or the source of ``COPY --from`` / ``RUN --mount``."""

    stage: Stage
    instruction: Instruction
    written: str  # as written
    image: str  # with ARG defaults substituted
    span: Span

    @property
    def is_from(self) -> bool:
        return self.instruction.keyword == "FROM"

    def describe(self) -> str:
        shown = f"`{self.written}`" if self.written == self.image else f"`{self.written}` (`{self.image}`)"
        if self.is_from:
            return f"FROM {shown}"
        how = "RUN --mount=from=" if self.instruction.keyword == "RUN" else f"{self.instruction.keyword} --from="
        return f"{how}{shown}"


def image_uses(dockerfile: Dockerfile) -> list[ImageUse]:
    """Every image reference of the file: each FROM that pulls an image (not ``scratch``, not an
    earlier stage; ``FROM $VAR`` resolved from ARG defaults, skipped when it cannot be), and each
    ``COPY/ADD --from`` or ``RUN --mount=from=`` that names an image rather than a stage. A bare
    ``--from`` word without ``/``, ``:`` or ``@`` may be a named build context and is skipped."""
    uses: list[ImageUse] = []
    for stage in dockerfile.stages:
        if stage.is_image and stage.base_resolved is not None and stage.base_span is not None:
            uses.append(ImageUse(stage, stage.from_instruction, stage.base, stage.base_resolved, stage.base_span))
        for ins in stage.instructions:
            for value, span in _external_sources(ins):
                if dockerfile.stage_index(value, before=stage.index) is None and any(c in value for c in "/:@"):
                    uses.append(ImageUse(stage, ins, value, value, span))
    return uses


def _external_sources(ins: Instruction) -> list[tuple[str, Span]]:
    found: list[tuple[str, Span]] = []
    if ins.keyword in ("COPY", "ADD"):
        for flag in ins.flags.get("from", ()):
            if flag.value and "$" not in flag.value:
                found.append((flag.value, flag.value_span or flag.span))
    elif ins.keyword == "RUN":
        for flag in ins.flags.get("mount", ()):
            source = mount_options(flag).get("from")
            if source and "$" not in source:
                span = flag.value_span or flag.span
                offset = (flag.value or "").find(f"from={source}")
                if offset >= 0 and span.line == span.end_line:
                    span = Span(span.line, span.col + offset + 5, span.line, span.col + offset + 5 + len(source))
                found.append((source, span))
    return found


# ---------------------------------------------------------------------------------------------
# pip (and uv pip) installs in RUN commands

_PIP = re.compile(r"pip(?:\d+(?:\.\d+)*)?")
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)*)?|py|pypy3?")
_BARE_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# pip's general options that take a value (``pip --log x install``)
PIP_GENERAL_VALUE_OPTIONS = frozenset({
    "--cache-dir", "--log", "--log-file", "--proxy", "--retries", "--timeout", "--exists-action",
    "--trusted-host", "--cert", "--client-cert", "--python", "--use-feature", "--use-deprecated",
    "--keyring-provider", "--resume-retries",
})
_WRAPPERS = frozenset({"sudo", "env", "nohup", "exec", "command", "time", "xargs", "nice", "stdbuf"})
_RUNNERS = frozenset({"conda", "mamba", "micromamba", "poetry", "pipenv", "pdm", "hatch"})
_RUNNER_VALUE_OPTIONS = frozenset({"-n", "--name", "-p", "--prefix", "-u", "--user", "-e"})
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh"})


class PipInstall(Struct, frozen=True):
    """A ``pip install`` (``pip3``, ``python -m pip``, ``uv pip install`` …) in a RUN.

    ``tool`` is ``pip`` or ``uv``; ``words`` are the command's words from the program on
    (``python``, ``pip`` or ``uv``), ``install`` the index of the ``install`` word in them.
    """

    command: ShellCommand
    tool: str
    words: tuple[ShellWord, ...]
    install: int

    @property
    def span(self) -> Span:
        first, last = self.words[0].span, self.words[self.install].span
        return Span(first.line, first.col, last.end_line, last.end_col)

    @property
    def written(self) -> str:
        return " ".join(w.text for w in self.words[: self.install + 1])

    @property
    def arguments(self) -> tuple[ShellWord, ...]:
        """The words after ``install``."""
        return self.words[self.install + 1:]


def bare_variable(text: str) -> str | None:
    """The NAME of a word that is only ``$NAME`` or ``${NAME}``."""
    match = _BARE_VARIABLE.fullmatch(text)
    return (match.group(1) or match.group(2)) if match else None


def _program(word: ShellWord, env: dict[str, str | None]) -> str | None:
    """The program name a word runs (a ``$PYTHON`` word resolved from ``env``; None if unknown)."""
    name = bare_variable(word.text)
    text = word.text if name is None else env.get(name)
    if text is None:
        return None
    return text.split()[0].rsplit("/", 1)[-1] if text.split() else ""


def pip_install(command: ShellCommand, env: dict[str, str | None]) -> PipInstall | None:
    """The ``pip install`` this command runs, if it runs one (through ``sudo``, ``env``,
    ``conda run …`` and the like too)."""
    words = command.words
    start = 0
    while start < len(words):  # wrappers and runners before the real program
        name = words[start].text.rsplit("/", 1)[-1]
        if name in _WRAPPERS:
            start += 1
            while start < len(words) and (words[start].text.startswith("-") or _is_assignment(words[start].text)):
                start += 2 if words[start].text in ("-u", "--unset", "-g", "-n") else 1
            continue
        if name in _RUNNERS and start + 1 < len(words) and words[start + 1].text == "run":
            start += 2
            while start < len(words) and words[start].text.startswith("-"):
                start += 2 if words[start].text in _RUNNER_VALUE_OPTIONS else 1
            continue
        break
    if start >= len(words):
        return None
    program = _program(words[start], env)
    rest = start + 1
    tool = "pip"
    if program is not None and _PIP.fullmatch(program):
        pass
    elif (program is None or _PYTHON.fullmatch(program)) and _module_pip(words, rest) is not None:
        rest = _module_pip(words, rest)  # type: ignore[assignment]
    elif program == "uv":
        while rest < len(words) and words[rest].text.startswith("-"):
            rest += 1
        if rest >= len(words) or words[rest].text != "pip":
            return None
        tool, rest = "uv", rest + 1
    else:
        return None
    while rest < len(words) and words[rest].text.startswith("-"):
        option = words[rest].text
        rest += 2 if option in PIP_GENERAL_VALUE_OPTIONS else 1
    if rest < len(words) and words[rest].text == "install":
        return PipInstall(command, tool, words[start:], rest - start)
    return None


def _module_pip(words: tuple[ShellWord, ...], pos: int) -> int | None:
    """Index after ``-m pip`` (``python -u -m pip``, ``python -mpip``), or None."""
    while pos < len(words) and words[pos].text.startswith("-"):
        text = words[pos].text
        if text == "-m":
            return pos + 2 if pos + 1 < len(words) and words[pos + 1].text == "pip" else None
        if text == "-mpip":
            return pos + 1
        if text.startswith("-m") or text in ("-c", "-W", "-X"):
            return None
        pos += 1
    return None


def _is_assignment(text: str) -> bool:
    name, eq, _ = text.partition("=")
    return bool(eq) and name.isidentifier()


def option_values(words: tuple[ShellWord, ...], *names: str) -> list[tuple[str, ShellWord]]:
    """Values of ``--name value``, ``--name=value`` and ``-n value`` options among ``words``."""
    found = []
    for index, word in enumerate(words):
        for name in names:
            if word.text == name and index + 1 < len(words):
                found.append((words[index + 1].text, words[index + 1]))
            elif name.startswith("--") and word.text.startswith(name + "="):
                found.append((word.text[len(name) + 1:], word))
            elif not name.startswith("--") and word.text.startswith(name) and len(word.text) > len(name):
                found.append((word.text[len(name):], word))
    return found


_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})


def _cache_paths(tool: str, env: dict[str, str | None]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(folder suffixes, exact folders) that hold the tool's cache: ``…/.cache`` and
    ``…/.cache/pip`` (``…/.cache/uv``) under any home, and the folders the env points to."""
    sub = "pip" if tool == "pip" else "uv"
    exact = [v.rstrip("/") for v in (env.get("PIP_CACHE_DIR" if tool == "pip" else "UV_CACHE_DIR"),) if v]
    if env.get("XDG_CACHE_HOME"):
        exact += [env["XDG_CACHE_HOME"].rstrip("/"), env["XDG_CACHE_HOME"].rstrip("/") + "/" + sub]  # type: ignore[union-attr]
    return ("/.cache", f"/.cache/{sub}"), tuple(exact)


def _is_cache_path(path: str, tool: str, env: dict[str, str | None]) -> bool:
    path = path.rstrip("/")
    for prefix in ("~", "$HOME", "${HOME}"):
        if path.startswith(prefix + "/"):
            path = "/home" + path[len(prefix):]
    if path.endswith("/*"):
        path = path[:-2]
    suffixes, exact = _cache_paths(tool, env)
    return path in exact or path.endswith(suffixes) or path in (".cache", f".cache/{'pip' if tool == 'pip' else 'uv'}")


def pip_cache_avoided(ins: Instruction, index: int, pip: PipInstall, env: dict[str, str | None]) -> str | None:
    """How the ``pip install`` at ``ins.commands[index]`` keeps its cache out of the layer, or None.

    pip: ``--no-cache-dir`` (or an abbreviation from ``--no-cache``), ``PIP_NO_CACHE_DIR`` set to
    any value (pip disables the cache for "false" too, for backwards compatibility) by ENV, ARG, a
    ``VAR=…`` prefix or an earlier ``export`` in the same RUN; uv: ``--no-cache``/``-n``, its alias
    ``--no-cache-dir`` (pip's spelling, uv accepts it), or a true ``UV_NO_CACHE``. Both: a
    ``--mount=type=cache`` (or ``tmpfs``) on the cache folder, or the cache removed later in the
    same RUN (``pip cache purge``, ``uv cache clean``, ``rm -rf ~/.cache/pip``).
    A bare ``$VAR`` word with an unknown value may hold the flag: counted as avoiding it.
    """
    local: ChainMap[str, str | None] = ChainMap({}, env)  # not a copy of env per command (quadratic)
    for earlier in ins.commands[:index]:
        if earlier.program == "export":
            for word in earlier.words[1:]:
                name, eq, value = word.text.partition("=")
                if eq:
                    local[name] = value
    for word in pip.command.assignments:
        name, _, value = word.text.partition("=")
        local[name] = value
    words = list(pip.words[1:])
    for word in pip.words[1:]:
        name = bare_variable(word.text)
        if name is not None:
            value = local.get(name)
            if value is None:
                return f"`{word.text}` may hold the option"
            words.extend(ShellWord(part, word.span) for part in value.split())
    texts = [w.text for w in words]
    if pip.tool == "pip":
        if any(t.startswith("--no-cache") and "--no-cache-dir".startswith(t.split("=")[0]) for t in texts):
            return "--no-cache-dir"
        if "PIP_NO_CACHE_DIR" in local and local["PIP_NO_CACHE_DIR"] != "":
            return "PIP_NO_CACHE_DIR"
    else:
        if "--no-cache" in texts or "-n" in texts or "--no-cache-dir" in texts:  # uv's alias of pip's spelling
            return "--no-cache"
        value = local.get("UV_NO_CACHE", "")
        if "UV_NO_CACHE" in local and (value is None or value.lower() in _TRUE):
            return "UV_NO_CACHE"
    for flag in ins.flags.get("mount", ()):
        options = mount_options(flag)
        if options["type"] in ("cache", "tmpfs") and _is_cache_path(options.get("target", ""), pip.tool, local):
            return "a cache mount"
    for later in ins.commands[index + 1:]:
        texts = [w.text for w in later.words]
        program = later.program
        if pip.tool == "pip" and _PIP.fullmatch(program or "") and texts[1:3] in (["cache", "purge"],):
            return "pip cache purge"
        if pip.tool == "pip" and texts[1:4] == ["-m", "pip", "cache"] and texts[4:5] == ["purge"]:
            return "pip cache purge"
        if pip.tool == "uv" and texts[:3] in (["uv", "cache", "clean"], ["uv", "cache", "prune"]):
            return "uv cache clean"
        if program == "rm" and any(_is_cache_path(t, pip.tool, local) for t in texts[1:] if not t.startswith("-")):
            return "the cache is removed"
    return None


# ---------------------------------------------------------------------------------------------
# Evidence that a Dockerfile is meant to run on GPUs (DKR003)

_NAME_TOKENS = re.compile(r"[a-z0-9]+")
_GPU_NAME = re.compile(r"gpus?|cuda\d*|cu\d{2,3}|nvidia")
_GPU_ENV = frozenset({
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA", "CUDA_VISIBLE_DEVICES",
    "CUDA_HOME", "CUDA_PATH", "CUDA_VERSION", "CUDNN_VERSION", "NCCL_VERSION", "TORCH_CUDA_ARCH_LIST",
})
_GPU_ENV_PREFIXES = ("NCCL_", "HOROVOD_GPU")
_NO_DEVICE = frozenset({"", "none", "void", "-1", "cpu"})
_FREE_TEXT_LABELS = ("description", "title", "summary", "documentation", "url", "source", "authors", "vendor",
                     "licenses", "maintainer", "revision", "created")
_LOCAL_CUDA_VERSION = re.compile(r"(?:\+|%2b)cu\d{2,3}", re.IGNORECASE)
_URL_CUDA = re.compile(r"(?:^|[/._-])(?:cu\d{2,3}|cuda\d*)(?:[/._-]|$)", re.IGNORECASE)
_REQUIREMENT_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?")
_GPU_WHEEL = re.compile(
    r"nvidia-[a-z0-9-]+-cu\d+|[a-z0-9-]+-cu1\d|cupy-cuda\d+x?|[a-z0-9_-]+-gpu|flash[-_]attn|tensorrt(?:-[a-z0-9-]+)?|"
    r"jax-cuda\d+-(?:plugin|pjrt)")
_GPU_EXTRA = re.compile(r"cuda\d*(?:[-_]\w+)?|and-cuda|gpu")
_SYSTEM_INSTALLERS = {"apt-get": "install", "apt": "install", "yum": "install", "dnf": "install", "microdnf": "install",
                      "conda": "install", "mamba": "install", "micromamba": "install", "zypper": "install"}
_CUDA_PACKAGE = re.compile(
    r"cuda(?:-[a-z0-9.-]+)?|libcudnn\d*(?:-[a-z0-9.-]+)?|cudnn\d*|libnccl\d*(?:-[a-z0-9.-]+)?|nccl|cudatoolkit|"
    r"pytorch-cuda|nvidia-cuda-[a-z-]+|libnvinfer\d*(?:-[a-z0-9.-]+)?|cupy")


class Evidence(Struct, frozen=True):
    """One sign that a file is meant for GPUs: what it is, and where (None: the file's name)."""

    what: str
    span: Span | None = None

    def describe(self) -> str:
        return f"{self.what} (line {self.span.line})" if self.span is not None else self.what


def name_tokens(text: str) -> list[str]:
    return _NAME_TOKENS.findall(text.lower())


def intent_from_name(dockerfile: Dockerfile) -> tuple[str | None, Evidence | None]:
    """What the file's name, its folder's name or its final stage's name say: ``("cpu", None)``,
    ``("gpu", evidence)`` or ``(None, None)``. A ``cpu`` in the name wins over a ``gpu`` in the
    folder (``images/gpu/Dockerfile.cpu`` is the CPU variant)."""
    parts = dockerfile.path.replace("\\", "/").split("/")
    final = dockerfile.final_stage
    places = [("the file name", parts[-1]), ("the stage name", final.name if final and final.name else ""),
              ("the folder name", parts[-2] if len(parts) > 1 else "")]
    found: Evidence | None = None
    for where, text in places:
        tokens = [t for t in name_tokens(text) if t not in ("dockerfile", "containerfile")]
        if "cpu" in tokens:
            return "cpu", None
        gpu = next((t for t in tokens if _GPU_NAME.fullmatch(t)), None)
        if gpu is not None and found is None:
            found = Evidence(f"{where} `{text}`" if gpu == text.lower() else f"{where} `{text}` says `{gpu}`")
    return ("gpu", found) if found else (None, None)


def evidence_stages(dockerfile: Dockerfile) -> list[Stage]:
    """The final stage, the stages it is built on, and (transitively) the stages it copies from."""
    final = dockerfile.final_stage
    if final is None:
        return []
    seen: dict[int, Stage] = {}
    todo = [final]
    while todo:
        stage = todo.pop()
        for member in dockerfile.chain(stage):
            if member.index not in seen:
                seen[member.index] = member
                todo.extend(dockerfile.copy_sources(member))
    return [seen[i] for i in sorted(seen)]


def _env_evidence(name: str, value: str | None, span: Span, keyword: str) -> Evidence | None:
    if (name in _GPU_ENV or name.startswith(_GPU_ENV_PREFIXES)) and (value is None or value.strip().lower() not in _NO_DEVICE):
        return Evidence(f"{keyword} `{name}`", span)
    return None


def _label_evidence(name: str, value: str, span: Span) -> Evidence | None:
    key = name.lower()
    if key.startswith("com.nvidia."):
        return Evidence(f"LABEL `{name}`", span)
    if any(part in key for part in _FREE_TEXT_LABELS):
        return None
    tokens = name_tokens(key) + name_tokens(value)
    if "cpu" in tokens:
        return None
    gpu = next((t for t in tokens if _GPU_NAME.fullmatch(t)), None)
    return Evidence(f"LABEL `{name}={value}`", span) if gpu else None


def _wheel_evidence(pip: PipInstall) -> Evidence | None:
    arguments = pip.arguments
    for url, word in option_values(arguments, "--index-url", "--extra-index-url", "-i", "--find-links", "-f"):
        host = url.split("://", 1)[-1].split("/", 1)[0].lower()
        path = url.split("://", 1)[-1].partition("/")[2].split("?")[0]
        if host == "pypi.nvidia.com" or host.endswith(".nvidia.com") or _URL_CUDA.search(path):
            return Evidence(f"a CUDA package index `{url}`", word.span)
    for value, word in option_values(arguments, "--torch-backend"):
        if value.lower().startswith("cu"):
            return Evidence(f"`--torch-backend={value}`", word.span)
    for word in arguments:
        text = word.text
        if text.startswith("-"):
            continue
        if _LOCAL_CUDA_VERSION.search(text):
            return Evidence(f"the CUDA wheel `{text}`", word.span)
        match = _REQUIREMENT_NAME.match(text.rsplit("/", 1)[-1] if "://" not in text else "")
        if match is None:
            continue
        name, extras = match.group(1).lower(), (match.group(2) or "")[1:-1].lower()
        if _GPU_WHEEL.fullmatch(name) or any(_GPU_EXTRA.fullmatch(e.strip()) for e in extras.split(",") if e):
            return Evidence(f"the GPU package `{text}`", word.span)
    return None


def _package_evidence(command: ShellCommand) -> Evidence | None:
    words = command.words
    subcommand = _SYSTEM_INSTALLERS.get(command.program)
    if subcommand is None or subcommand not in [w.text for w in words[1:]]:
        return None
    start = [w.text for w in words].index(subcommand, 1) + 1
    for value, word in option_values(words[start:], "-c", "--channel"):
        if value == "nvidia":
            return Evidence("the `nvidia` conda channel", word.span)
    for word in words[start:]:
        package = re.split(r"[=<>~!]", word.text, maxsplit=1)[0].lower()
        if not word.text.startswith("-") and _CUDA_PACKAGE.fullmatch(package):
            return Evidence(f"the CUDA package `{word.text}`", word.span)
    return None


def gpu_evidence(dockerfile: Dockerfile) -> tuple[str | None, list[Evidence]]:
    """``(intent, evidence)``: ``intent`` is ``"cpu"`` when the name says CPU (then nothing else
    counts), else ``"gpu"`` when there is evidence. Evidence: the file, folder or final stage
    name; ENV and ARG variables of the NVIDIA runtime, CUDA and NCCL; GPU labels; CUDA packages
    (apt, yum, conda); GPU wheels (``+cu121`` local versions, ``nvidia-*-cu12``, ``-gpu`` packages,
    ``[cuda12]`` extras, CUDA package indexes) in the stages the final image is made of."""
    intent, named = intent_from_name(dockerfile)
    if intent == "cpu":
        return "cpu", []
    found: list[Evidence] = []
    for arg in dockerfile.args:
        hit = _env_evidence(arg.name, arg.value, arg.span, "ARG")
        if hit:
            found.append(hit)
    for stage in evidence_stages(dockerfile):
        for ins in stage.instructions:
            if ins.keyword in ("ENV", "LABEL"):
                for name, value, span in env_assignments(ins):
                    hit = _env_evidence(name, value, span, "ENV") if ins.keyword == "ENV" else _label_evidence(name, value, span)
                    if hit:
                        found.append(hit)
            elif ins.keyword == "ARG":
                for word in ins.words:
                    name, _, value = word.text.partition("=")
                    hit = _env_evidence(name, unquote(value) if value else None, word.span, "ARG")
                    if hit:
                        found.append(hit)
            elif ins.keyword == "RUN":
                env = dockerfile.env_before(stage, ins)
                for command in ins.commands:
                    pip = pip_install(command, env)
                    hit = _wheel_evidence(pip) if pip is not None else _package_evidence(command)
                    if hit:
                        found.append(hit)
    # the strongest first: what is installed, then variables and labels, then names
    found.sort(key=lambda e: (not e.what.startswith(("the CUDA", "the GPU", "a CUDA", "the `nvidia`", "`--torch")),
                              not e.what.startswith(("ENV", "ARG"))))
    if named:
        found.append(named)
    return ("gpu" if found else None), found


# ---------------------------------------------------------------------------------------------
# What the final image runs, and as whom


class StartCommand(Struct, frozen=True):
    """The ENTRYPOINT and CMD that take effect in the final image (each with its stage), as
    Docker applies them: the last one of each in the final stage and the stages it is built on;
    an ENTRYPOINT resets a CMD inherited from an earlier stage (a CMD of its own stage stays)."""

    entrypoint: Instruction | None
    entrypoint_stage: Stage | None
    cmd: Instruction | None
    cmd_stage: Stage | None


def start_command(dockerfile: Dockerfile) -> StartCommand | None:
    final = dockerfile.final_stage
    if final is None:
        return None
    entry = cmd = None
    entry_stage = cmd_stage = None
    for stage in dockerfile.chain(final):
        cmd_set = False
        for ins in stage.instructions:
            if ins.keyword == "ENTRYPOINT":
                entry, entry_stage = ins, stage
                if not cmd_set:
                    cmd, cmd_stage = None, None
            elif ins.keyword == "CMD":
                cmd, cmd_stage, cmd_set = ins, stage, True
    return StartCommand(entry, entry_stage, cmd, cmd_stage)


def execs(ins: Instruction) -> bool:
    """Whether a shell-form command replaces the shell with the program (``exec python …``),
    which then gets the signals itself."""
    return any(command.program == "exec" and len(command.words) > 1 for command in ins.commands)


def final_user(dockerfile: Dockerfile) -> tuple[Instruction, Stage] | None:
    """The last USER of the final stage and the stages it is built on, with its stage."""
    final = dockerfile.final_stage
    found = None
    for stage in dockerfile.chain(final) if final is not None else ():
        for ins in stage.instructions:
            if ins.keyword == "USER":
                found = (ins, stage)
    return found
