"""Kustomize roots built before the survey (see :mod:`linter.engine.kustomize`; the roots are read
by :mod:`linter.sources.kustomize`).

Every root of the run's files is built once (in threads, each waiting on its own ``kustomize``
process; outcomes are taken in the roots' order, so nothing depends on which finished first),
or its output read from the build cache. A built output is then linted like one more file under
a virtual path, and :func:`linter.engine.kustomize.remap` moves its findings to the files the
user edits before suppressions are applied.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from msgspec import Struct, field
from msgspec.structs import replace

from mlops_lint.config import Config
from mlops_lint.discover import SourceFile, display_path
from mlops_lint.model.document import Document
from mlops_lint.model.position import FILE_START
from mlops_lint.result import Note, Result
from mlops_lint.validation.kustomize import KUSTOMIZATION_NAMES

ENABLED = ("auto", "always", "never")


class Unparsed(Struct):
    """A render's output not parsed yet: a warm run whose every outcome the cache holds never
    parses it (:meth:`Builds.parsed`)."""

    path: str
    output: bytes

    def load(self) -> Document:
        from mlops_lint.sources.files import load_bytes

        return load_bytes(self.output, self.path, "k8s")


class Builds(Struct):
    # (built, output, targeted); a Helm render's document is Unparsed until parsed() is called
    documents: list[tuple[Any, bytes, bool]] = field(default_factory=list)
    mappers: dict[str, Any] = field(default_factory=dict)  # virtual path -> its mapper
    # display paths linted through a build, and the patch files of roots not built: their objects
    # are not linted nor indexed as written (see _leave_patches)
    raw_only: frozenset[str] = frozenset()
    errors: list[tuple[Result, None]] = field(default_factory=list)  # SCH001 of roots that failed to build
    notes: list[Note] = field(default_factory=list)
    helm: dict[str, Any] = field(default_factory=dict)  # path -> linter.sources.helm.HelmMapper of rendered output
    rendered: set[str] = field(default_factory=set)  # charts' templates folders rendered (absolute)
    helm_off: bool = False  # the config says helm: {enabled: never}
    # virtual path -> the key of every file its build read (linter.engine.kustomize.build_key): a built
    # object's fix is resolved against its resource file's text, which the output alone does not pin
    inputs: dict[str, str] = field(default_factory=dict)

    def parsed(self) -> list[tuple[Document, bytes, bool]]:
        """The documents, every render's parsed (once)."""
        if any(isinstance(document, Unparsed) for document, _, _ in self.documents):
            self.documents[:] = [(document.load() if isinstance(document, Unparsed) else document, output, targeted)
                                 for document, output, targeted in self.documents]
        return self.documents

    @property
    def signature(self) -> str:
        """What every file's findings may depend on here: which files are linted through a build
        and what the builds gave."""
        from mlops_lint.engine.survey import cache_key, content_digest

        return cache_key(*sorted(self.raw_only), *(f"{d.path}:{content_digest(out)}" for d, out, _ in self.documents))

    def shown(self, path: str) -> str:
        """A virtual path as the user knows it: the root's kustomization (the chart's folder)."""
        if path in self.mappers:
            return self.mappers[path].root.display
        if path.startswith("<helm template ") and path in self.helm:
            return getattr(self.helm[path], "display", None) or path[len("<helm template "):-1]
        return path

    def shown_in(self, text: str) -> str:
        """A message with the virtual paths it names put as the user knows them."""
        if "<" not in text:
            return text
        import re

        for path in self.virtual:  # a line of the built output means nothing to the user: dropped
            if path in self.helm:  # a line of a render: the template's line
                text = re.sub(re.escape(path) + r"(?::(\d+))?", lambda m, p=path: self._template_line(p, m.group(1)), text)
                continue
            text = re.sub(re.escape(path) + r"(?::\d+)?", lambda _, p=path: self.shown(p), text)
        return text

    def _template_line(self, path: str, line: str | None) -> str:
        from mlops_lint.model.position import Span

        found = self.helm[path].locate(Span(int(line), 1, int(line), 2)) if line else None
        return f"{found[0]}:{found[1].line}" if found is not None else self.shown(path)

    def alternatives(self, message: str) -> bool:
        """Whether a note on an object defined differently in several places names only renders
        of one chart (its values.yaml and ci/*-values.yaml: alternatives, not two objects)."""
        if "<helm template " not in message or " is defined differently in " not in message:
            return False
        import re

        places = re.findall(r"(<helm template [^>]*>)", message.split(": rules that count", 1)[0])
        count = re.search(r" is defined differently in (\d+) places", message)
        charts = {getattr(self.helm.get(place), "display", None) for place in places}
        return count is not None and len(places) == int(count.group(1)) and len(charts) == 1 and None not in charts

    def templates_rendered(self) -> dict[str, str]:
        """The status of each template of a rendered chart: linted through its render."""
        out = {}
        for mapper in self.helm.values():
            if getattr(mapper, "display", None) is not None:
                for _, source in mapper.sources:
                    out[mapper.place(source)[0]] = "linted"
        for result, _ in self.errors:  # a chart's render that failed at a template: that template was read
            if result.node[:1] == ("helm",) and not result.path.endswith("Chart.yaml"):
                out[result.path] = "linted"
        return out

    @property
    def virtual(self) -> set[str]:
        return set(self.mappers) | {path for path in self.helm if path.startswith("<helm template ")}


