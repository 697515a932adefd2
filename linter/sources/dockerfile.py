"""Dockerfiles: an exact tokenizer that mirrors BuildKit's parser and keeps line *and column*.

Why not a library. Two PyPI parsers were measured on realistic files (ARG before FROM,
``FROM ${BASE}:${CUDA}``, heredocs, ``# escape=```, comments and blank lines inside
continuations, CRLF, ONBUILD):

* ``dockerfile-parse`` 2.0.1 gives 0-based start/end lines but no columns; it knows no heredocs
  (body lines come back as instructions ``SET``, ``PIP``, ``EOF``), ends a continuation at a
  blank line (the next line becomes an instruction ``&&``), drops an instruction whose
  continuation reaches EOF, and reports no errors at all (escape directive, comments inside
  continuations, CRLF and ARG substitution in ``parent_images`` it gets right).
* ``dockerfile`` 3.4.0 wraps BuildKit v0.12.5's Go parser: lines, heredocs, escape and
  continuations are right, but it gives no columns (``original`` is the joined line), stops at the
  first error with a message and no line, accepts unknown instructions and files without FROM
  (those are checked later, by ``docker build``'s dispatcher), and is a compiled Go extension.

Re-measured on the realistic ML Dockerfiles of ``fixtures/sources/dockerfile/ml`` plus three more
fixtures (14 files: ``Dockerfile-mpi``, ``Dockerfile.roce``, ``train.Dockerfile``, ``Containerfile``;
ARG before FROM, ``FROM ${BASE_IMAGE}``, heredocs, ``--platform``, tabs, comments inside
continuations), with BuildKit's parser as the reference for structure: ``dockerfile-parse`` got
the instructions and their lines right in 11 of 14 files (wrong in all three with a heredoc or a
blank line inside a continuation) and 16 of 18 FROM references (``${CUDA:-12.1}`` became
``12.4:-12.1}``, an ARG without a default silently became ``/trainer:latest``); this module agrees
with BuildKit on all 14 files and resolves all 18 (the unresolvable one as unknown), with columns.

Neither library gives columns, and findings must point at the image in FROM or at a flag, so this
module re-implements the parts of BuildKit's ``frontend/dockerfile/parser`` that decide structure
(``parser.go``, ``split_command.go``, ``line_parsers.go``, ``directives.go``), keeping a position
for every character of every joined instruction. Tests compare it with the ``dockerfile``
package where that is installed.

What BuildKit does, and so this module:

* Parser directives (``syntax``, ``escape``, ``check``) are ``#`` lines before anything else; the
  first other line (a blank line included) ends them. ``escape`` may be ``\\`` or a backtick.
* A line ends in a continuation when the escape character is its last non-blank character and
  is not itself escaped. Inside a continuation, comment lines and blank lines are skipped (blank
  ones draw a deprecation warning, not an error); a continuation that reaches EOF simply ends the
  instruction, which may then have no arguments.
* Keywords are case-insensitive; only ``#`` at the start of a line (after white space) starts a
  comment. Heredocs (``<<EOF``, ``<<-EOF``, ``<<"EOF"``, ``3<<EOF``, several on one line) are
  read for RUN, COPY and ADD (and their ONBUILD forms) in shell form, bodies in order; an
  unterminated one takes the rest of the file as its body.
* The simple commands of RUN, CMD and ENTRYPOINT (and of RUN heredocs that a shell runs) are
  split out with their words' positions (``Instruction.commands``): a POSIX ``sh`` subset that
  knows quotes, escapes, ``&&``/``||``/``;``/``|``, redirections, comments and nested heredocs,
  and expands nothing. Rules find ``pip install`` there without reading text.
* Builder flags are the leading ``--name`` and ``--name=value`` words (``--`` ends them):
  ``RUN --network none x`` has a flag ``network`` without a value, as BuildKit reads it.
* The exec form is a JSON array of strings; anything else that is not valid JSON is the shell
  form; a valid array holding a non-string is an error. Text after the closing bracket makes it
  the shell form, as current BuildKit decodes with ``json.Unmarshal`` (v0.12 and older read the
  first JSON value and ignored the rest).

Errors (ParseIssue → SCH001) are what makes ``docker build`` fail before running anything: the
parser's own (duplicate or invalid directive, unterminated heredoc, non-string JSON array, ENV and
LABEL syntax, a file with no instructions) and those of BuildKit's instruction dispatcher
(unknown instruction, FROM with other than one or three arguments, invalid stage name, an
instruction before the first FROM other than ARG, no FROM at all, missing arguments, ONBUILD
chaining, HEALTHCHECK and SHELL forms). BuildKit stops at the first; this module reports each one
and goes on reading. Not reported: unknown builder flags (each frontend version adds some, and
``# syntax=`` picks the version) and, when ``# syntax=`` names a frontend other than
``docker/dockerfile``, unknown instructions (that frontend defines its own).
"""

from __future__ import annotations

from bisect import bisect_right
import json
import re

from msgspec import Struct

from mlops_lint.model.docker import (
    AUTOMATIC_PLATFORM_ARGS,
    KNOWN_INSTRUCTIONS,
    ArgDef,
    Directive,
    Dockerfile,
    Flag,
    Heredoc,
    Instruction,
    ShellCommand,
    ShellWord,
    Stage,
    Word,
    stage_reference,
)
from mlops_lint.model.bounds import MAX_VALUE_CHARS, ExpansionBudget
from mlops_lint.model.document import DOCKERFILE, Comment, Document, ParseIssue
from mlops_lint.model.placeholder import is_placeholder
from mlops_lint.model.position import FILE_START, Span
from mlops_lint.sources.comments import place_comments
from mlops_lint.sources.text import load_decoded
from mlops_lint.suggest import close_matches

