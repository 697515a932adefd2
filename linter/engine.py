"""The engine: load each file once, index the project, dispatch rules by scope, stamp findings.

    discover -> survey -> cache -> index -> rules (per file) -> PROJECT rules -> suppress -> report

The files that mention a cross-file kind are loaded first into the index; every other file is
then linted on its own (in-process, or by N forked workers) into a ``FileOutcome``, which the
cache keeps (see ``_run``). Output is byte-identical across ``--jobs`` and with or without cache.

Rules are dispatched by scope, so a rule only ever sees the views it asked for; a rule that
raises becomes an LNT002 finding naming the rule and the object, and the run goes on. Findings
are reported only for target files, but every rule sees the whole project through the index.
"""

from __future__ import annotations

import gc
import os
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

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
YOUNG_COLLECTION_FILES = 64  # while linting, the young generations are collected every this many files
PARALLEL_MIN_FILES = 48  # below this, forking workers costs more than it saves


# ---------------------------------------------------------------------------------------------
# Loading


def display_path(path: Path, cwd: Path) -> str:
    """Relative to ``cwd`` where possible, ``/``-separated, and always printable as UTF-8."""
    from linter.discover import shown

    text, base = str(path), str(cwd)
    if os.sep == "/" and text.startswith(base) and len(text) > len(base) and (text[len(base)] == "/" or base == "/"):
        return shown(text[len(base) + (base != "/"):])  # what relative_to gives, without parsing either path
    try:
        return shown(path.relative_to(cwd).as_posix())
    except ValueError:
        return shown(path.as_posix())


def load_bytes(data: bytes, display: str, kind: str) -> Document:
    """Parse one file's bytes with the loader of its kind (never raises for bad input)."""
    if kind == DOCKERFILE:
        from linter.sources import dockerfile as loader
    elif kind == SHELL:
        from linter.sources import shell as loader
    else:
        from linter.sources import yaml_k8s as loader
    return _guarded(loader.load, data, display, kind, loader.__name__)