def _any_named(items: list[tuple[SourceFile, str]], names: tuple[str, ...], folders: bool = False) -> bool:
    """Whether a file of ``names`` is among the run's files (with ``folders``, or beside one: a
    ``Kustomization`` has no suffix, so it is not discovered)."""
    if any(source.path.name in names for source, _ in items):
        return True
    if folders:
        for folder in {os.path.dirname(source.path) for source, _ in items}:
            if any(os.path.isfile(os.path.join(folder, name)) for name in names if "." not in name):
                return True
    return False


def settings(config: Config) -> tuple[str, tuple[str, ...] | None, float]:
    """(enabled, command, timeout): a build's timeout is ``kustomize.timeout`` and at most
    ``file-timeout`` (a build is bounded as a file is)."""
    section = config.kustomize or {}
    command = section.get("command")
    from mlops_lint.engine.kustomize import DEFAULT_TIMEOUT

    timeout = float(section.get("timeout", DEFAULT_TIMEOUT))
    if config.file_timeout and config.file_timeout > 0:
        timeout = min(timeout, float(config.file_timeout))
    return section.get("enabled", "auto"), tuple(command) if command else None, timeout


# the wall-clock time every build of a run (linter.engine.run.lint, between new_run and end_run)
# counts against (linter.engine.kustomize.BUILDS_BUDGET), set when the run's first build starts;
# a start() outside a run has the budget to itself
_RUN: dict[str, float] = {}


def new_run() -> None:
    _RUN.clear()
    _RUN["active"] = 1.0


def end_run() -> None:
    """The run's builds done: its budget forgotten, and the build cache entries it used kept
    fresh and the folder pruned (:func:`linter.engine.kustomize.end_run`; called after the result
    cache saved its run file)."""
    import sys

    _RUN.clear()
    built = sys.modules.get("mlops_lint.engine.kustomize")  # not imported: no build cache used
    if built is not None:
        built.end_run()


def _deadline() -> float:
    import time

    from mlops_lint.engine.kustomize import BUILDS_BUDGET

    if "active" not in _RUN:
        return time.monotonic() + BUILDS_BUDGET
    return _RUN.setdefault("deadline", time.monotonic() + BUILDS_BUDGET)


class _Guard:
    """While builds run: SIGTERM and SIGINT (Ctrl-C) first kill every build's process group and
    remove the builds' temporaries (:func:`linter.engine.kustomize.abandon`), then do what they
    did before (Ctrl-C: the linter's one line and exit 130; SIGTERM: the process ends by it)."""

    def __init__(self) -> None:
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> "_Guard":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                self.previous[signum] = signal.signal(signum, self._caught)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        self.previous = {}

    def _caught(self, signum: int, frame: Any) -> None:
        import signal

        from mlops_lint.engine.kustomize import abandon

        abandon()
        previous = self.previous.get(signum)
        if callable(previous):
            previous(signum, frame)
            return
        if previous == signal.SIG_IGN:
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _error(root: Any, message: str, severity: str, span: Any = FILE_START) -> tuple[Result, None]:
    return (Result("SCH001", "parse-error", severity, message, root.display, span, None, ("kustomize", message)), None)


class Pending:
    """Builds under way: :meth:`result` waits for them (once) and gives the finished :class:`Builds`."""

    def __init__(self, out: Builds, finish: Callable[[], None] | None = None):
        self._out = out
        self._finish = finish

    def result(self) -> Builds:
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()
        return self._out


