"""Which files to read, and what each one is: Kubernetes YAML/JSON, Dockerfile or shell script.

Folders are walked recursively without following links to folders (so a link loop cannot trap
the walk); a linked *file* is read only when its target is inside the project root (the config's
folder, else the folder given), so a link cannot lead the linter out of the checkout. ``.git``,
``node_modules``, virtualenvs and the config's ``exclude`` patterns (gitignore syntax, via
``pathspec``) are skipped; ``.gitignore`` is not read (SPEC section 2 lists what is skipped, and a
CI gate must not let a committed ``.gitignore`` hide a committed manifest). Helm chart templates
(``templates/`` beside a ``Chart.yaml``) are skipped with one note per chart.

Nothing here opens a file that is not a regular file (a FIFO or a device could block forever or
have side effects), and a folder that cannot be listed is a note, not a silent gap.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from linter.model.document import DOCKERFILE, K8S, SHELL
from linter.result import Note
from linter.roots import CONFIG_NAMES

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", ".terraform"})
YAML_SUFFIXES = (".yaml", ".yml", ".json")
CACHEDIR_TAG = "CACHEDIR.TAG"  # https://bford.info/cachedir/: a folder holding it is a cache
SHELL_SUFFIXES = (".sh", ".bash")


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: Path  # absolute
    kind: str  # K8S | DOCKERFILE | SHELL


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # files seen but not read, and why


def is_dockerfile_name(name: str) -> bool:
    lower = name.lower()
    if lower.endswith(".dockerignore"):  # BuildKit's per-Dockerfile ignore file (Dockerfile.dockerignore)
        return False
    return (
        lower in ("dockerfile", "containerfile")
        or lower.startswith(("dockerfile.", "dockerfile-", "dockerfile_", "containerfile."))
        or lower.endswith((".dockerfile", ".containerfile"))
    )


def classify_name(name: str) -> str | None:
    """The source kind a file name alone gives (a name without a suffix may still be a script)."""
    lower = name.lower()
    if lower in CONFIG_NAMES:  # mlops-lint's own config (every fixture set has one): not a manifest
        return None
    if lower.endswith(YAML_SUFFIXES):
        return K8S
    if is_dockerfile_name(name):
        return DOCKERFILE
    if lower.endswith(SHELL_SUFFIXES):
        return SHELL
    return None


def classify(path: Path, *, sniff: bool = True) -> str | None:
    """The source kind of a file by its name (and, for names without a suffix, its shebang)."""
    name = path.name
    kind = classify_name(name)
    if kind is not None:
        return kind
    if sniff and "." not in name:
        first = read_head(path, 128)
        if first is not None:
            from linter.sources.shell import is_shell_shebang

            if is_shell_shebang(first.split(b"\n", 1)[0].decode("utf-8", "replace")):
                return SHELL
    return None


def is_regular(path: Path) -> bool:
    """Whether ``path`` (links followed) is a regular file; False for FIFOs, devices, sockets,
    folders, dangling links and link loops."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_head(path: Path, size: int) -> bytes | None:
    """The first ``size`` bytes of a regular file, or None (never blocks: a FIFO swapped in after
    the check is opened non-blocking and refused by ``fstat``)."""
    if not is_regular(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _exclude_spec(patterns: Iterable[str]):
    patterns = list(patterns)
    if not patterns:
        return None
    import pathspec

    return pathspec.PathSpec.from_lines("gitignore", patterns)


def _relative(path: Path, root: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def _real(path: Path) -> Path:
    """``path`` with every link resolved; never raises (``Path.resolve`` raises RuntimeError on a
    link loop in Python 3.11; ``os.path.realpath`` leaves the looping part as it is)."""
    return Path(os.path.realpath(path))


def shown(path: Path | str) -> str:
    """A path as text that can always be printed and encoded as UTF-8: bytes of a file name that
    are not UTF-8 (kept by Python as lone surrogates) are shown as ``\\xNN`` escapes."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def display_path(path: Path, cwd: Path) -> str:
    """Relative to ``cwd`` where possible, ``/``-separated, and always printable as UTF-8."""
    text, base = str(path), str(cwd)
    if os.sep == "/" and text.startswith(base) and len(text) > len(base) and (text[len(base)] == "/" or base == "/"):
        return shown(text[len(base) + (base != "/"):])  # what relative_to gives, without parsing either path
    try:
        return shown(path.relative_to(cwd).as_posix())
    except ValueError:
        return shown(path.as_posix())


def _folders(top: str, onerror: Callable[[OSError], None]) -> Iterator[tuple[str, list[str], list[os.DirEntry]]]:
    """``os.walk(top)``, top-down and without entering links to folders, giving each file's
    directory entry instead of its name: the entry knows the file's type from the listing, so
    no file costs a system call of its own. Prune the folder names in place, as with os.walk."""
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as error:
            onerror(error)
            continue
        names: list[str] = []
        files: list[os.DirEntry] = []
        links: set[str] = set()
        for entry in entries:
            try:
                is_folder = entry.is_dir()
                if is_folder and entry.is_symlink():
                    links.add(entry.name)
            except OSError:  # as os.walk: an entry whose type cannot be read is not a folder
                is_folder = False
            if is_folder:
                names.append(entry.name)
            else:
                files.append(entry)
        yield folder, names, files
        stack.extend(os.path.join(folder, name) for name in reversed(names) if name not in links)


def _name(entry: os.DirEntry) -> str:
    return entry.name


def walk(paths: Iterable[Path], *, root: Path | None, exclude: Iterable[str] = ()) -> Discovery:
    """Every lintable file under ``paths`` (files given directly are always taken)."""
    spec = _exclude_spec(exclude)
    found = Discovery()
    seen: set[Path] = set()
    charts: set[Path] = set()

    def excluded(path: Path, is_dir: bool) -> bool:
        if spec is None or root is None:
            return False
        rel = _relative(path, root)
        if rel is None:
            return False
        return spec.match_file(rel + "/" if is_dir else rel)

    def add(path: Path, kind: str | None) -> None:
        if kind is not None and path not in seen:
            seen.add(path)
            found.files.append(SourceFile(path, kind))

    def unlisted(error: OSError) -> None:
        where = Path(error.filename) if error.filename else Path(".")
        found.notes.append(Note(str(where), f"folder not read: {error.strerror or error}"))

    paths = list(paths)
    # links may not lead out of the project: the config's folder, else the folders given
    bounds = [_real(root)] if root is not None else [_real(p.absolute()) for p in paths if p.is_dir()]
    for given in paths:
        # One spelling per file: folders resolved (as the config's root is), a file's own name kept
        # (a linked file is reported under the name the user gave).
        given = given.absolute()
        given = _real(given.parent) / given.name if not given.is_dir() else _real(given)
        if not given.is_dir():  # files, and links whose target is gone or loops (reported as unreadable)
            if given.exists() and not is_regular(given):
                found.notes.append(Note(str(given), "not read: not a regular file"))
                found.skipped.append((given, "not a regular file"))
            else:
                add(given, classify(given) or K8S)
            continue
        for folder, dirs, entries in _folders(os.fspath(given), unlisted):
            here = Path(folder)
            if any(entry.name == CACHEDIR_TAG for entry in entries):
                # a cache folder (ours writes the tag; so do pip's, ruff's, Bazel's): its files are no
                # input, and the result cache's own file under the project would change every run's key
                dirs[:] = []
                continue
            if "templates" in dirs and any(entry.name == "Chart.yaml" for entry in entries):
                dirs.remove("templates")
                for inner, _, names in os.walk(here / "templates", followlinks=False):
                    for name in sorted(names):
                        if classify(Path(inner) / name, sniff=False) is not None:
                            found.skipped.append((Path(inner) / name, "Helm chart template"))
                if here not in charts:
                    charts.add(here)
                    found.notes.append(
                        Note(str(here / "templates"), "Helm chart templates skipped; lint the rendered output with "
                             "`helm template <chart> | mlops-lint -`")
                    )
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not excluded(here / d, True))
            for entry in sorted(entries, key=_name):
                name = entry.name
                kind = classify_name(name)
                if kind is None and "." in name:
                    continue  # neither lintable by its name nor a script to tell by its shebang
                path = here / name
                if excluded(path, False):
                    continue
                if kind is None and (kind := classify(path)) is None:
                    continue
                try:  # the listing's type: a regular file (nearly all) needs no other look
                    link = entry.is_symlink()
                    regular = link or entry.is_file(follow_symlinks=False)
                except OSError:  # gone since listed: reported when it cannot be read
                    link, regular = False, True
                if not regular or (link and path.exists() and not is_regular(path)):
                    # a FIFO or device (or a link to one): reading it could block forever
                    found.notes.append(Note(str(path), "not read: not a regular file"))
                    found.skipped.append((path, "not a regular file"))
                    continue
                if link:
                    target = _real(path)
                    if all(_relative(target, bound) is None for bound in bounds):
                        found.notes.append(
                            Note(str(path), f"not read: the link points outside the project ({shown(target)})"))
                        found.skipped.append((path, "link out of the project"))
                        continue
                add(path, kind)
    found.files.sort(key=lambda f: str(f.path))
    return found
