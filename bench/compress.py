"""Gzip of what a site publishes and a server answers: the standard library's
``gzip.compress`` against ``cachedex.publish.gzipped.gzip_bytes`` (zlib-ng), on the
files a build after a sync compresses again: the biggest JSON twins of a site (a hub
library's spec page lists its tens of thousands of dependents) and each tag page's data.

Reads the site ``site.py`` builds (``--site``, default bench/out/site), then for each
file and level (6: the twins and a server's big answers; 3: its small ones, cut into
the first 300 kB of each file) prints the best of ``--runs`` timings of each, their
ratio and the sizes; and the totals over the files.

    python bench/compress.py [--site DIR] [--files N] [--runs N]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SMALL = 300_000  #: a server's small answer (a search page, a package): the first bytes of each file


def _best(compress: Callable[[bytes, int], bytes], data: bytes, level: int, runs: int) -> tuple[float, int]:
    """(the fastest of ``runs`` timings in seconds, the compressed size)."""
    best, size = float("inf"), 0
    for _ in range(runs):
        started = time.perf_counter()
        size = len(compress(data, level))
        best = min(best, time.perf_counter() - started)
    return best, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=HERE / "out" / "site")
    parser.add_argument("--files", type=int, default=6, help="the biggest spec twins taken")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from cachedex.publish.gzipped import gzip_bytes

    if not (args.site / "specs").is_dir():
        sys.exit(f"{args.site}: run bench/site.py first")
    twins = sorted((args.site / "specs").glob("*/*.json"), key=lambda path: path.stat().st_size, reverse=True)
    files = twins[: args.files] + sorted((args.site / "tags").glob("*/index.json"))

    def stdlib(data: bytes, level: int) -> bytes:
        return gzip.compress(data, compresslevel=level, mtime=0)

    totals = {"stdlib": 0.0, "zlib-ng": 0.0}
    for level, cut in ((6, None), (3, SMALL)):
        print(f"level {level}{'' if cut is None else f', the first {cut:,} bytes of each'}:")
        for path in files:
            data = path.read_bytes()[:cut]
            (old, old_size), (new, new_size) = (_best(f, data, level, args.runs) for f in (stdlib, gzip_bytes))
            assert gzip.decompress(gzip_bytes(data, level)) == data
            totals["stdlib"] += old
            totals["zlib-ng"] += new
            print(
                f"  {path.relative_to(args.site)} ({len(data):,} bytes): stdlib {1000 * old:.1f} ms, "
                f"{old_size:,} bytes; zlib-ng {1000 * new:.1f} ms, {new_size:,} bytes: "
                f"{new / old:.2f} x the time, {new_size / old_size:.3f} x the size"
            )
    print(
        f"all: stdlib {totals['stdlib']:.3f} s, zlib-ng {totals['zlib-ng']:.3f} s "
        f"({totals['zlib-ng'] / totals['stdlib']:.2f} x)"
    )


if __name__ == "__main__":
    main()