VALID_DIRECTIVES = frozenset({"syntax", "escape", "check"})
HEREDOC_INSTRUCTIONS = frozenset({"RUN", "COPY", "ADD"})
STANDARD_FRONTENDS = ("docker/dockerfile", "docker.io/docker/dockerfile", "docker/dockerfile-upstream",
                      "docker.io/docker/dockerfile-upstream")

# Regular expressions here parse the body of one line or one word, never a whole file.
_DIRECTIVE = re.compile(r"^([a-zA-Z][a-zA-Z0-9]*)[ \t\n\f\r]*=[ \t\n\f\r]*(.+?)[ \t\n\f\r]*$", re.DOTALL)
_HEREDOC_WORD = re.compile(r"^(\d*)<<(-?)([^<]*)$", re.DOTALL)
_STAGE_NAME = re.compile(r"^[a-z][a-z0-9\-_.]*$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN_WHITESPACE = frozenset("\t\v\f\r ")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_REDIRECTION = re.compile(r"\d*(<<-|<<<|<<|>>|<&|>&|<>|>\||<|>)|&>>|&>")


# Go's unicode.IsSpace: ASCII white space, NEL, NBSP and the Unicode Z* spaces (Python's
# ``str.isspace`` also accepts U+001C..U+001F, which Go does not).
_GO_SPACES = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
              "\u2028\u2029\u202f\u205f\u3000")
_SPACE_SET = frozenset(_GO_SPACES)
_PLAIN_WORD = re.compile(f"[^{_GO_SPACES}]+")


def _is_space(ch: str) -> bool:
    return ch in _SPACE_SET


# ---------------------------------------------------------------------------------------------
# Joined instruction text with a position for every character


class _Joined:
    """The text of one logical instruction and where each of its pieces (physical lines) stands."""

    __slots__ = ("_parts", "_length", "_text", "_offsets", "_places")

    def __init__(self) -> None:
        # The pieces are joined once, when the text is first read: ``text += piece`` on an
        # attribute copies the whole text per piece, quadratic in a heredoc body of many lines.
        self._parts: list[str] = []
        self._length = 0
        self._text: str | None = ""
        self._offsets: list[int] = []
        self._places: list[tuple[int, int]] = []

    def add(self, line: int, col: int, piece: str) -> None:
        if piece:
            self._offsets.append(self._length)
            self._places.append((line, col))
            self._parts.append(piece)
            self._length += len(piece)
            self._text = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self._parts)
            self._parts = [self._text]
        return self._text

    def where(self, offset: int) -> tuple[int, int]:
        """(line, col) of the character at ``offset``."""
        index = bisect_right(self._offsets, offset) - 1
        line, col = self._places[index]
        return line, col + offset - self._offsets[index]

    def span(self, start: int, end: int) -> Span:
        """Span of ``text[start:end]`` (``end > start``)."""
        line, col = self.where(start)
        end_line, end_col = self.where(end - 1)
        return Span(line, col, end_line, end_col + 1)


class _Piece(Struct):
    """A word of the joined text: its text after quote handling and where it stands."""

    text: str
    start: int
    end: int


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``strings.TrimSpace`` on ``text[start:end]``, as indices."""
    while start < end and _is_space(text[start]):
        start += 1
    while end > start and _is_space(text[end - 1]):
        end -= 1
    return start, end


# ---------------------------------------------------------------------------------------------
# Lines, directives, continuations


def _continuation(line: str, escape: str) -> tuple[str, bool]:
    """BuildKit's ``trimContinuationCharacter``: ``([^e])e[ \\t]*$|^e[ \\t]*$`` replaced by ``$1``."""
    body = line.rstrip(" \t")
    if body.endswith(escape):
        if len(body) == 1:
            return "", True
        if body[-2] != escape:
            return body[:-1], True
    return line, False


def _left_strip(line: str) -> int:
    index = 0
    while index < len(line) and _is_space(line[index]):
        index += 1
    return index


class _Reader:
    """Walks the physical lines once, as BuildKit's ``Parse`` does."""

    def __init__(self, text: str):
        lines = text.split("\n")
        self.has_newline = [True] * len(lines)
        if lines and lines[-1] == "":
            lines.pop()
            self.has_newline.pop()
        elif lines:
            self.has_newline[-1] = False
        self.lines = lines
        self.index = 0
        self.escape = "\\"
        self.directives: list[Directive] = []
        self.directives_done = False
        self.comments: list[Comment] = []
        self.errors: list[ParseIssue] = []

    def body(self, index: int) -> str:
        """A line without its line end (Go's ``trimNewline`` also drops every trailing CR)."""
        return self.lines[index].rstrip("\r")

    def directive(self, index: int, stripped: str, lead: int) -> bool:
        """Check a left-stripped first line for a parser directive; True when it is one."""
        if self.directives_done:
            return False
        if not stripped.startswith("#"):
            self.directives_done = True
            return False
        rest = stripped[1:]
        skip = _left_strip(rest)
        match = _DIRECTIVE.match(rest[skip:])
        if match is None or match.group(1).lower() not in VALID_DIRECTIVES:
            self.directives_done = True
            return False
        name, value = match.group(1).lower(), match.group(2)
        line = index + 1
        span = Span(line, lead + 1, line, lead + 1 + len(stripped))
        if any(d.name == name for d in self.directives):
            self.errors.append(ParseIssue(span, f"only one {name} parser directive can be used"))
            return True
        if name == "escape":
            if value not in ("`", "\\"):
                self.errors.append(ParseIssue(span, f"invalid escape token '{value}' does not match ` or \\"))
                return True
            self.escape = value
        self.directives.append(Directive(name, value, span))
        return True

    def comment(self, index: int, body: str) -> None:
        col = _left_strip(body)
        self.comments.append(Comment(index + 1, col + 1, body[col + 1:].strip()))

    def next_instruction(self) -> _Joined | None:
        """Join the next logical instruction (None at the end of the file)."""
        while self.index < len(self.lines):
            index = self.index
            self.index += 1
            body = self.body(index)
            lead = _left_strip(body)
            stripped = body[lead:]
            is_directive = self.directive(index, stripped, lead)
            if stripped.startswith("#"):
                if not is_directive:
                    self.comment(index, body)
                content = ""
            else:
                content = stripped
            kept, more = _continuation(content, self.escape)
            if not more and kept == "":
                continue
            joined = _Joined()
            joined.add(index + 1, lead + 1, kept)
            while more and self.index < len(self.lines):
                index = self.index
                self.index += 1
                body = self.body(index)
                if body[_left_strip(body):].startswith("#"):
                    self.comment(index, body)
                    continue
                if _left_strip(body) == len(body):
                    continue  # empty continuation line: a BuildKit warning, not an error
                kept, more = _continuation(body, self.escape)
                joined.add(index + 1, 1, kept)
            return joined
        return None


