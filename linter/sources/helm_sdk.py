"""Helm charts rendered in-process by Helm's own Go SDK (``helm-python-sdk``, the ``helm`` extra),
in a worker process.

The linted tree is untrusted, so a chart is never handed to Helm by its folder: Helm's folder
loader follows links (a ``linked.txt`` pointing at ``/etc/passwd`` would be read into ``.Files``).
The parent reads the chart's files itself (regular files only, no links, each within the file
size limit, the whole within :data:`MAX_CHART_BYTES`), packs them into an in-memory ``.tgz`` and
the worker loads that archive (``Chart.load_archive``): ``.Files`` can then only see the chart's
own files, and ``.Files.Get "../../etc/passwd"`` is empty. The same bytes key the render cache.

The worker (``python -I``, so nothing on the tree's paths is imported; its working folder is not
the chart) runs with a memory limit (``RLIMIT_AS``), a CPU limit, no file writes
(``RLIMIT_FSIZE`` 0), a wall-clock timeout (killed past it), a closed stdin, proxies that lead
nowhere, and, where the kernel allows an unprivileged one, a network namespace of its own.
The SDK's offline render has no cluster: ``lookup`` returns an empty map. Template recursion is
Helm's own bound (``include`` nested over 1,000 deep is a render error). A render whose output is
larger than the file size limit is refused in the worker: one finding, nothing linted.

What the SDK cannot do, said here so nobody relies on it: it has no option to turn ``.Files``
off or to bound a render's memory or time itself; those bounds are the worker's.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from functools import lru_cache
from typing import Any

MAX_CHART_BYTES = 64 << 20  # a chart's files together (the archive handed to Helm)
MEMORY_LIMIT = 2 << 30  # the worker's address space
_MODULE = "mlops_lint.sources.helm_sdk"


def available() -> bool:
    """Whether the SDK is installed (not imported here: the Go runtime loads only in the worker)."""
    import importlib.util

    try:
        return importlib.util.find_spec("helm_python") is not None
    except (ImportError, ValueError):
        return False


class ChartFiles:
    """A chart's files as read for its render: ``(relative path, bytes)`` in sorted order, and
    what was left out (links, special files, unreadable or oversized files).

    ``known``: files the run has read already (absolute path -> (bytes, content hash): the
    survey's, :mod:`linter.engine.survey`, read by :func:`linter.sources.files.read_source`, the
    fix overlay applied); such a file that is a regular file, not a link, is taken from there
    instead of being read and hashed again (a warm run keys every render by every chart file)."""

    def __init__(self, folder: str, known: dict[str, tuple[bytes, str]] | None = None):
        from mlops_lint.sources.text import MAX_FILE_BYTES

        self.folder = folder
        self.files: list[tuple[str, bytes]] = []
        self.left_out: list[tuple[str, str]] = []
        self.error: str | None = None
        self._key: list[str] | None = None
        self._digests: dict[str, str] = {}  # relative path -> content hash, for the files taken from known
        self._total = 0
        self._walk(folder, _ignore_rules(folder), known or {}, MAX_FILE_BYTES)

    def _walk(self, folder: str, ignored: list[tuple[bool, bool, str]], known: dict[str, tuple[bytes, str]],
              limit: int) -> None:
        """Each folder's files (sorted), then its folders' (sorted), as ``os.walk`` top-down
        without following links gives them (a stack, not recursion: a deep tree is no error)."""
        from operator import attrgetter

        from mlops_lint.sources.files import OVERLAY

        by_name = attrgetter("name")
        # no .helmignore (or an empty one): Helm's default rule alone, tested here without a call
        default = ignored == [_DEFAULT_RULE]
        stack = [(folder, "")]
        while stack:
            inner, within = stack.pop()
            try:
                with os.scandir(inner) as listing:
                    entries = list(listing)
            except OSError:
                continue  # a folder that cannot be listed: left out, as os.walk leaves it
            dirs, names = [], []
            for entry in entries:
                try:
                    is_folder = entry.is_dir()  # a link to a folder is one (os.walk's), and is then left out
                except OSError:
                    is_folder = False
                (dirs if is_folder else names).append(entry)
            dirs.sort(key=by_name)
            names.sort(key=by_name)
            walked = []
            for entry in dirs:
                relative = within + entry.name
                if (_default_ignored(relative) if default else _ignored(relative, True, ignored)):
                    continue
                if entry.is_symlink():
                    self.left_out.append((relative, "a link"))
                    continue
                walked.append((entry.path, relative + "/"))
            for entry in names:
                relative = within + entry.name
                if (_default_ignored(relative) if default else _ignored(relative, False, ignored)):
                    continue
                found = known.get(entry.path)
                if found is not None and not entry.is_symlink() and entry.is_file(follow_symlinks=False):
                    data = found[0]  # as read_source read it (a regular file), the fix overlay applied
                    self._digests[relative] = found[1]
                else:
                    data, why = read_no_link(entry.path, limit)
                    if data is None:
                        self.left_out.append((relative, why))
                        continue
                    if OVERLAY:  # a --fix pass renders the chart as the fixes so far left it (values.yaml)
                        data = OVERLAY.get(os.path.realpath(entry.path), data)
                self._total += len(data)
                if self._total > MAX_CHART_BYTES:
                    self.error = f"the chart's files are over {MAX_CHART_BYTES >> 20} MB: not rendered"
                    return
                self.files.append((relative, data))
            stack.extend(reversed(walked))

    def key(self) -> list[str]:
        """Each file's path and content hash (worked out once: every render of the chart is keyed by them)."""
        if self._key is None:
            from mlops_lint.digest import digest

            digests = self._digests
            self._key = [f"{relative}:{digests.get(relative) or digest(data)}" for relative, data in self.files]
        return self._key

    def archive(self) -> bytes:
        """The chart as a ``.tgz`` under one top folder (what Helm's archive loader expects):
        plain ustar headers written here (a quarter of the time ``tarfile`` takes, which a cold
        run of a thousand charts spent 0.2 s on), ``tarfile``'s own where a name is not short
        ASCII."""
        import zlib

        top = os.path.basename(self.folder.rstrip(os.sep)) or "chart"
        parts = []
        for relative, data in self.files:
            name = f"{top}/{relative}"
            if len(name) > 99 or not name.isascii():
                return self._tarfile(top)
            parts += (_ustar(name.encode("ascii"), len(data)), data, b"\0" * (-len(data) % 512))
        parts.append(b"\0" * 1024)  # the archive's end: two empty blocks
        packer = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip's container, as tarfile's w:gz level 1
        return packer.compress(b"".join(parts)) + packer.flush()

    def _tarfile(self, top: str) -> bytes:
        import tarfile  # only for a name the ustar header cannot hold (a warm run imports none of it: 3 ms)

        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
            for relative, data in self.files:
                info = tarfile.TarInfo(f"{top}/{relative}")
                info.size = len(data)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
        return buffer.getvalue()


