"""The few process-level tricks that keep cachedex fast, in one place, each with its why.

- :func:`gc_paused`: a sync or a site build makes millions of small objects that hold no
  reference cycles; with the cyclic collector on, each of its passes walks them all,
  again and again, as the heap grows (a big index decodes several times slower).
- :func:`gc_frozen`: before forking worker processes, move every object to the
  collector's permanent generation, so that the workers' collections never write to
  (and so copy) the memory pages they share with the parent.
- :func:`release_free_heap`: memory that threads freed stays in their own malloc heaps
  (glibc keeps one per thread), where the thread that goes on allocating cannot reuse
  it; a sync gives it back to the kernel once the indexes its threads read are decoded.
- :func:`fork_alone`: a forked process that does one job beside this one (build a first
  sync's later batches, read its spec manifests) inherits what this one has decoded
  instead of decoding it again; it holds only its own files, and never collects.
- :class:`BoundedMemo`: a dict that memoises values which repeat across hundreds of
  thousands of records (variant strings, JSON pieces) and forgets everything when it
  reaches its limit, so that its memory is bounded whatever the input.

Where each is used, and what was measured, is in ``docs/architecture.md``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
import warnings
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["BoundedMemo", "can_fork", "end_fork", "fork_alone", "gc_frozen", "gc_paused", "release_free_heap"]

#: Above any file descriptor a process has open (a forked one closes all but its own).
_MAX_FD = 1 << 20

K = TypeVar("K")
V = TypeVar("V")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (if it runs) while the block makes many
    objects without cycles; restore its previous state after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def gc_frozen() -> Iterator[None]:
    """Freeze every object into the permanent generation for the block (workers forked
    inside share the parent's pages instead of copying them), then unfreeze."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``; None where the C library has none (musl, macOS, Windows)."""
    import ctypes  # (here: most commands never need it, and every command imports this module)

    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except (OSError, TypeError):  # no C library to load by that name
        return None


def release_free_heap() -> None:
    """Give the pages that the C heaps hold free back to the kernel (``malloc_trim``; a
    no-op without glibc). A few milliseconds: for the end of a phase, not a loop."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def can_fork() -> bool:
    """Whether work may go to a forked process: on Linux (fork is unsafe on macOS, and
    missing on Windows)."""
    return sys.platform.startswith("linux")


def fork_alone(keep: Collection[int], work: Callable[[], object]) -> int:
    """Fork a process that runs ``work`` and ends (status 0, or 1 if it raised), without
    the parent's cleanup (its atexit handlers, its buffers); return its pid here.
    OSError where no process can be made (a limit on processes, memory that strict
    overcommit refuses). There the cyclic collector is off (a collection would walk
    every inherited object, copying the pages they share) and every file descriptor
    above 2 but ``keep`` is closed: an inherited end of another process's pipe (the
    manifests' reading process's input) would keep that pipe from ending. ``work`` must
    take no lock another thread of this process may hold."""
    with warnings.catch_warnings():
        # Python 3.12 warns of forking a process with threads: the child runs none of
        # their code and takes none of their locks, only its own work.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        gc.disable()
        low = 3
        for fd in sorted(set(keep)):
            os.closerange(low, fd)
            low = fd + 1
        os.closerange(low, _MAX_FD)
        work()
        status = 0
    finally:
        os._exit(status)


def end_fork(pid: int, *, reap: bool = True) -> None:
    """Kill a process :func:`fork_alone` made (if it has not ended) and, if ``reap``,
    wait for it (a caller in another thread than the one that reaps it may not)."""
    with contextlib.suppress(ProcessLookupError):  # (ended already)
        os.kill(pid, signal.SIGKILL)
    if reap:
        with contextlib.suppress(ChildProcessError):  # (started with SIGCHLD ignored: reaped already)
            os.waitpid(pid, 0)


class BoundedMemo(dict[K, V]):
    """A memo dict of at most ``limit`` entries: :meth:`remember` clears it when full.

    Reading is plain ``dict`` access (``memo.get(key)`` stays a C call on hot paths);
    only :meth:`remember` adds entries. Clearing rather than evicting one by one keeps
    adding cheap, and the values memoised are cheap to make again."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def remember(self, key: K, value: V) -> V:
        """Store ``value`` under ``key`` (first forgetting everything if full); return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value
