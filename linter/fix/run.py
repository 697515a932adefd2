"""``--fix`` and ``--diff``: lint, apply the fixes that fit in one pass, lint again, until none is
left (at most :data:`MAX_PASSES` passes), then write each changed file once, or print the diff.

Every pass lints the files as the fixes so far left them, without writing them: the changed
bytes wait in :data:`linter.sources.files.OVERLAY`, which every read of a linted file consults.
A fix is applied only when it is safe (or unsafe fixes are on: ``--unsafe-fixes``, or the
project's ``fix: {unsafe: true}``), its rule is not ``unfixable`` in its project (those
findings carry no fix at all, see :mod:`linter.engine.run`), and it edits a *target* file of the
run: a file discovery gave (never an excluded file, a context file outside the targets, a Helm
template or a kustomize build's output: streamed output has no fix, and a built object's fix
edits its resource file, where the node it edits is written as built, see
:class:`linter.engine.runner.FixTexts`; the next pass builds the roots from the fixed text),
which is a regular file with one link, not a symlink (a link is never replaced by a file nor
written through: when its target is a target file of the run too, the target is fixed as
itself), whose bytes still hash to what the run linted.

Fixes that overlap are applied one at a time (:func:`linter.fix.apply.select_non_overlapping`:
the first by position wins, the others are re-resolved against the new text in the next pass).
A pass whose edits would make a file fail to parse (more parse errors than before), or change
its parsed data anywhere but at the paths the edits target (the fix invariant,
:mod:`linter.fix.invariant`: an anchor that aliases share, a block scalar that gains a line
break), applies its fixes one by one and keeps only those that hold; the others are dropped with
a note and never written, and the file gets no further pass. Text is decoded as the loaders decode it and
encoded back the same way (byte-order mark, UTF-8/16/32); a file whose bytes would not come back
exactly is left alone with a note. Writing is atomic: a temporary file in the same folder,
written, flushed to disk, given the file's mode (and owner, where permitted), renamed over the
file; a file whose bytes changed since the run read them is left alone with a note (checked again
through the open file just before the rename). A file is written only inside the project root of
a PATH given (found as the PATH is spelled, so a linked folder cannot lead out of it), never in a
tool folder (``.git``, ``node_modules``, a virtual environment) and never when its mode makes it
read-only or the user may not write it.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from pathlib import Path
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from mlops_lint.fix import Fix
from mlops_lint.result import Note, Result, RunReport

MAX_PASSES = 10


class _File(Struct):
    """One target file the fixes change: its bytes as first read, and as the fixes left them."""

    display: str
    path: str  # absolute
    kind: str
    original: bytes
    bom: bytes
    encoding: str
    current: bytes
    seen: set[bytes] = field(default_factory=set)
    fixed: Counter = field(default_factory=Counter)  # rule -> fixes applied to this file
    frozen: bool = False  # no more fixes (a note says why)
    bounds: tuple[str, ...] = ()  # the project folders it may be written in (see _bounds)


class FixOutcome(Struct):
    """What a fix run did: the last pass's report (what is left), the fixes applied per rule,
    the files changed (display path -> (before, after) texts), notes."""

    report: RunReport
    fixed: Counter
    changed: dict[str, tuple[str, str]]
    written: list[str]
    notes: list[Note]
    passes: int


def fixable(result: Result, unsafe: bool) -> bool:
    """Whether ``--fix`` applies ``result``'s fix (unsuppressed, resolved, safe or unsafe allowed)."""
    fix = result.autofix
    return fix is not None and not result.suppressions and (fix.safe or unsafe)


