"""What the language server keeps of each project: the engine's own run, then one file at a time.

A project is linted whole once, by the engine's own entry point (:func:`linter.engine.lint`, the
root found as the CLI finds it, the result cache the CLI's), with the open editors' texts in the
engine's overlay (:data:`linter.sources.files.OVERLAY`, which every read of a linted file
consults), so an unsaved buffer is linted as it stands, never the file on disk. The run keeps
what it built (:func:`linter.engine.lint_run` with ``Wants(parts=True, indexed=True)``): each
project part's index (the skeletons of the
files other files look things up in), its :class:`~linter.engine.Runner`, every file's
:class:`~linter.engine.FileOutcome` and its job.

An edit then re-lints only the file edited (:meth:`Part.update`), with the same runner, and
reduces as a run does: the PROJECT rules over every file's facts, every suppression
(:func:`linter.engine.run.finish`). When the file is, or was, one that other files look things
up in (its skeleton changes), the index is rebuilt from the kept skeletons with its new one, and
the other files' outcomes, linted against the old index, are stale: :meth:`Part.relint` lints
them again (a generator the server drives between messages, the open files first), after which
the project is exactly what a run of the engine gives (``tests/test_lsp.py`` compares them).
An unchanged project is never read again.

What a project with kustomize builds or rendered Helm charts holds is not kept file by file
(a build reads several files): an edit there is a whole run again (:attr:`Part.whole`).

Nothing here writes a file: fixes leave as edits for the editor to apply (linter.lsp.server).
"""

from __future__ import annotations

import gc
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

from mlops_lint.discover import SourceFile, display_path
from mlops_lint.engine import FileOutcome, LintRequest, Runner, Wants, lint_run
from mlops_lint.engine import Part as EnginePart
from mlops_lint.engine.budget import Clock, OutOfTime
from mlops_lint.engine.memory import collector_paused
from mlops_lint.engine.passes import build_index, read_document, skeleton
from mlops_lint.engine.run import finish, fixable_only
from mlops_lint.engine.runner import merged_facts
from mlops_lint.engine.survey import content_digest, mentions
from mlops_lint.model.document import Document
from mlops_lint.result import Result
from mlops_lint.roots import RootFinder
from mlops_lint.sources import files as sources
from mlops_lint.sources.files import load_bytes


