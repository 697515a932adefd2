"""Which of a project's cluster-wide statements go with a manifest (GPU011, GPU012, STO010).

Cross-file rules judge a project as one cluster (SPEC section 2): a ClusterPolicy's MIG strategy,
a mig-parted config or a cluster definition applies to every workload of the project. That holds
when the project is one: its root is a git work tree or holds a config file (``.mlops-lint.yaml``,
``[tool.mlops-lint]``, or the ``--config`` given). A folder that is neither, named on the command
line (``mlops-lint path/to/corpus``, a folder of repositories copied side by side, with no ``.git``
and no config) is not known to describe one cluster: there each folder directly under the top of
the project's files (the deepest folder holding all of them and the
facts a rule combines) is a *unit* of its own, and a
statement governs only the manifests of its unit. A statement in a file directly in the top
governs every unit, and a manifest directly in the top is governed by every statement.

Nothing here reads a file: the units come from the paths of the facts a rule combines (one
``commonpath`` per call) and one ``stat`` of the root's ``.git`` (memoised on the index).
"""

from __future__ import annotations

import os
import posixpath
from typing import Any, Callable, Iterable

ONE = ""  # the unit of a file that governs, and is governed by, every unit


def _declared(config: Any) -> bool:
    """Whether the project root is one project by the user's word: a config file, or a git top."""
    if getattr(config, "path", None) is not None:
        return True
    root = getattr(config, "root", None)
    return root is not None and os.path.exists(os.path.join(root, ".git"))


def _common(folders: Iterable[str]) -> str | None:
    """The deepest folder holding every one of ``folders`` (None: none, or they share none)."""
    folders = sorted(set(folders))
    if not folders:
        return None
    try:
        return posixpath.commonpath(folders)
    except ValueError:  # absolute and relative paths mixed: no common top
        return None


def unit_of(index: Any, config: Any, paths: Iterable[str]) -> Callable[[str], str]:
    """The ``path -> unit`` function for the files ``paths`` a rule combines (:data:`ONE` for
    every path of a declared project). The top is the deepest folder holding those files and
    every document of the project's index (memoised per run): the same units whichever facts a
    rule combines."""
    memo = index.memo if hasattr(index, "memo") else (lambda key, build: build())
    declared, indexed = memo(("locality", id(config)), lambda: (
        _declared(config), _common(posixpath.dirname(d.path) for d in getattr(index, "documents", ()))))
    if declared:
        return lambda path: ONE
    top = _common([*(posixpath.dirname(p) for p in paths), *([indexed] if indexed is not None else [])])
    if top is None:
        return lambda path: ONE
    prefix = "" if top in ("", ".") else top.rstrip("/") + "/"

    def unit(path: str) -> str:
        if prefix and not path.startswith(prefix):
            return ONE  # outside the top (not one of the paths given): governs all
        head, slash, _ = path[len(prefix):].partition("/")
        return head if slash else ONE

    return unit


def together(unit: Callable[[str], str], statement: str, manifest: str) -> bool:
    """Whether a statement written in file ``statement`` governs the manifest in file ``manifest``."""
    first, second = unit(statement), unit(manifest)
    return first == ONE or second == ONE or first == second
