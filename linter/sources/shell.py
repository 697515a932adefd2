"""Shell scripts: a tolerant reader for the ``az aks`` commands in them, with exact positions.

The reader is a small lexer with the shell's quoting rules (``shlex`` gives no positions and
knows neither ``$(...)`` nor heredocs). It reads the whole text once and records every token's
1-based line, column and end itself:

* words with single and double quotes, ``$'...'``, backslash escapes; ``$(...)``, ``$((...))``,
  ``${...}`` and backticks are kept inside their word (nested quotes included) and make its
  value UNKNOWN (``${NAME}``, ``${NAME:-x}``, ``${NAME-x}``, ``${NAME:+x}`` are expanded; a
  variable the script never sets takes the default of ``${NAME:-x}`` and ``${NAME-x}``, the value
  the script is written to run with, unless a ``source``/``.`` before it may have set it; an empty
  default, ``${NAME:-}``, is the ``set -u`` guard of a value given from outside: UNKNOWN);
* operators ``&&``, ``||``, ``;``, ``;;``, ``|``, ``|&``, ``&``, ``(``, ``)`` and newlines split
  commands; redirections and their targets are set aside; heredoc bodies are skipped;
* ``#`` at the start of a word starts a comment (recorded, for suppressions).

Tolerance for scripts pasted from documentation, beyond what a shell accepts:

* a line continuation may have blanks or a ``# comment`` after its backslash;
* blank and comment lines after a continuation are skipped when the next line starts with ``-``
  or is indented at least as deep as the continued line (``az ... \\`` / ``# the GPU size`` /
  ``--node-vm-size ...``); otherwise the command ends there, as in the shell;
* a leading ``$ `` prompt is dropped, and so is a ``> `` continuation prompt inside a prompted
  command; Markdown fence lines (```` ``` ````) are ignored;
* ``<placeholder>`` words (``--resource-group <resource-group>``) are words, not redirections.

Variables: assignments (``NAME=v``, ``export``/``readonly``/``local``/``declare``/``typeset``)
are applied in file order, as a straight-line reading of the script: a value set inside an
``if`` branch or a loop body counts from there on. ``for`` and ``read`` variables, values built
from command substitution, and variables the script never sets are UNKNOWN (but for the
``${NAME:-default}`` form above). ``source`` is not followed: after it, every variable the script
has not set is UNKNOWN, defaults too. Unquoted expansions are split into fields as the shell does.

Errors: a quote, ``$(``, ``${`` or backtick left open to the end of the file, and a heredoc
without its terminator, each give one ParseIssue (SCH001) at the opening; the reader then
goes on from the next line, so the rest of the file is still read.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right

from msgspec import Struct, field

from mlops_lint.model.azcli import (
    UNKNOWN,
    AzCommand,
    AzFlag,
    Assignment,
    Command,
    FlagValue,
    ShellScript,
    Token,
    Unknown as _Unknown,
    Value,
    is_switch,
    takes_many,
)
from mlops_lint.model.bounds import MAX_VALUE_CHARS, ExpansionBudget
from mlops_lint.model.document import SHELL, Comment, Document, ParseIssue
from mlops_lint.model.position import Span
from mlops_lint.sources.comments import place_comments
from mlops_lint.sources.text import load_decoded

SHEBANG_SHELLS = frozenset({"sh", "bash", "dash"})
OPERATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "|", "&", "(", ")")
REDIRECTIONS = ("<<<", "<<-", "<<", "<>", "<&", "<", "&>>", "&>", ">>", ">&", ">|", ">")
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
                      "esac", "time", "function", "coproc"})
WRAPPERS = frozenset({"sudo", "command", "builtin", "exec", "nohup", "env", "nice", "time"})
DECLARATIONS = frozenset({"export", "readonly", "local", "declare", "typeset"})

# Each regular expression below reads one word (or one line's prompt), never a whole file.
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLACEHOLDER = re.compile(r"<[A-Za-z](?:[A-Za-z0-9_.:/@ -]*[A-Za-z0-9_])?>")
_IFS = re.compile(r"[ \t\n]+")
_NEGATIVE_NUMBER = re.compile(r"-\d")


def is_shell_shebang(first_line: str) -> bool:
    """True for ``#!/bin/sh``, ``#!/bin/bash``, ``#!/usr/bin/dash``, ``#!/usr/bin/env bash`` (``-S`` too)."""
    if not first_line.startswith("#!"):
        return False
    words = first_line[2:].split()
    if not words:
        return False
    program = os.path.basename(words[0])
    if program == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        program = os.path.basename(rest[0]) if rest else ""
    return program in SHEBANG_SHELLS


# ---------------------------------------------------------------------------------------------
# Lexer


_CLOSERS = {"single quote": "'", "$' quote": "'", "double quote": '"', "backtick": "`", "$(": ")",
            "$((": "))", "${": "}"}


