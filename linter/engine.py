"""The engine: load each file once, index the project, dispatch rules by scope, stamp findings.

    discover -> load -> ProjectIndex -> rules -> suppress -> report

With ``--jobs N`` (and enough files), the files that mention a cross-file kind are loaded first
and shared with N forked workers; each worker loads and lints its own files completely and sends
back only findings (see ``_lint_parallel``). Output is byte-identical to ``--jobs 1``.

Rules are dispatched by scope, so a rule only ever sees the views it asked for; a rule that
raises becomes an LNT002 finding naming the rule and the object, and the run goes on. Findings
are reported only for target files, but every rule sees the whole project through the index.
"""

from __future__ import annotations

import gc
import os
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from linter.config import Config
from linter.discover import SourceFile
from linter.index import ProjectIndex
from linter.model.document import DOCKERFILE, K8S, SHELL, Document, K8sObject, ParseIssue
from linter.model.position import Span
from linter.registry import Registry
from linter.result import ObjectRef, Result
from linter.rule import (CONTAINER, DOCKERFILE as DOCKERFILE_SCOPE, ENGINE, OBJECT, POD, PROJECT, SHELL as SHELL_SCOPE,
                         WORKLOAD, Finding, RuleContext, RuleMeta)

PARSE_ERROR = "SCH001"
UNUSED_SUPPRESSION = "LNT001"
RULE_ERROR = "LNT002"
PARALLEL_MIN_FILES = 48  # below this, a process pool costs more than it saves


# ---------------------------------------------------------------------------------------------
# Loading


def display_path(path: Path, cwd: Path) -> str:
    """Relative to ``cwd`` where possible, ``/``-separated, and always printable as UTF-8."""
    from linter.discover import shown

    try:
        return shown(path.relative_to(cwd).as_posix())
    except ValueError:
        return shown(path.as_posix())


def load_bytes(data: bytes, display: str, kind: str) -> Document:
    """Parse one file's bytes with the loader of its kind (never raises for bad input).

    Loaders are written never to raise; should one still do, the file becomes an SCH001 that
    says so (and the run goes on) instead of a traceback that stops every other file.
    """
    if kind == DOCKERFILE:
        from linter.sources import dockerfile as loader
    elif kind == SHELL:
        from linter.sources import shell as loader
    else:
        from linter.sources import yaml_k8s as loader
    try:
        return loader.load(data, display)
    except Exception as exc:  # noqa: BLE001 - one file must never stop the run
        detail = " ".join(str(exc).split())[:300]
        message = (f"mlops-lint could not read this file ({loader.__name__} raised {type(exc).__name__}: {detail}); "
                   "it was not linted (please report this)")
        return Document(path=display, kind=kind, errors=[ParseIssue(Span(1, 1, 1, 2), message)])


