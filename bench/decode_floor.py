"""What decoding a tag's root index costs when most of its specs are known already.

The tenth of many overlapping tags (``many_tags.py``) decodes its whole index although
80 % of its specs are in the catalog. Could it skip building the records it does not
need? This times, on one index blob (the largest under ``--out``, by default
``ingest.py``'s root index), three decodes with the garbage collector off, each
``--runs`` times:

  (a) ``ingest.py``'s bare typed decode: every record's node built
  (s) the sync's own decode (``cachedex.ingest.index.decode_index``: each node's fields
      a record needs, the node itself kept as raw bytes, records counted)
  (b) each record's flag decoded and its spec kept as raw bytes (msgspec.Raw): what a
      decode that builds only the specs it does not know would cost, at least
  (c) each record kept as raw bytes: JSON parsed, nothing built

and prints each one's median and its ratio to (a). Parsing the JSON is the floor of all
three: if (b) is not much under (a), skipping the known specs' nodes cannot bring the
tenth tag's sync near a fraction of the first's.

    python bench/decode_floor.py [--out bench/out/ingest] [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from cachedex.ingest.index import decode_index
from ingest import _File  # (this script's folder is on sys.path)

HERE = Path(__file__).resolve().parent


class _FlagOnly(msgspec.Struct):
    spec: msgspec.Raw
    in_buildcache: bool = False


class _FlagsDb(msgspec.Struct):
    installs: dict[str, _FlagOnly]


class _Flags(msgspec.Struct):
    database: _FlagsDb


class _RawDb(msgspec.Struct):
    installs: dict[str, msgspec.Raw]


class _Raw(msgspec.Struct):
    database: _RawDb


DECODERS: dict[str, type] = {"(a) typed": _File, "(b) flags, specs raw": _Flags, "(c) records raw": _Raw}


def decoders() -> dict[str, Callable[[bytes], object]]:
    """The decodes compared, by name."""
    made: dict[str, Callable[[bytes], object]] = {
        name: msgspec.json.Decoder(kind).decode for name, kind in DECODERS.items()
    }
    return {"(a) typed": made.pop("(a) typed"), "(s) the sync's": lambda d: decode_index(d, url="-"), **made}


def records(data: bytes) -> dict[str, int]:
    """{decoder: records it decoded}: each must find them all, or its time says nothing."""
    found = {}
    for name, decode in decoders().items():
        decoded: Any = decode(data)
        found[name] = len(decoded.records if hasattr(decoded, "records") else decoded.database.installs)
    return found


def time_decodes(data: bytes, runs: int) -> dict[str, list[float]]:
    """{decoder: seconds of each run}, the decoders taken in turn each run."""
    made = decoders()
    times: dict[str, list[float]] = {name: [] for name in made}
    for _ in range(runs):
        for name, decode in made.items():
            gc.disable()
            start = time.perf_counter()
            decoded = decode(data)
            times[name].append(time.perf_counter() - start)
            del decoded
            gc.enable()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "ingest")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    blobs = sorted(args.out.glob("*/blobs/sha256/*/*"), key=lambda p: p.stat().st_size)
    if not blobs:
        raise SystemExit(f"no index blob under {args.out}: run bench/ingest.py first")
    data = blobs[-1].read_bytes()
    print(f"{blobs[-1]}: {len(data) / 1e6:.1f} MB, {args.runs} runs each")
    times = time_decodes(data, args.runs)
    typed = statistics.median(times["(a) typed"])
    for name, seconds in times.items():
        median = statistics.median(seconds)
        shown = " / ".join(f"{s:.3f}" for s in seconds)
        print(f"{name:22} median {median:.3f} s ({shown}); {median / typed:.2f} x (a)")


if __name__ == "__main__":
    main()
