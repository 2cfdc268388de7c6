"""``cachedex site OUTDIR``: the catalog as a self-contained static website.

Layout (every page has its JSON twin beside it: ``index.json`` beside ``index.html``,
``<hash>.json`` beside ``<hash>.html``)::

    index.html                         tags, and a package search box
    packages.json                      {package: [tags]}, for the search box
    tags/<tag>/index.html              packages of a tag, facets in the URL
    tags/<tag>/all.html                every package of the tag by name
    tags/<tag>/packages/<name>/...     a package's specs in a tag
    specs/<ab>/<hash>.html             one spec (<ab>: the hash's first two characters)
    mirrors/index.html, 404.html, static/cachedex-<version>.{css,js}

Re-running rewrites only pages whose bytes changed, removes pages of packages and
specs that left, replaces each file atomically, and never writes outside OUTDIR: a tag
or package name that cannot be a folder name is skipped and reported. A page whose
JSON twin is unchanged is not even rendered again, when ``.cachedex-site`` says the
same templates made it (delete that file to have every page compared in full).
"""

from __future__ import annotations

import itertools
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from .._perf import gc_frozen, gc_paused
from ..catalog import Catalog, package_names_of
from ..errors import OutputError, UnknownTag
from ..values import check_name, is_dag_hash
from .files import safe_folder, same_bytes, update_file, write_new
from .graph import SpecGraph
from .pages import SpecPage, home_page, mirrors_page, package_pages, tag_page
from .parallel import ForkShared, pool_context, worker_count
from .render import (
    ASSETS,
    EdgeItems,
    asset_text,
    render,
    render_all_packages,
    render_not_found,
    render_stamp,
    to_json,
)
from .urls import Page, json_path, page_path

__all__ = ["SiteReport", "write_site"]


class SiteReport(msgspec.Struct, frozen=True):
    """What :func:`write_site` did."""

    outdir: Path
    written: int  #: files created or changed
    unchanged: int  #: files left as they were
    removed: int  #: pages of packages and specs that left
    pages: int
    skipped: tuple[str, ...]  #: names that cannot be folder names, and why
    seconds: float


