"""``cachedex site OUTDIR``: the catalog as a self-contained static website.

Layout (every page has its JSON twin, ``index.json``, beside its ``index.html``)::

    index.html                         tags, and a package search box
    packages.json                      {package: [tags]}, for the search box
    tags/<tag>/index.html              packages of a tag, facets in the URL
    tags/<tag>/all.html                every package of the tag by name
    tags/<tag>/packages/<name>/...     a package's specs in a tag
    specs/<hash>/index.html            one spec: dependencies, dependents, install
    mirrors/index.html, 404.html, static/cachedex-<version>.{css,js}

Re-running rewrites only pages whose bytes changed, removes pages of packages and
specs that left, replaces each file atomically, and never writes outside OUTDIR: a tag
or package name that cannot be a folder name is skipped and reported.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from .catalog import Catalog
from .config import check_name
from .outputs import OutputError, cpu_workers, pool_context, safe_folder, update_file
from .pages import home_page, mirrors_page, package_page, spec_page, tag_page
from .render import ASSETS, Page, asset_text, page_path, render, render_all_packages, render_not_found, to_json
from .values import is_dag_hash

__all__ = ["SiteReport", "write_site"]


class SiteReport(msgspec.Struct, frozen=True):
    outdir: Path
    written: int  # files
    unchanged: int
    removed: int  # page folders
    pages: int
    skipped: tuple[str, ...]
    seconds: float


class _Writer:
    def __init__(self, outdir: Path) -> None:
        self.outdir = outdir
        self.written = 0
        self.unchanged = 0
        self.pages = 0

    def file(self, relative: str, data: bytes) -> None:
        *folders, name = relative.split("/")
        folder = safe_folder(self.outdir, *folders)
        try:
            changed = update_file(str(folder / name), data)
        except OSError as exc:
            raise OutputError(f"{folder / name}: cannot write ({exc.strerror or exc})") from None
        if changed:
            self.written += 1
        else:
            self.unchanged += 1

    def page(self, page: Page) -> None:
        path = page_path(page)
        self.file(path, render(page).encode())
        self.file(path[: -len("index.html")] + "index.json", to_json(page))
        self.pages += 1


def write_site(
    catalog: Catalog,
    outdir: Path,
    *,
    tags: list[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    workers: int | None = None,
) -> SiteReport:
    """Write the site for ``tags`` (default: every tag) into ``outdir``; see the module doc.

    Package and spec pages are shared among ``workers`` processes (default: one per
    CPU, at most 4) when there are at least :data:`PARALLEL_MIN_PAGES` of them."""
    started = time.perf_counter()
    outdir = Path(outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    known = catalog.tag_names()
    for tag in tags or ():
        if tag not in known:
            raise OutputError(f"unknown tag {tag!r} (in the catalog: {', '.join(known) or 'none'})")
    selected = tags or known
    writer = _Writer(outdir)
    skipped: list[str] = []
    progress = on_progress or (lambda _: None)

    for kind, relative in ASSETS.items():
        writer.file(relative, asset_text(kind))
    writer.page(home_page(catalog))
    writer.file("packages.json", msgspec.json.encode(catalog.package_names()))
    writer.page(mirrors_page(catalog))
    writer.file("404.html", render_not_found().encode())

    removed = 0
    hashes: set[str] = set()
    packages: list[tuple[str, str]] = []  # (tag, name) of every package page to write
    for tag in selected:
        problem = check_name(tag)
        if problem:
            skipped.append(f"tag {tag!r}: {problem}")
            continue
        progress(f"{tag}: packages")
        page = tag_page(catalog, tag)
        writer.page(page)
        writer.file(f"tags/{tag}/all.html", render_all_packages(page).encode())
        names = set()
        for row in page.packages:
            problem = check_name(row.name)
            if problem:
                skipped.append(f"{tag}: package {row.name!r}: {problem}")
                continue
            names.add(row.name)
            packages.append((tag, row.name))
        removed += _remove_others(outdir / "tags" / tag / "packages", names)
        hashes |= catalog.tag_hashes(tag)

    specs = sorted(h for h in hashes if is_dag_hash(h))
    progress(f"{len(packages):,} package pages, {len(specs):,} spec pages")
    _write_pages(catalog, writer, packages, specs, workers)
    # A spec folder stays while any tag of the catalog holds its hash.
    held = set().union(*(catalog.tag_hashes(t) for t in known)) if tags else hashes
    removed += _remove_others(outdir / "specs", held)
    removed += _remove_others(outdir / "tags", set(known))
    return SiteReport(outdir, writer.written, writer.unchanged, removed, writer.pages,
                      tuple(skipped), time.perf_counter() - started)


#: Below this many package and spec pages, one process writes them all.
PARALLEL_MIN_PAGES = 5_000


class _Share(msgspec.Struct, frozen=True):
    catalog: Path
    outdir: Path
    packages: list[tuple[str, str]]
    specs: list[str]


def _write_share(share: _Share) -> tuple[int, int, int]:
    """A worker's part: its own read-only connection, its own counts."""
    writer = _Writer(share.outdir)
    with Catalog(share.catalog, readonly=True) as catalog:
        _write_some(catalog, writer, share.packages, share.specs)
    return writer.written, writer.unchanged, writer.pages


def _write_some(catalog: Catalog, writer: _Writer, packages: list[tuple[str, str]], specs: list[str]) -> None:
    for tag, name in packages:
        writer.page(package_page(catalog, tag, name))
    for dag_hash in specs:
        writer.page(spec_page(catalog, dag_hash))


def _write_pages(
    catalog: Catalog, writer: _Writer, packages: list[tuple[str, str]], specs: list[str], workers: int | None,
) -> None:
    count = workers if workers is not None else cpu_workers(4)
    if count <= 1 or len(packages) + len(specs) < PARALLEL_MIN_PAGES:
        _write_some(catalog, writer, packages, specs)
        return
    shares = [_Share(catalog.path, writer.outdir, packages[n::count], specs[n::count]) for n in range(count)]
    with pool_context().Pool(count) as pool:
        for written, unchanged, pages in pool.imap_unordered(_write_share, shares):
            writer.written += written
            writer.unchanged += unchanged
            writer.pages += pages


def _remove_others(folder: Path, keep: set[str]) -> int:
    """Remove the page folders under ``folder`` not in ``keep`` (only those holding a
    page this writer makes; anything else there is left alone)."""
    if not folder.is_dir() or folder.is_symlink():
        return 0
    removed = 0
    for entry in folder.iterdir():
        if entry.name in keep or entry.is_symlink() or not entry.is_dir():
            continue
        if (entry / "index.html").is_file() and (entry / "index.json").is_file():
            shutil.rmtree(entry)
            removed += 1
    return removed
