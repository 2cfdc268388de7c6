"""OCI benchmark: binary sizes from a registry, against a bare GET loop of the same URLs.

Pushes (once, kept under bench/out/oci/) a synthetic Spack build cache of 20,000 specs to
Debian's docker-registry on 127.0.0.1 over the distribution API (``tests/registry.py``:
an image per spec, its dependencies' tarballs then its own as layers, a config holding
the spec, and ``index.spack``). Then, with the registry running on the kept storage,
measures in one run, each in turn ``--rounds`` times:

  (a) a bare concurrent GET loop of every spec's manifest URL (pycurl's multi interface,
      the Accept header a registry needs, the same concurrency as cachedex's)
  (b) ``OciSource.read_many`` over ``size_requests``, each manifest decoded to its size
      by ``OciSource.decode_size``                                      target: >= 80 % of (a)
  (c) ``HttpClient.map`` alone over the same requests, decoding nothing: the floor of (b),
      what cachedex's HTTP engine costs whatever the source

The registry is the bottleneck here (it shares the machine's cores with the client), so
each figure's CPU per manifest, in this process, is printed beside its rate.

    python bench/oci_sizes.py [--specs N] [--concurrency N] [--rounds N]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import bare_curl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.registry import Registry, expected_tag, push_spack_cache  # noqa: E402

#: Bumped when the pushed data changes, so that a kept registry is pushed again.
GENERATOR = 1
REPOSITORY = "bench/cache"
ACCEPT = "Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"


def synthetic_index(specs: int, seed: int = 11) -> dict[str, Any]:
    """A Database of ``specs`` listed records: ``pkg-NNNNN`` packages, each linking 0-3 of
    the first 1 % (the "core" ones, which link nothing), as ``bench/ingest.py`` layers them."""
    rng = random.Random(seed)
    hashes = [base64.b32encode(rng.randbytes(20)).decode().lower()[:32] for _ in range(specs)]
    core = max(1, specs // 100)
    installs: dict[str, Any] = {}
    for i, dag_hash in enumerate(hashes):
        deps = [] if i < core else sorted(set(rng.sample(range(core), min(core, rng.randint(0, 3)))))
        node = {
            "name": f"pkg-{i % (specs // 2 or 1):05d}",
            "version": f"{1 + i % 7}.{i % 13}.{i % 5}",
            "arch": {"platform": "linux", "platform_os": "ubuntu24.04", "target": "x86_64_v3"},
            "namespace": "builtin",
            "hash": dag_hash,
            "dependencies": [
                {
                    "name": f"pkg-{d:05d}",
                    "hash": hashes[d],
                    "parameters": {"deptypes": ["build", "link"], "virtuals": []},
                }
                for d in deps
            ],
        }
        installs[dag_hash] = {"spec": node, "ref_count": 0, "in_buildcache": True}
    return {"database": {"version": "8", "installs": installs}}


def bare_loop(urls: list[str], concurrency: int) -> tuple[float, float]:
    """GETs per second of a minimal pycurl multi loop over ``urls``, ``concurrency`` at once,
    with the Accept header a registry wants, and this process's CPU seconds per GET."""
    return bare_curl.bare_loop(urls, concurrency, headers=[ACCEPT])


def read_sizes(
    host: str, specs: list[tuple[str, str, str]], concurrency: int, expected: dict[str, int]
) -> tuple[float, float]:
    """Sizes per second of ``OciSource.read_many`` over ``size_requests`` (a fresh client),
    and this process's CPU seconds per size (both threads: the caller's and the engine's)."""
    from cachedex.config import HttpOptions, Limits
    from cachedex.ingest.http import HttpClient
    from cachedex.ingest.oci import OciSource

    with HttpClient(HttpOptions(concurrency=concurrency)) as client:
        source = OciSource(f"oci+http://{host}/{REPOSITORY}", client)
        refused: list[str] = []
        cpu = time.process_time()
        start = time.perf_counter()
        results = dict(
            source.read_many(source.size_requests(specs, refused), OciSource.decode_size, limit=Limits().manifest_bytes)
        )
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
    if refused or results != expected:
        wrong = next((h for h in expected if results.get(h) != expected[h]), None)
        raise SystemExit(f"read_many: {len(refused)} refused; {wrong}: {results.get(wrong or '')!r}")
    return len(results) / elapsed, cpu / len(results)