def run_fixes(request: Any, *, unsafe: bool, write: bool, max_passes: int = MAX_PASSES) -> FixOutcome:
    """Lint ``request`` (a :class:`linter.engine.LintRequest`), fixing as the module docstring
    says; with ``write`` the changed files are written, else nothing is (``--diff``)."""
    from mlops_lint.engine import Wants, lint_run
    from mlops_lint.sources import files as sources

    files: dict[str, _File] = {}
    refused: set[str] = set()  # display paths never to change (a note says why)
    notes: list[Note] = []
    fixed: Counter = Counter()
    passes = 0
    sources.OVERLAY.clear()
    bounds = _bounds(request)
    try:
        while True:
            done = lint_run(request, Wants(targets=True))
            report, targets = done.report, done.targets
            pending = _pending(report, targets, unsafe, files, refused)
            if not pending or passes == max_passes:
                break
            passes += 1
            progressed = False
            for display in sorted(pending):
                entry = files.get(display) or _open(display, targets, refused, notes, bounds)
                if entry is None:
                    continue
                files[display] = entry
                if _pass(entry, pending[display], notes):
                    sources.OVERLAY[os.path.realpath(entry.path)] = entry.current
                    progressed = True
            if not progressed:
                break
        if pending and passes == max_passes:
            rules = sorted({result.rule for results in pending.values() for result in results})
            notes.append(Note(sorted(pending)[0], f"fixes still left after {max_passes} passes ({', '.join(rules)}), in "
                                                  f"{len(pending)} file{'s' if len(pending) != 1 else ''}: run --fix again "
                                                  "to apply them (please report this)"))
    finally:
        sources.OVERLAY.clear()
    changed = {d: (_text(f, f.original), _text(f, f.current)) for d, f in sorted(files.items())
               if f.current != f.original}
    written: list[str] = []
    for display in changed:
        entry = files[display]
        if not write:
            fixed.update(entry.fixed)
            continue
        problem = _write(entry)
        if problem is None:
            written.append(display)
            fixed.update(entry.fixed)
        else:
            notes.append(Note(display, f"not fixed: {problem}"))
    # a fix --fix would not write (a refused file's, or one it stopped fixing) is no fix of this report
    stopped = refused | {display for display, entry in files.items() if entry.frozen}
    if stopped:
        report.results = [replace(r, autofix=None) if r.autofix is not None and r.autofix.edits[0].path in stopped
                          else r for r in report.results]
    report.notes.extend(notes)
    report.fixed = dict(sorted(fixed.items()))
    return FixOutcome(report, fixed, changed, written, notes, passes)


def _pending(report: RunReport, targets: dict[str, Any], unsafe: bool, files: dict[str, _File],
             refused: set[str]) -> dict[str, list[Result]]:
    """The fixes this pass may apply, by the file they edit."""
    pending: dict[str, list[Result]] = {}
    for result in report.results:
        own = targets.get(result.path)
        if own is None and result.autofix is not None:  # a Helm template's finding, fixed in its chart's values.yaml
            own = _chart_values(result, targets)
        allowed = unsafe or (own is not None and own.config is not None and own.config.fix_unsafe)
        if not fixable(result, allowed):
            continue
        where = result.autofix.edits[0].path
        entry = files.get(where)
        if where in refused or (entry is not None and entry.frozen) or own is None:
            continue
        pending.setdefault(where, []).append(result)
    return pending


def _chart_values(result: Result, targets: dict[str, Any]) -> Any:
    """The target ``values.yaml`` a finding on a template of its chart is fixed in
    (:mod:`linter.sources.helm_values`), else None."""
    where = result.autofix.edits[0].path if result.autofix is not None and result.autofix.edits else ""
    chart, name = where.rpartition("/")[0], where.rpartition("/")[2]
    if name != "values.yaml" or not result.path.startswith(f"{chart}/templates/" if chart else "templates/"):
        return None
    return targets.get(where)


