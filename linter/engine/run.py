"""One whole run: discover the files, survey them, open the cache, index the shared files,
lint what the cache does not answer for, reduce with the PROJECT rules, apply suppressions and
the baseline, and make the report.

Every file is read once up front: its content hash (for the cache) and whether its text
mentions a cross-file kind (REFERENCE_KINDS) or may describe node pools (a script mentioning
`aks`). Those few *shared* files are parsed first into the index every rule looks across files
with; every other file is then loaded, linted and let go one at a time (in-process, or by N
forked workers that inherit the index), leaving a FileOutcome: its findings before suppression,
its suppressions, and the facts PROJECT rules collect from its objects. The parent reduces the
facts with the PROJECT rules and applies every suppression at once, so a run's output does not
depend on --jobs, on the cache, or on which process linted which file. Shipping parsed trees
between processes was measured to cost as much as parsing them: only outcomes travel.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from msgspec import Struct, field
from msgspec.structs import replace

from mlops_lint.config import Config
from mlops_lint.discover import SourceFile, display_path, shown as shown_path
from mlops_lint.engine.memory import collector_paused, freeze
from mlops_lint.engine.builds import Builds
from mlops_lint.engine.passes import Work, build_index, prepare, skeleton
from mlops_lint.engine.projects import Project, add_configs, by_roots, explicit, loader
from mlops_lint.engine.runner import PARSE_ERROR, UNUSED_SUPPRESSION, FileOutcome, Job, Runner, generic_kinds_note, merged_facts
from mlops_lint.engine.selection import enabled_rules
from mlops_lint.engine.survey import Survey, survey_files
from mlops_lint.engine.workers import lint_all
from mlops_lint.model.document import BICEP, DOCKERFILE, K8S, SHELL, TERRAFORM, Document
from mlops_lint import custom
from mlops_lint.registry import Registry
from mlops_lint.result import Result
from mlops_lint.roots import RootFinder
from mlops_lint.sources.files import load_bytes

if TYPE_CHECKING:
    from mlops_lint.cache import Keys  # imported where a run has a cache (start-up time)


RENDERED = "rendered"  # a chart template's reason, once its chart rendered: linted (as rendered)


class LintRequest(Struct):
    paths: list[Path]  # what to report on (files or folders); empty with stdin
    config: Config | None  # one config for one project (--config); None: each root's own (linter.roots)
    registry: Registry
    select: list[str] | None = None  # --select replaces the config's select
    ignore: list[str] = field(default_factory=list)  # --ignore adds to the config's ignore
    jobs: int = 1
    stdin: tuple[str, bytes] | None = None  # (--stdin-filename or "-", content)
    baseline: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)
    cache_dir: Path | None = None  # the result cache's folder (None: no cache)
    overrides: dict[str, Any] = field(default_factory=dict)  # Config fields set on every root's config (--profile)


class FixTarget(Struct, frozen=True):
    """What a fix run needs of one target file the run linted."""

    path: str  # the file, as discovery found it (absolute)
    kind: str  # its loader's (linter.model.document.K8S, ...)
    digest: str  # of the bytes the run linted (linter.engine.survey.content_digest)
    config: Config | None  # its project's (fix.unsafe, unfixable)


class Wants(Struct, frozen=True):
    """What a caller needs of a run besides its report (:func:`lint_run`)."""

    # each project's :class:`Part`: for a caller that keeps them (the language server), or
    # that ends the process without freeing them (linter.cli.run: freeing millions of objects one
    # by one costs a part of the run, measured 0.2-0.3 s at 10,000 files, that the operating
    # system does at once)
    parts: bool = False
    # the index is built (and each part kept) even when the cache answers for the whole project,
    # which a run would otherwise end with (the language server re-lints one file against it)
    indexed: bool = False
    # each target file's :class:`FixTarget` (a fix run, linter.fix.run); every file is then read
    # up front by the survey
    targets: bool = False


class Part(Struct):
    """What one project's run built (:attr:`LintRun.parts`)."""

    survey: list[Survey]  # every file read up front
    kept: dict  # the shared files' parsed documents (linter.engine.passes.prepare)
    index: Any  # the project's index (linter.index)
    runner: Runner
    outcomes: dict[str, FileOutcome]  # display path -> its outcome
    job: Job
    builds: Builds


