"""Reading a rule's markdown docstring: its ``## Section`` bodies, a plain-text rendering, and the
whole page `mlops-lint explain` prints (and the language server shows on hover)."""

from __future__ import annotations

import re
from typing import Any

_SECTION = re.compile(r"^##\s+(.+?)\s*$")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_BLOCK_LINE = re.compile(r"^\s*([-*+>|]|\d+[.)])\s|^\s{4}")  # list, quote, table or code lines


def sections(doc: str) -> dict[str, str]:
    """``{"What it does": "...", ...}`` for every ``## Title`` outside code fences."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    fenced = False
    for line in doc.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _SECTION.match(line)
        if heading:
            current = found.setdefault(heading.group(1), [])
        elif current is not None:
            current.append(line)
    return {title: "\n".join(body).strip() for title, body in found.items()}


def plain_text(markdown: str) -> str:
    """Markdown without heading marks or link syntax, code blocks indented (SARIF ``help.text``)."""
    lines = []
    fenced = False
    for line in markdown.strip().splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif fenced:
            lines.append(f"    {line}")
        else:
            heading = _HEADING.match(line)
            lines.append(heading.group(1) if heading else _LINK.sub(r"\1 (\2)", line))
    return "\n".join(lines)


def unwrap(text: str) -> str:
    """Hard-wrapped prose paragraphs joined into one line each (lists, tables and code kept)."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(
        p if any(_BLOCK_LINE.match(line) for line in p.splitlines()) else " ".join(p.split("\n"))
        for p in paragraphs
    )


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def explain_text(meta: Any) -> str:
    """A rule's whole page, markdown: its name and id, severity, family, scope and status, its
    docs and its options' defaults (``mlops-lint explain RULE``; the language server's hover)."""
    facts = [f"Severity: {meta.severity}", f"Family: {meta.family}", f"Scope: {meta.scope}",
             f"Since: {meta.since} ({meta.status})"]
    if meta.opt_in:
        facts.append("Opt-in: runs only when selected by id, slug or prefix")
    text = f"# {meta.name} ({meta.code})\n\n" + " · ".join(facts) + "\n\n" + meta.doc
    if meta.defaults:
        text += "\n\nDefaults: " + ", ".join(f"{k} = {v!r}" for k, v in meta.defaults.items())
    return text
