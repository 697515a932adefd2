"""Where a comment stands: on a line of its own, or after code (shared by every source kind)."""

from __future__ import annotations

from msgspec.structs import replace

from linter.model.document import Comment


def place_comments(comments: list[Comment], lines: list[str], comment_char: str = "#") -> list[Comment]:
    """Fill ``own_line`` and ``next_line`` of each comment from the file's lines.

    ``next_line`` is the first later line that is neither blank nor a comment, so stacked
    directives above one line all govern it.
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
