"""Website benchmark: what ``cachedex site`` costs on a big tag, and how the browser copes.

Uses an existing catalog (by default bench/out/ingest/catalog.sqlite, which
``bench/ingest.py`` makes: 250,000 records, 10,000 packages, a layered DAG) and
measures, in one run:

  (a) the home page: bytes, and bytes gzipped (what a server sends)
  (b) the tag page of every package: page data, render, size
  (c) the whole site, first build into an empty folder (``write_site``, as
      ``cachedex site`` runs it): seconds, pages, files, CPU seconds (user and
      system, workers included), peak memory. A previous output folder is removed
      first, and the build waits until the kernel is done with that deletion (see
      :func:`quiet_disk`; ``--no-wait`` measures right after it instead)
  (d) a second build over the unchanged site comparing every page (``--full``): files
      rewritten (must be 0) and seconds; (d') the same without --full, which finds the
      catalog state recorded in .cachedex-site and has nothing to do
  (e) the tag page interactive in Chromium over a local static server (filters applied),
      and the data it reads (columns.json, gzipped as a server or the .gz copy sends it)
  (f) filter changes on that page: milliseconds from a changed select to the next
      painted frame, over a dozen changes (median and worst)

With ``--first-only``, (c) alone into a new folder: two versions of cachedex compared in
turn (``PYTHONPATH=OTHER/src`` runs another checkout's), no deletion between builds.

Targets (issues 4 and 14): home < 200 KB transferred; tag page interactive <= 0.5 s;
any filter change <= 100 ms; the tag page's data <= 1.5 MB gzipped; whole site < 60 s
for the 250k-record tag, unchanged pages not rewritten.

    python bench/site.py [--catalog FILE] [--tag TAG] [--out DIR] [--workers N] [--no-wait] [--first-only]
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", type=Path, default=HERE / "out" / "ingest" / "catalog.sqlite")
    parser.add_argument("--tag", default="bench")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "site")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU, at most 4)")
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help="build right after removing the previous output (what a rebuild from scratch pays)",
    )
    parser.add_argument(
        "--first-only",
        action="store_true",
        help="only (c), into --out, which must not exist: run it in turn for two versions of cachedex "
        "(PYTHONPATH=OTHER/src for the other) to compare them without a deletion between builds",
    )
    args = parser.parse_args()

    from cachedex.catalog import Catalog
    from cachedex.publish.pages import home_page, tag_page
    from cachedex.publish.render import render
    from cachedex.publish.site import write_site

    Catalog(args.catalog).close()  # upgrade the schema in place if it is older
    catalog = Catalog(args.catalog, readonly=True)
    if args.first_only:
        if args.out.exists():
            raise SystemExit(f"{args.out} exists: --first-only builds into a new folder")
        import cachedex

        start = time.perf_counter()
        report = write_site(catalog, args.out, tags=[args.tag], workers=args.workers)
        user, system = cpu_seconds()
        print(
            f"(c) whole site, first build ({Path(cachedex.__file__).parent}): {time.perf_counter() - start:.2f} s, "
            f"{report.pages:,} pages; CPU {user:.1f} s user + {system:.1f} s system   [target < 60 s]"
        )
        return
    if args.out.exists():
        print(f"removing the previous {args.out} ...", flush=True)
        shutil.rmtree(args.out)
        if not args.no_wait:
            quiet_disk()

    home = render(home_page(catalog)).encode()
    print(f"(a) home page: {len(home):,} bytes, {len(gzip.compress(home)):,} gzipped   [target < 200 KB]")

    start = time.perf_counter()
    page = tag_page(catalog, args.tag)
    data_s = time.perf_counter() - start
    start = time.perf_counter()
    html = render(page).encode()
    print(
        f"(b) tag page, {len(page.packages):,} packages: data {data_s:.2f} s, render "
        f"{time.perf_counter() - start:.2f} s, {len(html) / 1e6:.1f} MB "
        f"({len(gzip.compress(html)) / 1e6:.2f} MB gzipped)"
    )

    for label, run in (
        ("(c) whole site, first build", "first"),
        ("(d) whole site, unchanged, every page compared (--full)", "again"),
    ):
        before = cpu_seconds()
        report = write_site(catalog, args.out, tags=[args.tag], workers=args.workers, full=run == "again")
        user, system = (after - first for after, first in zip(cpu_seconds(), before, strict=True))
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(
            f"{label}: {report.seconds:.1f} s, {report.pages:,} pages ({report.pages / report.seconds:,.0f}/s), "
            f"{report.written:,} files written, {report.unchanged:,} unchanged; CPU {user:.1f} s user + "
            f"{system:.1f} s system; peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB "
            f"(workers {children:,.0f} MB)"
            + ("   [target < 60 s]" if run == "first" else "   [target: 0 files written]"),
            flush=True,
        )

    start = time.perf_counter()
    report = write_site(catalog, args.out, tags=[args.tag], workers=args.workers)
    print(
        f"(d') whole site, unchanged, as recorded in .cachedex-site: {time.perf_counter() - start:.2f} s, "
        f"current={report.current}, {report.written} files written"
    )
    folder = args.out / "tags" / args.tag
    size = {name: (folder / name).stat().st_size / 1e6 for name in ("columns.json", "index.json")}
    gzipped = {name: (folder / (name + ".gz")).stat().st_size / 1e6 for name in size}
    print(
        f"(e) tag page data (columns.json, what its script loads): {size['columns.json']:.2f} MB JSON, "
        f"{gzipped['columns.json']:.2f} MB gzipped   [target <= 1.5 MB]; its JSON twin (index.json, "
        f"with the rows) {size['index.json']:.2f} MB, {gzipped['index.json']:.2f} MB gzipped"
    )
    seconds, changes = interactive(args.out, args.tag)
    print(f"(e) tag page interactive in Chromium: {seconds:.2f} s   [target <= 0.5 s]")
    print(
        f"(f) filter changes: median {statistics.median(changes):.0f} ms, worst {max(changes):.0f} ms "
        f"over {len(changes)}   [target <= 100 ms]"
    )


def cpu_seconds() -> tuple[float, float]:
    """(user, system) CPU seconds of this process and its finished workers."""
    me, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + workers.ru_utime, me.ru_stime + workers.ru_stime


def quiet_disk(limit: float = 900.0) -> None:
    """Wait (at most ``limit`` seconds) until creating files costs what it costs on a
    disk that did not just delete hundreds of thousands of them.

    This ext4 has no journal, and then its inode allocator skips every inode freed
    in the last 60 s, or in the last 360 s when the inode's table block is dirty
    (``recently_deleted`` in the kernel's ``find_inode_bit``). ``sync`` cleans the
    blocks, but the build's own creations dirty them again, so inodes freed less than
    six minutes earlier are skipped, and the table block of each one skipped is read:
    right after the previous 6 GB site is removed, a file creation costs 60-180 us
    instead of 25-30, and ``recently_deleted`` takes 12-30 % of a build's samples in
    ``perf`` (0.5 % after the wait; seen here). A user's first build into an empty
    folder does not pay for a deletion, so neither does this one: the wait lasts
    370 s from the end of the deletion, and until the disk is idle too."""
    start = time.perf_counter()
    os.sync()
    pressure = Path("/proc/pressure/io")
    while time.perf_counter() - start < limit:
        # "some avg10=0.12 ...": share of the last 10 s in which some task waited on I/O
        idle = not pressure.exists() or float(pressure.read_text().split()[1].split("=")[1]) < 1.0
        if idle and time.perf_counter() - start > 370:
            break
        time.sleep(5)
    print(f"    (waited {time.perf_counter() - start:.0f} s for the kernel to be done with the deletion)", flush=True)


#: Milliseconds from setting a filter to the next painted frame, in the page.
_CHANGE = """async ([name, value]) => {
  const select = document.querySelector(`select[name=${name}]`);
  const start = performance.now();
  select.value = value;
  select.dispatchEvent(new Event("input", { bubbles: true }));
  select.dispatchEvent(new Event("change", { bubbles: true }));
  await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  return performance.now() - start;
}"""


def interactive(site: Path, tag: str) -> tuple[float, list[float]]:
    """Seconds from navigation until the tag page's filters ran, in Chromium; then the
    milliseconds each of a dozen filter changes takes to paint."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(HERE.parent))
    from tests.helpers import StaticServer  # the tests' static server
    from tests.publish.conftest import ARGS  # Chromium's flags, as the tests run it

    server = StaticServer(site)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page()
            page.set_default_timeout(60_000)
            start = time.perf_counter()
            page.goto(server.url + f"tags/{tag}/index.html?target=x86_64_v3")
            page.wait_for_function("document.body.dataset.ready === '1'", polling=20)
            seconds = time.perf_counter() - start
            changes: list[float] = []
            for name in ("target", "os", "compiler", "stack"):
                options = page.eval_on_selector_all(f"select[name={name}] option", "os => os.map((o) => o.value)")
                for value in [v for v in options if v][:2] + [""]:
                    changes.append(page.evaluate(_CHANGE, [name, value]))
            browser.close()
            return seconds, changes
    finally:
        server.close()


if __name__ == "__main__":
    main()
