"""``cachedex site OUTDIR``: the catalog as a self-contained static website.

Layout (every page has its JSON twin beside it: ``index.json`` beside ``index.html``,
``<hash>.json`` beside ``<hash>.html``)::

    index.html                         tags, and a package search box
    packages.json                      {package: [tags]}, for the search box
    tags/<tag>/index.html              packages of a tag, facets in the URL
    tags/<tag>/all.html                every package of the tag by name
    tags/<tag>/packages/<name>/...     a package's specs in a tag
    tags/<tag>/changes/index.html      every sync that changed the tag; changes.atom its feed
    tags/<tag>/compare/<old>/...       the tag against the previous of its series
    changes.atom                       the newest syncs of every tag
    specs/<ab>/<hash>.html             one spec (<ab>: the hash's first two characters)
    mirrors/index.html, 404.html, static/cachedex-<version>.{css,js}

Re-running rewrites only pages whose bytes changed, removes pages of packages and
specs that left, replaces each file atomically, and never writes outside OUTDIR: a tag
or package name that cannot be a folder name is skipped and reported. A page whose
JSON twin is unchanged is not even rendered again, when ``.cachedex-site`` says the
same templates made it (delete that file to have every page compared in full). After a
sync, a build makes only the pages that the catalog's changes since the last complete
build reach, read from ``.cachedex-site-inputs`` (see :mod:`.site_delta`).

A build stopped at any point (killed, or a disk full) leaves a site whose links work:
pages are written after the pages they link to (spec pages, then package pages, then
tag pages, then the home page), and pages are removed only at the end. The next build
removes the temporary files a killed one left.

Every page shows one state of the catalog, the one the build found first. Each
process reads in snapshots (one read transaction each) and compares the catalog's
state token with it; a part that finds another state (a sync committed meanwhile)
writes nothing. The build then removes nothing, does not write ``.cachedex-site``, and
says to run it again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from multiprocessing.pool import Pool
from pathlib import Path

import msgspec

from .._perf import gc_frozen, gc_paused
from ..catalog import Catalog, package_names_of
from ..errors import OutputError, UnknownTag
from ..values import is_dag_hash
from .feeds import all_tags_feed
from .files import name_problem, quoted, update_file
from .graph import SpecGraph
from .pages import HomePage, MirrorsPage, home_page, mirrors_page
from .parallel import pool_context, worker_count
from .render import ASSETS, asset_text, render_not_found, render_stamp
from .search_page import static_search_view
from .site_delta import PageSet, begin_build, changed_pages, load_inputs, read_inputs, save_inputs
from .site_tasks import SHARED, Task, run_task, write_task
from .sitefiles import (
    STAMP,
    SiteWriter,
    first_build,
    remove_others,
    remove_pages_of,
    remove_spec_pages,
    remove_stale_files,
    spec_folder,
    staging,
)
from .urls import with_pages

__all__ = ["SiteReport", "write_site"]


class SiteReport(msgspec.Struct, frozen=True):
    """What :func:`write_site` did."""

    outdir: Path
    written: int  #: files created or changed
    unchanged: int  #: files left as they were
    removed: int  #: pages of packages and specs that left
    pages: int
    skipped: tuple[str, ...]  #: names that cannot be folder names, and why; and what else was not done
    seconds: float
    complete: bool = True  #: False if the catalog changed during the build: run it again
    #: True when the site was found built from this very state of the catalog, by the
    #: same templates, for the same tags: nothing was read or written (see ``full``)
    current: bool = False
    #: True when only the pages that the catalog's changes since the last complete build
    #: reach were made (see :mod:`.site_delta`); False when every page was compared
    changed_only: bool = False


#: Said (as a step skipped) when a sync committed during the build.
CHANGED = (
    "removing the pages of packages and specs that left: the catalog changed while this "
    "site was built (a sync committed); run 'cachedex site' again"
)

#: Below this many records in the tags written, one process writes every page.
PARALLEL_MIN_PAGES = 5_000
#: Spec pages per task given to a worker (progress is reported per task). Small
#: enough that the workers finish together: a core idle at the end is a loss.
SPECS_PER_TASK = 2_500


class _Plan(msgspec.Struct):
    """What a build writes, read in its first snapshot."""

    token: str  #: the catalog's state: every page written shows this one
    known: list[str]  #: every tag of the catalog
    tags: list[str]  #: the tags whose pages to write
    names: dict[str, set[str]]  #: their packages that have a page
    package_tags: dict[str, list[tuple[str, int]]]  #: :meth:`Catalog.all_package_tags`
    skipped: list[str]
    processes: int
    #: {new: [old]}: the comparison pages asked for besides each series' (the config's pairs)
    compare: dict[str, list[str]] = {}


def _plan(
    catalog: Catalog, tags: list[str] | None, workers: int | None, compare: Sequence[tuple[str, str]] = ()
) -> _Plan:
    token, _ = catalog.state_token()
    known = catalog.tag_names()
    for tag in tags or ():
        if tag not in known:
            raise UnknownTag(tag, known)
    package_tags = catalog.all_package_tags()  # {package: [(tag, specs)]}, tags sorted
    plan = _Plan(token, known, [], {}, package_tags, [], 1)
    for tag in tags or known:
        problem = name_problem(tag)
        if problem:
            plan.skipped.append(f"tag {quoted(tag)}: {problem}")
            continue
        plan.tags.append(tag)
        plan.names[tag] = set()
        for name, in_tags in package_tags.items():
            if any(tag == listing for listing, _ in in_tags):
                problem = name_problem(name)
                if problem:
                    plan.skipped.append(f"{tag}: package {quoted(name)}: {problem}")
                else:
                    plan.names[tag].add(name)
    for old, new in compare:
        missing = [name for name in (old, new) if name not in known]
        if missing:
            why = f"no tag {quoted(missing[0])} in the catalog"
            plan.skipped.append(f"comparing {quoted(old)} with {quoted(new)}: {why}")
        elif new in plan.tags and name_problem(old) is None:
            plan.compare.setdefault(new, []).append(old)
    records = sum(stats.records for stats in catalog.tag_stats(plan.tags))
    plan.processes = worker_count(records, threshold=PARALLEL_MIN_PAGES, requested=workers)
    return plan


def write_site(
    catalog: Catalog,
    outdir: Path,
    *,
    tags: list[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    workers: int | None = None,
    full: bool = False,
    compare: Sequence[tuple[str, str]] = (),
) -> SiteReport:
    """Write the site for ``tags`` (default: every tag) into ``outdir``; see the module doc.

    Tag, package and spec pages are shared among ``workers`` processes (default: one
    per CPU, at most 4) when the tags hold at least :data:`PARALLEL_MIN_PAGES` records.

    ``.cachedex-site`` records what made the site: the templates, the catalog's state
    and the tags. A build that finds the same there has nothing to do and returns at
    once (``current``). Otherwise, ``.cachedex-site-inputs`` tells which pages the
    catalog's changes since the last complete build reach, and only those are made
    (``changed_only``; see :mod:`.site_delta`). ``full`` compares every page in full
    instead, as a build after deleting ``.cachedex-site`` does; all give the same
    files. ``compare``: (old, new) pairs of
    tags to write comparison pages for, besides each snapshot's and release's with the
    previous of its series."""
    started = time.perf_counter()
    outdir = Path(outdir).resolve()
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{outdir}: cannot create ({exc.strerror or exc})") from exc
    progress = on_progress or (lambda _: None)
    stamp = render_stamp()
    writer: SiteWriter | None = None
    try:
        with catalog.snapshot():
            plan = _plan(catalog, tags, workers, compare)
            stamp += _state_line(catalog, plan)
            made_by = _read_stamp(outdir / STAMP)
            if not full and made_by == stamp:
                return SiteReport(outdir, 0, 0, 0, 0, tuple(plan.skipped), time.perf_counter() - started, current=True)
            writer = SiteWriter(outdir, trust_twins=not full and made_by.startswith(render_stamp()))
            before = load_inputs(outdir) if writer.trust_twins and not first_build(outdir) else None
            begin_build(outdir)
            progress("reading what the pages are made from")
            inputs = read_inputs(catalog, msgspec.json.encode([tags, plan.compare]))
            # Only the pages the changes since the last complete build reach, if it can tell.
            changed = changed_pages(catalog, before, inputs, plan.compare) if before is not None else None
            shared = plan.processes > 1 and (changed is None or len(changed.spec_ids) >= PARALLEL_MIN_PAGES)
            if not shared:  # everything in this one snapshot
                _prepare(writer, after_complete=changed is not None)
                held, staged = _write_alone(catalog, writer, plan, progress, changed)
                stale = False
        if shared:  # never fork in a read transaction: a child inherits SQLite's lock state
            _prepare(writer, after_complete=changed is not None)
            held, staged, stale = _write_shared(catalog, writer, plan, progress, changed)
        removed = 0
        complete = not stale and catalog.state_token()[0] == plan.token
        if complete:
            for tag in plan.tags:
                removed += remove_others(outdir / "tags" / tag / "packages", plan.names[tag])
            # A spec page stays while any tag of the catalog holds its hash; a first build's
            # folder holds only the pages it just wrote.
            if changed is not None:
                removed += remove_pages_of(outdir / "specs", changed.gone)
            elif not staged:
                removed += remove_spec_pages(outdir / "specs", held)
                removed += remove_others(outdir / "specs", set())  # a folder per spec: the layout of earlier builds
            removed += remove_others(outdir / "tags", set(plan.known))
            save_inputs(outdir, inputs)
            update_file(str(outdir / STAMP), stamp)  # last: only a complete build vouches for its pages
        else:
            plan.skipped.append(CHANGED)
        seconds = time.perf_counter() - started
        return SiteReport(
            outdir,
            writer.written,
            writer.unchanged,
            removed,
            writer.pages,
            tuple(plan.skipped),
            seconds,
            complete,
            changed_only=changed is not None,
        )
    finally:
        if writer is not None:
            writer.close()  # its old files gone before the build returns


def _state_line(catalog: Catalog, plan: _Plan) -> bytes:
    """The second line of ``.cachedex-site``: the catalog's state (its token, and the
    time of its last sync, which tells a catalog made again apart) and the tags."""
    token, finished = catalog.state_token()
    state = {"catalog": [token, finished], "tags": plan.tags, "known": plan.known, "compare": plan.compare}
    return msgspec.json.encode(state) + b"\n"


def _read_stamp(path: Path) -> bytes:
    try:
        with open(path, "rb") as stamp:
            return stamp.read(1 << 20)
    except OSError:
        return b""


def _prepare(writer: SiteWriter, *, after_complete: bool = False) -> None:
    """Files left by killed builds removed, the assets and the 404 page (which link nowhere).
    ``after_complete``: the last build completed (it cleaned up, and nothing ran since
    but builds that completed), so there is nothing to look for in 250,000 files."""
    if not after_complete:
        remove_stale_files(writer.outdir)
    for kind, relative in ASSETS.items():
        writer.file(relative, asset_text(kind))
    writer.file("404.html", render_not_found().encode())


def _write_last(writer: SiteWriter, plan: _Plan, home: HomePage, mirrors: MirrorsPage, feed: bytes) -> None:
    """The pages that link to tag and package pages: written after them."""
    writer.page(home)
    writer.file("changes.atom", feed)
    writer.page(static_search_view(plan.known))
    writer.file("packages.json", msgspec.json.encode(with_pages(package_names_of(plan.package_tags))))
    writer.page(mirrors)
    writer.flush()


def _write_alone(
    catalog: Catalog,
    writer: SiteWriter,
    plan: _Plan,
    progress: Callable[[str], None],
    changed: PageSet | None = None,
) -> tuple[set[str], bool]:
    """Every page (or those ``changed`` names), written by this process in its snapshot:
    spec pages (the graph read once), package pages (one pass per tag), tag pages, then
    the pages linking to them. Returns (every hash a mirror holds, as the graph knows
    them; whether the spec pages were staged, see :func:`.sitefiles.spec_folder`)."""
    outdir, tags = writer.outdir, plan.tags
    staged = first_build(outdir)
    with SHARED.holding(package_tags=plan.package_tags):
        graph, ids = _read_graph(catalog, tags, progress, changed)
        folder = spec_folder(outdir, staged, [dag_hash for _, dag_hash in ids])
        with staging(folder, staged):
            spec_ids = [i for i, _ in ids]
            write_task(
                catalog, writer, Task(catalog.path, outdir, spec_ids=spec_ids, spec_folder=folder, staged=staged)
            )
        if staged:
            os.rename(folder, outdir / "specs")
        only, tag_pages, change_pages = _chosen_pages(plan, changed)
        later = Task(
            catalog.path,
            outdir,
            tags=tags,
            only=only,
            tag_pages=tag_pages,
            change_pages=change_pages,
            compare=plan.compare,
        )
        write_task(catalog, writer, later)
    _write_last(writer, plan, home_page(catalog), mirrors_page(catalog), all_tags_feed(catalog))
    return graph.held_hashes(), staged


def _chosen_pages(
    plan: _Plan, changed: PageSet | None
) -> tuple[dict[str, list[str]] | None, list[str], list[str] | None]:
    """(package pages per tag, None for all; tag pages; change pages, None for those of
    the tag pages) a build writes: every one, or those ``changed`` names."""
    tags = plan.tags
    if changed is None:
        return None, tags, None
    return (
        {tag: sorted(changed.names & plan.names[tag]) for tag in tags},
        [tag for tag in tags if tag in changed.tags],
        [tag for tag in tags if tag in changed.change_tags],
    )


def _write_shared(
    catalog: Catalog,
    writer: SiteWriter,
    plan: _Plan,
    progress: Callable[[str], None],
    changed: PageSet | None = None,
) -> tuple[set[str], bool, bool]:
    """Every page (or those ``changed`` names), as :func:`_write_alone` but shared among
    worker processes: while this one reads the graph, workers write the package pages
    whose spec pages exist already, and make the tag pages (but keep them); then all
    write the spec pages; then the package pages left, and the change pages; then this
    one writes the tag pages (a first build makes its tag pages last instead). Returns
    what :func:`_write_alone` does, and whether a part found the catalog in another
    state than the plan's, and so wrote nothing."""
    outdir, trust, tags, token, count = writer.outdir, writer.trust_twins, plan.tags, plan.token, plan.processes
    only, tag_pages, change_pages = _chosen_pages(plan, changed)
    staged = first_build(outdir)
    context = pool_context()
    # One process fewer than CPUs writes package pages while this one reads the graph
    # (which nothing can share), then the spec pages' pool joins.
    sharing = max(1, count - 1)
    with (
        SHARED.holding(package_tags=plan.package_tags, edge_items=writer.edge_items),
        context.Pool(sharing) as package_pool,  # forked before the graph exists: small
    ):
        early = None
        if not staged:  # only pages whose spec pages exist already: the others wait for theirs;
            # and the tag pages, made now and written last (they link to all the rest).
            early = package_pool.map_async(
                run_task,
                [
                    Task(
                        catalog.path,
                        outdir,
                        token,
                        tags,
                        n,
                        sharing,
                        only,
                        linked_only=True,
                        tag_pages=tag_pages[n::sharing],
                        change_pages=[],
                        hold_tag_pages=True,
                        trust_twins=trust,
                    )
                    for n in range(sharing)
                ],
            )
            change_pages = tag_pages if change_pages is None else change_pages
            tag_pages = []
        with catalog.snapshot():
            stale = catalog.state_token()[0] != token
            graph, ids = _read_graph(catalog, tags, progress, changed)
            home, mirrors, feed = home_page(catalog), mirrors_page(catalog), all_tags_feed(catalog)
        folder = spec_folder(outdir, staged, [dag_hash for _, dag_hash in ids])
        # Frozen: the workers share the graph's memory pages instead of copying them.
        with gc_frozen(), context.Pool(count) as pool:
            with staging(folder, staged):
                _write_spec_pages(pool, catalog.path, writer, [i for i, _ in ids], folder, staged, progress, count)
            if staged:
                os.rename(folder, outdir / "specs")
            done = early.get() if early is not None else []
            stale = stale or any(result.stale for result in done)
            if not stale:  # the package pages left for later (all of a first build's), then the tag pages
                left: dict[str, list[str]] | None = None
                if early is not None:
                    left = {}
                    for result in done:
                        for tag, names in result.deferred.items():
                            left.setdefault(tag, []).extend(names)
                steps = [
                    [Task(catalog.path, outdir, token, tags, n, count, left) for n in range(count)]
                    if left != {}
                    else [],
                    [
                        Task(
                            catalog.path,
                            outdir,
                            token,
                            tag_pages=tag_pages[n::count],
                            # A tag's change pages by another process than its tag page
                            # (the tag page reads its recent changes itself): after a sync
                            # they are a big tag's two largest pages, and both change.
                            change_pages=None if change_pages is None else change_pages[(n + 1) % count :: count],
                            compare=plan.compare,
                        )
                        for n in range(count)
                    ],
                ]
                for step in steps:
                    done += pool.map(run_task, [msgspec.structs.replace(t, trust_twins=trust) for t in step])
                    stale = any(result.stale for result in done)
        for result in done:
            writer.add(result.written, result.unchanged, result.pages)
            if not stale:  # the tag pages made early, now that what they link to is written
                writer.write_kept(result.files)
    if not stale:
        _write_last(writer, plan, home, mirrors, feed)
    return graph.held_hashes(), staged, stale