def _ustar(name: bytes, size: int) -> bytes:
    """A ustar header of a regular file (mode 0644, owner 0, time 0), as ``tarfile`` writes one."""
    header = bytearray(512)
    header[0:len(name)] = name
    header[100:148] = b"0000644\x000000000\x000000000\x00%011o\x0000000000000\x00" % size
    header[148:156] = b"        "  # the checksum counts its own field as blanks
    header[156] = ord("0")
    header[257:265] = b"ustar\x0000"
    header[148:156] = b"%06o\x00 " % sum(header)
    return bytes(header)


def read_no_link(path: str, limit: int) -> tuple[bytes | None, str]:
    """A regular file's bytes, opened without following a link (a link is left out, whatever it
    points at), non-blocking (a FIFO is not waited on) and at most ``limit`` bytes."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return None, "a link" if os.path.islink(path) else f"not readable: {exc.strerror or exc}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file"
        if info.st_size > limit:
            return None, f"over {limit >> 20} MB"
        first = os.read(fd, info.st_size + 1)  # a regular file reads whole at once: short of the ask is its end
        if len(first) <= info.st_size:
            return first, ""
        chunks, size = [first], len(first)
        if size > limit:
            return None, f"over {limit >> 20} MB"
        while True:  # it grew since fstat
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                return None, f"over {limit >> 20} MB"
            chunks.append(chunk)
        return b"".join(chunks), ""
    except OSError as exc:
        return None, f"not readable: {exc.strerror or exc}"
    finally:
        os.close(fd)


def _ignore_rules(folder: str) -> list[tuple[bool, bool, str]]:
    """The chart's ``.helmignore`` as Helm reads it: ``(negated, folders only, pattern)`` per line,
    after Helm's default (hidden files under ``templates/``)."""
    rules = [_DEFAULT_RULE]
    data, _ = read_no_link(os.path.join(folder, ".helmignore"), 1 << 20)
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        line = line[1:] if negated else line
        rules.append((negated, line.endswith("/"), line.rstrip("/").lstrip("/")))
    return rules