def _open(display: str, targets: dict[str, Any], refused: set[str], notes: list[Note],
          bounds: tuple[str, ...] = ()) -> _File | None:
    """A target file about to be fixed for the first time: checked, read, decoded (None, with a
    note, when it may not be changed)."""
    from mlops_lint.engine.survey import content_digest
    from mlops_lint.sources.files import Unreadable, read_source
    from mlops_lint.sources.text import DecodeError, decode, encoding_of

    def refuse(why: str) -> None:
        refused.add(display)
        notes.append(Note(display, f"not fixed: {why}"))

    target = targets.get(display)
    if target is None:
        refuse("it is not a file this run lints (fixes are written only to the files named or found as targets)")
        return None
    problem = _unwritable(target.path, bounds)
    if problem is not None:
        refuse(problem)
        return None
    try:
        data = read_source(target.path)
    except Unreadable as exc:
        refuse(exc.reason)
        return None
    if content_digest(data) != target.digest:
        refuse("the file changed since it was linted; run again")
        return None
    try:
        text = decode(data)
    except DecodeError as exc:
        refuse(exc.message)
        return None
    bom, encoding = encoding_of(data)
    try:
        exact = bom + text.encode(encoding) == data
    except UnicodeEncodeError:
        exact = False
    if not exact:
        refuse(f"its bytes would not be written back exactly as {encoding}")
        return None
    return _File(display, target.path, target.kind, data, bom, encoding, data, {data}, bounds=bounds)


def _bounds(request: Any) -> tuple[str, ...]:
    """The folders ``--fix`` may write in: the project root of each PATH given, found from the
    PATH as it is spelled (a config file's folder, the git work tree's top, the working folder,
    else the PATH itself, as :mod:`linter.roots` finds them), with links resolved only at the
    end. A file whose real place is outside every bound was reached through a link out of the
    project (``d/job.yaml`` with ``d`` a link to another folder) and is never written."""
    from mlops_lint.roots import RootFinder

    cwd = os.path.abspath(request.cwd)
    finder = RootFinder(Path(cwd))
    bounds = []
    for given in request.paths:
        spelled = os.path.normpath(os.path.join(cwd, os.fspath(given)))
        folder = spelled if os.path.isdir(spelled) else os.path.dirname(spelled)
        try:
            root = finder.root(folder, Path(spelled))
        except OSError:
            continue
        bounds.append(os.path.realpath(root.folder))
    return tuple(dict.fromkeys(bounds))


def _confined(real: str, bounds: tuple[str, ...]) -> str | None:
    """Why the file at ``real`` (links resolved) is not in a project folder ``--fix`` may write
    in, or None: outside every bound, or in a tool folder under one (``.git``, ``node_modules``,
    a virtual environment: never linted by a walk, never written, also when named)."""
    from mlops_lint.discover import SKIP_DIRS, VENV_MARKER

    if not bounds:
        return None
    inside = [bound for bound in bounds if real == bound or real.startswith(bound.rstrip(os.sep) + os.sep)]
    if not inside:
        return "it is outside the project (reached through a link), which --fix never writes"
    bound = max(inside, key=len)
    folder = os.path.dirname(real)
    parts = os.path.relpath(folder, bound).split(os.sep) if folder != bound else []
    for part in parts:
        if part in SKIP_DIRS:
            return f"it is in a tool folder ({part}/), which --fix never writes"
    here = bound
    for part in parts:
        here = os.path.join(here, part)
        if os.path.isfile(os.path.join(here, VENV_MARKER)):
            return "it is in a virtual environment, which --fix never writes"
    return None


