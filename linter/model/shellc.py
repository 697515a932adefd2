"""A container's ``sh -c`` script: which shell is PID 1, and the statements it runs.

Kubernetes sends SIGTERM to a container's PID 1. When ``command`` starts a POSIX shell with
``-c`` (``["/bin/bash", "-c", "set -e\\npython train.py"]``), that shell is PID 1; it passes no
signal on to its children, so a trainer it starts never hears of its pod's end unless the
script hands PID 1 over with ``exec`` or traps TERM (the manifest twin of DKR006's shell form).

The script is split into simple commands as a shell would (``shlex`` with the shell's quoting
rules; ``;``, ``&``, ``|``, ``&&``, ``||``, parentheses and line breaks end a command, a ``#``
word starts a comment, a backslash-newline joins lines). Commands inside ``$(…)``, quoted
strings and here-documents are not split out: this is a reading for signals, not a shell.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

from msgspec import Struct

from mlops_lint.model.position import Span

# shells that run ``-c`` scripts with POSIX semantics (DKR006's shell form runs in one of them)
POSIX_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh"})
_OPERATORS = frozenset({";", "&", "|", "&&", "||", "(", ")", "\n", ";;", "|&", "&>", ">", "<", ">>", "<<", ">&", "<&"})
_REDIRECTS = frozenset({">", "<", ">>", "<<", ">&", "<&", "&>", ">|"})


class ShellC(Struct, frozen=True):
    """A ``<shell> -c <script>`` start: the shell, the script and where the script is written."""

    shell: str
    script: str
    span: Span  # the script's item in ``command`` or ``args``
    node: tuple[str | int, ...]


def shell_c(container) -> ShellC | None:
    """The container's ``command`` (then ``args``) when it starts a POSIX shell with ``-c``."""
    command = container.body.get_seq("command")
    if not command:
        return None  # the image's ENTRYPOINT runs: not known here
    first = command[0]
    if not isinstance(first, str) or first.rsplit("/", 1)[-1] not in POSIX_SHELLS:
        return None  # the common case, decided before the items are gathered
    items: list[tuple[object, Span, tuple[str | int, ...]]] = []
    for field in ("command", "args"):
        seq = container.body.get_seq(field)
        for index, item in enumerate(seq if seq is not None else ()):
            items.append((item, seq.item_span(index), container.path + (field, index)))
    for position in range(1, len(items)):
        word = items[position][0]
        if not isinstance(word, str) or not word.startswith("-") or word.startswith("--"):
            if word in ("--login", "--noprofile", "--norc"):
                continue
            return None
        if "c" in word[1:] and word[1:].isalpha():
            script = position + 1
            if script < len(items) and items[script][0] == "--":  # `bash -c -- 'script'`: `--` ends the options
                script += 1
            if script < len(items) and isinstance(items[script][0], str):
                _, span, node = items[script]
                return ShellC(first.rsplit("/", 1)[-1], items[script][0], span, node)
            return None
    return None


def _masked(script: str) -> str:
    """The script with each command substitution (``$(…)``, backticks) replaced by one word
    (``$_``), so that the pipes and semicolons inside it do not split the command around it."""
    out: list[str] = []
    pos, end = 0, len(script)
    while pos < end:
        ch = script[pos]
        if ch == "'":  # single quotes: literal to the closing quote
            close = script.find("'", pos + 1)
            close = end - 1 if close < 0 else close
            out.append(script[pos:close + 1])
            pos = close + 1
        elif ch == "`":
            close = script.find("`", pos + 1)
            out.append("$_")
            pos = end if close < 0 else close + 1
        elif script.startswith("$(", pos):
            depth, pos = 1, pos + 2
            while pos < end and depth:
                depth += {"(": 1, ")": -1}.get(script[pos], 0)
                pos += 1
            out.append("$_")
        else:
            out.append(ch)
            pos += 1
    return "".join(out)


# a here-document's operator and delimiter word (``<<EOF``, ``<<-'EOF'``, ``<< "END"``), not a here-string
_HEREDOC = re.compile(r"(?<!<)<<(-?)[ \t]*(['\"]?)\\?([A-Za-z_][A-Za-z0-9_.-]*)\2")


def _without_heredocs(script: str) -> str:
    """The script without the bodies of its here-documents (their lines are data, not commands)."""
    lines = script.split("\n")
    out: list[str] = []
    ending: list[tuple[str, bool]] = []  # delimiters still open on the lines that follow
    for line in lines:
        if ending:
            word, tabs = ending[0]
            if (line.lstrip("\t") if tabs else line) == word:
                ending.pop(0)
            continue
        out.append(line)
        for match in _HEREDOC.finditer(line):
            ending.append((match.group(3), match.group(1) == "-"))
    return "\n".join(out)


@lru_cache(maxsize=512)  # a pure function of the text; the replicas of a job mostly share their scripts
def statements(script: str) -> tuple[tuple[tuple[str, ...], str | None], ...]:
    """The script's simple commands, each with the operator that ends it (None at the end);
    redirections and their targets are left out, and so are here-documents' bodies. Empty when
    the script cannot be split (an unclosed quote)."""
    if "<<" in script:
        script = _without_heredocs(script)
    try:
        lexer = shlex.shlex(_masked(script.replace("\\\n", " ")), posix=True, punctuation_chars=";&|()<>\n")
        lexer.whitespace = " \t\r"
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError:
        return ()
    found: list[tuple[tuple[str, ...], str | None]] = []
    words: list[str] = []
    skip = False
    for token in tokens:
        if token in _REDIRECTS:
            if words and words[-1].isdigit():  # `2>&1`: the 2 is the redirection's descriptor
                words.pop()
            skip = True
            continue
        if token in _OPERATORS or set(token) <= set(";&|()<>\n"):
            if words:
                found.append((tuple(words), token))
            words = []
            skip = False
            continue
        if skip:
            skip = False
            continue
        words.append(token)
    if words:
        found.append((tuple(words), None))
    return tuple(found)