class _Unclosed(Exception):
    def __init__(self, what: str, start: int, length: int):
        super().__init__(what)
        self.what, self.start, self.length = what, start, length


class _Item(Struct):
    kind: str  # "word" | "op" | "redir" | "nl"
    start: int
    end: int
    text: str


class _Lexer:
    def __init__(self, text: str):
        self.text = text
        self.n = len(text)
        starts = [0]
        at = text.find("\n")
        while at != -1:
            starts.append(at + 1)
            at = text.find("\n", at + 1)
        self.line_starts = starts
        self.comments: list[Comment] = []
        self.errors: list[ParseIssue] = []
        self._last_lines: tuple[dict[str, int], dict[str, int]] | None = None  # see _may_close
        self.pasted = False  # a ``$ `` prompt or a Markdown fence was read (see AzCommand.editable)

    # positions -------------------------------------------------------------------------------

    def where(self, offset: int) -> tuple[int, int]:
        index = bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def span(self, start: int, end: int) -> Span:
        """Span of ``text[start:end]``; a line break that a word ends with (after ``\\``) is left out."""
        last = end - 1
        while last > start and self.text[last] in "\r\n":
            last -= 1
        line, col = self.where(start)
        end_line, end_col = self.where(max(last, start))
        return Span(line, col, end_line, end_col + (1 if end > start else 0))

    def eol(self, offset: int) -> int:
        """Index of the newline ending the line of ``offset`` (or the end of the text)."""
        at = self.text.find("\n", offset)
        return self.n if at == -1 else at

    def next_line(self, offset: int) -> int:
        return min(self.eol(offset) + 1, self.n)

    def comment(self, start: int) -> int:
        end = self.eol(start)
        line, col = self.where(start)
        self.comments.append(Comment(line, col, self.text[start + 1:end].strip()))
        return end

    # words -----------------------------------------------------------------------------------

    def single(self, at: int) -> int:
        close = self.text.find("'", at + 1)
        if close == -1:
            raise _Unclosed("single quote", at, 1)
        return close + 1

    def ansi(self, at: int) -> int:
        """``$'...'`` starting at the ``$``."""
        return self._escaped_until(at, 2, "'", "$' quote")

    def double(self, at: int) -> int:
        text, k = self.text, at + 1
        while k < self.n:
            ch = text[k]
            if ch == "\\":
                k += 2
            elif ch == '"':
                return k + 1
            elif ch == "`":
                k = self.backtick(k)
            elif ch == "$" and text[k + 1:k + 2] in ("(", "{"):
                k = self.paren(k) if text[k + 1] == "(" else self.brace(k)
            else:
                k += 1
        raise _Unclosed("double quote", at, 1)

    def backtick(self, at: int) -> int:
        return self._escaped_until(at, 1, "`", "backtick")

    def _escaped_until(self, at: int, opener: int, terminator: str, label: str) -> int:
        """The end of a quote whose only escape is the backslash (``$'…'``, backticks)."""
        text, k = self.text, at + opener
        while k < self.n:
            if text[k] == "\\":
                k += 2
            elif text[k] == terminator:
                return k + 1
            else:
                k += 1
        raise _Unclosed(label, at, opener)

    def paren(self, at: int) -> int:
        """``$(...)`` or ``$((...))`` starting at the ``$``."""
        label = "$((" if self.text.startswith("$((", at) else "$("
        return self._group(at, "(", ")", label)

    def brace(self, at: int) -> int:
        """``${...}`` starting at the ``$``."""
        return self._group(at, "{", "}", "${")

    def _group(self, at: int, opening: str, closing: str, label: str) -> int:
        """The end of a ``$``-group whose opener follows ``at``: quotes, escapes, backticks and
        nested groups inside it are skipped whole, bare ``opening``/``closing`` are counted."""
        text, k, depth = self.text, at + 2, 1
        while k < self.n:
            ch = text[k]
            if ch == "\\":
                k += 2
            elif ch == "'":
                k = self.single(k)
            elif ch == '"':
                k = self.double(k)
            elif ch == "`":
                k = self.backtick(k)
            elif ch == "$" and text[k + 1:k + 2] == "{":
                k = self.brace(k)
            elif ch == "$" and text[k + 1:k + 2] == "(":
                k = self.paren(k)
            elif ch == opening:
                depth += 1
                k += 1
            elif ch == closing:
                depth -= 1
                k += 1
                if depth == 0:
                    return k
            else:
                k += 1
        raise _Unclosed(label, at, 2)

    def word(self, at: int) -> int:
        text, k = self.text, at
        while k < self.n:
            ch = text[k]
            if ch in " \t\n\r;&|()":
                break
            if ch in "<>":
                match = _PLACEHOLDER.match(text, k) if ch == "<" else None
                if match is None:
                    break
                k = match.end()
            elif ch == "\\":
                k += 3 if text.startswith("\r\n", k + 1) else 2
            elif ch == "'":
                k = self.single(k)
            elif ch == '"':
                k = self.double(k)
            elif ch == "`":
                k = self.backtick(k)
            elif ch == "$":
                nxt = text[k + 1:k + 2]
                if nxt == "'":
                    k = self.ansi(k)
                elif nxt == '"':
                    k = self.double(k + 1)
                elif nxt == "(":
                    k = self.paren(k)
                elif nxt == "{":
                    k = self.brace(k)
                else:
                    k += 1
            else:
                k += 1
        return min(k, self.n)

    # continuations and heredocs --------------------------------------------------------------

    def continuation(self, at: int) -> int | None:
        """After ``\\`` at ``at``: the index past the line end if it continues the line."""
        text, k = self.text, at + 1
        while k < self.n and text[k] in " \t":
            k += 1
        if k < self.n and text[k] == "#" and k > at + 1:
            k = self.comment(k)
        if k < self.n and text[k] == "\r":
            k += 1
        if k >= self.n:
            return self.n
        return k + 1 if text[k] == "\n" else None

    def after_continuation(self, k: int, prompted: bool) -> int | None:
        """Where the continued line resumes; None when the command ends at the line break."""
        text, j = self.text, k
        skipped: list[int] = []
        while j < self.n:
            end = self.eol(j)
            stripped = text[j:end].strip(" \t\r")
            if stripped and not stripped.startswith("#"):
                break
            if stripped:
                skipped.append(j + text[j:end].index("#"))
            j = end + 1
        if j > k:  # blank or comment lines came between: continue only into an option line or
            # a line indented at least as deep as the continued one (a wrapped list of values)
            if j >= self.n or not self._continues_into(k, j):
                return None
            for start in skipped:
                self.comment(start)
        if prompted:
            p = j
            while p < self.n and text[p] in " \t":
                p += 1
            if text.startswith(("> ", ">\t"), p):
                j = p + 2
        return j

    def _continues_into(self, k: int, j: int) -> bool:
        """Whether the line at ``j`` carries on the command whose ``\\`` ended the line before ``k``."""
        text = self.text
        line = text[j:self.eol(j)]
        body = line.lstrip(" \t")
        if body.startswith("-"):
            return True
        start = text.rfind("\n", 0, max(k - 1, 0)) + 1
        continued = text[start:k]
        depth = len(continued) - len(continued.lstrip(" \t"))
        return depth > 0 and len(line) - len(body) >= depth

    def heredoc_bodies(self, at: int, pending: list[tuple[str, bool, int, int]]) -> int:
        """Skip the bodies of the heredocs opened on the line just ended; returns where code resumes.

        A body that no delimiter line closes is reported, and its lines are read as code.
        """
        text, k = self.text, at
        for delimiter, strip_tabs, start, end in pending:
            body_start = k
            closed = False
            while k < self.n and self._may_close(delimiter, strip_tabs, k):
                line_end = self.eol(k)
                line = text[k:line_end].rstrip("\r")
                k = min(line_end + 1, self.n)
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    closed = True
                    break
            if not closed:
                self.errors.append(ParseIssue(
                    self.span(start, end),
                    f"unterminated here-document: no line `{delimiter}` closes `{text[start:end]}`"))
                return body_start
        return k

    def _may_close(self, delimiter: str, strip_tabs: bool, k: int) -> bool:
        """Whether a line at or after ``k`` may close a body: the last line of each text is known
        (one pass over the lines, the first time a heredoc is read), so a body that nothing
        closes is not read to the end of the file once per heredoc (5k unterminated heredocs
        took seconds, quadratically)."""
        if self._last_lines is None:
            plain: dict[str, int] = {}
            tabs: dict[str, int] = {}
            for number, start in enumerate(self.line_starts):
                end = self.line_starts[number + 1] - 1 if number + 1 < len(self.line_starts) else self.n
                line = self.text[start:end].rstrip("\r")
                plain[line] = start
                tabs[line.lstrip("\t")] = start
            self._last_lines = (plain, tabs)
        last = self._last_lines[1 if strip_tabs else 0].get(delimiter, -1)
        # the line ``k`` is on may start before ``k`` (a body after a continuation): read it
        return last >= k or self.line_starts[bisect_right(self.line_starts, k) - 1] != k

    # the token stream ------------------------------------------------------------------------

    def run(self) -> list[_Item]:
        text = self.text
        items: list[_Item] = []
        line_first = 0  # index in items where the current logical line starts
        pending: list[tuple[str, bool, int, int]] = []
        at_line_start, prompted = True, False
        i = 0
        while i < self.n:
            if at_line_start:
                at_line_start = False
                j = i
                while j < self.n and text[j] in " \t":
                    j += 1
                if text.startswith(("```", "~~~"), j):
                    i = self.eol(j)
                    self.pasted = True
                    continue
                if text.startswith(("$ ", "$\t"), j):
                    j += 2
                    prompted = self.pasted = True
                i = j
                continue
            ch = text[i]
            if ch in " \t\r":
                i += 1
                continue
            if ch == "\n":
                items.append(_Item("nl", i, i + 1, "\n"))
                line_first = len(items)
                i += 1
                at_line_start, prompted = True, False
                if pending:
                    i = self.heredoc_bodies(i, pending)
                    pending = []
                continue
            if ch == "\\":
                resume = self.continuation(i)
                if resume is not None:
                    after = self.after_continuation(resume, prompted)
                    if after is None:
                        items.append(_Item("nl", i, i + 1, "\n"))
                        line_first = len(items)
                        at_line_start, prompted = True, False
                        i = resume
                        if pending:
                            i = self.heredoc_bodies(i, pending)
                            pending = []
                    else:
                        i = after
                    continue
            if ch == "#":
                i = self.comment(i)
                continue
            redirection = None
            if ch in "<>" or text.startswith("&>", i):
                if not (ch == "<" and _PLACEHOLDER.match(text, i)):
                    redirection = next(r for r in REDIRECTIONS if text.startswith(r, i))
            if redirection is not None:
                start = i
                last = items[-1] if len(items) > line_first else None
                if last is not None and last.kind == "word" and last.end == i and last.text.isdigit():
                    items.pop()
                    start = last.start
                items.append(_Item("redir", start, i + len(redirection), redirection))
                i += len(redirection)
                if redirection in ("<<", "<<-"):
                    while i < self.n and text[i] in " \t":
                        i += 1
                    try:
                        end = self.word(i)
                    except _Unclosed as exc:
                        i, pending, at_line_start, prompted = self.recover(exc, items, line_first)
                        line_first = len(items)
                        continue
                    if end > i:
                        raw = text[i:end]
                        items.append(_Item("word", i, end, raw))
                        delimiter = raw.replace("'", "").replace('"', "").replace("\\", "")
                        pending.append((delimiter, redirection == "<<-", start, end))
                    i = end
                continue
            operator = next((o for o in OPERATORS if text.startswith(o, i)), None)
            if operator is not None:
                items.append(_Item("op", i, i + len(operator), operator))
                i += len(operator)
                continue
            try:
                end = self.word(i)
            except _Unclosed as exc:
                i, pending, at_line_start, prompted = self.recover(exc, items, line_first)
                line_first = len(items)
                continue
            if end == i:  # not reachable by the rules above; never loop forever on a surprise
                end = i + 1
            items.append(_Item("word", i, end, text[i:end]))
            i = end
        return items

    def recover(self, exc: _Unclosed, items: list[_Item],
                line_first: int) -> tuple[int, list[tuple[str, bool, int, int]], bool, bool]:
        """An opening never closed: report it, drop the logical line, resume on the next line."""
        closer = _CLOSERS[exc.what]
        self.errors.append(ParseIssue(
            self.span(exc.start, exc.start + exc.length),
            f"unterminated {exc.what}: no closing {closer} before the end of the file; "
            "this command was skipped and reading resumed on the next line"))
        del items[line_first:]
        items.append(_Item("nl", exc.start, exc.start, "\n"))
        return self.next_line(exc.start), [], True, False