class Part:
    """One project of a run (a run of a root holds several when folders under it have their own
    config): what the engine kept of it, and its findings after suppressions, by file."""

    def __init__(self, kept: EnginePart, registry: Any):
        survey, index, runner, outcomes, job, builds = kept.survey, kept.index, kept.runner, kept.outcomes, kept.job, kept.builds
        self.registry = registry
        self.sources: dict[str, SourceFile] = {entry.display: entry.source for entry in survey}
        # the hash of the bytes each file was last linted from (None: not read by the survey)
        self.digests: dict[str, str | None] = {entry.display: entry.digest for entry in survey}
        self.index, self.runner, self.job, self.builds = index, runner, job, builds
        self.outcomes: dict[str, FileOutcome] = dict(outcomes)
        self.results: dict[str, list[Result]] = {}
        self.stale: set[str] = set()  # files linted against an index since rebuilt (see relint)
        self.project_out: list | None = None  # the PROJECT rules' findings of the last reduce
        self.sorted: dict[str, list[Result]] = {}
        # a build (kustomize, a Helm render) reads several files: such a project is run whole
        self.whole = bool(builds is not None and (builds.documents or builds.mappers or builds.helm)) or bool(job.raw_only)
        self.reduce()

    def holds(self, display: str) -> bool:
        return display in self.sources and display in self.job.targets

    def update(self, display: str, data: bytes) -> bool:
        """``display`` linted again from ``data`` and the project reduced; True when the index
        changed (the other files are then :attr:`stale` until :meth:`relint`)."""
        digest = content_digest(data)
        if digest == self.digests.get(display) and display not in self.stale:
            return False  # what was linted: nothing to do
        self.digests[display] = digest
        source = self.sources[display]
        seconds = self.job.config.file_timeout
        with Clock(seconds) as clock:  # the file's time budget, as the engine's passes give it
            clock.start()
            try:
                document: Document | None = load_bytes(data, display, source.kind)
            except OutOfTime:
                document = None
            clock.stop()
        own = skeleton(document) if document is not None and mentions(data, source.kind) else None  # as the first pass decides
        old = next((d for d in self.index.documents if d.path == display), None)
        changed = own is not None or old is not None
        if document is not None and own is not None and old is not None and same_skeleton(own, old):
            # what other files look up in it is as it was, to the positions: the index stands, and
            # the file is linted with the index's own objects (rules tell an object from its
            # other definitions by identity), equal to its new ones
            kept = iter(old.objects)
            document.objects = [next(kept) if obj is mine else obj
                                for obj, mine in zip(document.objects, _aligned(document.objects, own.objects))]
            changed = False
        if changed:
            self.rebuild([d for d in self.index.documents if d.path != display] + ([own] if own is not None else []))
            self.stale = set(self.outcomes) - {display}
        self.runner.texts.read.clear()  # another file's text a fix was resolved against may have changed
        before = self.outcomes.get(display)
        self.outcomes[display] = outcome = self.lint_one(document, display)
        self.stale.discard(display)
        # the PROJECT rules see the index and every file's facts: with both as they were, their
        # findings are too
        self.reduce(project=changed or before is None or before.facts != outcome.facts)
        return changed

    def lint_one(self, document: "Document | None", display: str) -> FileOutcome:
        """One file's outcome, within its time budget (None: its loading ran out of it)."""
        target = display in self.job.targets
        seconds = self.job.config.file_timeout
        self.runner.running = None  # until the runner calls a rule (what ran out, should the budget run out)
        with Clock(seconds) as clock:
            try:
                if document is None:
                    raise OutOfTime()
                clock.start()
                outcome = self.runner.outcome(document, target)
            except OutOfTime:
                if document is None:
                    self.runner.running = None  # what ran out was the loading
                outcome = self.runner.out_of_time(display, self.sources[display].kind, target, seconds)
            finally:
                clock.stop()
        return outcome

    def rebuild(self, skeletons: list) -> None:
        mappers = self.runner.texts.mappers
        self.index = build_index(skeletons)
        self.runner = Runner(self.job.rules, self.index, self.job.config)
        self.runner.texts.mappers = mappers

    def relint(self, first: list[str], step: int = 4) -> Iterator[bool]:
        """The :attr:`stale` files linted again, ``first`` before the others; yields after each
        ``step`` files (False), and True once after ``first`` and again at the end, when the
        project is reduced. The caller stops iterating when a newer edit comes."""
        order = [d for d in first if d in self.stale] + sorted(self.stale.difference(first))
        wanted = len([d for d in first if d in self.stale])
        chunks = [order[:wanted]] + [order[start:start + step] for start in range(wanted, len(order), step)]
        for number, chunk in enumerate(chunks):
            with collector_paused():  # as the engine lints (linter.engine.memory)
                for display in chunk:
                    if display in self.stale and display in self.sources:
                        document, self.digests[display] = read_document(self.sources[display], display)  # the overlay, else the disk
                        self.outcomes[display] = self.lint_one(document, display)
                    self.stale.discard(display)
            if number == 0 and chunk:
                self.reduce()
                yield True
            else:
                yield False
        self.reduce()
        yield True

    def reduce(self, project: bool = True) -> None:
        """The PROJECT rules over every file's facts (``project``; else their last findings),
        then every suppression, as a run ends."""
        ordered = [self.outcomes[path] for path in sorted(self.outcomes)]
        if project or self.project_out is None:
            self.runner.out = []
            self.runner.project(self.job.targets, merged_facts(ordered))
            self.project_out, self.runner.out = self.runner.out, []
        results, _, _ = finish(ordered, list(self.project_out), self.job, [], self.builds)
        by_path: dict[str, list[Result]] = defaultdict(list)
        for result in fixable_only(results, self.job.config, self.registry):
            if not result.suppressions:  # a suppressed finding is not shown (the CLI's --show-suppressed aside)
                by_path[result.path].append(result)
        self.results = dict(by_path)  # each file's sorted when asked for (findings)
        self.sorted.clear()

    def findings(self, display: str) -> list[Result]:
        """``display``'s findings after suppressions, in the report's order."""
        found = self.sorted.get(display)
        if found is None:
            found = self.sorted[display] = sorted(self.results.get(display, ()), key=Result.sort_key)
        return found


def _aligned(objects: list, chosen: list) -> list:
    """For each of ``objects``, itself where it is one of ``chosen`` (by identity), else None."""
    ids = {id(obj) for obj in chosen}
    return [obj if id(obj) in ids else None for obj in objects]