class ProjectRun(Struct):
    """One project's run (:func:`run`): its findings after suppressions, each target's status,
    the notes (path, message), and what :class:`Wants` asked for."""

    results: list[Result]
    statuses: dict[str, str]
    notes: list[tuple[str, str]]
    targets: dict[str, FixTarget] = field(default_factory=dict)
    part: Part | None = None


class LintRun(Struct):
    """A run's report and what :class:`Wants` asked for: each project's :class:`Part` (in the
    projects' order) and each target file's :class:`FixTarget` (display path -> target)."""

    report: Any  # linter.result.RunReport
    parts: list[Part] = field(default_factory=list)
    targets: dict[str, FixTarget] = field(default_factory=dict)


def lint(request: LintRequest) -> "RunReport":  # noqa: F821 - imported below
    """The report of one run: each project linted on its own, the findings merged."""
    return lint_run(request).report


def lint_run(request: LintRequest, wants: Wants = Wants()) -> LintRun:
    """One run (:func:`lint`), with what ``wants`` asks for besides the report. The steps: the
    projects, their rules, the cache and its keys, each project's :func:`run`, the report."""
    from mlops_lint.engine.builds import end_run, new_run
    from mlops_lint.engine.profile import infer_all
    from mlops_lint.result import Note

    registry, cwd = request.registry, request.cwd.resolve()
    finder = RootFinder(cwd)
    new_run()  # the run's builds share one time budget
    if request.config is not None:
        projects = explicit(request.config, request.paths)
    else:
        projects = by_roots(request.paths, cwd, loader(registry, request.overrides),
                            request.stdin[0] if request.stdin is not None else None, finder)
    add_configs(projects, request.paths)  # a config's node pools are linted where it writes them
    inferred = infer_all(projects, cwd)  # before the rules are chosen: the profile turns some off
    chosen = [enabled_rules(custom.extended(registry, project.config), project.config, request.select, request.ignore)
              for project in projects]
    cache, keys = open_cache(request, projects, chosen)
    sources = Sources(cwd, finder)
    for note in inferred:
        sources.add_note(note.path, os.fspath(cwd / note.path))
    merged = Merged(notes=list(inferred))
    out = LintRun(None)
    with collector_paused():  # young generations are collected while linting (see lint_files)
        for project, rules, key in zip(projects, chosen, keys):
            done = _lint_project(project, rules, key, request, cwd, cache, sources, merged.notes, wants)
            merged.add(project, done, cwd, sources, rules)
            out.targets.update(done.targets)
            if done.part is not None:
                out.parts.append(done.part)
        freeze()  # the run's results live to the end: reporting never rescans them
    if cache is not None:
        cache.save()
    merged.notes.extend(Note(display_path(Path(path), cwd), f"config not used: {why} (pass it with --config if you "
                                                          "trust it)")
                        for path, why in finder.ignored)  # in a folder others can write to (linter.roots.unsafe_because)
    end_run()
    out.report = report_of(merged, request, projects, chosen, sources, cwd)
    return out


def open_cache(request: LintRequest, projects: list[Project], chosen: list[list]) -> tuple[Any, list[str]]:
    """The run's result cache (None without one) and each project's key (linter.cache)."""
    if request.cache_dir is None:
        return None, [""] * len(projects)
    from mlops_lint.cache import Cache, code_key, project_key, run_file_key

    code = code_key([meta for rules in chosen for meta in rules], request.registry)
    keys = [project_key(code, rules, project.config, project.folder) for project, rules in zip(projects, chosen)]
    return Cache.open(request.cache_dir, run_file_key(keys)), keys