def start(items: list[tuple[SourceFile, str]], config: Config, cwd: Path, jobs: int,
          cache_dir: Path | None, targets: set[str], beside: bool = False, bound: Path | None = None,
          chart_targets: set[str] | None = None, known: dict[str, tuple[bytes, str]] | None = None) -> Pending:
    """The run's roots built (or read from the build cache), with the notes and errors they
    give: started in ``jobs`` threads (each waits on its own process). With
    ``beside`` they go on while the caller reads and parses the files, and
    :meth:`Pending.result` waits for them; else they are done when this returns. On the
    kustomize bench corpus at ``--jobs 2`` this took the builds' 1.1 s out of the serial part
    (``jobs - 1`` threads beside the parse left 0.6 s of it).

    ``bound``: the project's folder; a root whose closure names anything outside it is not
    built (a note names the kustomization and line). ``known``: the files the survey read
    (absolute path -> (bytes, content hash)), which a chart's render takes instead of reading
    them again (:class:`linter.sources.helm_sdk.ChartFiles`)."""
    out = Builds(helm_off=(config.helm or {}).get("enabled") == "never")
    charts = _any_named(items, ("Chart.yaml",))
    if not _any_named(items, KUSTOMIZATION_NAMES, folders=True):
        if charts:  # charts and no kustomization: no roots looked for (find_roots)
            _helm_charts(out, items, config, cwd, jobs, cache_dir,
                         targets if chart_targets is None else chart_targets, known)
        return Pending(out)  # the common case: nothing to build, nothing more imported
    from mlops_lint.engine import kustomize as kz
    from mlops_lint.sources.kustomize import find_roots

    if charts:
        _helm_charts(out, items, config, cwd, jobs, cache_dir, targets if chart_targets is None else chart_targets,
                     known)
    enabled, configured, timeout = settings(config)
    if enabled == "never":  # every file linted raw, patches too, as the config asks
        return Pending(out)
    roots = find_roots(((str(source.path), display) for source, display in items),
                          os.fspath(bound) if bound is not None else None)
    if not roots:
        return Pending(out)
    display_of = {os.path.realpath(source.path): display for source, display in items}
    severity = config.severity.get("SCH001", "error")

    def shown(path: str) -> str:
        return display_of.get(path) or display_path(Path(path), cwd)

    def targeted(root: Any) -> bool:
        return root.display in targets or any(shown(path) in targets for path in root.inputs)

    try:
        command = kz.find_command(configured)
    except kz.CommandRefused as refused:
        out.errors.extend(_error(root, f"kustomize.command not run: {refused}", severity)
                          for root in roots if targeted(root))
        return Pending(out)
    buildable = []
    resources = _resources(roots)

    def not_built(root: Any, message: str) -> None:  # its note names the patch files it leaves out
        said = _leave_patches(out, root, resources, shown)
        out.notes.append(Note(root.display, f"{message}, except {said}" if said else message))

    for root in roots:
        if not targeted(root):
            continue  # nothing of it is reported: its files stay as they are for other files' look-ups
        if root.refused is not None:
            where, line, why = root.refused
            not_built(root, f"kustomize build not run: {shown(where)}:{line}: {why}; mlops-lint builds nothing it "
                            "cannot read as kustomize would, nor anything outside the project; its files are linted "
                            "as they are")
        elif root.remote:
            not_built(root, f"kustomize build not run: it names a remote base ({root.remote[0]}) and mlops-lint "
                            "builds without network access; its files are linted as they are")
        elif root.helm:
            not_built(root, "kustomize build not run: it inflates Helm charts (helmCharts), which mlops-lint does "
                            "not run; its files are linted as they are")
        elif command is None and enabled == "always":
            out.errors.append(_error(root, "kustomize.enabled is always, but no kustomize or kubectl was found on "
                                           "PATH (set kustomize.command or install one)", severity))
            if said := _leave_patches(out, root, resources, shown):
                out.notes.append(Note(root.display, f"the build was not run, so {said} {_BUILD_THEM}"))
        elif command is None:
            not_built(root, "kustomize build not run: no kustomize or kubectl found on PATH; its files are linted as "
                            "they are (set kustomize.command to build it)")
        else:
            buildable.append(root)
    if not buildable:
        return Pending(out)
    cache = kz.BuildCache(cache_dir)
    keys = {root.path: kz.build_key(root, command) for root in buildable} if cache.folder else {}
    outputs: dict[str, kz.BuildOutcome] = {}
    todo = []
    for root in buildable:
        data = cache.get(keys[root.path]) if root.path in keys else None
        if data is not None:
            wrapper, output = kz.split_cached(data)
            outputs[root.path] = kz.BuildOutcome(root, output=output, wrapper=wrapper)
        else:
            todo.append(root)
    pool, running = None, []
    if todo:
        from concurrent.futures import ThreadPoolExecutor

        guard = _Guard().__enter__()
        deadline = _deadline()
        pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo))))
        running = [pool.submit(kz.build, root, command, timeout, deadline=deadline) for root in todo]

    def finish() -> None:
        if pool is not None:
            try:  # taken in the roots' order: nothing depends on which finished first
                for root, future in zip(todo, running):
                    built = outputs[root.path] = future.result()
                    if built.output is not None and root.path in keys:
                        cache.put(keys[root.path], kz.for_cache(built.output, built.wrapper))
            finally:
                pool.shutdown()
                guard.__exit__()
        _finish(out, buildable, outputs, keys, display_of, targeted, shown, severity)

    if beside:
        return Pending(out, finish)
    finish()
    return Pending(out)


