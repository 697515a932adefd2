"""The result cache: a repeat run reads each unchanged file's outcome instead of linting it.

Every project of a run (linter.roots: a root with its own config) has a *project key* (the tool
version, the code of the engine and of every rule that runs, the project's root, its rules and
their options, its whole config, the CRD files of its ``crd-paths``, Python's version and the
working folder). One file per run key (the set of its projects' keys) holds, for every file of
the last run with that key, its outcome under a *file key*: its project's key, the file's display
path, content hash, whether it is a target, and the hash of every shared file of its project
(the files whose objects other files' rules look up, see :mod:`linter.engine`), so a changed
StorageClass re-lints the files that may depend on it. Each project's PROJECT rules' findings are
kept under the hash of its file keys. A cache file holds only the last run's entries, so it does
not grow with edits; the least recently used run keys beyond ``KEEP_RUNS`` are deleted.

It is a cache, never a source of truth: a missing, unreadable, corrupt or foreign file is a miss,
and a cache folder that cannot be written is skipped silently. Entries are written atomically
(a new temporary file, ``O_CREAT|O_EXCL|O_NOFOLLOW``, renamed over the old one), so concurrent
runs never see a torn file and a link planted in a shared folder is replaced, never written
through; ``CACHEDIR.TAG`` is made only where nothing has its name.

The folder may be restored from elsewhere (actions/cache) or shared with other users, so a cache
file is untrusted input: it is JSON that builds data and nothing else (:mod:`linter.cachedata`;
findings as :mod:`linter.cachecolumns` writes them), read only from a regular file of at most
``MAX_BYTES`` opened without following a link or blocking (a FIFO or a link to ``/dev/zero`` is a
miss), and every part is checked for the shape it must have; what does not validate is a miss.
Run files of older versions of mlops-lint (named in the file name), of the pickle format, and
temporary files left by runs that died are pruned.

Up the layers: ``mlops_lint.report.text`` (a finding's hint is kept as the text report prints it, so a
warm run prints it without loading PyYAML, and a cached line is checked to be one the report
would print: the report owns that rendering).
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from mlops_lint.cachecolumns import column, layout
from mlops_lint.cachedata import Invalid, decode, dumps, dumps_large, encode, loads, read_entry
from mlops_lint.cachedata import MAX_BYTES, TEMP_SUFFIX, write_entry  # entry files (shared with linter.ruleindex)
from mlops_lint.digest import digest, digest_text
from mlops_lint.model.document import ObjectKey
from mlops_lint.result import Result

FORMAT = 12  # 12: findings by the columns of their record types (linter.cachecolumns), by field name; 11: resolved fixes by column; 10: findings keep their resolved fix (Result.autofix); 9: findings keep their kustomize root (Result.built_from); 8: named .cache; 7: a project keeps its notes; 6: JSON (linter.cachedata); 5 and before: pickle
KEEP_RUNS = 16
PREFIX = "run-"
# not ".json": a cache folder inside a project root (bench/run.py's beside its corpus) must not be
# linted, and a .json file is lintable; the content is JSON all the same
SUFFIX = ".cache"
STALE_SECONDS = 3600  # a temporary file older than this is left by a run that died: removed
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# mlops-lint's result cache (https://bford.info/cachedir/)\n"


def header(key: str) -> bytes:
    """How the entry of run key ``key`` starts (:meth:`Cache.save` writes the format, then the
    key, first; json and orjson both write them without spaces): checked on the bytes, before
    anything is decoded."""
    return b'{"format":%d,"key":%s,' % (FORMAT, dumps(key))


def file_name(key: str) -> str:
    """``run-<version>-<key>.cache``: the version in the name lets an older version's files be
    pruned without reading them."""
    from mlops_lint import __version__

    return f"{PREFIX}{__version__}-{key}{SUFFIX}"


def default_dir() -> Path:
    """``$MLOPS_LINT_CACHE_DIR``, else the platform's user cache folder (``~/.cache/mlops-lint``)."""
    configured = os.environ.get("MLOPS_LINT_CACHE_DIR")
    if configured:
        return Path(configured)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mlops-lint", appauthor=False))