class Merged(Struct):
    """The projects' runs merged: findings, each file's status, notes, each target's fail-on."""

    results: list[Result] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list = field(default_factory=list)  # linter.result.Note
    fail_on: dict[str, str] = field(default_factory=dict)
    unsafe_fixing: set[str] = field(default_factory=set)

    def add(self, project: Project, done: ProjectRun, cwd: Path, sources: "Sources", rules: list = ()) -> None:
        from mlops_lint.result import Note

        self.results.extend(done.results)
        self.notes.extend(Note(path, message) for path, message in done.notes)
        self.statuses.update(done.statuses)
        if rules and not any(meta.code == PARSE_ERROR for meta in rules):
            # nothing of a file that does not parse was linted, and with SCH001 off nothing says so:
            # it is counted as skipped, never as a linted file of a green run
            self.statuses.update({path: NOT_PARSED for path, status in done.statuses.items() if status == "parse error"})
        self.skipped.update({display_path(path, cwd): "linted" if why == RENDERED else f"skipped: {why}"
                             for path, why in project.targets.skipped})
        for note in project.targets.notes:
            self.notes.append(Note(display_path(Path(note.path), cwd), note.message))
            sources.add_note(self.notes[-1].path, note.path)
        self.fail_on.update(dict.fromkeys(done.statuses, project.config.fail_on))
        if project.config.fix_unsafe:
            self.unsafe_fixing.update(done.statuses)


NOT_PARSED = f"skipped: does not parse, and {PARSE_ERROR} is off"


def report_of(merged: Merged, request: LintRequest, projects: list[Project], chosen: list[list], sources: "Sources",
              cwd: Path) -> "RunReport":  # noqa: F821 - imported below
    """The run's report: the baseline applied, the findings sorted, the counts and statuses."""
    from mlops_lint import __version__, suppress
    from mlops_lint.result import RunReport

    results = merged.results
    if request.baseline is not None:
        baseline = suppress.Baseline.load(request.baseline, cwd)
        results = suppress.apply_baseline(results, baseline, request.baseline.resolve().parent, cwd)
    results.sort(key=Result.sort_key)
    skipped, statuses, fail_on = merged.skipped, merged.statuses, merged.fail_on
    levels = set(fail_on.values()) or {projects[0].config.fail_on if projects else Config().fail_on}
    root, uris = sources.located()
    return RunReport(
        results=results,
        rules=sorted({meta.code: meta for rules in chosen for meta in rules}.values(), key=lambda m: m.code),
        files_linted=sum(1 for status in (*skipped.values(), *statuses.values()) if not status.startswith("skipped")),
        files_skipped=sum(1 for status in (*skipped.values(), *statuses.values()) if status.startswith("skipped")),
        notes=merged.notes,
        root=root,
        version=__version__,
        fail_on=levels.pop() if len(levels) == 1 else min(levels, key=_rank),
        file_status=dict(sorted({**skipped, **statuses}.items())),
        fail_on_paths=fail_on if len(set(fail_on.values())) > 1 else {},
        uris=uris,
        unsafe_fixing=merged.unsafe_fixing,
        nothing_linted=nothing_linted({**skipped, **statuses}, request),
        fail_on_empty=any(project.config.fail_on_empty for project in projects),
    )


def nothing_linted(file_status: dict[str, str], request: LintRequest) -> str:
    """Why nothing was linted ("" when a file was): the run's skipped files counted by reason,
    an empty stdin, or where nothing lintable was found (issue 33: never "All checks passed")."""
    from collections import Counter

    if any(not status.startswith("skipped") for status in file_status.values()):
        return ""
    if request.stdin is not None and not request.stdin[1].strip():
        skipped = len(file_status) - 1
        more = f"; {skipped} other file{'s' if skipped != 1 else ''} skipped" if skipped > 0 else ""
        return f"stdin was empty (did the command before the pipe, such as `helm template`, fail?){more}"
    if not file_status:
        given = ", ".join(shown_path(os.fspath(p)) for p in request.paths) or "."
        return (f"no YAML or JSON manifest, Dockerfile or shell script found in {given}"
                " (tool folders, such as .git and .venv, and `exclude` patterns are not read)")
    reasons = Counter(status.split(": ", 1)[-1] for status in file_status.values())
    listed = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{len(file_status)} file{'s' if len(file_status) != 1 else ''} skipped ({listed})"


