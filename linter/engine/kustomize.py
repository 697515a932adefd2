"""Kustomize, built: each root (:mod:`linter.sources.kustomize` reads them) linted as it is
built, findings and fixes mapped back to the files the user edits. The build room's kustomize
part, beside Helm's render; :mod:`linter.engine.builds` runs them for a run.

Each root is built once per run with the first of ``kustomize build`` or ``kubectl kustomize`` on
PATH (the configured ``kustomize.command`` chooses between them by name only;
``MLOPS_LINT_KUSTOMIZE``, the user's, names another program: :mod:`linter.programs`), in a
temporary folder holding a wrapper kustomization whose only resource is the root and which asks
for ``buildMetadata: [originAnnotations]``: the user's tree is never written to.

The tree is untrusted, so the build is confined. A root the reading refused
(:attr:`linter.sources.kustomize.Root.refused`: a remote address, Helm charts, a path out of the
project, a kustomization not read fully) is not built. kustomize's load restrictor stays on. The
process runs without a network where ``unshare --net`` works (else with proxies that lead
nowhere), with a closed stdin, in its own process group killed when the linter ends (SIGTERM,
Ctrl-C: see :func:`abandon`; ``setpriv --pdeathsig`` when it is killed), and with a timeout that
is at most ``file-timeout`` and the run's remaining budget for builds (:data:`BUILDS_BUDGET`). A
failed build is one SCH001 on the root's kustomization file, with kustomize's own message.

The files a built root pulls in (resources, patches, components, generators' inputs …) are linted
*through* the build: their raw reading keeps only what needs the file itself (SCH001 parse errors;
Dockerfile and shell files keep every finding). Every other file is linted raw as before.

Mapping back (:class:`Mapper`): a finding on a built object is moved to the file and line the user
edits: the last patch (strategic merge or JSON 6902, in a file or inline) whose text sets the node
the finding is on with the value the build has, else the node (or its deepest existing parent) in
the resource file the ``config.kubernetes.io/origin`` annotation names, else the kustomization
line that changed it (``images``, ``replicas``, ``namespace``, ``namePrefix`` …) or generated the
object (``configMapGenerator`` …). The message says ``(after overlay DIR)`` and the JSON and SARIF
reports name the root the object was built from.

Fixes (``--fix``): a built object's fix plan is translated to the resource file's nodes
(:meth:`Mapper.source_plan`) only where the node it edits is written there as built and no patch
touches it; otherwise there is no fix. While fixes wait to be written, a root whose files they
changed is built from a copy of its files as fixed (:func:`build`).

Build outputs are cached in the result cache's folder under a key of the command and the content
of every file the root's closure reads, so an unchanged root is not built again; an entry is
never read or written through a link (:class:`BuildCache`).
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable

from msgspec import Struct
from msgspec.structs import replace

from mlops_lint.model.document import K8S, Document, K8sObject
from mlops_lint.model.position import FILE_START, Span
from mlops_lint.model.tree import YMap, YSeq, frozen
from mlops_lint.programs import MAX_OUTPUT, build_environment, on_path
from mlops_lint.sources.kustomize import GENERATORS, Patch, Root

ORIGIN = "config.kubernetes.io/origin"
BUILD_ANNOTATIONS = (ORIGIN, "alpha.config.kubernetes.io/transformations")
DEFAULT_TIMEOUT = 60.0
# every build of a run together: a wall-clock budget no config raises (each build also stops at its
# own timeout, and at file-timeout: a build is bounded as a file is)
BUILDS_BUDGET = 300.0
# list items merged by a key in strategic merge patches (the keys the Kubernetes types name)
_MERGE_KEYS = ("name", "mountPath", "containerPort", "devicePath", "ip", "topologyKey", "port")


_BUILDERS = {"kustomize": "build", "kubectl": "kustomize"}
PROGRAM_VARIABLE = "MLOPS_LINT_KUSTOMIZE"  # the user's choice of program (an absolute path), not the tree's
_SAFE_FLAG = re.compile(r"^--(?:load-restrictor|load_restrictor)(?:=LoadRestrictionsRootOnly)?$|^LoadRestrictionsRootOnly$")


class CommandRefused(ValueError):
    """A configured build command mlops-lint will not run (the message says why)."""


def check_command(configured: tuple[str, ...] | list[str], programs: dict[str, str] = _BUILDERS) -> None:
    """Refuse a configured command that is not one of ``programs`` with its subcommand (and
    only load-restrictor flags after it): a config comes with the tree it lints, and must not
    make the linter run what the tree chooses."""
    name = os.path.basename(configured[0])
    if name not in programs or len(configured) < 2 or configured[1] != programs[name]:
        shapes = ", ".join(f"[{program}, {sub}]" for program, sub in programs.items())
        raise CommandRefused(f"the command {list(configured)!r} is not one mlops-lint runs (one of {shapes})")
    if os.sep in configured[0] and not os.path.isabs(configured[0]):
        raise CommandRefused(f"the program {configured[0]!r} must be a name on PATH or an absolute path")
    for flag in configured[2:]:
        if not _SAFE_FLAG.match(flag):
            raise CommandRefused(f"the flag {flag!r} is not one mlops-lint passes (only --load-restrictor "
                                 "LoadRestrictionsRootOnly: nothing outside a kustomization's folder is read)")


def find_command(configured: tuple[str, ...] | None = None) -> list[str] | None:
    """The build command: ``kustomize build``, else ``kubectl kustomize``, found on PATH's
    absolute folders (the configured command may choose between them and add the default load
    restrictor, but names its program only by name; see :func:`check_command`); the program is
    the one ``MLOPS_LINT_KUSTOMIZE`` names when set. None when none is found."""
    from mlops_lint.programs import ProgramRefused, chosen, named

    if configured:
        try:
            named(configured[0], tuple(_BUILDERS), "kustomize.command", PROGRAM_VARIABLE)
        except ProgramRefused as refused:
            raise CommandRefused(str(refused)) from None
        check_command(configured)
    try:
        given = chosen(tuple(_BUILDERS), PROGRAM_VARIABLE)
    except ProgramRefused as refused:
        raise CommandRefused(str(refused)) from None
    if given is not None:
        name, program = given
        flags = list(configured[2:]) if configured and configured[0] == name else []
        return [program, _BUILDERS[name], *flags]
    if configured:
        program = on_path(configured[0])
        return [program, *configured[1:]] if program else None
    for name, sub in _BUILDERS.items():
        program = on_path(name)
        if program:
            return [program, sub]
    return None


def _error_text(stderr: str, relative: str, root: Root) -> str:
    """kustomize's own message, in one line, with the wrapper's paths put back as the user's."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    text = " ".join(lines[-3:]) if lines else "no message"
    quoted = re.search(r'err="((?:[^"\\]|\\.)*)"', text)  # kubectl's klog line: the error itself
    if quoted:
        text = quoted.group(1).replace('\\"', '"').replace("\\'", "'")
    text = re.sub(r"^Error:\s*", "", text)
    # the wrapper's own level of the chain ("accumulating resources from ROOT: … recursed accumulation
    # of path ROOT: "), which the user never wrote
    wrapped = re.match(r"accumulating resources: accumulation err='accumulating resources from '[^']*': '[^']*' "
                       r"must resolve to a file': (?:recursed accumulation of path '[^']*': )?(.*?)'?$", text, re.DOTALL)
    if wrapped:
        text = wrapped.group(1)
    text = text.replace(relative, root.folder_display).replace(root.folder, root.folder_display)
    text = " ".join(text.split())
    # kustomize nests its causes: the innermost (the end) names the file that is wrong
    return text if len(text) <= 600 else f"{text[:150]} … {text[-440:]}"