# ---------------------------------------------------------------------------------------------
# Words, flags, JSON


def _builder_flags(text: str, start: int, end: int) -> tuple[list[_Piece], int]:
    """BuildKit's ``extractBuilderFlags``: leading ``--flag[=value]`` words; returns where the rest starts."""
    flags: list[_Piece] = []
    pos = start
    while True:
        while pos < end and _is_space(text[pos]):
            pos += 1
        if pos >= end or text[pos] != "-" or pos + 1 >= end or text[pos + 1] != "-":
            return flags, pos
        word_start = pos
        word: list[str] = []
        quote = ""
        blank_ok = False
        while pos < end:
            ch = text[pos]
            if quote:
                if ch == quote:
                    quote = ""
                elif ch == "\\":
                    if pos + 1 == end:
                        quote = ""
                    else:
                        pos += 1
                        word.append(text[pos])
                else:
                    word.append(ch)
                pos += 1
                continue
            if _is_space(ch):
                break
            if ch in "'\"":
                quote = ch
                blank_ok = True
            elif ch == "\\":
                if pos + 1 < end:
                    pos += 1
                    word.append(text[pos])
            else:
                word.append(ch)
            pos += 1
        value = "".join(word)
        if value == "--":
            return flags, pos if pos < end else end
        if blank_ok or value:
            flags.append(_Piece(value, word_start, pos))
        if pos >= end:
            return flags, end


def _words_whitespace(text: str, start: int, end: int) -> list[_Piece]:
    """``reWhitespace.Split(rest, -1)`` with ``[\\t\\v\\f\\r ]+`` (FROM, EXPOSE, COPY/ADD/VOLUME)."""
    words: list[_Piece] = []
    pos = start
    while pos < end:
        while pos < end and text[pos] in _TOKEN_WHITESPACE:
            pos += 1
        if pos >= end:
            break
        begin = pos
        while pos < end and text[pos] not in _TOKEN_WHITESPACE:
            pos += 1
        words.append(_Piece(text[begin:pos], begin, pos))
    return words


def _words_quoted(text: str, start: int, end: int, escape: str) -> list[_Piece]:
    """BuildKit's ``parseWords``: white-space separated, quotes and escapes kept in the text."""
    segment = text[start:end]
    if "'" not in segment and '"' not in segment and escape not in segment:
        return [_Piece(m.group(), start + m.start(), start + m.end()) for m in _PLAIN_WORD.finditer(segment)]
    words: list[_Piece] = []
    pos = start
    while pos < end:
        while pos < end and _is_space(text[pos]):
            pos += 1
        if pos >= end:
            break
        begin = pos
        out: list[str] = []
        quote = ""
        blank_ok = False
        while pos < end:
            ch = text[pos]
            if not quote:
                if _is_space(ch):
                    break
                if ch in "'\"":
                    quote = ch
                    blank_ok = True
                if ch == escape:
                    if pos + 1 == end:
                        pos += 1
                        continue
                    out.append(ch)
                    pos += 1
                    ch = text[pos]
                out.append(ch)
                pos += 1
                continue
            if ch == quote:
                quote = ""
            if ch == escape and quote != "'" and quote:
                if pos + 1 == end:
                    quote = ""
                    pos += 1
                    continue
                out.append(ch)
                pos += 1
                ch = text[pos]
            out.append(ch)
            pos += 1
        if blank_ok or out:
            words.append(_Piece("".join(out), begin, pos))
    return words


class _NotString(Exception):
    pass


def _reject_constant(name: str) -> None:
    raise ValueError(name)  # Go's encoding/json has no NaN/Infinity


def _json_array(rest: str) -> list[str] | None:
    """BuildKit's ``parseJSON``: the strings of a JSON array, None for the shell form.

    Raises :class:`_NotString` for a valid array holding something other than strings.
    """
    body = rest[_left_strip(rest):]
    if not body.startswith("["):
        return None
    try:
        value = json.loads(body, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, list):
        return None
    if not all(isinstance(item, str) for item in value):
        raise _NotString()
    return value


# ---------------------------------------------------------------------------------------------
# Heredoc markers (BuildKit's shell lexer with RawQuotes/RawEscapes, on one line)


def _shell_words(text: str) -> list[_Piece] | None:
    """Split a line into shell words, quotes and escapes kept; None when a quote or ``${`` is unclosed."""
    words: list[_Piece] = []
    pos, end = 0, len(text)
    while pos < end:
        while pos < end and _is_space(text[pos]):
            pos += 1
        if pos >= end:
            break
        begin = pos
        while pos < end and not _is_space(text[pos]):
            ch = text[pos]
            if ch == "\\":
                pos += 2
            elif ch == "'":
                close = text.find("'", pos + 1)
                if close < 0:
                    return None
                pos = close + 1
            elif ch == '"':
                pos += 1
                while pos < end and text[pos] != '"':
                    pos += 2 if text[pos] == "\\" else 1
                if pos >= end:
                    return None
                pos += 1
            elif ch == "$" and text.startswith("${", pos):
                depth, pos = 1, pos + 2
                while pos < end and depth:
                    depth += {"{": 1, "}": -1}.get(text[pos], 0)
                    pos += 1
                if depth:
                    return None
            else:
                pos += 1
        pos = min(pos, end)
        words.append(_Piece(text[begin:pos], begin, pos))
    return words