def _under(path: str, folders: set[str]) -> bool:
    """Whether ``path`` is inside one of ``folders`` (absolute): its parents looked up in the set,
    not each folder tried against it (a run of many charts has many templates and folders)."""
    parent = os.path.dirname(path)
    while True:
        if parent in folders:
            return True
        up = os.path.dirname(parent)
        if up == parent:
            return False
        parent = up


def _rank(level: str) -> int:
    from mlops_lint.rule import SEVERITY_RANK

    return SEVERITY_RANK.get(level, len(SEVERITY_RANK))  # "never" last


def _lint_project(project: Project, rules: list, key: str, request: LintRequest, cwd: Path, cache: Any,
                  sources: "Sources", notes: list | None = None, wants: Wants = Wants()) -> ProjectRun:
    """One project: its context files (and the stdin document, if it is this project's) linted
    with its config, findings reported for its targets."""
    from mlops_lint.discover import classify

    config = project.config
    by_path: dict[Path, SourceFile] = {f.path: f for f in project.context}
    for source in project.targets.files:
        by_path.setdefault(source.path, source)
    shown_targets = [display_path(f.path, cwd) for f in project.targets.files]
    target_paths = set(shown_targets)
    sources.add(project, project.targets.files, shown_targets)

    stdin: tuple[Document, bytes] | None = None
    if request.stdin is not None and project.stdin:
        name, data = request.stdin
        shown = name if name not in ("", "-") else "<stdin>"
        kind = classify(Path(shown), sniff=False) or K8S
        absolute = (cwd / shown).resolve() if shown != "<stdin>" else None
        if absolute is not None:
            by_path.pop(absolute, None)
            shown = display_path(absolute, cwd)
            sources.add_path(project, absolute, shown)
        else:  # no name to tell the kind: the content tells it, and a note says what was assumed
            from mlops_lint.discover import sniff

            kind, why = sniff(data)
        stdin = (load_bytes(data, shown, kind), data)
        target_paths.add(shown)
        if absolute is None and (kind != K8S or stdin[0].skipped):
            from mlops_lint.result import Note

            what = {DOCKERFILE: "a Dockerfile", SHELL: "a shell script", TERRAFORM: "Terraform", BICEP: "Bicep"}.get(kind, "YAML")
            held = "; it holds no Kubernetes object" if stdin[0].skipped else ""
            project.targets.notes.append(Note("<stdin>", f"read as {what} ({why}){held}; --stdin-filename NAME "
                                              "gives the kind by its name"))

    items = [(source, display_path(path, cwd)) for path, source in sorted(by_path.items(), key=lambda kv: str(kv[0]))]
    from mlops_lint.engine.builds import start, with_helm

    # with --jobs 2 or more, the kustomize builds run while this process reads and parses the
    # files: run() waits for them where it first needs them (settle)
    folder = project.folder
    bound = (folder if folder.is_dir() else folder.parent).resolve() if folder is not None else None
    # the charts to render: those a target file is in (a named template too; not the stdin document)
    chart_targets = {display for _, display in items if display in target_paths} | {
        display_path(path, cwd) for path, why in project.targets.skipped if why == "Helm chart template"}
    # the survey first: a chart's render is keyed by its files' content, and those the survey
    # read (its Chart.yaml and values files) are not read and hashed again (a warm run)
    survey = survey_files(items, read=cache is not None or wants.targets)
    known = {os.fspath(s.source.path): (s.data, s.digest) for s in survey if s.data is not None and s.digest is not None}
    pending = start(items, config, cwd, request.jobs, request.cache_dir, target_paths, beside=request.jobs > 1,
                    bound=bound, chart_targets=chart_targets, known=known)

    def settle() -> tuple[Builds, Job]:
        builds = pending.result()
        if stdin is not None:
            with_helm(builds, request.stdin, stdin[0].path, cwd)
        if notes is not None:
            notes.extend(builds.notes)
        if builds.helm_off:  # the skipped charts' notes say why, not how to render them
            from mlops_lint.discover import CHART_NOTE
            from mlops_lint.result import Note

            project.targets.notes[:] = [Note(n.path, "Helm chart templates skipped (the config says helm: "
                                                     "{enabled: never})") if n.message == CHART_NOTE else n
                                        for n in project.targets.notes]
        if builds.rendered:  # the charts rendered: the discovery's "templates skipped" notes no longer hold
            project.targets.notes[:] = [n for n in project.targets.notes
                                        if os.path.abspath(n.path) not in builds.rendered]
            # and their templates were linted, as rendered
            project.targets.skipped[:] = [(path, RENDERED if _under(os.fspath(path), builds.rendered) else why)
                                          for path, why in project.targets.skipped]
        built = {document.path for document, _, targeted in builds.documents if targeted}
        return builds, Job(rules, config, custom.extended(request.registry, config), target_paths | built, key,
                           builds.raw_only)

    done = run(survey, stdin, settle, config, request.jobs, cache, wants)
    for display, target in done.targets.items():
        if display in target_paths and target.config is None:
            done.targets[display] = replace(target, config=config)
    done.results = fixable_only(done.results, config, request.registry)
    return done


