"""What is derived from one view, computed once per view.

Views (a workload, a pod template, a container) are read-only, so what a model helper derives
from one alone never changes, and several rules ask for the same thing. :func:`once` keeps it in
the view's own memo (a Workload's ``_memo``, a Container's ``_sections``, a pod template's
``__dict__``), so it lives exactly as long as the view (see ``Workload.dispose``).
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

T = TypeVar("T")


def once(view: Any, key: Any, build: Callable[[], T]) -> T:
    """``build()``, computed once per ``view`` and ``key`` (the key names the helper and every
    other input the result depends on). A view with no memo (a test's stand-in) gets
    ``build()`` each time."""
    store = _store(view)
    if store is None:
        return build()
    try:
        return store[key]
    except KeyError:
        value = store[key] = build()
        return value


_STORES: dict[type, str | None] = {}  # view class -> the attribute its memo is


def _store(view: Any) -> dict | None:
    kind = type(view)
    name = _STORES.get(kind, "")
    if name == "":
        name = _STORES[kind] = next((n for n in ("_memo", "_sections", "__dict__")
                                     if isinstance(getattr(view, n, None), dict)), None)
    return getattr(view, name) if name is not None else None
