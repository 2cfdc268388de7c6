"""How a ``cachedex site`` build writes its pages (see :mod:`.site`, which plans the
build, records it, and removes what left): in this process alone, or shared among worker
processes; spec pages first, then package pages, tag pages, and last the pages that
link to them."""

from __future__ import annotations

import os
from collections.abc import Callable
from multiprocessing.pool import Pool
from pathlib import Path

import msgspec

from .._perf import gc_frozen, gc_paused
from ..catalog import Catalog, package_names_of
from ..values import is_dag_hash
from .feeds import all_tags_feed
from .graph import SpecGraph
from .pages import HomePage, MirrorsPage, home_page, mirrors_page
from .parallel import new_pool
from .render import LIVE_FILE, live_marker
from .search_page import static_search_view
from .site_delta import PageSet
from .site_tasks import SHARED, Done, Task, run_task, write_task
from .sitefiles import SiteWriter, first_build, place_staged_packages, spec_folder, staging
from .urls import with_pages

__all__ = ["SPECS_PER_TASK", "Ahead", "Plan", "write_alone", "write_last", "write_shared"]


#: Spec pages per task given to a worker (progress is reported per task). Small
#: enough that the workers finish together: a core idle at the end is a loss.
SPECS_PER_TASK = 2_500


class Plan(msgspec.Struct):
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
    #: Every hash some mirror holds (the keys of the build's ``SiteInputs.specs``): a
    #: change page links to these only, and need not read them again.
    held: set[str] = set()
    #: Tags of the catalog with no pages, as another's name where case is ignored
    #: (:mod:`.folder_names`): a folder an earlier build gave one goes.
    clashing: set[str] = set()


class Ahead:
    """The tag pages and change pages of the tags a sync changed, made by two workers
    from the build's start, while it reads what the pages are made from and which
    pages its changes reach (a big tag's whole-tag pages are most of a small build, and
    its start is one process's work): kept, and written last, as the early tag pages
    are. Forked outside any snapshot (see :func:`.site.write_site`); which tags is a
    guess (:func:`.site_delta.tags_changed`): a tag guessed wrong gets its pages
    written unchanged, and one missed is written as without it."""

    def __init__(self, catalog: Catalog, outdir: Path, plan: Plan, tags: list[str], *, trust_twins: bool) -> None:
        self.tags = tags
        self._pool = new_pool(2)
        made = Task(catalog.path, outdir, plan.token, hold_tag_pages=True, trust_twins=trust_twins)
        # The change pages by one worker, the tag pages by the other (which then reads
        # its recent changes itself): each is a big tag's largest page.
        self._changes = self._pool.apply_async(
            run_task, (msgspec.structs.replace(made, change_pages=tags, compare=plan.compare),)
        )
        self._tags = self._pool.apply_async(run_task, (msgspec.structs.replace(made, tag_pages=tags, change_pages=[]),))

    def change_pages(self) -> Done:
        """The kept change pages (wait for them)."""
        return self._changes.get()

    def tag_pages(self) -> Done:
        """The kept tag pages (wait for them)."""
        return self._tags.get()

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()


def write_last(writer: SiteWriter, plan: Plan, home: HomePage, mirrors: MirrorsPage, feed: bytes) -> None:
    """The pages that link to tag and package pages: written after them."""
    writer.page(home)
    writer.file("changes.atom", feed)
    writer.page(static_search_view(plan.known))
    writer.file("packages.json", msgspec.json.encode(with_pages(package_names_of(plan.package_tags))))
    writer.file(LIVE_FILE, live_marker(False))
    writer.page(mirrors)
    writer.flush()


def write_alone(
    catalog: Catalog,
    writer: SiteWriter,
    plan: Plan,
    progress: Callable[[str], None],
    changed: PageSet | None = None,
) -> tuple[set[str], bool]:
    """Every page (or those ``changed`` names), written by this process in its snapshot:
    spec pages (the graph read once), package pages (one pass per tag), tag pages, then
    the pages linking to them. Returns (every hash a mirror holds, as the graph knows
    them; whether the spec pages were staged, see :func:`.sitefiles.spec_folder`)."""
    outdir, tags = writer.outdir, plan.tags
    staged = first_build(outdir)
    with SHARED.holding(package_tags=plan.package_tags, held=plan.held):
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
    write_last(writer, plan, home_page(catalog), mirrors_page(catalog), all_tags_feed(catalog, linked=writer.links.tag))
    return graph.held_hashes(), staged


