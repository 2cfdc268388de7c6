"""The parts of a ``cachedex site`` build that worker processes run (see :mod:`.site`,
which decides the parts and their order): spec pages, then package pages, then tag
pages and the pages of their history, each kind once the pages it links to exist."""

from __future__ import annotations

import contextlib
from pathlib import Path

import msgspec

from .._perf import gc_paused
from ..catalog import Catalog
from ..values import is_dag_hash
from .badges import package_badge
from .changes_site import write_changes
from .feeds import PACKAGE_FEED_ENTRIES, package_feed
from .files import name_problem, safe_folder
from .folder_names import package_clashes
from .graph import SpecGraph
from .pages import package_pages, tag_page
from .parallel import ForkShared
from .recent_changes import history_from
from .render import render_all_packages
from .sitefiles import PACKAGES_STAGING, KeptFiles, SiteWriter, StagedWriter, spec_folder, spec_pages_exist
from .urls import SITE_PAGES

__all__ = ["SHARED", "Done", "Task", "run_task", "write_task"]


class Task(msgspec.Struct, frozen=True):
    """A part of the pages, written by :func:`write_task`: spec pages (catalog ids),
    the package pages of share ``part`` of ``parts`` of ``tags`` (``only`` those named
    per tag, if given), and the tag pages of ``tag_pages``."""

    catalog: Path
    outdir: Path
    #: The state (``Catalog.state_token``) of the pages written so far: a worker that
    #: finds another writes nothing. Empty for spec pages, which show the parent's graph.
    token: str = ""
    tags: list[str] = []
    part: int = 0
    parts: int = 1
    only: dict[str, list[str]] | None = None
    #: Write a package page only if every spec page it links to exists; report the others.
    linked_only: bool = False
    #: Write the package pages into :data:`.sitefiles.PACKAGES_STAGING` (a first build's,
    #: before the spec pages they link to are in place)
    packages_staged: bool = False
    tag_pages: list[str] = []
    spec_ids: list[int] = []
    #: Read the graph around ``spec_ids`` in this task's snapshot, rather than use the
    #: parent's, and write the pages of those some mirror of these tags holds: after a
    #: change, the reading is shared too (the pages are those of a graph of them all).
    graph_of: list[str] | None = None
    spec_folder: str = ""  #: where spec pages go (a task that reads its own graph makes it)
    staged: bool = False
    trust_twins: bool = False
    compare: dict[str, list[str]] = {}  #: see :attr:`.site_build.Plan.compare`
    #: The tags whose change pages to write (None: those of ``tag_pages``)
    change_pages: list[str] | None = None
    #: Make the tag pages and change pages, but return their files (:attr:`Done.files`)
    #: for the parent to write once the pages they link to are written: a task that
    #: runs before those.
    hold_tag_pages: bool = False


class Done(msgspec.Struct, frozen=True):
    """What a worker did: files written and left alone, pages, spec pages; the package
    pages it left for later ({tag: [names]}); whether it found another catalog state."""

    written: int = 0
    unchanged: int = 0
    pages: int = 0
    specs: int = 0
    deferred: dict[str, list[str]] = {}
    stale: bool = False
    files: list[tuple[str, bytes]] = []  #: the files of held tag pages (path, bytes)


#: What forked workers inherit: the spec graph (``graph``), every package's tags
#: (``package_tags``), every hash a mirror holds (``held``), the edge items cache
#: (``edge_items``) and which names have pages (``links``, a :class:`.urls.PageLinks`).
SHARED = ForkShared()


