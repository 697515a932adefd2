"""The fix invariant: a fix changes the data at the paths it targets and nowhere else.

``--fix`` edits text, not data, so an edit can change more than the node it was written for: a
key added to an anchored mapping changes every path that aliases it; a line inserted after a
``|`` block scalar that ends the file without a line break gives that string one. Before a pass's
fixes are kept, :func:`unexpected_change` parses the text before and after (libyaml, the loaders'
parser; aliases stay shared, never expanded) and compares the documents:

- the *targeted* paths are those of the nodes the edits wrote: a node of the new text that starts
  inside inserted text (a new key, item or value), and a node of the old text that a replaced
  range overlaps (a scalar rewritten, a null filled). Only a node's first occurrence counts, the
  one written there: an alias of it stands elsewhere in the text and was not edited;
- every other path must hold the same data before and after (same keys, same items, scalars
  with the same tag and value); a null or empty collection that a targeted path now fills counts
  as the empty collection it becomes.

It costs two parses of each file a pass changes, and nothing for any other file. YAML and JSON
only: Dockerfile and shell fixes replace words at spans the loaders gave and have no data tree.
"""

from __future__ import annotations

from typing import Any, Iterable

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_DEPTH = 300  # deeper than the loaders accept (linter.sources.yaml_k8s.MAX_DEPTH): not judged

Region = tuple[int, int, int, int]  # old start, old end, new start, new end (character offsets)


class _Deep(Exception):
    """Nesting beyond MAX_DEPTH: the texts are not judged."""


def unexpected_change(before: str, after: str, regions: Iterable[Region]) -> str | None:
    """Where ``after`` (``before`` with edits at ``regions``) differs from ``before`` outside
    the paths the edits target, as a path to show (``spec.containers[1].resources``), or None
    when it does not (or ``before`` is no YAML the check can read: nothing to hold it to)."""
    try:
        old = list(yaml.compose_all(before, Loader=_Loader))
    except (yaml.YAMLError, RecursionError):
        return None
    try:
        new = list(yaml.compose_all(after, Loader=_Loader))
    except (yaml.YAMLError, RecursionError):
        return "the text, which would no longer parse"
    if len(old) != len(new):
        return f"the number of documents ({len(old)} before, {len(new)} after)"
    regions = list(regions)
    replaced = [(b0, b1) for b0, b1, _, _ in regions if b1 > b0]
    inserted = [(a0, a1) for _, _, a0, a1 in regions if a1 > a0]
    try:
        targets: set[tuple] = set()
        for index, root in enumerate(old):
            _targets(root, (index,), lambda n: _overlaps(n, replaced), targets, set(), 0)
        written: set[tuple] = set()
        for index, root in enumerate(new):
            _targets(root, (index,), lambda n: _starts_in(n, inserted), written, set(), 0)
        # a node of the new text counts as written only where the old text had nothing (or a
        # null, or an empty collection) at its path: text inserted inside a value changes it
        targets.update(path for path in written if _empty_at(old, path))
        prefixes = {target[:cut] for target in targets for cut in range(1, len(target))}
        comparer = _Comparer(targets, prefixes)
        for index, (a, b) in enumerate(zip(old, new)):
            where = comparer.compare(a, b, (index,), 0)
            if where is not None:
                return _shown(where, len(old))
    except _Deep:
        return None
    return None


def _overlaps(node: Any, ranges: list[tuple[int, int]]) -> bool:
    """A scalar or an empty collection that a replaced range overlaps, or a collection it
    replaces whole (one with a replacement inside is not targeted whole: its other children
    are compared)."""
    start, end = node.start_mark.index, node.end_mark.index
    if node.__class__ is ScalarNode or not node.value:
        return any((b0 < end and start < b1) or (start == end and b0 <= start <= b1) for b0, b1 in ranges)
    return any(b0 <= start and end <= b1 for b0, b1 in ranges)


def _starts_in(node: Any, ranges: list[tuple[int, int]]) -> bool:
    start = node.start_mark.index
    return any(a0 <= start < a1 for a0, a1 in ranges)


def _key(node: Any) -> Any:
    if node.__class__ is ScalarNode:
        return node.tag, node.value
    return ("complex", id(node))


def _entries(node: MappingNode) -> dict[Any, tuple[Any, Any]]:
    """A mapping's entries by key (the last of duplicate keys wins, as the loaders read it)."""
    return {_key(k): (k, v) for k, v in node.value}


def _targets(node: Any, path: tuple, hit: Any, out: set[tuple], seen: set[int], depth: int) -> None:
    """The paths under ``node`` (first occurrences only) of the nodes ``hit`` accepts."""
    if depth > MAX_DEPTH:
        raise _Deep
    if id(node) in seen:
        return  # an alias: written elsewhere
    seen.add(id(node))
    if hit(node):
        out.add(path)
        return
    if node.__class__ is MappingNode:
        for key, (knode, vnode) in _entries(node).items():
            if hit(knode):
                out.add(path + (key,))
                continue
            _targets(vnode, path + (key,), hit, out, seen, depth + 1)
    elif node.__class__ is SequenceNode:
        for index, item in enumerate(node.value):
            _targets(item, path + (index,), hit, out, seen, depth + 1)