def client_map(urls: list[str], concurrency: int) -> tuple[float, float]:
    """GETs per second of ``HttpClient.map`` over ``urls`` (a no-op decode), and CPU per GET."""
    from cachedex.config import HttpOptions
    from cachedex.ingest.http import HttpClient, Request

    with HttpClient(HttpOptions(concurrency=concurrency)) as client:
        cpu = time.process_time()
        start = time.perf_counter()
        requests = ((n, Request(url, headers=[ACCEPT], limit=1_000_000)) for n, url in enumerate(urls))
        done = sum(1 for _key, value in client.map(requests, lambda response: response.status) if value == 200)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
    if done != len(urls):
        raise SystemExit(f"HttpClient.map: {len(urls) - done} failed")
    return done / elapsed, cpu / done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=None, help="http.concurrency (default: cachedex's)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "oci")
    args = parser.parse_args()
    from cachedex.config import HttpOptions

    concurrency = args.concurrency or HttpOptions().concurrency
    out: Path = args.out
    storage = out / "registry"
    facts_path = out / "facts.json"
    facts = json.loads(facts_path.read_text()) if facts_path.exists() else {}
    index = synthetic_index(args.specs)
    specs = [(h, r["spec"]["name"], r["spec"]["version"]) for h, r in index["database"]["installs"].items()]
    if facts.get("specs") != args.specs or facts.get("generator") != GENERATOR:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        with Registry(storage) as registry:
            print(f"pushing {args.specs:,} spec images to docker-registry on {registry.host} ...", flush=True)
            start = time.perf_counter()
            pushed = push_spack_cache(registry.url, REPOSITORY, index, seed=1, workers=8)
            print(f"  pushed in {time.perf_counter() - start:.0f} s", flush=True)
        facts = {"specs": args.specs, "generator": GENERATOR, "sizes": pushed.sizes}
        facts_path.write_text(json.dumps(facts))
    sizes: dict[str, int] = facts["sizes"]
    with Registry(storage) as registry:
        urls = [f"{registry.url}/v2/{REPOSITORY}/manifests/{expected_tag(n, v, h)}" for h, n, v in specs]
        print(f"{len(urls):,} spec manifests on docker-registry {registry.host}; concurrency {concurrency}")
        bare_loop(urls[:2000], concurrency)  # warm the registry's caches and the page cache
        bares: list[tuple[float, float]] = []
        ours: list[tuple[float, float]] = []
        floors: list[tuple[float, float]] = []
        for round_ in range(1, args.rounds + 1):
            bares.append(bare_loop(urls, concurrency))
            ours.append(read_sizes(registry.host, specs, concurrency, sizes))
            floors.append(client_map(urls, concurrency))
            (bare, bare_cpu), (rate, cpu), (floor, floor_cpu) = bares[-1], ours[-1], floors[-1]
            print(
                f"  round {round_}: (a) bare loop {bare:,.0f}/s, {bare_cpu * 1e6:.0f} us CPU each; "
                f"(b) OciSource.read_many {rate:,.0f}/s, {cpu * 1e6:.0f} us = {rate / bare:.0%} of (a); "
                f"(c) HttpClient.map {floor:,.0f}/s, {floor_cpu * 1e6:.0f} us",
                flush=True,
            )
        best_bare, best, best_floor = (max(r for r, _ in runs) for runs in (bares, ours, floors))
        cpus = [min(c for _, c in runs) * 1e6 for runs in (bares, ours, floors)]
        print(
            f"best of {args.rounds}: (a) {best_bare:,.0f} GETs/s, (b) {best:,.0f} sizes/s = {best / best_bare:.0%} "
            f"of (a) [>= 80 %], (c) {best_floor:,.0f}/s; CPU per manifest in the client: (a) {cpus[0]:.0f} us, "
            f"(b) {cpus[1]:.0f} us, (c) {cpus[2]:.0f} us"
        )


if __name__ == "__main__":
    main()
