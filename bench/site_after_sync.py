"""A site build after a nightly sync that changed 1 % of the specs (issue 18), on
``ingest.py``'s big tag: it must cost at most 10 % of a whole-site build.

Copies bench/out/ingest/catalog.sqlite (250,000 records, 10,000 packages, 40 stacks) to
bench/out/site_after_sync/, then measures, in one run:

  (a) a whole-site build over the site folder (``--site``, default bench/out/site, which
      ``site.py`` builds), once to bring it to the catalog (not timed: after a code
      change it rewrites every page), then again comparing every page (``full=True``):
      the reference; it records what its pages were made from
  (b) a second sync of the tag, 1 % apart: 2,500 listed specs leave the root mirror and
      2,500 new ones come, each a version bump of one that left, with its dependencies
      and a known size
  (c) the site build after it: seconds, pages made, files written; and what share of
      (a) it took
  (c') with --repeat N: (c) N times more, each after bringing the site back to the
      catalog before the sync (not timed: a whole build, since the specs that came are
      not in that catalog); to compare two versions of the code, run this once with each
  (c'') with --chain N: N more syncs of the same size, one after another, each followed
      by a build (no whole build in between: each build finds only the last sync's
      changes); with --changed 10, the fixed cost of a sync that changes a tag

  (d) with --floor: the files (c) wrote (those changed since it began), written again
      with nothing else to do, as a build writes them (a temporary file renamed over
      each, its old file removed by a thread) by as many processes: what (c) cannot go
      below without writing fewer files or bytes

``--changed`` sets how many specs each sync replaces (default 2,500: 1 %).

    python bench/site_after_sync.py [--site DIR] [--tag TAG] [--repeat N] [--chain N] [--changed N] [--floor]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cachedex.publish.site import SiteReport

HERE = Path(__file__).resolve().parent
CHANGED = 2_500


def second_sync(path: Path, tag: str, *, dependencies: bool = True, changed: int = CHANGED) -> int:
    """Replace ``changed`` specs (default 1 %) of the tag's root listing by version bumps
    of the specs that left (with the dependencies of the spec each replaces, or none).
    ``changes.py`` uses it too."""
    from cachedex.catalog import Catalog
    from cachedex.values import Dependency, SpecRecord

    with Catalog(path) as catalog:
        rows = list(catalog.listed_rows(tag))
        members = dict(catalog.members_of(tag, "root"))
        gone = rows[:: len(rows) // changed][:changed]
        new = [
            SpecRecord(
                hash=base64.b32encode(hashlib.sha256(row.hash.encode()).digest()).decode().lower()[:32],
                name=row.name,
                version=row.version + ".1",
                platform=row.platform,
                os=row.os,
                target=row.target,
                compiler=row.compiler,
                variants=(),
                dependencies=tuple(
                    Dependency(edge.hash, edge.name, edge.deptypes, edge.virtuals)
                    for edge in (catalog.edges_of(row.hash) if dependencies else ())
                ),
                in_buildcache=True,
                external=False,
                node=b"{}",
            )
            for row in gone
        ]
        for row in gone:
            del members[row.hash]
        members.update({r.hash: True for r in new})
        root = catalog.mirror_state(tag, "root")
        assert root is not None
        with catalog.writing_tag(tag) as writer:
            writer.add_specs(new, {r.hash: 1_000_000 for r in new})
            writer.replace_mirror(
                "root",
                root.url,
                layout=root.layout or 3,
                db_version=root.db_version or 8,
                checksum="bench-second-sync",
                etag=None,
                last_modified=None,
                fetched_at=time.time(),
                members=members,
            )
        return len(new)


def _build(catalog_path: Path, site: Path) -> tuple[float, SiteReport]:
    """A site build over ``site`` from the catalog: (seconds, its report)."""
    from cachedex.catalog import Catalog
    from cachedex.publish.site import write_site

    with Catalog(catalog_path) as catalog:
        started = time.perf_counter()
        report = write_site(catalog, site)
        return time.perf_counter() - started, report


#: What (d) writes, which its forked writers inherit: (path, bytes) of each file, and the
#: site folder (where each writer's old files wait for its thread to remove them).
_FILES: list[tuple[str, bytes]] = []
_SITE: list[Path] = []


def _write_share(share: tuple[int, int]) -> None:
    from cachedex.publish.files import Replacer, write_atomically

    part, parts = share
    replacer = Replacer(str(_SITE[0]))
    try:
        for path, data in _FILES[part::parts]:
            write_atomically(path, data, replacer.replace)
    finally:
        replacer.close()  # (waits for its thread to remove the old files, as a build does)


def _files_alone(site: Path, since: float) -> tuple[float, int, int]:
    """(d): the files under ``site`` changed since ``since``, written again by as many
    processes as a build uses: (seconds, files, bytes)."""
    import multiprocessing

    from cachedex.publish.parallel import cpu_workers

    _FILES[:] = files = [
        (str(path), path.read_bytes())
        for path in sorted(site.rglob("*"))
        if path.is_file() and not path.is_symlink() and path.stat().st_mtime >= since
    ]
    _SITE[:] = [site]
    parts = cpu_workers()
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(parts) as pool:
        pool.map(_write_share, [(part, parts) for part in range(parts)])
    return time.perf_counter() - started, len(files), sum(len(data) for _, data in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=HERE / "out" / "ingest" / "catalog.sqlite")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "site_after_sync")
    parser.add_argument("--site", type=Path, default=HERE / "out" / "site")
    parser.add_argument("--tag", default="bench")
    parser.add_argument("--repeat", type=int, default=0, help="measure (c) N times more")
    parser.add_argument("--chain", type=int, default=0, help="N more syncs, each followed by a build")
    parser.add_argument("--changed", type=int, default=CHANGED, help="specs each sync replaces")
    parser.add_argument("--floor", action="store_true", help="(d): the files (c) wrote, written again alone")
    args = parser.parse_args()

    from cachedex.catalog import Catalog
    from cachedex.publish.site import write_site

    if not args.source.exists():
        sys.exit(f"{args.source}: run bench/ingest.py first")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "catalog.sqlite"
    shutil.copy(args.source, path)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)

    with Catalog(path) as catalog:
        started = time.perf_counter()
        ready = write_site(catalog, args.site, on_progress=lambda text: print(f"  {text}", end="\r"))
        print(f"    the site brought to the catalog: {time.perf_counter() - started:.1f} s, {ready.written:,} written")
        started = time.perf_counter()
        full = write_site(catalog, args.site, full=True, on_progress=lambda text: print(f"  {text}", end="\r"))
        full_seconds = time.perf_counter() - started
    print(f"(a) whole site, every page compared: {full_seconds:.1f} s, {full.pages:,} pages, {full.written:,} written")

    before_sync = args.out / "before-sync.sqlite"  # (c') brings the site back to it
    if args.repeat:
        before_sync.unlink(missing_ok=True)
        with sqlite3.connect(path) as source, sqlite3.connect(before_sync) as copy:
            source.backup(copy)
        source.close()
        copy.close()
    changed = second_sync(path, args.tag, changed=args.changed)
    print(f"(b) second sync: {changed:,} specs left the root mirror, {changed:,} came")

    for run in range(1 + args.repeat):
        if run:
            with Catalog(before_sync) as catalog:
                write_site(catalog, args.site)
        began = time.time() - 1  # (file times may lag the clock by a tick)
        seconds, after = _build(path, args.site)
        print(
            f"(c) site after the sync: {seconds:.2f} s = {100 * seconds / full_seconds:.1f} % of (a); "
            f"only what changes reach: {after.changed_only}; {after.pages:,} pages made, "
            f"{after.written:,} files written, {after.removed:,} removed (target: <= 10 %)"
        )
        if args.floor and not run:
            alone, files, size = _files_alone(args.site, began)
            print(
                f"(d) the {files:,} files (c) wrote ({size / 1e6:,.0f} MB), written again alone: "
                f"{alone:.2f} s = {100 * alone / full_seconds:.1f} % of (a), {100 * alone / seconds:.0f} % of (c)"
            )
    chained = []
    for _ in range(args.chain):
        second_sync(path, args.tag, changed=args.changed)
        seconds, after = _build(path, args.site)
        chained.append(seconds)
        print(
            f"(c'') site after one more sync of {changed:,} specs: {chained[-1]:.2f} s = "
            f"{100 * chained[-1] / full_seconds:.1f} % of (a); "
            f"{after.pages:,} pages made, {after.written:,} files written"
        )
    if chained:
        print(f"(c'') median of {len(chained)}: {statistics.median(chained):.2f} s")
    for leftover in args.out.glob("before-sync.sqlite*"):
        leftover.unlink()


if __name__ == "__main__":
    main()
