"""``--jobs N``: the parent and N-1 forked workers share the files of the second pass out.

The workers inherit the index and the parsed shared files (copy-on-write, nothing is pickled on
the way in); every process claims chunks of files from one counter until none is left, and each
worker sends a chunk's outcomes back as soon as it is linted. The parent's own share is never
pickled. Shipping parsed trees between processes instead was measured to cost more than parsing
them (25 MB of the corpus's CRDs: 9 s to pickle, 7 s to unpickle, against 2 s to parse).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from mlops_lint.engine.memory import freeze
from mlops_lint.engine.passes import Kept, Linted, Work, lint_files
from mlops_lint.engine.runner import Job, Runner

PARALLEL_MIN_FILES = 48  # below this, forking workers costs more than it saves


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


FDS_PER_WORKER = 4  # the parent's end of a worker's result pipe and its sentinel, with room to spare
FDS_RESERVED = 64  # the run's own files: the cache, the report, the files being read


def cap_jobs(requested: int | None) -> tuple[int, str | None]:
    """The workers a run uses for ``--jobs requested`` (None: the CPUs), and a note when fewer:
    never more than the CPUs this process may use (more only share them, at a cost), nor than
    the open-file limit leaves descriptors for (340 workers under `ulimit -n 1024` crashed with
    EMFILE)."""
    cpus = default_jobs()
    wanted = cpus if requested is None else requested
    limit = None
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft != resource.RLIM_INFINITY:
            limit = soft
    except (ImportError, OSError, ValueError):
        pass
    by_files = max(1, (limit - FDS_RESERVED) // FDS_PER_WORKER) if limit is not None else wanted
    jobs = max(1, min(wanted, cpus, by_files))
    if requested is None or jobs >= requested:
        return jobs, None
    reason = (f"the {cpus} CPU{'s' if cpus != 1 else ''} this process may use" if jobs == cpus and cpus <= by_files
              else f"what the open-file limit ({limit}) leaves room for")
    return jobs, f"--jobs {requested} capped to {jobs}: {reason}"


def _warm(runner: Runner) -> None:
    """Build before forking what every worker would otherwise build for itself: the cluster model."""
    from mlops_lint.model.cluster import cluster_of

    try:
        cluster_of(runner.index, runner.config)
    except Exception:  # noqa: BLE001 - a worker's rule meets the same error and reports it as LNT002
        pass


class Counter:
    """The next chunk's number, shared by the parent and its workers. Its lock is a POSIX record
    lock (``lockf``) on an unlinked temporary file: the kernel releases it when the process that
    holds it dies, so a worker killed while claiming a chunk cannot deadlock the others (a
    ``multiprocessing`` lock would stay taken forever)."""

    def __init__(self, context: Any):
        import tempfile

        self.value = context.Value("q", 0, lock=False)  # shared memory, inherited by fork
        self.file = tempfile.TemporaryFile()

    @contextmanager
    def locked(self) -> Iterator[None]:
        import fcntl

        fcntl.lockf(self.file.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.lockf(self.file.fileno(), fcntl.LOCK_UN)

    def close(self) -> None:
        self.file.close()


def _claim(counter: Counter, total: int) -> int | None:
    with counter.locked():
        number = counter.value.value
        if number >= total:
            return None
        counter.value.value = number + 1
    return number


def _lint_chunks(chunks: list[Work], counter: Any, kept: Kept, runner: Runner, job: Job,
                 each: Callable[[int, Linted], None], between: Callable[[], None] | None = None) -> None:
    """Lint the chunks this process claims, handing each one's outcomes to ``each``."""
    while (number := _claim(counter, len(chunks))) is not None:
        chunk = chunks[number]
        each(number, lint_files(chunk, {d: kept[d] for _, d in chunk if d in kept}, runner, job, between))