def _unwritable(path: str, bounds: tuple[str, ...] = ()) -> str | None:
    """Why ``path`` is never written by a fix, or None."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot read the file: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        return ("it is a symbolic link, which --fix never replaces nor writes through (when the file it points to is "
                "linted too, that file is fixed)")
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_nlink > 1:
        return f"it has {info.st_nlink} hard links, which replacing it would split"
    confined = _confined(os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)), bounds)
    if confined is not None:
        return confined
    if _in_chart_templates(path):
        return "it is a Helm chart template, which --fix never changes"
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return f"it is read-only (mode {stat.filemode(info.st_mode)}), which --fix respects: make it writable to fix it"
    if not os.access(path, os.W_OK):
        return "you may not write it (its mode or owner forbids it), which --fix respects"
    return None


def _in_chart_templates(path: str) -> bool:
    folder = os.path.dirname(path)
    while True:
        parent = os.path.dirname(folder)
        if os.path.basename(folder) == "templates" and os.path.isfile(os.path.join(parent, "Chart.yaml")):
            return True
        if parent == folder:
            return False
        folder = parent


def _text(entry: _File, data: bytes) -> str:
    return data[len(entry.bom):].decode(entry.encoding)


def _pass(entry: _File, results: list[Result], notes: list[Note]) -> bool:
    """Apply this pass's fixes of one file (to ``entry.current``); whether it changed."""
    from mlops_lint.fix.apply import select_non_overlapping

    text = _text(entry, entry.current)
    mark = "\ufeff" if text.startswith("\ufeff") else ""  # a second mark the loaders drop too
    text = text[len(mark):]
    by_fix: dict[tuple, list[Result]] = {}
    fixes: list[Fix] = []
    for result in sorted(results, key=lambda r: (r.autofix.edits[0].span, r.sort_key())):
        key = (result.autofix.edits, result.autofix.title)
        if key not in by_fix:
            by_fix[key] = []
            fixes.append(result.autofix)
        by_fix[key].append(result)
    chosen, _ = select_non_overlapping(fixes)
    new = _apply(entry, text, chosen)
    if new is None or _changed_elsewhere(entry, text, new, chosen) is not None:
        # together they break the file, or change data no fix targets: one at a time, each kept
        # only if the file still parses and its data changed only where the fixes kept target
        kept: list[Fix] = []
        broke: list[Fix] = []
        moved: list[tuple[Fix, str]] = []
        for fix in chosen:
            trial = _apply(entry, text, [*kept, fix])
            if trial is None:
                broke.append(fix)
                continue
            where = _changed_elsewhere(entry, text, trial, [*kept, fix])
            if where is not None:
                moved.append((fix, where))
                continue
            kept.append(fix)
        if broke:
            rules = sorted({r.rule for fix in broke for r in by_fix[(fix.edits, fix.title)]})
            notes.append(Note(entry.display, f"not applied: the fix{'es' if len(broke) > 1 else ''} of {', '.join(rules)} "
                                             "would make the file fail to parse (please report this)"))
        for fix, where in moved:
            rules = sorted({r.rule for r in by_fix[(fix.edits, fix.title)]})
            notes.append(Note(entry.display, f"not applied: the fix of {', '.join(rules)} ({fix.title}) would change "
                                             f"{where}, which it does not target (please report this)"))
        entry.frozen = True  # its findings are reported as they are; no pass tries them again
        chosen = kept
        new = _apply(entry, text, kept) if kept else None
        if new is None:
            return False
    data = entry.bom + (mark + new).encode(entry.encoding)
    if data == entry.current:
        return False
    if data in entry.seen:  # the fixes go round in a circle: stop here
        entry.frozen = True
        notes.append(Note(entry.display, "fixes stopped: they would bring the file back to an earlier state (please "
                                         "report this)"))
        return False
    entry.seen.add(data)
    entry.current = data
    for fix in chosen:
        entry.fixed.update(result.rule for result in by_fix[(fix.edits, fix.title)])
    return True


def _apply(entry: _File, text: str, fixes: list[Fix]) -> str | None:
    """``text`` with ``fixes`` applied, or None when the result parses worse than ``text`` (or
    the edits do not fit it)."""
    from mlops_lint.fix.apply import apply_edits
    from mlops_lint.sources.files import load_bytes

    try:
        new = apply_edits(text, [edit for fix in fixes for edit in fix.edits])
    except ValueError:
        return None
    before = load_bytes(entry.bom + text.encode(entry.encoding), entry.display, entry.kind)
    try:
        after = load_bytes(entry.bom + new.encode(entry.encoding), entry.display, entry.kind)
    except UnicodeEncodeError:
        return None
    return new if len(after.errors) <= len(before.errors) else None


