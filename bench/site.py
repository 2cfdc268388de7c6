"""Website benchmark: what ``cachedex site`` costs on a big tag, and how the browser copes.

Uses an existing catalog (by default bench/out/ingest/catalog.sqlite, which
``bench/ingest.py`` makes: 250,000 records, 10,000 packages) and measures:

  (a) the home page: bytes, and bytes gzipped (what a server sends)
  (b) the tag page of every package: page data, render, size; then the time until it is
      interactive in Chromium over a local static server (filters applied)
  (c) package pages per second, over every package of the tag (written to disk)
  (d) spec pages per second, on a random sample; with (c), the whole site's build time
  (e) a second run over an unchanged site: files rewritten (must be 0) and seconds

Targets (issue 4): home < 200 KB transferred; tag page interactive < 1 s; whole site
< 60 s for the 250k-record tag, unchanged pages not rewritten.

    python bench/site.py [--catalog FILE] [--tag TAG] [--out DIR] [--sample N]
"""

from __future__ import annotations

import argparse
import gzip
import random
import shutil
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
    parser.add_argument("--sample", type=int, default=300, help="spec pages to time")
    args = parser.parse_args()

    from cachedex.catalog import Catalog
    from cachedex.outputs import update_file
    from cachedex.pages import home_page, package_page, spec_page, tag_page
    from cachedex.render import page_path, render, to_json

    Catalog(args.catalog).close()  # upgrade the schema in place if it is older
    catalog = Catalog(args.catalog, readonly=True)
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)

    def write(page: object) -> int:
        path = args.out / page_path(page)  # type: ignore[arg-type]
        path.parent.mkdir(parents=True, exist_ok=True)
        a = update_file(str(path), render(page).encode())  # type: ignore[arg-type]
        b = update_file(str(path.with_name("index.json")), to_json(page))  # type: ignore[arg-type]
        return int(a) + int(b)

    home = render(home_page(catalog)).encode()
    print(f"(a) home page: {len(home):,} bytes, {len(gzip.compress(home)):,} gzipped   [target < 200 KB]")

    start = time.perf_counter()
    page = tag_page(catalog, args.tag)
    data_s = time.perf_counter() - start
    start = time.perf_counter()
    html = render(page).encode()
    render_s = time.perf_counter() - start
    write(page)
    print(f"(b) tag page, {len(page.packages):,} packages: data {data_s:.2f} s, render {render_s:.2f} s, "
          f"{len(html) / 1e6:.1f} MB ({len(gzip.compress(html)) / 1e6:.2f} MB gzipped)")
    from cachedex.render import ASSETS, asset_text

    for kind, relative in ASSETS.items():
        (args.out / relative).parent.mkdir(parents=True, exist_ok=True)
        (args.out / relative).write_bytes(asset_text(kind))
    print(f"    interactive in Chromium: {interactive(args.out, args.tag):.2f} s   [target < 1 s]")

    names = [p.name for p in page.packages]
    start = time.perf_counter()
    for name in names:
        write(package_page(catalog, args.tag, name))
    package_s = time.perf_counter() - start
    print(f"(c) {len(names):,} package pages: {package_s:.1f} s = {len(names) / package_s:,.0f} pages/s")

    hashes = [row[0] for row in catalog._db.execute("SELECT hash FROM specs")]  # noqa: SLF001 (bench only)
    sample = random.Random(5).sample(hashes, min(args.sample, len(hashes)))
    start = time.perf_counter()
    for dag_hash in sample:
        write(spec_page(catalog, dag_hash))
    spec_rate = len(sample) / (time.perf_counter() - start)
    whole = package_s + data_s + render_s + len(hashes) / spec_rate
    print(f"(d) spec pages: {spec_rate:,.1f} pages/s (sample of {len(sample)}); whole site for "
          f"{len(hashes):,} specs ~ {whole:,.0f} s   [target < 60 s]")

    start = time.perf_counter()
    rewritten = sum(write(package_page(catalog, args.tag, name)) for name in names)
    print(f"(e) unchanged second run of the package pages: {rewritten} files rewritten, "
          f"{time.perf_counter() - start:.1f} s")


def interactive(site: Path, tag: str) -> float:
    """Seconds from navigation until the tag page's filters ran, in Chromium."""
    from conftest import StaticServer  # the tests' static server
    from playwright.sync_api import sync_playwright

    server = StaticServer(site)
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=args)
            page = browser.new_page()
            page.set_default_timeout(60_000)
            start = time.perf_counter()
            page.goto(server.url + f"tags/{tag}/index.html?target=x86_64_v3")
            page.wait_for_function("document.body.dataset.ready === '1'", polling=20)
            seconds = time.perf_counter() - start
            browser.close()
            return seconds
    finally:
        server.close()


if __name__ == "__main__":
    main()
