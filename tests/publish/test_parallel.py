"""Worker pools: what a limit on processes leaves behind."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

from cachedex.publish.parallel import new_pool


def test_a_pool_that_cannot_start_its_threads_leaves_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a limit on processes, a pool forked its workers and then could not start a
    thread: they waited for good, holding the build's standard output (a piped build
    never ended)."""
    start = threading.Thread.start

    def refused(thread: threading.Thread) -> None:
        if thread.name.startswith("Thread-") or "handle" in str(getattr(thread, "_target", "")):
            raise RuntimeError("can't start new thread")
        start(thread)

    before = set(multiprocessing.active_children())
    monkeypatch.setattr(threading.Thread, "start", refused)
    with pytest.raises(RuntimeError, match="can't start new thread"):
        new_pool(2)
    monkeypatch.undo()
    assert set(multiprocessing.active_children()) - before == set()