# ---------------------------------------------------------------------------------------------
# Expansion


_QUOTED, _LITERAL, _SPLIT = 0, 1, 2
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
         "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v", "?": "?"}


class _Unset:
    """A variable the script ``unset``: known to be empty."""


_UNSET = _Unset()
Env = dict[str, "str | _Unknown | _Unset"]
# The key an Env holds once a ``source``/``.`` has run: variables the script never set may be set.
_SOURCED = "\0sourced"



class _Expander:
    """Expands one word's raw text with the variables known at that point of the script."""

    def __init__(self, raw: str, env: Env):
        self.raw, self.env, self.pos = raw, env, 0
        self.chunks: list[tuple[str, int]] = []
        self.unknown = False
        self.unquoted_unknown = False

    def run(self) -> _Expander:
        raw = self.raw
        if raw.startswith("~") and (len(raw) == 1 or raw[1] == "/"):
            self.unknown = self.unquoted_unknown = True  # a home directory
            return self
        while self.pos < len(raw):
            ch = raw[self.pos]
            if ch == "\\":
                nxt = raw[self.pos + 1:self.pos + 2]
                if nxt == "\r" and raw.startswith("\r\n", self.pos + 1):
                    self.pos += 3
                elif nxt == "\n":
                    self.pos += 2
                else:
                    self.chunks.append((nxt, _QUOTED))
                    self.pos += 2
            elif ch == "'":
                close = raw.find("'", self.pos + 1)
                close = len(raw) if close == -1 else close
                self.chunks.append((raw[self.pos + 1:close], _QUOTED))
                self.pos = close + 1
            elif ch == '"':
                self.pos += 1
                self.double()
            elif ch == "`":
                self.skip_backtick()
                self.mark_unknown(quoted=False)
            elif ch == "$":
                self.dollar(quoted=False)
            else:
                start = self.pos
                while self.pos < len(raw) and raw[self.pos] not in "\\'\"`$":
                    self.pos += 1
                self.chunks.append((raw[start:self.pos], _LITERAL))
        if sum(len(text) for text, _ in self.chunks) > MAX_VALUE_CHARS:
            # an expansion bomb (A1="${A0}${A0}" forty times): past the bound the value is unknown
            self.chunks.clear()
            self.mark_unknown(quoted=False)
        return self

    def mark_unknown(self, quoted: bool) -> None:
        self.unknown = True
        if not quoted:
            self.unquoted_unknown = True

    def skip_backtick(self) -> None:
        raw, k = self.raw, self.pos + 1
        while k < len(raw) and raw[k] != "`":
            k += 2 if raw[k] == "\\" else 1
        self.pos = k + 1

    def double(self) -> None:
        raw = self.raw
        start = len(self.chunks)
        while self.pos < len(raw) and raw[self.pos] != '"':
            ch = raw[self.pos]
            if ch == "\\" and raw[self.pos + 1:self.pos + 2] in ('"', "\\", "$", "`", "\n"):
                if raw[self.pos + 1] != "\n":
                    self.chunks.append((raw[self.pos + 1], _QUOTED))
                self.pos += 2
            elif ch == "`":
                self.skip_backtick()
                self.mark_unknown(quoted=True)
            elif ch == "$":
                self.dollar(quoted=True)
            else:
                self.chunks.append((ch, _QUOTED))
                self.pos += 1
        self.pos += 1
        if len(self.chunks) == start:
            self.chunks.append(("", _QUOTED))  # "" is an (empty) word of its own

    def skip_balanced(self, open_: str, close: str) -> None:
        raw, depth, k = self.raw, 0, self.pos
        while k < len(raw):
            ch = raw[k]
            if ch == "\\":
                k += 2
                continue
            if ch == "'" and open_ == "(":
                end = raw.find("'", k + 1)
                k = len(raw) if end == -1 else end + 1
                continue
            if ch == open_:
                depth += 1
            elif ch == close:
                depth -= 1
                if depth == 0:
                    k += 1
                    break
            k += 1
        self.pos = k

    def value_of(self, name: str) -> str | _Unknown | _Unset | None:
        return self.env.get(name)

    def dollar(self, quoted: bool) -> None:
        raw = self.raw
        nxt = raw[self.pos + 1:self.pos + 2]
        kind = _QUOTED if quoted else _SPLIT
        if nxt == "(":
            self.pos += 1
            self.skip_balanced("(", ")")
            self.mark_unknown(quoted)
            return
        if nxt == "'" and not quoted:
            self.ansi()
            return
        if nxt == '"' and not quoted:  # $"..." (a translatable string) reads as "..."
            self.pos += 1
            return
        if nxt == "{":
            self.pos += 1
            start = self.pos
            self.skip_balanced("{", "}")
            value = self.parameter(raw[start + 1:self.pos - 1])
            if isinstance(value, _Unknown):
                self.mark_unknown(quoted)
            else:
                self.chunks.append((value, kind))
            return
        match = _NAME.match(raw, self.pos + 1)
        if match is not None:
            self.pos = match.end()
            found = self.value_of(match.group())
            if found is None or isinstance(found, _Unknown):
                self.mark_unknown(quoted)
            else:
                self.chunks.append(("" if isinstance(found, _Unset) else found, kind))
            return
        if nxt and (nxt.isdigit() or nxt in "@*#?$!-"):
            self.pos += 2
            self.mark_unknown(quoted)
            return
        self.chunks.append(("$", _QUOTED))
        self.pos += 1

    def ansi(self) -> None:
        raw, k = self.raw, self.pos + 2
        out = []
        while k < len(raw) and raw[k] != "'":
            if raw[k] == "\\" and k + 1 < len(raw):
                out.append(_ANSI.get(raw[k + 1], "\\" + raw[k + 1]))
                k += 2
            else:
                out.append(raw[k])
                k += 1
        self.chunks.append(("".join(out), _QUOTED))
        self.pos = k + 1

    def parameter(self, body: str) -> str | _Unknown:
        """``${body}``: NAME, NAME:-word, NAME-word, NAME:+word, NAME+word; anything else is unknown."""
        match = _NAME.match(body)
        if match is None:
            return UNKNOWN
        name, rest = match.group(), body[match.end():]
        value = self.value_of(name)
        if not rest:
            if value is None or isinstance(value, _Unknown):
                return UNKNOWN
            return "" if isinstance(value, _Unset) else value
        operator = next((op for op in (":-", ":+", "-", "+") if rest.startswith(op)), None)
        if value is None and operator in (":-", "-") and len(rest) > len(operator) and _SOURCED not in self.env:
            # never set by the script (nor by a file it sources): the default it runs with; an empty
            # default (`${EXTRA_ARGS:-}`) is the `set -u` guard of a value given from outside
            value = _UNSET
        if operator is None or value is None or isinstance(value, _Unknown):
            return UNKNOWN
        inner = _Expander(rest[len(operator):], self.env).run()
        word: str | _Unknown = UNKNOWN if inner.unknown else "".join(text for text, _ in inner.chunks)
        is_set = not isinstance(value, _Unset)
        is_empty = not is_set or value == ""
        if operator == ":-":
            return word if is_empty else value  # type: ignore[return-value]
        if operator == "-":
            return word if not is_set else value  # type: ignore[return-value]
        if operator == ":+":
            return "" if is_empty else word
        return word if is_set else ""

    def joined(self) -> Value:
        return UNKNOWN if self.unknown else "".join(text for text, _ in self.chunks)

    def fields(self) -> list[str] | None:
        """The words after field splitting (None when the value is unknown)."""
        if self.unknown:
            return None
        fields: list[str] = []
        current: list[str] = []
        have = False
        for text, kind in self.chunks:
            if kind != _SPLIT:
                current.append(text)
                have = True
                continue
            for index, part in enumerate(_IFS.split(text)):
                if index and have:
                    fields.append("".join(current))
                    current, have = [], False
                if part:
                    current.append(part)
                    have = True
        if have:
            fields.append("".join(current))
        return fields


