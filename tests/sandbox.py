"""Run the real CLI in a subprocess under watch: what it tried to do, and how much memory it used.

As a script (``python tests/sandbox.py ARGS...``) it runs ``mlops-lint ARGS`` after installing,
when ``MLOPS_SANDBOX_GUARD`` is set, an audit hook (PEP 578) and replacements that refuse and
record:

- any network use: creating an INET/INET6 socket, ``connect``, ``bind``, name look-ups
  (``socket.socket`` and ``socket.create_connection`` are replaced too);
- running any program: ``subprocess.Popen``, ``os.system``, ``os.exec*``, ``os.posix_spawn*``,
  ``os.spawn*``, and the C ``fork_exec`` under them (which has no audit event of its own); but
  for the programs a run may start, a kustomize build (``kubectl kustomize`` or ``kustomize
  build`` of a folder outside the tree, run from outside it: see ``linter.engine.kustomize``)
  and the Helm render worker (this interpreter with ``-I`` running ``linter.sources.helm_sdk``,
  from outside the tree), recorded as ``build`` and ``render`` events and allowed;
- any write inside ``MLOPS_SANDBOX_TREE`` (files opened for writing, created, removed, renamed,
  linked, chmod-ed or touched).

``os.fork`` is recorded but allowed (``--jobs N`` forks workers; a fork runs no other program).
Forked workers inherit the hook. Every process appends its events, one JSON object a line, to
``MLOPS_SANDBOX_LOG``, and the main process adds its peak resident memory (``VmHWM``, which,
unlike ``ru_maxrss``, does not count the parent's pages before ``exec``).

``run(...)`` is the test-side helper: it starts the script with an address-space limit and a
timeout and returns the exit status, output, events and peak memory.
"""

from __future__ import annotations

import json
import os
import sys

BLOCKED_EVENTS = {
    "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
    "socket.sendto", "socket.sendmsg", "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
    "os.startfile", "pty.spawn", "webbrowser.open",
}
WRITE_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.chmod", "os.chown",
                "os.utime", "os.truncate", "os.chflags", "os.lchflags", "os.mkfifo", "os.mknod", "shutil.rmtree",
                "shutil.move", "shutil.copyfile"}


class Refused(PermissionError):
    pass


def _install(log_path: str, tree: str | None) -> None:
    import _posixsubprocess
    import socket
    import threading

    tree_real = os.path.realpath(tree) + os.sep if tree else None
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def record(kind: str, detail: object) -> None:
        line = json.dumps({"pid": os.getpid(), "event": kind, "detail": repr(detail)[:300]}) + "\n"
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)

    def inside(path: object) -> bool:
        if tree_real is None or not isinstance(path, (str, bytes, os.PathLike)):
            return False
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return (real + os.sep).startswith(tree_real)

    state = {"build": 0}  # builds announced (subprocess.Popen) whose fork_exec has not come yet
    local = threading.local()  # the hook's own re-entry guard, per thread: builds run in threads
    lock = threading.Lock()

    def a_build(args: tuple) -> str | None:
        """"build": a kustomize build of a folder outside the tree, run from outside it;
        "isolation": the check that what it runs under works here; else None."""
        if len(args) < 3 or not isinstance(args[1], (list, tuple)) or len(args[1]) < 3:
            return None
        argv, cwd = [os.fsdecode(a) for a in args[1]], args[2]
        # the fixed programs a build runs under (linter.engine.kustomize.isolation): no network,
        # killed with the linter; run alone once, on `true`, to see whether they work here
        while argv and os.path.basename(argv[0]) in ("unshare", "setpriv") and "--" in argv:
            argv = argv[argv.index("--") + 1:]
        if len(argv) == 1 and os.path.basename(argv[0]) == "true":
            return "isolation"
        if len(argv) < 3:
            return None
        # the Helm render worker (linter.sources.helm_sdk): this interpreter, isolated (-I), running
        # our own module from outside the tree; the chart reaches it as an archive on its stdin
        if (argv[0] == sys.executable and argv[1:3] == ["-I", "-c"] and len(argv) == 4
                and "from mlops_lint.sources.helm_sdk import worker; worker()" in argv[3]
                and cwd is not None and not inside(cwd)):
            return "render"
        shape = {"kubectl": "kustomize", "kustomize": "build"}.get(os.path.basename(argv[0]))
        built = (shape == argv[1] and all(a.startswith("--load-restrictor") or a.startswith("LoadRestrictions")
                                          for a in argv[2:-1])
                 and cwd is not None and not inside(cwd) and not inside(argv[-1]))
        return "build" if built else None

    def hook(event: str, args: tuple) -> None:
        if getattr(local, "busy", False):
            return
        local.busy = True
        try:
            kind = a_build(args) if event == "subprocess.Popen" else None
            if kind is not None:
                record(kind, args)
                with lock:
                    state["build"] += 1  # the fork_exec that follows is this build's
                return
            if event in BLOCKED_EVENTS:
                record(event, args)
                raise Refused(f"sandbox: {event} refused")
            if event == "socket.__new__" and len(args) > 1 and args[1] in (socket.AF_INET, socket.AF_INET6):
                record(event, args)
                raise Refused("sandbox: network socket refused")
            if event == "os.fork":
                record(event, args)
            if event == "open" and len(args) >= 3:
                path, mode, flags = args[0], args[1], args[2]
                writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and flags & write_flags)
                if writing and inside(path):
                    record("write", args)
                    raise Refused(f"sandbox: writing {path!r} refused")
            if event in WRITE_EVENTS and args and any(inside(a) for a in args[:2]):
                record(event, args)
                raise Refused(f"sandbox: {event} refused")
        finally:
            local.busy = False

    sys.addaudithook(hook)

    def refuse(name: str):
        def refused(*args, **kwargs):
            record(name, args)
            raise Refused(f"sandbox: {name} refused")
        return refused

    socket.socket = refuse("socket.socket")  # type: ignore[misc, assignment]
    socket.create_connection = refuse("socket.create_connection")  # type: ignore[assignment]
    fork_exec, refused_exec = _posixsubprocess.fork_exec, refuse("_posixsubprocess.fork_exec")

    def guarded_fork_exec(*args, **kwargs):
        with lock:
            allowed = state["build"] > 0
            if allowed:
                state["build"] -= 1
        if allowed:
            return fork_exec(*args, **kwargs)
        return refused_exec(*args, **kwargs)

    _posixsubprocess.fork_exec = guarded_fork_exec  # type: ignore[attr-defined]
    for name in ("posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "execvpe", "spawnv", "spawnve",
                 "system", "popen"):
        if hasattr(os, name):
            setattr(os, name, refuse(f"os.{name}"))