def _die_with_parent(parent: int, unused: list[Any]) -> None:
    """A worker must never outlive the parent: it closes the pipe ends it does not use (its own
    receiving end, and those of the workers forked before it), so that a write to a parent gone
    fails at once instead of blocking forever; on Linux the kernel kills it when the parent
    dies (``PR_SET_PDEATHSIG``). Ctrl-C is the parent's to handle: the worker ignores SIGINT."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for connection in unused:
        try:
            connection.close()
        except OSError:
            pass
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the line above: nobody to work for
        os._exit(0)


def _worker(chunks: list[Work], counter: Any, kept: Kept, runner: Runner, job: Job, send: Any,
            parent: int = 0, unused: tuple = ()) -> None:
    _die_with_parent(parent or os.getppid(), list(unused))
    try:
        _lint_chunks(chunks, counter, kept, runner, job, lambda number, part: send.send((number, part)))
    except Exception:  # noqa: BLE001 - the parent lints this worker's chunks again and meets it itself
        pass
    finally:
        send.close()


def _widen(connection: Any) -> None:
    """A pipe that holds a whole chunk's outcomes (Linux: up to 1 MiB), so a worker's send
    rarely waits for the parent to read."""
    try:
        import fcntl

        fcntl.fcntl(connection.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass


class _Inbox:
    """The workers' outcomes, read by the parent between its own files (a reader thread would
    make every worker's send wait for the parent's GIL: measured a quarter of a worker's time)."""

    def __init__(self, connections: list[Any]):
        self.open = list(connections)
        self.done: dict[int, Linted] = {}

    def take(self, number: int, part: Linted) -> None:
        self.done[number] = part

    def read(self, wait: bool = False) -> None:
        for connection in list(self.open):
            try:
                while wait or connection.poll():
                    number, part = connection.recv()
                    self.done[number] = part
            except Exception:  # noqa: BLE001 - EOF, or a message cut short by the worker's death
                self.open.remove(connection)
                connection.close()


def lint_parallel(work: Work, kept: Kept, runner: Runner, job: Job, jobs: int) -> Linted:
    """Outcomes of ``work`` from this process and ``jobs - 1`` forked ones, in ``work``'s order.

    A worker sends each chunk's outcomes as soon as it has linted it; the parent reads them
    between its own files (the time that takes is balanced out by the chunks it then does not
    claim). The chunks of a worker that dies or fails are linted here, so no file is ever lost."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    size = max(4, len(work) // (jobs * 32))  # small chunks: the last ones finish together
    chunks = [work[i:i + size] for i in range(0, len(work), size)]
    counter = Counter(context)
    _warm(runner)
    freeze()  # what the workers inherit stays frozen: the collector never touches its pages
    processes, connections = [], []
    for _ in range(jobs - 1):
        receive, send = context.Pipe(duplex=False)
        _widen(send)
        process = context.Process(target=_worker, args=(chunks, counter, kept, runner, job, send, os.getpid(),
                                                        (*connections, receive)), daemon=True)
        process.start()
        send.close()
        processes.append(process)
        connections.append(receive)
    inbox = _Inbox(connections)
    _lint_chunks(chunks, counter, kept, runner, job, inbox.take, inbox.read)
    inbox.read(wait=True)  # until every worker has closed its end
    for process in processes:
        process.join()
    counter.close()
    found: Linted = []
    for number, chunk in enumerate(chunks):
        part = inbox.done.get(number)
        if part is None:  # a worker's that it did not send
            part = lint_files(chunk, {d: kept[d] for _, d in chunk if d in kept}, runner, job)
        found.extend(part)
    return found


def can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def lint_all(work: Work, kept: Kept, runner: Runner, job: Job, jobs: int) -> Linted:
    """The second pass over ``work``: in this process, or shared with ``jobs - 1`` forked ones
    when there are enough files to pay for forking."""
    if jobs > 1 and len(work) >= PARALLEL_MIN_FILES and can_fork():
        return lint_parallel(work, kept, runner, job, jobs)
    return lint_files(work, kept, runner, job)