_DEFAULT_RULE = (False, False, "templates/.?*")  # Helm's own: hidden files and folders under templates/


def _default_ignored(relative: str) -> bool:
    """:func:`_ignored` when the rules are Helm's default alone: ``templates/.?*`` (``*``
    crosses ``/`` in fnmatch) matches a path that starts ``templates/.`` and has one more character."""
    return relative.startswith("templates/.") and len(relative) > 11


def _ignored(relative: str, folder: bool, rules: list[tuple[bool, bool, str]]) -> bool:
    """Whether Helm's loader leaves a chart path out: a pattern with a ``/`` matches the whole
    path, one without matches the last name; the last matching rule decides."""
    if relative in ("Chart.yaml", "values.yaml", ".helmignore") and not folder:
        return False
    out = False
    for negated, folders_only, pattern in rules:
        if folders_only and not folder:
            continue
        whole = "/" in pattern
        if _matcher(pattern)(relative if whole else relative[relative.rfind("/") + 1:]) is not None:
            out = not negated
    return out


@lru_cache(maxsize=256)
def _matcher(pattern: str) -> Any:
    """``fnmatch.fnmatchcase``'s test of one pattern, compiled once (a chart has a few thousand
    paths; fnmatch's own cache is looked up, and its pattern normalized, at each call)."""
    import re
    from fnmatch import translate

    return re.compile(translate(pattern)).match


def _limits(memory: int, cpu: float) -> None:  # pragma: no cover - runs in the worker, before Helm loads
    import resource

    for limit, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, max(1, int(cpu) + 1)),
                         (resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass
    try:  # a network namespace of its own, where unprivileged user namespaces are allowed
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.unshare(0x10000000 | 0x40000000)  # CLONE_NEWUSER | CLONE_NEWNET
    except (OSError, AttributeError):
        pass


@lru_cache(maxsize=1)
def version() -> str:
    """The installed SDK's version (a render's cache key holds it), without importing it: the
    ``Version:`` of its ``.dist-info`` beside the package, else as ``importlib.metadata`` finds
    it (whose import, about 10 ms, a warm run of charts otherwise spent on this one string)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("helm_python")
        places = list(spec.submodule_search_locations or []) if spec is not None else []
        if places:
            folder = os.path.dirname(places[0])
            for entry in sorted(os.listdir(folder)):
                if entry.startswith("helm_python_sdk-") and entry.endswith(".dist-info"):
                    with open(os.path.join(folder, entry, "METADATA"), "rb") as handle:
                        for line in handle.read(1 << 16).decode("utf-8", "replace").splitlines():
                            if line.startswith("Version:"):
                                return line.split(":", 1)[1].strip()
                            if not line.strip():
                                break  # the headers end
    except (ImportError, ValueError, OSError):
        pass
    from importlib import metadata

    try:
        return metadata.version("helm-python-sdk")
    except metadata.PackageNotFoundError:
        return "none"


def render(files: ChartFiles, renders: list[dict[str, Any]], timeout: float, limit: int,
           memory: int = MEMORY_LIMIT) -> list[dict[str, Any]]:
    """The renders of one chart (see :func:`render_many`)."""
    return render_many([(files, renders)], timeout, limit, memory)[0]


def render_many(charts: list[tuple[ChartFiles, list[dict[str, Any]]]], timeout: float, limit: int,
                memory: int = MEMORY_LIMIT) -> list[list[dict[str, Any]]]:
    """Each chart's renders (values texts, ``set`` expressions, release name, namespace, kube
    version), per render ``{"manifests": {template: text}}`` or ``{"error": message}``. One
    worker renders them all (its start, the Go runtime's, is most of a small chart's cost) and
    answers chart by chart; a chart that takes more than ``timeout`` seconds, or that makes the
    worker fail (memory), is that chart's error, and a new worker goes on with the rest."""
    answers: list[list[dict[str, Any]]] = []
    remaining = list(charts)
    while remaining:
        got, failure = _worker_run(remaining, timeout, limit, memory)
        answers.extend(got)
        if len(got) < len(remaining):
            answers.append([{"error": failure}] * len(remaining[len(got)][1]))
            remaining = remaining[len(got) + 1:]
        else:
            remaining = []
    return answers


