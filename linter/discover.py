"""Which files to read, and what each one is: Kubernetes YAML/JSON, Dockerfile or shell script.

Folders are walked recursively without following links to folders (so a link loop cannot trap
the walk); a linked *file* is read only when its target is inside the project root (the config's
folder, else the folder given), so a link cannot lead the linter out of the checkout. ``.git``,
``node_modules``, virtualenvs and the config's ``exclude`` patterns (gitignore syntax, via
``pathspec``) are skipped; ``.gitignore`` is not read (SPEC section 2 lists what is skipped, and a
CI gate must not let a committed ``.gitignore`` hide a committed manifest). Helm chart templates
(``templates/`` beside a ``Chart.yaml``) are skipped with one note per chart, and other templates
(``*.j2``, ``*.tpl``, ``*.gotmpl`` …) with one note per folder. Folders named ``testdata`` (Go's
convention, which the Go tool also skips: inputs and golden outputs of a project's tests, never
deployed, such as a linter's violating fixtures) are skipped with one note per walk that counts
their files, unless the config says ``lint-testdata: true``; a folder named on the command line
that is or is under a ``testdata`` folder is walked whole, and a file named in one is read (the
user asked for it).

A file named on the command line (pre-commit names every staged file) is held to the same rules
as one found by the walk, so that pre-commit sees what a full run sees: a chart template, a
template, a file under a tool folder or matched by ``exclude`` is skipped, also when named; so is
a named folder that is (or is under) a tool folder (``mlops-lint .git``).

Nothing here opens a file that is not a regular file (a FIFO or a device could block forever or
have side effects), and a folder that cannot be listed is a note, not a silent gap.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path
from typing import Callable, Iterable, Iterator

from msgspec import Struct, field

from mlops_lint.model.document import BICEP, DOCKERFILE, K8S, SHELL, TERRAFORM
from mlops_lint.result import Note
from mlops_lint.roots import CONFIG_NAMES

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".eggs", "__pypackages__",
                       ".pixi", ".direnv", ".ipynb_checkpoints", ".terraform", ".terragrunt-cache",
                       # editors' and IDEs' settings and local history
                       ".vscode", ".idea", ".vs", ".fleet", ".history"})
VENV_MARKER = "pyvenv.cfg"  # a virtual environment's folder, whatever its name
YAML_SUFFIXES = (".yaml", ".yml", ".json")
CACHEDIR_TAG = "CACHEDIR.TAG"  # https://bford.info/cachedir/: a folder holding it is a cache
SHELL_SUFFIXES = (".sh", ".bash")
TERRAFORM_SUFFIXES = (".tf", ".tfvars")  # node pools in Terraform (linter.model.cluster.from_terraform)
BICEP_SUFFIXES = (".bicep", ".bicepparam")  # node pools in Bicep (linter.model.cluster.from_bicep)
TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2", ".tpl", ".tmpl", ".gotmpl")
# `Dockerfile.<suffix>` names a Dockerfile variant (Dockerfile.gpu, Dockerfile.dev) unless the
# suffix is another language's, a document's, a template's or a leftover's: dockerfile.py (a
# module about Dockerfiles), Dockerfile.md, Dockerfile.j2, Dockerfile.orig
NOT_DOCKERFILE_SUFFIXES = frozenset({
    "py", "pyi", "pyc", "ipynb", "go", "rs", "js", "mjs", "ts", "rb", "java", "kt", "c", "h", "cpp", "cs", "php",
    "pl", "lua", "r", "sh", "bash", "zsh", "fish", "ps1", "bat", "cmd", "md", "markdown", "rst", "txt", "adoc",
    "html", "htm", "xml", "json", "yaml", "yml", "toml", "ini", "cfg", "lock", "csv", "diff", "patch",
    "j2", "jinja", "jinja2", "tpl", "tmpl", "gotmpl", "template", "erb", "mustache", "hbs", "in",
    "bak", "orig", "rej", "swp", "old", "dockerignore",
})


class SourceFile(Struct, frozen=True):
    path: Path  # absolute
    kind: str  # K8S | DOCKERFILE | SHELL


class Discovery(Struct):
    files: list[SourceFile] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # files seen but not read, and why
    # each folder PATH walked (its real path) -> every file its walk took, for a later walk of a
    # folder above it with the same root and excludes (the project's context: see walk's reuse)
    walked: dict[str, list[SourceFile]] = field(default_factory=dict)
    # folders listed that hold none of MARK_NAMES (no config file, no .git): a root's look at
    # them needs no stat (linter.roots.RootFinder.bare)
    bare: set[str] = field(default_factory=set)


MARK_NAMES = frozenset((".mlops-lint.yaml", ".mlops-lint.yml", "pyproject.toml", ".git"))  # what linter.roots looks for


def is_dockerfile_name(name: str) -> bool:
    lower = name.lower()
    # BuildKit's per-Dockerfile ignore file (Dockerfile.dockerignore) is in the list
    if "." in lower and lower.rsplit(".", 1)[1] in NOT_DOCKERFILE_SUFFIXES:
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
    if lower.endswith(TERRAFORM_SUFFIXES):
        return TERRAFORM
    if lower.endswith(BICEP_SUFFIXES):
        return BICEP
    return None


def is_template_name(name: str) -> bool:
    return name.lower().endswith(TEMPLATE_SUFFIXES)


def renders_lintable(name: str) -> bool:
    """Whether a template's output would be lintable by its name (``job.yaml.j2``,
    ``Dockerfile.tpl``, ``values.gotmpl``), as opposed to ``README.md.j2``."""
    inner = name.rsplit(".", 1)[0]
    return "." not in inner or classify_name(inner) is not None


def classify(path: Path, *, sniff: bool = True) -> str | None:
    """The source kind of a file by its name (and, for names without a suffix, its shebang)."""
    name = path.name
    kind = classify_name(name)
    if kind is not None:
        return kind
    if sniff and "." not in name:
        first = read_head(path, 128)
        if first is not None:
            from mlops_lint.sources.shell import is_shell_shebang

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


class ExcludePatternError(ValueError):
    """An ``exclude`` pattern RE2 cannot compile even on its own (``index`` in the list)."""

    def __init__(self, index: int, pattern: str):
        super().__init__(f"exclude pattern {pattern!r} is too large to compile")
        self.index, self.pattern = index, pattern


class _ExcludeParts:
    """Patterns compiled as several RE2 sets, in order, when one set would pass RE2's memory
    bound (3,000 ordinary patterns do): the last pattern that matches decides, as in one set."""

    def __init__(self, specs: list):
        self.specs = specs

    def match_file(self, file: str) -> bool:
        for spec in reversed(self.specs):
            include = spec.check_file(file).include
            if include is not None:
                return include
        return False


def exclude_spec(patterns: Iterable[str]):
    patterns = tuple(patterns)
    if not patterns:
        return None
    return _compiled_exclude(patterns)


@functools.lru_cache(maxsize=8)
def _compiled_exclude(patterns: tuple[str, ...]):
    """The patterns as one RE2 set, or as consecutive parts (halved until each compiles): RE2
    (linear time) because pathspec's patterns as Python regexes backtrack exponentially on stars
    (`exclude: ["********************x"]` against a name of many x's hung the run). Raises
    ExcludePatternError for a pattern that does not compile on its own. Cached: the config's
    check (linter.config) and every walk use the same compiled set."""
    import pathspec
    import re2

    def compiled(start: int, end: int) -> list:
        try:
            return [pathspec.PathSpec.from_lines("gitignore", patterns[start:end], backend="re2")]
        except re2.error:
            if end - start == 1:
                raise ExcludePatternError(start, patterns[start]) from None
            middle = (start + end) // 2
            return compiled(start, middle) + compiled(middle, end)

    parts = compiled(0, len(patterns))
    return parts[0] if len(parts) == 1 else _ExcludeParts(parts)


def _relative(path: Path, root: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def _real(path: Path) -> Path:
    """``path`` with every link resolved; never raises (``Path.resolve`` raises RuntimeError on a
    link loop in Python 3.11; ``os.path.realpath`` leaves the looping part as it is)."""
    return Path(os.path.realpath(path))


# Each shown path that escapes bytes -> those bytes (raw_name): a file name holding a backslash
# and ``xff`` shows the same, so the text alone cannot say which file it names.
_RAW_NAMES: dict[str, bytes] = {}


def shown(path: Path | str) -> str:
    """A path as text that can always be printed and encoded as UTF-8: bytes of a file name that
    are not UTF-8 (kept by Python as lone surrogates) are shown as ``\\xNN`` escapes, and the
    name's bytes are kept for :func:`raw_name`."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogateescape")
        escaped = raw.decode("utf-8", "backslashreplace")
        _RAW_NAMES[escaped] = raw
        return escaped


def raw_name(shown_text: str) -> bytes | None:
    """The bytes of the path :func:`shown` showed as ``shown_text`` with escapes (None when it
    showed it as it is): what a URI must percent-encode to name that file (SARIF)."""
    return _RAW_NAMES.get(shown_text)


def display_path(path: Path, cwd: Path) -> str:
    """Relative to ``cwd`` where possible, ``/``-separated, and always printable as UTF-8."""
    text, base = str(path), str(cwd)
    if os.sep == "/" and text.startswith(base) and len(text) > len(base) and (text[len(base)] == "/" or base == "/"):
        return shown(text[len(base) + (base != "/"):])  # what relative_to gives, without parsing either path
    try:
        return shown(path.relative_to(cwd).as_posix())
    except ValueError:
        return shown(path.as_posix())


def _folders(top: str, onerror: Callable[[OSError], None]) -> Iterator[tuple[str, list[str], list[os.DirEntry], bool]]:
    """``os.walk(top)``, top-down and without entering links to folders, giving each file's
    directory entry instead of its name: the entry knows the file's type from the listing, so
    no file costs a system call of its own. Prune the folder names in place, as with os.walk.
    The last item: whether the folder holds a name of :data:`MARK_NAMES` (a file or a folder)."""
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
        marked = False  # a name of MARK_NAMES here (lowered: a file system may ignore case)
        for entry in entries:
            if entry.name[:1] in ".pP" and entry.name.lower() in MARK_NAMES:
                marked = True
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
        yield folder, names, files, marked
        stack.extend(os.path.join(folder, name) for name in reversed(names) if name not in links)


def _name(entry: os.DirEntry) -> str:
    return entry.name


TEMPLATE_NOTE = ("not linted; lint the rendered output through stdin, e.g. `… | mlops-lint - --stdin-filename "
                 "NAME` (the name gives the kind)")
CHART_NOTE = ('Helm chart templates skipped; `pip install "mlops-lint[helm]"` renders and lints them (or lint the '
              "rendered output with `helm template <chart> | mlops-lint -`)")


TESTDATA = "testdata"


def walk(paths: Iterable[Path], *, root: Path | None, exclude: Iterable[str] = (),
         reuse: dict[str, list[SourceFile]] | None = None, bound: Path | None = None,
         testdata: bool = False) -> Discovery:
    """Every lintable file under ``paths``; a file given directly is taken unless a rule of the
    walk would have skipped it (see :func:`_named_skip`).

    ``reuse``: the :attr:`Discovery.walked` of an earlier walk with the same ``root`` and
    ``exclude``: a folder of it that this walk enters is not listed again, its files are taken
    as that walk took them (entered from above, the folder meets the same rules inside it; a
    folder with a virtual environment's marker, which a walk given that folder itself enters,
    is never in ``walked``). The project's context walk reuses the targets' walk this way.

    ``bound``: the project's folder when there is no config's ``root`` (a git work tree, the
    working folder): a file named as a PATH that is a link out of it is not read (with neither,
    out of the folder it is named in).

    ``testdata``: walk folders named ``testdata`` too (the config's ``lint-testdata``); else they
    are skipped, their lintable files listed in :attr:`Discovery.skipped` and counted in a note."""
    spec = exclude_spec(exclude)
    found = Discovery()
    seen: set[Path] = set()
    mine: list[SourceFile] | None = None  # the files of the folder PATH being walked
    charts: set[Path] = set()
    templates: dict[Path, list[str]] = {}  # folder -> the templates skipped in it
    tests: dict[Path, int] = {}  # testdata folder skipped -> its lintable files

    def excluded(path: Path, is_dir: bool) -> bool:
        if spec is None or root is None:
            return False
        rel = _relative(path, root)
        if rel is None:
            return False
        return spec.match_file(rel + "/" if is_dir else rel)

    def add(path: Path, kind: str | None) -> None:
        if kind is None:
            return
        source = SourceFile(path, kind)
        if mine is not None:
            mine.append(source)
        if path not in seen:
            seen.add(path)
            found.files.append(source)

    def chart_note(chart: Path) -> None:
        if chart not in charts:
            charts.add(chart)
            found.notes.append(Note(str(chart / "templates"), CHART_NOTE))

    def template(path: Path) -> None:
        found.skipped.append((path, "template"))
        templates.setdefault(path.parent, []).append(path.name)

    def skipped_tests(folder: Path) -> None:
        if folder in tests:
            return
        count = 0
        for inner, subdirs, names in os.walk(folder, followlinks=False):
            subdirs[:] = [d for d in subdirs if d not in SKIP_DIRS and not excluded(Path(inner) / d, True)]
            for name in sorted(names):
                path = Path(inner) / name
                if classify(path, sniff=False) is not None and not excluded(path, False):
                    found.skipped.append((path, "test data (testdata/)"))
                    count += 1
        tests[folder] = count

    def unlisted(error: OSError) -> None:
        where = Path(error.filename) if error.filename else Path(".")
        found.notes.append(Note(str(where), f"folder not read: {error.strerror or error}"))

    paths = list(paths)
    # links may not lead out of the project: the config's folder, else the folders given
    bounds = [_real(root)] if root is not None else [_real(p.absolute()) for p in paths if p.is_dir()]
    named = _NamedRules(root, excluded)
    for given in paths:
        # One spelling per file: folders resolved (as the config's root is), a file's own name kept
        # (a linked file is reported under the name the user gave).
        given = given.absolute()
        given = _real(given.parent) / given.name if not given.is_dir() else _real(given)
        if not given.is_dir():  # files, and links whose target is gone or loops (reported as unreadable)
            why = named.skip(given)
            if why is not None:
                if why == "Helm chart template":
                    chart_note(named.chart(given))  # type: ignore[arg-type]
                if why == "template":
                    template(given)
                else:
                    found.skipped.append((given, why))
            elif given.exists() and not is_regular(given):
                found.notes.append(Note(str(given), "not read: not a regular file"))
                found.skipped.append((given, "not a regular file"))
            elif given.is_symlink() and all(_relative(_real(given), limit) is None for limit in (
                    [_real(root)] if root is not None else [_real(bound)] if bound is not None else [given.parent])):
                found.notes.append(
                    Note(str(given), f"not read: the link points outside the project ({shown(_real(given))})"))
                found.skipped.append((given, "link out of the project"))
            elif (kind := classify(given)) is None and "." in given.name.strip(".") and \
                    not given.name.lower().endswith(YAML_SUFFIXES):
                # an extension that names no kind (notes.txt, README.md, train.py): not YAML
                suffix = "." + given.name.rsplit(".", 1)[1]
                found.notes.append(Note(str(given), f"not read: a `{suffix}` file is not a manifest, Dockerfile or "
                                        "shell script (a .yaml, .yml or .json manifest, a Dockerfile name, a .sh "
                                        "script, or a script with a shell shebang)"))
                found.skipped.append((given, "name of no lintable kind"))
            else:
                add(given, kind or K8S)
            continue
        why = named.skip_folder(given)
        if why is not None:  # `mlops-lint --fix .git`: the walk from the top never enters it
            found.skipped.append((given, why))
            continue
        mine = []
        skip_tests = not testdata and TESTDATA not in given.parts  # a testdata folder named: walked whole
        for folder, dirs, entries, marked in _folders(os.fspath(given), unlisted):
            here = Path(folder)
            if not marked:
                found.bare.add(folder)
            if here == given and any(entry.name == VENV_MARKER for entry in entries):
                mine = None  # a walk from above would skip it: nothing to reuse
            if (any(entry.name == VENV_MARKER for entry in entries) and here != given) or \
                    any(entry.name == CACHEDIR_TAG for entry in entries):
                # a virtual environment, whatever its name; a cache folder (ours writes the tag; so do
                # pip's, ruff's, Bazel's): their files are no input, and the result cache's own file
                # under the project would change every run's key
                dirs[:] = []
                continue
            if "templates" in dirs and any(entry.name == "Chart.yaml" for entry in entries):
                dirs.remove("templates")
                for inner, _, names in os.walk(here / "templates", followlinks=False):
                    base = Path(inner)  # once per folder; a name's kind without a Path (classify, sniff=False)
                    for name in sorted(names):
                        if classify_name(name) is not None:
                            found.skipped.append((base / name, "Helm chart template"))
                chart_note(here)
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not excluded(here / d, True))
            if skip_tests and TESTDATA in dirs:
                dirs.remove(TESTDATA)
                skipped_tests(here / TESTDATA)
            if reuse:
                for name in [d for d in dirs if os.path.join(folder, d) in reuse]:
                    dirs.remove(name)  # walked already, with the same rules
                    for source in reuse[os.path.join(folder, name)]:
                        add(source.path, source.kind)
            for entry in sorted(entries, key=_name):
                name = entry.name
                kind = classify_name(name)
                if kind is None and "." in name:
                    if is_template_name(name) and renders_lintable(name) and not excluded(here / name, False):
                        template(here / name)
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
        if mine is not None:
            found.walked[os.fspath(given)] = mine
        mine = None
    for folder, names in templates.items():
        where = folder / names[0] if len(names) == 1 else folder
        listed = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        what = f"template {names[0]}" if len(names) == 1 else f"{len(names)} templates ({listed})"
        found.notes.append(Note(str(where), f"{what} {TEMPLATE_NOTE}"))
    counted = {folder: count for folder, count in tests.items() if count}
    if counted:
        files = sum(counted.values())
        folders = sorted(counted, key=os.fspath)
        where = folders[0] if len(folders) == 1 else Path(os.path.commonpath([os.fspath(f) for f in folders]))
        what = (f"{files} file{'s' if files > 1 else ''} in "
                + ("this `testdata/` folder" if len(folders) == 1 else f"{len(folders)} `testdata/` folders under it"))
        found.notes.append(Note(str(where), f"{what} not linted (test inputs and outputs, never deployed); name a "
                                "folder on the command line to lint it, or set `lint-testdata: true` in the config"))
    found.files.sort(key=lambda f: str(f.path))
    return found


