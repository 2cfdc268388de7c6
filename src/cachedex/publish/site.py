"""``cachedex site OUTDIR``: the catalog as a self-contained static website.

Layout (every page has its JSON twin beside it: ``index.json`` beside ``index.html``,
``<hash>.json`` beside ``<hash>.html``)::

    index.html                         tags, and a package search box
    packages.json                      {package: [tags]}, for the search box
    tags/<tag>/index.html              packages of a tag, facets in the URL
    tags/<tag>/columns.json            what its script filters: the tag's specs as columns
    tags/<tag>/all.html                every package of the tag by name
    tags/<tag>/packages/<name>/...     a package's specs in a tag; changes.atom its feed
    tags/<tag>/changes/index.html      every sync that changed the tag; changes.atom its feed
    tags/<tag>/compare/<old>/...       the tag against the previous of its series
    changes.atom                       the newest syncs of every tag
    specs/<ab>/<hash>.html             one spec (<ab>: the hash's first two characters)
    mirrors/index.html, 404.html, static/cachedex-<version>-<digest>.{css,js}

Re-running rewrites only pages whose bytes changed, removes pages of packages and
specs that left, replaces each file atomically, and never writes outside OUTDIR: a tag
or package name that cannot be a folder name is skipped and reported. A page whose
JSON twin is unchanged is not even rendered again, when ``.cachedex-site`` says the
same templates made it (delete that file to have every page compared in full). After a
sync, a build makes only the pages that the catalog's changes since the last complete
build reach, read from ``.cachedex-site-inputs`` (see :mod:`.site_delta`). Shared among
workers, it starts the tag and change pages of the tags whose totals changed as soon
as it has planned (they are most of a small build, and need nothing else it reads),
and each worker reads the graph around its share of the spec pages itself.

A build stopped at any point (killed, or a disk full) leaves a site whose links work:
pages are written after the pages they link to (spec pages, then package pages, then
tag pages, then the home page), and pages are removed only at the end. The next build
removes the temporary files a killed one left.

Every page shows one state of the catalog, the one the build found first. Each
process reads in snapshots (one read transaction each) and compares the catalog's
state token with it; a part that finds another state (a sync committed meanwhile)
writes nothing. The build then removes nothing, does not write ``.cachedex-site``, and
says to run it again; it stops before writing anything when the sync came between its
plan and the rest of what it reads (workers fork between the two snapshots).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from ..catalog import Catalog
from ..errors import OutputError, UnknownTag
from .changes import previous_tags
from .changes_site import compared_with, pairs_by_new
from .files import held_alone, name_problem, quoted, update_file
from .folder_names import folder_clashes, package_clashes
from .parallel import worker_count
from .render import ASSETS, asset_text, render_not_found, render_stamp
from .site_build import Ahead, Plan, write_alone, write_shared
from .site_delta import (
    BUILDING,
    INPUTS,
    begin_build,
    changed_pages,
    load_inputs,
    read_inputs,
    relinked,
    save_inputs,
    tags_changed,
    unfinished,
)
from .sitefiles import (
    STAMP,
    SiteWriter,
    first_build,
    remove_others,
    remove_pages_of,
    remove_spec_pages,
    remove_stale_files,
)
from .urls import page_links

__all__ = ["BUILD_ATTEMPTS", "SiteReport", "write_site"]


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

#: Builds a sync overtakes are made again, up to this many in all: an incomplete one
#: (a first one may have written nothing) ends the command with an error.
BUILD_ATTEMPTS = 3

#: Below this many records in the tags written, one process writes every page.
PARALLEL_MIN_PAGES = 5_000


def _known_tags(catalog: Catalog, tags: list[str] | None) -> list[str]:
    """The catalog's tags; UnknownTag if ``tags`` names another."""
    known = catalog.tag_names()
    for tag in tags or ():
        if tag not in known:
            raise UnknownTag(tag, known)
    return known


