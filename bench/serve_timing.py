"""The app ``serve.py`` serves: ``cachedex serve``'s own (the CLI's app factory), with each
request timed inside the worker when ``$CACHEDEX_BENCH_TIMES`` names a folder.

A request is timed from the first byte of its head that the worker reads to the last
byte of its response written: what the server's own work and queue add, without the
time the request and the response spend in the client (``wrk``, on the same two cores).
Each worker appends ``<end, epoch seconds> <milliseconds>`` lines to ``PID.txt`` in that
folder, at least every half second, for ``serve.py`` to read after each phase.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from cachedex.cli.serve_app import app_from_environment

#: The folder each worker writes its requests' times into (unset: none are timed).
TIMES_ENV = "CACHEDEX_BENCH_TIMES"
#: What ``serve.py``'s server runs in each worker.
FACTORY = f"{__name__}:factory"


def factory() -> Any:
    """The app over the catalog ``$CACHEDEX_SERVE_CATALOG`` names; each request timed
    when ``$CACHEDEX_BENCH_TIMES`` names a folder."""
    folder = os.environ.get(TIMES_ENV)
    if folder:
        _time_requests(Path(folder) / f"{os.getpid()}.txt")
    return app_from_environment()


def _time_requests(path: Path) -> None:
    """Time every request of this worker's httptools protocol (uvicorn's, which
    ``serve.py``'s server names) into ``path``."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    read, completed = HttpToolsProtocol.data_received, HttpToolsProtocol.on_response_complete
    pending: list[str] = []
    flushed = [time.monotonic()]
    output = path.open("a")

    def data_received(self: Any, data: bytes) -> None:
        if getattr(self, "_bench_first_byte", None) is None:  # (a head may come in several reads)
            self._bench_first_byte = time.perf_counter()
        read(self, data)

    def on_response_complete(self: Any) -> None:
        first = getattr(self, "_bench_first_byte", None)
        if first is not None:
            pending.append(f"{time.time():.4f} {(time.perf_counter() - first) * 1000:.3f}\n")
            self._bench_first_byte = None
            if len(pending) >= 500 or time.monotonic() - flushed[0] > 0.5:
                output.write("".join(pending))
                output.flush()
                pending.clear()
                flushed[0] = time.monotonic()
        completed(self)

    HttpToolsProtocol.data_received = data_received  # type: ignore[method-assign]
    HttpToolsProtocol.on_response_complete = on_response_complete  # type: ignore[method-assign]


def server_times(folder: Path, start: float, end: float) -> list[float]:
    """The milliseconds of the requests the workers ended between ``start`` and ``end``
    (epoch seconds), sorted."""
    times = []
    for path in folder.glob("*.txt"):
        for line in path.read_text().splitlines():
            ended, _, millis = line.partition(" ")
            if millis and start <= float(ended) <= end:
                times.append(float(millis))
    return sorted(times)
