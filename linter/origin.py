"""Where mlops-lint's own code comes from: its installation, never the tree it lints.

A CI gate runs on a pull request's tree, so a file there must not be imported. Python puts the
current folder first on ``sys.path`` for ``python -m linter`` (and ``PYTHONPATH=.`` or ``''``
does for the command too), where ``yaml.py``, ``rules/__init__.py`` or an
``evil-1.0.dist-info/entry_points.txt`` declaring a rule plugin would be found before the real
ones. :func:`isolate`, the first thing both entry points do, takes the current folder and every
relative entry off ``sys.path`` (the folder mlops-lint itself was loaded from stays), as Python's
``-P`` / ``PYTHONSAFEPATH`` would; rule plugins are then found only among installed
distributions.

The built-in rules are the ``rules`` package beside the ``linter`` package, loaded from that
location (:func:`rules_package`), not by whatever ``import rules`` finds first: a third-party
distribution that also installs a top-level ``rules`` package elsewhere on the path changes
nothing. One that overwrote mlops-lint's own files (both installed into the same folder) is
named in the error, with how to fix it.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

MARKER = "__mlops_lint_builtin_rules__"  # set by mlops-lint's own rules/__init__.py


def _own_root() -> str:
    """The folder holding the ``linter`` package (site-packages, or a checkout)."""
    import linter

    return os.path.dirname(os.path.dirname(os.path.abspath(linter.__file__)))


def isolate() -> None:
    """Take the current folder and relative entries off ``sys.path``, except mlops-lint's own."""
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # a working folder that was removed: nothing can be imported from it anyway
        cwd = None
    own = os.path.realpath(_own_root())
    kept = []
    for entry in sys.path:
        if not isinstance(entry, str):
            kept.append(entry)
            continue
        if not entry or not os.path.isabs(entry):
            continue  # '' or '.': whatever folder the process is in
        resolved = os.path.realpath(entry)
        if resolved == cwd and resolved != own:
            continue
        kept.append(entry)
    sys.path[:] = kept


def rules_package() -> ModuleType:
    """mlops-lint's built-in ``rules`` package, loaded from beside ``linter``."""
    from linter.rule import RegistryError

    folder = os.path.join(_own_root(), "rules")
    init = os.path.join(folder, "__init__.py")
    module = sys.modules.get("rules")
    if module is not None and getattr(module, MARKER, False) and _same(getattr(module, "__file__", None), init):
        return module
    if module is not None:  # another `rules` imported before: ours replaces it (and its submodules)
        for name in [n for n in sys.modules if n == "rules" or n.startswith("rules.")]:
            del sys.modules[name]
    import importlib.util

    spec = importlib.util.spec_from_file_location("rules", init, submodule_search_locations=[folder])
    if spec is None or spec.loader is None or not os.path.isfile(init):
        raise RegistryError(_clash(folder, "is missing"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["rules"] = module
    try:
        spec.loader.exec_module(module)
    except Exception:
        del sys.modules["rules"]
        raise
    if not getattr(module, MARKER, False):
        del sys.modules["rules"]
        raise RegistryError(_clash(folder, "is not mlops-lint's"))
    return module


def _same(a: str | None, b: str) -> bool:
    try:
        return a is not None and os.path.samefile(a, b)
    except OSError:
        return False


def _clash(folder: str, what: str) -> str:
    others = claimants("rules")
    named = (f"; installed there by {', '.join(others)}" if others else "")
    return (f"the built-in rules package {folder} {what}{named}: another distribution with a top-level `rules` "
            "package overwrote mlops-lint's; install mlops-lint in its own virtual environment (or pipx), or "
            "uninstall the other distribution and reinstall mlops-lint")


def claimants(package: str) -> list[str]:
    """The installed distributions (other than mlops-lint) whose RECORD lists files of the
    top-level ``package``: only asked when something is already wrong, so never on a normal run."""
    found = []
    for entry in sys.path:
        if not isinstance(entry, str) or not os.path.isdir(entry):
            continue
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info") or name.lower().startswith(("mlops_lint-", "mlops-lint-")):
                continue
            try:
                with open(os.path.join(entry, name, "RECORD"), encoding="utf-8", errors="replace") as handle:
                    if any(line.startswith(f"{package}/") for line in handle):
                        found.append(name[: -len(".dist-info")].replace("_", "-").rsplit("-", 1)[0])
            except OSError:
                continue
    return sorted(set(found))
