"""The typed model of a shell script: commands, assignments and the ``az aks`` commands in it.

Built by :mod:`linter.sources.shell`. A value that the script does not determine (``$(...)``,
backticks, a variable the script never assigns, ``$1``) is :data:`UNKNOWN`, never a guess
(:mod:`linter.model.unknown`, re-exported here).

The tables below describe the Azure CLI's ``az aks`` argument parser (azure-cli ``_params.py``,
see ``shared/facts/aks-platform.md`` section C): which options are switches, which take several
space-separated values, and which short names and aliases mean the same option.
"""

from __future__ import annotations

from typing import Final

from msgspec import Struct, field

from mlops_lint.model.position import Span
from mlops_lint.model.unknown import UNKNOWN, Unknown, Value, is_known, is_placeholder, resolved  # noqa: F401 - re-exported


# Options that take no value. ``--enable-*`` / ``--disable-*`` options not listed in
# VALUE_OPTIONS are switches too (in azure-cli nearly all of them are ``store_true`` or
# three-state flags); a switch followed by ``true``/``false`` takes it as its value.
SWITCHES: Final = frozenset({
    "--enable-cluster-autoscaler", "-e", "--disable-cluster-autoscaler", "-d",
    "--update-cluster-autoscaler", "-u", "--enable-blob-driver", "--disable-blob-driver",
    "--enable-file-driver", "--disable-file-driver", "--enable-disk-driver", "--disable-disk-driver",
    "--enable-managed-identity", "--generate-ssh-keys", "--no-ssh-key", "-x", "--no-wait", "--yes", "-y",
    "--enable-aad", "--enable-azure-rbac", "--enable-oidc-issuer", "--enable-workload-identity",
    "--enable-node-public-ip", "--enable-encryption-at-host", "--enable-ultra-ssd", "--enable-fips-image",
    "--enable-private-cluster", "--skip-gpu-driver-install", "--debug", "--verbose", "--only-show-errors",
    "--help", "-h",
})
# ``--enable-*`` options that take a value.
VALUE_OPTIONS: Final = frozenset({"--enable-addons", "-a"})
# Options taking one or more values: every following token up to the next option.
MULTI_VALUE: Final = frozenset({
    "--labels", "--nodepool-labels", "--node-taints", "--nodepool-taints", "--node-init-taints",
    "--zones", "-z", "--cluster-autoscaler-profile", "--ca-profile", "--tags", "--nodepool-tags",
})
# Short names and aliases of the four commands linted (az aks create, update, nodepool add, update).
ALIASES: Final = {
    "-g": "--resource-group", "-n": "--name", "-s": "--node-vm-size", "-c": "--node-count",
    "-e": "--enable-cluster-autoscaler", "-d": "--disable-cluster-autoscaler",
    "-u": "--update-cluster-autoscaler", "-m": "--max-pods", "-z": "--zones", "-k": "--kubernetes-version",
    "-a": "--enable-addons", "-x": "--no-ssh-key", "-y": "--yes", "-l": "--location", "-o": "--output",
    "-h": "--help", "--ca-profile": "--cluster-autoscaler-profile",
}


def canonical(option: str) -> str:
    """The long name of an option as the CLI knows it (``-s`` -> ``--node-vm-size``)."""
    return ALIASES.get(option, option)


def is_switch(option: str) -> bool:
    name = canonical(option)
    if name in SWITCHES or option in SWITCHES:
        return True
    return name.startswith(("--enable-", "--disable-")) and name not in VALUE_OPTIONS


def takes_many(option: str) -> bool:
    return canonical(option) in MULTI_VALUE


def written_span(raw: str, span: Span) -> Span:
    """``span`` of a word or value without a continuation to nothing at its end: a word ending in
    ``\\`` on the script's last line keeps the backslash in ``raw`` and in its span, and a fix
    that edits or appends after the word goes before it."""
    if raw.endswith(("\\\n", "\\\r\n")) and span.end_col > span.col:
        return Span(span.line, span.col, span.end_line, span.end_col - 1)
    return span


class Token(Struct, frozen=True):
    """One shell word after expansion: ``raw`` as written (quotes kept), ``value`` expanded.

    A word whose unquoted expansion splits into several fields gives several tokens with the
    same ``raw`` and ``span``.
    """

    raw: str
    value: Value
    span: Span