def fixable_only(results: list[Result], config: Config, registry: Registry) -> list[Result]:
    """``results`` with the fixes of the config's ``unfixable`` rules taken off (their findings
    are reported with the hint, without a fix to apply)."""
    if not config.unfixable:
        return results
    return [replace(r, autofix=None) if r.autofix is not None and not config.fixable(r.rule, registry) else r
            for r in results]


class Sources:
    """Where SARIF's ``%SRCROOT%`` is, and each target's path under it: a file's base is the top
    of its git work tree, else its project's root (else the working folder); several bases give
    their deepest common folder, so every URI stays relative and unambiguous."""

    def __init__(self, cwd: Path, finder: RootFinder):
        self.cwd = cwd
        self.finder = finder
        self.files: dict[str, tuple[str, str]] = {}  # display path -> (absolute path, base)
        self._bases: dict[tuple[int, str], str] = {}  # (project, folder) -> base
        self.notes: dict[str, str] = {}  # a note's display path -> its absolute path

    def base(self, project: Project, folder: str) -> str:
        found = self._bases.get((id(project), folder))
        if found is None:
            git = self.finder.marks(folder)[1]
            own = project.folder
            if git is not None:
                found = git
            elif own is None:
                found = os.fspath(self.cwd)
            else:
                found = os.fspath(own) if os.path.isdir(own) else os.path.dirname(own)
            self._bases[id(project), folder] = found
        return found

    def add(self, project: Project, files: list[SourceFile], shown: list[str]) -> None:
        for source, display in zip(files, shown):
            text = os.fspath(source.path)
            self.files[display] = (text, self.base(project, os.path.dirname(text)))

    def add_path(self, project: Project, path: Path, shown: str) -> None:
        self.files[shown] = (os.fspath(path), self.base(project, os.fspath(path.parent)))

    def add_note(self, shown: str, path: str) -> None:
        """A note's path: given under ``%SRCROOT%`` too, but no base of its own."""
        self.notes[shown] = os.fspath(Path(path).absolute())

    def located(self) -> tuple[str, dict[str, str]]:
        """``%SRCROOT%``, and each display path's URI path under it where the two differ."""
        bases = {base for _, base in self.files.values()}
        if not bases:
            return os.fspath(self.cwd), {}
        root = os.path.commonpath(sorted(bases)) if len(bases) > 1 else bases.pop()
        if root == os.fspath(self.cwd):
            return root, {}
        prefix = root.rstrip(os.sep) + os.sep
        uris = {}
        for shown, text in [*((shown, text) for shown, (text, _) in self.files.items()), *self.notes.items()]:
            if text.startswith(prefix):  # what display_path gives, without parsing either path
                uri = shown_path(text[len(prefix):].replace(os.sep, "/"))
            else:
                uri = display_path(Path(text), Path(root))
            if uri != shown:
                uris[shown] = uri
        return root, uris