def _chosen_pages(
    plan: Plan, changed: PageSet | None
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


def write_shared(
    catalog: Catalog,
    writer: SiteWriter,
    plan: Plan,
    progress: Callable[[str], None],
    changed: PageSet | None = None,
    ahead: Ahead | None = None,
) -> tuple[set[str], bool, bool]:
    """Every page (or those ``changed`` names), as :func:`write_alone` but shared among
    worker processes: while this one reads the graph (the whole of it; after a change,
    each spec-page worker reads the graph around its share instead), workers write the
    package pages whose spec pages exist already, and make the tag pages (but keep
    them); then all write the spec pages; then the package pages left, and the change
    pages; then this one writes the tag pages. A first build's workers make its change
    pages early too, and write a share of its package pages aside meanwhile (see
    :data:`.sitefiles.PACKAGES_STAGING`). The pages ``ahead`` makes are not made again:
    written last, change pages before tag pages. Returns what :func:`write_alone` does
    (but no held hashes after a change: the build removes the pages of the hashes that
    left by name), and whether a part found the catalog in another state than the
    plan's, and so wrote nothing."""
    outdir, trust, tags, token, count = writer.outdir, writer.trust_twins, plan.tags, plan.token, plan.processes
    only, tag_pages, change_pages = _chosen_pages(plan, changed)
    made = set(ahead.tags) if ahead is not None else set()
    tag_pages = [tag for tag in tag_pages if tag not in made]
    if change_pages is not None:
        change_pages = [tag for tag in change_pages if tag not in made]
    staged = first_build(outdir)
    # One process fewer than CPUs writes package pages while this one reads the graph
    # (which nothing can share), then the spec pages' pool joins.
    sharing = max(1, count - 1)
    with (
        SHARED.holding(
            package_tags=plan.package_tags, held=plan.held, edge_items=writer.edge_items, links=writer.links
        ),
        new_pool(sharing) as package_pool,  # forked before the graph exists: small
    ):
        # Tag pages are made now and written last (they link to all the rest), and so
        # are a first build's change pages (they link to spec pages).
        tag_tasks = [
            Task(
                catalog.path,
                outdir,
                token,
                tag_pages=tag_pages[n::sharing],
                change_pages=None if staged else [],
                compare=plan.compare,
                hold_tag_pages=True,
                trust_twins=trust,
            )
            for n in range(sharing)
        ]
        if staged:
            # A first build has no page yet whose spec pages exist, and its pool would
            # idle while this process reads the graph (~10 s of one core on a
            # 250,000-spec tag): it makes the tag and change pages, then writes a share
            # of the package pages into their staging folder (put in place once the spec
            # pages they link to are; the other shares after the spec pages).
            early_tags = package_pool.map_async(run_task, tag_tasks)
            early = package_pool.map_async(
                run_task,
                [
                    Task(catalog.path, outdir, token, tags, n, sharing + count, packages_staged=True, trust_twins=trust)
                    for n in range(sharing)
                ],
            )
            change_pages = []
        else:
            # Only the package pages whose spec pages exist already (the others wait for
            # theirs), then the tag pages: a second step, so that the package pages left
            # for later need not wait for them.
            early = package_pool.map_async(
                run_task,
                [
                    Task(catalog.path, outdir, token, tags, n, sharing, only, linked_only=True, trust_twins=trust)
                    for n in range(sharing)
                ],
            )
            early_tags = package_pool.map_async(run_task, tag_tasks)
            change_pages = tag_pages if change_pages is None else change_pages
        tag_pages = []
        with catalog.snapshot():
            stale = catalog.state_token()[0] != token
            if changed is None:  # the whole graph, read once, which the workers inherit
                graph, ids = _read_graph(catalog, tags, progress)
                spec_ids, held = [i for i, _ in ids], graph.held_hashes()
                folder = spec_folder(outdir, staged, [dag_hash for _, dag_hash in ids])
            else:  # each worker reads the graph around its share
                spec_ids, held, folder = changed.spec_ids, set(), spec_folder(outdir, staged, [])
                progress(f"reading the graph around {len(spec_ids):,} specs and writing their pages")
            home, mirrors = home_page(catalog), mirrors_page(catalog)
            feed = all_tags_feed(catalog, linked=writer.links.tag)
        # Frozen: the workers share the graph's memory pages instead of copying them.
        with gc_frozen(), new_pool(count) as pool:
            with staging(folder, staged):
                stale |= _write_spec_pages(
                    pool,
                    Task(catalog.path, outdir, token, spec_folder=folder, staged=staged, trust_twins=trust),
                    writer,
                    spec_ids,
                    progress,
                    count,
                    None if changed is None else tags,
                )
            if staged:
                os.rename(folder, outdir / "specs")
            done = early.get()
            stale = stale or any(result.stale for result in done)
            if not stale:  # the package pages left for later
                step = _package_pages_left(
                    Task(catalog.path, outdir, token, tags, trust_twins=trust),
                    done,
                    count,
                    staged=staged,
                    early=sharing,
                )
                if step:
                    done += pool.map(run_task, step)
                    stale = any(result.stale for result in done)
                if staged and not stale:
                    place_staged_packages(outdir, tags)
            if not stale:  # then the change pages, and the tag pages not made early
                last = [
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
                        trust_twins=trust,
                    )
                    for n in range(count)
                ]
                done += pool.map(run_task, last)  # meanwhile an early worker may still make a tag page
            if ahead is not None:
                done.append(ahead.change_pages())
            done += early_tags.get()
            if ahead is not None:
                done.append(ahead.tag_pages())
            stale = stale or any(result.stale for result in done)
        for result in done:
            writer.add(result.written, result.unchanged, result.pages)
            if not stale:  # the tag pages made early, now that what they link to is written
                writer.write_kept(result.files)
    if not stale:
        write_last(writer, plan, home, mirrors, feed)
    return held, staged, stale