def _worker_run(charts: list[tuple[ChartFiles, list[dict[str, Any]]]], timeout: float, limit: int,
                memory: int) -> tuple[list[list[dict[str, Any]]], str]:
    """One worker over ``charts``: the answers it gave, and why it stopped before the next."""
    import selectors
    import subprocess
    import tempfile
    import time

    from mlops_lint.programs import build_environment

    request = json.dumps({"charts": [{"archive": base64.b64encode(files.archive()).decode("ascii"), "renders": renders}
                                     for files, renders in charts],
                          "limit": limit, "memory": memory, "cpu": timeout * len(charts) + 5}).encode()
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = f"import sys; sys.path.insert(0, {package!r}); from {_MODULE} import worker; worker()"
    env = build_environment()
    for name in list(env):
        if name.startswith(("HELM_", "KUBE")):
            del env[name]
    got: list[list[dict[str, Any]]] = []
    if os.name != "posix":  # no select() on pipes: one wait for the whole batch
        try:
            done = subprocess.run([sys.executable, "-I", "-c", code], input=request, capture_output=True,
                                  timeout=timeout * len(charts) + 5, cwd=tempfile.gettempdir(), env=env, check=False)
        except subprocess.TimeoutExpired:
            return got, f"the render did not finish in {timeout:g} s"
        except OSError as exc:
            return got, f"could not start the render worker: {exc.strerror or exc}"
        for line in done.stdout.splitlines()[:len(charts)]:
            try:
                got.append(json.loads(line))
            except ValueError:
                break
        text = " ".join(done.stderr[:4096].decode("utf-8", "replace").split())
        return got, f"the render worker failed: {text[:300] or 'no message'}"
    try:
        process = subprocess.Popen([sys.executable, "-I", "-c", code], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tempfile.gettempdir(), env=env)
    except OSError as exc:
        return got, f"could not start the render worker: {exc.strerror or exc}"
    # its stderr drained beside (a pipe: the worker may write no file), the first 4 KB kept
    kept = bytearray()

    def drain() -> None:
        assert process.stderr is not None
        try:
            for chunk in iter(lambda: process.stderr.read(65536), b""):
                if len(kept) < 4096:
                    kept.extend(chunk[:4096 - len(kept)])
        except (OSError, ValueError):
            return

    import threading

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(request)  # the worker reads all of it before it writes
            process.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        buffer = b""
        deadline = time.monotonic() + timeout + 5  # the first chart also waits for the worker's start
        while len(got) < len(charts):
            wait = deadline - time.monotonic()
            if wait <= 0 or not selector.select(wait):
                return got, f"the render did not finish in {timeout:g} s"
            data = os.read(process.stdout.fileno(), 1 << 20)
            if not data:
                break
            buffer += data
            if len(buffer) > 3 * limit + (1 << 20):
                return got, f"the rendered output is over {limit >> 20} MB: not linted"
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    got.append(json.loads(line))
                except ValueError:
                    return got, "the render worker gave no answer"
                deadline = time.monotonic() + timeout
        if len(got) == len(charts):
            return got, ""
        process.wait(timeout=5)
        reader.join(timeout=5)
        text = " ".join(bytes(kept).decode("utf-8", "replace").split())  # the cause leads a Go fatal error
        if any(sign in text for sign in ("out of memory", "MemoryError", "cannot allocate", "pthread_create failed")):
            return got, f"the render stopped: over {memory >> 20} MB of memory"
        if process.returncode is not None and process.returncode < 0:
            return got, (f"the render stopped (signal {-process.returncode}: its CPU time, or over {memory >> 20} MB "
                         f"of memory){': ' + text[:200] if text else ''}")
        return got, f"the render worker failed: {text[:300] or 'no message'}"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=5)  # the worker is gone: its stderr ends
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


