"""The garbage collector's part in a run: paused while files are loaded and linted, the young
generations collected every few files, and what lives to the end of the run frozen.

Loaded trees are acyclic and freed by reference counting, so every collection pass during
loading would only rescan a growing heap (measured: 4x slower on the corpus). Released views
break their own cycles (``Workload.dispose``), so the periodic young collection only catches
what other code leaves in cycles; a full pass would rescan every outcome.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

YOUNG_COLLECTION_FILES = 64  # while linting, the young generations are collected every this many files


@contextmanager
def collector_paused() -> Iterator[None]:
    """Load (and lint) files with the cyclic garbage collector paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def after_file(position: int) -> None:
    """Called after the ``position``-th file (from 1) of a pass: now and then, a young collection."""
    if position % YOUNG_COLLECTION_FILES == 0:
        gc.collect(1)


def freeze() -> None:
    """Everything alive now lives to the end of the run (or is inherited by forked workers):
    out of the collector's sight, so no later pass rescans it and no worker's copy of its pages
    is dirtied by one."""
    gc.freeze()
