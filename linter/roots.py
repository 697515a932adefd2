"""Project roots (SPEC section 2, "Context and targets"): which project a file belongs to.

A file's project root is the nearest folder upward that holds ``.mlops-lint.yaml`` (or
``.mlops-lint.yml``, or a ``pyproject.toml`` with ``[tool.mlops-lint]``), else the top of its git
work tree (the nearest folder upward holding ``.git``, a folder or, in a worktree or submodule, a
file), else the working folder when the file is under it, else the PATH given. Files under
different roots are separate projects: each has its own config, index, cluster model and cache key.

Each folder is looked at once (four ``stat`` calls: the two config names, ``pyproject.toml`` and
``.git``) and what it gives is kept, so finding the roots of 10,000 files in 300 folders costs 300
looks plus those of their parents, never one per file; a folder the run's walk listed without any
of those names (:attr:`RootFinder.bare`) costs none. No subprocess (``git``) is started.
"""

from __future__ import annotations

import os
from pathlib import Path

from msgspec import Struct


CONFIG_NAMES = (".mlops-lint.yaml", ".mlops-lint.yml")  # the config file names, by preference within a folder

# why a folder is a file's root (Root.found)
BY_CONFIG, BY_GIT, BY_CWD, BY_PATH = "config", "git", "cwd", "path"


class Root(Struct, frozen=True):
    folder: Path  # the project root: its files are the project's context (a PATH that is a file: that file)
    found: str  # BY_CONFIG | BY_GIT | BY_CWD | BY_PATH
    config: Path | None = None  # the config file (BY_CONFIG)
    git: Path | None = None  # the top of the git work tree holding the root, if any


def has_tool_table(path: Path) -> bool:
    """Whether a pyproject.toml has a ``[tool.mlops-lint]`` table (or is broken and seems to mean one)."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if "mlops-lint" not in text and "\\" not in text:
        return False  # no TOML spelling of the name (escapes, line continuations) can be in it: not parsed
    import tomllib

    try:
        return "mlops-lint" in tomllib.loads(text).get("tool", {})
    except (tomllib.TOMLDecodeError, RecursionError):  # broken, but meant for us: loading it reports where
        return "[tool.mlops-lint" in text


def config_in(folder: str, ignored: list[tuple[str, str]] | None = None) -> str | None:
    """The config file a folder holds itself, if any (.mlops-lint.yaml before pyproject.toml).
    One that other users could have put or changed there (:func:`unsafe_because`) is passed
    over, and added to ``ignored`` with the reason."""
    for name in CONFIG_NAMES:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and _trusted(candidate, ignored):
            return candidate
    project = os.path.join(folder, "pyproject.toml")
    if os.path.isfile(project) and has_tool_table(Path(project)) and _trusted(project, ignored):
        return project
    return None


def _trusted(path: str, ignored: list[tuple[str, str]] | None) -> bool:
    reason = unsafe_because(Path(path))
    if reason is not None and ignored is not None:
        ignored.append((path, reason))
    return reason is None


def unsafe_because(path: Path) -> str | None:
    """Why a config file found upward may be someone else's, or None (as git's safe.directory
    asks of a repository): the file is another user's or writable by others, or a folder on its
    way is writable by others so that its entry could be replaced: world-writable without the
    sticky bit, or sticky (``/tmp``) with the entry owned by another user. Owners trusted are the
    current user and root. Never asked of ``--config FILE``, which the user named. Four ``stat``
    calls and one per folder upward, only for a folder that has a config file."""
    import stat

    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is None:
        return None  # Windows: no such modes
    trusted = {uid, 0}
    try:
        info = os.stat(path)
        if info.st_uid not in trusted:
            return f"owned by another user (uid {info.st_uid})"
        if info.st_mode & stat.S_IWOTH:
            return "writable by every user"
        entry = path
        for folder in path.parents:
            mode = os.stat(folder).st_mode
            if mode & stat.S_IWOTH:
                if not mode & stat.S_ISVTX:
                    return f"in {folder}, which every user can write to"
                if os.lstat(entry).st_uid not in trusted:
                    return f"{entry} in {folder} (writable by every user) belongs to another user"
            entry = folder
    except OSError as exc:
        return f"its folders cannot be checked ({exc.strerror})"
    return None


class RootFinder:
    """Roots of files, with what each folder gives kept (one look per distinct folder)."""

    def __init__(self, cwd: Path):
        self.cwd = os.fspath(cwd)
        self._marks: dict[str, tuple[str | None, str | None]] = {}  # folder -> (nearest config, nearest git top)
        self._roots: dict[tuple[str, Path], Root] = {}  # (folder, PATH given) -> its root
        self.ignored: list[tuple[str, str]] = []  # config files passed over: (path, why), see unsafe_because
        self.looked = 0  # folders looked at (for tests of the speed budget)
        # folders a walk of this run listed with none of linter.discover.MARK_NAMES in them: no
        # config file or .git looked for there (linter.discover.Discovery.bare)
        self.bare: set[str] = set()

    def marks(self, folder: str) -> tuple[str | None, str | None]:
        """The nearest config file upward from ``folder`` (absolute) and the nearest git top."""
        climb = []
        here = folder
        while here not in self._marks:
            climb.append(here)
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        found = self._marks.get(here, (None, None)) if here not in climb else (None, None)
        for current in reversed(climb):
            self.looked += 1
            if current in self.bare:
                config = git = None
            else:
                config = config_in(current, self.ignored)
                git = current if os.path.lexists(os.path.join(current, ".git")) else None
            found = (config or found[0], git or found[1])
            self._marks[current] = found
        return self._marks[folder]

    def root(self, folder: str, given: Path) -> Root:
        """The root of a file in ``folder`` (absolute, links resolved) that was found under the
        PATH ``given`` (absolute, as the walk spells it)."""
        found = self._roots.get((folder, given))
        if found is None:
            found = self._roots[folder, given] = self._root(folder, given)
        return found

    def _root(self, folder: str, given: Path) -> Root:
        config, git = self.marks(folder)
        if config is not None:
            top = os.path.dirname(config)
            return Root(Path(top), BY_CONFIG, Path(config), _holding(git, top))
        if git is not None:
            return Root(Path(git), BY_GIT, None, Path(git))
        if folder == self.cwd or folder.startswith(self.cwd.rstrip(os.sep) + os.sep):
            return Root(Path(self.cwd), BY_CWD)
        return Root(given, BY_PATH)


def _holding(git: str | None, top: str) -> Path | None:
    """``git`` if the git work tree holds ``top`` (a config above the git top is outside it)."""
    if git is not None and (top == git or top.startswith(git.rstrip(os.sep) + os.sep)):
        return Path(git)
    return None