class _Unread(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def read_source(path: Path, limit: int | None = None) -> bytes:
    """A file's bytes, at most ``limit`` + 1 of them (so an oversized file is never read whole).

    Opened non-blocking and checked with ``fstat``, so a FIFO or device put in place of a file
    after discovery is refused instead of blocking the run. Raises :class:`_Unread`.
    """
    import stat

    from linter.sources.text import MAX_FILE_BYTES, too_large

    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _Unread(f"cannot read the file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Unread("not read: not a regular file")
        if info.st_size > limit:
            raise _Unread(too_large(info.st_size, limit))
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise _Unread(f"cannot read the file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def load_file(source: SourceFile, display: str) -> Document:
    try:
        data = read_source(source.path)
    except _Unread as exc:
        return Document(path=display, kind=source.kind, errors=[ParseIssue(Span(1, 1, 1, 2), exc.reason)])
    return load_bytes(data, display, source.kind)


def _load_chunk(chunk: list[tuple[SourceFile, str]]) -> list[Document]:
    """Load files with the cyclic garbage collector paused.

    Loaded trees are acyclic and all kept, so every collection pass during loading would only
    rescan a growing heap (measured: 4x slower on the corpus); the documents are frozen out of
    the collector's view afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return [load_file(source, display) for source, display in chunk]
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


# ---------------------------------------------------------------------------------------------
# Rule selection


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
    for token in [*config.ignore, *ignore]:
        for meta in registry.resolve(token):
            chosen.pop(meta.code, None)
    if config.profile == "aks-automatic":
        for code in list(chosen):
            if code.startswith("AKS") or code == "GPU006":
                chosen.pop(code)
    return sorted((m for m in chosen.values() if m.status != "removed"), key=lambda m: m.code)


# ---------------------------------------------------------------------------------------------
# Running rules


@dataclass
class _Buckets:
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


def _ref(obj: K8sObject | None) -> ObjectRef | None:
    return ObjectRef(obj.kind, obj.namespace, obj.name) if obj is not None else None


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
        self.out: list[tuple[Result, K8sObject | None]] = []

    def emit(self, code: str, slug: str, severity: str, message: str, path: str, span: Span,
             obj: K8sObject | None, node: tuple, fix: str | None = None) -> None:
        """Record one finding, with the configured severity override applied."""
        self.out.append((
            Result(code, slug, self.config.severity.get(code, severity), message, path, span, _ref(obj), node, fix),
            obj,
        ))

    def stamp(self, meta: RuleMeta, finding: Finding, path: str, obj: K8sObject | None, base: tuple = ()) -> None:
        target = finding.obj if finding.obj is not None else obj
        node_base = target.node_path if target is not None and finding.obj is not None else base
        self.emit(meta.code, meta.name, finding.severity or meta.severity, finding.message,
                  finding.path or (target.path if target is not None else path), finding.span, target,
                  tuple(node_base) + tuple(finding.node), finding.fix)

    def call(self, meta: RuleMeta, view: Any, path: str, obj: K8sObject | None, span: Span) -> None:
        base = obj.node_path if obj is not None else ()
        try:
            for finding in meta.func(view, self.contexts[meta.code]):  # type: ignore[misc]
                self.stamp(meta, finding, path, obj, base)
        except Exception as exc:  # noqa: BLE001 - a broken rule must never stop the run
            self.rule_error(meta, exc, path, obj, span)

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
        for obj in document.objects:
            for meta in b.any_object:
                self.call(meta, obj, document.path, obj, obj.span)
            for meta in b.by_kind.get(obj.kind, ()):
                self.call(meta, obj, document.path, obj, obj.span)
            if not (b.workload or b.pod or b.container):
                continue
            workload = self.index.workload(obj)
            if workload is None:
                continue
            for meta in b.workload:
                self.call(meta, workload, document.path, obj, obj.span)
            for pod in workload.pods:
                for meta in b.pod:
                    self.call(meta, pod, document.path, obj, pod.span)
                for container in pod.containers:
                    for meta in b.container:
                        self.call(meta, container, document.path, obj, container.span)
        if document.dockerfile is not None:
            for meta in b.dockerfile:
                self.call(meta, document.dockerfile, document.path, None, Span(1, 1, 1, 2))
        if document.shell is not None:
            for meta in b.shell:
                self.call(meta, document.shell, document.path, None, Span(1, 1, 1, 2))

    def project(self, targets: set[str]) -> None:
        start = len(self.out)
        for meta in self.buckets.project:
            if meta.requires and not any(self.index.has_kind(kind) for kind in meta.requires):
                continue  # a reference rule with nothing to refer to (SPEC section 6)
            self.call(meta, self.index, "", None, Span(1, 1, 1, 2))
        self.out[start:] = [pair for pair in self.out[start:] if pair[0].path in targets]


def run_rules(documents: list[Document], targets: set[str], rules: list[RuleMeta], config: Config,
              index: ProjectIndex | None = None) -> list[tuple[Result, K8sObject | None]]:
    index = index or ProjectIndex(documents)
    runner = Runner(rules, index, config)
    for document in documents:
        if document.path in targets:
            runner.document(document)
    runner.project(targets)
    return runner.out


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)



# ---------------------------------------------------------------------------------------------
# One whole run


@dataclass
class LintRequest:
    paths: list[Path]  # what to report on (files or folders); empty with stdin
    config: Config
    registry: Registry
    select: list[str] | None = None  # --select replaces the config's select
    ignore: list[str] = field(default_factory=list)  # --ignore adds to the config's ignore
    jobs: int = 1
    stdin: tuple[str, bytes] | None = None  # (--stdin-filename or "-", content)
    baseline: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)


def lint(request: LintRequest) -> "RunReport":  # noqa: F821 - imported below
    from linter import __version__, suppress
    from linter.discover import classify, walk
    from linter.result import Note, RunReport

    config, registry, cwd = request.config, request.registry, request.cwd.resolve()
    rules = enabled_rules(registry, config, request.select, request.ignore)
    targets_found = walk(request.paths, root=config.root, exclude=config.exclude)
    if config.root is not None:
        context_found = walk([config.root], root=config.root, exclude=config.exclude)
    else:
        context_found = targets_found
    by_path: dict[Path, SourceFile] = {f.path: f for f in context_found.files}
    for source in targets_found.files:
        by_path.setdefault(source.path, source)
    target_paths = {display_path(f.path, cwd) for f in targets_found.files}

    stdin_doc: Document | None = None
    if request.stdin is not None:
        name, data = request.stdin
        shown = name if name not in ("", "-") else "<stdin>"
        kind = classify(Path(shown), sniff=False) or K8S
        absolute = (cwd / shown).resolve() if shown != "<stdin>" else None
        if absolute is not None:
            by_path.pop(absolute, None)
            shown = display_path(absolute, cwd)
        stdin_doc = load_bytes(data, shown, kind)
        target_paths.add(shown)

    items = [(source, display_path(path, cwd)) for path, source in sorted(by_path.items(), key=lambda kv: str(kv[0]))]
    job = _Job(rules, config, registry, target_paths)
    parallel = request.jobs > 1 and len(items) >= PARALLEL_MIN_FILES and _can_fork()
    outcome = _lint_parallel(items, stdin_doc, job, request.jobs) if parallel else None
    results, statuses = outcome if outcome is not None else _lint_in_process(items, stdin_doc, job)
    if request.baseline is not None:
        baseline = suppress.Baseline.load(request.baseline, cwd)
        results = suppress.apply_baseline(results, baseline, request.baseline.resolve().parent, cwd)
    results.sort(key=Result.sort_key)
    notes = [Note(display_path(Path(n.path), cwd), n.message) for n in targets_found.notes]
    return RunReport(
        results=results,
        rules=rules,
        files_linted=len(statuses),
        files_skipped=sum(1 for status in statuses.values() if status.startswith("skipped")),
        notes=notes,
        root=str(cwd),
        version=__version__,
        fail_on=config.fail_on,
        file_status=dict(sorted({
            **{display_path(path, cwd): f"skipped: {why}" for path, why in targets_found.skipped},
            **statuses,
        }.items())),
    )


@dataclass(frozen=True)
class _Job:
    """What every file of a run is linted with (shared with pool workers by fork)."""

    rules: list[RuleMeta]
    config: Config
    registry: Registry
    targets: set[str]

    @property
    def enabled(self) -> set[str]:
        return {meta.code for meta in self.rules}


def _suppressed(pairs: list[tuple[Result, K8sObject | None]], documents: dict[str, Document], job: _Job) -> list[Result]:
    """Comments and annotations applied; LNT001 for those that suppressed nothing."""
    from linter import suppress

    results, unused = suppress.apply(pairs, documents, enabled_codes=job.enabled, registry=job.registry)
    if UNUSED_SUPPRESSION in job.enabled:
        results.extend(suppress.unused_results(unused, job.registry, job.config.severity))
    return results


def _lint_in_process(items: list[tuple[SourceFile, str]], stdin_doc: Document | None,
                     job: _Job) -> tuple[list[Result], dict[str, str]]:
    documents = _load_chunk(items)
    if stdin_doc is not None:
        documents.append(stdin_doc)
    documents.sort(key=lambda d: d.path)
    pairs = run_rules(documents, job.targets, job.rules, job.config, ProjectIndex(documents))
    targets = {d.path: d for d in documents if d.path in job.targets}
    return _suppressed(pairs, targets, job), {path: _status(doc) for path, doc in targets.items()}


# A parallel run: the few files that mention a cross-file kind (REFERENCE_KINDS) are parsed first
# and shared with the workers through fork; each worker then parses its own files and lints them
# completely, sending back only findings. Shipping parsed trees between processes was measured
# to cost as much as parsing them.
_WORKER_STATE: tuple[_Job, ProjectIndex] | None = None


def _worker_lint(chunk: list[tuple[SourceFile, str]]) -> list[tuple[str, str, list[Result]]]:
    assert _WORKER_STATE is not None
    job, index = _WORKER_STATE
    out = []
    for document in _load_chunk(chunk):
        if document.path not in job.targets:
            continue
        runner = Runner(job.rules, index, job.config)
        runner.document(document)
        out.append((document.path, _status(document), _suppressed(runner.out, {document.path: document}, job)))
    return out


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _scan(source: SourceFile, reference: frozenset[str], needed: frozenset[str]) -> tuple[bool, bool]:
    """(mentions a reference kind or may describe node pools, mentions a ``needed`` kind), from
    the file's bytes alone.

    A textual mention is a superset of an object of that kind (UTF-16 text counts as a mention
    of everything), so deciding from it is always safe; the file is parsed only if it matters.
    """
    if source.kind not in (K8S, SHELL):
        return False, False
    try:
        data = read_source(source.path)
    except _Unread:
        return False, False
    if source.kind == SHELL:
        return b"aks" in data, False  # `az aks …` commands describe the cluster's node pools
    wide = b"\x00" in data
    return (wide or any(kind.encode() in data for kind in reference),
            wide or any(kind.encode() in data for kind in needed))


def _lint_parallel(items: list[tuple[SourceFile, str]], stdin_doc: Document | None, job: _Job,
                   jobs: int) -> tuple[list[Result], dict[str, str]] | None:
    """A parallel run, or None when a PROJECT rule must see every object (run in-process then).

    A PROJECT rule without ``requires`` always needs every object; one with ``requires`` only
    when the project holds such an object, which the files' text rules out cheaply for most runs.
    """
    global _WORKER_STATE
    import multiprocessing

    from linter.index import REFERENCE_KINDS

    project = [meta for meta in job.rules if meta.scope == PROJECT]
    if any(not meta.requires for meta in project):
        return None
    needed = frozenset(kind for meta in project for kind in meta.requires)
    if stdin_doc is not None and any(o.kind in needed for o in stdin_doc.objects):
        return None
    shared_items = []
    for item in items:
        shared_file, needs_everything = _scan(item[0], REFERENCE_KINDS, needed)
        if needs_everything:
            return None  # decided before anything is parsed twice
        if shared_file:
            shared_items.append(item)
    # parsed here for the shared index, and again by the worker that lints them: only the few
    # files that mention a reference kind (or scripts that may define node pools) pay twice
    shared = _load_chunk(shared_items)
    if stdin_doc is not None:
        shared.append(stdin_doc)
    index = ProjectIndex([d for d in shared if d.shell is not None or any(o.kind in REFERENCE_KINDS for o in d.objects)],
                         only_kinds=REFERENCE_KINDS)
    results: list[Result] = []
    statuses: dict[str, str] = {}
    if stdin_doc is not None and stdin_doc.path in job.targets:
        runner = Runner(job.rules, index, job.config)
        runner.document(stdin_doc)
        results.extend(_suppressed(runner.out, {stdin_doc.path: stdin_doc}, job))
        statuses[stdin_doc.path] = _status(stdin_doc)
    size = max(4, len(items) // (jobs * 8))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    _WORKER_STATE = (job, index)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            for part in pool.map(_worker_lint, chunks):
                for path, status, found in part:
                    statuses[path] = status
                    results.extend(found)
    finally:
        _WORKER_STATE = None
    return results, statuses


def _status(document: Document) -> str:
    if document.errors and not (document.objects or document.dockerfile or document.shell):
        return "parse error"
    if document.skipped:
        return f"skipped: {document.skipped}"
    return "linted"
