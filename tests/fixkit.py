"""Test-only rules that propose fixes (TST001-TST004), for testing the engine's fix flow apart
from the real rules' plans: each yields a ``Replace`` at a span the loader gave, which
``linter.fix.resolve`` turns into one edit at that span."""

from __future__ import annotations

import msgspec
from typing import Any, Iterator

from mlops_lint.fix import Plan, Replace
from mlops_lint.model.tree import YMap
from mlops_lint.rule import OBJECT, Finding, RuleMeta


def _label(obj: Any, name: str) -> tuple[Any, Any] | None:
    labels = obj.metadata.get("labels")
    if isinstance(labels, YMap) and name in labels:
        return labels[name], labels.vspans[name]
    return None


def fixme(obj: Any, ctx: Any) -> Iterator[Finding]:
    """TST001: label `fixme: bad` -> `"no"` (safe)."""
    found = _label(obj, "fixme")
    if found is not None and found[0] == "bad":
        yield Finding(found[1], "label fixme is bad", ("metadata", "labels", "fixme"), "set it to no",
                      autofix=Plan.safe_fix('set `fixme: "no"`', Replace(found[1], '"no"')))


def fixme_too(obj: Any, ctx: Any) -> Iterator[Finding]:
    """TST002: the same node as TST001, another value (unsafe): overlaps TST001's edit."""
    found = _label(obj, "fixme")
    if found is not None and found[0] == "bad":
        yield Finding(found[1], "label fixme is bad (2)", ("metadata", "labels", "fixme"), "set it to maybe",
                      autofix=Plan.unsafe_fix('set `fixme: "maybe"`', Replace(found[1], '"maybe"')))


def grows(obj: Any, ctx: Any) -> Iterator[Finding]:
    """TST003: label `grow` is never long enough: each fix adds an `x` (never converges)."""
    found = _label(obj, "grow")
    if found is not None:
        yield Finding(found[1], "label grow is short", ("metadata", "labels", "grow"),
                      autofix=Plan.safe_fix("grow it", Replace(found[1], f'"{found[0]}x"')))


def breaks(obj: Any, ctx: Any) -> Iterator[Finding]:
    """TST004: label `breakme` gets a value that does not parse (a broken fix, which --fix refuses)."""
    found = _label(obj, "breakme")
    if found is not None:
        yield Finding(found[1], "label breakme is set", ("metadata", "labels", "breakme"),
                      autofix=Plan.safe_fix("break it", Replace(found[1], "[unclosed")))


def _meta(code: str, name: str, func: Any) -> RuleMeta:
    return RuleMeta(code=code, name=name, severity="warning", scope=OBJECT, func=func, doc=func.__doc__ or "",
                    summary=func.__doc__ or "", module=__name__)


# the ConfigMap the test rules fix (TST001 sets `fixme` to "no"), with a comment a fix must keep
MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings  # a comment kept
  labels:
    fixme: bad
data: {}
"""

TEST_RULES = (_meta("TST001", "fixme-label", fixme), _meta("TST002", "fixme-label-too", fixme_too),
              _meta("TST003", "grow-label", grows), _meta("TST004", "break-label", breaks))


def registry_with_test_rules() -> Any:
    from mlops_lint.registry import load_registry

    base = load_registry()
    return msgspec.structs.replace(base, rules=tuple(sorted((*base.rules, *TEST_RULES), key=lambda m: m.code)))