def run(survey: list[Survey], stdin: tuple[Document, bytes] | None, settle: Callable[[], tuple[Builds, Job]],
        config: Config, jobs: int, cache: Any, wants: Wants = Wants()) -> ProjectRun:
    """Cache, lint what is new, reduce: every finding of the ``survey``'s files (and ``stdin``, and
    the kustomize builds' outputs), after suppressions, each target file's status, and the
    notes (objects defined differently in several files, kinds read generically). ``settle``
    gives the builds and the job once they are first needed: as late as can be, so that builds
    under way go on while the shared files are parsed (a run without the cache). The steps, each below with its inputs and
    outputs: (the survey, made by the caller before the builds start: :func:`survey_files`) ->
    cache keys (and what the cache answers) -> first pass (the shared files parsed, the index
    built) -> builds -> lint (the second pass) -> project pass -> cache write."""
    builds: Builds | None = None
    job: Job | None = None
    if cache is not None or wants.targets:
        builds, job = settle()
    targets = fix_targets(survey, job.targets) if wants.targets else {}  # type: ignore[union-attr]
    keys: Keys | None = None
    finished: str | None = None  # the key of the project's finished run, where it is kept (finished_key)
    outcomes: dict[str, FileOutcome] = {}
    if cache is not None:
        from mlops_lint.cache import Keys

        keys = Keys(job.key, survey, stdin[1] if stdin is not None else None, builds,  # type: ignore[union-attr]
                    job.targets)  # type: ignore[union-attr]
        finished = finished_key(keys, job, builds, stdin, wants)  # type: ignore[arg-type]
        if finished is not None and not wants.indexed and cache.holds(keys.files.values()):
            found = cache.get_finished(finished)
            if found is not None and cache.get_project(keys.project) is not None:
                # the charts' renders, their findings mapped and suppressed, as they were: no file's
                # outcome decoded (each kept in the cache as it is)
                cache.keep(keys.files.values())
                return ProjectRun([result for result, _ in found[0]], found[2], found[1], targets)
        outcomes = cached(cache, keys)
        if (len(outcomes) == len(survey) + len(builds.documents)  # type: ignore[union-attr]
                and stdin is None and not wants.indexed):
            project = cache.get_project(keys.project)
            if project is not None:
                results, notes = project
                done = finish([outcomes[path] for path in sorted(outcomes)], results, job, notes, builds)
                if finished is not None:
                    cache.put_finished(finished, *done)
                return ProjectRun(*done, targets)
        # the PROJECT rules run: the cached outcomes' facts are decoded now (a fully warm run never
        # needs them); one whose facts do not validate is a miss, linted again (linter.cache)
        outcomes = cache.load_facts(outcomes)
    work, kept, skeletons = first_pass(survey, outcomes, config)
    if builds is None:
        builds, job = settle()
    assert job is not None
    index = index_of(skeletons, stdin, builds, job)
    runner = Runner(job.rules, index, job.config)
    runner.texts.mappers = builds.mappers
    found = lint_all(work, kept, runner, job, jobs)
    fresh = second_pass(found, stdin, builds, runner, job, outcomes)
    ordered = [outcomes[path] for path in sorted(outcomes)]
    notes = project_pass(runner, ordered, job)
    if cache is not None:
        write(cache, keys, found, fresh, outcomes, runner.out if stdin is None else None, notes, job)  # type: ignore[arg-type]
    part = Part(survey, kept, index, runner, outcomes, job, builds) if wants.parts else None
    done = finish(ordered, runner.out, job, notes, builds)
    if cache is not None and finished is not None:
        cache.put_finished(finished, *done)
    return ProjectRun(*done, targets, part)


FINISHED_FORMAT = 1