def _unquote_word(text: str) -> list[str]:
    """Shell words of ``text`` with quotes removed and escapes applied (``$`` left alone)."""
    words: list[str] = []
    current: list[str] = []
    started = False
    pos, end = 0, len(text)
    while pos < end:
        ch = text[pos]
        if _is_space(ch):
            if started:
                words.append("".join(current))
                current, started = [], False
            pos += 1
            continue
        started = True
        if ch == "\\":
            if pos + 1 < end:  # a trailing escape is dropped
                current.append(text[pos + 1])
            pos += 2
        elif ch == "'":
            close = text.find("'", pos + 1)
            close = end if close < 0 else close
            current.append(text[pos + 1:close])
            pos = close + 1
        elif ch == '"':
            pos += 1
            while pos < end and text[pos] != '"':
                if text[pos] == "\\" and pos + 1 < end and text[pos + 1] in '"\\$`':
                    pos += 1
                current.append(text[pos])
                pos += 1
            pos += 1
        else:
            current.append(ch)
            pos += 1
    if started:
        words.append("".join(current))
    return words


def _is_heredoc_word(word: str) -> bool:
    match = _HEREDOC_WORD.match(word)
    return match is not None and bool(match.group(3))


class _Marker(Struct):
    name: str
    fd: int
    chomp: bool
    expand: bool
    start: int
    end: int


def _heredoc_markers(text: str) -> list[_Marker]:
    """BuildKit's ``heredocsFromLine``: every word of the form ``[n]<<[-]WORD``."""
    markers = []
    for piece in _shell_words(text) or ():
        match = _HEREDOC_WORD.match(piece.text)
        if match is None or not match.group(3):
            continue
        rest = match.group(3)
        words = _unquote_word(rest)
        if len(words) != 1:
            continue
        name = words[0]
        quotes = rest.count("'") + rest.count('"')
        expand = quotes == name.count("'") + name.count('"')
        fd = int(match.group(1)) if match.group(1) else 0
        markers.append(_Marker(name, fd, match.group(2) == "-", expand, piece.start, piece.end))
    return markers


# ---------------------------------------------------------------------------------------------
# Shell commands of RUN, CMD and ENTRYPOINT (a POSIX sh subset: enough to find each simple command
# and its words with their positions; nothing is expanded or run)

_SHELL_BLANK = frozenset(" \t\r\f\v")
_SHELL_BREAK = frozenset(" \t\r\f\v\n;&|()<>")
_SHELL_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")
# keywords that open or continue a compound command: the simple command follows them
_SHELL_LEAD = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"})
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh"})


class _HeredocRedirect(Struct):
    name: str
    chomp: bool
    owner: list  # the words of the command it belongs to (filled while reading)


def _balanced(text: str, pos: int, end: int) -> int:
    """Index after the ``)`` or ``}`` that closes the group opening at ``pos`` (quotes respected)."""
    opener = text[pos]
    closer = ")" if opener == "(" else "}"
    depth = 0
    while pos < end:
        ch = text[pos]
        if ch == "\\":
            pos += 2
            continue
        if ch == "'":
            close = text.find("'", pos + 1, end)
            pos = end if close < 0 else close + 1
            continue
        if ch == '"':
            pos += 1
            while pos < end and text[pos] != '"':
                pos += 2 if text[pos] == "\\" else 1
            pos += 1
            continue
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    return end


def _shell_commands(joined: _Joined, start: int, end: int, *, body: bool = False
                    ) -> tuple[list[ShellCommand], list[_HeredocRedirect]]:
    """The simple commands of ``joined.text[start:end]`` and the heredoc redirections seen.

    ``body`` is True for a here-document script: newlines end commands, and the bodies of
    here-documents opened inside it are skipped.
    """
    text = joined.text
    commands: list[ShellCommand] = []
    redirects: list[_HeredocRedirect] = []
    words: list[ShellWord] = []
    pending: list[_HeredocRedirect] = []  # heredocs opened on the current body line
    target: str | None = None  # "skip" or "heredoc": what the next word is for
    chomp = False

    def finish() -> None:
        nonlocal words
        command = words
        words = []
        assignments: list[ShellWord] = []
        while command and command[0].text in _SHELL_LEAD and not command[0].quoted:
            command = command[1:]
        while command and command[0].quoted is False and _ASSIGNMENT.match(command[0].text):
            assignments.append(command[0])
            command = command[1:]
        if command or assignments:
            commands.append(ShellCommand(tuple(command), tuple(assignments), body))

    pos = start
    while pos < end:
        ch = text[pos]
        if ch in _SHELL_BLANK:
            pos += 1
            continue
        if ch == "\n":
            finish()
            pos += 1
            for redirect in pending:  # skip the bodies of heredocs opened on that line
                while pos < end:
                    line_end = text.find("\n", pos, end)
                    line_end = end if line_end < 0 else line_end
                    line = text[pos:line_end].rstrip("\r")
                    pos = line_end + 1
                    if (line.lstrip("\t") if redirect.chomp else line) == redirect.name:
                        break
            pending = []
            continue
        if ch == "\\" and pos + 1 < end and text[pos + 1] == "\n":
            pos += 2
            continue
        if ch == "#":  # a comment (only where a word would start)
            line_end = text.find("\n", pos, end)
            pos = end if line_end < 0 else line_end
            continue
        redirection = _REDIRECTION.match(text, pos)
        if redirection is not None and (ch in "<>&" or text[pos:redirection.end()].rstrip("<>&|-").isdigit()):
            operator = redirection.group(1) or redirection.group()
            pos = redirection.end()
            if operator in ("<<", "<<-"):
                target, chomp = "heredoc", operator == "<<-"
            else:
                target = "skip"
            continue
        operator = next((op for op in _SHELL_OPERATORS if text.startswith(op, pos)), None)
        if operator is not None:
            finish()
            pos += len(operator)
            continue
        begin = pos
        out: list[str] = []
        quoted = False
        while pos < end:
            ch = text[pos]
            if ch in _SHELL_BREAK:
                break
            if ch == "\\":
                if pos + 1 < end and text[pos + 1] != "\n":
                    out.append(text[pos + 1])
                pos += 2
            elif ch == "'":
                close = text.find("'", pos + 1, end)
                close = end if close < 0 else close
                out.append(text[pos + 1:close])
                quoted, pos = True, close + 1
            elif ch == '"':
                pos += 1
                while pos < end and text[pos] != '"':
                    if text[pos] == "\\" and pos + 1 < end and text[pos + 1] in '"\\$`\n':
                        if text[pos + 1] != "\n":
                            out.append(text[pos + 1])
                        pos += 2
                        continue
                    out.append(text[pos])
                    pos += 1
                quoted, pos = True, pos + 1
            elif ch == "$" and pos + 1 < end and text[pos + 1] in "({":
                close = _balanced(text, pos + 1, end)
                out.append(text[pos:close])
                pos = close
            elif ch == "`":
                close = text.find("`", pos + 1, end)
                close = end if close < 0 else close + 1
                out.append(text[pos:close])
                pos = close
            else:
                out.append(ch)
                pos += 1
        pos = min(pos, end)
        word = ShellWord("".join(out), joined.span(begin, pos), quoted)
        if target == "heredoc":
            redirect = _HeredocRedirect(word.text, chomp, words)
            redirects.append(redirect)
            if body:
                pending.append(redirect)
        elif target is None:
            words.append(word)
        target = None
    finish()
    return commands, redirects