def _finish(out: Builds, buildable: list, outputs: dict, keys: dict[str, str], display_of: dict[str, str],
            targeted: Callable[[Any], bool], shown: Callable[[str], str], severity: str) -> None:
    """Each root's output loaded as one more document, or its failure made its SCH001."""
    from mlops_lint.engine import kustomize as kz
    from mlops_lint.sources.files import load_bytes

    raw_only: set[str] = set(out.raw_only)  # the patch files of roots not built
    failed = []
    for root in buildable:
        built = outputs[root.path]
        if built.error is not None or built.output is None:
            if targeted(root):
                out.errors.append(_error(root, f"kustomize build failed: {built.error}", severity,
                                         kz.error_span(root, built.error)))
                failed.append(root)
            continue
        virtual = kz.virtual_path(root)
        output = built.output
        document = load_bytes(output, virtual, "k8s")
        origins = kz.strip_origins(document, built.wrapper)
        out.mappers[virtual] = kz.Mapper(root, document, origins, display_of)
        out.inputs[virtual] = keys.get(root.path, "")
        out.documents.append((document, output, targeted(root)))
        raw_only.update(shown(path) for path in root.inputs if path not in {k.path for k in root.chain})
    out.raw_only = frozenset(raw_only)
    resources = _resources(buildable)
    for root in failed:
        if said := _leave_patches(out, root, resources, shown):
            out.notes.append(Note(root.display, f"the build failed, so {said} {_BUILD_THEM}"))


_BUILD_THEM = "(build the root to lint them as they apply)"


def _resources(roots: list) -> set[str]:
    """The files some kustomization of ``roots`` reads other than as its own patches."""
    return {path for root in roots for kustomization in root.chain
            for path in kustomization.inputs - {patch.file for patch in kustomization.patches}}


def _leave_patches(out: Builds, root: Any, resources: set[str], shown: Callable[[str], str]) -> str:
    """The patch files of a root that is not built are not linted as whole objects: a strategic
    merge patch sets only what it changes, so every field it leaves to its base would be a false
    finding (a container without resources, capabilities …), and the object it patches is its
    base's, not a second definition in the index. Their raw reading keeps their parse errors and
    comments, as a built root's files do. A file some kustomization of the project lists as a
    resource (``resources``) stays linted as written. What the root's note says of them ("": none)."""
    files = sorted({shown(patch.file) for kustomization in root.chain for patch in kustomization.patches
                    if patch.file and patch.file not in resources and os.path.isfile(patch.file)})
    if not files:
        return ""
    out.raw_only = out.raw_only | frozenset(files)
    return f"its patch files ({', '.join(files)}) are not linted as whole objects: a patch sets only what it changes"


