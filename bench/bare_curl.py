"""The baseline the HTTP benchmarks compare cachedex with: a minimal pycurl multi loop,
``concurrency`` transfers at once, doing nothing with what arrives (``http_sync.py``,
``oci_sizes.py``, ``verify.py``)."""

from __future__ import annotations

import time
from collections.abc import Sequence


def bare_loop(
    urls: Sequence[str], concurrency: int, *, headers: Sequence[str] = (), head: bool = False, wait: float = 1.0
) -> tuple[float, float]:
    """(requests per second, this process's CPU seconds per request) of GETs (HEADs with
    ``head``) of every one of ``urls``; ``wait``: the longest a select waits."""
    import pycurl

    multi = pycurl.CurlMulti()
    multi.setopt(pycurl.M_MAXCONNECTS, concurrency)
    idle = []
    for _ in range(concurrency):
        handle = pycurl.Curl()
        if headers:
            handle.setopt(pycurl.HTTPHEADER, list(headers))
        if head:
            handle.setopt(pycurl.NOBODY, 1)
        idle.append(handle)
    queue = list(reversed(urls))
    running = 0
    cpu = time.process_time()
    start = time.perf_counter()
    while queue or running:
        while queue and idle:
            handle = idle.pop()
            handle.setopt(pycurl.URL, queue.pop())
            if not head:
                handle.setopt(pycurl.WRITEFUNCTION, bytearray().extend)
            multi.add_handle(handle)
            running += 1
        while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
            pass
        while True:
            queued, ok, failed = multi.info_read()
            for handle in [*ok, *(f[0] for f in failed)]:
                if handle.getinfo(pycurl.RESPONSE_CODE) != 200:
                    raise SystemExit(f"bare loop: HTTP {handle.getinfo(pycurl.RESPONSE_CODE)}")
                multi.remove_handle(handle)
                idle.append(handle)
                running -= 1
            if not queued:
                break
        if running:
            multi.select(wait)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    for handle in idle:
        handle.close()
    multi.close()
    return len(urls) / elapsed, cpu / max(len(urls), 1)
