"""Which files to read, and what each one is: Kubernetes YAML/JSON, Dockerfile or shell script.

Folders are walked recursively without following links (so a link loop cannot trap the walk and
a link cannot lead out of the project); ``.git``, ``node_modules``, virtualenvs and the config's
``exclude`` patterns (gitignore syntax, via ``pathspec``) are skipped. Helm chart templates
(``templates/`` beside a ``Chart.yaml``) are skipped with one note per chart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from linter.model.document import DOCKERFILE, K8S, SHELL
from linter.result import Note

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", ".terraform"})
YAML_SUFFIXES = (".yaml", ".yml", ".json")
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


def classify(path: Path, *, sniff: bool = True) -> str | None:
    """The source kind of a file by its name (and, for names without a suffix, its shebang)."""
    name = path.name
    lower = name.lower()
    if lower.endswith(YAML_SUFFIXES):
        return K8S
    if is_dockerfile_name(name):
        return DOCKERFILE
    if lower.endswith(SHELL_SUFFIXES):
        return SHELL
    if sniff and "." not in name:
        try:
            with open(path, "rb") as handle:
                from linter.sources.shell import is_shell_shebang

                if is_shell_shebang(handle.readline(128).decode("utf-8", "replace")):
                    return SHELL
        except OSError:
            return None
    return None


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

    for given in paths:
        # One spelling per file: folders resolved (as the config's root is), a file's own name kept
        # (a linked file is reported under the name the user gave).
        given = given.absolute()
        given = given.parent.resolve() / given.name if not given.is_dir() else given.resolve()
        if not given.is_dir():  # files, and links whose target is gone (reported as unreadable)
            if given.exists() and not given.is_file():
                found.notes.append(Note(str(given), "not read: not a regular file"))
                found.skipped.append((given, "not a regular file"))
            else:
                add(given, classify(given) or K8S)
            continue
        for folder, dirs, files in os.walk(given, followlinks=False):
            here = Path(folder)
            if "Chart.yaml" in files and "templates" in dirs:
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
            for name in sorted(files):
                path = here / name
                if excluded(path, False):
                    continue
                kind = classify(path)
                if kind is None:
                    continue
                if path.exists() and not path.is_file():  # a FIFO or device: reading it could block forever
                    found.notes.append(Note(str(path), "not read: not a regular file"))
                    found.skipped.append((path, "not a regular file"))
                    continue
                if path.is_symlink():
                    target = path.resolve()
                    if root is not None and _relative(target, root.resolve()) is None:
                        found.notes.append(Note(str(path), f"not read: the link points outside the project ({target})"))
                        found.skipped.append((path, "link out of the project"))
                        continue
                add(path, kind)
    found.files.sort(key=lambda f: str(f.path))
    return found
