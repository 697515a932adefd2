"""What is derived from a read-only object, computed once per object.

Views (a workload, a pod template, a container), the project index, the cluster model, a
placement and the run's config never change once built, so what a helper or rule derives from
one (and from the inputs its key names) never changes either, and several rules ask for the same
thing. :func:`once` keeps it in the object's own memo (a ``_memo`` dict, a Container's
``_sections``, else its ``__dict__``), so it lives exactly as long as the object (see
``Workload.dispose``).
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

T = TypeVar("T")


def once(view: Any, key: Any, build: Callable[[], T]) -> T:
    """``build()``, computed once per ``view`` and ``key`` (the key names the helper and every
    other input the result depends on). An object with no memo (a test's stand-in with slots)
    gets ``build()`` each time."""
    name = _STORES.get(type(view), "")  # (_store's fast path inline: this runs some 30,000 times a run)
    if name:
        store = getattr(view, name)
    elif name == "":
        store = _store(view)  # a class not seen yet
    else:
        store = None
    if store is None:
        return build()
    try:
        return store[key]
    except KeyError:
        value = store[key] = build()
        return value


_STORES: dict[type, str | None] = {}  # class -> the attribute its memo is


def _store(view: Any) -> dict | None:
    kind = type(view)
    name = _STORES.get(kind, "")
    if name == "":
        name = _STORES[kind] = next((n for n in ("_memo", "_sections", "__dict__")
                                     if isinstance(getattr(view, n, None), dict)), None)
    return getattr(view, name) if name is not None else None
