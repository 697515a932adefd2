"""Where mlops-lint's own code comes from: its installation, never the tree it lints.

A CI gate runs on a pull request's tree, so a file there must not be imported. Python puts the
current folder first on ``sys.path`` for ``python -m mlops_lint`` (and ``PYTHONPATH=.`` or ``''``
does for the command too), where ``yaml.py``, ``rules/__init__.py`` or an
``evil-1.0.dist-info/entry_points.txt`` declaring a rule plugin would be found before the real
ones. :func:`isolate`, the first thing both entry points do, takes the current folder and every
relative entry off ``sys.path`` (the folder mlops-lint itself was loaded from stays), as Python's
``-P`` / ``PYTHONSAFEPATH`` would; rule plugins are then found only among installed
distributions.

The built-in rules are the package ``mlops_lint.rules`` (:func:`rules_package`): everything of
mlops-lint installs in the one namespace ``mlops_lint`` (the repository's folders ``linter/``
and ``rules/``, mapped by pyproject.toml's ``package-dir``), so a third-party top-level ``linter``
or ``rules`` package (django-rules installs one) neither shadows it nor is shadowed by it.

Up the layers: ``mlops_lint.rules`` (:func:`rules_package` imports the built-in rules package by
its one name and checks its marker; nothing of the rules is used here).
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

MARKER = "__mlops_lint_builtin_rules__"  # set by mlops-lint's own rules/__init__.py


def _own_root() -> str:
    """The folder holding the ``linter`` package (site-packages, or a checkout)."""
    import mlops_lint

    return os.path.dirname(os.path.dirname(os.path.abspath(mlops_lint.__file__)))


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
    """mlops-lint's built-in rules, the package ``mlops_lint.rules``."""
    from mlops_lint.rule import RegistryError

    try:
        import mlops_lint.rules as module
    except ImportError as error:
        raise RegistryError(f"mlops-lint's built-in rules cannot be imported ({error}): reinstall mlops-lint") from None
    if not getattr(module, MARKER, False):
        raise RegistryError(f"{getattr(module, '__file__', None) or 'mlops_lint.rules'} is not mlops-lint's built-in "
                            "rules package: reinstall mlops-lint")
    return module