def _peak_kib() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> None:
    log_path = os.environ["MLOPS_SANDBOX_LOG"]
    main_pid = os.getpid()
    if os.environ.get("MLOPS_SANDBOX_GUARD"):
        _install(log_path, os.environ.get("MLOPS_SANDBOX_TREE"))

    import atexit

    def report_peak() -> None:
        if os.getpid() == main_pid:
            fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(fd, (json.dumps({"pid": main_pid, "event": "peak", "kib": _peak_kib()}) + "\n").encode())
            os.close(fd)

    atexit.register(report_peak)
    if os.environ.get("MLOPS_SANDBOX_SELFTEST"):
        _selftest(os.environ.get("MLOPS_SANDBOX_TREE"))
    from mlops_lint.cli import main as cli

    sys.argv[0] = "mlops-lint"
    try:
        cli()
    finally:
        report_peak()
        atexit.unregister(report_peak)


def _selftest(tree: str | None) -> None:
    """Try each forbidden thing once (the guard must refuse and record every one)."""
    import socket
    import subprocess

    attempts = [
        lambda: socket.create_connection(("127.0.0.1", 9)),
        lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM),
        lambda: socket.getaddrinfo("localhost", 80),
        lambda: subprocess.run(["true"]),
        lambda: os.system("true"),
        lambda: os.execv("/bin/true", ["true"]),
        lambda: os.posix_spawn("/bin/true", ["true"], {}),
    ]
    if tree:
        attempts += [lambda: open(os.path.join(tree, "sandbox-selftest"), "w"),
                     lambda: os.mkdir(os.path.join(tree, "sandbox-selftest-dir")),
                     lambda: os.utime(tree)]
    for attempt in attempts:
        try:
            attempt()
        except Refused:
            continue
        except Exception:  # noqa: BLE001 - refused by something else: still a hole in the guard
            pass
        print("sandbox selftest: not refused", file=sys.stderr)


# -- the test side ---------------------------------------------------------------------------


class Outcome:
    def __init__(self, returncode: int, stdout: bytes, stderr: bytes, events: list[dict], seconds: float):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds
        self.peak_mib = max((e["kib"] for e in events if e["event"] == "peak"), default=0) / 1024
        self.events = [e for e in events if e["event"] != "peak"]

    @property
    def refused(self) -> list[dict]:
        """Everything the guard refused (forks and kustomize builds are allowed and not listed)."""
        return [e for e in self.events if e["event"] not in ("os.fork", "build", "render", "isolation")]

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def run(args: list[str], cwd: os.PathLike | str, *, guard: bool = False, tree: os.PathLike | str | None = None,
        stdin: bytes | None = None, address_space_mib: int | None = 2048, timeout: float = 120,
        env: dict[str, str] | None = None, drop_dac: bool = False) -> Outcome:
    """Run ``mlops-lint ARGS`` in ``cwd`` under the sandbox (see the module docstring).

    ``address_space_mib`` caps the child's address space (``RLIMIT_AS``): a runaway allocation
    fails there instead of taking the machine down. ``drop_dac`` removes CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH from the child's bounding set before ``exec``, so even root is refused
    files that its permission bits refuse (tests run as root here).
    """
    import subprocess
    import tempfile
    import time

    with tempfile.TemporaryDirectory(prefix="mlops-sandbox-") as folder:
        log = os.path.join(folder, "events.jsonl")
        environment = {**os.environ, **(env or {}), "MLOPS_SANDBOX_LOG": log}
        environment.pop("MLOPS_SANDBOX_GUARD", None)
        if guard:
            environment["MLOPS_SANDBOX_GUARD"] = "1"
        if tree is not None:
            environment["MLOPS_SANDBOX_TREE"] = os.fspath(tree)
        environment.setdefault("PYTHONDONTWRITEBYTECODE", "1")

        def limits() -> None:
            if address_space_mib:
                import resource

                size = address_space_mib * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (size, size))
            if drop_dac:
                _drop_dac_capabilities()

        start = time.perf_counter()
        completed = subprocess.run([sys.executable, os.path.abspath(__file__), *args], cwd=cwd, env=environment,
                                   input=stdin if stdin is not None else b"", capture_output=True, timeout=timeout,
                                   preexec_fn=limits)
        seconds = time.perf_counter() - start
        events = []
        if os.path.exists(log):
            with open(log, encoding="utf-8") as handle:
                events = [json.loads(line) for line in handle if line.strip()]
        return Outcome(completed.returncode, completed.stdout, completed.stderr, events, seconds)


def _drop_dac_capabilities() -> None:
    """Drop CAP_DAC_OVERRIDE (2) and CAP_DAC_READ_SEARCH (1) from the bounding set (PR_CAPBSET_DROP
    = 24): the program exec-ed next, even as root, gets neither."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


if __name__ == "__main__":
    main()