def _code_signature(modules: set[str]) -> list[str]:
    """(file, size, mtime) of the engine's modules and of every module a rule comes from."""
    import mlops_lint

    files: list[str] = []
    root = Path(mlops_lint.__file__).parent
    for folder, _, names in os.walk(root):
        files.extend(os.path.join(folder, n) for n in names if n.endswith((".py", ".json")))
    from mlops_lint.ruleindex import module_file

    for name in modules:
        file = module_file(name)  # a rule module from the rule index may not be imported yet
        if file:
            files.append(file)
    out = []
    for file in sorted(set(files)):
        try:
            info = os.stat(file)
        except OSError:
            continue
        out.append(f"{file}:{info.st_size}:{info.st_mtime_ns}")
    return out


def _crd_signature(config: Any) -> list[str]:
    if not getattr(config, "crd_paths", ()):
        return []  # the common case: nothing to look at, and the CRD module stays unimported
    from mlops_lint.validation.crds import configured_files

    out = []
    for file in configured_files(config):
        try:
            out.append(f"{file}:{digest(file.read_bytes())}")
        except OSError:
            out.append(f"{file}:unreadable")
    return out


def code_key(rules: list, registry: Any) -> str:
    """What every project of a run shares: the format, the tool's and Python's versions, the
    working folder (display paths are relative to it), the registry and the code of the engine
    and of every rule that runs (looked at once per run, however many projects it has)."""
    from mlops_lint import __version__

    parts = [
        f"format {FORMAT}", f"mlops-lint {__version__}", f"python {sys.version}", f"cwd {Path.cwd()}",
        *(m.code for m in registry.rules),
        *_code_signature({m.module for m in rules}),
    ]
    return digest_text(*parts, size=20)


def project_key(code: str, rules: list, config: Any, root: Any) -> str:
    """One project's key: :func:`code_key`, its root, its whole config, its rules and options and
    the CRD files of its ``crd-paths``. Two roots never share a key."""
    parts = [
        code, f"root {root}", repr(config),
        *(f"{m.code}:{m.name}:{m.severity}:{m.module}:{sorted(m.defaults.items())!r}" for m in rules),
        *_crd_signature(config),
    ]
    return digest_text(*parts, size=20)


def run_file_key(project_keys: list[str]) -> str:
    """The cache file of a run: one per set of projects (a run of one root's changed files, as
    pre-commit makes, uses the file of a full run of that root)."""
    return digest_text(*sorted(set(project_keys)), size=20)


def run_key(rules: list, config: Any, registry: Any, root: Any = None) -> str:
    """The cache file of a run of one project."""
    return run_file_key([project_key(code_key(rules, registry), rules, config, root)])


class Keys:
    """The keys of one project's run (see the module docstring): ``reference``, what every
    file's outcome may depend on besides the file itself (the project's key, its shared files,
    the stdin document, the builds); ``files``, each file's key (display path -> key), built
    outputs included; ``project``, the key of the project's PROJECT-rule findings."""

    __slots__ = ("reference", "files", "project")

    def __init__(self, project: str, survey: list, stdin: bytes | None, builds: Any, targets: Any):
        """``project``: :func:`project_key`; ``survey``: the files read up front (each with its
        ``display``, ``digest`` and ``shared``, linter.engine.survey.Survey); ``builds``: the
        kustomize and Helm outputs (linter.engine.builds.Builds: ``documents``, ``signature``,
        ``inputs``); ``targets``: the display paths reported on."""
        built = builds.documents
        self.reference = digest_text(project, *(f"{s.display}:{s.digest}" for s in survey if s.shared),
                                     digest(stdin) if stdin is not None else "", builds.signature if built else "")
        self.files = {s.display: self.file(s.display, s.digest, s.display in targets)
                      for s in survey if s.digest is not None}
        self.files.update({document.path: digest_text(self.reference, document.path, digest(output), targeted,
                                                      builds.inputs.get(document.path, ""))
                           for document, output, targeted in built})
        self.project = digest_text(self.reference, *sorted(self.files.values()))

    def file(self, display: str, content: str, target: bool) -> str:
        """The key of a file of ``content`` (its digest) under ``display``."""
        return digest_text(self.reference, display, content, target)


# ---------------------------------------------------------------------------------------------
# An outcome as JSON: findings by column (linter.cachecolumns, the layout derived from Result's
# fields and those of the records in it), every other value as linter.cachedata writes it

