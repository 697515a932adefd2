"""Loading the ``cel`` package (common-expression-language) for :mod:`linter.cel` and its
libraries: kept apart from both so that neither imports the other to get it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any


def engine() -> Any:
    """The ``cel`` package (common-expression-language) without its command line. The package's
    ``__init__`` imports ``cel.cli``, which imports prompt_toolkit: 0.12-0.35 s, more than every CEL
    rule of the perf corpus costs (bench/run.py's CEL share). So the package is set up as its
    ``__init__`` does, from the extension and ``cel.stdlib``, leaving ``cel.cli`` to be imported
    only by who asks for it; ``import cel`` elsewhere then gets this package."""
    found = sys.modules.get("cel")
    if found is not None and hasattr(found, "compile"):
        return found
    spec = importlib.util.find_spec("cel")
    if spec is None or spec.submodule_search_locations is None:
        import cel  # not the package this module knows: as it is

        return cel
    package = importlib.util.module_from_spec(spec)
    sys.modules["cel"] = package
    try:
        extension = importlib.import_module("cel.cel")
        for name in getattr(extension, "__all__", None) or [n for n in dir(extension) if not n.startswith("_")]:
            setattr(package, name, getattr(extension, name))
        package.cel = extension
        package.stdlib = importlib.import_module("cel.stdlib")
    except BaseException:
        sys.modules.pop("cel", None)
        sys.modules.pop("cel.cel", None)
        raise
    return package
