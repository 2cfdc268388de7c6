"""HTTP benchmark: the first sync of a big tag over HTTP against the same sync from a folder.

(Not ``bench/http.py``: a script there would shadow the standard library's ``http`` package
for every script of this folder.)

Generates (once, under bench/out/http/) a v3 tag with ``bench/ingest.py``'s generator
(default 100,000 records, 40 stacks, a spec manifest per listed record), serves it with
Debian's nginx on 127.0.0.1, and puts ``bench/delayproxy.py`` in front of nginx to hold
every request back by a fixed delay (default 30 ms). Then measures, in one run:

  (a) the first sync from the local folder: wall, CPU, peak RSS, the sizes phase
  (b) the same over HTTP from nginx                  target: wall <= 1.5 x (a), RSS <= 1.1 x (a)
  (c) a minimal concurrent GET loop of the same manifest URLs (pycurl's multi interface,
      the same concurrency): the rate to compare (b)'s sizes phase with    target >= 80 %
  (d) the first sync through the delaying proxy, default settings      target <= 60 s
  (e) the bare loop through the delaying proxy, and concurrency / delay: what (d)'s sizes
      phase should approach                                              target >= 80 %
  (f) a no-op re-sync over HTTP                                          target <= 0.5 s

    python bench/http_sync.py [--records N] [--stacks N] [--delay S] [--concurrency N]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

import bare_curl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from tests.servers import Nginx, free_port, wait_for_port  # noqa: E402

import ingest  # noqa: E402 - bench/ingest.py, beside this file

SYNC = """
import json, sys, time
from pathlib import Path
from cachedex.catalog import Catalog
from cachedex.config import load_config
from cachedex.ingest.sync import sync
config = load_config(Path(sys.argv[1]))
start = time.perf_counter()
with Catalog(config.catalog) as catalog:
    (outcome,) = sync(config, catalog)
wall = time.perf_counter() - start
hwm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')) * 1024
print(json.dumps({"ok": outcome.ok, "error": outcome.error, "wall": wall, "rss": hwm,
                  "phases": dict(outcome.phases), "sizes": outcome.sizes_fetched, "specs": outcome.specs}))