def finished_key(keys: Keys, job: Job, builds: Builds, stdin: Any, wants: Wants) -> str | None:
    """The key of the project's finished run (:meth:`linter.cache.Cache.get_finished`), for a
    project of Helm charts each with its record (:class:`linter.sources.helm.ChartRecord`) and
    no other build: a fully warm run then neither checks the charts' template maps nor maps
    their findings nor applies the suppressions again. Made of the project's key (the linter's
    code, its rules and config, every file's and render's content and key), the targets, and
    every chart record's key (the content of every file each render reads, templates too: a
    template edited without changing the output moves the findings, where the project's key
    alone would not tell). None: not kept (a project without charts, one with a kustomize
    build, a render that failed or has no record, stdin, a fix run)."""
    if not builds.helm or builds.mappers or builds.errors or stdin is not None or wants.targets:
        return None
    records = set()
    for mapper in builds.helm.values():
        memo = getattr(mapper, "_memo", None)
        if memo is None or memo.record is None:
            return None
        records.add(memo.record.key)
    from mlops_lint.digest import digest_text
    from mlops_lint.suppress import today_utc

    # the day (UTC) too: suppressions are applied in what is kept, and one with `until=` stops
    # applying after its day (linter.suppress.govern), which no file's content tells
    today = today_utc().isoformat()
    return "finished-" + digest_text(FINISHED_FORMAT, keys.project, today, *sorted(job.targets), *sorted(builds.helm),
                                     *sorted(records))


def fix_targets(survey: list[Survey], targets: set[str]) -> dict[str, FixTarget]:
    """Each target file the survey read, as a fix run needs it (its config is set by the caller)."""
    return {s.display: FixTarget(os.fspath(s.source.path), s.source.kind, s.digest, None)  # type: ignore[arg-type]
            for s in survey if s.digest is not None and s.display in targets}


def cached(cache: Any, keys: Keys) -> dict[str, FileOutcome]:
    """The outcomes the cache holds (display path -> outcome), facts still undecoded."""
    outcomes = {}
    for display, key in keys.files.items():
        found = cache.get(key)
        if found is not None:
            outcomes[display] = found
    return outcomes


def first_pass(survey: list[Survey], outcomes: dict[str, FileOutcome], config: Config
               ) -> tuple[Work, dict, list]:
    """The files to lint (those the cache did not answer for), the shared files parsed (display
    path -> document, for the second pass) and the skeletons of every shared file, for the index.
    The shared files the cache answered for are parsed again for the index only: keeping their
    trees in the cache would cost every cold run more (pickling them) than parsing them costs the
    rare run that lints some files again. Every surveyed file's bytes are let go."""
    work = [(s.source, s.display) for s in survey if s.display not in outcomes]
    again = [(s.source, s.display) for s in survey if s.shared and s.display in outcomes]
    kept, skeletons = prepare(work + again, {s.display: s.data for s in survey if s.data is not None}, config)
    for entry in survey:
        entry.data = None
    for _, display in again:
        kept.pop(display, None)
    return work, kept, skeletons


def index_of(skeletons: list, stdin: tuple[Document, bytes] | None, builds: Builds, job: Job) -> Any:
    """The project's index: the shared files' skeletons, the stdin document's and the builds'."""
    known = [own] if stdin is not None and (own := skeleton(stdin[0])) is not None else []
    known.extend(own for document, _, _ in builds.parsed() if (own := skeleton(document)) is not None)
    if job.raw_only:  # a file linted through a build is in the index as built, not as written
        skeletons = [found for found in skeletons if found.path not in job.raw_only]
    return build_index([*known, *skeletons])


def second_pass(found: list, stdin: tuple[Document, bytes] | None, builds: Builds, runner: Runner, job: Job,
                outcomes: dict[str, FileOutcome]) -> list[str]:
    """``outcomes`` completed: the linted files' (``found``), the stdin document's and the built
    outputs' the cache did not answer for; the display paths of those built outputs."""
    for display, _, outcome in found:
        outcomes[display] = outcome
    if stdin is not None:
        outcomes[stdin[0].path] = runner.outcome(stdin[0], stdin[0].path in job.targets)
    fresh = []
    for document, _, targeted in builds.parsed():
        if document.path not in outcomes:
            outcomes[document.path] = runner.outcome(document, targeted)
            fresh.append(document.path)
    return fresh


