"""Which rules a run calls: the config's and the command line's selectors, and the profile.

A file that cannot be read (SCH001 parse-error) and a rule that raised (LNT002 rule-error) are
reported whenever any rule runs, as ruff reports syntax errors whatever is selected: with
``--select GPU001`` alone, a broken file or a crashing GPU001 would otherwise end in "All checks
passed". Only ``ignore`` (the command line's, the config's) turns them off.
"""

from __future__ import annotations

from typing import Iterable

from mlops_lint.config import Config
from mlops_lint.registry import Registry
from mlops_lint.rule import RuleMeta

ALWAYS = ("SCH001", "LNT002")  # on whenever a rule runs, unless ignored: what the run could not check


def enabled_rules(registry: Registry, config: Config, select: Iterable[str] | None = None,
                  ignore: Iterable[str] = ()) -> list[RuleMeta]:
    """Rules that run: select (ALL = every rule that is not opt-in) minus ignore, minus the
    rules the profile turns off."""
    chosen: dict[str, RuleMeta] = {}
    for token in (list(select) if select is not None else list(config.select)):
        for meta in registry.resolve(token):
            if token.strip().upper() == "ALL" and meta.opt_in:
                continue
            chosen[meta.code] = meta
    if chosen:
        for code in ALWAYS:
            for meta in registry.resolve(code):
                chosen.setdefault(meta.code, meta)
    for token in [*config.ignore, *ignore]:
        for meta in registry.resolve(token):
            chosen.pop(meta.code, None)
    if config.profile == "aks-automatic":
        for code in list(chosen):
            # GPU005's fixed sku=gpu taint is the Standard recipe's; NAP002 judges NodePool taints there
            if code.startswith("AKS") or code in ("GPU005", "GPU006"):
                chosen.pop(code)
    return sorted((m for m in chosen.values() if m.status != "removed"), key=lambda m: m.code)
