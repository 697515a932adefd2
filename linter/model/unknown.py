"""A value a shell script does not determine: :data:`UNKNOWN`, and the one test of a value as written.

A value that the script leaves open (``$(...)``, backticks, a variable it never assigns, ``$1``,
a ``<placeholder>`` pasted from documentation) is :data:`UNKNOWN`, never a guess: test with
``value is UNKNOWN`` (or :func:`is_known`), not with truthiness. Kept apart from the script
model (:mod:`linter.model.azcli`, which re-exports it) so that the cluster model, which reads
values but not scripts, can be imported without it: a project with no script never loads it.
"""

from __future__ import annotations

from typing import Final

from mlops_lint.model.placeholder import has_placeholder


class Unknown:
    """The type of :data:`UNKNOWN` (a single instance)."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self) -> str:  # pickles (``--jobs``) back to the same singleton
        return "UNKNOWN"


UNKNOWN: Final = Unknown()
Value = str | Unknown


def is_known(value: object) -> bool:
    return value is not UNKNOWN


def is_placeholder(value: object) -> bool:
    """A value pasted from documentation that the reader fills in (``<resource-group>``,
    ``your-cluster``, ``REPLACE_ME``, ``pool-<n>``; the text is kept as written): the one
    placeholder test, :func:`linter.model.placeholder.has_placeholder`."""
    return has_placeholder(value)


def resolved(value: Value) -> Value:
    """The value if the script determines it, else UNKNOWN (``$(...)``, ``<placeholder>``, ``your-…``)."""
    return UNKNOWN if value is UNKNOWN or is_placeholder(value) else value
