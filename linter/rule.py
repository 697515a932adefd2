"""The rule contract: metadata plus a pure function over a typed view.

A rule module's docstring *is* its documentation (sections: What it does, Why is this bad?,
Example, Use instead, Options, Fix safety, Known problems, References). The ``@rule`` decorator
only attaches metadata to the function; nothing is registered as an import side effect (the
registry collects decorated functions from the rule packages).

A rule receives a view and a :class:`RuleContext` and yields :class:`Finding` (span + message,
optionally a node path and a fix hint); the engine stamps id, slug, severity, file and object.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterator, Mapping

from msgspec import Struct, field

from mlops_lint.docparts import expand
from mlops_lint.model.position import Span

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
SEVERITY_LETTERS = {"E": "error", "W": "warning", "I": "info"}


# Scopes: what a rule is called with. The engine dispatches by scope, so a Container rule never
# sees a ConfigMap and a Kind("ClusterQueue") rule runs only on ClusterQueues.
class Scope(Struct, frozen=True):
    name: str
    kinds: tuple[str, ...] = ()  # for OBJECT scopes: restrict to these kinds (empty = all)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.kinds)})" if self.kinds else self.name


CONTAINER = Scope("Container")  # every container, init container and ephemeral container
POD = Scope("PodSpec")  # every pod template of every workload
WORKLOAD = Scope("Workload")  # every object that carries pods
OBJECT = Scope("Object")  # every Kubernetes object
DOCKERFILE = Scope("Dockerfile")  # every Dockerfile
SHELL = Scope("ShellScript")  # every shell script
PROJECT = Scope("Project")  # once per run: over the index of REFERENCE_KINDS, or the facts `collect` gave
ENGINE = Scope("Engine")  # produced by the engine itself (SCH001, LNT001, LNT002)


def Kind(*kinds: str) -> Scope:  # noqa: N802 - reads as a scope name, like kube-linter's matchers
    return Scope("Object", tuple(kinds))


class Finding(Struct, frozen=True):
    """What a rule yields. ``node`` is the path inside the object (for baselines)."""

    span: Span
    message: str
    node: tuple[str | int, ...] = ()
    fix: str | None = None
    obj: Any = None  # K8sObject, for PROJECT rules that report on another object
    path: str | None = None  # file, for PROJECT rules that report outside any object
    # a rule whose SPEC entry grades its findings (RES006: E, or W with little headroom) gives the
    # lower grade here; the rule's declared severity stays the default, and config overrides win
    severity: str | None = None
    # the repair the rule knows (linter.fix.Plan): resolved by the engine into text edits that
    # reports carry and --fix applies; ``fix`` above stays the human hint
    autofix: Any = None
    # a rule whose SPEC entry has several cases (SCH003: removed, not yet served, deprecated) names
    # the case's slug, one of its declared ``slugs``; None: the rule's own slug
    slug: str | None = None


class RuleContext(Struct, frozen=True):
    """What a rule may read besides its view: its options, the project index, the config."""

    options: Mapping[str, Any]
    index: Any  # linter.index.ProjectIndex
    config: Any  # linter.config.Config


class RuleMeta(Struct, frozen=True):
    code: str
    name: str  # the slug
    severity: str
    scope: Scope
    func: Callable[..., Iterator[Finding]] | None
    doc: str
    summary: str
    options: Mapping[str, Any] = field(default_factory=dict)  # option -> type
    defaults: Mapping[str, Any] = field(default_factory=dict)
    since: str = "0.1.0"
    status: str = "preview"  # preview | stable | deprecated | removed
    opt_in: bool = False  # off unless selected by code, slug or prefix (not by ALL)
    tags: tuple[str, ...] = ()
    security_severity: str | None = None  # SARIF "security-severity" for security rules
    # the slugs of the rule's other cases (a finding names one as Finding.slug); selectors and
    # suppressions take them as they take ``name``, and each means the whole rule
    slugs: tuple[str, ...] = ()
    # PROJECT rules: run only when the project holds an object of one of these kinds (each must
    # be in linter.refkinds.REFERENCE_KINDS); a parallel run stays parallel when none is present
    requires: tuple[str, ...] = ()
    # PROJECT rules that need every object (not only REFERENCE_KINDS): ``collect(obj, ctx)``
    # yields picklable facts about one object, where its file is linted (a pool worker, or from
    # the cache); the rule's function then gets the list of every file's facts, in path order.
    # Rules naming the same function share its facts, so it may read the index and the config,
    # not its rule's options
    collect: Callable[..., Iterator[Any]] | None = None
    module: str = ""

    @property
    def domain(self) -> str:
        return self.code[:3]

    @property
    def family(self) -> str:
        """``ml``, ``aks`` or ``k8s`` (:mod:`linter.families`)."""
        from mlops_lint.families import family_of

        return family_of(self.code, self.tags)

    @property
    def help_uri(self) -> str:
        return f"https://github.com/mlops-lint/mlops-lint/blob/main/docs/rules/{self.code}.md"


class RegistryError(Exception):
    """A rule package that cannot be loaded: a bad code or slug, a duplicate, an option error, or
    a module that no longer matches the rule index (raised by linter.registry and linter.ruleindex)."""


def _summary(doc: str) -> str:
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip().rstrip(".") + "."
    return ""


def rule(
    *,
    code: str,
    name: str,
    severity: str,
    scope: Scope,
    since: str = "0.1.0",
    status: str = "preview",
    options: Mapping[str, Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
    opt_in: bool = False,
    tags: tuple[str, ...] = (),
    security_severity: str | None = None,
    requires: tuple[str, ...] = (),
    collect: Callable[..., Iterator[Any]] | None = None,
    slugs: tuple[str, ...] = (),
) -> Callable[[Callable[..., Iterator[Finding]]], Callable[..., Iterator[Finding]]]:
    """Attach rule metadata to a check function; the docs are the module docstring."""
    if severity not in SEVERITIES:
        raise ValueError(f"{code}: severity must be one of {SEVERITIES}, not {severity!r}")

    def decorate(func: Callable[..., Iterator[Finding]]) -> Callable[..., Iterator[Finding]]:
        module = sys.modules.get(func.__module__)
        doc = expand((module.__doc__ if module is not None else None) or "")  # shared paragraphs
        func.__mlops_rule__ = RuleMeta(  # type: ignore[attr-defined]
            code=code,
            name=name,
            severity=severity,
            scope=scope,
            func=func,
            doc=doc.strip(),
            summary=_summary(doc),
            options=dict(options or {}),
            defaults=dict(defaults or {}),
            since=since,
            status=status,
            opt_in=opt_in,
            tags=tuple(tags),
            security_severity=security_severity,
            requires=tuple(requires),
            collect=collect,
            slugs=tuple(slugs),
            module=func.__module__,
        )
        return func

    return decorate


def engine_rule(code: str, name: str, severity: str, *, opt_in: bool = False, tags: tuple[str, ...] = ()) -> Callable:
    """Metadata for a finding the engine itself produces (parse errors, rule errors, suppressions).

    The decorated function is a stub that is never called: it exists so the rule has a module,
    docs and a registry entry like every other rule.
    """
    return rule(code=code, name=name, severity=severity, scope=ENGINE, opt_in=opt_in, tags=tags)
