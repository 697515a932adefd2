"""Our positions and the Language Server Protocol's, and the edits the server offers.

Every span here is 1-based, lines and columns in Unicode code points of the decoded text (a
byte-order mark taken off: :mod:`linter.model.position`); LSP counts lines from 0 and columns in
UTF-16 code units of the line (its default ``positionEncoding``). A character beyond the Basic
Multilingual Plane (an emoji) is one column to us and two to LSP; ``é`` is one to both, two bytes
in UTF-8. Lines are split where LSP splits them (``\\n``, ``\\r\\n``, ``\\r``).

The disable quick fix writes the inline suppression :mod:`linter.suppress` reads
(``# mlops-lint: disable=ID``): at the end of the finding's YAML line when that line has no
comment, else on a line of its own above it (a Dockerfile's and a script's always above: a ``#``
after an instruction is its text), added to a directive already there; never inside a block
scalar (its text would change and the comment would suppress nothing), nor in JSON, Terraform or
Bicep, which have no such comment here.
"""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from mlops_lint.model.document import DOCKERFILE, K8S, SHELL
from mlops_lint.model.position import Span

LINE_BREAK = re.compile(r"\r\n|\r|\n")
SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
            "info": lsp.DiagnosticSeverity.Information}
BLOCK_SCALAR = re.compile(r"(?:^|[\s:-])[|>][-+0-9]*\s*(?:#.*)?$")  # `key: |`, `- >-` (a comment may follow)
DIRECTIVE = re.compile(r"#\s*mlops-lint:\s*disable\s*=\s*[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*")


class Text:
    """A file's text as the editor has it: its lines, for converting positions both ways."""

    def __init__(self, text: str):
        self.bom = text.startswith("\ufeff")  # not ours to count: our columns start after it
        self.lines = LINE_BREAK.split(text[1:] if self.bom else text)
        found = LINE_BREAK.search(text)
        self.newline = found.group(0) if found else "\n"

    def utf16(self, line: int, col: int) -> lsp.Position:
        """Our (line, column), 1-based code points, as an LSP position (clamped to the text)."""
        row = min(max(line, 1), len(self.lines)) - 1
        if line > len(self.lines):  # past the end: the end of the last line
            col = len(self.lines[row]) + 1
        text = self.lines[row]
        offset = max(col - 1, 0) + (1 if self.bom and row == 0 else 0)
        prefix = text[:min(offset, len(text))]
        return lsp.Position(line=row, character=len(prefix.encode("utf-16-le")) // 2)

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(start=self.utf16(span.line, span.col), end=self.utf16(span.end_line, span.end_col))

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""


def diagnostic(result: object, text: Text, href: str | None = None) -> lsp.Diagnostic:
    """One finding as an LSP diagnostic (the rule's id as its code, linked to its docs page at
    ``href``, the hint after the message)."""
    message = result.message  # type: ignore[attr-defined]
    hint = getattr(result, "fix", None)
    if hint:
        message += f"\nfix: {hint}"
    return lsp.Diagnostic(
        range=text.range(result.span),  # type: ignore[attr-defined]
        message=message,
        severity=SEVERITY.get(result.severity, lsp.DiagnosticSeverity.Warning),  # type: ignore[attr-defined]
        code=result.rule,  # type: ignore[attr-defined]
        code_description=lsp.CodeDescription(href=href) if href else None,
        source="mlops-lint",
    )


def text_edits(edits: list, text: Text) -> list[lsp.TextEdit]:
    """A fix's edits (of one file) as LSP edits, line breaks in the file's own style."""
    return [lsp.TextEdit(range=text.range(edit.span), new_text=edit.text.replace("\n", text.newline))
            for edit in edits]


def in_block_scalar(text: Text, line: int) -> bool:
    """Whether YAML line ``line`` (1-based) is inside a block scalar (``key: |``): the nearest
    line above it with less indentation opens one."""
    current = text.line_text(line)
    if not current.strip():
        return False
    indent = len(current) - len(current.lstrip(" "))
    for row in range(line - 1, 0, -1):
        above = text.line_text(row)
        if not above.strip() or above.lstrip().startswith("#"):
            continue
        if len(above) - len(above.lstrip(" ")) < indent:
            return BLOCK_SCALAR.search(above.rstrip()) is not None
    return False


def disable_edit(code: str, line: int, text: Text, kind: str, name: str) -> lsp.TextEdit | None:
    """The edit that suppresses ``code`` on ``line`` (1-based) with ``# mlops-lint: disable=``,
    or None where no such comment can be written (see the module's docstring)."""
    if kind not in (K8S, DOCKERFILE, SHELL) or name.lower().endswith(".json") or not 0 < line <= len(text.lines):
        return None
    if kind == K8S and in_block_scalar(text, line):
        return None
    current = text.line_text(line)
    for row in (line, line - 1):  # a directive already on the line, or on its own line above it
        found = DIRECTIVE.search(text.line_text(row)) if row > 0 else None
        if found is not None and (row == line or text.line_text(row).lstrip().startswith("#")):
            at = text.utf16(row, found.end() + 1)
            return lsp.TextEdit(range=lsp.Range(start=at, end=at), new_text=f",{code}")
    directive = f"# mlops-lint: disable={code}"
    if kind == K8S and "#" not in current and current.strip():
        at = text.utf16(line, len(current.rstrip()) + 1)
        end = text.utf16(line, len(current) + 1)
        return lsp.TextEdit(range=lsp.Range(start=at, end=end), new_text=f"  {directive}")
    indent = current[:len(current) - len(current.lstrip(" \t"))]
    start = lsp.Position(line=line - 1, character=0)
    return lsp.TextEdit(range=lsp.Range(start=start, end=start), new_text=f"{indent}{directive}{text.newline}")
