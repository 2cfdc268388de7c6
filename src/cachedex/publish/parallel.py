"""How publishers share their work among processes: one policy for ``site`` and ``jekyll``.

A big tag is written by worker processes: on Linux they are forked (a worker starts in
milliseconds with the modules loaded, and inherits what the parent read, see
:class:`ForkShared`), each opens its own read-only catalog connection, and each writes
a share of the pages. A small tag is written by the calling process alone: starting
workers (~0.1 s) would cost more than they save.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import multiprocessing.pool
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["MAX_WORKERS", "ForkShared", "cpu_workers", "new_pool", "pool_context", "worker_count"]

#: At most this many worker processes (default: one per CPU up to this).
MAX_WORKERS = 4


def cpu_workers(limit: int = MAX_WORKERS) -> int:
    """The CPUs this process may use, at most ``limit``."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, limit))


def worker_count(work: int, *, threshold: int, requested: int | None) -> int:
    """Processes for ``work`` units (records, specs): 1 below ``threshold``, else
    ``requested`` (default: :func:`cpu_workers`)."""
    if work < threshold:
        return 1
    return max(1, requested if requested is not None else cpu_workers())


def pool_context() -> multiprocessing.context.BaseContext:
    """Worker processes for writing pages in parallel.

    On Linux, fork starts a worker in milliseconds with the modules already loaded;
    each worker opens its own read-only connection (the inherited handle is never
    used). Elsewhere fork is unsafe (macOS) or missing: the platform's default."""
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)


def new_pool(processes: int) -> multiprocessing.pool.Pool:
    """A pool of ``processes`` workers (:func:`pool_context`'s). A pool that cannot start
    its threads once its workers are forked (a limit on processes) leaves them waiting
    for good, holding the caller's standard output (a piped build never ends): they are
    stopped here, and the error raised."""
    before = set(multiprocessing.active_children())
    try:
        return pool_context().Pool(processes)
    except (OSError, RuntimeError, MemoryError):
        for child in set(multiprocessing.active_children()) - before:
            child.kill()
            child.join(5)
        raise


class ForkShared:
    """Values that forked workers inherit instead of receiving them pickled (a spec
    graph is a gigabyte for 250,000 specs): set in the parent before the pool forks,
    read in the workers, cleared after."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    @contextmanager
    def holding(self, **values: Any) -> Iterator[None]:
        """Hold ``values`` for the block (and for workers forked inside it)."""
        self._values.update(values)
        try:
            yield
        finally:
            self._values.clear()

    def set(self, name: str, value: Any) -> None:
        """Hold one more value (inside :meth:`holding`)."""
        self._values[name] = value

    def get(self, name: str, default: Any = None) -> Any:
        """A value the parent held when this worker was forked."""
        return self._values.get(name, default)