def _changed_elsewhere(entry: _File, text: str, new: str, fixes: list[Fix]) -> str | None:
    """Where ``new`` (``text`` with ``fixes`` applied) changes the parsed data outside the paths
    the fixes' edits target (the fix invariant, :mod:`linter.fix.invariant`), or None. YAML and
    JSON files only; a Dockerfile's or script's fixes replace words at the loaders' spans."""
    from mlops_lint.fix.apply import edit_regions
    from mlops_lint.fix.invariant import unexpected_change
    from mlops_lint.model.document import CONFIG, K8S

    if entry.kind not in (K8S, CONFIG):  # a config's node-pools fixes are YAML too
        return None
    try:
        regions = edit_regions(text, [edit for fix in fixes for edit in fix.edits])
    except ValueError:
        return "the text (its edits do not fit it)"
    return unexpected_change(text, new, regions)


def _write(entry: _File) -> str | None:
    """Write ``entry.current`` over the file atomically; why not, or None when written.

    The file is opened first (never through a link) and what it holds is compared with what the
    run read; the new bytes go to a temporary file beside it, flushed to disk; just before the
    rename the file is read again through the open descriptor and looked up again by name, and
    any change (an editor saving meanwhile, another file put in its place) leaves it as it is.
    A change that lands in the instant between that check and the rename is put back."""
    import tempfile

    problem = _unwritable(entry.path, entry.bounds)
    if problem is not None:
        return problem
    changed = "the file changed while it was being fixed; it was left as it is now (run again)"
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        original = os.open(entry.path, flags)
    except OSError as exc:
        return f"cannot read the file: {exc.strerror or exc}"
    try:
        info = os.fstat(original)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if _read_all(original) != entry.original:
            return changed
        seen = _state(os.fstat(original))
        folder, name = os.path.split(entry.path)
        try:
            descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".mlops-lint-fix", dir=folder)
        except OSError as exc:
            return f"cannot write in its folder: {exc.strerror or exc}"
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(entry.current)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, stat.S_IMODE(info.st_mode))
            if hasattr(os, "chown"):
                try:
                    os.chown(temporary, info.st_uid, info.st_gid)
                except OSError:
                    pass  # another user's file in a folder we may write: the mode is kept, the owner is ours
            now = os.lstat(entry.path)
            if ((now.st_dev, now.st_ino) != (info.st_dev, info.st_ino) or _state(os.fstat(original)) != seen
                    or _read_all(original) != entry.original):
                os.unlink(temporary)
                return changed
            os.replace(temporary, entry.path)
        except OSError as exc:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            return f"cannot be written: {exc.strerror or exc}"
        if _state(os.fstat(original))[:2] != seen[:2]:  # written in the instant before the rename: put it back
            # (size and mtime: the rename itself changes the replaced file's ctime, by unlinking it)
            _put_back(entry, original, folder, name)
            return changed
    finally:
        os.close(original)
    try:
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError:
        pass
    return None


def _state(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _read_all(descriptor: int) -> bytes:
    """The whole file open at ``descriptor``, read from its start."""
    chunks, offset = [], 0
    while True:
        chunk = os.pread(descriptor, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _put_back(entry: _File, original: int, folder: str, name: str) -> None:
    """The replaced file's bytes (an edit saved into it at the last instant) back under its name."""
    import tempfile

    try:
        data = _read_all(original)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".mlops-lint-fix", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(os.fstat(original).st_mode))
        os.replace(temporary, entry.path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def unified_diff(changed: dict[str, tuple[str, str]]) -> str:
    """``--diff``: each changed file's unified diff (``\\ No newline at end of file`` as git writes it)."""
    import difflib

    out = []
    for display, (before, after) in changed.items():
        lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                     fromfile=f"a/{display}", tofile=f"b/{display}")
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