def _is_shell_script(owner: list, content: str) -> bool:
    """Whether a RUN heredoc body is run by the shell: the heredoc is the whole command (BuildKit
    runs it as a script, by its ``#!`` line if it has one) or is the input of a shell."""
    if owner:
        return owner[0].text.rsplit("/", 1)[-1] in _SHELLS
    if content.startswith("#!"):
        interpreter = content[2:].split("\n", 1)[0].split()
        if interpreter and interpreter[0].rsplit("/", 1)[-1] == "env" and len(interpreter) > 1:
            interpreter = interpreter[1:]
        return bool(interpreter) and interpreter[0].rsplit("/", 1)[-1] in _SHELLS
    return True


def _line_commands(ins: Instruction, joined: _Joined, a0: int, a1: int) -> list[_HeredocRedirect]:
    """Fill ``commands`` of a RUN, CMD or ENTRYPOINT from its line; returns its heredoc redirections."""
    if ins.keyword not in ("RUN", "CMD", "ENTRYPOINT") or a1 <= a0:
        return []
    if ins.exec_form:
        if ins.exec_args and ins.args_span is not None:
            ins.commands = (ShellCommand(tuple(ShellWord(arg, ins.args_span, True) for arg in ins.exec_args)),)
            spans = _string_spans(joined, a0, a1)
            if len(spans) == len(ins.exec_args):
                ins.exec_spans = spans
        return []
    commands, redirects = _shell_commands(joined, a0, a1)
    ins.commands = tuple(commands)
    return redirects


def _string_spans(joined: _Joined, a0: int, a1: int) -> tuple[Span, ...]:
    """Where each string literal of the JSON array at ``joined.text[a0:a1]`` stands, quotes included."""
    text = joined.text
    spans = []
    pos = a0
    while pos < a1:
        if text[pos] != '"':
            pos += 1
            continue
        start, pos = pos, pos + 1
        while pos < a1 and text[pos] != '"':
            pos += 2 if text[pos] == "\\" else 1
        pos += 1
        spans.append(joined.span(start, min(pos, a1)))
    return tuple(spans)


def _body_commands(ins: Instruction, redirects: list[_HeredocRedirect]) -> None:
    """Add the commands of the RUN heredocs that the shell runs (read after the line's own)."""
    if ins.keyword != "RUN" or not ins.heredocs:
        return
    commands = list(ins.commands)
    for heredoc in ins.heredocs:
        redirect = next((r for r in redirects if r.name == heredoc.name), None)
        if redirect is not None:
            redirects.remove(redirect)
        if not heredoc.content or not _is_shell_script(redirect.owner if redirect else [], heredoc.content):
            continue
        body = _Joined()
        for number, line in enumerate(heredoc.content.split("\n")):
            body.add(heredoc.span.line + number, 1, line + "\n")
        commands.extend(_shell_commands(body, 0, len(heredoc.content), body=True)[0])
    ins.commands = tuple(commands)


# ---------------------------------------------------------------------------------------------
# ARG / FROM expansion


class _Unknown:
    pass


_UNKNOWN = _Unknown()


def _expand(text: str, env: dict[str, str | _Unknown], escape: str) -> str | None:
    """Expand a FROM or ARG word with known ARG values (quotes removed, as BuildKit's lexer does).

    Unset variables are unknown (a build argument may set them), except behind ``:-``/``-``
    (their default is used) and ``:+``/``+``; unsupported forms give None.
    """
    result = _Expander(text, env, escape).word(())
    return None if isinstance(result, _Unknown) else result


class _Bounded(list):
    """The pieces of an expanded value; past MAX_VALUE_CHARS only their length is counted (the
    value is then unknown: ``ARG A1=${A0}${A0}`` forty times would double it forty times)."""

    __slots__ = ("size",)

    def __init__(self) -> None:
        super().__init__()
        self.size = 0

    def append(self, piece: str) -> None:
        self.size += len(piece)
        if self.size <= MAX_VALUE_CHARS:
            super().append(piece)