def _merge(base: dict, over: dict) -> dict:
    """Helm's merge of values files: maps merged key by key, anything else replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def worker() -> None:  # pragma: no cover - runs in the worker process (tested through render_many)
    """Read one request on stdin; answer each chart on a line of stdout as it is rendered."""
    request = json.loads(sys.stdin.buffer.read())
    if os.name == "posix":
        _limits(int(request["memory"]), float(request["cpu"]))
    import helm_python as helm

    try:
        helm.disable_logging()
    except Exception:  # noqa: BLE001 - logging is cosmetic
        pass
    limit = int(request["limit"])
    for item in request["charts"]:
        sys.stdout.write(json.dumps(_chart(helm, item, limit)) + "\n")
        sys.stdout.flush()


def _chart(helm: Any, item: dict, limit: int) -> list[dict[str, Any]]:  # pragma: no cover - in the worker
    from helm_python import _native

    try:
        chart = helm.Chart.load_archive(base64.b64decode(item["archive"]))
    except helm.HelmError as exc:
        return [{"error": _short(exc)}] * len(item["renders"])
    answers: list[dict[str, Any]] = []
    try:
        for spec in item["renders"]:
            try:
                values: dict = {}
                for name, text in spec.get("values", []):
                    try:
                        parsed = helm.values_from_yaml(text)
                    except helm.HelmError as exc:
                        raise helm.HelmValuesError(f"{name}: {_short(exc)}") from None
                    values = _merge(values, parsed or {})
                for expression in spec.get("set", []):
                    values = _merge(values, helm.parse_set_string(expression))
                options = {"name": spec["name"], "namespace": spec["namespace"], "is_install": True}
                if spec.get("kube_version"):
                    options["kube_version"] = spec["kube_version"]
                if spec.get("api_versions"):
                    options["api_versions"] = spec["api_versions"]
                text = _native.call_string("helm_render", chart._raw(), json.dumps(values), json.dumps(options))
                if len(text) > limit * 2:
                    raise helm.HelmRenderError(f"the rendered output is over {limit >> 20} MB: not linted")
                manifests = json.loads(text)
                if sum(len(t) for t in manifests.values()) > limit:
                    raise helm.HelmRenderError(f"the rendered output is over {limit >> 20} MB: not linted")
                answers.append({"manifests": manifests})
            except helm.HelmError as exc:
                answers.append({"error": _short(exc)})
    finally:
        chart.close()
    return answers


def _short(exc: BaseException) -> str:
    """Helm's message in one line, its chain of nested calls (a recursive ``include`` repeats
    one 1,000 times) cut to the first and the last."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    chain = text.split(": error calling ")
    if len(chain) > 3:
        text = f"{chain[0]}: error calling {chain[1]}: … ({len(chain) - 2} nested calls): error calling {chain[-1]}"
    return text if len(text) <= 600 else text[:599] + "…"
