"""The rule registry: collects ``@rule`` functions from rule packages and validates them.

Rule packages are the built-in ``rules`` package and any distribution that declares an
``mlops_lint.rules`` entry point (third-party packs, with their own code prefix). Codes follow
``^[A-Z]{2,4}[0-9]{3}$``, slugs are kebab-case, and a duplicate code or slug fails at load.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from types import ModuleType
from typing import Iterable

from msgspec import Struct

from mlops_lint.rule import RegistryError, RuleMeta

CODE_RE = re.compile(r"^[A-Z]{2,4}[0-9]{3}$")
SLUG_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
PREFIX_RE = re.compile(r"^[A-Z]{2,4}[0-9]{0,3}$")
GROUP_RE = re.compile(r"^[A-Z]{2,4}$")  # the letters of rule ids: a selector of their rules


class Registry(Struct, frozen=True):
    rules: tuple[RuleMeta, ...]  # sorted by code

    @property
    def by_code(self) -> dict[str, RuleMeta]:
        return {meta.code: meta for meta in self.rules}

    def get(self, token: str) -> RuleMeta | None:
        """A rule by code or slug (codes case-insensitive)."""
        upper, lower = token.strip().upper(), token.strip().lower()
        for meta in self.rules:
            if meta.code == upper or meta.name == lower or lower in meta.slugs:
                return meta
        return None

    def resolve(self, token: str) -> list[RuleMeta]:
        """Rules named by a selector: ``ALL``, a code, a slug, a family (``ml``, ``aks``, ``k8s``:
        :mod:`linter.families`) or a code's letters (``GPU``). A code cut short (``GPU01``) names
        nothing: it would quietly take GPU010 for a misspelt GPU001."""
        token = token.strip()
        upper = token.upper()
        if upper == "ALL":
            return list(self.rules)
        exact = self.get(token)
        if exact is not None:
            return [exact]
        from mlops_lint.families import FAMILIES

        if token.lower() in FAMILIES:
            return [meta for meta in self.rules if meta.family == token.lower()]
        if GROUP_RE.match(upper):
            return [meta for meta in self.rules if meta.code[:len(upper)] == upper and meta.code[len(upper)].isdigit()]
        return []

    def is_known_selector(self, token: str) -> bool:
        return bool(self.resolve(token))

    def with_rules(self, extra: Iterable[RuleMeta]) -> "Registry":
        """This registry with ``extra`` rules (a config's custom rules, :mod:`linter.custom`): a
        code or slug already taken is an error, as for built-in rules."""
        extra = list(extra)
        if not extra:
            return self
        return validate([*self.rules, *extra])

    def selector_hint(self, token: str) -> str:
        """What a selector that selects nothing may have meant, for its error: `` (did you mean
        GPU010 or GPU001, or GPU for every GPU rule?); a selector is …``."""
        from mlops_lint.families import FAMILIES
        from mlops_lint.suggest import close_matches

        upper = token.strip().upper()
        codes = [meta.code for meta in self.rules]
        guesses = [code for code in codes if code.startswith(upper)] if PREFIX_RE.match(upper) else []
        guesses += [g for g in close_matches(upper, codes, n=2, cutoff=0.6) if g not in guesses]
        if not guesses:
            words = [*FAMILIES, *(meta.name for meta in self.rules)]
            guesses = close_matches(token.strip().lower(), words, n=2, cutoff=0.6)
        hint = " or ".join(guesses[:3])
        group = upper.rstrip("0123456789")
        if group != upper and self.resolve(group):
            hint += f"{', or ' if hint else ''}{group} for every {group} rule"
        return ((f" (did you mean {hint}?)" if hint else "")
                + "; a selector is a rule id, a slug, a family (ml, aks, k8s), an id's letters (GPU) or ALL")


def _modules(package: ModuleType) -> Iterable[ModuleType]:
    yield package
    if hasattr(package, "__path__"):
        for info in sorted(pkgutil.walk_packages(package.__path__, package.__name__ + "."), key=lambda i: i.name):
            yield importlib.import_module(info.name)


def collect(modules: Iterable[ModuleType]) -> list[RuleMeta]:
    found: list[RuleMeta] = []
    for module in modules:
        for value in vars(module).values():
            meta = getattr(value, "__mlops_rule__", None)
            if isinstance(meta, RuleMeta) and meta.module == module.__name__:
                found.append(meta)
    return found


def validate(rules: list[RuleMeta]) -> Registry:
    codes: dict[str, RuleMeta] = {}
    slugs: dict[str, RuleMeta] = {}
    for meta in rules:
        if not CODE_RE.match(meta.code):
            raise RegistryError(f"{meta.module}: rule code {meta.code!r} does not match {CODE_RE.pattern}")
        for slug in (meta.name, *meta.slugs):
            if not SLUG_RE.match(slug):
                raise RegistryError(f"{meta.module}: rule slug {slug!r} is not kebab-case")
        if meta.code in codes:
            raise RegistryError(f"duplicate rule code {meta.code}: {codes[meta.code].module} and {meta.module}")
        for slug in (meta.name, *meta.slugs):
            if slug in slugs:
                raise RegistryError(f"duplicate rule slug {slug}: {slugs[slug].module} and {meta.module}")
        unknown = set(meta.defaults) - set(meta.options)
        if unknown:
            raise RegistryError(f"{meta.code}: defaults for undeclared options {sorted(unknown)}")
        if meta.requires:
            from mlops_lint.refkinds import REFERENCE_KINDS
            from mlops_lint.rule import PROJECT

            if meta.scope != PROJECT or not set(meta.requires) <= REFERENCE_KINDS:
                raise RegistryError(f"{meta.code}: `requires` is for PROJECT rules and must name kinds in "
                                    f"mlops_lint.refkinds.REFERENCE_KINDS, not {sorted(set(meta.requires) - REFERENCE_KINDS)}")
        if meta.collect is not None and meta.scope.name != "Project":
            raise RegistryError(f"{meta.code}: `collect` is for PROJECT rules")
        codes[meta.code] = meta
        slugs.update(dict.fromkeys((meta.name, *meta.slugs), meta))
    return Registry(tuple(sorted(rules, key=lambda m: m.code)))


def _entry_point_packages() -> list[ModuleType]:
    from mlops_lint.plugins import BUILTIN, may_have_plugins

    if not may_have_plugins():  # proven from the metadata files, without importlib.metadata
        return []
    from importlib.metadata import entry_points

    packages = []
    for point in entry_points(group="mlops_lint.rules"):
        if point.value == BUILTIN or _own(point):
            continue  # the built-in package is always loaded first
        packages.append(_load_plugin(point))
    return packages


OLD_NAMES = ("linter", "rules")  # mlops-lint's import names before the one namespace (issue 39)


def _own(point) -> bool:
    """An entry point of mlops-lint's own metadata: the built-in rules, whatever it names (an
    older install's ``builtin = rules``, left in a checkout as mlops_lint.egg-info, names the
    folder ``rules`` that is now mlops_lint.rules)."""
    dist = getattr(point, "dist", None)
    name = getattr(dist, "name", None) or ""
    return re.sub(r"[-_.]+", "-", name).lower() == "mlops-lint"


def _load_plugin(point) -> ModuleType:
    """A plugin's rule package. One written against the old import names (``from linter.rule
    import rule``) gets an error saying so: ``linter`` is not installed, or is someone else's."""
    try:
        return point.load()
    except ImportError as error:
        name = error.name or ""
        if name.split(".")[0] not in OLD_NAMES:
            raise
        raise RegistryError(
            f"the rule plugin {point.name!r} ({point.value}, entry point group mlops_lint.rules) cannot import "
            f"`{name}` ({error}): mlops-lint's modules are named `mlops_lint` (`from mlops_lint.rule import rule`) "
            "and its built-in rules `mlops_lint.rules`, not `linter` and `rules`; update the plugin's imports"
        ) from None


@lru_cache(maxsize=4)
def load_registry(index: str | None = None) -> Registry:
    """Every rule, built-in and from plugins. Cached: rule modules are imported once.

    ``index``: a cache folder for :mod:`linter.ruleindex`; the built-in rules then come from the
    index when it matches today's code (their modules imported only when a rule is called), else
    from the crawl, which is then indexed there. None: always crawl.
    """
    from mlops_lint.origin import rules_package

    builtin = rules_package()  # by its location beside `linter`, never `import rules` (linter.origin)
    found = None
    if index is not None:
        from mlops_lint import ruleindex

        key = ruleindex.signature()
        found = ruleindex.read(index, key)
    if found is None:
        found = collect(_modules(builtin))
        if index is not None:
            ruleindex.write(index, key, found)
    modules: list[ModuleType] = []
    for package in _entry_point_packages():
        modules.extend(_modules(package))
    return validate(found + collect(modules))
