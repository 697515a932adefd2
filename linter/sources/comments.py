"""Comments of every source kind: where a comment stands (on a line of its own, or after code),
and the comments of the IaC files (Terraform's ``#``, ``//`` and ``/* */``, Bicep's ``//`` and
``/* */``), read for their suppression directives (:mod:`linter.suppress`)."""

from __future__ import annotations

import re
from typing import Iterable

from msgspec.structs import replace

from mlops_lint.model.document import Comment

# A file whose text never says this holds no directive: its comments are not collected (the IaC
# readers skip the walk; a comment is read only for a directive).
DIRECTIVE_WORD = "mlops-lint"
HCL_PREFIXES = ("#", "//", "/*")
BICEP_PREFIXES = ("//", "/*")


def place_comments(comments: list[Comment], lines: list[str], comment_char: str | tuple[str, ...] = "#") -> list[Comment]:
    """Fill ``own_line`` and ``next_line`` of each comment from the file's lines.

    ``next_line`` is the first later line that is neither blank nor a comment (a line starting
    with ``comment_char``, or one of them when it is a tuple), so stacked directives above one
    line all govern it.
    """
    placed = []
    for comment in comments:
        index = comment.line - 1
        text = lines[index] if 0 <= index < len(lines) else ""
        own = text[: max(comment.col - 1, 0)].strip() == ""
        following = 0
        if own:
            for later in range(index + 1, len(lines)):
                stripped = lines[later].strip()
                if stripped and not stripped.startswith(comment_char):
                    following = later + 1
                    break
        placed.append(replace(comment, own_line=own, next_line=following))
    return placed


def comment_of(raw: str, line: int, col: int) -> Comment:
    """The :class:`Comment` of one comment's source text (``# x``, ``// x``, ``/* x */``) at its
    1-based position: the body without its markers. A ``/* */`` comment over several lines keeps
    its line breaks, so it is never a directive (a directive is one line)."""
    raw = raw.rstrip("\r\n")
    if raw.startswith("#"):
        body = raw[1:]
    elif raw.startswith("/*"):
        body = raw[2:-2] if raw.endswith("*/") and len(raw) >= 4 else raw[2:]
    else:
        body = raw[2:]
    return Comment(line, col, body.strip(), width=len(raw.rstrip()) if "\n" not in raw else 0)


def hcl_comments(tree: object, text: str) -> list[Comment]:
    """The comments of a Terraform file, from python-hcl2's parse tree: its ``NL_OR_COMMENT``
    tokens hold every comment the lexer saw (never a ``#`` inside a string or a heredoc), with
    1-based lines and columns."""
    from lark import Token

    found = [comment_of(str(token), token.line, token.column)
             for token in tree.scan_values(lambda v: isinstance(v, Token) and v.type == "NL_OR_COMMENT")  # type: ignore[attr-defined]
             if str(token)[:1] in "#/"]
    found.sort(key=lambda c: (c.line, c.col))
    return place_comments(found, text.split("\n"), HCL_PREFIXES)


_BICEP_CODE = re.compile(r"'''|'|//|/\*|[{}]")
_BICEP_STRING = re.compile(r"\\.|'|\$\{", re.S)


def bicep_comments(text: str) -> list[Comment]:
    """The ``//`` and ``/* */`` comments of a Bicep file, outside its strings: ``'…'`` (with
    ``\\`` escapes and ``${…}`` interpolations, which may hold strings of their own) and
    ``'''…'''`` (verbatim). One pass with regular expressions jumping from token to token:
    linear in the text."""
    found: list[tuple[int, str]] = []
    interpolations: list[int] = []  # the open ${ … } (innermost last): braces opened inside each
    in_string = False
    pos, size = 0, len(text)
    while pos < size:
        if in_string:
            match = _BICEP_STRING.search(text, pos)
            if match is None:
                break
            pos, token = match.end(), match.group()
            if token == "'":
                in_string = False
            elif token == "${":
                interpolations.append(0)
                in_string = False
            continue
        match = _BICEP_CODE.search(text, pos)
        if match is None:
            break
        pos, token = match.end(), match.group()
        if token == "'''":
            end = text.find("'''", pos)
            pos = size if end < 0 else end + 3
        elif token == "'":
            in_string = True
        elif token == "//":
            end = text.find("\n", pos)
            pos = size if end < 0 else end
            found.append((match.start(), text[match.start():pos]))
        elif token == "/*":
            end = text.find("*/", pos)
            pos = size if end < 0 else end + 2
            found.append((match.start(), text[match.start():pos]))
        elif interpolations:
            if token == "{":
                interpolations[-1] += 1
            elif interpolations[-1]:
                interpolations[-1] -= 1
            else:  # the } that closes ${: back in the string
                interpolations.pop()
                in_string = True
    comments = list(positioned(text, found))
    return place_comments(comments, text.split("\n"), BICEP_PREFIXES)


def positioned(text: str, found: Iterable[tuple[int, str]]) -> Iterable[Comment]:
    """Comments at increasing offsets, with their 1-based line and column (counted once)."""
    line, line_start, last = 1, 0, 0
    for offset, raw in found:
        breaks = text.count("\n", last, offset)
        if breaks:
            line += breaks
            line_start = text.rfind("\n", last, offset) + 1
        last = offset
        yield comment_of(raw, line, offset - line_start + 1)