def same_skeleton(new: Any, old: Any) -> bool:
    """Whether two skeletons of a file hold the same objects, every value and every position
    equal (a script's or IaC's model is never taken as equal: the index is rebuilt)."""
    if new.shell is not None or new.iac is not None or old.shell is not None or old.iac is not None:
        return False
    if len(new.objects) != len(old.objects):
        return False
    return all((a.api_version, a.kind, a.name, a.namespace, a.doc_index, a.node_path)
               == (b.api_version, b.kind, b.name, b.namespace, b.doc_index, b.node_path)
               and _signature(a.body) == _signature(b.body) for a, b in zip(new.objects, old.objects))


def _signature(node: Any) -> Any:
    """A tree's values with every span (of the node, its keys, its values, its items)."""
    from mlops_lint.model.tree import YMap, YSeq

    if isinstance(node, YMap):
        return ("m", node.span, tuple((key, node.kspans.get(key), node.vspans.get(key), _signature(value))
                                      for key, value in node.items()))
    if isinstance(node, YSeq):
        return ("s", node.span, tuple(node.ispans), tuple(_signature(item) for item in node))
    if isinstance(node, (dict, list)):  # not a positioned tree: never taken as equal
        return object()
    return (type(node).__name__, node)


class Project:
    """A project root (found as the CLI finds it) and the parts of its last whole run."""

    def __init__(self, folder: Path, parts: list[Part], report: Any):
        self.folder = folder
        self.parts = parts
        self.report = report  # the engine's RunReport of the whole run (its notes, for the log)
        # open files the run did not lint (excluded, not a manifest, made since): not linted whole
        # again on each edit, only when saved (see linter.lsp.server)
        self.outside: set[str] = set()

    def display(self, path: str) -> str:
        """``path``'s display path, as the run names it (links resolved, as the root was found)."""
        return display_path(Path(os.path.realpath(path)), self.folder)

    def part(self, display: str) -> Part | None:
        return next((part for part in self.parts if part.holds(display)), None)

    def results(self, path: str) -> list[Result]:
        display = self.display(path)
        part = self.part(display)
        return part.findings(display) if part is not None else []


class Workspace:
    """Every project of the open files, and the open files' texts (the engine's overlay)."""

    def __init__(self, registry: Any, cache_dir: Path | None, folders: list[Path]):
        self.registry = registry
        self.cache_dir = cache_dir
        self.folders = [folder.resolve() for folder in folders]
        self.projects: dict[Path, Project] = {}
        self.roots: dict[str, Path] = {}  # a file -> its project root (see root)

    # -- the open files ---------------------------------------------------------------------

    @staticmethod
    def open(path: str, data: bytes) -> None:
        sources.OVERLAY[os.path.realpath(path)] = data

    @staticmethod
    def close(path: str) -> None:
        sources.OVERLAY.pop(os.path.realpath(path), None)

    # -- projects -----------------------------------------------------------------------------

    def root(self, path: str) -> Path:
        """The project root of ``path``, as ``mlops-lint PATH`` run from the workspace folder
        holding it finds it (the nearest config upward, else the git top, else that folder);
        kept until :meth:`forget` (a config came, went or changed)."""
        found = self.roots.get(path)
        if found is None:
            found = self.roots[path] = self.find_root(path)
        return found

    def find_root(self, path: str) -> Path:
        real = Path(os.path.realpath(path))
        holding = [f for f in self.folders if real == f or f in real.parents]
        cwd = max(holding, key=lambda f: len(f.parts)) if holding else real.parent
        found = RootFinder(cwd).root(os.fspath(real.parent), real)
        return found.folder if found.folder.is_dir() else real.parent

    def project(self, path: str) -> Project:
        """The project of ``path``, linted whole the first time it is asked for."""
        folder = self.root(path)
        project = self.projects.get(folder)
        if project is None:
            project = self.projects[folder] = self.lint(folder)
        return project

    def lint(self, folder: Path) -> Project:
        """A whole run of the engine on ``folder``, kept (raises ConfigError for a bad config)."""
        # a run freezes what it built (linter.engine.memory), out of the collector's sight, so a
        # collection while editing never scans the project (measured: pauses of 0.3-0.9 s on
        # perf's 1,000 files without it); the previous runs' are let go first, to be freed once
        # this run replaces them
        gc.unfreeze()
        done = lint_run(LintRequest(paths=[folder], config=None, registry=self.registry, cwd=folder,
                                    cache_dir=self.cache_dir), Wants(parts=True, indexed=True))
        project = Project(folder, [Part(entry, self.registry) for entry in done.parts], done.report)
        gc.freeze()
        return project

    def forget(self) -> None:
        """Every project dropped (the config changed): each is linted whole when next asked for."""
        self.projects.clear()
        self.roots.clear()