def _helm_charts(out: Builds, items: list[tuple[SourceFile, str]], config: Config, cwd: Path, jobs: int,
                 cache_dir: Path | None, targets: set[str], known: dict[str, tuple[bytes, str]] | None = None) -> None:
    """Each chart of the project rendered (``helm: {enabled: auto}``, the default): by Helm's SDK
    in a worker when the ``helm`` extra is installed (:mod:`linter.sources.helm_sdk`), else by a
    ``helm`` found on PATH, else skipped with a note saying how to get it linted; each render
    linted as rendered output is, its findings at the templates (:mod:`linter.sources.helm`)."""
    from mlops_lint.sources import helm

    section = config.helm or {}
    enabled = section.get("enabled", "auto")
    if enabled == "never":
        return
    # the charts a target file of the run is in (a named template too; a document read from
    # stdin is no chart's file): see linter.engine.run
    holders = set(targets)  # every target and each folder above it, as displayed
    for display in targets:
        parts = display.split("/")
        holders.update("/".join(parts[:end]) for end in range(1, len(parts)))
    every = helm.find_charts((str(source.path), display) for source, display in items)
    charts = [chart for chart in every if (chart[1] == "." and targets) or chart[1].rstrip("/") in holders]
    if not charts:
        return
    severity = config.severity.get("SCH001", "error")
    renderer, refused = helm.renderer(section)
    if refused:
        out.notes.append(Note(display_path(config.path, cwd) if config.path is not None else "helm.command", refused))
    if renderer is None:
        for folder, display in charts:
            if enabled == "always":
                out.errors.append((Result("SCH001", "parse-error", severity, f"{helm.NOT_RENDERED}",
                                          helm.chart_file(display), FILE_START, None, ("helm", "unrendered")), None))
        return
    root = os.fspath(config.root) if config.root is not None else os.fspath(cwd)
    apis = helm.api_versions(config.bundled_crds, helm.project_crds(
        (str(source.path) for source, _ in items), [folder for folder, _ in every], config))
    cache = None
    if cache_dir is not None:
        from mlops_lint.engine import kustomize as kz

        cache = kz.BuildCache(cache_dir)
    plans = [helm.plan(folder, display, section, config.kubernetes_version, root, apis, known, cache)
             for folder, display in charts]
    timeout = float(section.get("timeout", 60.0))

    prepared = helm.render_prepared(plans, renderer, timeout, cache, jobs, known, os.fspath(cwd))
    for plan in plans:
        out.notes.extend(plan.notes)
    for plan, done in zip(plans, prepared):
        files = None
        for render, (output, error), key in zip(plan.renders, done.results, done.keys or [None] * len(plan.renders)):
            if output is None:
                where, span = helm.error_place(str(error), plan.folder, plan.display, os.fspath(cwd))
                out.errors.append((Result("SCH001", "parse-error", severity,
                                          f"helm template failed{render.with_values}: {error}",
                                          where, span, None, ("helm", str(error))), None))
                continue
            virtual = render.virtual(plan.display)
            mapper = helm.HelmMapper(output.decode("utf-8", "replace"), plan.folder, os.fspath(cwd),
                                     display=plan.display, values=render.label)
            mapper.render = render  # its values sources (a values.yaml fix is made only where they do not set the value)
            mapper.output = output
            out.helm[virtual] = mapper
            if key is not None:  # the positions an earlier run found on this render (linter.sources.helm.Memo)
                if files is None:
                    files = dict(done.files.files)
                mapper.use_memo(helm.Memo(cache, helm.Memo.key_of(key, mapper), files, done.record))
            out.documents.append((Unparsed(virtual, output), output, True))
        out.rendered.update(helm.templates_folders(plan.folder, done.files))


def with_helm(builds: Builds, stdin: tuple[str, bytes] | None, shown: str, cwd: Path) -> None:
    """Rendered Helm output on stdin (its ``# Source:`` comments) mapped back to the templates."""
    if stdin is None or b"# Source: " not in stdin[1]:
        return
    from mlops_lint.sources import helm

    mapper = helm.HelmMapper(stdin[1].decode("utf-8", "replace"), helm.chart_folder(stdin[0], os.fspath(cwd)),
                             os.fspath(cwd))
    if mapper:
        builds.helm[shown] = mapper


def remap_pairs(pairs: list[tuple[Result, Any]], builds: Builds | None) -> list[tuple[Result, Any]]:
    if builds is None:
        return pairs
    if builds.mappers:
        from mlops_lint.engine import kustomize as kz

        pairs = kz.remap(pairs, builds.mappers)
    if builds.helm:
        from mlops_lint.sources import helm

        pairs = helm.remap(pairs, builds.helm)
        # a finding on another file that names a rendered object's place (a CRD a chart renders)
        pairs = [(replace(result, message=builds.shown_in(result.message)), key)
                 if "<helm template " in result.message else (result, key) for result, key in pairs]
    return pairs


def remap_directives(directives: list, builds: Builds | None) -> list:
    if builds is None:
        return directives
    if builds.mappers:
        from mlops_lint.engine import kustomize as kz

        directives = [kz.remap_directive(directive, builds.mappers) for directive in directives]
    if builds.helm:
        from mlops_lint.sources import helm

        directives = [helm.remap_directive(directive, builds.helm) for directive in directives]
    return directives
