"""Whether any installed distribution may declare a rule plugin, decided without importlib.metadata.

``importlib.metadata.entry_points()`` imports ``email``, ``zipfile``, ``csv`` and ``pathlib``
helpers and parses every installed distribution's metadata: about 15-25 ms, more than the rest of
a one-file run's registry. Almost every environment has no plugin: the only declaration of the
``mlops_lint.rules`` group is mlops-lint's own ``builtin = rules``. This module proves that cheaply
by reading the same files importlib.metadata would read (``*.dist-info`` and ``*.egg-info``
folders in each ``sys.path`` entry, their ``entry_points.txt``), and only those that mention the
group name at all. Whenever it cannot prove it (a zip or ``.egg`` on the path, a meta path finder
with its own ``find_distributions``, an entry it cannot parse as importlib.metadata would, or a
real plugin), the registry asks importlib.metadata itself, so the outcome is always the same.
"""

from __future__ import annotations

import os
import sys

GROUP = "mlops_lint.rules"
BUILTIN = "mlops_lint.rules"  # the value of mlops-lint's own entry point, loaded first by the registry


def _group_values(text: str) -> list[str] | None:
    """The values of ``GROUP``'s entry points, parsed as importlib.metadata's ``Sectioned``
    does; None for a line it would fail on."""
    values = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section == GROUP:
            if "=" not in line:
                return None
            values.append(line.split("=", 1)[1].strip())
    return values


def _only_builtin(info_dir: str) -> bool:
    try:
        with open(os.path.join(info_dir, "entry_points.txt"), "rb") as handle:
            data = handle.read()
    except OSError:
        return True  # importlib.metadata reads no entry points from it either
    if GROUP.encode() not in data:
        return True
    try:
        values = _group_values(data.decode("utf-8"))
    except UnicodeDecodeError:
        return False
    return values is not None and all(value == BUILTIN for value in values)


def _standard_finders_only() -> bool:
    """True when ``sys.path`` is the only place distributions are looked for."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is PathFinder:
            continue
        if getattr(finder, "find_distributions", None) is not None:
            return False
    return True


def may_have_plugins() -> bool:
    """False only when no installed distribution declares a ``mlops_lint.rules`` entry point
    other than the built-in one (so importlib.metadata would find none)."""
    if not _standard_finders_only():
        return True
    for entry in sys.path:
        root = os.fspath(entry) if isinstance(entry, os.PathLike) else entry
        if not isinstance(root, str):
            return True
        root = root or "."
        if os.path.basename(root).lower().endswith(".egg"):
            return True  # EGG-INFO folders: importlib.metadata's own business
        try:
            children = os.listdir(root)
        except FileNotFoundError:
            continue
        except NotADirectoryError:
            return True  # a zip archive on the path
        except OSError:
            if os.path.isfile(root):
                return True
            continue
        for child in children:
            if (child.lower().endswith((".dist-info", ".egg-info")) and child.split("-")[0].split(".")[0] != "mlops_lint"
                    and not _only_builtin(os.path.join(root, child))):
                return True
    return False