def expand_assignment(raw: str, env: Env) -> Value:
    """The value an assignment gives (no field splitting, as in the shell)."""
    return _Expander(raw, env).run().joined()


# ---------------------------------------------------------------------------------------------
# Commands


class _Block(Struct):
    """An ``if``/``case`` (branches), a loop or a ``{ }`` body (function bodies included), with the
    variables as they were before it. After the block a variable keeps a value only if every way
    through the block leaves it the same; otherwise it is UNKNOWN."""

    kind: str  # "if" | "case" | "loop" | "group"
    before: Env
    branches: list[Env] = field(default_factory=list)
    exhaustive: bool = False  # an ``else`` was seen: some branch always runs

    def branch(self, env: Env, final: bool = False) -> None:
        self.branches.append(dict(env))
        self.exhaustive = self.exhaustive or final

    def close(self, env: Env) -> Env:
        ways = [*self.branches, env]
        if not self.exhaustive:
            ways.append(self.before)  # no branch taken, the loop not entered, the function not called
        names = {name for way in ways for name in way}
        merged: Env = {}
        for name in names:
            values = [way.get(name) for way in ways]
            first = values[0]
            if all(v == first and type(v) is type(first) for v in values):
                if first is not None:
                    merged[name] = first
            else:
                merged[name] = UNKNOWN
        return merged