class _Writer:
    """Writes pages into a site folder and counts files written and left alone.

    With ``trust_twins`` (the site was last built by templates identical to these, see
    :func:`render_stamp`), a page whose JSON twin on disk already holds its data is
    left alone without rendering its HTML, which depends on nothing else: a re-run
    over an unchanged catalog then costs a fraction of a first build. HTML is written
    before its twin, so a build stopped between the two is redone next time."""

    def __init__(self, outdir: Path, *, trust_twins: bool = False, edge_items: EdgeItems | None = None) -> None:
        self.outdir = outdir
        self.trust_twins = trust_twins
        self.edge_items = edge_items if edge_items is not None else EdgeItems()
        self.written = 0
        self.unchanged = 0
        self.pages = 0
        self._pending: list[tuple[str, str, Page, bool]] = []  # (html, twin, page, staged): see flush()

    def file(self, relative: str, data: bytes) -> None:
        *folders, name = relative.split("/")
        self._store(str(safe_folder(self.outdir, *folders) / name), data)

    def page(self, page: Page) -> None:
        path = page_path(page)
        folder = str(safe_folder(self.outdir, *path.split("/")[:-1]))
        html = os.path.join(folder, path.rsplit("/", 1)[-1])
        self._pair(html, json_path(html), page, staged=False)

    def spec_page(self, specs: str, page: SpecPage, *, staged: bool) -> None:
        """A spec page as ``<ab>/<hash>.html`` and ``.json`` in ``specs``, a folder
        :func:`_spec_folder` chose (and made its ``<ab>`` folders). A DAG hash is a
        safe file name, so this skips the checks a page named after a package needs (on
        a 250,000-spec site they cost more than the writing)."""
        dag_hash = page.spec.hash
        if not is_dag_hash(dag_hash):
            raise OutputError(f"{dag_hash!r}: not a DAG hash, refusing it as a file name")
        base = os.path.join(specs, dag_hash[:2], dag_hash)
        self._pair(base + ".html", base + ".json", page, staged=staged)

    def _pair(self, html: str, twin: str, page: Page, *, staged: bool) -> None:
        """A page and its JSON twin, HTML first, kept until a run of them is written
        (:meth:`flush`)."""
        self._pending.append((html, twin, page, staged))
        if len(self._pending) >= PAGES_PER_RUN:
            self.flush()

    def flush(self) -> None:
        """Write the pages kept so far, a stage at a time for all of them: their JSON,
        which pages changed, their HTML, their files in order. Each stage then finds
        its code and data still in the CPU's caches (figures: bench/README.md, site).

        In a ``staged`` folder, which nobody reads until it is renamed into place
        whole, files are written directly instead of replaced, and nothing there is old
        enough to trust."""
        pending, self._pending = self._pending, []
        twins = [to_json(page) for _, _, page, _ in pending]
        self.pages += len(pending)
        if self.trust_twins:
            changed = [
                staged or not same_bytes(twin, data) or not os.path.isfile(html) or os.path.islink(html)
                for (html, twin, _, staged), data in zip(pending, twins, strict=True)
            ]
            self.unchanged += 2 * changed.count(False)
            pending = list(itertools.compress(pending, changed))
            twins = list(itertools.compress(twins, changed))
        markup = [render(page, edge_items=self.edge_items).encode() for _, _, page, _ in pending]
        for (html, twin, _, staged), text, data in zip(pending, markup, twins, strict=True):
            self._store(html, text, staged=staged)
            self._store(twin, data, staged=staged)

    def _store(self, path: str, data: bytes, *, staged: bool = False) -> None:
        try:
            if staged:
                write_new(path, data)
                changed = True
            else:
                changed = update_file(path, data)
        except OSError as exc:
            raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from exc
        self.written += changed
        self.unchanged += not changed

    def add(self, counts: tuple[int, int, int, int]) -> None:
        """Count what a worker wrote (see :func:`_run_task`)."""
        self.written += counts[0]
        self.unchanged += counts[1]
        self.pages += counts[2]


#: Pages written in one run (see :meth:`_Writer.flush`): about 10 MB of spec pages.
PAGES_PER_RUN = 500


#: What rendered the site's pages (see :func:`render_stamp`), written after each build.
_STAMP = ".cachedex-site"

#: Where a first build writes spec pages before renaming the folder to ``specs``.
_STAGING = ".specs-staging"


def _spec_folder(outdir: Path, specs: list[tuple[int, str]]) -> tuple[str, bool]:
    """(folder to write spec pages into, whether it is a staging folder). A site's
    first build writes its spec pages into a hidden folder renamed to ``specs`` at the
    end (a reader sees every page or none), which spares a temporary file and a rename
    per page; later builds replace changed pages one by one."""
    staging = outdir / _STAGING
    if staging.is_dir() and not staging.is_symlink():
        shutil.rmtree(staging)  # left by a build that was stopped
    name = "specs" if (outdir / "specs").exists() or (outdir / "specs").is_symlink() else _STAGING
    for prefix in {dag_hash[:2] for _, dag_hash in specs}:  # two characters of a DAG hash: safe
        safe_folder(outdir, name, prefix)
    return str(safe_folder(outdir, name)), name == _STAGING