def _plan(
    catalog: Catalog, tags: list[str] | None, workers: int | None, compare: Sequence[tuple[str, str]] = ()
) -> Plan:
    token, _ = catalog.state_token()
    known = _known_tags(catalog, tags)
    package_tags = catalog.all_package_tags()  # {package: [(tag, specs)]}, tags sorted
    plan = Plan(token, known, [], {}, package_tags, [], 1)
    wanted = tags or known
    clashing = folder_clashes(known)  # (a tag asked for alone would take another's folder too)
    plan.clashing = set(clashing)
    for tag in wanted:
        problem = name_problem(tag) or clashing.get(tag)
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
        for name, problem in sorted(package_clashes(package_tags, tag).items()):
            plan.names[tag].discard(name)
            plan.skipped.append(f"{tag}: package {quoted(name)}: {problem}")
    for new, olds in pairs_by_new(compare).items():
        for old in olds:
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
    _known_tags(catalog, tags)  # (before OUTDIR is made: a typo leaves no folder behind)
    _refuse_foreign_folder(outdir)
    if tags is not None:  # (a tag named twice is one: its pages were built and counted twice)
        tags = list(dict.fromkeys(tags))
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{outdir}: cannot create ({exc.strerror or exc})") from exc
    with held_alone(outdir):  # one build at a time: another would remove this one's staging
        progress = on_progress or (lambda _: None)
        for attempt in range(1, BUILD_ATTEMPTS + 1):
            report = _build(catalog, outdir, tags, progress, workers, full, compare, started)
            if report.complete or attempt == BUILD_ATTEMPTS:
                return report
            # (what it wrote is mended by the next: pages an unfinished build may have written are named)
            progress("the catalog changed during the build (a sync committed): building again")
    raise AssertionError("unreachable")


#: Files a build leaves in OUTDIR before its first page, during it and after it: one of
#: them marks a folder as a site's, or one whose first build was stopped. (Not the lock:
#: `jekyll` and `export` leave one in theirs.)
_OWN_MARKS = (STAMP, INPUTS, BUILDING)


def _refuse_foreign_folder(outdir: Path) -> None:
    """OutputError if ``outdir`` holds files (other than hidden ones: a ``.git``, say)
    and no mark of a build: the site's index.html, 404.html and search pages would
    replace whatever of that name was there, without a word."""
    try:
        names = sorted(entry.name for entry in os.scandir(outdir))
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise OutputError(f"{outdir}: not a folder") from None
    except OSError as exc:
        raise OutputError(f"{outdir}: cannot read ({exc.strerror or exc})") from exc
    shown = [name for name in names if not name.startswith(".")]
    if shown and not any(mark in names for mark in _OWN_MARKS):
        listed = ", ".join(quoted(name) for name in shown[:3]) + (", ..." if len(shown) > 3 else "")
        raise OutputError(
            f"{outdir}: holds files ({listed}) and no record of a 'cachedex site' build ({STAMP}); write the "
            "site into a new or empty folder (its pages would replace files of the same names; a copy of a "
            "site without its hidden files: empty it first)"
        )


