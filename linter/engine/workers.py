"""``--jobs N``: the parent and N-1 forked workers share the files of the second pass out.

The workers inherit the index and the parsed shared files (copy-on-write, nothing is pickled on
the way in); every process claims chunks of files from one counter until none is left, and each
worker sends a chunk's outcomes back as soon as it is linted. The parent's own share is never
pickled. Shipping parsed trees between processes instead was measured to cost more than parsing
them (25 MB of the corpus's CRDs: 9 s to pickle, 7 s to unpickle, against 2 s to parse).
"""

from __future__ import annotations

import os
from typing import Any, Callable

from linter.engine.memory import freeze
from linter.engine.passes import Kept, Linted, Work, lint_files
from linter.engine.runner import Job, Runner

PARALLEL_MIN_FILES = 48  # below this, forking workers costs more than it saves


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _warm(runner: Runner) -> None:
    """Build before forking what every worker would otherwise build for itself: the cluster model."""
    from linter.model.cluster import cluster_of

    try:
        cluster_of(runner.index, runner.config)
    except Exception:  # noqa: BLE001 - a worker's rule meets the same error and reports it as LNT002
        pass


def _claim(counter: Any, total: int) -> int | None:
    with counter.get_lock():
        number = counter.value
        if number >= total:
            return None
        counter.value = number + 1
    return number


def _lint_chunks(chunks: list[Work], counter: Any, kept: Kept, runner: Runner, job: Job,
                 each: Callable[[int, Linted], None], between: Callable[[], None] | None = None) -> None:
    """Lint the chunks this process claims, handing each one's outcomes to ``each``."""
    while (number := _claim(counter, len(chunks))) is not None:
        chunk = chunks[number]
        each(number, lint_files(chunk, {d: kept[d] for _, d in chunk if d in kept}, runner, job, between))


def _worker(chunks: list[Work], counter: Any, kept: Kept, runner: Runner, job: Job, send: Any) -> None:
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
    counter = context.Value("q", 0)
    _warm(runner)
    freeze()  # what the workers inherit stays frozen: the collector never touches its pages
    processes, connections = [], []
    for _ in range(jobs - 1):
        receive, send = context.Pipe(duplex=False)
        _widen(send)
        process = context.Process(target=_worker, args=(chunks, counter, kept, runner, job, send), daemon=True)
        process.start()
        send.close()
        processes.append(process)
        connections.append(receive)
    inbox = _Inbox(connections)
    _lint_chunks(chunks, counter, kept, runner, job, inbox.take, inbox.read)
    inbox.read(wait=True)  # until every worker has closed its end
    for process in processes:
        process.join()
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