def _package_pages_left(task: Task, done: list[Done], count: int, *, staged: bool, early: int) -> list[Task]:
    """The tasks of the package pages left after the spec pages, for ``count``
    processes: a first build's (``staged``) last ``count`` shares of its package pages
    (of ``early + count``: the first ``early`` were written early), into their staging
    folder; or else those that the early tasks ``done`` left for later (whose spec pages
    did not exist yet)."""
    if staged:
        parts = early + count
        return [msgspec.structs.replace(task, part=early + n, parts=parts, packages_staged=True) for n in range(count)]
    left: dict[str, list[str]] = {}
    for result in done:
        for tag, names in result.deferred.items():
            left.setdefault(tag, []).extend(names)
    return [msgspec.structs.replace(task, part=n, parts=count, only=left) for n in range(count)] if left else []


def _write_spec_pages(
    pool: Pool,
    task: Task,
    writer: SiteWriter,
    spec_ids: list[int],
    progress: Callable[[str], None],
    count: int,
    graph_of: list[str] | None,
) -> bool:
    """The spec pages of ``spec_ids``, as ``task`` says, shared among the ``pool``'s
    ``count`` processes: with the graph they inherit, or (``graph_of``, see
    :attr:`.site_tasks.Task.graph_of`) one each reads around its share. Returns whether
    a worker found the catalog in another state than ``task.token``."""
    if graph_of is not None or len(spec_ids) < count * SPECS_PER_TASK:
        # A share each, taken in turn: a few hub libraries (each read with its dependents,
        # and megabytes of JSON listing them) are not all one's; and a graph read once each.
        shares = [spec_ids[n::count] for n in range(count)]
    else:
        shares = [spec_ids[at : at + SPECS_PER_TASK] for at in range(0, len(spec_ids), SPECS_PER_TASK)]
    # The inherited graph shows the parent's snapshot: the token is checked there.
    token = task.token if graph_of is not None else ""
    tasks = [msgspec.structs.replace(task, token=token, spec_ids=share, graph_of=graph_of) for share in shares if share]
    done, stale = 0, False
    for result in pool.imap_unordered(run_task, tasks):
        writer.add(result.written, result.unchanged, result.pages)
        done += result.specs
        stale |= result.stale
        progress(f"spec pages: {done:,} of {len(spec_ids):,} written ({count} processes)")
    return stale


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
