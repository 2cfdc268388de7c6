"""The live comparison of two 250,000-record tags (issue 15): ``/diff?old=&new=``.

Copies bench/out/changes/catalog.sqlite (``changes.py``'s: ``ingest.py``'s tag and a
second sync of it 1 % apart) to bench/out/diff_tags/, and writes, once, a second tag
``bench-before`` listing what ``bench`` listed before that sync (every stack). Then
times, in one process, the comparison page of the two (``compare_page``, rendered) and
the API's diff (``diff_tags``), each the best of three.

Target (issue 15): at most 1 s.

    python bench/diff_tags.py
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BEFORE = "bench-before"


def _write_before(path: Path, tag: str) -> None:
    """A tag listing what ``tag`` listed before its last sync, stack by stack."""
    from cachedex.catalog import Catalog

    with Catalog(path) as catalog:
        if BEFORE in catalog.tag_names():
            return
        last = max(catalog.tag_syncs(tag, limit=1_000), key=lambda s: s.started_at)
        then = {stack: dict(listing) for stack, listing in catalog.tag_members(tag).items()}
        for stack, dag_hash, name, version, change in reversed(catalog.changes_since(tag, last.started_at - 1)):
            if change > 0:
                then[stack].pop(dag_hash, None)
            else:
                then[stack][dag_hash] = (name, version)
        with catalog.writing_tag(BEFORE) as writer:
            for stack, listing in then.items():
                writer.remember_ids(catalog.spec_ids(listing))
                writer.replace_mirror(
                    stack, f"/{stack}", layout=3, db_version=8, checksum=stack, etag=None,
                    last_modified=None, fetched_at=0.0, members=dict.fromkeys(listing, True),
                )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=HERE / "out" / "changes" / "catalog.sqlite")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "diff_tags")
    parser.add_argument("--tag", default="bench")
    args = parser.parse_args()
    target = args.out / "catalog.sqlite"
    if not target.exists():
        if not args.source.exists():
            raise SystemExit(f"{args.source} is missing: run bench/changes.py first")
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copy(args.source, target)
    _write_before(target, args.tag)

    from cachedex.catalog import Catalog
    from cachedex.diff import diff_tags
    from cachedex.publish.changes import compare_page
    from cachedex.publish.render import render

    with Catalog(target) as catalog:
        for what, run in (
            ("compare page (rendered)", lambda: len(render(compare_page(catalog, BEFORE, args.tag, live=True)))),
            ("API diff", lambda: len(diff_tags(catalog, BEFORE, args.tag).stacks)),
        ):
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - start)
            print(f"{what}, {BEFORE} against {args.tag}: {best:.2f} s   [target <= 1 s]")
        diff = diff_tags(catalog, BEFORE, args.tag)
        print(f"({sum(len(s.added) + len(s.removed) for s in diff.stacks):,} specs differ)")


if __name__ == "__main__":
    sys.exit(main())