def _guarded(load: Callable[[Any, str], Any], source: Any, display: str, kind: str,
             module: str = "linter.sources.yaml_k8s") -> Any:
    """``load(source, display)``; should a loader (written never to raise) still raise, the file
    becomes an SCH001 that says so (and the run goes on) instead of a traceback that stops every
    other file."""
    try:
        return load(source, display)
    except Exception as exc:  # noqa: BLE001 - one file must never stop the run
        detail = " ".join(str(exc).split())[:300]
        message = (f"mlops-lint could not read this file ({module} raised {type(exc).__name__}: {detail}); "
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


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Load (and lint) files with the cyclic garbage collector paused.

    Loaded trees are acyclic and freed by reference counting, so every collection pass during
    loading would only rescan a growing heap (measured: 4x slower on the corpus).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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


def _ref(obj: Any) -> ObjectRef | None:
    return ObjectRef(obj.kind, obj.namespace, obj.name) if obj is not None else None


@dataclass(slots=True)
class FileOutcome:
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
        # PROJECT rules that collect facts, and whose `requires` the project meets
        self.collectors = [meta for meta in self.buckets.project if meta.collect is not None and self.applies(meta)]

    def applies(self, meta: RuleMeta) -> bool:
        """A PROJECT rule with ``requires`` runs only when the project holds such an object."""
        return not meta.requires or any(self.index.has_kind(kind) for kind in meta.requires)

    def emit(self, code: str, slug: str, severity: str, message: str, path: str, span: Span,
             obj: Any, node: tuple, fix: str | None = None) -> None:
        """Record one finding, with the configured severity override applied."""
        self.out.append((
            Result(code, slug, self.config.severity.get(code, severity), message, path, span, _ref(obj), node, fix),
            obj.key if obj is not None else None,
        ))

    def stamp(self, meta: RuleMeta, finding: Finding, path: str, obj: Any, base: tuple = ()) -> None:
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

    def outcome(self, document: Document, target: bool) -> FileOutcome:
        """Lint one file (its findings only if it is a target; its facts in every case)."""
        from linter.suppress import directives_of

        start = len(self.out)
        if target:
            self.document(document)
        facts = self.collect(document)
        results = self.out[start:] if target else []
        del self.out[start:]
        self.index.release(document)
        return FileOutcome(document.path, _status(document), target, results,
                           directives_of(document) if target else [], facts)

    def project(self, targets: set[str], facts: dict[str, list] | None = None) -> None:
        """Every PROJECT rule, once: over the facts its ``collect`` gave, else over the index."""
        start = len(self.out)
        for meta in self.buckets.project:
            if not self.applies(meta):
                continue  # a reference rule with nothing to refer to (SPEC section 6)
            view = (facts or {}).get(meta.code, []) if meta.collect is not None else self.index
            self.call(meta, view, "", None, Span(1, 1, 1, 2))
        self.out[start:] = [pair for pair in self.out[start:] if pair[0].path in targets]


def _merged_facts(outcomes: Iterable[FileOutcome]) -> dict[str, list]:
    facts: dict[str, list] = defaultdict(list)
    for outcome in outcomes:
        for code, found in outcome.facts.items():
            facts[code].extend(found)
    return facts


def run_rules(documents: list[Document], targets: set[str], rules: list[RuleMeta], config: Config,
              index: ProjectIndex | None = None) -> list[tuple[Result, tuple | None]]:
    """Findings (each with its object's key) of ``rules`` on the ``targets`` among ``documents``."""
    index = index or ProjectIndex(documents)
    runner = Runner(rules, index, config)
    outcomes = [runner.outcome(document, document.path in targets) for document in documents]
    runner.project(targets, _merged_facts(outcomes))
    return [pair for outcome in outcomes for pair in outcome.results] + runner.out


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
    cache_dir: Path | None = None  # the result cache's folder (None: no cache)
    # a list the run's large structures (the index, the parsed shared files, every outcome) are
    # appended to instead of being freed: for a caller that then ends the process without
    # freeing them (linter.cli.run), since freeing millions of objects one by one costs a part of
    # the run (measured: 0.2-0.3 s at 10,000 files) the operating system does at once
    keep: list | None = None


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

    stdin: tuple[Document, bytes] | None = None
    if request.stdin is not None:
        name, data = request.stdin
        shown = name if name not in ("", "-") else "<stdin>"
        kind = classify(Path(shown), sniff=False) or K8S
        absolute = (cwd / shown).resolve() if shown != "<stdin>" else None
        if absolute is not None:
            by_path.pop(absolute, None)
            shown = display_path(absolute, cwd)
        else:  # no name to tell the kind: the content tells it, and a note says what was assumed
            from linter.discover import sniff

            kind, why = sniff(data)
        stdin = (load_bytes(data, shown, kind), data)
        target_paths.add(shown)
        if absolute is None and (kind != K8S or stdin[0].skipped):
            what = {DOCKERFILE: "a Dockerfile", SHELL: "a shell script"}.get(kind, "YAML")
            held = "; it holds no Kubernetes object" if stdin[0].skipped else ""
            targets_found.notes.append(Note("<stdin>", f"read as {what} ({why}){held}; --stdin-filename NAME "
                                            "gives the kind by its name"))

    items = [(source, display_path(path, cwd)) for path, source in sorted(by_path.items(), key=lambda kv: str(kv[0]))]
    job = _Job(rules, config, registry, target_paths)
    cache = None
    if request.cache_dir is not None:
        from linter.cache import Cache, run_key

        cache = Cache.open(request.cache_dir, run_key(job.rules, config, registry))
    with _collector_paused():  # young generations are collected while linting (see _lint_files)
        results, statuses = _run(items, stdin, job, request.jobs, cache, request.keep)
        gc.freeze()  # the run's results live to the end: reporting never rescans them
    if cache is not None:
        cache.save()
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


# ---------------------------------------------------------------------------------------------
# A run: survey, cache, lint what is new, reduce
#
# Every file is read once up front: its content hash (for the cache) and whether its text
# mentions a cross-file kind (REFERENCE_KINDS) or may describe node pools (a script mentioning
# `aks`). Those few *shared* files are parsed first into the index every rule looks across files
# with; every other file is then loaded, linted and let go one at a time (in-process, or by N
# forked workers that inherit the index), leaving a FileOutcome: its findings before suppression,
# its suppressions, and the facts PROJECT rules collect from its objects. The parent reduces the
# facts with the PROJECT rules and applies every suppression at once, so a run's output does not
# depend on --jobs, on the cache, or on which process linted which file. Shipping parsed trees
# between processes was measured to cost as much as parsing them: only outcomes travel.


@dataclass(slots=True)
class _Survey:
    source: SourceFile
    display: str
    size: int
    digest: str | None = None  # of the bytes (read only when the cache is on); None if unread
    shared: bool = False  # its text mentions a reference kind (see _mentions)
    data: bytes | None = None  # what was read, until the first pass takes it


def _digest(data: bytes) -> str:
    from linter.digest import digest

    return digest(data)


def _key(*parts: object) -> str:
    from linter.digest import digest_text

    return digest_text(*parts)


@lru_cache(maxsize=2)
def _reference_pattern(binary: bool) -> Any:
    """One regular expression for every reference kind's name (one C-speed scan of a text), and
    the escapes that could spell one inside a double-quoted scalar."""
    import re

    from linter.index import REFERENCE_KINDS

    names = "|".join(sorted(REFERENCE_KINDS, key=lambda name: (-len(name), name)))
    # after a backslash: x, u, U, or a line break (LF, CR, NEL, LS, PS) escaped away
    escapes = "|".join(re.escape(c) for c in ("x", "u", "U", "\n", "\r", "\x85", "\u2028", "\u2029"))
    pattern = rf"{names}|\\(?:{escapes})"
    return re.compile(pattern.encode() if binary else pattern)


@lru_cache(maxsize=2)
def _commented(binary: bool) -> Any:
    """A line's text before a mention that puts the mention inside a comment (see _mentions_in)."""
    import re

    pattern = r"(?:^|[ \t])#"
    return re.compile(pattern.encode() if binary else pattern)


def _mentions_in(text: Any) -> bool:
    """Whether ``text`` (str or bytes) may hold an object of a reference kind: it names one
    outside a comment, or has an escape that could spell one.

    A kind is a scalar, and scalars are never in comments. A mention is in a comment when, on its
    line, it follows a ``#`` that starts the line or follows a blank, with no quote before it:
    such a ``#`` starts a comment unless it is inside a quoted scalar begun on an earlier line
    or a block scalar, and then the mention is inside that scalar too, whose value holds the
    ``#`` and so is no kind's name (leaving the scalar takes a closing quote, which the line
    would show). A kind's letters can come from the escapes ``\\x``, ``\\u``, ``\\U`` and an
    escaped line break in a double-quoted scalar; a text with any of them counts as a mention."""
    binary = isinstance(text, bytes)
    newline, hash_, quote, double = (b"\n", b"#", b"'", b'"') if binary else ("\n", "#", "'", '"')
    search, commented = _reference_pattern(binary).search, _commented(binary).search
    position = 0
    while (match := search(text, position)) is not None:
        start = match.start()
        before = text[text.rfind(newline, 0, start) + 1:start]
        if hash_ not in before or quote in before or double in before or commented(before) is None:
            return True
        position = text.find(newline, start)  # the rest of the line is the same comment
        if position < 0:
            return False
    return False


def _mentions(data: bytes, kind: str) -> bool:
    """Whether a file may hold an object of a reference kind (or, for a script, node pools).

    A textual mention is a superset of an object of that kind (UTF-16 text counts as a mention
    of everything), so deciding from it is always safe: only files that mention one are parsed
    before the index exists."""
    if kind == SHELL:
        return b"aks" in data  # `az aks …` commands describe the cluster's node pools
    if kind != K8S:
        return False
    return b"\x00" in data or _mentions_in(data)


def _survey(items: list[tuple[SourceFile, str]], read: bool) -> list[_Survey]:
    """Sizes (to share work out), and with ``read`` each file's hash and reference mention."""
    out = []
    for source, display in items:
        if not read:
            try:
                size = os.stat(source.path).st_size
            except OSError:
                size = 0
            out.append(_Survey(source, display, size))
            continue
        try:
            data = read_source(source.path)
        except _Unread:
            out.append(_Survey(source, display, 0))
            continue
        out.append(_Survey(source, display, len(data), _digest(data), _mentions(data, source.kind), data))
    return out


def _skeleton(entry: Any) -> Document | None:
    """What other files' rules may look up in a file (a Document, or a Stream from _first_pass):
    its reference objects and its script."""
    from linter.index import REFERENCE_KINDS

    shell = getattr(entry, "shell", None)
    parsed = entry.objects if isinstance(entry, Document) else entry.objects()
    objects = [obj for obj in parsed if obj.kind in REFERENCE_KINDS]
    if not objects and shell is None:
        return None
    return Document(path=entry.path, kind=entry.kind, objects=objects, shell=shell)


def _mentions_reference(text: str) -> bool:
    """Whether one YAML document's text may hold an object of a reference kind (see _mentions_in)."""
    return _mentions_in(text)


def _first_pass(data: bytes, display: str, kind: str) -> Any:
    """A shared file for the index: a YAML file as a Stream with the documents that mention a
    reference kind parsed (the rest wait for the second pass), any other file loaded whole."""
    if kind != K8S:
        return load_bytes(data, display, kind)
    from linter.sources import yaml_k8s

    loaded = _guarded(yaml_k8s.stream, data, display, kind)
    if isinstance(loaded, yaml_k8s.Stream):
        parsed = _guarded(lambda stream, _: stream.parse(_mentions_reference), loaded, display, kind)
        if isinstance(parsed, Document):  # a loader bug: the file is that SCH001
            return parsed
    return loaded


def _second_pass(entry: Any, display: str) -> Document:
    """A file the first pass kept, whole."""
    if isinstance(entry, Document):
        return entry
    return _guarded(lambda stream, _: stream.document(), entry, display, K8S)


def _index(skeletons: Iterable[Document]) -> ProjectIndex:
    from linter.index import REFERENCE_KINDS

    return ProjectIndex(sorted(skeletons, key=lambda d: d.path), only_kinds=REFERENCE_KINDS)


def _read(source: SourceFile, display: str) -> tuple[Document, str | None]:
    """A file loaded, and the hash of the bytes it was loaded from."""
    try:
        data = read_source(source.path)
    except _Unread as exc:
        return Document(path=display, kind=source.kind, errors=[ParseIssue(Span(1, 1, 1, 2), exc.reason)]), None
    return load_bytes(data, display, source.kind), _digest(data)


_Work = list[tuple[SourceFile, str]]
_Linted = list[tuple[str, str | None, FileOutcome]]  # (path, content hash, outcome)


_Kept = dict[str, "tuple[Document, str | None] | bytes"]  # path -> parsed (with its hash), or its bytes


def _prepare(work: _Work, read: dict[str, bytes] | None = None) -> tuple[_Kept, list[Document]]:
    """First pass over some files, each read once (or taken from ``read``): those whose text
    mentions a reference kind are parsed; returns every file's parsed document or bytes, for the
    second pass, and the skeletons the index is built from."""
    kept: _Kept = {}
    with _collector_paused():
        for source, display in work:
            data = read.pop(display, None) if read is not None else None
            if data is None:
                try:
                    data = read_source(source.path)
                except _Unread:
                    continue  # reported by the second pass
            if _mentions(data, source.kind):
                kept[display] = (_first_pass(data, display, source.kind), _digest(data))
            else:
                kept[display] = data
        skeletons = [skeleton for entry in kept.values() if not isinstance(entry, bytes)
                     and (skeleton := _skeleton(entry[0])) is not None]
        gc.freeze()  # the kept files live until linted, the skeletons to the end: out of the collector's sight
    return kept, skeletons


def _lint_files(work: _Work, kept: _Kept, runner: Runner, job: _Job,
                between: Callable[[], None] | None = None) -> _Linted:
    """Second pass: every file linted, parsed now if the first pass did not (and let go once linted)."""
    out: _Linted = []
    with _collector_paused():
        for position, (source, display) in enumerate(work, 1):
            entry = kept.pop(display, None)
            if entry is None:
                document, digest = _read(source, display)
            elif isinstance(entry, bytes):
                document, digest = load_bytes(entry, display, source.kind), _digest(entry)
            else:
                document, digest = _second_pass(entry[0], display), entry[1]
            out.append((display, digest, runner.outcome(document, display in job.targets)))
            if between is not None:
                between()
            if position % YOUNG_COLLECTION_FILES == 0:
                # released views break their own cycles (Workload.dispose), so this only catches
                # what other code leaves in cycles; a full pass would rescan every outcome
                gc.collect(1)
    return out


def _run(items: _Work, stdin: tuple[Document, bytes] | None, job: _Job, jobs: int,
         cache: Any, keep: list | None = None) -> tuple[list[Result], dict[str, str]]:
    survey = _survey(items, read=cache is not None)
    outcomes: dict[str, FileOutcome] = {}
    keys: dict[str, str] = {}
    project_key = None
    if cache is not None:
        # what every file's findings may depend on besides itself: the shared files (and stdin)
        reference = _key(*(f"{s.display}:{s.digest}" for s in survey if s.shared), _digest(stdin[1]) if stdin else "")
        keys = {s.display: _key(reference, s.display, s.digest, s.display in job.targets)
                for s in survey if s.digest is not None}
        project_key = _key(reference, *sorted(keys.values()))
        for display, key in keys.items():
            found = cache.get(key)
            if found is not None:
                outcomes[display] = found
        if len(outcomes) == len(survey) and stdin is None:
            project = cache.get_project(project_key)
            if project is not None:
                return _finish([outcomes[path] for path in sorted(outcomes)], project, job)
    missing = [s for s in survey if s.display not in outcomes]
    known = [skeleton] if stdin is not None and (skeleton := _skeleton(stdin[0])) is not None else []
    work = [(s.source, s.display) for s in missing]
    # the shared files the cache answered for are parsed again for the index only: keeping their
    # trees in the cache would cost every cold run more (pickling them) than parsing them costs
    # the rare run that lints some files again
    again = [(s.source, s.display) for s in survey if s.shared and s.display in outcomes]
    kept, skeletons = _prepare(work + again, {s.display: s.data for s in survey if s.data is not None})
    for entry in survey:
        entry.data = None
    for _, display in again:
        kept.pop(display, None)
    index = _index([*known, *skeletons])
    runner = Runner(job.rules, index, job.config)
    if jobs > 1 and len(work) >= PARALLEL_MIN_FILES and _can_fork():
        found = _lint_parallel(work, kept, runner, job, jobs)
    else:
        found = _lint_files(work, kept, runner, job)
    for display, digest, outcome in found:
        outcomes[display] = outcome
        if cache is not None and digest is not None:
            cache.put(_key(reference, display, digest, display in job.targets), outcome)
    if stdin is not None:
        outcomes[stdin[0].path] = runner.outcome(stdin[0], stdin[0].path in job.targets)
    ordered = [outcomes[path] for path in sorted(outcomes)]
    runner.project(job.targets, _merged_facts(ordered))
    if cache is not None and stdin is None:
        cache.put_project(project_key, runner.out)
    if keep is not None:
        keep.append((survey, kept, index, runner, outcomes, ordered))
    return _finish(ordered, runner.out, job)


# ---------------------------------------------------------------------------------------------
# --jobs N: the parent and N-1 forked workers share the files out. The workers inherit the index
# and the parsed shared files (copy-on-write, nothing is pickled on the way in); every process
# claims chunks of files from one counter until none is left, and each worker sends a chunk's
# outcomes back as soon as it is linted. The parent's own share is never pickled. Shipping
# parsed trees between processes instead was measured to cost more than parsing them (25 MB of
# the corpus's CRDs: 9 s to pickle, 7 s to unpickle, against 2 s to parse).


def _warm(runner: Runner) -> None:
    """Build before forking what every worker would otherwise build for itself: the cluster model."""
    from linter.model.cluster import cluster_of

    try:
        cluster_of(runner.index, runner.config)
    except Exception:  # noqa: BLE001 - a worker's rule meets the same error and reports it as LNT002
        pass


def _claim(counter: Any, total: int) -> int | None:
    with counter.get_lock():
        number = counter.value
        if number >= total:
            return None
        counter.value = number + 1
    return number


def _lint_chunks(chunks: list[_Work], counter: Any, kept: _Kept, runner: Runner, job: _Job,
                 each: Callable[[int, _Linted], None], between: Callable[[], None] | None = None) -> None:
    """Lint the chunks this process claims, handing each one's outcomes to ``each``."""
    while (number := _claim(counter, len(chunks))) is not None:
        chunk = chunks[number]
        each(number, _lint_files(chunk, {d: kept[d] for _, d in chunk if d in kept}, runner, job, between))


def _worker(chunks: list[_Work], counter: Any, kept: _Kept, runner: Runner, job: _Job, send: Any) -> None:
    try:
        _lint_chunks(chunks, counter, kept, runner, job, lambda number, part: send.send((number, part)))
    except Exception:  # noqa: BLE001 - the parent lints this worker's chunks again and meets it itself
        pass
    finally:
        send.close()


def _widen(connection: Any) -> None:
    """A pipe that holds a whole chunk's outcomes (Linux: up to 1 MiB), so a worker's send
    rarely waits for the parent to read."""
    try:
        import fcntl

        fcntl.fcntl(connection.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass


class _Inbox:
    """The workers' outcomes, read by the parent between its own files (a reader thread would
    make every worker's send wait for the parent's GIL: measured a quarter of a worker's time)."""

    def __init__(self, connections: list[Any]):
        self.open = list(connections)
        self.done: dict[int, _Linted] = {}

    def take(self, number: int, part: _Linted) -> None:
        self.done[number] = part

    def read(self, wait: bool = False) -> None:
        for connection in list(self.open):
            try:
                while wait or connection.poll():
                    number, part = connection.recv()
                    self.done[number] = part
            except Exception:  # noqa: BLE001 - EOF, or a message cut short by the worker's death
                self.open.remove(connection)
                connection.close()


def _lint_parallel(work: _Work, kept: _Kept, runner: Runner, job: _Job, jobs: int) -> _Linted:
    """Outcomes of ``work`` from this process and ``jobs - 1`` forked ones, in ``work``'s order.

    A worker sends each chunk's outcomes as soon as it has linted it; the parent reads them
    between its own files (the time that takes is balanced out by the chunks it then does not
    claim). The chunks of a worker that dies or fails are linted here, so no file is ever lost."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    size = max(4, len(work) // (jobs * 32))  # small chunks: the last ones finish together
    chunks = [work[i:i + size] for i in range(0, len(work), size)]
    counter = context.Value("q", 0)
    _warm(runner)
    gc.freeze()  # what the workers inherit stays frozen: the collector never touches its pages
    processes, connections = [], []
    for _ in range(jobs - 1):
        receive, send = context.Pipe(duplex=False)
        _widen(send)
        process = context.Process(target=_worker, args=(chunks, counter, kept, runner, job, send), daemon=True)
        process.start()
        send.close()
        processes.append(process)
        connections.append(receive)
    inbox = _Inbox(connections)
    _lint_chunks(chunks, counter, kept, runner, job, inbox.take, inbox.read)
    inbox.read(wait=True)  # until every worker has closed its end
    for process in processes:
        process.join()
    found: _Linted = []
    for number, chunk in enumerate(chunks):
        part = inbox.done.get(number)
        if part is None:  # a worker's that it did not send
            part = _lint_files(chunk, {d: kept[d] for _, d in chunk if d in kept}, runner, job)
        found.extend(part)
    return found


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _finish(outcomes: list[FileOutcome], project: list[tuple[Result, tuple | None]],
            job: _Job) -> tuple[list[Result], dict[str, str]]:
    """Every suppression applied at once (LNT001 for those that suppressed nothing)."""
    from linter import suppress

    pairs = [pair for outcome in outcomes for pair in outcome.results]
    pairs.extend(project)
    directives = [directive for outcome in outcomes for directive in outcome.directives]
    results, unused = suppress.apply(pairs, directives, enabled_codes=job.enabled, registry=job.registry)
    if UNUSED_SUPPRESSION in job.enabled:
        results.extend(suppress.unused_results(unused, job.registry, job.config.severity))
    return results, {outcome.path: outcome.status for outcome in outcomes if outcome.target}


def _status(document: Document) -> str:
    if document.errors and not (document.objects or document.dockerfile or document.shell):
        return "parse error"
    if document.skipped:
        return f"skipped: {document.skipped}"
    return "linted"
