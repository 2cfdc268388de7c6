"""Server benchmark: ``cachedex serve`` under load on a big tag.

Starts the real server (uvicorn, one process) on 127.0.0.1 over an existing catalog (by
default bench/out/ingest/catalog.sqlite from ``bench/ingest.py``: 250,000 records) and
drives it with 32 concurrent connections from ``wrk`` (Debian's package; a Lua script
walks a list of distinct paths), each phase bounded in time. Without wrk it falls back
to an async httpx client, which on this 2-core machine saturates long before the
server does (figures then measure the client).

  (a) search by package: distinct queries (a package name with a version range or a
      variant), so that the server's response cache does not answer them: p50 / p99
  (a') search by facets only: distinct queries of one to three facets (target, target
      family, OS, compiler), half of them within a stack, each at one of its first ten
      pages; hundreds to tens of thousands of matches each
  (a'') search by variants or versions and no package name (issue 18): a variant or
      two (``+cuda``, ``~cuda ~debug``, ``build_type=Release``), a version range, or
      both, half of them with a facet, each at one of its first ten pages
  (b) package pages (HTML) of 200 packages, repeatedly: requests per second
  (c) the search page (``search.html``, HTML) for the same queries as (a), (a') and (a'')
  (d) search by ``^dependency`` (issue 18): distinct queries over 40 dependencies, the 20
      packages most depended on (through link and run edges) and 20 others: ``^dep``
      alone, with a variant or a facet, or with a package name, each at one of its first
      ten pages; the first requests of each dependency walk the edges (the 20 most
      depended on were walked by the server's warm-up, in the background once it answers)
  (d') the same 40 dependencies in other distinct queries: their walks are kept

The first phase runs while the server, in the background, walks up from its 20 most
depended-on packages (several seconds of CPU in each process, as after every sync);
``--settle S`` leaves it idle that long first, to measure the steady state.

Targets (issues 5, 14 and 18): (a), (a''), (c), (d) p99 < 50 ms with 32 concurrent clients;
(b) >= 500 requests/s.

    python bench/serve.py [--catalog FILE] [--tag TAG] [--clients N] [--requests N] [--seconds S]
                          [--phases a,a',a'',c,c',c'',d,d',b] [--settle S]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import httpx

from serve_timing import TIMES_ENV, server_times

HERE = Path(__file__).resolve().parent

#: The server as ``cachedex serve --workers N`` runs it: uvicorn with cachedex's
#: protocol (httptools with a deadline on request heads and its own 503 past the
#: connection limit), that limit and its keep-alive, importing the CLI's app factory (the
#: one that answers ``POST /api/reuse`` too) in each worker, through ``serve_timing.py``,
#: which times each request in the worker when asked (the workers find this folder on
#: the path multiprocessing gives them).
SERVER = (
    "import os, sys, uvicorn\n"
    "sys.path.insert(0, sys.argv[4])\n"
    "from serve_timing import FACTORY\n"
    "from cachedex.publish.serve import CATALOG_ENV\n"
    "from cachedex.publish.serve.server import KEEP_ALIVE_SECONDS, BoundedHttpTools, concurrency_limit\n"
    "os.environ[CATALOG_ENV] = sys.argv[1]\n"
    "uvicorn.run(FACTORY, factory=True, host='127.0.0.1', http=BoundedHttpTools,\n"
    "            limit_concurrency=concurrency_limit(), timeout_keep_alive=KEEP_ALIVE_SECONDS,\n"
    "            port=int(sys.argv[2]), workers=int(sys.argv[3]), log_level='warning')\n"
)


def start_server(catalog: Path, workers: int, times: Path | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """The server over ``catalog`` on a free port of 127.0.0.1, once it answers: (its
    process, its base URL); with ``times``, each worker writes its requests' times there
    (``serve_timing.py``). SystemExit if it does not answer within a minute."""
    port = free_port()
    environment = dict(os.environ, **({TIMES_ENV: str(times)} if times is not None else {}))
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(catalog), str(port), str(workers), str(HERE)], env=environment
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(base + "/api/tags", timeout=2).status_code == 200:
                return server, base
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            server.terminate()
            server.wait(timeout=30)
            raise SystemExit("the server did not start")
        time.sleep(0.2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def load(base: str, paths: list[str], clients: int, limit: int, seconds: float) -> tuple[list[float], float, int]:
    """(latencies, elapsed, errors) of up to ``limit`` requests or ``seconds``."""
    latencies: list[float] = []
    errors = 0
    queue = iter(paths * (limit // max(1, len(paths)) + 1))
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal errors
        while len(latencies) + errors < limit and time.perf_counter() < deadline:
            path = next(queue)
            start = time.perf_counter()
            response = await client.get(path)
            if response.status_code == 200:
                latencies.append(time.perf_counter() - start)
            else:
                errors += 1

    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        start = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(clients)))
        return latencies, time.perf_counter() - start, errors


WRK_SCRIPT = """
local paths = {%s}
local counter = 0
function setup(thread) counter = counter + 1; thread:set("offset", counter) end
function init(args) i = 0 end
function request()
  i = i + 1
  return wrk.format("GET", paths[((i * %d + offset) %% #paths) + 1], {["Accept-Encoding"] = "gzip"})
end
"""


def wrk(base: str, paths: list[str], clients: int, seconds: float) -> tuple[float, float, float, int]:
    """(requests/s, p50 ms, p99 ms, non-2xx) from wrk walking ``paths`` (each thread its share)."""
    threads = 2
    lua = WRK_SCRIPT % (", ".join(f'"{p}"' for p in paths), threads)
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(lua)
        script.flush()
        out = subprocess.run(
            ["wrk", f"-t{threads}", f"-c{clients}", f"-d{int(seconds)}s", "--latency", "-s", script.name, base],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        ).stdout

    def millis(label: str) -> float:
        value, unit = re.search(rf"{label}\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rate, millis("50%"), millis("99%"), int(bad.group(1)) if bad else 0


def facet_query(rng: random.Random, facets: dict[str, list[str]], stacks: list[str]) -> tuple[str, str | None]:
    """A query of one to three facets and no package name (a target, its family, an
    OS, a compiler with or without a version), in half of them within a stack."""
    terms = []
    for column in rng.sample(["target", "os", "compiler"], rng.randint(1, 3)):
        value = rng.choice(facets[column])
        if column == "target":
            terms.append(f"target={value}" + (":" if rng.random() < 0.3 else ""))
        elif column == "os":
            terms.append(f"os={value}")
        else:
            name, _, version = value.partition("@")
            terms.append(f"%{name}" + (f"@{version.split('.')[0]}" if version and rng.random() < 0.5 else ""))
    terms.sort(key=lambda term: term.startswith("%"))  # the compiler last: in Spack 1.0 what follows is its
    return " ".join(terms), rng.choice(stacks) if stacks and rng.random() < 0.5 else None


#: Variants of the bench tag's specs (``ingest.py``: every spec +mpi +shared ~debug,
#: half of them +cuda), alone or in pairs.
VARIANTS = ["+cuda", "~cuda", "+cuda ~debug", "~cuda +shared", "+mpi", "build_type=Release"]


def nameless_query(rng: random.Random, facets: dict[str, list[str]], stacks: list[str]) -> tuple[str, str | None]:
    """A query of variants, a version range, or both, and no package name; in half of
    them a facet too (a target, an OS or a compiler), in half of them within a stack."""
    terms = []
    kind = rng.random()
    if kind < 0.7:
        terms.append(rng.choice(VARIANTS))
    if kind > 0.4:
        major = rng.randint(0, 12)
        terms.append(rng.choice([f"@{major}:", f"@:{major}", f"@{major}.{rng.randint(0, 9)}:{major + 1}"]))
    if rng.random() < 0.5:
        terms.append(facet_query(rng, facets, stacks)[0].split()[0])
    return " ".join(terms), rng.choice(stacks) if stacks and rng.random() < 0.5 else None


def dependency_queries(
    rng: random.Random,
    needed: list[str],
    names: list[str],
    facets: dict[str, list[str]],
    stacks: list[str],
    count: int,
) -> list[tuple[str, str | None, int]]:
    """Distinct ``^dep`` searches over the dependencies ``needed``, a quarter each: alone,
    with a variant (within a stack), with a facet, or with a package name; each at one
    of its first ten pages."""
    found = set()
    for _ in range(count):
        dependency, kind = f"^{rng.choice(needed)}", rng.random()
        if kind < 0.25:
            query, stack = dependency, None
        elif kind < 0.5:
            query, stack = f"{rng.choice(VARIANTS)} {dependency}", rng.choice(stacks) if stacks else None
        elif kind < 0.75:
            query, stack = f"{facet_query(rng, facets, stacks)[0].split()[0]} {dependency}", None
        else:
            query, stack = f"{rng.choice(names)} {dependency}", None
        found.add((query, stack, 50 * rng.randrange(10)))
    queries = sorted(found, key=lambda q: (q[0], q[1] or "", q[2]))
    rng.shuffle(queries)
    return queries


def walk_each(base: str, tag: str, needed: list[str], workers: int) -> None:
    """Before (d'): each dependency's walk made in every server process (not timed):
    distinct requests (other pages of ``^dep`` alone), several at once, so that each
    process answers some."""

    async def run() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:
            for name in needed:
                pages = range(1000, 1000 + 4 * workers)
                params = [{"q": f"^{name}", "tag": tag, "limit": 1, "offset": page} for page in pages]
                await asyncio.gather(*(client.get("/api/search", params=p) for p in params))

    started = time.monotonic()
    asyncio.run(run())
    print(f"  (each dependency walked in every process first: {time.monotonic() - started:.1f} s, not timed)")


Query = tuple[str, str | None, int]


class BenchQueries(NamedTuple):
    """The queries of every phase, made from the catalog with a fixed seed: the same in
    every run (and in ``search_times.py``)."""

    names: list[str]
    named: list[Query]
    broad: list[Query]
    nameless: list[Query]
    needed: list[str]
    walked: list[list[Query]]
    packages: list[str]


def bench_queries(catalog_path: Path, tag: str, requests: int) -> BenchQueries:
    """The phases' distinct queries (``requests`` of each kind, fewer once deduplicated)
    over the tag ``tag`` of the catalog at ``catalog_path``."""
    from cachedex.catalog import Catalog

    Catalog(catalog_path).close()  # upgrade the schema in place if it is older
    with Catalog(catalog_path, readonly=True) as catalog:
        names = sorted(name for name, tags in catalog.package_names().items() if tag in tags)
        facets = {
            column: sorted(
                {
                    row[0]
                    for row in catalog._db.execute(  # noqa: SLF001 (bench only)
                        f"SELECT DISTINCT {column} FROM specs WHERE {column} NOT IN ('', 'none')"
                    )
                }
            )
            for column in ("target", "os", "compiler")
        }
        stacks = [m.stack for m in catalog.mirrors(tag) if m.stack != "root"]
        hubs = [
            row[0]
            for row in catalog._db.execute(  # noqa: SLF001 (bench only)
                "SELECT s.name FROM edges e JOIN specs s ON s.id = e.child WHERE e.deptypes & 6 "
                "GROUP BY s.name ORDER BY count(*) DESC LIMIT 20"
            )
        ]
    rng = random.Random(3)
    named = [(f"{rng.choice(names)}@{rng.randint(0, 3)}:", None, 0) for _ in range(requests // 2)]
    named += [(f"{rng.choice(names)} +shared", None, 0) for _ in range(requests // 2)]
    rng.shuffle(named)
    # Each facet query at one of its first ten pages, as a user paging through results.
    broad = sorted(
        {(*facet_query(rng, facets, stacks), 50 * rng.randrange(10)) for _ in range(requests)},
        key=lambda q: (q[0], q[1] or "", q[2]),
    )
    rng.shuffle(broad)
    nameless = sorted(
        {(*nameless_query(rng, facets, stacks), 50 * rng.randrange(10)) for _ in range(requests)},
        key=lambda q: (q[0], q[1] or "", q[2]),
    )
    rng.shuffle(nameless)
    others = sorted(set(names) - set(hubs))
    needed = hubs + rng.sample(others, min(20, len(others)))
    # (d') answers thousands a second: enough distinct queries that the server's response
    # cache does not answer repeats within its ten seconds.
    walked = [dependency_queries(rng, needed, names, facets, stacks, count) for count in (5_000, 100_000)]
    walked[1] = [query for query in walked[1] if query not in set(walked[0])]
    packages = rng.sample(names, min(200, len(names)))  # (b)'s pages
    return BenchQueries(names, named, broad, nameless, needed, walked, packages)


def search_paths(tag: str, queries: list[Query]) -> list[str]:
    """The API's search URLs (paths and query strings) of ``queries`` in ``tag``, 50 a page."""
    return [
        str(
            httpx.URL(
                "/api/search",
                params={"q": q, "tag": tag, "limit": 50, "offset": offset, **({"stack": stack} if stack else {})},
            )
        )
        for q, stack, offset in queries
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", type=Path, default=HERE / "out" / "ingest" / "catalog.sqlite")
    parser.add_argument("--tag", default="bench")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2, help="server processes (cachedex serve --workers)")
    parser.add_argument("--requests", type=int, default=20000, help="distinct search queries")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--phases", default="a,a',a'',c,c',c'',d,d',b", help="which phases to run, in their order")
    parser.add_argument(
        "--settle",
        type=float,
        default=0,
        help="seconds to leave the server idle once it answers, before the first phase: its warm-up walks "
        "(the most depended-on packages, in the background) then do not run beside the phase",
    )
    args = parser.parse_args()
    chosen = args.phases.split(",")

    names, named, broad, nameless, needed, walked, packages = bench_queries(args.catalog, args.tag, args.requests)

    def searches(queries: list[Query]) -> list[str]:
        return search_paths(args.tag, queries)

    def search_pages(queries: list[tuple[str, str | None, int]]) -> list[str]:
        """The same searches as the website's search page (HTML, 50 a page)."""
        return [
            str(
                httpx.URL(
                    "/search.html",
                    params={"q": q, "tag": args.tag, "page": offset // 50 + 1, **({"stack": stack} if stack else {})},
                )
            )
            for q, stack, offset in queries
        ]

    package_paths = [f"/tags/{args.tag}/packages/{n}/" for n in packages]

    times = Path(tempfile.mkdtemp(prefix="cachedex-bench-times-"))
    server, base = start_server(args.catalog, args.workers, times)
    try:
        print(
            f"server up ({args.workers} processes); {len(names):,} packages in {args.tag}; {args.clients} connections"
            + (f"; idle {args.settle:g} s before the first phase" if args.settle else "")
        )
        time.sleep(args.settle)
        if shutil.which("wrk"):
            phases = (
                ("(a) search by package", searches(named)),
                ("(a') search by facets only", searches(broad)),
                ("(a'') search by variants or versions, no name", searches(nameless)),
                ("(c) search page (HTML), by package", search_pages(named)),
                ("(c') search page (HTML), by facets only", search_pages(broad)),
                ("(c'') search page (HTML), by variants or versions, no name", search_pages(nameless)),
                ("(d) search by ^dependency, first", searches(walked[0])),
                ("(d') search by ^dependency, walks kept", searches(walked[1])),
            )
            for label, paths in phases:
                if label[1 : label.index(")")] not in chosen:
                    continue
                if label.startswith("(d')"):
                    walk_each(base, args.tag, needed, args.workers)
                started = time.time()
                rate, p50, p99, bad = wrk(base, paths, args.clients, min(args.seconds, 10))
                ended = time.time()
                time.sleep(1)  # (each worker writes its times at least every half second)
                print(
                    f"{label}: {rate:,.0f} requests/s over {len(paths):,} distinct queries, {bad} errors; "
                    f"p50 {p50:.1f} ms, p99 {p99:.1f} ms   [target p99 < 50 ms]; {in_server(times, started, ended)}"
                )
            if "b" not in chosen:
                return
            rate, p50, p99, bad = wrk(base, package_paths, args.clients, min(args.seconds, 10))
            print(f"(b) package pages: {rate:,.0f} requests/s, p99 {p99:.1f} ms, {bad} errors   [target >= 500/s]")
            return
        print("wrk not found (apt-get install wrk): measuring with httpx, which saturates first")
        for label, paths in (
            ("(a) search by package", searches(named)),
            ("(a') search by facets only", searches(broad)),
            ("(a'') search by variants or versions, no name", searches(nameless)),
            ("(c) search page (HTML), by package", search_pages(named)),
            ("(c') search page (HTML), by facets only", search_pages(broad)),
        ):
            latencies, elapsed, errors = asyncio.run(load(base, paths, args.clients, len(paths), args.seconds))
            latencies.sort()
            p99 = latencies[max(0, int(len(latencies) * 0.99) - 1)]
            print(
                f"{label}: {len(latencies):,} distinct queries in {elapsed:.1f} s "
                f"({len(latencies) / elapsed:,.0f}/s), {errors} errors; p50 "
                f"{statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms   [target p99 < 50 ms]"
            )
        asyncio.run(load(base, package_paths, args.clients, len(package_paths), 60))  # warm the cache
        latencies, elapsed, errors = asyncio.run(load(base, package_paths, args.clients, args.requests, args.seconds))
        print(
            f"(b) package pages: {len(latencies):,} requests in {elapsed:.1f} s = {len(latencies) / elapsed:,.0f}/s, "
            f"{errors} errors   [target >= 500/s]"
        )
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a worker busy in a long query
            server.kill()
            server.wait(timeout=10)
        shutil.rmtree(times, ignore_errors=True)


def in_server(times: Path, started: float, ended: float) -> str:
    """The p50 and p99 of the requests' times inside the workers between ``started`` and
    ``ended`` (``serve_timing.py``): from the first byte of a request read to the last of
    its response written, without the time it spends in the client and the kernel."""
    taken = server_times(times, started, ended)
    if not taken:
        return "no time from the workers"
    p99 = taken[min(len(taken) - 1, int(len(taken) * 0.99))]
    return f"in the workers p50 {statistics.median(taken):.1f} ms, p99 {p99:.1f} ms ({len(taken):,} requests)"


if __name__ == "__main__":
    main()
