"""The positioned data tree that YAML and JSON documents are loaded into.

Mappings and sequences are plain ``dict`` and ``list`` subclasses, so rules and views read them
with ordinary Python; each one also carries the spans of its own node, of each key and of each
value (like ruamel.yaml's ``lc``, but 1-based and filled by the fast C composer). Scalars are
plain Python values (``str``, ``int``, ``float``, ``bool``, ``None``): their spans live in the
parent container.
"""

from __future__ import annotations

from typing import Any, Iterator

from mlops_lint.model.position import Span

NO_SPAN = Span(1, 1, 1, 2)


class YMap(dict):
    """A mapping with positions: ``span`` of the node, ``kspans[key]``, ``vspans[key]``."""

    __slots__ = ("span", "kspans", "vspans")

    def __init__(self, span: Span = NO_SPAN):
        super().__init__()
        self.span = span
        self.kspans: dict[str, Span] = {}
        self.vspans: dict[str, Span] = {}

    def key_span(self, key: str) -> Span:
        """The span of ``key`` if present, else this mapping's own span."""
        return self.kspans.get(key, self.span)

    def value_span(self, key: str) -> Span:
        """The span of the value at ``key`` if present, else the key's or the mapping's."""
        return self.vspans.get(key) or self.key_span(key)

    def get_map(self, key: str) -> "YMap | None":
        value = self.get(key)
        return value if isinstance(value, YMap) else None

    def get_seq(self, key: str) -> "YSeq | None":
        value = self.get(key)
        return value if isinstance(value, YSeq) else None

    def get_str(self, key: str) -> str | None:
        value = self.get(key)
        return value if isinstance(value, str) else None

    def __reduce__(self):
        return (_rebuild_map, (self.span, self.kspans, self.vspans, dict(self)))


class YSeq(list):
    """A sequence with positions: ``span`` of the node and ``ispans[i]`` of each item."""

    __slots__ = ("span", "ispans")

    def __init__(self, span: Span = NO_SPAN):
        super().__init__()
        self.span = span
        self.ispans: list[Span] = []

    def item_span(self, index: int) -> Span:
        if 0 <= index < len(self.ispans):
            return self.ispans[index]
        return self.span

    def maps(self) -> Iterator[tuple[int, YMap]]:
        """The items that are mappings, with their index (other items are skipped)."""
        for index, item in enumerate(self):
            if isinstance(item, YMap):
                yield index, item

    def __reduce__(self):
        return (_rebuild_seq, (self.span, self.ispans, list(self)))


def _rebuild_map(span: Span, kspans: dict, vspans: dict, items: dict) -> YMap:
    node = YMap(span)
    node.update(items)
    node.kspans = kspans
    node.vspans = vspans
    return node


def _rebuild_seq(span: Span, ispans: list, items: list) -> YSeq:
    node = YSeq(span)
    node.extend(items)
    node.ispans = ispans
    return node


def dig(node: Any, *path: str | int) -> Any:
    """Follow ``path`` through mappings and sequences; ``None`` where it breaks off."""
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                return None
            node = node[step]
        else:
            if not isinstance(node, dict):
                return None
            node = node.get(step)
    return node


def frozen(value: Any) -> Any:
    """A hashable stand-in for a parsed value that tells apart what the API server tells apart
    (``1``, ``"1"`` and ``true`` are three values; a mapping is not a list of pairs): for keeping
    one answer per distinct selector, rule or policy instead of one per copy."""
    if isinstance(value, dict):
        return ("map", tuple(sorted(((frozen(k), frozen(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(frozen(v) for v in value))
    if isinstance(value, (str, int, float, bool, type(None))):
        return (type(value).__name__, value)
    return (type(value).__name__, repr(value))