class _Word(Struct):
    start: int
    end: int
    raw: str


class _Reader:
    """Turns the token stream into commands, assignments and ``az`` commands, in file order."""

    def __init__(self, lexer: _Lexer):
        self.lexer = lexer
        self.env: Env = {}
        self.script = ShellScript()
        self.blocks: list[_Block] = []
        self.conditional = False  # the current command runs only after && or ||
        # every value and word kept is bounded, and so is what expansions add to them all
        self.budget = ExpansionBudget()

    def simple_commands(self, items: list[_Item]) -> list[tuple[list[_Word], str | None]]:
        """The simple commands in order, each with the operator that came before it (``&&``,
        ``||``, ``;;`` …; None after a line break)."""
        commands: list[tuple[list[_Word], str | None]] = []
        current: list[_Word] = []
        before: str | None = None
        skip_target = False
        index = 0
        while index < len(items):
            item = items[index]
            index += 1
            if item.kind == "word":
                if skip_target:
                    skip_target = False
                    continue
                current.append(_Word(item.start, item.end, item.text))
                continue
            if item.kind == "redir":
                skip_target = True
                continue
            if item.kind == "op" and item.text == "(" and current and current[-1].raw.endswith("=") \
                    and current[-1].end == item.start and _ASSIGNMENT.fullmatch(current[-1].raw):
                depth = 1  # NAME=( array ): an unknown value
                while index < len(items) and depth:
                    depth += {"(": 1, ")": -1}.get(items[index].text, 0) if items[index].kind == "op" else 0
                    index += 1
                current[-1] = _Word(current[-1].start, current[-1].end, current[-1].raw + "$(array)")
                continue
            skip_target = False
            if current:
                commands.append((current, before))
            elif item.kind == "op" and item.text in (";;", ";&", ";;&"):
                commands.append(([], item.text))  # the end of a case branch, even an empty one
            current = []
            before = item.text if item.kind == "op" else None
        if current:
            commands.append((current, before))
        return commands

    def token(self, word: _Word) -> list[Token]:
        span = self.lexer.span(word.start, word.end)
        expander = _Expander(word.raw, self.env).run()
        fields = expander.fields()
        if fields is None or not self.budget.allows(len(word.raw), sum(map(len, fields))):
            return [Token(word.raw, UNKNOWN, span)]
        return [Token(word.raw, value, span) for value in fields]

    def assign(self, word: _Word, keyword: str | None, scope: str = "shell") -> None:
        match = _ASSIGNMENT.match(word.raw)
        if match is None:
            return
        name, append = match.group(1), bool(match.group(2))
        raw_value = word.raw[match.end():]
        value = expand_assignment(raw_value, self.env)
        if append:
            old = self.env.get(name)
            value = old + value if isinstance(old, str) and isinstance(value, str) \
                and len(old) + len(value) <= MAX_VALUE_CHARS else UNKNOWN
        if isinstance(value, str) and not self.budget.allows(len(raw_value), len(value)):
            value = UNKNOWN
        span = self.lexer.span(word.start, word.end)
        self.script.assignments.append(Assignment(name, raw_value, value, span, keyword, scope))
        if scope == "shell":
            self.set(name, value)

    def set(self, name: str, value: "str | _Unknown | _Unset") -> None:
        """Give ``name`` a value from here on; after ``&&``/``||`` it may or may not have it."""
        if self.conditional and self.env.get(name) != value:
            value = UNKNOWN
        self.env[name] = value

    def set_unknown(self, word: _Word, keyword: str) -> None:
        if _NAME.fullmatch(word.raw):
            self.set(word.raw, UNKNOWN)
            self.script.assignments.append(
                Assignment(word.raw, "", UNKNOWN, self.lexer.span(word.start, word.end), keyword))

    def run(self, items: list[_Item]) -> ShellScript:
        for words, before in self.simple_commands(items):
            top = self.blocks[-1] if self.blocks else None
            if top is not None and top.kind == "case":
                if before in (";;", ";&", ";;&"):
                    top.branch(self.env)
                    self.env = dict(top.before)
                elif before is None and len(words) == 1 and words[0].raw == "*":
                    top.exhaustive = True  # the default pattern: some branch always runs
            self.conditional = before in ("&&", "||")
            if words:
                self.command(words)
        while self.blocks:  # blocks left open (a truncated file): their assignments are uncertain
            self.env = self.blocks.pop().close(self.env)
        return self.script

    # blocks: values assigned in a branch, a loop or a function body may or may not hold after it

    def open_block(self, kind: str) -> None:
        self.blocks.append(_Block(kind, dict(self.env)))

    def close_block(self, kinds: tuple[str, ...]) -> None:
        for depth in range(len(self.blocks) - 1, -1, -1):
            if self.blocks[depth].kind in kinds:
                while len(self.blocks) > depth:
                    self.env = self.blocks.pop().close(self.env)
                return

    def reserved(self, word: str) -> None:
        top = self.blocks[-1] if self.blocks else None
        if word == "if":
            self.open_block("if")
        elif word in ("elif", "else") and top is not None and top.kind == "if":
            top.branch(self.env, final=word == "else")
            self.env = dict(top.before)
        elif word == "fi":
            self.close_block(("if",))
        elif word in ("while", "until"):
            self.open_block("loop")
        elif word == "done":
            self.close_block(("loop",))
        elif word == "{":
            self.open_block("group")
        elif word == "}":
            self.close_block(("group",))
        elif word == "esac":
            self.close_block(("case",))

    def command(self, words: list[_Word]) -> None:
        k = 0
        prefixes: list[_Word] = []
        while k < len(words):
            raw = words[k].raw
            if raw in ("for", "select"):
                self.open_block("loop")
                if k + 1 < len(words):
                    self.set_unknown(words[k + 1], "for")
                return
            if raw == "case":
                self.open_block("case")
                return
            if raw == "function":
                if any(w.raw == "{" for w in words[k + 1:]):
                    self.open_block("group")
                return
            if raw in RESERVED:
                self.reserved(raw)
                k += 1
                continue
            if raw in WRAPPERS:
                k += 1
                while k < len(words) and words[k].raw.startswith("-"):
                    option = words[k].raw
                    k += 2 if option in ("-u", "-g", "-n", "-C", "-h", "-p") and raw in ("sudo", "nice", "env") else 1
                continue
            if _ASSIGNMENT.match(raw):
                prefixes.append(words[k])
                k += 1
                continue
            break
        rest = words[k:]
        if not rest:
            for word in prefixes:
                self.assign(word, None)
            return
        for word in prefixes:
            self.assign(word, None, scope="command")
        head = rest[0].raw
        if head in DECLARATIONS:
            options = "".join(w.raw[1:] for w in rest[1:] if w.raw.startswith("-"))
            for word in rest[1:]:
                declared = None if word.raw.startswith("-") else _ASSIGNMENT.match(word.raw)
                if declared is None:
                    continue
                if set(options) & set("aAinf"):  # arrays, integers, name references: not plain text
                    self.set_unknown(_Word(word.start, word.end, declared.group(1)), head)
                else:
                    self.assign(word, head)
        elif head in ("source", "."):
            self.set(_SOURCED, UNKNOWN)  # the file may set any variable
        elif head == "unset":
            for word in rest[1:]:
                if _NAME.fullmatch(word.raw):
                    self.set(word.raw, _UNSET)
        elif head in ("read", "mapfile", "readarray", "getopts"):
            skip = False
            for word in rest[1:]:
                if skip:
                    skip = False
                elif word.raw.startswith("-"):
                    skip = word.raw in ("-p", "-d", "-n", "-N", "-t", "-u", "-a", "-C", "-c", "-O", "-s")
                else:
                    self.set_unknown(word, "read")
        tokens = [token for word in rest for token in self.token(word)]
        if not tokens:
            return
        span = Span(tokens[0].span.line, tokens[0].span.col, tokens[-1].span.end_line, tokens[-1].span.end_col)
        command = Command(tuple(tokens), span)
        self.script.commands.append(command)
        az = _az_command(command)
        if az is not None:
            self.script.az_commands.append(az)