class _NamedRules:
    """The walk's skip rules, for a file named on the command line: the walk never reaches a file
    under a chart's ``templates/``, a tool folder or an excluded folder, nor takes a template or
    an excluded file, so a named one is skipped too (pre-commit names files one by one)."""

    def __init__(self, root: Path | None, excluded: Callable[[Path, bool], bool]):
        self.top = _real(root if root is not None else Path.cwd())  # where the walk would start
        self.excluded = excluded
        self.charts: dict[Path, Path | None] = {}  # folder -> the chart whose templates/ holds it
        self.folders: dict[Path, str | None] = {self.top: None}  # folder -> why the walk never enters it

    def chart(self, path: Path) -> Path | None:
        """The chart folder when ``path`` is under a chart's ``templates/``."""
        folder = path.parent
        if folder not in self.charts:
            if folder.name == "templates" and (folder.parent / "Chart.yaml").is_file():
                self.charts[folder] = folder.parent
            else:
                self.charts[folder] = self.chart(folder) if folder.parent != folder else None
        return self.charts[folder]

    def folder(self, folder: Path) -> str | None:
        """Why the walk from the top would not enter ``folder`` (under the top), or None; each
        folder is looked at once, however many files are named in it."""
        if folder not in self.folders:
            why = self.folder(folder.parent)
            if why is None:
                if folder.name in SKIP_DIRS:
                    why = f"in a tool folder ({folder.name}/)"
                elif (folder / VENV_MARKER).is_file():
                    why = "in a virtual environment"
                elif self.excluded(folder, True):
                    why = "excluded by the config"
            self.folders[folder] = why
        return self.folders[folder]

    def skip_folder(self, folder: Path) -> str | None:
        """Why the walk from the top would not enter the named folder ``folder`` (a tool folder,
        or a folder under one, a virtual environment or an excluded folder), or None. A virtual
        environment named itself is walked, as before."""
        if folder == self.top or _relative(folder, self.top) is None:
            return None
        if folder.name in SKIP_DIRS:
            return f"a tool folder ({folder.name}/)"
        return self.folder(folder.parent)

    def skip(self, path: Path) -> str | None:
        """Why the walk would not take ``path``, or None."""
        if self.chart(path) is not None:
            return "Helm chart template"
        name = path.name
        if is_template_name(name):
            return "template"
        if name.lower() in CONFIG_NAMES:
            return "mlops-lint's config"
        if classify_name(name) is None and name.lower().startswith(("dockerfile", "containerfile")):
            # Dockerfile.md, dockerfile.py: named like a Dockerfile, and not one (pre-commit's
            # `dockerfile` type takes Dockerfile.md); any other named file is read, as YAML
            # when its name tells nothing (`mlops-lint rendered.txt`)
            return "not a Dockerfile (its suffix names another language or a document)"
        if _relative(path, self.top) is None:
            return None  # outside the project: no walk would reach it to skip it
        return self.folder(path.parent) or ("excluded by the config" if self.excluded(path, False) else None)


def sniff(data: bytes) -> tuple[str, str]:
    """The kind of a document read from stdin without ``--stdin-filename``, and what told it:
    a sh/bash shebang or an unindented ``az`` command is a shell script, a first instruction
    ``FROM`` or ``ARG`` (after comments and parser directives) a Dockerfile, anything else YAML."""
    import re

    from mlops_lint.sources.shell import is_shell_shebang

    text = data[:65536].decode("utf-8", "replace").lstrip("\ufeff")
    lines = text.splitlines()
    if lines and is_shell_shebang(lines[0]):
        return SHELL, "its first line is a shell shebang"
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if re.match(r"(?i)(FROM|ARG)\s+\S", stripped) and not re.match(r"\S+:(\s|$)", stripped):
            return DOCKERFILE, f"its first instruction is {stripped.split()[0].upper()}"
        break
    if re.search(r"(?m)^az\s+\w", text) and not re.search(r"(?m)^apiVersion\s*:", text):
        return SHELL, "it runs `az` commands"
    return K8S, "no Dockerfile instruction or shell script found"