def project_pass(runner: Runner, ordered: list[FileOutcome], job: Job) -> list[tuple[str, str]]:
    """The PROJECT rules over every file's facts (their findings in ``runner.out``), and the notes."""
    runner.project(job.targets, merged_facts(ordered))
    return definition_notes(ordered, job.targets) + generic_kinds_note(ordered)


def write(cache: Any, keys: Keys, found: list, fresh: list[str], outcomes: dict[str, FileOutcome],
          project: list | None, notes: list[tuple[str, str]], job: Job) -> None:
    """The new outcomes into the cache: the linted files' (``found``), the built outputs' the
    cache did not hold (``fresh``), and the PROJECT rules' findings (``project``; None with
    stdin, whose run is never cached whole)."""
    for display, digest, outcome in found:
        if digest is not None:
            cache.put(keys.file(display, digest, display in job.targets), outcome)
    for path in fresh:
        cache.put(keys.files[path], outcomes[path])
    if project is not None:
        cache.put_project(keys.project, project, notes)


def definition_notes(outcomes: list[FileOutcome], targets: set[str]) -> list[tuple[str, str]]:
    """The notes on objects defined differently in several files (path, message), from every
    file's facts (decoded: the PROJECT rules ran)."""
    from mlops_lint.model import document

    return document.definition_notes(
        (fact for outcome in outcomes for fact in outcome.facts.get(document.DEFINITIONS, ())), targets)


def finish(outcomes: list[FileOutcome], project: list[tuple[Result, tuple | None]], job: Job,
           notes: list[tuple[str, str]], builds: "Builds | None" = None
           ) -> tuple[list[Result], dict[str, str], list[tuple[str, str]]]:
    """Every suppression applied at once (LNT001 for those that suppressed nothing), after the
    findings on built kustomize output are moved to the files the user edits; each target's
    status, and ``notes``."""
    from mlops_lint import suppress
    from mlops_lint.engine.builds import remap_directives, remap_pairs

    # a finding one file's view reports into another object (a TrainJob's, into its runtime) is
    # kept when that object's file is a target too
    pairs = [pair for outcome in outcomes for pair in outcome.results
             if pair[0].path == outcome.path or pair[0].path in job.targets]
    pairs.extend(project)
    if builds is not None:
        pairs = remap_pairs(pairs, builds)
        # a built object's fix edits its resource file: only when that file is a target of the run
        pairs = [(replace(r, autofix=None), key) if r.built_from is not None and r.autofix is not None
                 and any(edit.path not in job.targets for edit in r.autofix.edits) else (r, key) for r, key in pairs]
        pairs.extend(builds.errors)
    directives = remap_directives([directive for outcome in outcomes for directive in outcome.directives], builds)
    governed: list[Result] = []
    if not job.config.inline_suppressions:  # --no-inline-suppressions: the config and the baseline only
        directives = []
    else:
        directives, governed = suppress.govern(directives, registry=job.registry, severity=job.config.severity,
                                               enabled=job.enabled, require_reason=job.config.require_reason)
    results, unused = suppress.apply(pairs, directives, enabled_codes=job.enabled, registry=job.registry)
    results.extend(governed)
    if UNUSED_SUPPRESSION in job.enabled:
        results.extend(suppress.unused_results(unused, job.registry, job.config.severity))
    virtual = builds.virtual if builds is not None else set()
    statuses = {outcome.path: outcome.status for outcome in outcomes if outcome.target and outcome.path not in virtual}
    if builds is not None:
        notes = [(builds.shown(path), builds.shown_in(message)) for path, message in notes
                 if not builds.alternatives(message)]
        for document, _, targeted in builds.documents:  # the kustomizations of a build are linted (as built)
            mapper = builds.mappers.get(document.path)
            if not targeted or mapper is None:
                continue
            for kustomization in mapper.root.chain:
                if statuses.get(shown := mapper.display(kustomization.path), "").startswith("skipped"):
                    statuses[shown] = "linted"
        statuses.update(builds.templates_rendered())
        if builds.helm:  # the template positions found on the renders, for the next run
            from mlops_lint.sources.helm import save_memos

            save_memos(builds.helm)
    return results, statuses, notes