class _Expander:
    """BuildKit's word lexer for FROM and ARG values, on known ARG values only."""

    def __init__(self, text: str, env: dict[str, str | _Unknown], escape: str):
        self.text, self.env, self.escape, self.pos = text, env, escape, 0

    def word(self, stop: tuple[str, ...], in_double: bool = False) -> str | _Unknown:
        out = _Bounded()
        unknown = False
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in stop:
                break
            if ch == self.escape:
                if self.pos + 1 < len(text):
                    out.append(text[self.pos + 1])
                self.pos += 2
            elif ch == "'" and not in_double:
                close = text.find("'", self.pos + 1)
                if close < 0:
                    return _UNKNOWN
                out.append(text[self.pos + 1:close])
                self.pos = close + 1
            elif ch == '"' and not in_double:
                self.pos += 1
                part = self.word(('"',), in_double=True)
                if self.pos >= len(text):
                    return _UNKNOWN
                self.pos += 1
                unknown = unknown or isinstance(part, _Unknown)
                out.append("" if isinstance(part, _Unknown) else part)
            elif ch == "$":
                part = self.dollar()
                unknown = unknown or isinstance(part, _Unknown)
                out.append("" if isinstance(part, _Unknown) else part)
            else:
                out.append(ch)
                self.pos += 1
        return _UNKNOWN if unknown or out.size > MAX_VALUE_CHARS else "".join(out)

    def lookup(self, name: str) -> str | _Unknown | None:
        if name in AUTOMATIC_PLATFORM_ARGS and name not in self.env:
            return _UNKNOWN
        return self.env.get(name)

    def dollar(self) -> str | _Unknown:
        text = self.text
        self.pos += 1
        if self.pos >= len(text):
            return "$"
        if text[self.pos] != "{":
            match = _NAME.match(text, self.pos)
            if match is None:
                if text[self.pos].isdigit():
                    return _UNKNOWN
                return "$"
            self.pos = match.end()
            value = self.lookup(match.group())
            return _UNKNOWN if value is None else value
        match = _NAME.match(text, self.pos + 1)
        if match is None:
            return _UNKNOWN
        self.pos = match.end()
        value = self.lookup(match.group())
        if self.pos < len(text) and text[self.pos] == "}":
            self.pos += 1
            return _UNKNOWN if value is None else value
        for operator in (":-", ":+", "-", "+"):
            if text.startswith(operator, self.pos):
                self.pos += len(operator)
                alternative = self.word(("}",))
                if self.pos >= len(text):
                    return _UNKNOWN
                self.pos += 1
                if isinstance(value, _Unknown):
                    return _UNKNOWN
                use_alternative = {
                    ":-": value is None or value == "",
                    "-": value is None,
                    ":+": value is not None and value != "",
                    "+": value is not None,
                }[operator]
                if operator in (":+", "+"):
                    return alternative if use_alternative else ""
                return alternative if use_alternative else value  # type: ignore[return-value]
        return _UNKNOWN  # ${VAR:?msg}, ${VAR#pattern}, ... : not worked out statically


# ---------------------------------------------------------------------------------------------
# Instructions