def error_span(root: Root, message: str) -> Span:
    """Where in the root's kustomization a build error is: the field kustomize's message names
    (``Go struct field Kustomization.configMapGenerator``), else the file's start."""
    own = root.chain[-1].tree if root.chain else None
    named = re.search(r"\bKustomization\.(\w+)", message)
    if own is not None and named and named.group(1) in own:
        return own.key_span(named.group(1))
    return FILE_START


class BuildOutcome(Struct):
    root: Root
    output: bytes | None = None
    error: str | None = None  # kustomize's message (one SCH001 on the root)
    wrapper: str = ""  # the temporary folder origins are relative to (real path)


# Builds under way and their temporary folders and files: on SIGTERM or Ctrl-C (see
# linter.engine.builds.guard) every build's process group is killed and every temporary removed
# before the linter ends; a build whose parent dies anyway (SIGKILL) gets SIGKILL from the kernel
# (PR_SET_PDEATHSIG, through setpriv)
_RUNNING: dict[int, Any] = {}  # pid -> Popen
_TEMPORARY: set[str] = set()  # folders and files to remove
_OWNER = os.getpid()


def abandon() -> None:
    """Kill every build under way (its whole process group) and remove every temporary folder
    and file of the builds; safe to call from a signal handler, and a no-op in a forked worker."""
    import shutil
    import signal

    if os.getpid() != _OWNER:
        return
    for pid in list(_RUNNING):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    for path in list(_TEMPORARY):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass
        _TEMPORARY.discard(path)


_ISOLATION: list[list[str]] | None = None


def isolation() -> list[str]:
    """What the build command is run under, found once: ``unshare --net`` (a network namespace of
    its own, with only a loopback that is down: nothing, not even 127.0.0.1, is reachable), or
    the same in a user namespace where only that is allowed, and ``setpriv --pdeathsig KILL``
    (it dies with the linter); each only where it works here. Without them the build still has
    proxies that lead nowhere, and mlops-lint's own check of every remote address."""
    global _ISOLATION
    if _ISOLATION is None:
        import subprocess

        found: list[list[str]] = []
        for prefix in (["unshare", "--net"], ["unshare", "--user", "--map-current-user", "--net"],
                       ["unshare", "--user", "--map-root-user", "--net"]):
            program = on_path(prefix[0])
            if program and _works([program, *prefix[1:], "--"], subprocess):
                found.append([program, *prefix[1:], "--"])
                break
        program = on_path("setpriv")
        if program and _works([program, "--pdeathsig", "KILL", "--"], subprocess):
            found.append([program, "--pdeathsig", "KILL", "--"])
        _ISOLATION = found
    return [part for prefix in _ISOLATION for part in prefix]