def _is_option(value: Value) -> bool:
    return isinstance(value, str) and len(value) > 1 and value.startswith("-") and not _NEGATIVE_NUMBER.match(value)


def _az_command(command: Command) -> AzCommand | None:
    """An ``az aks [nodepool] VERB ...`` command read into options, values and positionals."""
    words = command.words
    if len(words) < 3 or not isinstance(words[0].value, str) or os.path.basename(words[0].value) != "az":
        return None
    if words[1].value != "aks":
        return None
    group, verb_at = ("aks nodepool", 3) if words[2].value == "nodepool" else ("aks", 2)
    if len(words) <= verb_at:
        return None
    verb = words[verb_at].value
    if not isinstance(verb, str) or verb.startswith("-"):
        return None
    rest = words[verb_at + 1:]
    options: list[AzFlag] = []
    flags: dict[str, list[FlagValue]] = {}
    positional: list[Token] = []
    unknown = False
    index = 0
    while index < len(rest):
        token = rest[index]
        index += 1
        value = token.value
        if not _is_option(value):
            positional.append(token)
            unknown = unknown or value is UNKNOWN
            continue
        assert isinstance(value, str)
        name, eq, attached = value.partition("=") if value.startswith("--") else (value, "", "")
        values: list[FlagValue] = []
        name_span = token.span
        if eq:
            cut = token.raw.find("=")
            if token.raw.startswith(name + "=") and token.span.line == token.span.end_line:
                name_span = Span(token.span.line, token.span.col, token.span.line, token.span.col + len(name))
                value_span = Span(token.span.line, token.span.col + cut + 1, token.span.end_line, token.span.end_col)
                raw_value = token.raw[cut + 1:]
            else:
                value_span, raw_value = token.span, token.raw
            values.append(FlagValue(raw_value, attached, value_span))
        elif is_switch(name):
            nxt = rest[index] if index < len(rest) else None
            if nxt is not None and isinstance(nxt.value, str) and nxt.value.lower() in ("true", "false"):
                values.append(FlagValue(nxt.raw, nxt.value, nxt.span))
                index += 1
        else:
            while index < len(rest) and not _is_option(rest[index].value):
                nxt = rest[index]
                values.append(FlagValue(nxt.raw, nxt.value, nxt.span))
                index += 1
                if not takes_many(name):
                    break
        options.append(AzFlag(name, name_span, tuple(values)))
        flags.setdefault(name, []).extend(values)
    last = words[-1].span
    span = Span(words[0].span.line, words[0].span.col, last.end_line, last.end_col)
    return AzCommand(group, verb, span, command, tuple(options), flags, tuple(positional), unknown)


# ---------------------------------------------------------------------------------------------
# Entry points


def load_text(text: str, path: str) -> Document:
    """Read a shell script into a :class:`Document` (never raises for bad input)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lexer = _Lexer(text)
    try:
        items = lexer.run()
        script = _Reader(lexer).run(items)
    except RecursionError:  # the lexer recurses once per nested $( ), ${ } or quote
        line = next((i + 1 for i, text_line in enumerate(text.split("\n")) if text_line.count("$(") + text_line.count("${") > 100), 1)
        return Document(path=path, kind=SHELL, errors=[ParseIssue(
            Span(line, 1, line, 2),
            "command substitutions, parameter expansions or quotes nest too deeply to be read; the script was not linted",
        )])
    script.path = path
    if lexer.pasted or lexer.errors:
        for az in script.az_commands:
            az.editable = False
    lines = text.split("\n")
    comments = sorted(lexer.comments, key=lambda c: (c.line, c.col))
    return Document(
        path=path,
        kind=SHELL,
        shell=script,
        comments=place_comments(comments, lines),
        errors=sorted(lexer.errors, key=lambda issue: (issue.span.line, issue.span.col)),
    )


def load(data: bytes, path: str) -> Document:
    return load_decoded(data, path, SHELL, load_text)
