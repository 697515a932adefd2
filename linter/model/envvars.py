"""Environment variables as the kubelet hands them to a container, written once.

A variable is one of three things as far as a manifest can tell:

- a **literal**: the last ``env`` entry of that name has a ``value`` (or none, which Kubernetes
  passes as the empty string); YAML scalars count as the strings the API server keeps
  (``1`` and ``"1"`` are the same value);
- **unset**: no ``env`` entry names it and nothing else could set it;
- **unknown**: its value comes from ``valueFrom`` (a Secret, ConfigMap, field or resource), it
  refers to another variable (``$(OTHER)``), or the container has ``envFrom``, which may or may
  not define it. Rules neither treat an unknown variable as set nor as unset.

``env`` wins over ``envFrom``, and the last ``env`` entry of a name wins (the kubelet builds the
environment in order). Besides the manifest's own fields, two places commonly set variables and
are read here: ``mpirun -x NAME[=VALUE]`` in an exec-form ``command``/``args`` (Open MPI exports
NAME to every rank) and a shell script in ``command``/``args`` that mentions the name (``export
NCCL_SOCKET_IFNAME=eth0 && torchrun …``), which makes a variable the manifest leaves unset unknown.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from msgspec import Struct

from mlops_lint.model.k8s import Container, EnvVar
from mlops_lint.model.position import Span
from mlops_lint.model.selectors import label_value

LITERAL = "literal"
UNSET = "unset"
UNKNOWN = "unknown"

# $(VAR) is expanded by the kubelet; $$(VAR) is an escaped literal "$(VAR)".
_REFERENCE = re.compile(r"(?<!\$)\$\([A-Za-z_][A-Za-z0-9_.-]*\)")


class EnvSetting(Struct, frozen=True):
    """What a container's environment holds for one name."""

    name: str
    state: str  # LITERAL | UNSET | UNKNOWN
    value: str | None = None  # the literal, for LITERAL
    var: EnvVar | None = None  # the effective ``env`` entry, when there is one
    span: Span | None = None  # where the value (or the entry) is written
    reason: str = ""  # why it is UNKNOWN, or where a LITERAL came from

    @property
    def is_literal(self) -> bool:
        return self.state == LITERAL

    @property
    def is_unset(self) -> bool:
        return self.state == UNSET

    @property
    def is_unknown(self) -> bool:
        return self.state == UNKNOWN


def env_string(value: Any) -> str:
    """A YAML scalar as the string Kubernetes passes (``None`` is the empty string)."""
    return label_value(value)


def has_env_from(container: Container) -> bool:
    items = container.body.get_seq("envFrom")
    return bool(items)


def resolve(container: Container, name: str) -> EnvSetting:
    """The effective value of ``name`` from the container's own ``env`` and ``envFrom``."""
    var = container.env_value(name)
    if var is not None:
        if var.from_ref:
            return EnvSetting(name, UNKNOWN, None, var, var.span, "valueFrom")
        value = env_string(var.value)
        if _REFERENCE.search(value):
            return EnvSetting(name, UNKNOWN, None, var, var.value_span, "a $(…) reference")
        return EnvSetting(name, LITERAL, value, var, var.value_span, "env")
    if has_env_from(container):
        return EnvSetting(name, UNKNOWN, reason="envFrom")
    return EnvSetting(name, UNSET)


# ---------------------------------------------------------------------------------------------
# command and args


def _command_items(container: Container) -> Iterator[tuple[str, int, Any]]:
    """(field, index, item) of every ``command`` then ``args`` item."""
    for field in ("command", "args"):
        items = container.body.get_seq(field)
        for index, item in enumerate(items if items is not None else ()):
            yield field, index, item


@lru_cache(maxsize=256)
def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


def command_mentions(container: Container, name: str) -> bool:
    """Whether ``command``/``args`` mention ``name`` as a whole word (a script may set it)."""
    pattern = _word(name)
    return any(isinstance(item, str) and pattern.search(item) for _, _, item in _command_items(container))


class Export(Struct, frozen=True):
    """One ``-x NAME[=VALUE]`` of an exec-form ``mpirun`` command line."""

    name: str
    value: str | None  # None: ``-x NAME`` exports the launcher's own value
    span: Span
    path: tuple[str | int, ...]


def mpirun_exports(container: Container) -> list[Export]:
    """``-x NAME=VALUE`` / ``-x NAME`` pairs in the exec-form ``command`` and ``args`` lists."""
    found: list[Export] = []
    for field in ("command", "args"):
        items = container.body.get_seq(field)
        if items is None:
            continue
        for index in range(len(items) - 1):
            if items[index] != "-x" or not isinstance(items[index + 1], str):
                continue
            name, sep, value = items[index + 1].partition("=")
            if name:
                found.append(Export(name, value if sep else None, items.item_span(index + 1),
                                    container.path + (field, index + 1)))
    return found