def _works(prefix: list[str], subprocess: Any) -> bool:
    true = on_path("true")
    if true is None:
        return False
    try:
        return subprocess.run([*prefix, true], stdin=subprocess.DEVNULL, capture_output=True, timeout=5,
                              check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _run(arguments: list[str], folder: str, timeout: float) -> tuple[int, bytes, bytes] | None:
    """Run a build in its own process group (killed whole on timeout, SIGTERM or Ctrl-C);
    (status, stdout, stderr), or None when it did not finish in ``timeout`` seconds."""
    import signal
    import subprocess

    process = subprocess.Popen([*isolation(), *arguments], cwd=folder, env=build_environment(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    _RUNNING[process.pid] = process
    try:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            process.communicate()
            return None
        return process.returncode, out, err
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # anything it left running in its group
        except OSError:
            pass
        _RUNNING.pop(process.pid, None)


def build(root: Root, command: list[str], timeout: float, inside: str | None = None,
          as_written: bool = False, deadline: float | None = None) -> BuildOutcome:
    """One root built in a temporary folder (removed after); never raises.

    ``timeout`` bounds the build, and ``deadline`` (a :func:`time.monotonic` time: the run's
    budget for builds) too: a build that would start after it is not run.

    While ``--fix`` holds changed bytes of the root's files (:data:`linter.sources.files.OVERLAY`,
    a fix of a base resource in an earlier pass), the root is built from a copy of the files it
    reads as the fixes left them (:func:`_mirrored`), so the next pass lints what the fix gives."""
    import math
    import tempfile
    import time

    from mlops_lint.sources.files import OVERLAY

    if OVERLAY and not as_written and any(path in OVERLAY for path in root.inputs):
        return _mirrored(root, command, timeout, deadline)
    shown = " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(command))
    limit = timeout
    if deadline is not None:
        limit = min(limit, deadline - time.monotonic())
        if limit <= 0:
            return BuildOutcome(root, error=f"{shown} not run: the run's time for builds ({BUILDS_BUDGET:g} s) "
                                            "was spent")
    if not math.isfinite(limit) or limit <= 0:
        return BuildOutcome(root, error=f"{shown} not run: its timeout {timeout!r} is not a positive number")
    folder = os.path.realpath(tempfile.mkdtemp(prefix="mlops-lint-kustomize-", dir=inside))
    _TEMPORARY.add(folder)
    relative = os.path.relpath(root.folder, folder)
    try:
        with open(os.path.join(folder, "kustomization.yaml"), "w", encoding="utf-8") as handle:
            handle.write(f"resources:\n- {_quoted(relative)}\nbuildMetadata: [originAnnotations]\n")
        try:
            done = _run([*command, folder], folder, limit)
        except OSError as exc:
            return BuildOutcome(root, error=f"could not run {command[0]}: {exc.strerror or exc}", wrapper=folder)
        if done is None:
            budget = " (the run's time for builds ran out)" if limit < timeout else ""
            return BuildOutcome(root, error=f"{shown} did not finish in {limit:g} s{budget}", wrapper=folder)
        status, stdout, stderr = done
        if status != 0:
            return BuildOutcome(root, error=_error_text(stderr.decode("utf-8", "replace"), relative, root),
                                wrapper=folder)
        if len(stdout) > MAX_OUTPUT:
            return BuildOutcome(root, error=f"the build's output is over {MAX_OUTPUT >> 20} MB: not linted",
                                wrapper=folder)
        return BuildOutcome(root, output=stdout, wrapper=folder)
    finally:  # the wrapper is the folder's one file: removed by its absolute path, then the folder
        for leftover in (os.path.join(folder, "kustomization.yaml"),):
            try:
                os.remove(leftover)
            except OSError:
                pass
        try:
            os.rmdir(folder)
        except OSError:
            pass
        _TEMPORARY.discard(folder)


def _mirrored(root: Root, command: list[str], timeout: float, deadline: float | None = None) -> BuildOutcome:
    """:func:`build` over a temporary copy of every file the root reads (each as
    :func:`linter.sources.files.read_source` gives it), laid out as they are under their common
    folder; origins are read as if the wrapper stood in that folder, so they name the real files.
    A copy that does not build (a file the build reads that the closure does not list, a folder
    reached through a link) falls back to the tree as it is on disk."""
    import shutil
    import tempfile

    from mlops_lint.sources.files import Unreadable, read_source

    common = os.path.commonpath([root.folder, *(os.path.dirname(path) for path in root.inputs)])
    mirror = os.path.realpath(tempfile.mkdtemp(prefix="mlops-lint-kustomize-fix-"))
    _TEMPORARY.add(mirror)
    try:
        for path in root.inputs:
            target = os.path.join(mirror, os.path.relpath(path, common))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(read_source(path))
        copy = Root(os.path.join(mirror, os.path.relpath(root.path, common)), root.display, root.chain, root.inputs,
                    root.remote, root.helm)
        built = build(copy, command, timeout, inside=mirror, as_written=True, deadline=deadline)
    except (OSError, Unreadable):
        built = BuildOutcome(root, error="copy failed")
    finally:
        shutil.rmtree(mirror, ignore_errors=True)
        _TEMPORARY.discard(mirror)
    if built.output is None:
        return build(root, command, timeout, as_written=True, deadline=deadline)
    wrapper = os.path.join(common, os.path.relpath(built.wrapper, mirror))
    return BuildOutcome(root, output=built.output, wrapper=wrapper)


def _quoted(text: str) -> str:
    import json

    return json.dumps(text)


def build_key(root: Root, command: list[str]) -> str:
    """The cache key of a root's build: the command (and its program's identity) and the name
    and content of every file the build reads."""
    from mlops_lint.digest import digest, digest_text
    from mlops_lint.sources.files import Unreadable, read_source

    try:
        info = os.stat(command[0])
        program = f"{info.st_size}:{info.st_mtime_ns}"
    except OSError:
        program = ""
    parts: list[str] = [*command, program, os.path.relpath(root.folder, "/")]
    for path in root.inputs:
        try:
            parts.append(f"{path}:{digest(read_source(path))}")
        except Unreadable:
            parts.append(f"{path}:unread")
    return digest_text(*parts)


def for_cache(output: bytes, wrapper: str) -> bytes:
    """A build's output as the cache keeps it: the folder its origins are relative to first."""
    return wrapper.encode("utf-8", "surrogateescape") + b"\n" + output


def split_cached(data: bytes) -> tuple[str, bytes]:
    wrapper, _, output = data.partition(b"\n")
    return wrapper.decode("utf-8", "surrogateescape"), output


class BuildCache:
    """Build outputs kept as files in the result cache's folder (``kustomize/<key>.out``: a suffix
    no run lints, should the cache folder sit in the tree). Like the result cache's entries
    (:mod:`linter.cache`), which may sit in a folder shared or restored from elsewhere: an entry
    is read only from a regular file opened without following a link (a link is a miss), and
    written to a new temporary file (``O_CREAT|O_EXCL|O_NOFOLLOW``, never through a link planted
    under any name) renamed over the entry; a temporary that could not be written whole (a full
    disk) or whose run is interrupted is removed.

    Pruned as the result cache is (:func:`end_run`): an entry is kept while one of the run files
    the result cache keeps (its ``KEEP_RUNS`` most recently used) was saved by a run that used it.
    Every entry a run read or wrote is touched when the run ends, after its run file was saved, so
    an entry older than the oldest run file kept was used by none of them; such entries, and
    temporaries left by runs that died more than ``STALE_SECONDS`` ago, are removed when a run
    wrote an entry (the folder only grows then)."""

    def __init__(self, folder: Any):
        self.folder = os.path.join(str(folder), "kustomize") if folder is not None else None

    def get(self, key: str) -> bytes | None:
        if self.folder is None:
            return None
        from mlops_lint.cachedata import read_entry

        # a str path (os.open takes it): a warm run of many charts reads thousands of entries
        path = os.path.join(self.folder, f"{key}.out")
        data = read_entry(path, MAX_OUTPUT + 4096)  # type: ignore[arg-type]
        if data is None:
            return None
        _USED.add(path)
        return bytes(data)

    def put(self, key: str, data: bytes) -> None:
        if self.folder is None:
            return
        import tempfile

        try:
            os.makedirs(self.folder, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=self.folder)
        except OSError:
            return  # a cache that cannot be written: the run stands, unbuilt next time
        _TEMPORARY.add(temporary)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(temporary, os.path.join(self.folder, f"{key}.out"))
            _USED.add(os.path.join(self.folder, f"{key}.out"))
            _WRITTEN.add(self.folder)
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        finally:
            _TEMPORARY.discard(temporary)


_USED: set[str] = set()  # the build cache entries this run read or wrote (paths)
_WRITTEN: set[str] = set()  # the build cache folders this run wrote an entry in


def end_run() -> None:
    """At a run's end, after the result cache saved its run file (:func:`linter.engine.run.lint_run`):
    every build cache entry the run used touched, and each folder the run wrote in pruned
    (:class:`BuildCache`)."""
    used, written = sorted(_USED), sorted(_WRITTEN)
    _USED.clear()
    _WRITTEN.clear()
    if os.getpid() != _OWNER:
        return
    for path in used:
        try:
            os.utime(path, follow_symlinks=False)  # a link planted there is touched itself, never followed
        except (OSError, NotImplementedError):
            pass
    for folder in written:
        prune(folder)


def prune(folder: str, keep: int | None = None) -> None:
    """Remove from a build cache folder the entries no run the result cache keeps used (older
    than the oldest of its ``keep`` most recent run files, beside the folder; none when there is
    no run file) and temporaries older than ``STALE_SECONDS``. Links are removed, never followed."""
    import time

    from mlops_lint.cache import KEEP_RUNS, PREFIX, STALE_SECONDS, SUFFIX

    runs = []
    try:
        with os.scandir(os.path.dirname(folder)) as listing:
            for entry in listing:
                if entry.name.startswith(PREFIX) and entry.name.endswith(SUFFIX) and entry.is_file(follow_symlinks=False):
                    runs.append(entry.stat(follow_symlinks=False).st_mtime)
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError:
        return
    runs.sort(reverse=True)
    kept = runs[:KEEP_RUNS if keep is None else keep]
    oldest = kept[-1] if kept else None
    now = time.time()
    for entry in entries:
        try:
            modified = entry.stat(follow_symlinks=False).st_mtime
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                if now - modified > STALE_SECONDS:
                    os.unlink(entry.path)
            elif entry.name.endswith(".out") and oldest is not None and modified < oldest:
                os.unlink(entry.path)
        except OSError:
            continue


# ---------------------------------------------------------------------------------------------
# Mapping back


def virtual_path(root: Root) -> str:
    """The display path the built output is linted under (never shown: every result on it is
    mapped back)."""
    return f"<kustomize build {root.folder_display}>"


class Origin(Struct):
    file: str | None  # absolute real path of the resource file
    generated_by: tuple[str, str] | None = None  # (kustomization, generator kind)


def strip_origins(document: Document, wrapper: str) -> list[Origin]:
    """Each built object's origin (read from, then removed with, the build's annotations)."""
    import yaml

    origins = []
    for obj in document.objects:
        meta = obj.body.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, YMap) else None
        origin = Origin(None)
        if isinstance(annotations, YMap):
            raw = annotations.get(ORIGIN)
            try:
                data = yaml.safe_load(raw) if isinstance(raw, str) else None
            except yaml.YAMLError:
                data = None
            if isinstance(data, dict):
                if isinstance(data.get("path"), str):
                    origin = Origin(os.path.realpath(os.path.join(wrapper, data["path"])))
                elif isinstance(data.get("configuredIn"), str):
                    by = data.get("configuredBy") if isinstance(data.get("configuredBy"), dict) else {}
                    origin = Origin(None, (os.path.realpath(os.path.join(wrapper, data["configuredIn"])),
                                           str(by.get("kind", ""))))
            for key in BUILD_ANNOTATIONS:
                annotations.pop(key, None)
            if not annotations:
                del meta["annotations"]
        origins.append(origin)
    return origins


def _contains(span: Span, line: int, col: int) -> bool:
    """Whether a position is inside a span (its end is exclusive)."""
    return (span.line, span.col) <= (line, col) < (span.end_line, span.end_col)


def node_at(body: YMap, line: int, col: int) -> tuple[tuple, bool]:
    """The path (keys and indices) of the deepest node of ``body`` at a position, and whether the
    position is on a key (else on a value)."""
    path: list = []
    node: Any = body
    while True:
        if isinstance(node, YMap):
            for key, value in node.items():
                if key in node.kspans and _contains(node.kspans[key], line, col):
                    return tuple(path + [key]), True
                vspan = node.vspans.get(key)
                if vspan is not None and _contains(vspan, line, col):
                    path.append(key)
                    if isinstance(value, (YMap, YSeq)):
                        node = value
                        break
                    return tuple(path), False
            else:
                return tuple(path), False
        elif isinstance(node, YSeq):
            for index, value in enumerate(node):
                if _contains(node.item_span(index), line, col):
                    path.append(index)
                    if isinstance(value, (YMap, YSeq)):
                        node = value
                        break
                    return tuple(path), False
            else:
                return tuple(path), False
        else:
            return tuple(path), False


def _merge_index(source: YSeq, built: YSeq, index: int) -> int | None:
    """The item of ``source`` that item ``index`` of ``built`` was merged from: the one with the
    same merge key (containers by name, ports by containerPort …), else the same index."""
    if index >= len(built):
        return None
    item = built[index]
    if isinstance(item, dict):
        for key in _MERGE_KEYS:
            if key in item:
                for position, other in enumerate(source):
                    if isinstance(other, dict) and other.get(key) == item[key]:
                        return position
                return None
    return index if index < len(source) else None


class Match(Struct):
    depth: int  # how many keys of the path the candidate holds
    span: Span
    value: Any
    full: bool


def resolve(source: Any, built: Any, path: tuple, on_key: bool, shift: tuple[int, int] = (0, 0)) -> Match | None:
    """The deepest node of ``source`` along the built object's ``path`` (list items matched by
    merge key), with its span (shifted for inline text)."""
    found: Match | None = None
    for depth, key in enumerate(path, 1):
        last = depth == len(path)
        if isinstance(source, YMap) and isinstance(key, str):
            if key not in source:
                break
            # a key the finding is on, or a parent the path goes on through: the key; a value: the value
            span = source.vspans.get(key) if last and not on_key else None
            span = span or source.kspans.get(key, source.span)
            value = source[key]
            found = Match(depth, _shift(span, shift), value, last)
            source, built = value, built.get(key) if isinstance(built, dict) else None
        elif isinstance(source, YSeq) and isinstance(key, int) and isinstance(built, YSeq):
            position = _merge_index(source, built, key)
            if position is None:
                break
            found = Match(depth, _shift(source.item_span(position), shift), source[position], last)
            source, built = source[position], built[key]
        else:
            break
    return found


# kustomization fields that rewrite objects in ways no patch shows: no fix of a root using one
_OPAQUE = ("replacements", "vars", "transformers", "generators")


def _walk(source: Any, built: Any, path: tuple) -> Any:
    """The node of ``source`` at the built object's ``path`` (list items matched by merge key), or None."""
    for key in path:
        if isinstance(source, YMap) and isinstance(key, str) and key in source and isinstance(built, YMap):
            source, built = source[key], built.get(key)
        elif isinstance(source, YSeq) and isinstance(key, int) and isinstance(built, YSeq):
            position = _merge_index(source, built, key)
            if position is None:
                return None
            source, built = source[position], built[key]
        else:
            return None
    return source


def _agrees(source: YMap, built: YMap, steps: tuple, kind: str) -> bool:
    """Whether ``source`` holds what ``built`` shows along an intent's ``steps``: each mapping on
    the way present in both or missing in both, the last key too, with an equal scalar (for an
    append, a list of the same length; for a deletion, an equal value, so its indexes name the
    same items)."""
    append = kind == "append_item"
    for depth, key in enumerate(steps):
        has_source, has_built = key in source, key in built
        if has_source != has_built:
            return False
        if not has_built:
            return True
        mine, theirs = source[key], built[key]
        if depth == len(steps) - 1:
            if kind in ("delete_item", "delete_key"):
                return frozen(mine) == frozen(theirs)
            if append:
                return (mine is None and theirs is None) or (
                    isinstance(mine, YSeq) and isinstance(theirs, YSeq) and len(mine) == len(theirs))
            if isinstance(mine, (YMap, YSeq)) or isinstance(theirs, (YMap, YSeq)):
                return isinstance(mine, YMap) and isinstance(theirs, YMap)
            return mine == theirs and type(mine) is type(theirs)
        if not (isinstance(mine, YMap) and isinstance(theirs, YMap)):
            return mine is None and theirs is None
        source, built = mine, theirs
    return True


def _smp_touches(patch: Any, built: Any, path: tuple) -> bool:
    """Whether a strategic merge patch sets or deletes anything at or under the built object's
    ``path``, or replaces a node above it (a scalar, null or ``$patch`` where the path goes on;
    a list without merge keys, which is replaced whole)."""
    if not path:
        return True
    key = path[0]
    if isinstance(patch, YMap):
        if "$patch" in patch or not isinstance(key, str):
            return True
        if any(isinstance(k, str) and k.startswith("$") and k.endswith("/" + key) for k in patch):
            return True  # $setElementOrder/KEY, $deleteFromPrimitiveList/KEY, $retainKeys
        if "$retainKeys" in patch:
            return True
        if key not in patch:
            return False
        return _smp_touches(patch[key], built.get(key) if isinstance(built, YMap) else None, path[1:])
    if isinstance(patch, YSeq):
        if not isinstance(key, int) or not isinstance(built, YSeq) or key >= len(built):
            return True
        item = built[key]
        keys = [k for k in _MERGE_KEYS if isinstance(item, YMap) and k in item]
        if not keys:
            return True  # merged by position or replaced whole
        for other in patch:
            if not isinstance(other, YMap) or not any(k in other for k in keys):
                return True
            if any(other.get(k) == item[k] for k in keys if k in other) and _smp_touches(other, item, path[1:]):
                return True
        return False
    return True


def _json_touches(ops: YSeq, path: tuple) -> bool:
    """Whether a JSON 6902 op (but ``test``) names a pointer at, under or above ``path`` (an
    index in a pointer matches any index: the list may have moved under earlier ops)."""
    for _, op in ops.maps():
        if op.get("op") == "test":
            continue
        for name in ("path", "from"):
            pointer = op.get(name)
            if not isinstance(pointer, str):
                if name == "path":
                    return True
                continue
            parts = [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]
            if all(str(a) == b or (isinstance(a, int) and (b.isdigit() or b == "-")) for a, b in zip(path, parts)):
                return True
    return False


def _shift(span: Span, shift: tuple[int, int]) -> Span:
    lines, cols = shift
    if not lines and not cols:
        return span
    return Span(span.line + lines, span.col + cols, span.end_line + lines, span.end_col + cols)


def _value_at(body: Any, path: tuple) -> Any:
    for key in path:
        if isinstance(body, dict) and key in body:
            body = body[key]
        elif isinstance(body, list) and isinstance(key, int) and key < len(body):
            body = body[key]
        else:
            return None
    return body


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return True  # a container the patch set: its members are checked where the path goes on
    return a == b or str(a) == str(b)


# a built node a kustomization field changes, by the path's start: the fields, in the order looked at
_FIELDS: tuple[tuple[tuple, tuple[str, ...]], ...] = (
    (("metadata", "namespace"), ("namespace",)),
    (("metadata", "name"), ("namePrefix", "nameSuffix")),
    (("metadata", "labels"), ("labels", "commonLabels")),
    (("metadata", "annotations"), ("commonAnnotations",)),
    (("spec", "replicas"), ("replicas",)),
)


class Mapper:
    """Where the user edits what a finding on a built object is about (see the module's text)."""

    def __init__(self, root: Root, document: Document, origins: list[Origin], display_of: dict[str, str]):
        self.root = root
        self.document = document
        self.origins = origins
        self.display_of = display_of  # real path -> display path
        self.kustomizations = {k.path: k for k in root.chain}
        self._files: dict[str, Document | None] = {}
        self._trees: dict[tuple, Any] = {}

    def display(self, path: str) -> str:
        if path in self.display_of:
            return self.display_of[path]
        from mlops_lint.discover import display_path
        from pathlib import Path

        return display_path(Path(path), Path.cwd().resolve())

    def _document(self, path: str) -> Document | None:
        if path not in self._files:
            from mlops_lint.sources.files import Unreadable, read_source
            from mlops_lint.sources.yaml_k8s import load_text

            try:
                self._files[path] = load_text(read_source(path).decode("utf-8", "replace"), path)
            except Unreadable:
                self._files[path] = None
        return self._files[path]

    def _object_at(self, line: int) -> int | None:
        """The built object a line is in (a block mapping's span starts at its first key and ends
        where the next document starts, exclusive)."""
        for index, obj in enumerate(self.document.objects):
            span = obj.body.span
            if _contains(span, line, 1) or _contains(span, line, span.col):
                return index
        return None

    @staticmethod
    def _source_object(document: Document | None, built: K8sObject) -> K8sObject | None:
        if document is None:
            return None
        same_kind = [obj for obj in document.objects if obj.kind == built.kind]
        exact = [obj for obj in same_kind if obj.name == built.name]
        if exact:
            return exact[0]
        inside = sorted((obj for obj in same_kind if obj.name and obj.name in built.name), key=lambda o: -len(o.name))
        if inside:
            return inside[0]
        return same_kind[0] if len(same_kind) == 1 else None

    def _patch_trees(self, patch: Patch) -> list[Any]:
        """A patch's documents as trees (strategic merge objects, or one JSON 6902 op list)."""
        key = (patch.kustomization, patch.entry)
        if key not in self._trees:
            from mlops_lint.sources.files import Unreadable, read_source
            from mlops_lint.sources.yaml_k8s import compose_tree

            text = patch.text
            if text is None and patch.file is not None:
                try:
                    text = read_source(patch.file).decode("utf-8", "replace")
                except Unreadable:
                    text = None
            trees: list[Any] = []
            if text is not None:
                if re.search(r"^---", text, re.MULTILINE):
                    from mlops_lint.sources.yaml_k8s import load_text

                    trees = [obj.body for obj in load_text(text, patch.file or "").objects]
                else:
                    tree = compose_tree(text)
                    trees = [tree] if tree is not None else []
            self._trees[key] = trees
        return self._trees[key]

    @staticmethod
    def _targets(patch: Patch, tree: Any, built: K8sObject, source: K8sObject | None) -> bool:
        names = {built.name} | ({source.name} if source is not None else set())
        target = patch.target
        if target:
            kind = target.get("kind")
            if isinstance(kind, str) and kind != built.kind:
                return False
            name = target.get("name")
            if isinstance(name, str):
                try:
                    return any(re.fullmatch(name, candidate) for candidate in names)
                except re.error:
                    return name in names
            return True
        if isinstance(tree, YMap):
            meta = tree.get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else None
            return tree.get("kind") in (None, built.kind) and (name is None or name in names)
        return False

    def _json_patch(self, ops: YSeq, built: K8sObject, path: tuple, on_key: bool, shift: tuple[int, int]
                    ) -> Match | None:
        best: Match | None = None
        for _, op in ops.maps():
            if op.get("op") not in ("add", "replace") or not isinstance(op.get("path"), str):
                continue
            pointer = [part.replace("~1", "/").replace("~0", "~") for part in op["path"].split("/")[1:]]
            if len(pointer) > len(path) or any(str(a) != b and b != "-" for a, b in zip(path, pointer)):
                continue
            rest = path[len(pointer):]
            built_value = _value_at(built.body, path[:len(pointer)])
            value = op.get("value")
            if not rest:
                found = Match(len(path), _shift(op.value_span("value"), shift), value, True)
            else:
                inner = resolve(value, built_value, rest, on_key, shift)
                if inner is None:
                    continue
                found = Match(len(pointer) + inner.depth, inner.span, inner.value, inner.full)
            # the last op that sets the whole path wins (later ops overwrite earlier ones), else the deepest
            if found.full or best is None or (not best.full and found.depth > best.depth):
                best = found
        return best

    def _in_patches(self, built: K8sObject, source: K8sObject | None, path: tuple, on_key: bool
                    ) -> tuple[Patch, Match] | None:
        """The last patch whose text sets ``path`` to the value the build has."""
        wanted = _value_at(built.body, path)
        for kustomization in reversed(self.root.chain):
            for patch in reversed(kustomization.patches):
                shift = patch.offset if patch.text is not None else (0, 0)
                for tree in reversed(self._patch_trees(patch)):
                    if isinstance(tree, YSeq):
                        if not patch.target:
                            continue
                        found = (self._json_patch(tree, built, path, on_key, shift)
                                 if self._targets(patch, None, built, source) else None)
                    elif isinstance(tree, YMap) and self._targets(patch, tree, built, source):
                        found = resolve(tree, built.body, path, on_key, shift)
                    else:
                        continue
                    if found is not None and found.full and _same(found.value, wanted):
                        return patch, found
        return None

    def _field_entry(self, path: tuple, built_value: Any, source_value: Any) -> tuple[str, Span] | None:
        """The kustomization line whose field (``images``, ``namespace`` …) made the built value."""
        fields: tuple[str, ...] = ()
        for start, names in _FIELDS:
            if path[:len(start)] == start:
                fields = names
                break
        if path and path[-1] == "image" and isinstance(built_value, str) and built_value != source_value:
            for kustomization in reversed(self.root.chain):
                images = kustomization.tree.get_seq("images") if kustomization.tree is not None else None
                for index, item in (images.maps() if images is not None else ()):
                    names = {item.get("name"), item.get("newName")}
                    repository = re.split(r"[:@]", built_value.rsplit("/", 1)[-1])[0]
                    if any(isinstance(n, str) and (built_value.startswith(n) or n.rsplit("/", 1)[-1] == repository)
                           for n in names):
                        # the member that set what the image reference ends with
                        for member in ("digest", "newTag", "newName"):
                            if member in item:
                                return kustomization.path, item.value_span(member)
                        return kustomization.path, images.item_span(index)
        if not fields or built_value == source_value:
            return None
        for kustomization in reversed(self.root.chain):
            tree = kustomization.tree
            for name in fields:
                if tree is not None and name in tree:
                    return kustomization.path, tree.key_span(name)
        return None

    def _generator(self, origin: Origin, built: K8sObject) -> tuple[str, Span]:
        kustomization, _ = origin.generated_by  # type: ignore[misc]
        own = self.kustomizations.get(kustomization)
        tree = own.tree if own is not None else None
        for key in GENERATORS:
            entries = tree.get_seq(key) if tree is not None else None
            for index, item in (entries.maps() if entries is not None else ()):
                name = item.get("name")
                if isinstance(name, str) and name in built.name:
                    return kustomization, item.value_span("name")
        return kustomization, FILE_START

    def safe_locate(self, span: Span) -> tuple[str, Span]:
        """:meth:`locate`, or the root's kustomization should mapping fail on odd input (a finding
        is never lost, nor the run stopped, by where it is reported)."""
        try:
            return self.locate(span)
        except Exception:  # noqa: BLE001 - see above
            return self.root.display, FILE_START

    def locate(self, span: Span) -> tuple[str, Span]:
        """Where a built position is edited: (display path, span)."""
        index = self._object_at(span.line)
        if index is None:
            return self.root.display, FILE_START
        built, origin = self.document.objects[index], self.origins[index]
        path, on_key = node_at(built.body, span.line, span.col)
        if not path:
            path, on_key = ("kind",), True  # the object itself: where it starts
        if origin.generated_by is not None:
            source_obj = None
        else:
            source_obj = self._source_object(self._document(origin.file), built) if origin.file else None
        built_value = _value_at(built.body, path)
        source_match = resolve(source_obj.body, built.body, path, on_key) if source_obj is not None else None
        source_value = source_match.value if source_match is not None and source_match.full else None
        if source_match is not None and source_match.full and (
                isinstance(built_value, (dict, list)) or _same(source_value, built_value)):
            return self.display(origin.file), source_match.span  # type: ignore[arg-type]
        patched = self._in_patches(built, source_obj, path, on_key)
        if patched is not None:
            patch, match = patched
            return self.display(patch.file or patch.kustomization), match.span
        entry = self._field_entry(path, built_value, source_value)
        if entry is not None:
            return self.display(entry[0]), entry[1]
        if origin.generated_by is not None:
            where, at = self._generator(origin, built)
            return self.display(where), at
        if source_match is not None:
            return self.display(origin.file), source_match.span  # type: ignore[arg-type]
        if source_obj is not None:
            return self.display(origin.file), source_obj.span  # type: ignore[arg-type]
        return self.root.display, FILE_START


    # -----------------------------------------------------------------------------------------
    # Fixes of built objects: translated to the resource file, or none

    def source_plan(self, plan: Any) -> tuple[Any, str, str] | None:
        """A fix plan over this build's nodes as the same plan over the resource file's nodes:
        (plan, display path, the text its spans count in), or None (no fix) unless every intent
        edits a mapping that exists in a resource file (not a generated object) at the same node
        path, with the same keys along the intent's path, which no patch of the root's
        kustomizations sets or deletes anything under, in a root with no ``replacements``,
        ``vars``, ``transformers`` or ``generators`` (which rewrite objects as no patch shows)."""
        from mlops_lint.fix import Plan

        if plan.path is not None or any(k.tree is None or any(name in k.tree for name in _OPAQUE)
                                        for k in self.root.chain):
            return None
        where: str | None = None
        intents = []
        for intent in plan.intents:
            steps = intent.steps  # the key path below intent.node it edits (linter.fix)
            if steps is None:
                return None  # a raw span of the built text
            found = self._built_node(intent.node)
            if found is None:
                return None
            index, path = found
            built, origin = self.document.objects[index], self.origins[index]
            if origin.generated_by is not None or origin.file is None or where not in (None, origin.file):
                return None
            where = origin.file
            source = self._source_object(self._document(where), built)
            node = _walk(source.body, built.body, path) if source is not None else None
            if not isinstance(node, YMap) or not _agrees(node, intent.node, steps, intent.kind):
                return None
            if self._patched(built, source, path):
                return None
            intents.append(replace(intent, node=node))
        document = self._document(where) if where is not None else None
        if document is None or document.text is None:
            return None
        shown = self.display(where)  # type: ignore[arg-type]
        place = "the base resource" if len(self.root.chain) > 1 else "the resource"
        return Plan(f"{plan.title} (in {place} {shown})", tuple(intents), plan.safe), shown, document.text

    def _built_node(self, node: Any) -> tuple[int, tuple] | None:
        """(index of the built object holding ``node``, its path from the object's body): the object
        at the node's line is walked first (the others only should it not hold the node)."""
        span = getattr(node, "span", None)
        first = self._object_at(span.line) if span is not None else None
        objects = list(enumerate(self.document.objects))
        if first is not None:
            objects.insert(0, objects.pop(first))
        for index, obj in objects:
            stack: list[tuple[Any, tuple]] = [(obj.body, ())]
            while stack:
                current, path = stack.pop()
                if current is node:
                    return index, path
                if isinstance(current, YMap):
                    stack.extend((value, (*path, key)) for key, value in current.items()
                                 if isinstance(value, (YMap, YSeq)))
                elif isinstance(current, YSeq):
                    stack.extend((value, (*path, position)) for position, value in enumerate(current)
                                 if isinstance(value, (YMap, YSeq)))
        return None

    def _patched(self, built: K8sObject, source: K8sObject | None, path: tuple) -> bool:
        """Whether a patch of the root (strategic merge or JSON 6902) that applies to ``built``
        sets or deletes anything at, under or above ``path`` (a patch not read: it might)."""
        for kustomization in self.root.chain:
            for patch in kustomization.patches:
                trees = self._patch_trees(patch)
                if not trees:
                    return True
                for tree in trees:
                    if isinstance(tree, YSeq):
                        if self._targets(patch, None, built, source) and _json_touches(tree, path):
                            return True
                    elif isinstance(tree, YMap):
                        if self._targets(patch, tree, built, source) and _smp_touches(tree, built.body, path):
                            return True
                    else:
                        return True
        return False


def remap(pairs: Iterable[tuple[Any, Any]], mappers: dict[str, Mapper]) -> list[tuple[Any, Any]]:
    """Results (paired with their object's key) on built output moved to where the user edits
    them; others as they are. The same finding at the same place from several roots (two
    overlays of one base) is one finding naming every root, the first root's object kept."""
    out: list[tuple[Any, Any]] = []
    merged: dict[tuple, tuple[int, list[Root]]] = {}
    for result, key in pairs:
        mapper = mappers.get(result.path)
        if mapper is None:
            out.append((result, key))
            continue
        path, span = mapper.safe_locate(result.span)
        same = (result.rule, path, span, result.message)
        if same in merged:
            merged[same][1].append(mapper.root)
            first, first_key = out[merged[same][0]]
            if first.autofix != result.autofix:  # a root that gives another fix (or none): no fix
                out[merged[same][0]] = (replace(first, autofix=None), first_key)
            continue
        merged[same] = (len(out), [mapper.root])
        out.append((replace(result, path=path, span=span, node=("kustomize", *result.node),
                            built_from=mapper.root.display), key))
    for (_, _, _, message), (position, roots) in merged.items():
        result, key = out[position]
        if len(roots) == 1:
            suffix = roots[0].built_as
        else:
            suffix = "after overlays " + ", ".join(sorted({root.folder_display for root in roots}))
        out[position] = (replace(result, message=f"{message} ({suffix})"), key)
    return out


def remap_directive(directive: Any, mappers: dict[str, Mapper]) -> Any:
    mapper = mappers.get(directive.path)
    if mapper is None:
        return directive
    path, span = mapper.safe_locate(directive.span)
    return replace(directive, path=path, span=span)


def raw_part(document: Document) -> Document:
    """What the raw reading of a file a root pulls in keeps: its parse errors and comments (for
    suppressions) of a YAML file, every part of a Dockerfile or script."""
    if document.kind != K8S:
        return document
    return replace(document, objects=[])
