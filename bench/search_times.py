"""What a loaded server's search latency is made of: ``serve.py``'s queries answered one
after another in this process, through the app ``cachedex serve`` runs (no HTTP, no
other process), each timed.

``serve.py`` measures latency under 32 connections on a machine whose two cores the
server's workers share with the load's client; its p99 mixes the searches' own cost with
the queueing and the scheduler. This script gives the searches' own cost (p50, p99,
p99.9, the slowest queries) and what it implies: a worker holding C/W of the C
connections answers one request after another, so a request waits for about the C/W
requests before it; the sums of C/W consecutive service times give the latency such a
worker would show with a core of its own (``model``), and W / mean the requests a second.

    python bench/search_times.py [--catalog FILE] [--tag TAG] [--phase a|a'|a''] [--settle S]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from serve import HERE, bench_queries, search_paths  # (this script's folder is on sys.path)


async def _lifespan_started(app: Any) -> asyncio.Task[None]:
    """The app's startup run (it warms the catalog's search indexes in a thread); its
    lifespan task, to cancel at the end."""
    started = asyncio.Event()
    messages: list[str] = []

    async def receive() -> dict[str, str]:
        if not messages:
            messages.append("startup")
            return {"type": "lifespan.startup"}
        await asyncio.Event().wait()  # never shut down while measuring
        return {"type": "lifespan.shutdown"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"].startswith("lifespan.startup"):
            started.set()

    task = asyncio.get_running_loop().create_task(
        app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
    )
    await started.wait()
    return task


async def _get(app: Any, url: str) -> int:
    """The status of GET ``url`` (a path and a query string) answered by ``app``."""
    parts = urlsplit(url)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": parts.path,
        "raw_path": parts.path.encode(),
        "query_string": parts.query.encode(),
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"accept-encoding", b"gzip")],
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 50000),
    }
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    await app(scope, receive, send)
    return statuses[0]


def queue_model(times: Sequence[float], per_worker: int, workers: int) -> tuple[float, float]:
    """(p50, p99) in seconds of the sums of ``per_worker`` consecutive service times, the
    requests dealt to ``workers`` workers in turn: each worker's latency with a core of
    its own and ``per_worker`` connections always waiting."""
    sums = []
    for worker in range(workers):
        mine = times[worker::workers]
        sums += [sum(mine[first : first + per_worker]) for first in range(len(mine) - per_worker + 1)]
    sums.sort()
    return statistics.median(sums), sums[int(len(sums) * 0.99)]


async def measure(catalog: Path, urls: list[str], settle: float) -> list[tuple[float, str]]:
    """(seconds, url) of each of ``urls`` answered in turn once the app has warmed up and
    ``settle`` more seconds passed (its walks of the most depended-on packages)."""
    from cachedex.cli.serve_app import serve_app

    app = serve_app(catalog)
    lifespan = await _lifespan_started(app)
    await asyncio.sleep(settle)
    timed = []
    try:
        for url in urls:
            start = time.perf_counter()
            status = await _get(app, url)
            timed.append((time.perf_counter() - start, url))
            if status != 200:
                raise SystemExit(f"{url}: status {status}")
    finally:
        lifespan.cancel()
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", type=Path, default=HERE / "out" / "ingest" / "catalog.sqlite")
    parser.add_argument("--tag", default="bench")
    parser.add_argument("--requests", type=int, default=20000, help="distinct search queries, as serve.py")
    parser.add_argument("--phase", default="a''", choices=["a", "a'", "a''"], help="serve.py's phase")
    parser.add_argument("--clients", type=int, default=32, help="connections, for the model")
    parser.add_argument("--workers", type=int, default=2, help="server processes, for the model")
    parser.add_argument("--settle", type=float, default=20, help="seconds after the warm-up before the first")
    args = parser.parse_args()

    queries = bench_queries(args.catalog, args.tag, args.requests)
    chosen = {"a": queries.named, "a'": queries.broad, "a''": queries.nameless}[args.phase]
    timed = asyncio.run(measure(args.catalog, search_paths(args.tag, chosen), args.settle))
    times = [seconds for seconds, _ in timed]
    ordered = sorted(times)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1000

    mean = statistics.fmean(times)
    print(
        f"({args.phase}) {len(times):,} distinct searches, one after another in this process: "
        f"mean {mean * 1000:.2f} ms, p50 {at(0.5):.2f} ms, p99 {at(0.99):.2f} ms, "
        f"p99.9 {at(0.999):.2f} ms, max {ordered[-1] * 1000:.1f} ms"
    )
    per_worker = max(1, args.clients // args.workers)
    p50, p99 = queue_model(times, per_worker, args.workers)
    print(
        f"model: {args.workers} workers, a core each, {per_worker} connections each waiting: "
        f"~{args.workers / mean:,.0f} requests/s, p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
    )
    print("slowest:")
    for seconds, url in sorted(timed, reverse=True)[:5]:
        print(f"  {seconds * 1000:6.1f} ms  {dict(parse_qsl(urlsplit(url).query))}")


if __name__ == "__main__":
    main()
