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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linter.config import Config
from linter.discover import SourceFile, display_path
from linter.engine.memory import collector_paused, freeze
from linter.engine.passes import Work, build_index, prepare, skeleton
from linter.engine.runner import UNUSED_SUPPRESSION, FileOutcome, Job, Runner, merged_facts
from linter.engine.selection import enabled_rules
from linter.engine.survey import cache_key, content_digest, survey_files
from linter.engine.workers import lint_all
from linter.model.document import DOCKERFILE, K8S, SHELL, Document
from linter.registry import Registry
from linter.result import Result
from linter.sources.files import load_bytes


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
    """The report of one run."""
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
    job = Job(rules, config, registry, target_paths)
    cache = None
    if request.cache_dir is not None:
        from linter.cache import Cache, run_key

        cache = Cache.open(request.cache_dir, run_key(job.rules, config, registry))
    with collector_paused():  # young generations are collected while linting (see lint_files)
        results, statuses = run(items, stdin, job, request.jobs, cache, request.keep)
        freeze()  # the run's results live to the end: reporting never rescans them
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


def run(items: Work, stdin: tuple[Document, bytes] | None, job: Job, jobs: int,
        cache: Any, keep: list | None = None) -> tuple[list[Result], dict[str, str]]:
    """Survey, cache, lint what is new, reduce: every finding of ``items`` (and ``stdin``), after
    suppressions, and each target file's status."""
    survey = survey_files(items, read=cache is not None)
    outcomes: dict[str, FileOutcome] = {}
    keys: dict[str, str] = {}
    project_key = None
    if cache is not None:
        # what every file's findings may depend on besides itself: the shared files (and stdin)
        reference = cache_key(*(f"{s.display}:{s.digest}" for s in survey if s.shared),
                              content_digest(stdin[1]) if stdin else "")
        keys = {s.display: cache_key(reference, s.display, s.digest, s.display in job.targets)
                for s in survey if s.digest is not None}
        project_key = cache_key(reference, *sorted(keys.values()))
        for display, key in keys.items():
            found = cache.get(key)
            if found is not None:
                outcomes[display] = found
        if len(outcomes) == len(survey) and stdin is None:
            project = cache.get_project(project_key)
            if project is not None:
                return finish([outcomes[path] for path in sorted(outcomes)], project, job)
    missing = [s for s in survey if s.display not in outcomes]
    known = [own] if stdin is not None and (own := skeleton(stdin[0])) is not None else []
    work = [(s.source, s.display) for s in missing]
    # the shared files the cache answered for are parsed again for the index only: keeping their
    # trees in the cache would cost every cold run more (pickling them) than parsing them costs
    # the rare run that lints some files again
    again = [(s.source, s.display) for s in survey if s.shared and s.display in outcomes]
    kept, skeletons = prepare(work + again, {s.display: s.data for s in survey if s.data is not None})
    for entry in survey:
        entry.data = None
    for _, display in again:
        kept.pop(display, None)
    index = build_index([*known, *skeletons])
    runner = Runner(job.rules, index, job.config)
    found = lint_all(work, kept, runner, job, jobs)
    for display, digest, outcome in found:
        outcomes[display] = outcome
        if cache is not None and digest is not None:
            cache.put(cache_key(reference, display, digest, display in job.targets), outcome)
    if stdin is not None:
        outcomes[stdin[0].path] = runner.outcome(stdin[0], stdin[0].path in job.targets)
    ordered = [outcomes[path] for path in sorted(outcomes)]
    runner.project(job.targets, merged_facts(ordered))
    if cache is not None and stdin is None:
        cache.put_project(project_key, runner.out)
    if keep is not None:
        keep.append((survey, kept, index, runner, outcomes, ordered))
    return finish(ordered, runner.out, job)


def finish(outcomes: list[FileOutcome], project: list[tuple[Result, tuple | None]],
           job: Job) -> tuple[list[Result], dict[str, str]]:
    """Every suppression applied at once (LNT001 for those that suppressed nothing)."""
    from linter import suppress

    pairs = [pair for outcome in outcomes for pair in outcome.results]
    pairs.extend(project)
    directives = [directive for outcome in outcomes for directive in outcome.directives]
    results, unused = suppress.apply(pairs, directives, enabled_codes=job.enabled, registry=job.registry)
    if UNUSED_SUPPRESSION in job.enabled:
        results.extend(suppress.unused_results(unused, job.registry, job.config.severity))
    return results, {outcome.path: outcome.status for outcome in outcomes if outcome.target}