def run_task(task: Task) -> Done:
    """Write a task's pages with its own read-only connection, in one snapshot."""
    # The build's PageLinks: those of spec and package pages. (A worker forked before it
    # held them writes tag, change, coverage and comparison pages, which need none.)
    links = SHARED.get("links", SITE_PAGES)
    writer = SiteWriter(task.outdir, trust_twins=task.trust_twins, edge_items=SHARED.get("edge_items"), links=links)
    held = KeptFiles(task.outdir, trust_twins=task.trust_twins) if task.hold_tag_pages else None
    staged = StagedWriter(safe_folder(task.outdir, PACKAGES_STAGING), links=links) if task.packages_staged else None
    with Catalog(task.catalog, readonly=True) as catalog, catalog.snapshot(), contextlib.closing(writer):
        if task.token and catalog.state_token()[0] != task.token:
            return Done(stale=True)
        deferred = write_task(catalog, writer, task, held, staged)
    if staged is not None:
        writer.add(staged.written, staged.unchanged, staged.pages)
    kept: list[tuple[str, bytes]] = []
    if held is not None:  # its pages count here; its files, where the parent writes them
        writer.add(0, held.unchanged, held.pages)
        kept = held.kept
    return Done(writer.written, writer.unchanged, writer.pages, len(task.spec_ids), deferred, files=kept)


def write_task(
    catalog: Catalog,
    writer: SiteWriter,
    task: Task,
    tag_writer: SiteWriter | None = None,
    package_writer: SiteWriter | None = None,
) -> dict[str, list[str]]:
    """Spec pages, then package pages (by ``package_writer``, default ``writer``), then
    change pages and tag pages (by ``tag_writer``, default ``writer``): each kind once
    the pages it links to are written. Returns the package pages left for later
    (``linked_only``)."""
    tag_writer = tag_writer or writer
    package_writer = package_writer or writer
    if task.spec_ids:
        graph: SpecGraph = SHARED.get("graph")
        spec_ids, folder = task.spec_ids, task.spec_folder
        if task.graph_of is not None:
            with gc_paused():  # (as the parent reads a whole graph)
                graph = SpecGraph(catalog, spec_ids)
            held = [(spec_id, dag_hash) for spec_id, dag_hash in graph.held_by(task.graph_of) if is_dag_hash(dag_hash)]
            folder = spec_folder(task.outdir, task.staged, [dag_hash for _, dag_hash in held], clear=False)
            spec_ids = [spec_id for spec_id, _ in held]
        writer.configs = graph.configs(catalog)  # its pages' dependents told apart
        for spec_id, node in catalog.nodes_of(spec_ids):
            writer.spec_page(folder, graph.page(spec_id, node), staged=task.staged)
        writer.flush()
        writer.configs = None
    deferred: dict[str, list[str]] = {}
    for tag in task.tags:
        wanted = None if task.only is None else set(task.only.get(tag, ()))
        if wanted is not None and not wanted:
            continue
        shared = SHARED.get("package_tags")
        if shared is None:
            shared = catalog.all_package_tags()
        unpaged = package_clashes(shared, tag)  # (as the plan found, which named them)
        changes = catalog.package_changes(tag, wanted, syncs=PACKAGE_FEED_ENTRIES)  # (the feeds')
        first, origin, others = catalog.first_synced_at(tag), catalog.identity(), catalog.other_compilers()
        for package in package_pages(catalog, tag, part=task.part, parts=task.parts, package_tags=shared, names=wanted):
            if name_problem(package.name) or package.name in unpaged:  # (``names`` chose the wanted ones in SQL)
                continue
            if task.linked_only and not spec_pages_exist(task.outdir, package):
                deferred.setdefault(tag, []).append(package.name)
            else:
                folder = f"tags/{tag}/packages/{package.name}"
                package_writer.page(package)
                package_writer.file(f"{folder}/badge.svg", package_badge(len(package.specs)))
                feed = package_feed(tag, package.name, changes.get(package.name, ()), first, origin, others)
                package_writer.file(f"{folder}/changes.atom", feed)
    package_writer.flush()
    with history_from(catalog):  # a tag page's "recent changes"; its change pages before it
        pages = task.tag_pages if task.change_pages is None else task.change_pages
        write_changes(catalog, tag_writer, pages, task.compare, held=SHARED.get("held"))
        for tag in task.tag_pages:
            tag_data = tag_page(catalog, tag)
            tag_writer.page(tag_data)
            tag_writer.file(f"tags/{tag}/all.html", render_all_packages(tag_data).encode())
        tag_writer.flush()
        writer.flush()
    return deferred
