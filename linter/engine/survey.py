"""The survey: every file read once up front, for its size (to share work out), its content hash
(for the cache) and whether it is *shared*: its text mentions a cross-file kind
(``linter.refkinds.REFERENCE_KINDS``) or, for a script, may describe node pools (it mentions
``aks``). Only shared files are parsed before the index exists (:mod:`linter.engine.passes`); a
textual mention is a superset of an object of that kind, so deciding from it is always safe.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from msgspec import Struct

from mlops_lint.discover import SourceFile
from mlops_lint.model.document import BICEP, CONFIG, K8S, SHELL, TERRAFORM
from mlops_lint.sources.arm import is_template as _arm_template
from mlops_lint.sources.files import Unreadable, read_source


class Survey(Struct):
    source: SourceFile
    display: str
    size: int
    digest: str | None = None  # of the bytes (read only when the cache is on); None if unread
    shared: bool = False  # its text mentions a reference kind (see mentions)
    data: bytes | None = None  # what was read, until the first pass takes it


def content_digest(data: bytes) -> str:
    from mlops_lint.digest import digest

    return digest(data)


def cache_key(*parts: object) -> str:
    """A cache key of ``parts``."""
    from mlops_lint.digest import digest_text

    return digest_text(*parts)


@lru_cache(maxsize=2)
def _reference_pattern(binary: bool) -> Any:
    """One regular expression for every reference kind's name (one C-speed scan of a text), and
    the escapes that could spell one inside a double-quoted scalar."""
    import re

    from mlops_lint.refkinds import REFERENCE_KINDS

    names = "|".join(sorted(REFERENCE_KINDS, key=lambda name: (-len(name), name)))
    # after a backslash: x, u, U, or a line break (LF, CR, NEL, LS, PS) escaped away
    escapes = "|".join(re.escape(c) for c in ("x", "u", "U", "\n", "\r", "\x85", "\u2028", "\u2029"))
    pattern = rf"{names}|\\(?:{escapes})"
    return re.compile(pattern.encode() if binary else pattern)


@lru_cache(maxsize=2)
def _commented(binary: bool) -> Any:
    """A line's text before a mention that puts the mention inside a comment (see mentions_in)."""
    import re

    pattern = r"(?:^|[ \t])#"
    return re.compile(pattern.encode() if binary else pattern)


def mentions_in(text: Any) -> bool:
    """Whether ``text`` (str or bytes) may hold an object of a reference kind: it names one
    outside a comment, or has an escape that could spell one.

    A kind is a scalar, and scalars are never in comments. A mention is in a comment when, on its
    line, it follows a ``#`` that starts the line or follows a blank, with no quote before it:
    such a ``#`` starts a comment unless it is inside a quoted scalar begun on an earlier line
    or a block scalar, and then the mention is inside that scalar too, whose value holds the
    ``#`` and so is no kind's name (leaving the scalar takes a closing quote, which the line
    would show). A kind's letters can come from the escapes ``\\x``, ``\\u``, ``\\U`` and an
    escaped line break in a double-quoted scalar; a text with any of them counts as a mention."""
    binary = isinstance(text, bytes)
    newline, hash_, quote, double = (b"\n", b"#", b"'", b'"') if binary else ("\n", "#", "'", '"')
    search, commented = _reference_pattern(binary).search, _commented(binary).search
    position = 0
    while (match := search(text, position)) is not None:
        start = match.start()
        before = text[text.rfind(newline, 0, start) + 1:start]
        if hash_ not in before or quote in before or double in before or commented(before) is None:
            return True
        position = text.find(newline, start)  # the rest of the line is the same comment
        if position < 0:
            return False
    return False


def mentions(data: bytes, kind: str) -> bool:
    """Whether a file may hold an object of a reference kind (or, for a script, node pools).

    A textual mention is a superset of an object of that kind (UTF-16 text counts as a mention
    of everything), so deciding from it is always safe: only files that mention one are parsed
    before the index exists."""
    if kind == SHELL:
        # `az aks …` commands describe the cluster's node pools; NVIDIA's charts and manifests a
        # script installs (linter.model.installs) are cluster components: their names say so, as
        # KAITO's charts, azure-workload-identity's webhook chart and policy CNIs' charts do
        return b"aks" in data or b"gpu-operator" in data or b"device-plugin" in data or b"dcgm-exporter" in data \
            or b"kaito" in data or b"workload-identity-webhook" in data or b"cilium" in data \
            or b"calico" in data or b"tigera-operator" in data
    if kind in (TERRAFORM, BICEP, CONFIG):
        return True  # resources, variables and tfvars (a module is read whole), the config's node pools
    if kind != K8S:
        return False
    return b"\x00" in data or mentions_in(data) or _arm_template(data, ".json")  # an ARM template (its node pools)


def survey_files(items: list[tuple[SourceFile, str]], read: bool) -> list[Survey]:
    """Sizes (to share work out), and with ``read`` each file's hash and reference mention."""
    out = []
    for source, display in items:
        if not read:
            try:
                size = os.stat(source.path).st_size
            except OSError:
                size = 0
            out.append(Survey(source, display, size))
            continue
        try:
            data = read_source(source.path)
        except Unreadable:
            out.append(Survey(source, display, 0))
            continue
        out.append(Survey(source, display, len(data), content_digest(data), mentions(data, source.kind), data))
    return out
