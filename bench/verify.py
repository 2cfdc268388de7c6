"""``cachedex verify`` benchmark: existence checks and --deep checksums, against bare loops.

Generates (once, under bench/out/verify/) an unsigned v3 mirror of N listed specs with
small binaries (default 20,000 of 1 kB) and one of M large binaries (default 64 of
8 MB), serves them with Debian's nginx on 127.0.0.1, and measures in one run:

  (a) existence checks over HTTP: verify's HEAD of every binary (``verify_io.sizes``,
      through the HttpClient), checks per second
  (b) a minimal concurrent HEAD loop of the same URLs (pycurl's multi interface, the
      same concurrency): (a) / (b)                                        target >= 80 %
  (c) existence checks in the local folder (stat)                         target >= 20,000/s
  (d) the whole ``verify`` of the N-spec mirror from the folder and over HTTP (index,
      manifests, binaries, spec blobs, unindexed), specs per second
  (e) --deep from the folder: MB/s of ``verify_io.checksums`` against ``cat`` of the same
      files to /dev/null, both with the files in the page cache, and both with the files
      evicted first (posix_fadvise DONTNEED); and coreutils ``sha256sum``  target >= 80 %
  (f) --deep over HTTP from nginx, MB/s
  (g) gpg: clearsigned manifests verified per second, 1 and 4 at once (a key made now)

    python bench/verify.py [--specs N] [--big M] [--big-mb MB] [--concurrency C]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bare_curl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.helpers import make_config  # noqa: E402
from tests.servers import Nginx  # noqa: E402

from cachedex.config import HttpOptions  # noqa: E402
from cachedex.demo.mirrorgen import make_node, write_mirror  # noqa: E402
from cachedex.ingest.http import HttpClient  # noqa: E402
from cachedex.ingest.local_source import LocalSource  # noqa: E402
from cachedex.ingest.manifests import read_clearsigned  # noqa: E402
from cachedex.ingest.sources import HttpSource  # noqa: E402
from cachedex.ingest.verify_io import checksums, sizes  # noqa: E402

OUT = HERE / "out" / "verify"


def generate(folder: Path, count: int, size: int) -> list[tuple[str, str, str]]:
    """A v3 mirror of ``count`` listed specs with binaries of ``size`` bytes (made once);
    returns (hash, binary path, sha256) of each."""
    done = folder / "done"
    if not done.exists():
        nodes = [make_node(f"pkg{n:06d}", "1.0") for n in range(count)]
        write_mirror(
            folder,
            [(node, True) for node in nodes],
            layout=3,
            sizes=dict.fromkeys((n["hash"] for n in nodes), size),
            tarballs=True,
        )
        done.write_text("")
    binaries = []
    for manifest in (folder / "v3/manifests/spec").glob("*/*.spec.manifest.json"):
        import json

        data = json.loads(read_clearsigned(manifest.read_text()))
        record = next(r for r in data["data"] if r["mediaType"].startswith("application/vnd.spack.install"))
        dag_hash = manifest.name.removesuffix(".spec.manifest.json").rpartition("-")[2]
        binaries.append((dag_hash, f"blobs/sha256/{record['checksum'][:2]}/{record['checksum']}", record["checksum"]))
    return sorted(binaries)


def bare_head_loop(urls: list[str], concurrency: int) -> float:
    """HEADs per second of a minimal pycurl multi loop over ``urls``, ``concurrency`` at once."""
    return bare_curl.bare_loop(urls, concurrency, head=True, wait=0.01)[0]


def _evict(files: list[Path]) -> None:
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _cat(files: list[Path]) -> float:
    start = time.perf_counter()
    subprocess.run(["cat", *map(str, files)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _sha256sum(files: list[Path]) -> float:
    start = time.perf_counter()
    subprocess.run(["sha256sum", *map(str, files)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _deep_local(source: LocalSource, items: list[tuple[str, str, str]]) -> float:
    start = time.perf_counter()
    for dag_hash, result in checksums(source, [(h, p, "sha256") for h, p, _ in items]):
        expected = next(s for h, _p, s in items if h == dag_hash)
        if result.error is not None or result.digest != expected:
            raise SystemExit(f"deep: {dag_hash}: {result.error or 'checksum differs'}")
    return time.perf_counter() - start


def _whole_verify(url: str, tmp: Path, concurrency: int) -> tuple[float, int]:
    from cachedex.catalog import Catalog
    from cachedex.ingest.verify import verify

    config = make_config(tmp, [{"name": "b", "url": url}], concurrency=concurrency, retries=0)
    for stale in tmp.glob("cat.sqlite*"):
        stale.unlink()
    start = time.perf_counter()
    with Catalog(config.catalog) as catalog:
        report = verify(config, catalog)
    seconds = time.perf_counter() - start
    if not report.ok:
        raise SystemExit(f"verify found problems: {report.tags[0].mirrors[0].problems[:3]}")
    return seconds, report.tags[0].mirrors[0].listed


def _gpg_rate(count: int) -> tuple[float, float]:
    from concurrent.futures import ThreadPoolExecutor

    from tests.ingest.test_signatures import TestKey

    from cachedex.ingest.signatures import Keyring

    with tempfile.TemporaryDirectory() as home:
        key = TestKey(Path(home) / "key")
        try:
            texts = [key.sign(f'{{\n"version":3,\n"n":{n}\n}}').encode() for n in range(count)]
        finally:
            key.close()
        with Keyring() as keyring:
            keyring.add(key.public.encode())
            start = time.perf_counter()
            assert all(keyring.verify(t).status == "signed" for t in texts)
            serial = count / (time.perf_counter() - start)
            start = time.perf_counter()
            with ThreadPoolExecutor(4) as pool:
                assert all(c.status == "signed" for c in pool.map(keyring.verify, texts))
            parallel = count / (time.perf_counter() - start)
    return serial, parallel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=20_000)
    parser.add_argument("--big", type=int, default=64)
    parser.add_argument("--big-mb", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=HttpOptions().concurrency)
    args = parser.parse_args()
    small = generate(OUT / f"small-{args.specs}", args.specs, 1000)
    big = generate(OUT / f"big-{args.big}x{args.big_mb}", args.big, args.big_mb << 20)
    print(f"mirrors: {len(small):,} binaries of 1 kB; {len(big)} of {args.big_mb} MB")

    local = LocalSource(OUT / f"small-{args.specs}", str(OUT / f"small-{args.specs}"))
    start = time.perf_counter()
    assert all(isinstance(size, int) for _h, size in sizes(local, [(h, p) for h, p, _ in small]))
    print(f"(c) existence in the folder: {len(small) / (time.perf_counter() - start):,.0f}/s  (target >= 20,000/s)")

    with Nginx(OUT, workers=2) as nginx, tempfile.TemporaryDirectory() as tmp:
        base = f"{nginx.url}/small-{args.specs}"
        urls = [f"{base}/{p}" for _h, p, _s in small]
        bare_head_loop(urls[:2000], args.concurrency)  # warm up nginx and the page cache
        options = HttpOptions(concurrency=args.concurrency, retries=0)
        with HttpClient(options) as client:
            source = HttpSource(base, client)
            list(sizes(source, [(h, p) for h, p, _ in small[:2000]]))
            rates = []
            for _round in range(3):
                start = time.perf_counter()
                results = list(sizes(source, [(h, p) for h, p, _ in small]))
                rates.append(len(results) / (time.perf_counter() - start))
                assert all(isinstance(size, int) for _h, size in results)
        bare = [bare_head_loop(urls, args.concurrency) for _ in range(3)]
        ours, loop = max(rates), max(bare)
        shown = " ".join(f"{rate:,.0f}" for rate in rates)
        print(f"(a) existence over HTTP (HEAD, {args.concurrency} at once): {ours:,.0f}/s (best of 3: {shown})")
        print(f"(b) bare pycurl HEAD loop, same URLs: {loop:,.0f}/s -> (a)/(b) = {ours / loop:.0%}  (target >= 80 %)")

        seconds, listed = _whole_verify(str(OUT / f"small-{args.specs}"), Path(tmp), args.concurrency)
        print(
            f"(d) whole verify from the folder: {listed:,} specs in {seconds:.2f} s = {listed / seconds:,.0f} specs/s"
        )
        seconds, listed = _whole_verify(base, Path(tmp), args.concurrency)
        print(f"(d) whole verify over HTTP: {listed:,} specs in {seconds:.2f} s = {listed / seconds:,.0f} specs/s")

        folder = OUT / f"big-{args.big}x{args.big_mb}"
        files = [folder / p for _h, p, _s in big]
        total = sum(f.stat().st_size for f in files) / 1e6
        source_big = LocalSource(folder, str(folder))
        _cat(files)
        warm_cat = total / _cat(files)
        warm_deep = total / _deep_local(source_big, big)
        _evict(files)
        cold_cat = total / _cat(files)
        _evict(files)
        cold_deep = total / _deep_local(source_big, big)
        print(f"(e) --deep from the folder, {total:,.0f} MB in the page cache: {warm_deep:,.0f} MB/s, ", end="")
        print(f"cat {warm_cat:,.0f} MB/s -> {warm_deep / warm_cat:.0%}")
        print(f"(e) --deep from the folder, evicted first: {cold_deep:,.0f} MB/s, ", end="")
        print(f"cat {cold_cat:,.0f} MB/s -> {cold_deep / cold_cat:.0%}  (target >= 80 %)")
        summed = total / _sha256sum(files)
        print(f"    coreutils sha256sum of the same files: {summed:,.0f} MB/s -> --deep: {warm_deep / summed:.1f} x")
        with HttpClient(options) as client:
            source = HttpSource(f"{nginx.url}/big-{args.big}x{args.big_mb}", client)
            start = time.perf_counter()
            for dag_hash, result in checksums(source, [(h, p, "sha256") for h, p, _ in big]):
                assert result.error is None and result.digest == next(s for h, _p, s in big if h == dag_hash)
            print(f"(f) --deep over HTTP from nginx: {total / (time.perf_counter() - start):,.0f} MB/s")
    serial, parallel = _gpg_rate(200)
    print(f"(g) gpg verifications: {serial:,.0f}/s one at a time, {parallel:,.0f}/s four at once")
    hasher = __import__("hashlib").sha256()
    block = bytes(64 << 20)
    start = time.perf_counter()
    hasher.update(block)
    print(f"    (sha256 of one core on this machine: {64 * 1.048576 / (time.perf_counter() - start):,.0f} MB/s)")


if __name__ == "__main__":
    main()
