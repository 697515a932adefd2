"""The rule index: the built-in rules' metadata, kept in the cache folder, so that a run imports
only the rule modules whose rules it calls.

Importing every rule module to read its ``@rule`` metadata is most of a one-file run: about 80
modules and the model modules they import (their classes and regexes). The metadata is a
pure function of the code, so the first run of a given tree crawls the rules package as before
(:func:`linter.registry.load_registry`) and stores what it found here; later runs build the same
:class:`~linter.rule.RuleMeta` values from it, each ``func`` (and ``collect``) a stand-in that
imports the rule's module the first time it is called and then puts the real function in its
place. A run whose results all come from the result cache imports no rule module at all.

Kept correct the way the result cache is (:mod:`linter.cache`): the index holds the signature
(path, size, mtime) of every file of the ``linter`` and ``rules`` packages, Python's version and
the tool's, and is used only when that signature is today's; anything else (no file, another
signature, a corrupt or foreign file) is a miss, and the crawl runs. It is written only when its
whole content reads back equal to what the crawl found (so a rule with an option type or default
the index cannot hold is never indexed), atomically, as JSON that builds data and nothing else
(:mod:`linter.cachedata`: builtin values, :class:`~linter.rule.Scope`, option types by name). Plugins (entry points) are never indexed. When a
stand-in imports its module, the module's own metadata must equal the index's, or it raises.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from msgspec.structs import force_setattr

from mlops_lint.cachedata import decode, dumps, encode, loads
from mlops_lint.rule import RegistryError, RuleMeta, Scope

FORMAT = 3  # 3: named .cache; 2: JSON (linter.cachedata); 1 was pickle
PREFIX = "rules-index-"  # + a checksum of the packages' folders: checkouts sharing a cache folder keep one each
_DEFERRED = ("func", "collect")  # the RuleMeta fields that are callables of the rule's module
_DATA = tuple(name for name in RuleMeta.__struct_fields__ if name not in _DEFERRED)


def _package_roots() -> list[str]:
    import mlops_lint
    from mlops_lint.origin import rules_package

    rules = rules_package()
    return [os.path.dirname(os.path.abspath(mlops_lint.__file__)), *[os.path.abspath(p) for p in rules.__path__]]


def path(folder: os.PathLike | str) -> str:
    """The index file of this installation in ``folder``."""
    import zlib

    return os.path.join(folder, f"{PREFIX}{zlib.crc32(chr(0).join(_package_roots()).encode('utf-8', 'surrogateescape')):08x}.cache")  # JSON, named as linter.cache names its files


def signature() -> tuple:
    """Everything the built-in rules' metadata can depend on: every file of the two packages."""
    from mlops_lint import __version__

    files = []
    for root in _package_roots():
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in names:
                file = os.path.join(folder, name)
                try:
                    info = os.stat(file)
                except OSError:
                    continue
                files.append((file, info.st_size, info.st_mtime_ns))
    return (FORMAT, __version__, sys.version, tuple(sorted(files)))


class _Deferred:
    """A rule's ``func`` or ``collect``: imports the rule's module when first called, checks its
    metadata against the index, and puts the real functions in the RuleMeta."""

    __slots__ = ("meta", "attr", "field")

    def __init__(self, attr: str, field: str):
        self.meta: RuleMeta | None = None
        self.attr = attr
        self.field = field

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(_resolve(self.meta, self.attr), self.field)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.field} of {self.meta.code if self.meta else '?'}, imported when first called>"


def _resolve(meta: RuleMeta | None, attr: str) -> RuleMeta:
    import importlib

    assert meta is not None
    if not isinstance(meta.func, _Deferred):
        return meta  # resolved by the other stand-in (func or collect)
    module = importlib.import_module(meta.module)
    real = getattr(getattr(module, attr, None), "__mlops_rule__", None)
    if not isinstance(real, RuleMeta) or any(getattr(real, n) != getattr(meta, n) for n in _DATA):
        raise RegistryError(f"{meta.code}: {meta.module} no longer matches the rule index; run again "
                            "(or with --no-cache)")
    for name in _DEFERRED:  # RuleMeta is frozen for rules, not for its own loader
        force_setattr(meta, name, getattr(real, name))
    return meta


def _entries(found: list[RuleMeta]) -> list[dict[str, Any]] | None:
    entries = []
    for meta in found:
        module = sys.modules.get(meta.module)
        if module is None or not meta.module.startswith("mlops_lint.rules."):
            return None
        names = [name for name, value in vars(module).items() if getattr(value, "__mlops_rule__", None) is meta]
        if len(names) != 1:
            return None
        entry = {name: getattr(meta, name) for name in _DATA}
        entry["attr"] = names[0]
        entry["collect"] = meta.collect is not None
        entries.append(entry)
    return entries


MAX_INDEX_BYTES = 64 << 20  # the index of the built-in rules is about 330 KB: a larger file is not read


def _key_data(key: tuple) -> Any:
    """The signature as JSON values (lists where it has tuples)."""
    return loads(dumps(key))


def write(folder: os.PathLike | str, key: tuple, found: list[RuleMeta]) -> None:
    """Store the crawl's built-in rules if they read back equal; never raises."""
    from pathlib import Path

    from mlops_lint.cachedata import write_entry

    try:
        entries = _entries(found)
        if entries is None:
            return
        data = dumps({"format": FORMAT, "key": _key_data(key), "rules": encode(entries)})
        back = decode(loads(data)["rules"])
        if back != entries or any(type(a[n]) is not type(b[n]) for a, b in zip(back, entries) for n in _DATA):
            return
        os.makedirs(folder, exist_ok=True)
        write_entry(Path(folder), os.path.basename(path(folder)), data, PREFIX)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is skipped
        return


def read(folder: os.PathLike | str, key: tuple) -> list[RuleMeta] | None:
    """The built-in rules from the index, or None when it is missing, stale, unreadable or not
    of the shape :func:`write` gives."""
    from pathlib import Path

    from mlops_lint.cachedata import read_entry

    try:
        data = read_entry(Path(path(folder)), MAX_INDEX_BYTES)
        if data is None:
            return None
        payload = loads(data)
        if type(payload) is not dict or payload.get("format") != FORMAT or payload.get("key") != _key_data(key):
            return None
        metas = []
        for entry in decode(payload["rules"]):
            if type(entry) is not dict or type(entry.get("attr")) is not str or type(entry.get("collect")) is not bool:
                return None
            func = _Deferred(entry["attr"], "func")
            collect = _Deferred(entry["attr"], "collect") if entry["collect"] else None
            meta = RuleMeta(func=func, collect=collect, **{name: entry[name] for name in _DATA})
            if not (type(meta.module) is str and meta.module.startswith("mlops_lint.rules.") and type(meta.code) is str
                    and type(meta.scope) is Scope and type(meta.options) is dict and type(meta.defaults) is dict):
                return None
            func.meta = meta
            if collect is not None:
                collect.meta = meta
            metas.append(meta)
        return metas
    except Exception:  # noqa: BLE001 - a cache that cannot be read is a miss
        return None


def module_file(name: str) -> str | None:
    """The source file of a rule module, imported or not (for the result cache's signature)."""
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    if file:
        return file
    if not name.startswith("mlops_lint.rules."):
        return None
    parts = name.split(".")[2:]  # mlops_lint.rules.<domain>.<module>, below the rules package's folder
    for root in _package_roots()[1:]:
        for candidate in (os.path.join(root, *parts) + ".py", os.path.join(root, *parts, "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
    return None
