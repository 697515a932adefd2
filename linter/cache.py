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
(a temporary file renamed over the old one), so concurrent runs never see a torn file, and read
with an unpickler that builds only mlops-lint's own data classes and builtin containers: a
cache file planted by someone else cannot run code.
"""

from __future__ import annotations

import gc
import io
import os
import pickle
import sys
from pathlib import Path
from typing import Any

from linter.digest import digest, digest_text

FORMAT = 5
KEEP_RUNS = 16
PREFIX = "run-"
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# mlops-lint's result cache (https://bford.info/cachedir/)\n"


def default_dir() -> Path:
    """``$MLOPS_LINT_CACHE_DIR``, else the platform's user cache folder (``~/.cache/mlops-lint``)."""
    configured = os.environ.get("MLOPS_LINT_CACHE_DIR")
    if configured:
        return Path(configured)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mlops-lint", appauthor=False))


def _code_signature(modules: set[str]) -> list[str]:
    """(file, size, mtime) of the engine's modules and of every module a rule comes from."""
    import linter

    files: list[str] = []
    root = Path(linter.__file__).parent
    for folder, _, names in os.walk(root):
        files.extend(os.path.join(folder, n) for n in names if n.endswith((".py", ".json")))
    from linter.ruleindex import module_file

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
    from linter.validation.crds import configured_files

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
    from linter import __version__

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


# functions the tree's own __reduce__ names (they only fill a node with the given items)
_REBUILDERS = {("linter.model.tree", "_rebuild_map"), ("linter.model.tree", "_rebuild_seq")}


class _Unpickler(pickle.Unpickler):
    """Builds mlops-lint's own data classes (and tuple/dict subclasses) and nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _REBUILDERS:
            return super().find_class(module, name)
        if module.split(".")[0] in ("linter", "rules") or module == "fractions":
            found = super().find_class(module, name)
            if isinstance(found, type) and (hasattr(found, "__dataclass_fields__")
                                            or issubclass(found, (tuple, dict, list, int, str))
                                            or found.__module__ == "fractions"):
                return found
        raise pickle.UnpicklingError(f"the cache may not build {module}.{name}")


class Cache:
    def __init__(self, folder: Path, key: str, files: dict[str, Any], projects: dict[str, Any]):
        self.folder = folder
        self.file = folder / f"{PREFIX}{key}.pickle"
        self.key = key
        self._old = files
        self._old_projects = projects
        self.files: dict[str, Any] = {}
        self.projects: dict[str, Any] = {}  # project key -> its PROJECT rules' findings
        self.changed = False

    @classmethod
    def open(cls, folder: Path, key: str) -> "Cache":
        files: dict[str, Any] = {}
        projects: dict[str, Any] = {}
        path = folder / f"{PREFIX}{key}.pickle"
        enabled = gc.isenabled()
        gc.disable()  # a million acyclic objects: collector passes while loading them tripled its cost
        try:
            with open(path, "rb") as handle:
                payload = _Unpickler(io.BufferedReader(handle)).load()
            gc.freeze()  # they live to the end of the run: never rescanned
            if isinstance(payload, dict) and payload.get("format") == FORMAT and payload.get("key") == key:
                files = payload["files"]
                projects = payload["projects"]
        except Exception:  # noqa: BLE001 - a cache that cannot be read is empty, never an error
            files, projects = {}, {}
        finally:
            if enabled:
                gc.enable()
        return cls(folder, key, files, projects)

    def get(self, key: str) -> Any:
        """A file's outcome (its findings before suppression, suppressions and facts)."""
        found = self._old.get(key)
        if found is not None:
            self.files[key] = found
        return found

    def put(self, key: str, outcome: Any) -> None:
        self.files[key] = outcome
        self.changed = True

    def get_project(self, key: str) -> Any:
        """A project's PROJECT-rule findings (a run holds one entry per project)."""
        found = self._old_projects.get(key)
        if found is not None:
            self.projects[key] = found
        return found

    def put_project(self, key: str, results: Any) -> None:
        self.projects[key] = results
        self.changed = True

    def save(self) -> None:
        """Write this run's entries (if any changed, or some were dropped) and prune old run keys."""
        if not self.changed and self.files.keys() == self._old.keys() and self.projects.keys() == self._old_projects.keys():
            self._touch()
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tag = self.folder / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text(CACHEDIR_TAG, encoding="utf-8")
            payload = {"format": FORMAT, "key": self.key, "files": self.files, "projects": self.projects}
            temporary = self.file.with_name(f".{self.file.name}.{os.getpid()}.tmp")
            with open(temporary, "wb") as handle:
                pickle.dump(payload, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.file)
        except OSError:
            return  # a read-only or full cache folder: the run's results stand, uncached
        self._prune()

    def _touch(self) -> None:
        try:
            os.utime(self.file)
        except OSError:
            pass

    def _prune(self) -> None:
        try:
            runs = [entry for entry in os.scandir(self.folder)
                    if entry.name.startswith(PREFIX) and entry.name.endswith(".pickle")]
            runs.sort(key=lambda entry: entry.stat().st_mtime, reverse=True)
            for entry in runs[KEEP_RUNS:]:
                os.unlink(entry.path)
        except OSError:
            pass