_RESULTS = layout(Result)
_KEYS = column(ObjectKey | None, interned=True)  # each finding's object (linter.model.document)
_FIX = _RESULTS.columns["fix"]  # the hints, interned: their lines (_fix_lines) are kept beside their table
_BLOCK = {"results", "keys", "fix_lines"}


class _Columns:
    """Findings (``(Result, object key)`` pairs, of any number of outcomes) as one JSON block:
    ``{"results": the Results' columns, "keys": the object key of each, "fix_lines": the line the
    text report prints for each hint of the ``fix`` column's table}``."""

    def __init__(self, checked: bool = False) -> None:
        """``checked``: every finding to be added is known to be one the columns hold
        (:func:`_valid_findings` of them all, one pass per column instead of one per outcome)."""
        self.results: list[Result] = []
        self.keys: list = []
        self.checked = checked

    def add(self, pairs: list) -> int:
        """Append the findings (all or none: Invalid when some part would not read back exactly
        as it is); their count."""
        if not (self.checked or _valid_findings(pairs)):
            raise Invalid("a finding this format cannot hold")
        self.results.extend([result for result, _ in pairs])
        self.keys.extend([key for _, key in pairs])
        return len(pairs)

    def data(self) -> dict:
        results = _RESULTS.encode(self.results)
        return {"results": results, "keys": _KEYS.encode(self.keys),
                "fix_lines": _fix_lines(_FIX.table(results[1]["fix"]))}


def _valid_findings(pairs: Any, outcomes: bool = False) -> bool:
    """Whether every ``(Result, object key)`` pair (with ``outcomes``: of every outcome's
    ``results``) reads back exactly as it is."""
    try:
        if outcomes:
            pairs = [pair for outcome in pairs for pair in outcome.results]
        return _RESULTS.valid([result for result, _ in pairs]) and _KEYS.valid([key for _, key in pairs])
    except (TypeError, ValueError, AttributeError, RecursionError):  # not pairs, not records
        return False


def _fix_lines(fixes: list[str]) -> list[str]:
    """Each hint as the text report prints it, kept with the findings: a warm run prints them
    without PyYAML, which renders the multi-line ones (a cold run has it loaded already)."""
    from mlops_lint.report.text import fix_line

    return [fix_line(fix) for fix in fixes]


def _encode_results(pairs: list) -> dict:
    columns = _Columns()
    columns.add(pairs)
    return columns.data()


def _decode_results(data: Any) -> list[tuple[Result, tuple | None]]:
    """The findings of :class:`_Columns`; Invalid unless the block could have been written by it
    (orjson and json hand back exactly str, int, float, bool, None, list and dict)."""
    try:
        if type(data) is not dict or data.keys() != _BLOCK:
            raise Invalid("findings of the wrong shape")
        block, fix_lines = data["results"], data["fix_lines"]
        results = _RESULTS.decode(block, None)
        keys = _KEYS.decode(data["keys"], len(results))
        fixes = _FIX.table(block[1]["fix"])  # decoded above: a list of strings
        if not (type(fix_lines) is list and len(fix_lines) == len(fixes)):
            raise Invalid("a hint's line short or over")
        "".join(fix_lines)  # TypeError unless all are strings
        from mlops_lint.report.text import is_one_line, known_fix_lines

        if not all(map(is_one_line, fix_lines)):
            raise Invalid("a hint's line the terminal would act on")
        found = list(zip(results, keys))
        if len(found) != len(results):
            raise Invalid("object keys of the wrong length")
        known_fix_lines(zip(fixes, fix_lines))  # the block is valid: its lines may be printed
        return found
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:  # a column of the wrong length or type
        raise Invalid(f"findings of the wrong shape: {exc}") from None


def _encode_facts(facts: Any) -> dict:
    """``{code: [item, ...]}``; a list that is another code's list too (OBS001 and OBS002 share
    one) is written once, and ``{"=": code}`` in the other's place."""
    if type(facts) is not dict:
        raise Invalid("facts this format cannot hold")
    out: dict[str, Any] = {}
    seen: dict[int, str] = {}
    for code, items in facts.items():
        if type(code) is not str or type(items) is not list:
            raise Invalid("facts this format cannot hold")
        if id(items) in seen:
            out[code] = {"=": seen[id(items)]}
        else:
            seen[id(items)] = code
            out[code] = [encode(item) for item in items]
    return out


