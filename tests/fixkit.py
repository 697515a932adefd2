"""Test-only rules that propose fixes (TST001-TST003), for testing the engine's fix flow apart
from the real rules' plans: each yields a ``Replace`` at a span the loader gave, which any
``resolve`` turns into one edit at that span."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

from linter.fix import Plan, Replace
from linter.model.tree import YMap
from linter.rule import OBJECT, Finding, RuleMeta


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


TEST_RULES = (_meta("TST001", "fixme-label", fixme), _meta("TST002", "fixme-label-too", fixme_too),
              _meta("TST003", "grow-label", grows), _meta("TST004", "break-label", breaks))


def registry_with_test_rules() -> Any:
    from linter.registry import Registry, load_registry

    base = load_registry()
    return dataclasses.replace(base, rules=tuple(sorted((*base.rules, *TEST_RULES), key=lambda m: m.code)))


def standin_resolve(plan: Any, text: str, path: str) -> Any:
    """What any resolve makes of Replace intents: one edit each at its span (used only while
    linter.fix.resolve is not there)."""
    from linter.fix import Edit, Fix

    edits = []
    for intent in plan.intents:
        if not isinstance(intent, Replace):
            return None
        edits.append(Edit(path, intent.span, intent.text))
    return Fix(plan.title, tuple(sorted(edits, key=lambda e: e.span)), plan.safe)


def install_resolve(monkeypatch: Any) -> None:
    """Make ``linter.fix.resolve`` importable: the real one, else the stand-in above."""
    import sys
    import types

    try:
        import linter.fix.resolve  # noqa: F401
    except ImportError:
        module = types.ModuleType("linter.fix.resolve")
        module.resolve = standin_resolve  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "linter.fix.resolve", module)


def install_apply(monkeypatch: Any) -> None:
    """Make ``linter.fix.apply`` importable: the real one, else a stand-in (offsets at LF lines;
    first fix by position wins; "\\n" written as the text's first line break)."""
    import sys
    import types

    try:
        import linter.fix.apply  # noqa: F401
        return
    except ImportError:
        pass

    def offset(text: str, line: int, col: int) -> int:
        starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        if not 1 <= line <= len(starts):
            raise ValueError("outside the text")
        return starts[line - 1] + col - 1

    def apply_edits(text: str, edits: Any) -> str:
        newline = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
        placed = sorted((offset(text, e.span.line, e.span.col), offset(text, e.span.end_line, e.span.end_col), e.text)
                        for e in edits)
        out, last = [], 0
        for start, end, new in placed:
            if start < last:
                raise ValueError("overlap")
            out += [text[last:start], new.replace("\n", newline)]
            last = end
        return "".join(out) + text[last:]

    def select_non_overlapping(fixes: Any) -> tuple[list, list]:
        taken: list = []
        chosen, deferred = [], []
        for fix in fixes:
            ranges = [(e.span[:2], e.span[2:]) for e in fix.edits]
            if any(a0 < b1 and b0 < a1 or a0 == b0 for a0, a1 in ranges for b0, b1 in taken):
                deferred.append(fix)
            else:
                taken += ranges
                chosen.append(fix)
        return chosen, deferred

    module = types.ModuleType("linter.fix.apply")
    module.apply_edits = apply_edits  # type: ignore[attr-defined]
    module.select_non_overlapping = select_non_overlapping  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "linter.fix.apply", module)
