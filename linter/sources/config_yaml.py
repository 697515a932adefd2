"""A YAML config's text as plain data: ruamel.yaml's round-trip tree (YAML 1.2, as the config is
read) turned into dicts, lists and scalars with each key's position, after a check that aliases
do not expand it past :data:`MAX_CONFIG_VALUES` values (an alias bomb). :mod:`linter.config`
reads its files so, and :mod:`linter.sources.config_pools` the node pools of the linted config's
text (:func:`node_pools_in`).
"""

from __future__ import annotations

from typing import Any


# Values aliases may add to a config (each alias counted as a copy of what its anchor holds): far
# above any real config, far below what a 350-byte alias bomb expands to (billions; 60-92 s and
# 3.1 GB before). A large config without aliases costs what its size costs and is read.
MAX_CONFIG_VALUES = 100_000


def _written_size(node: Any, seen: set[int]) -> int:
    """How many values ``node`` holds as written: an alias (a node met again) counts as one."""
    if not isinstance(node, (dict, list)):
        return 1
    if id(node) in seen:
        return 1
    seen.add(id(node))
    children = node.values() if isinstance(node, dict) else node
    return 1 + sum(_written_size(child, seen) for child in children)


def _expanded_size(node: Any, memo: dict[int, int], active: set[int], limit: int) -> int:
    """How many values ``node`` holds with every alias copied out (at most ``limit + 1``),
    counted once per distinct node (an alias is the same object as its anchor), so nothing is
    expanded to count it."""
    if not isinstance(node, (dict, list)):
        return 1
    key = id(node)
    if key in memo:
        return memo[key]
    if key in active:  # a recursive alias: infinitely many values
        return limit + 1
    active.add(key)
    children = node.values() if isinstance(node, dict) else node
    size = 1 + sum(_expanded_size(child, memo, active, limit) for child in children)
    active.discard(key)
    memo[key] = size = min(size, limit + 1)
    return size


def alias_growth_too_large(data: Any) -> bool:
    """Whether aliases add more than MAX_CONFIG_VALUES values to the config as written."""
    written = _written_size(data, set())
    return _expanded_size(data, {}, set(), written + MAX_CONFIG_VALUES) > written + MAX_CONFIG_VALUES


def plain(node: Any, path: tuple, positions: dict[tuple, tuple[int, int]]) -> Any:
    """ruamel round-trip data to plain Python, recording 1-based key positions by path."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        result = {}
        for key, value in node.items():
            try:
                line, col = node.lc.key(key)
                positions[path + (key,)] = (line + 1, col + 1)
            except (KeyError, TypeError):
                pass
            result[str(key) if not isinstance(key, str) else key] = plain(value, path + (key,), positions)
        return result
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            try:
                line, col = node.lc.item(index)
                positions[path + (index,)] = (line + 1, col + 1)
            except (KeyError, TypeError, IndexError):
                pass
            items.append(plain(value, path + (index,), positions))
        return items
    if hasattr(node, "value") and type(node).__module__.startswith("ruamel"):
        return node.value if not isinstance(node, str) else str(node)
    if isinstance(node, str):
        return str(node)
    return node


def node_pools_in(text: str) -> list[dict[str, Any]] | None:
    """The ``node-pools:`` entries of a YAML config's text, read as :func:`linter.config.load_config` reads them
    (ruamel.yaml, YAML 1.2, plain data), for the linted config file
    (:mod:`linter.sources.config_pools`: a fix run lints the text its fixes leave, which the
    config loaded before the run does not hold); None when the text does not read as a config
    whose ``node-pools`` is a list of mappings."""
    import ruamel.yaml
    from ruamel.yaml.error import YAMLError

    yaml = ruamel.yaml.YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        data = yaml.load(text)
        if data is None or alias_growth_too_large(data):
            return None
        found = plain(data, (), {})
    except (YAMLError, RecursionError, ValueError, TypeError):
        return None
    pools = found.get("node-pools") if isinstance(found, dict) else None
    if not isinstance(pools, list) or not all(isinstance(pool, dict) for pool in pools):
        return None
    return pools