def _decode_facts(data: Any) -> dict:
    if type(data) is not dict:
        raise Invalid("facts of the wrong shape")
    out: dict[str, list] = {}
    for code, items in data.items():
        if type(items) is dict:
            if len(items) != 1 or items.get("=") not in out:
                raise Invalid("facts of the wrong shape")
            out[code] = out[items["="]]
        elif type(items) is list:
            out[code] = [decode(item) for item in items]
        else:
            raise Invalid("facts of the wrong shape")
    return out


def _encode_outcome(outcome: Any, columns: _Columns) -> list:
    """The outcome without its findings, which go to ``columns`` (all or none: Invalid)."""
    from mlops_lint.suppress import Directive

    if type(outcome.path) is not str or type(outcome.status) is not str or type(outcome.target) is not bool:
        raise Invalid("an outcome this format cannot hold")
    if not all(type(d) is Directive for d in outcome.directives):
        raise Invalid("suppressions this format cannot hold")
    # as the file gave them: whether one suppressed anything is this run's answer, not the file's
    directives = encode([replace(d, used=False) for d in outcome.directives])
    # the facts as JSON text inside the JSON: a warm run reads them as one string, never as values
    facts = outcome.facts.data if type(outcome.facts) is Pending else dumps(_encode_facts(outcome.facts)).decode("utf-8")
    return [outcome.path, outcome.status, outcome.target, columns.add(outcome.results), directives, facts]


def _decode_outcomes(files: Any, block: Any) -> dict[str, Any]:
    """Every outcome of a cache file: its findings from the file's one ``block`` of columns (an
    invalid block: no outcome at all), the rest entry by entry (an invalid entry: a miss)."""
    from mlops_lint.engine.runner import FileOutcome
    from mlops_lint.suppress import Directive

    if type(files) is not dict:
        return {}
    pairs = _decode_results(block)
    out = {}
    start = 0
    for key, data in files.items():
        try:
            path, status, target, count, directives, facts = data
            if not (type(data) is list and type(path) is str and type(status) is str and type(target) is bool
                    and type(count) is int and 0 <= count <= len(pairs) - start and type(facts) is str):
                raise Invalid("an outcome of the wrong shape")
            results, start = pairs[start:start + count], start + count
            if directives:  # most files have none
                directives = decode(directives)
                if type(directives) is not list or not all(type(d) is Directive for d in directives):
                    raise Invalid("suppressions of the wrong shape")
            elif type(directives) is not list:
                raise Invalid("suppressions of the wrong shape")
        except (Invalid, TypeError, ValueError, RecursionError):
            break  # the rows of the entries after it cannot be told apart: misses too
        out[key] = FileOutcome(path, status, target, results, directives, Pending(facts))
    return out


def _decode_project(block: Any) -> tuple[Any, ...]:
    """A project's entry: its PROJECT-rule findings and notes, each checked (else Invalid); a
    finished run's (:meth:`Cache.get_finished`) has each target's status too."""
    if type(block) is not dict or type(block.get("notes")) is not list:
        raise Invalid("a project entry is not a mapping of findings and notes")
    notes = []
    for note in block["notes"]:
        if type(note) is not list or len(note) != 2 or not all(type(part) is str for part in note):
            raise Invalid("a project note is not a path and a message")
        notes.append((note[0], note[1]))
    if "statuses" not in block:
        return _decode_results(block.get("findings")), notes
    statuses = block["statuses"]
    if type(statuses) is not dict or not all(type(status) is str for status in statuses.values()):
        raise Invalid("a finished run's statuses are not paths and words")
    return _decode_results(block.get("findings")), notes, statuses


class Pending:
    """A cached outcome's facts, not decoded yet: only a run whose PROJECT rules run again reads
    them (:meth:`Cache.load_facts`), so a fully warm run never builds them."""

    __slots__ = ("data",)

    def __init__(self, data: str):
        self.data = data  # JSON text of the facts (linter.cachedata values)