def _build(
    catalog: Catalog,
    outdir: Path,
    tags: list[str] | None,
    progress: Callable[[str], None],
    workers: int | None,
    full: bool,
    compare: Sequence[tuple[str, str]],
    started: float,
) -> SiteReport:
    """One build of the site (see :func:`write_site`): incomplete if a sync committed
    during it."""
    stamp = render_stamp()
    writer: SiteWriter | None = None
    ahead: Ahead | None = None
    try:
        with catalog.snapshot():
            plan = _plan(catalog, tags, workers, compare)
            links = page_links(plan.package_tags, plan.clashing)  # (its line: see PageLinks.stamp)
            stamp += links.stamp + _state_line(catalog, plan)
            made_by = _read_stamp(outdir / STAMP)
            if not full and made_by == stamp:
                notes = (*plan.skipped, *_tags_elsewhere(outdir, plan, tags))
                return SiteReport(outdir, 0, 0, 0, 0, notes, time.perf_counter() - started, current=True)
            trusted = made_by.startswith(render_stamp() + links.stamp)
            writer = SiteWriter(outdir, trust_twins=not full and trusted, links=links)
            # Read once here (a pass over every edge): the workers forked below inherit it,
            # where each would read it again for its tag, package or spec pages.
            catalog.other_compilers()
            recorded = load_inputs(outdir) if writer.trust_twins and not first_build(outdir) else None
            before, left = recorded if recorded is not None else (None, None)
            # Without the record, which pages link a spec whose page came or went since
            # (:func:`relinked`) is not known: no twin vouches for its page.
            writer.trust_twins = recorded is not None
            guessed = (
                tags_changed(catalog, before, left, plan.tags) if before is not None and plan.processes > 1 else []
            )
        if guessed:  # forked between snapshots (a child inherits SQLite's lock state)
            ahead = Ahead(catalog, outdir, plan, guessed, trust_twins=writer.trust_twins)
        with catalog.snapshot():
            if catalog.state_token()[0] != plan.token:  # a sync committed since the plan: nothing written yet
                plan.skipped.append(CHANGED)
                return SiteReport(outdir, 0, 0, 0, 0, tuple(plan.skipped), time.perf_counter() - started, False)
            begin_build(outdir)
            progress("reading what the pages are made from")
            # (the tags that clash too: one that comes to clash with another, or no longer
            # does, changes which pages are there)
            inputs = read_inputs(catalog, msgspec.json.encode([tags, sorted(plan.clashing), plan.compare]))
            plan.held = set(inputs.specs)
            writer.edge_items.pages = plan.held  # (the spec pages this site has; workers inherit it)
            if before is not None:
                writer.edge_items.relinked = relinked(before, inputs)
            # Only the pages the changes since the last complete build reach (and those a
            # build since that did not complete may have written), if it can tell.
            changed = changed_pages(catalog, before, inputs, plan.compare, left) if before is not None else None
            if changed is not None:  # named before any is written
                begin_build(outdir, unfinished(catalog, changed))
            # Shared after a small change too: a big tag's tag and change pages (its two
            # largest) are made by workers while this process reads the graph around it.
            shared = plan.processes > 1
            if not shared:  # everything in this one snapshot
                _prepare(writer, after_complete=changed is not None and left is None)
                held, staged = write_alone(catalog, writer, plan, progress, changed)
                stale = False
        if shared:  # never fork in a read transaction: a child inherits SQLite's lock state
            _prepare(writer, after_complete=changed is not None and left is None)
            held, staged, stale = write_shared(catalog, writer, plan, progress, changed, ahead)
        removed = 0
        complete = not stale and catalog.state_token()[0] == plan.token
        if complete:
            previous = previous_tags(plan.known)
            for tag in plan.tags:
                removed += remove_others(outdir / "tags" / tag / "packages", plan.names[tag])
                # A comparison no longer asked for (a tag forgotten, another release between
                # two, a pair left out of the config) goes too; it links to what may be gone.
                compared = set(compared_with(previous, plan.compare, tag))
                removed += remove_others(outdir / "tags" / tag / "compare", compared)
                if not compared:  # (as a build into an empty folder leaves it: none; unless not empty)
                    with contextlib.suppress(OSError):
                        os.rmdir(outdir / "tags" / tag / "compare")
            # A spec page stays while any tag of the catalog holds its hash; a first build's
            # folder holds only the pages it just wrote.
            if changed is not None:
                removed += remove_pages_of(outdir / "specs", changed.gone)
            elif not staged:
                removed += remove_spec_pages(outdir / "specs", held)
                removed += remove_others(outdir / "specs", set())  # a folder per spec: the layout of earlier builds
            removed += remove_others(outdir / "tags", set(plan.known) - plan.clashing)
            save_inputs(outdir, inputs)
            update_file(str(outdir / STAMP), stamp)  # last: only a complete build vouches for its pages
            plan.skipped.extend(_tags_elsewhere(outdir, plan, tags))
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
        if ahead is not None:
            ahead.close()
        if writer is not None:
            writer.close()  # its old files gone before the build returns


def _tags_elsewhere(outdir: Path, plan: Plan, tags: list[str] | None) -> list[str]:
    """With ``tags`` chosen: a note naming the catalog's other tags whose pages the
    folder lacks, which the pages written link to (the home page lists every tag, a spec
    page the tags holding it)."""
    absent = [
        tag
        for tag in plan.known
        if tags and tag not in plan.tags and name_problem(tag) is None and not (outdir / "tags" / tag).is_dir()
    ]
    if not absent:
        return []
    return [
        f"the pages of {', '.join(map(quoted, absent))}, which the pages written link to: this folder has them "
        "once a build without --tag writes them"
    ]


def _state_line(catalog: Catalog, plan: Plan) -> bytes:
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
