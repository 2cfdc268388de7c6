"""Change pages, feeds, coverage and badges (issue 15) on ``ingest.py``'s big tag.

Copies bench/out/ingest/catalog.sqlite (250,000 records, 10,000 packages, 40 stacks) to
bench/out/changes/, and writes a second sync of the tag 1 % apart: 2,500 listed specs
leave the root mirror and 2,500 new ones (a version bump of the same packages) come.
Then measures, in one run:

  (a) what the site build adds for the tag: its change page, feed, coverage page and
      badge (``write_changes``), the tag page's "recent changes" block, the all-tags
      feed, a badge per package, and "first seen" on every spec page (the history read
      once, then a lookup per page), against a whole-site build (``--site`` builds one
      here; else the figure of bench/README.md, 36.4 s)
  (b) the coverage page: bytes, gzipped
  (c) the live /diff of the tag with itself before the second sync (``since``)

Targets (issue 15): (a) at most 5 % of a whole-site build; (b) at most 1 MB gzipped;
(c) at most 1 s (issue 15 asks it of two 250,000-record tags).

    python bench/changes.py [--site]
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
README_SITE_SECONDS = 36.4


def _second_sync(path: Path, tag: str) -> None:
    """The second sync of ``site_after_sync.py``, its new specs without dependencies;
    once (a catalog copied earlier has it already)."""
    from cachedex.catalog import Catalog
    from site_after_sync import second_sync

    with Catalog(path) as catalog:
        if any(s.changes for s in catalog.tag_syncs(tag)):
            return
    second_sync(path, tag, dependencies=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=HERE / "out" / "ingest" / "catalog.sqlite")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "changes")
    parser.add_argument("--tag", default="bench")
    parser.add_argument("--site", action="store_true", help="also build the whole site, to compare with")
    args = parser.parse_args()

    from cachedex.catalog import Catalog
    from cachedex.diff import parse_since
    from cachedex.publish.badges import package_badge
    from cachedex.publish.changes import changes_page, since_page
    from cachedex.publish.coverage import coverage_page
    from cachedex.publish.feeds import all_tags_feed, tag_feed
    from cachedex.publish.first_seen import FirstSeenIndex, first_seen_html
    from cachedex.publish.recent_changes import history_from, keep_for_tag_page, recent_syncs
    from cachedex.publish.render import render
    from cachedex.publish.sitefiles import SiteWriter
    from cachedex.publish.spec_pages import spec_page

    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "catalog.sqlite"
    if not path.exists():
        print(f"copying {args.source} ...", flush=True)
        shutil.copyfile(args.source, path)
    _second_sync(path, args.tag)
    catalog = Catalog(path, readonly=True)
    (sync, *_) = [s for s in catalog.tag_syncs(args.tag) if s.changes]
    print(f"second sync: +{sync.added:,} -{sync.removed:,} specs in root, {sync.changes:,} changes")

    costs: dict[str, float] = {}
    held = catalog.held_hashes()
    with tempfile.TemporaryDirectory(dir=args.out) as scratch, history_from(catalog):
        writer = SiteWriter(Path(scratch))
        start = time.perf_counter()
        page = changes_page(catalog, args.tag, held=held)
        writer.page(page)
        writer.file("changes.atom", tag_feed(page))
        writer.flush()
        costs["change page and feed"] = time.perf_counter() - start
        start = time.perf_counter()
        writer.page(coverage_page(catalog, args.tag))
        writer.flush()
        costs["coverage page"] = time.perf_counter() - start
        start = time.perf_counter()
        keep_for_tag_page(page)
        recent_syncs(args.tag)
        costs["tag page's recent changes (from the change page)"] = time.perf_counter() - start
        start = time.perf_counter()
        all_tags_feed(catalog)
        costs["all-tags feed"] = time.perf_counter() - start
        start = time.perf_counter()
        badges = 0
        for name, tags in catalog.all_package_tags().items():
            for _tag, count in tags:
                writer.file(f"badges/{name.replace('/', '_')}.svg", package_badge(count))
                badges += 1
        costs[f"a badge per package ({badges:,} files)"] = time.perf_counter() - start
    start = time.perf_counter()
    index = FirstSeenIndex(catalog)
    costs["first seen: the history read once"] = time.perf_counter() - start
    pages = [spec_page(catalog, h) for h in sorted(held)[:: max(1, len(held) // 2_000)]]
    start = time.perf_counter()
    for spec in pages:  # what a spec page adds: its line, from the history read once
        first_seen_html(index.of(spec.spec.hash, spec.holders))
    per_page = (time.perf_counter() - start) / len(pages)
    costs[f"first seen on {len(held):,} spec pages ({per_page * 1e6:.0f} us a page)"] = per_page * len(held)
    start = time.perf_counter()
    for spec in pages[:50]:
        catalog.first_seen(spec.spec.hash)
    per_query = (time.perf_counter() - start) / 50
    print(
        f"(for comparison: first seen by one query a spec would cost {per_query * 1e3:.2f} ms a page, "
        f"{per_query * len(held):.0f} s for the site)"
    )

    site_seconds = README_SITE_SECONDS
    if args.site:
        from cachedex.publish.site import write_site

        target = args.out / "site"
        shutil.rmtree(target, ignore_errors=True)
        report = write_site(catalog, target)
        site_seconds = report.seconds
        print(f"whole site: {report.pages:,} pages in {site_seconds:.1f} s")
    total = sum(costs.values())
    print("(a) what the site build adds, in one process (the build shares spec pages among its workers):")
    for what, seconds in costs.items():
        print(f"    {what}: {seconds:.2f} s")
    print(
        f"    total {total:.2f} s = {100 * total / site_seconds:.1f} % of a whole-site build of {site_seconds:.1f} s"
        "   [target <= 5 %]"
    )

    page = coverage_page(catalog, args.tag)
    html = render(page).encode()
    print(
        f"(b) coverage page: {len(page.packages):,} packages, {len(html) / 1e6:.2f} MB, "
        f"{len(gzip.compress(html)) / 1e6:.2f} MB gzipped   [target <= 1 MB gzipped]"
    )
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sync.started_at - 1))
    start = time.perf_counter()
    diff = since_page(catalog, args.tag, parse_since(since), since)
    render(diff)
    print(
        f"(c) /diff?tag={args.tag}&since=(before the second sync): {time.perf_counter() - start:.2f} s, "
        f"{sum(s.added_count + s.removed_count for s in diff.stacks):,} specs changed   [target <= 1 s]"
    )
    catalog.close()


if __name__ == "__main__":
    sys.exit(main())
