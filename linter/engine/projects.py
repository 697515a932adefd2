"""Which projects a run lints, and the files of each (SPEC section 2, "Context and targets").

Without an explicit config, every file belongs to the project of its root (:mod:`linter.roots`):
the PATHs are grouped by the root each one is under, each group is walked with its own config's
``exclude``, and a file found under a folder PATH that lies under another root (a fixture set
with its own ``.mlops-lint.yaml``, a nested repository) moves to that root's project. A
project's context is every lintable file under its root that has no nearer root; its targets are
the files found under the PATHs. With an explicit config (``--config``, or a ``Config`` handed to
the API) the run is one project whose root is the config's folder (else the PATHs themselves).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from msgspec import Struct, field
from msgspec.structs import replace

from mlops_lint.config import Config
from mlops_lint import discover
from mlops_lint.discover import Discovery, SourceFile
from mlops_lint.model.document import CONFIG
from mlops_lint.roots import BY_PATH, CONFIG_NAMES, Root, RootFinder


class Project(Struct):
    config: Config
    root: Root | None  # None: the one project of an explicit config
    paths: list[Path] = field(default_factory=list)  # the PATHs of this project (absolute)
    targets: Discovery = field(default_factory=Discovery)
    context: list[SourceFile] = field(default_factory=list)  # every file of the project, targets too
    stdin: bool = False  # the document read from stdin belongs here

    @property
    def folder(self) -> Path | None:
        """The folder (or, for a root that is a PATH, the path) whose files are the project's."""
        return self.root.folder if self.root is not None else self.config.root


def spelled(path: Path) -> Path:
    """A PATH as the walk spells it: absolute, a folder with its links resolved, a file's own
    name kept in its resolved folder."""
    given = path.absolute()
    if given.is_dir():
        return Path(os.path.realpath(given))
    return Path(os.path.realpath(given.parent)) / given.name


def explicit(config: Config, paths: list[Path]) -> list[Project]:
    """The one project of an explicit config: its folder's files, else the PATHs themselves."""
    targets = discover.walk(paths, root=config.root, exclude=config.exclude, testdata=config.lint_testdata)
    project = Project(config, None, list(paths), targets)
    if config.root is not None:
        project.context = discover.walk([config.root], root=config.root, exclude=config.exclude, testdata=config.lint_testdata,
                                        reuse=targets.walked).files
    else:
        project.context = list(targets.files)
    project.stdin = True
    return [project]


def by_roots(paths: list[Path], cwd: Path, load: Callable[[Path | None, Root], Config],
             stdin_name: str | None = None, finder: RootFinder | None = None) -> list[Project]:
    """The projects of ``paths`` (and of the stdin document named ``stdin_name``), each file in
    the project of its root; ``load`` gives a root's config. In order of their roots."""
    finder = finder or RootFinder(cwd)
    projects: dict[Path, Project] = {}

    def project_of(root: Root) -> Project:
        found = projects.get(root.folder)
        if found is None:
            found = projects[root.folder] = Project(load(root.config, root), root)
        return found

    for path in paths:
        given = spelled(path)
        folder = given if given.is_dir() else given.parent
        project_of(finder.root(os.fspath(folder), given)).paths.append(given)
    if stdin_name is not None:
        named = spelled(cwd / stdin_name) if stdin_name not in ("", "-", "<stdin>") else cwd
        folder = named if named.is_dir() else named.parent
        project_of(finder.root(os.fspath(folder), named)).stdin = True

    moved: dict[Path, list[SourceFile]] = {}  # nested root -> files found under another project's PATHs
    for project in list(projects.values()):
        if not project.paths:
            continue
        root, config = project.root, project.config
        found = discover.walk(project.paths, root=config.root, exclude=config.exclude, testdata=config.lint_testdata,
                              bound=root.folder if root.found != BY_PATH else None)
        finder.bare.update(found.bare)
        own = []
        for source in found.files:
            home = finder.root(os.path.dirname(os.fspath(source.path)), root.folder)
            if home.folder == root.folder or home.found == BY_PATH:
                own.append(source)
            else:  # under a nearer root: a target of that root's project
                project_of(home)
                moved.setdefault(home.folder, []).append(source)
        found.files = own
        project.targets = found
    for folder, project in projects.items():
        _context(project, finder, moved.get(folder, []))
    return [projects[folder] for folder in sorted(projects, key=os.fspath)]


def _context(project: Project, finder: RootFinder, moved: list[SourceFile]) -> None:
    """Every file of the project: its root's files with no nearer root (a root that is a PATH:
    the targets), and the files moved to it (those its own walk would also take)."""
    root, config = project.root, project.config
    if root.found == BY_PATH:
        project.context = list(project.targets.files)
        return
    if project.paths == [root.folder]:  # `mlops-lint .` at the root: the target walk is the context walk
        files = list(project.targets.files)
    else:
        context = discover.walk([root.folder], root=config.root, exclude=config.exclude, testdata=config.lint_testdata,
                                reuse=project.targets.walked)  # the targets' folders are not listed again
        files = [source for source in context.files
                 if finder.root(os.path.dirname(os.fspath(source.path)), root.folder).folder == root.folder]
    if moved:
        mine = {source.path for source in files}
        taken = [source for source in moved if source.path in mine]  # not excluded by this project's config
        merged = {source.path: source for source in [*project.targets.files, *taken]}  # a PATH may name it too
        project.targets.files = sorted(merged.values(), key=lambda f: str(f.path))
    project.context = files


def add_configs(projects: list[Project], paths: list[Path]) -> None:
    """Each project's ``.mlops-lint.yaml`` that has ``node-pools:`` becomes a file of the project
    (kind CONFIG, :mod:`linter.sources.config_pools`): its pools feed the cluster model with
    where they are written, and the AKS rules report on them there, as on a script's pools. It
    is a target when a PATH of the run is the file, or a folder it is in (where the walk would
    have taken it, were it not mlops-lint's config; the walk's skip of a named config is then
    dropped), else context only; a config its own ``exclude`` matches is neither, and its pools
    stay cluster facts (as the pools of a ``pyproject.toml`` config do, whose text is not placed)."""
    given = [spelled(path) for path in paths]
    for project in projects:
        config = project.config
        path = config.path
        if path is None or not config.node_pools or path.name.lower() not in CONFIG_NAMES:
            continue
        spec = discover.exclude_spec(config.exclude)
        relative = os.path.relpath(path, config.root) if config.root is not None else path.name
        if spec is not None and spec.match_file(Path(relative).as_posix()):
            continue
        source = SourceFile(path, CONFIG)
        project.context = [*(f for f in project.context if f.path != path), source]
        if not any(path == named or (named.is_dir() and path.is_relative_to(named)) for named in given):
            continue
        targets = project.targets
        targets.skipped = [(skipped, why) for skipped, why in targets.skipped if Path(skipped) != path]
        targets.files = sorted([*(f for f in targets.files if f.path != path), source], key=lambda f: str(f.path))


def loader(registry: Any, overrides: dict[str, Any]) -> Callable[[Path | None, Root], Config]:
    """A root's config (each file loaded once), with the command line's overrides applied; a
    root without one has the defaults, and its own folder as root."""
    from mlops_lint.config import load_config

    loaded: dict[Path | None, Config] = {}

    def load(path: Path | None, root: Root) -> Config:
        if path not in loaded:
            config = load_config(path, registry) if path is not None else Config()
            loaded[path] = replace(config, **overrides) if overrides else config
        config = loaded[path]
        if path is None:
            config = replace(config, root=None if root.found == BY_PATH else root.folder)
        return config

    return load