class _Builder:
    """Turns joined instruction texts into :class:`Instruction` objects and collects errors."""

    def __init__(self, reader: _Reader):
        self.reader = reader
        self.errors = reader.errors
        self.redirects: dict[int, list[_HeredocRedirect]] = {}  # id(instruction) -> its heredoc redirections

    def error(self, span: Span, message: str) -> None:
        self.errors.append(ParseIssue(span, message))

    def instruction(self, joined: _Joined, start: int, end: int, nested: bool = False) -> Instruction | None:
        text = joined.text
        start, end = _trim(text, start, end)
        if start >= end:
            return None
        kw_end = start
        while kw_end < end and text[kw_end] not in _TOKEN_WHITESPACE:
            kw_end += 1
        keyword = text[start:kw_end].upper()
        rest = kw_end
        while rest < end and text[rest] in _TOKEN_WHITESPACE:
            rest += 1
        flag_pieces, args_start = _builder_flags(text, rest, end) if rest < end else ([], end)
        a0, a1 = _trim(text, args_start, end)
        flags: dict[str, list[Flag]] = {}
        for piece in flag_pieces:
            name, eq, value = piece.text[2:].partition("=")
            raw = text[piece.start:piece.end]
            value_span = None
            if eq and raw.find("=") + 1 < len(raw):
                value_span = joined.span(piece.start + raw.find("=") + 1, piece.end)
            flags.setdefault(name, []).append(
                Flag(name, value if eq else None, joined.span(piece.start, piece.end), value_span))
        instruction = Instruction(
            keyword=keyword,
            value=text[rest:end],
            span=joined.span(start, end),
            keyword_span=joined.span(start, kw_end),
            args=text[a0:a1],
            args_span=joined.span(a0, a1) if a1 > a0 else None,
            flags=flags,
        )
        self.arguments(instruction, joined, a0, a1, nested)
        return instruction

    def arguments(self, ins: Instruction, joined: _Joined, a0: int, a1: int, nested: bool) -> None:
        text = joined.text
        keyword = ins.keyword
        where = ins.args_span or ins.keyword_span
        escape = self.reader.escape

        def words(pieces: list[_Piece]) -> tuple[Word, ...]:
            return tuple(Word(p.text, joined.span(p.start, p.end)) for p in pieces)

        if keyword in ("RUN", "CMD", "ENTRYPOINT", "SHELL", "ADD", "COPY", "VOLUME"):
            try:
                exec_args = _json_array(ins.args) if ins.args else None
            except _NotString:
                self.error(where, "when using JSON array syntax, arrays must be comprised of strings only")
                exec_args = None
            if exec_args is not None:
                ins.exec_form, ins.exec_args = True, exec_args
            elif keyword in ("ADD", "COPY", "VOLUME"):
                ins.words = words(_words_whitespace(text, a0, a1))
            else:
                ins.words = words(_words_quoted(text, a0, a1, escape))
        elif keyword in ("FROM", "EXPOSE"):
            ins.words = words(_words_whitespace(text, a0, a1))
        elif keyword == "HEALTHCHECK":
            pieces = _words_whitespace(text, a0, a1)
            ins.words = words(pieces)
            if pieces:
                command = _trim(text, pieces[0].end, a1)
                try:
                    exec_args = _json_array(text[command[0]:command[1]]) if command[1] > command[0] else None
                except _NotString:
                    self.error(where, "when using JSON array syntax, arrays must be comprised of strings only")
                    exec_args = None
                if exec_args is not None:
                    ins.exec_form, ins.exec_args = True, exec_args
        elif keyword in ("ENV", "LABEL"):
            pieces = _words_quoted(text, a0, a1, escape)
            ins.words = words(pieces)
            if pieces and "=" not in pieces[0].text:
                if len(_words_whitespace(text, a0, a1)) < 2:
                    self.error(where, f"{keyword} must have two arguments")
            else:
                for piece in pieces:
                    if "=" not in piece.text:
                        self.error(joined.span(piece.start, piece.end),
                                   f"Syntax error - can't find = in {json.dumps(piece.text)}. "
                                   "Must be of the form: name=value")
                    elif piece.text.startswith("=") and not nested:
                        self.error(joined.span(piece.start, piece.end), f"{keyword} names can not be blank")
        elif keyword == "ONBUILD":
            ins.sub = self.instruction(joined, a0, a1, nested=True) if a1 > a0 else None
            if ins.sub is not None:
                ins.sub.stage_index = None
        else:
            ins.words = words(_words_quoted(text, a0, a1, escape))
        redirects = _line_commands(ins, joined, a0, a1)
        if redirects:
            self.redirects[id(ins)] = redirects
        if not nested:
            self.validate(ins)

    def validate(self, ins: Instruction) -> None:
        """The checks of BuildKit's instruction dispatcher (``instructions/parse.go``)."""
        keyword, n = ins.keyword, len(ins.words)
        at = ins.keyword_span
        if keyword in ("ENV", "LABEL", "ARG", "EXPOSE", "VOLUME", "ONBUILD", "HEALTHCHECK") and not ins.args:
            self.error(at, f"{keyword} requires at least one argument")
        elif keyword in ("WORKDIR", "USER", "STOPSIGNAL", "MAINTAINER") and not ins.args:
            self.error(at, f"{keyword} requires exactly one argument")
        elif keyword == "ARG":
            for word in ins.words:
                if word.text.startswith("="):
                    self.error(word.span, "ARG names can not be blank")
        elif keyword == "FROM":
            if n == 3 and ins.words[1].text.lower() == "as":
                if not _STAGE_NAME.match(ins.words[2].text.lower()):
                    self.error(ins.words[2].span, f"invalid name for build stage: {json.dumps(ins.words[2].text)}, "
                                                  "name can't start with a number or contain symbols")
            elif n != 1:
                self.error(ins.args_span or at, "FROM requires either one or three arguments")
        elif keyword in ("COPY", "ADD"):
            count = len(ins.exec_args) if ins.exec_form and ins.exec_args is not None else n
            if count < 2:
                self.error(ins.args_span or at, f"{keyword} requires at least two arguments, but only one was "
                                                "provided. Destination could not be determined")
            elif not ins.exec_form and _is_heredoc_word(ins.words[-1].text):
                self.error(ins.words[-1].span, f"{keyword} cannot accept a heredoc as a destination")
        elif keyword == "ONBUILD" and ins.sub is not None:
            trigger = ins.sub.keyword
            if trigger == "ONBUILD":
                self.error(ins.sub.keyword_span, "Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed")
            elif trigger in ("MAINTAINER", "FROM"):
                self.error(ins.sub.keyword_span, f"{trigger} isn't allowed as an ONBUILD trigger")
        elif keyword == "HEALTHCHECK":
            kind = ins.words[0].text.upper()
            if kind == "NONE":
                if n > 1:
                    self.error(ins.args_span or at, "HEALTHCHECK NONE takes no arguments")
            elif kind != "CMD":
                self.error(ins.words[0].span, f'Unknown type "{kind}" in HEALTHCHECK (try CMD)')
            elif not ins.exec_args if ins.exec_form else n < 2:
                self.error(ins.words[0].span, "Missing command after HEALTHCHECK CMD")
        elif keyword == "SHELL":
            if ins.exec_form and not ins.exec_args or not ins.args:
                self.error(at, "SHELL requires at least one argument")
            elif not ins.exec_form:
                self.error(ins.args_span or at, "SHELL requires the arguments to be in JSON form")
        elif keyword == "VOLUME" and ins.exec_form:
            if any(not item.strip() for item in ins.exec_args or ()):
                self.error(ins.args_span or at, "VOLUME specified can not be an empty string")