def _tag(folder: Path) -> None:
    """CACHEDIR.TAG, created only where no file and no link (dangling or not) has the name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(folder / "CACHEDIR.TAG", flags, 0o644)
    except OSError:
        return  # there already (as a file or as anything else): never written through
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(CACHEDIR_TAG)


def _version(text: str) -> tuple[int, ...] | None:
    parts = text.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() and len(p) < 10 for p in parts) else None


def prune(folder: Path, keep: int = KEEP_RUNS) -> None:
    """Remove from the cache folder: run files beyond the ``keep`` most recently used, run files of
    older versions of mlops-lint and of the pickle format (before format 5), and temporary files
    left by runs that died more than STALE_SECONDS ago. Links are removed, never followed."""
    import time

    from mlops_lint import __version__

    ours = _version(__version__)
    now = time.time()
    runs = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        try:
            if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                if now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS:
                    os.unlink(entry.path)
            elif name.endswith((".pickle", ".json")) and name.startswith((PREFIX, "rules-index-")):
                os.unlink(entry.path)  # formats before 8 (pickle, then files named .json): never read again
            elif name.startswith("rules-index-") and name.endswith(TEMP_SUFFIX) and ".pickle." in name:
                if now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS:
                    os.unlink(entry.path)
            elif name.startswith(PREFIX) and name.endswith(SUFFIX):
                version = _version(name[len(PREFIX):].split("-", 1)[0])
                if version is not None and ours is not None and version < ours:
                    os.unlink(entry.path)
                else:
                    runs.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
        except OSError:
            continue
    runs.sort(reverse=True)
    for _, path in runs[keep:]:
        try:
            os.unlink(path)
        except OSError:
            pass


class Cache:
    def __init__(self, folder: Path, key: str, payload: dict | None = None):
        self.folder = folder
        self.file = folder / file_name(key)
        self.key = key
        self._payload = payload  # the file as read, decoded at the first get()
        self._old: dict[str, Any] | None = None  # file key -> outcome
        self._old_projects: dict[str, Any] = {}  # project key -> its PROJECT rules' findings
        self.files: dict[str, Any] = {}  # file key -> outcome, for save()
        self.projects: dict[str, Any] = {}  # project key -> its PROJECT rules' findings, for save()
        self.changed = False
        self.invalid = 0  # parts that did not validate (each a miss)
        self._projects_read = False
        # file keys a finished run used without decoding their outcomes (keep): kept as they are
        self._kept: set[str] = set()

    @classmethod
    def open(cls, folder: Path, key: str) -> "Cache":
        payload = None
        enabled = gc.isenabled()
        gc.disable()  # a million acyclic objects: collector passes while loading them tripled its cost
        try:
            data = read_entry(folder / file_name(key), MAX_BYTES)
            if data is not None and not data.startswith(header(key)):
                data = None  # another version's or run's entry, or not one at all: nothing of it is decoded
            payload = loads(data) if data is not None else None
            if not (type(payload) is dict and payload.get("format") == FORMAT and payload.get("key") == key):
                payload = None
        except Exception:  # noqa: BLE001 - a cache that cannot be read is empty, never an error
            payload = None
        finally:
            if enabled:
                gc.enable()
        return cls(folder, key, payload)

    def _load(self) -> dict[str, Any]:
        if self._old is None:
            payload, self._payload = self._payload or {}, None
            self._old = self._decoded(lambda: _decode_outcomes(payload.get("files"), payload.get("results"))) or {}
            if len(self._old) != len(payload.get("files") or ()):
                self.invalid += 1
            self._load_projects(payload)
            gc.freeze()  # they live to the end of the run: never rescanned by the collector
        return self._old

    def _load_projects(self, payload: dict | None = None) -> None:
        """The projects' entries decoded (once), the files' outcomes not (a finished run's)."""
        if self._projects_read:
            return
        self._projects_read = True
        projects = (payload if payload is not None else self._payload or {}).get("projects")
        for key, block in projects.items() if type(projects) is dict else ():
            found = self._decoded(lambda: _decode_project(block))
            if found is not None:
                self._old_projects[key] = found

    def holds(self, keys: Any) -> bool:
        """Whether the cache has an entry for every one of the files' ``keys`` (undecoded: a
        finished run, :meth:`get_finished`, needs none of their outcomes)."""
        files = self._old if self._old is not None else (self._payload or {}).get("files")
        return type(files) is dict and all(key in files for key in keys)

    def keep(self, keys: Any) -> None:
        """The files' entries used as they are, undecoded, by a finished run: kept by :meth:`save`."""
        self._kept.update(keys)

    def _decoded(self, decoder: Any) -> Any:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return decoder()
        except (Invalid, ValueError, TypeError, KeyError, RecursionError):
            self.invalid += 1
            return None
        finally:
            if enabled:
                gc.enable()

    def get(self, key: str) -> Any:
        """A file's outcome (its findings before suppression, suppressions and facts); None for a
        miss, which is also what an entry that does not validate is."""
        found = self._load().get(key)
        if found is not None:
            self.files[key] = found
        return found

    def load_facts(self, outcomes: dict[str, Any]) -> dict[str, Any]:
        """``outcomes`` (display path -> outcome) with every cached outcome's facts decoded; an
        outcome whose facts do not validate is left out (a miss: its file is linted again)."""
        kept = {}
        for display, outcome in outcomes.items():
            if type(outcome.facts) is Pending:
                data = outcome.facts.data
                facts = self._decoded(lambda: _decode_facts(loads(data)))
                if facts is None:
                    for key in [k for k, v in self.files.items() if v is outcome]:
                        del self.files[key]
                    continue
                outcome.facts = facts
            kept[display] = outcome
        return kept

    def put(self, key: str, outcome: Any) -> None:
        self.files[key] = outcome
        self.changed = True

    def get_project(self, key: str) -> Any:
        """A project's PROJECT-rule findings (a run holds one entry per project)."""
        return self._project_entry(key, 2)

    def get_finished(self, key: str) -> Any:
        """A finished run of a project (its findings after every suppression, at the places the
        user edits, its notes and its targets' statuses: linter.engine.run.finish), or None."""
        return self._project_entry(key, 3)

    def _project_entry(self, key: str, parts: int) -> Any:
        """A project entry of this shape (findings and notes; a finished run's has statuses
        too), kept for the next run's file; None when there is none of that shape."""
        self._load_projects()
        found = self._old_projects.get(key)
        if found is not None and len(found) == parts:
            self.projects[key] = found
            return found
        return None

    def put_finished(self, key: str, results: list, statuses: dict[str, str], notes: list[tuple[str, str]]) -> None:
        self.projects[key] = ([(result, None) for result in results], notes, statuses)
        self.changed = True

    def put_project(self, key: str, results: Any, notes: list[tuple[str, str]]) -> None:
        """A project's PROJECT-rule findings and its notes (objects defined differently in several
        files: what a fully warm run, which decodes no facts, could not tell again)."""
        self.projects[key] = (results, notes)
        self.changed = True

    def save(self) -> None:
        """Write this run's entries (if any changed, or some were dropped) and prune old run keys."""
        if self._kept:
            raw = (self._payload or {}).get("files") if self._old is None else None
            if (not self.changed and not self.files and type(raw) is dict and raw.keys() == self._kept
                    and self.projects.keys() == self._old_projects.keys() and not self.invalid):
                self._touch()  # every entry used, none decoded (finished runs): the file as it is
                return
            old = self._load()  # else the kept entries are written with the others
            for key in self._kept:
                if key in old and key not in self.files:
                    self.files[key] = old[key]
            self._kept = set()
        if (not self.changed and self.files.keys() == self._load().keys()
                and self.projects.keys() == self._old_projects.keys() and not self.invalid):
            self._touch()
            return
        # the findings of every outcome checked at once; where one does not validate, outcome by
        # outcome (that outcome is not stored)
        files, columns = {}, _Columns(_valid_findings(self.files.values(), outcomes=True))
        for key, outcome in self.files.items():
            try:
                files[key] = _encode_outcome(outcome, columns)
            except (Invalid, RecursionError, ValueError):
                continue  # not stored: linted again next time
        projects = {}
        for key, (results, notes, *statuses) in self.projects.items():
            try:
                projects[key] = {"findings": _encode_results(results), "notes": [[path, text] for path, text in notes]}
            except Invalid:
                continue
            if statuses:
                projects[key]["statuses"] = dict(statuses[0])
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _tag(self.folder)
            payload = {"format": FORMAT, "key": self.key, "files": files, "results": columns.data(), "projects": projects}
            data = (dumps_large if len(files) > 200 else dumps)(payload)
        except (OSError, TypeError, ValueError):
            return  # a read-only or full cache folder: the run's results stand, uncached
        if write_entry(self.folder, self.file.name, data, PREFIX):
            prune(self.folder)

    def _touch(self) -> None:
        try:
            os.utime(self.file, follow_symlinks=False)
        except (OSError, NotImplementedError):
            pass