class FlagValue(Struct, frozen=True):
    """A value given to an ``az`` option: as written, resolved (or UNKNOWN), and where."""

    raw: str
    value: Value
    span: Span

    @property
    def known(self) -> bool:
        return self.value is not UNKNOWN

    @property
    def is_placeholder(self) -> bool:
        return is_placeholder(self.value)

    @property
    def resolved(self) -> Value:
        """The value, or UNKNOWN when the script does not determine it (``<placeholder>`` too)."""
        return resolved(self.value)


class AzFlag(Struct, frozen=True):
    """One occurrence of an option: ``name`` as written (``--labels``, ``-s``), ``span`` of the name."""

    name: str
    span: Span
    values: tuple[FlagValue, ...] = ()

    @property
    def canonical(self) -> str:
        return canonical(self.name)

    @property
    def value(self) -> FlagValue | None:
        return self.values[0] if self.values else None


class Assignment(Struct, frozen=True):
    """``NAME=value`` (also after export/readonly/local/declare/typeset), a ``for`` variable or a ``read``.

    ``scope`` is ``"shell"`` for assignments that persist and ``"command"`` for ``NAME=v cmd``
    prefixes, which set the variable only in that command's environment.
    """

    name: str
    raw: str
    value: Value
    span: Span
    keyword: str | None = None  # export, readonly, local, declare, typeset, for, read
    scope: str = "shell"


class Command(Struct, frozen=True):
    """A simple command: its words after reserved words (if/then/do/...), ``sudo``/``time``/
    ``env`` and ``NAME=value`` prefixes are removed."""

    words: tuple[Token, ...]
    span: Span

    @property
    def name(self) -> Value:
        return self.words[0].value if self.words else ""


class AzCommand(Struct):
    """An ``az aks ...`` or ``az aks nodepool ...`` command.

    ``options`` lists every option in order; ``flags`` maps each option name *as written* to all
    its values in order (empty for a switch). ``has_unknown_words`` is set when a word's value is
    unknown and was not taken as an option value (``$EXTRA_ARGS``): it may hold more options.
    ``editable`` is False when a fix must not touch the script (see the field).
    """

    group: str  # "aks" | "aks nodepool"
    verb: str
    span: Span
    command: Command
    options: tuple[AzFlag, ...] = ()
    flags: dict[str, list[FlagValue]] = field(default_factory=dict)
    positional: tuple[Token, ...] = ()
    has_unknown_words: bool = False
    # False in a script that is a record or a document rather than a program (``$ `` prompts,
    # Markdown fences: a terminal session, a README snippet) or that did not read cleanly (an
    # unclosed quote or heredoc, after which the reader guessed): fixes leave such files alone
    editable: bool = True

    def is_(self, group: str, verb: str) -> bool:
        return self.group == group and self.verb == verb

    @property
    def end(self) -> Span:
        """The empty span right after the command's last word (before a redirection, ``&&``,
        a comment or the line end): where a fix appends an option."""
        last = written_span(self.command.words[-1].raw, self.command.words[-1].span)
        return Span(last.end_line, last.end_col, last.end_line, last.end_col)

    def flag(self, *names: str) -> AzFlag | None:
        """The last occurrence of any of ``names`` (aliases match: ``-s`` for ``--node-vm-size``)."""
        wanted = {canonical(name) for name in names}
        found = None
        for option in self.options:
            if option.canonical in wanted:
                found = option
        return found

    def has(self, *names: str) -> bool:
        return self.flag(*names) is not None

    def values(self, *names: str) -> list[FlagValue]:
        """The values of the last occurrence of the option (argparse keeps the last one)."""
        option = self.flag(*names)
        return list(option.values) if option is not None else []

    def value(self, *names: str) -> FlagValue | None:
        option = self.flag(*names)
        return option.value if option is not None else None


class ShellScript(Struct):
    """What a shell script runs, in order. ``path`` is the display path of its file."""

    commands: list[Command] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    az_commands: list[AzCommand] = field(default_factory=list)
    path: str = ""

    def az(self, group: str, verb: str) -> list[AzCommand]:
        return [c for c in self.az_commands if c.group == group and c.verb == verb]