def _heredocs(reader: _Reader, ins: Instruction, joined: _Joined) -> None:
    """Read the bodies of the heredocs the instruction's line opens (BuildKit: in order, after it)."""
    effective = ins.effective
    if effective.keyword not in HEREDOC_INSTRUCTIONS or effective.exec_form or "<<" not in joined.text:
        return
    docs = []
    last_line, last_col = ins.span.end_line, ins.span.end_col
    for marker in _heredoc_markers(joined.text):
        content: list[str] = []
        first = reader.index
        terminated = False
        while reader.index < len(reader.lines):
            index = reader.index
            reader.index += 1
            candidate = reader.body(index)
            if marker.chomp:
                candidate = candidate.lstrip("\t")
            if candidate == marker.name:
                terminated = True
                last_line, last_col = index + 1, len(reader.lines[index].rstrip("\r")) + 1
                break
            content.append(reader.lines[index] + ("\n" if reader.has_newline[index] else ""))
            last_line, last_col = index + 1, len(reader.lines[index].rstrip("\r")) + 1
        marker_span = joined.span(marker.start, marker.end)
        body_span = Span(first + 1, 1, last_line, last_col) if reader.index > first else marker_span
        if not terminated:
            reader.errors.append(ParseIssue(marker_span, f"unterminated heredoc: no line `{marker.name}` closes "
                                                         f"the here-document opened here"))
        docs.append(Heredoc(marker.name, marker.fd, marker.chomp, marker.expand, "".join(content),
                            marker_span, body_span, terminated))
        if not terminated:
            break
    if docs:
        target = effective
        target.heredocs = tuple(docs)
        ins.span = Span(ins.span.line, ins.span.col, last_line, max(last_col, 1))
        if target is not ins:
            ins.heredocs = tuple(docs)


# ---------------------------------------------------------------------------------------------
# Stages


def _standard_frontend(syntax: str | None) -> bool:
    if syntax is None:
        return True
    image = syntax.split("@", 1)[0]
    name = image.rsplit(":", 1)[0] if image.rfind(":") > image.rfind("/") else image
    return name.lower() in STANDARD_FRONTENDS


def _arg_defs(ins: Instruction, env: dict[str, str | _Unknown], escape: str, budget: ExpansionBudget) -> list[ArgDef]:
    defs = []
    for word in ins.words:
        name, eq, default = word.text.partition("=")
        if not name:
            continue
        value = _bounded(default, _expand(default, env, escape), budget) if eq else None
        if is_placeholder(value, arg_default=True):
            value = None  # ``ARG BASE=undefined``, ``ARG TAG=<tag>``: a build argument sets it (linter.model.placeholder)
        defs.append(ArgDef(name, default if eq else None, value, word.span))
        if eq:
            env[name] = _UNKNOWN if value is None else value
        else:
            env.pop(name, None)  # declared without a default: unset unless a build argument sets it
    return defs


def _bounded(written: str, value: str | None, budget: ExpansionBudget) -> str | None:
    """``value`` (expanded from ``written``), or None once the file's expansions together pass
    MAX_EXPANDED_CHARS (``ARG C_i=${B}-i`` lines would each hold a value of MAX_VALUE_CHARS)."""
    return value if value is None or budget.allows(len(written), len(value)) else None


def _assemble(instructions: list[Instruction], reader: _Reader, errors: list[ParseIssue]) -> Dockerfile:
    dockerfile = Dockerfile(instructions=instructions, directives=reader.directives, escape=reader.escape)
    env: dict[str, str | _Unknown] = {}
    budget = ExpansionBudget()
    current: Stage | None = None
    outside_reported = False
    for ins in instructions:
        if ins.keyword == "FROM":
            words = ins.words
            base = words[0].text if words else ""
            name = words[2].text.lower() if len(words) == 3 and words[1].text.lower() == "as" else None
            platform = ins.flag("platform")
            index = len(dockerfile.stages)
            resolved = _bounded(base, _expand(base, env, reader.escape), budget) if base else None
            current = Stage(
                index=index, base=base, base_resolved=resolved,
                base_span=words[0].span if words else None,
                name=name, name_span=words[2].span if name is not None else None,
                platform=platform.value if platform is not None else None,
                from_instruction=ins,
            )
            current.parent_stage = stage_reference(dockerfile, resolved or base, index) if base else None
            dockerfile.stages.append(current)
            ins.stage_index = index
            continue
        if current is None:
            if ins.keyword == "ARG":
                dockerfile.args.extend(_arg_defs(ins, env, reader.escape, budget))
            elif not outside_reported and ins.is_known:
                errors.append(ParseIssue(ins.keyword_span, f"no build stage in current context: {ins.keyword} "
                                                           "comes before the first FROM"))
                outside_reported = True
            continue
        ins.stage_index = current.index
        current.instructions.append(ins)
    if instructions and not dockerfile.stages and not outside_reported:
        errors.append(ParseIssue(instructions[0].keyword_span,
                                 "dockerfile contains no stages to build: there is no FROM instruction"))
    return dockerfile


# ---------------------------------------------------------------------------------------------
# Entry points


def load_text(text: str, path: str) -> Document:
    """Parse Dockerfile text into a :class:`Document` (never raises for bad input)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = _Reader(text)
    builder = _Builder(reader)
    instructions: list[Instruction] = []
    while True:
        joined = reader.next_instruction()
        if joined is None:
            break
        instruction = builder.instruction(joined, 0, len(joined.text))
        if instruction is None:
            continue
        _heredocs(reader, instruction, joined)
        target = instruction.effective
        _body_commands(target, builder.redirects.pop(id(target), []))
        instructions.append(instruction)
    standard = _standard_frontend(next((d.value for d in reader.directives if d.name == "syntax"), None))
    for ins in instructions:
        if standard and not ins.is_known:
            suggestion = close_matches(ins.keyword, sorted(KNOWN_INSTRUCTIONS), cutoff=0.6)
            hint = f" (did you mean {suggestion[0]}?)" if suggestion else ""
            reader.errors.append(ParseIssue(ins.keyword_span, f"unknown instruction: {ins.keyword}{hint}"))
    document = Document(path=path, kind=DOCKERFILE)
    if not instructions:
        reader.errors.append(ParseIssue(FILE_START, "file with no instructions"))
    else:
        document.dockerfile = _assemble(instructions, reader, reader.errors)
        document.dockerfile.path = path
    document.errors = sorted(reader.errors, key=lambda issue: (issue.span.line, issue.span.col))
    document.comments = place_comments(reader.comments, reader.lines)
    return document


def load(data: bytes, path: str) -> Document:
    return load_decoded(data, path, DOCKERFILE, load_text)
