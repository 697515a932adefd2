"""Calling rules: a :class:`Runner` dispatches each rule by scope on the views it asked for and
stamps what it yields into findings; a rule that raises becomes an LNT002 finding naming the rule
and the object, and the run goes on. Linting one file gives a :class:`FileOutcome` (findings
before suppression, suppressions, and the facts PROJECT rules collect), the unit a worker sends
back and the cache keeps; :meth:`Runner.project` then reduces the facts with the PROJECT rules.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Iterable

from msgspec import Struct, field
from msgspec.structs import replace

from mlops_lint.config import Config
from mlops_lint.fix import Fix
from mlops_lint.model.document import DEFINITIONS, Document, K8sObject, definitions
from mlops_lint.model.position import Span
from mlops_lint.registry import Registry
from mlops_lint.result import ObjectRef, Result
from mlops_lint.rule import (CONTAINER, DOCKERFILE as DOCKERFILE_SCOPE, ENGINE, OBJECT, POD, PROJECT, SHELL as SHELL_SCOPE,
                         WORKLOAD, Finding, RuleContext, RuleMeta)

if TYPE_CHECKING:  # a run whose results all come from the cache never builds an index
    from mlops_lint.index import ProjectIndex

PARSE_ERROR = "SCH001"
UNUSED_SUPPRESSION = "LNT001"
RULE_ERROR = "LNT002"


class _Buckets(Struct):
    container: list[RuleMeta] = field(default_factory=list)
    pod: list[RuleMeta] = field(default_factory=list)
    workload: list[RuleMeta] = field(default_factory=list)
    any_object: list[RuleMeta] = field(default_factory=list)
    by_kind: dict[str, list[RuleMeta]] = field(default_factory=lambda: defaultdict(list))
    dockerfile: list[RuleMeta] = field(default_factory=list)
    shell: list[RuleMeta] = field(default_factory=list)
    project: list[RuleMeta] = field(default_factory=list)

    @classmethod
    def of(cls, rules: Iterable[RuleMeta]) -> "_Buckets":
        buckets = cls()
        plain = {CONTAINER: buckets.container, POD: buckets.pod, WORKLOAD: buckets.workload,
                 OBJECT: buckets.any_object, DOCKERFILE_SCOPE: buckets.dockerfile, SHELL_SCOPE: buckets.shell,
                 PROJECT: buckets.project}
        for meta in rules:
            scope = meta.scope
            if scope in plain:
                plain[scope].append(meta)
            elif scope.name == OBJECT.name and scope.kinds:
                for kind in scope.kinds:
                    buckets.by_kind[kind].append(meta)
            elif scope != ENGINE:
                raise ValueError(f"{meta.code}: unknown scope {scope}")
        return buckets


def _ref(obj: Any) -> ObjectRef | None:
    return ObjectRef(obj.kind, obj.namespace, obj.name) if obj is not None else None


class FileOutcome(Struct):
    """What linting one file gives before suppressions are applied: the unit a pool worker sends
    back and the cache keeps. ``results`` pair each finding with the key of its object."""

    path: str
    status: str
    target: bool
    results: list[tuple[Result, tuple | None]]
    directives: list  # linter.suppress.Directive, of target files
    facts: dict[str, list]  # PROJECT rule code -> what its ``collect`` gave for this file's objects


class Runner:
    """Calls rules on views and stamps what they yield (one instance per run)."""

    def __init__(self, rules: list[RuleMeta], index: ProjectIndex, config: Config):
        self.index = index
        self.config = config
        self.enabled = {meta.code for meta in rules}
        self.buckets = _Buckets.of(rules)
        self.contexts = {
            meta.code: RuleContext({**meta.defaults, **config.rule_options.get(meta.code, {})}, index, config)
            for meta in rules
        }
        self.out: list[tuple[Result, tuple | None]] = []
        self.running: RuleMeta | None = None  # the rule being called (None: the file is being loaded)
        self.outcome_start = 0  # where the current file's findings start in ``out``
        self.texts = FixTexts()  # what rules' fix plans are resolved against
        # PROJECT rules that collect facts, and whose `requires` the project meets
        self.collectors = [meta for meta in self.buckets.project if meta.collect is not None and self.applies(meta)]

    def applies(self, meta: RuleMeta) -> bool:
        """A PROJECT rule with ``requires`` runs only when the project holds such an object."""
        return not meta.requires or any(self.index.has_kind(kind) for kind in meta.requires)

    def emit(self, code: str, slug: str, severity: str, message: str, path: str, span: Span,
             obj: Any, node: tuple, fix: str | None = None, autofix: Fix | None = None) -> None:
        """Record one finding, with the configured severity override applied."""
        self.out.append((
            Result(code, slug, self.config.severity.get(code, severity), message, path, span, _ref(obj), node, fix,
                   (), None, autofix),
            obj.key if obj is not None else None,
        ))

    def stamp(self, meta: RuleMeta, finding: Finding, path: str, obj: Any, base: tuple = ()) -> None:
        target = finding.obj if finding.obj is not None else obj
        node_base = target.node_path if target is not None and finding.obj is not None else base
        where = finding.path or (target.path if target is not None else path)
        autofix = self.texts.resolve(finding.autofix, where) if finding.autofix is not None else None
        slug = finding.slug if finding.slug is not None and finding.slug in meta.slugs else meta.name
        self.emit(meta.code, slug, finding.severity or meta.severity, finding.message, where, finding.span,
                  target, tuple(node_base) + tuple(finding.node), finding.fix, autofix)

    def call(self, meta: RuleMeta, view: Any, path: str, obj: K8sObject | None, where: Any, route: Any = None) -> None:
        """Call one rule on one view (see :meth:`call_all`)."""
        self.call_all((meta,), view, path, obj, where, route)

    def call_all(self, rules: Any, view: Any, path: str, obj: K8sObject | None, where: Any, route: Any = None) -> None:
        """Call each rule on one view (one call per view, not per rule and view: the rules of a
        container are most of a run's calls). ``where``: the Span a rule error is reported at, or
        what has it (an object, a pod, a container: its ``span``, read only then; computing every
        view's span for every call cost 3 % of a run)."""
        base = obj.node_path if obj is not None else ()
        contexts = self.contexts
        for meta in rules:
            self.running = meta  # what ran out of time, should the file's budget run out (engine.budget)
            try:
                context = contexts[meta.code]
                # route: for a TrainJob's views, where each finding belongs (the runtime's values point into it)
                for finding in meta.func(view, context):  # type: ignore[misc]
                    if route is not None:
                        finding = route(finding, view, meta.func, context)
                        if finding is None:
                            continue
                    self.stamp(meta, finding, path, obj, base)
            except Exception as exc:  # noqa: BLE001 - a broken rule must never stop the run
                self.rule_error(meta, exc, path, obj, where if isinstance(where, Span) else where.span)

    def rule_error(self, meta: RuleMeta, exc: Exception, path: str, obj: K8sObject | None, span: Span) -> None:
        if RULE_ERROR in self.enabled:
            where = f" on {obj.describe()}" if obj is not None else ""
            detail = " ".join(str(exc).split())  # one line: some exceptions print a whole schema
            detail = detail if len(detail) <= 300 else detail[:299] + "…"
            self.emit(RULE_ERROR, "rule-error", "error",
                      f"rule {meta.code} ({meta.name}) raised {type(exc).__name__}: {detail}{where}; "
                      "other rules still ran (please report this)", path, span, obj, (meta.code,))

    def parse_errors(self, document: Document) -> None:
        if PARSE_ERROR in self.enabled:
            for issue in document.errors:
                self.emit(PARSE_ERROR, "parse-error", "error", issue.message, document.path, issue.span, None,
                          ("parse", issue.message))

    def document(self, document: Document) -> None:
        self.parse_errors(document)
        b = self.buckets
        path, call_all = document.path, self.call_all
        for obj in document.objects:
            call_all(b.any_object, obj, path, obj, obj)
            call_all(b.by_kind.get(obj.kind, ()), obj, path, obj, obj)
            if not (b.workload or b.pod or b.container):
                continue
            workload = self.index.workload(obj)
            if workload is None:
                continue
            route = workload.route
            if not workload.generic:  # workload rules: modelled kinds only
                call_all(b.workload, workload, path, obj, obj, route)
            for pod in workload.pods:
                call_all(b.pod, pod, path, obj, pod, route)
                for container in pod.containers:
                    call_all(b.container, container, path, obj, container, route)
        if document.dockerfile is not None:
            call_all(b.dockerfile, document.dockerfile, path, None, Span(1, 1, 1, 2))
        if document.shell is not None:
            call_all(b.shell, document.shell, path, None, Span(1, 1, 1, 2))
        if document.iac is not None:  # node pools of IaC or the config: the AKS rules report there as in a script
            call_all(b.shell, document.iac, path, None, Span(1, 1, 1, 2))

    def collect(self, document: Document) -> dict[str, list]:
        """The facts of this file's objects, for the PROJECT rules that collect them (rules that
        share a ``collect`` function share one call and one list: OBS001 and OBS002)."""
        facts: dict[str, list] = {}
        shared: dict[Any, tuple[list, list[RuleMeta]]] = {}
        for meta in self.collectors:
            if meta.collect in shared:
                found, failed = shared[meta.collect]
                for obj, exc in failed:
                    self.rule_error(meta, exc, document.path, obj, obj.span)
            else:
                found, failed = [], []
                context = self.contexts[meta.code]
                self.running = meta
                for obj in document.objects:
                    try:
                        found.extend(meta.collect(obj, context))  # type: ignore[misc]
                    except Exception as exc:  # noqa: BLE001 - a broken rule must never stop the run
                        failed.append((obj, exc))
                        self.rule_error(meta, exc, document.path, obj, obj.span)
                shared[meta.collect] = (found, failed)
            if found:
                facts[meta.code] = found
        return facts

    def out_of_time(self, path: str, kind: str, target: bool, seconds: float) -> FileOutcome:
        """The outcome of a file whose budget ran out: one finding naming what ran out (a rule:
        LNT002; loading: SCH001), and nothing else of it (its partial findings are dropped)."""
        from mlops_lint.engine.budget import message

        self.outcome_start = min(self.outcome_start, len(self.out))
        del self.out[self.outcome_start:]
        meta = self.running
        if meta is not None:
            what, code, slug, node = f"rule {meta.code} ({meta.name})", RULE_ERROR, "rule-error", (meta.code, "time")
        else:
            what, code, slug, node = "loading the file", PARSE_ERROR, "parse-error", ("parse", "time")
        results = []
        if target:
            self.emit(code, slug, "error", message(seconds, what), path, Span(1, 1, 1, 2), None, node)
            results = self.out[self.outcome_start:]
            del self.out[self.outcome_start:]
        return FileOutcome(path, "timed out", target, results, [], {})

    def outcome(self, document: Document, target: bool) -> FileOutcome:
        """Lint one file (its findings only if it is a target; its facts in every case)."""
        from mlops_lint.suppress import directives_of

        start = self.outcome_start = len(self.out)
        if target:
            self.texts.current = document
            self.document(document)
            self.texts.current = None
        facts = self.collect(document)
        own = definitions(document)  # for the note on objects defined differently in several files
        if own:
            facts[DEFINITIONS] = own
        if target and (self.buckets.pod or self.buckets.container):
            generic = [(obj.api_version, obj.kind, document.path) for obj in document.objects
                       if (view := self.index.workload(obj)) is not None and view.generic]
            if generic:
                facts[GENERIC_KINDS] = generic
        results = self.out[start:] if target else []
        del self.out[start:]
        self.index.release(document)
        return FileOutcome(document.path, file_status(document), target, results,
                           directives_of(document) if target else [], facts)

    def project(self, targets: set[str], facts: dict[str, list] | None = None) -> None:
        """Every PROJECT rule, once: over the facts its ``collect`` gave, else over the index."""
        start = len(self.out)
        for meta in self.buckets.project:
            if not self.applies(meta):
                continue  # a reference rule with nothing to refer to (SPEC section 6)
            view = (facts or {}).get(meta.code, []) if meta.collect is not None else self.index
            self.call(meta, view, "", None, Span(1, 1, 1, 2))
        # a PROJECT rule that raised has no file of its own: its LNT002 goes to the project's first
        # target (line 1), so the error is reported instead of falling out with the other files' findings
        anchor = min(targets) if targets else ""
        self.out[start:] = [(replace(pair[0], path=anchor), pair[1]) if pair[0].rule == RULE_ERROR and not pair[0].path
                            else pair for pair in self.out[start:]]
        self.out[start:] = [pair for pair in self.out[start:] if pair[0].path in targets]


class FixTexts:
    """The text each fix plan is resolved against: the file being linted's own (the text its
    spans count in), else another file's (a plan whose ``path`` names one, a finding a view puts
    in another object's file), read and decoded as the loaders do, once per process. Built or
    streamed output (a path in ``<...>``: a Helm render, stdin) has no file to write a fix to:
    no fix; a kustomize build's plan is translated to its resource file's nodes where the
    build's :class:`linter.engine.kustomize.Mapper` finds them unchanged by the build
    (:meth:`~linter.engine.kustomize.Mapper.source_plan`), else no fix. A plan that does not
    resolve, or whose resolution raises, is no fix; never an error of the run."""

    def __init__(self) -> None:
        self.current: Document | None = None
        self.read: dict[str, str | None] = {}
        self.mappers: dict[str, Any] = {}  # a kustomize build's virtual path -> its Mapper

    def text(self, path: str) -> str | None:
        current = self.current
        if path and path.startswith("<helm template ") and current is not None and current.path == path:
            return current.text  # a render's own plan: moved to values.yaml, or dropped (linter.sources.helm.remap)
        if not path or path.startswith("<"):
            return None
        if current is not None and current.path == path:
            return current.text
        if path not in self.read:
            self.read[path] = read_text(path)
        return self.read[path]

    def resolve(self, plan: Any, path: str) -> Fix | None:
        mapper = self.mappers.get(path)
        if mapper is not None:
            return self.resolve_built(mapper, plan)
        where = getattr(plan, "path", None) or path
        text = self.text(where)
        return _resolved(plan, text, where) if text is not None else None

    def resolve_built(self, mapper: Any, plan: Any) -> Fix | None:
        """A built object's plan resolved against its resource file's text (None: no fix)."""
        try:
            translated = mapper.source_plan(plan)
        except Exception:  # noqa: BLE001 - see resolve
            return None
        if translated is None:
            return None
        plan, where, text = translated
        if self.text(where) != text:  # the file the mapper read is not the one the fix would write
            return None
        return _resolved(plan, text, where)


def _resolved(plan: Any, text: str, where: str) -> Fix | None:
    """``plan`` resolved against ``text`` (the file ``where``'s), or None: never a traceback."""
    try:
        from mlops_lint.fix.resolve import resolve

        fix = resolve(plan, text, where)
    except Exception:  # noqa: BLE001 - a plan that cannot be resolved is no fix, never a traceback
        return None
    return fix if isinstance(fix, Fix) and fix.edits and all(edit.path == where for edit in fix.edits) else None


def read_text(path: str) -> str | None:
    """A file's text as the loaders decode it (no byte-order mark), or None when it cannot be read."""
    from mlops_lint.sources.files import Unreadable, read_source
    from mlops_lint.sources.text import DecodeError, decode

    try:
        text = decode(read_source(path))
    except (Unreadable, DecodeError):
        return None
    return text[1:] if text.startswith("\ufeff") else text


# The facts key under which a target file's outcome names the kinds read through generic pod
# views (apiVersion, kind, file): not a rule code, so no PROJECT rule reads it; the run's notes do.
GENERIC_KINDS = "generic-pod-views"


def generic_kinds_note(outcomes: Iterable[FileOutcome]) -> list[tuple[str, str]]:
    """(path, message) notes naming each kind whose pod templates were read generically."""
    first: dict[tuple[str, str], str] = {}
    for outcome in outcomes:
        for api_version, kind, path in outcome.facts.get(GENERIC_KINDS, ()):
            first.setdefault((api_version, kind), path)
    return [(path, f"{kind} ({api_version}) is not a kind mlops-lint models: its pod templates were read "
                   "generically (container and pod rules only, no workload rules)")
            for (api_version, kind), path in sorted(first.items(), key=lambda item: (item[1], item[0]))]


def merged_facts(outcomes: Iterable[FileOutcome]) -> dict[str, list]:
    facts: dict[str, list] = defaultdict(list)
    for outcome in outcomes:
        for code, found in outcome.facts.items():
            facts[code].extend(found)
    return facts


def run_rules(documents: list[Document], targets: set[str], rules: list[RuleMeta], config: Config,
              index: ProjectIndex | None = None) -> list[tuple[Result, tuple | None]]:
    """Findings (each with its object's key) of ``rules`` on the ``targets`` among ``documents``."""
    from mlops_lint.index import ProjectIndex

    index = index or ProjectIndex(documents)
    runner = Runner(rules, index, config)
    outcomes = [runner.outcome(document, document.path in targets) for document in documents]
    runner.project(targets, merged_facts(outcomes))
    return [pair for outcome in outcomes for pair in outcome.results] + runner.out


class Job(Struct, frozen=True):
    """What every file of a run is linted with (shared with pool workers by fork)."""

    rules: list[RuleMeta]
    config: Config
    registry: Registry
    targets: set[str]
    key: str = ""  # the project's cache key (linter.cache.project_key), "" without a cache
    raw_only: frozenset[str] = frozenset()  # files linted through a kustomize build (linter.engine.builds)

    @property
    def enabled(self) -> set[str]:
        return {meta.code for meta in self.rules}


def file_status(document: Document) -> str:
    if document.errors and not (document.objects or document.dockerfile or document.shell or document.iac):
        return "parse error"
    if document.skipped:
        return f"skipped: {document.skipped}"
    return "linted"