_NULL = "tag:yaml.org,2002:null"


def _empty(node: Any) -> bool:
    """A null, or an empty mapping or sequence: what a fix may fill."""
    if node.__class__ is ScalarNode:
        return node.tag == _NULL
    return not node.value


def _empty_at(roots: list[Any], path: tuple) -> bool:
    """Whether ``path`` holds nothing, a null or an empty collection in the documents ``roots``."""
    node = roots[path[0]]
    for step in path[1:]:
        if node.__class__ is MappingNode:
            entry = _entries(node).get(step)
            if entry is None:
                return True
            node = entry[1]
        elif node.__class__ is SequenceNode and isinstance(step, int):
            if step >= len(node.value):
                return True
            node = node.value[step]
        else:
            return _empty(node)
    return _empty(node)


class _Comparer:
    def __init__(self, targets: set[tuple], prefixes: set[tuple]):
        self.targets = targets
        self.prefixes = prefixes
        self.equal: dict[tuple[int, int], bool] = {}

    def compare(self, a: Any, b: Any, path: tuple, depth: int) -> tuple | None:
        """The first path under ``path`` where ``a`` and ``b`` differ outside the targets."""
        if depth > MAX_DEPTH:
            raise _Deep
        if path in self.targets:
            return None
        if path not in self.prefixes:
            return None if self.same(a, b, depth) else self.first_difference(a, b, path, depth)
        if a.__class__ is not b.__class__:
            if not (_empty(a) or _empty(b)):
                return path
        if MappingNode in (a.__class__, b.__class__):
            if (a.__class__ is not MappingNode and not _empty(a)) or (b.__class__ is not MappingNode and not _empty(b)):
                return path
            old = _entries(a) if a.__class__ is MappingNode else {}
            new = _entries(b) if b.__class__ is MappingNode else {}
            for key in list(old) + [k for k in new if k not in old]:
                inner = path + (key,)
                if key not in old or key not in new:
                    if inner not in self.targets:
                        return inner
                    continue
                where = self.compare(old[key][1], new[key][1], inner, depth + 1)
                if where is not None:
                    return where
            return None
        if SequenceNode in (a.__class__, b.__class__):
            if (a.__class__ is not SequenceNode and not _empty(a)) or (b.__class__ is not SequenceNode and not _empty(b)):
                return path
            old = a.value if a.__class__ is SequenceNode else []
            new = b.value if b.__class__ is SequenceNode else []
            for index in range(max(len(old), len(new))):
                inner = path + (index,)
                if index >= len(old) or index >= len(new):
                    if inner not in self.targets:
                        return inner
                    continue
                where = self.compare(old[index], new[index], inner, depth + 1)
                if where is not None:
                    return where
            return None
        return None if self.same(a, b, depth) else path

    def first_difference(self, a: Any, b: Any, path: tuple, depth: int) -> tuple:
        """The deepest path where two nodes that differ start to differ (for the note)."""
        while depth <= MAX_DEPTH and a.__class__ is b.__class__ and a.__class__ is not ScalarNode:
            if a.__class__ is MappingNode:
                old, new = _entries(a), _entries(b)
                if old.keys() != new.keys():
                    return path
                pairs = [(key, old[key][1], new[key][1]) for key in old]
            else:
                if len(a.value) != len(b.value):
                    return path
                pairs = list(zip(range(len(a.value)), a.value, b.value))
            for step, x, y in pairs:
                if not self.same(x, y, depth + 1):
                    a, b, path, depth = x, y, path + (step,), depth + 1
                    break
            else:
                return path
        return path

    def same(self, a: Any, b: Any, depth: int) -> bool:
        """Whether two nodes hold the same data (shared nodes compared once)."""
        if depth > MAX_DEPTH:
            raise _Deep
        cls = a.__class__
        if cls is not b.__class__:
            return False
        if cls is ScalarNode:
            return a.tag == b.tag and a.value == b.value
        pair = (id(a), id(b))
        known = self.equal.get(pair)
        if known is not None:
            return known
        self.equal[pair] = True  # a recursive alias compares equal to itself meanwhile
        if cls is MappingNode:
            old, new = _entries(a), _entries(b)
            result = old.keys() == new.keys() and all(self.same(old[k][1], new[k][1], depth + 1) for k in old)
        else:
            result = len(a.value) == len(b.value) and all(
                self.same(x, y, depth + 1) for x, y in zip(a.value, b.value))
        self.equal[pair] = result
        return result


def _shown(path: tuple, documents: int) -> str:
    """``spec.containers[1].resources`` (after ``document N: `` when there are several)."""
    out = ""
    for step in path[1:]:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            text = str(step[1]) if step[0] != "complex" else "?"
            out += ("." if out else "") + text
    out = out or "the document"
    return f"document {path[0] + 1}: {out}" if documents > 1 else out