"""


def run_sync(config: Path, *, fresh: bool) -> dict[str, float]:
    """One sync in a child process: its figures, and its CPU seconds (user + system)."""
    if fresh:
        for stale in config.parent.glob(f"{config.stem}.sqlite*"):
            stale.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", SYNC, str(config)], capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"sync failed:\n{done.stdout}\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["ok"]:
        raise SystemExit(f"sync failed: {result['error']}")
    result["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def read_seconds(result: dict[str, object]) -> float:
    """How long the sync spent reading spec manifests: from the first read to the last
    (most of them run while the listing is written), else its sizes phase."""
    phases: dict[str, float] = result["phases"]  # type: ignore[assignment]
    return phases.get("size reads ahead") or phases["sizes"]


def _forget_sizes(catalog: Path) -> None:
    """Make a synced catalog look like one whose size phase was stopped at its start."""
    import sqlite3

    db = sqlite3.connect(catalog)
    with db:
        db.execute("UPDATE specs SET size = NULL")
        db.execute("UPDATE tags SET size = 0, sized = 0")
    db.close()


def bare_loop(urls: list[str], concurrency: int) -> float:
    """GETs per second of a minimal pycurl multi loop over ``urls``, ``concurrency`` at once."""
    return bare_curl.bare_loop(urls, concurrency)[0]


def write_config(path: Path, facts: dict[str, object], base: str, concurrency: int | None) -> Path:
    tag = {
        "name": "bench",
        "url": f"{base}/root",
        "stacks": {f"stack-{n:02d}": f"{base}/stack-{n:02d}" for n in range(int(str(facts["stacks"])))},
    }
    document: dict[str, object] = {"catalog": f"{path.stem}.sqlite", "tags": [tag]}
    if concurrency is not None:
        document["http"] = {"concurrency": concurrency}
    path.write_text(json.dumps(document))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--stacks", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.03)
    parser.add_argument("--concurrency", type=int, default=None, help="http.concurrency (default: cachedex's)")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "http")
    args = parser.parse_args()
    out: Path = args.out
    facts_path = out / "facts.json"
    facts = json.loads(facts_path.read_text()) if facts_path.exists() else None
    if not facts or facts.get("records") != args.records or facts.get("stacks") != args.stacks:
        subprocess.run(["rm", "-rf", str(out)], check=True)
        out.mkdir(parents=True)
        print(f"generating {args.records:,} records, {args.stacks} stacks in {out} ...", flush=True)
        facts = ingest.generate(out, args.records, args.stacks)
        facts_path.write_text(json.dumps(facts))
    from cachedex.config import HttpOptions

    concurrency = args.concurrency or HttpOptions().concurrency
    manifests = sorted(str(p.relative_to(out)) for p in (out / "root/v3/manifests/spec").glob("*/*.json"))
    print(
        f"tag: {facts['records']:,} records, {args.stacks} stacks, {len(manifests):,} spec manifests; "
        f"http.concurrency {concurrency}"
    )
    local = run_sync(write_config(out / "local.json", facts, str(out), args.concurrency), fresh=True)
    print(
        f"(a) local folder: {local['wall']:.2f} s wall, {local['cpu']:.2f} s CPU, {local['rss'] / 1e6:.0f} MB "
        f"peak RSS; manifests read in {read_seconds(local):.2f} s"
    )
    with Nginx(out, workers=1) as nginx:
        remote = run_sync(write_config(out / "nginx.json", facts, nginx.url, args.concurrency), fresh=True)
        print(
            f"(b) over HTTP (nginx): {remote['wall']:.2f} s wall = {remote['wall'] / local['wall']:.2f} x (a) "
            f"[<= 1.5], {remote['cpu']:.2f} s CPU, {remote['rss'] / 1e6:.0f} MB = "
            f"{remote['rss'] / local['rss']:.2f} x (a) [<= 1.1]; manifests read in {read_seconds(remote):.2f} s "
            f"({remote['sizes'] / read_seconds(remote):,.0f}/s, while the listing is written)"
        )
        urls = [f"{nginx.url}/{path}" for path in manifests[:30_000]]
        bare = bare_loop(urls, concurrency)
        ours = remote["sizes"] / read_seconds(remote)
        # A sync whose listing is there but whose sizes are not (one stopped during its size
        # phase): the manifests alone, not overlapping the listing's CPU work.
        _forget_sizes(out / "nginx.sqlite")
        alone = run_sync(out / "nginx.json", fresh=False)
        alone_rate = alone["sizes"] / alone["phases"]["sizes"]
        print(
            f"(c) bare GET loop, {concurrency} at once: {bare:,.0f}/s; the sync's manifest reads reached "
            f"{ours / bare:.0%} of it during the listing, {alone_rate / bare:.0%} in a size phase alone "
            f"({alone_rate:,.0f}/s, recording included) [>= 80 %]"
        )
        noop = run_sync(out / "nginx.json", fresh=False)
        print(f"(f) no-op re-sync over HTTP: {noop['wall']:.2f} s in the process [<= 0.5 s]")
        port = free_port()
        log = out / "delayproxy.log"
        proxy = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "delayproxy.py"),
                "--port",
                str(port),
                "--upstream",
                nginx.url.removeprefix("http://"),
                "--delay",
                str(args.delay),
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "wb"),  # noqa: SIM115
        )
        try:
            wait_for_port(port, proxy, log)
            slow_url = f"http://127.0.0.1:{port}"
            slow = run_sync(write_config(out / "slow.json", facts, slow_url, args.concurrency), fresh=True)
            slow_rate = slow["sizes"] / read_seconds(slow)
            ceiling = concurrency / args.delay
            print(
                f"(d) through a {args.delay * 1000:.0f} ms delay: {slow['wall']:.1f} s wall [<= 60 s]; manifests "
                f"read in {read_seconds(slow):.1f} s, {slow_rate:,.0f}/s = {slow_rate / ceiling:.0%} "
                f"of concurrency / delay ({ceiling:,.0f}/s) [>= 80 %]"
            )
            slow_bare = bare_loop([f"{slow_url}/{path}" for path in manifests[:10_000]], concurrency)
            print(
                f"(e) bare GET loop through the delay: {slow_bare:,.0f}/s = {slow_bare / ceiling:.0%} of "
                f"concurrency / delay; the sync reached {slow_rate / slow_bare:.0%} of the loop"
            )
        finally:
            proxy.terminate()
            proxy.wait(timeout=10)


if __name__ == "__main__":
    main()