def _write_spec_pages(
    pool: Pool,
    catalog: Path,
    writer: SiteWriter,
    spec_ids: list[int],
    folder: str,
    staged: bool,
    progress: Callable[[str], None],
    count: int,
) -> None:
    """The spec pages, shared among the ``pool``'s ``count`` processes (which inherit the graph)."""
    outdir, trust = writer.outdir, writer.trust_twins
    tasks = [
        Task(
            catalog,
            outdir,
            spec_ids=spec_ids[at : at + SPECS_PER_TASK],
            spec_folder=folder,
            staged=staged,
            trust_twins=trust,
        )
        for at in range(0, len(spec_ids), SPECS_PER_TASK)
    ]
    done = 0
    for result in pool.imap_unordered(run_task, tasks):
        writer.add(result.written, result.unchanged, result.pages)
        done += result.specs
        progress(f"spec pages: {done:,} of {len(spec_ids):,} written ({count} processes)")


def _read_graph(
    catalog: Catalog, tags: list[str], progress: Callable[[str], None], changed: PageSet | None = None
) -> tuple[SpecGraph, list[tuple[int, str]]]:
    """Read the spec graph (the part ``changed`` pages need) for the workers to inherit;
    returns it, and (catalog id, hash) of the specs some mirror of ``tags`` holds, whose
    pages to write."""
    reached = "" if changed is None else f" around {len(changed.spec_ids):,} specs"
    progress(f"reading the dependency graph{reached}")
    with gc_paused():  # millions of small objects that live as long as the build
        graph = SpecGraph(catalog, None if changed is None else changed.spec_ids)
    SHARED.set("graph", graph)
    specs = [(spec_id, dag_hash) for spec_id, dag_hash in graph.held_by(tags) if is_dag_hash(dag_hash)]
    packages = "" if changed is None else f", the pages of {len(changed.names):,} packages"
    progress(f"writing {len(specs):,} spec pages{packages}")
    return graph, specs
