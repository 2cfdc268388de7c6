"""The process-level tricks of ``_perf.py``."""

from __future__ import annotations

import platform
import threading

import pytest

from cachedex._perf import _malloc_trim, release_free_heap


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_memory_a_thread_freed_is_given_back() -> None:
    """A thread allocates in a heap of its own; what it frees stays resident there until
    ``release_free_heap`` (a sync calls it once the threads reading the stacks' indexes
    are done)."""
    assert _malloc_trim() is not None

    survivors: list[bytearray] = []

    def churn() -> None:
        # Blocks under the mmap threshold come from the thread's own heap; one in fifty
        # outlives the thread, so that the heap's free space lies between them, where
        # freeing alone never shrinks it.
        made = [bytearray(64 * 1024) for _ in range(3000)]  # ~190 MiB, touched when zeroed
        survivors.extend(made[::50])

    worker = threading.Thread(target=churn)
    worker.start()
    worker.join()
    before = _rss_kib()
    release_free_heap()
    assert before - _rss_kib() > 100 * 1024  # more than 100 of the ~186 MiB freed handed back
    survivors.clear()