def write_site(
    catalog: Catalog,
    outdir: Path,
    *,
    tags: list[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    workers: int | None = None,
) -> SiteReport:
    """Write the site for ``tags`` (default: every tag) into ``outdir``; see the module doc.

    Tag, package and spec pages are shared among ``workers`` processes (default: one
    per CPU, at most 4) when the tags hold at least :data:`PARALLEL_MIN_PAGES` records."""
    started = time.perf_counter()
    outdir = Path(outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    known = catalog.tag_names()
    for tag in tags or ():
        if tag not in known:
            raise UnknownTag(tag, known)
    selected = tags or known
    stamp = render_stamp()
    writer = _Writer(outdir, trust_twins=same_bytes(str(outdir / _STAMP), stamp))
    skipped: list[str] = []
    progress = on_progress or (lambda _: None)

    for kind, relative in ASSETS.items():
        writer.file(relative, asset_text(kind))
    writer.page(home_page(catalog))
    package_tags = catalog.all_package_tags()  # {package: [(tag, specs)]}, tags sorted
    writer.file("packages.json", msgspec.json.encode(package_names_of(package_tags)))
    writer.page(mirrors_page(catalog))
    writer.file("404.html", render_not_found().encode())

    removed = 0
    listed: list[str] = []  # tags whose tag and package pages to write
    for tag in selected:
        problem = check_name(tag)
        if problem:
            skipped.append(f"tag {tag!r}: {problem}")
            continue
        listed.append(tag)
        names = set()
        for name, in_tags in package_tags.items():
            if not any(tag == listing for listing, _ in in_tags):
                continue
            problem = check_name(name)
            if problem:
                skipped.append(f"{tag}: package {name!r}: {problem}")
            else:
                names.add(name)
        removed += _remove_others(outdir / "tags" / tag / "packages", names)

    staged = _write_pages(catalog, writer, listed, package_tags, workers, progress)
    writer.flush()
    # A spec page stays while any tag of the catalog holds its hash; a first build's
    # folder holds only the pages it just wrote.
    if not staged:
        removed += _remove_spec_pages(outdir / "specs", catalog.held_hashes())
        removed += _remove_others(outdir / "specs", set())  # a folder per spec: the layout of earlier builds
    removed += _remove_others(outdir / "tags", set(known))
    update_file(str(outdir / _STAMP), stamp)  # last: only a complete build vouches for its pages
    return SiteReport(
        outdir, writer.written, writer.unchanged, removed, writer.pages, tuple(skipped), time.perf_counter() - started
    )


#: Below this many records in the tags written, one process writes every page.
PARALLEL_MIN_PAGES = 5_000
#: Spec pages per task given to a worker (progress is reported per task). Small
#: enough that the workers finish together: a core idle at the end is a loss.
SPECS_PER_TASK = 2_500


class _Task(msgspec.Struct, frozen=True):
    """A worker's part: the tag pages of ``tag_pages``, package pages of share ``part``
    of ``parts`` of ``tags``, and spec pages (catalog ids)."""

    catalog: Path
    outdir: Path
    tags: list[str]
    part: int
    parts: int
    tag_pages: list[str] = []
    spec_ids: list[int] = []
    spec_folder: str = ""
    staged: bool = False
    trust_twins: bool = False


#: What forked workers inherit: the spec graph (``graph``), every package's tags
#: (``package_tags``) and the edge items cache (``edge_items``).
_SHARED = ForkShared()


def _run_task(task: _Task) -> tuple[int, int, int, int]:
    """Write a task's pages with its own read-only connection; returns (written,
    unchanged, pages, spec pages)."""
    writer = _Writer(task.outdir, trust_twins=task.trust_twins, edge_items=_SHARED.get("edge_items"))
    with Catalog(task.catalog, readonly=True) as catalog:
        _write_task(catalog, writer, task)
    return writer.written, writer.unchanged, writer.pages, len(task.spec_ids)


def _write_task(catalog: Catalog, writer: _Writer, task: _Task) -> None:
    for tag in task.tag_pages:
        tag_data = tag_page(catalog, tag)
        writer.page(tag_data)
        writer.file(f"tags/{tag}/all.html", render_all_packages(tag_data).encode())
    for tag in task.tags:
        for package in package_pages(
            catalog, tag, part=task.part, parts=task.parts, package_tags=_SHARED.get("package_tags")
        ):
            if not check_name(package.name):
                writer.page(package)
    graph: SpecGraph | None = _SHARED.get("graph")
    if graph is not None:
        for spec_id, node in catalog.nodes_of(task.spec_ids):
            writer.spec_page(task.spec_folder, graph.page(spec_id, node), staged=task.staged)
    writer.flush()


def _write_pages(
    catalog: Catalog,
    writer: _Writer,
    tags: list[str],
    package_tags: dict[str, list[tuple[str, int]]],
    workers: int | None,
    progress: Callable[[str], None],
) -> bool:
    """The tag pages, package pages and spec pages of ``tags``, without a query per
    page: package pages stream from one pass per tag, and the spec graph is read once.
    On a big site, worker processes write tag and package pages while this one reads
    the graph, then share the spec pages. Returns whether the spec pages were staged
    (a first build; see :func:`_spec_folder`)."""
    records = sum(stats.records for stats in catalog.tag_stats(tags))
    count = worker_count(records, threshold=PARALLEL_MIN_PAGES, requested=workers)
    outdir, trust = writer.outdir, writer.trust_twins
    with _SHARED.holding(package_tags=package_tags, edge_items=writer.edge_items):
        if count <= 1:
            ids = _read_graph(catalog, tags, progress)
            folder, staged = _spec_folder(outdir, ids)
            _write_task(
                catalog,
                writer,
                _Task(catalog.path, outdir, tags, 0, 1, tags, [i for i, _ in ids], folder, staged, trust),
            )
        else:
            context = pool_context()
            # One process fewer than CPUs writes tag and package pages while this one
            # reads the graph (which nothing can share), then the spec pages' pool joins.
            sharing = max(1, count - 1)
            with context.Pool(sharing) as package_pool:  # forked before the graph exists: small
                packages = package_pool.map_async(
                    _run_task,
                    [
                        _Task(catalog.path, outdir, tags, n, sharing, tags[n::sharing], trust_twins=trust)
                        for n in range(sharing)
                    ],
                )
                ids = _read_graph(catalog, tags, progress)
                folder, staged = _spec_folder(outdir, ids)
                tasks = [
                    _Task(
                        catalog.path,
                        outdir,
                        [],
                        0,
                        1,
                        [],
                        [i for i, _ in ids[start : start + SPECS_PER_TASK]],
                        folder,
                        staged,
                        trust,
                    )
                    for start in range(0, len(ids), SPECS_PER_TASK)
                ]
                done = 0
                # Frozen: the workers share the graph's memory pages instead of copying them.
                with gc_frozen(), context.Pool(count) as spec_pool:
                    for result in spec_pool.imap_unordered(_run_task, tasks):
                        writer.add(result)
                        done += result[3]
                        progress(f"spec pages: {done:,} of {len(ids):,} written ({count} processes)")
                for result in packages.get():
                    writer.add(result)
    if staged:
        os.rename(folder, outdir / "specs")
    return staged


def _read_graph(catalog: Catalog, tags: list[str], progress: Callable[[str], None]) -> list[tuple[int, str]]:
    """Read the spec graph for the workers to inherit; returns (catalog id, hash) of
    the specs some mirror of ``tags`` holds, whose pages to write."""
    progress("reading the dependency graph")
    with gc_paused():  # millions of small objects that live as long as the build
        graph = SpecGraph(catalog)
    _SHARED.set("graph", graph)
    specs = [(spec_id, dag_hash) for spec_id, dag_hash in graph.held_by(tags) if is_dag_hash(dag_hash)]
    progress(f"writing {len(specs):,} spec pages")
    return specs


def _remove_spec_pages(folder: Path, keep: set[str]) -> int:
    """Remove the spec pages (``<ab>/<hash>.html`` and ``.json``) under ``folder``
    whose hash is not in ``keep``, and ``<ab>`` folders left empty; returns how many
    pages."""
    if not folder.is_dir() or folder.is_symlink():
        return 0
    removed = 0
    for shard in os.scandir(folder):
        if len(shard.name) != 2 or not shard.is_dir(follow_symlinks=False):
            continue
        for entry in os.scandir(shard.path):
            stem, _, suffix = entry.name.rpartition(".")
            if (
                suffix in ("html", "json")
                and is_dag_hash(stem)
                and stem[:2] == shard.name
                and stem not in keep
                and entry.is_file(follow_symlinks=False)
            ):
                os.unlink(entry.path)
                removed += suffix == "html"
        if not os.listdir(shard.path):
            os.rmdir(shard.path)
    return removed


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
