"""What changed: a tag's syncs (``tags/<tag>/changes/``) and comparisons of two tags or of
a tag with itself at a date (``tags/<new>/compare/<old>/``, the server's ``/diff``).

Each change is told per stack and for the whole tag (its ``root`` mirror), in the manner
of Hydra's evaluation comparisons: totals, packages added and removed, version changes
(``cmake 3.27.9 → 3.31.3``), the specs added and removed with their arch and compiler, and
the change in bytes (of the sizes known). Comparisons reuse :mod:`cachedex.diff`.

A sync's "before" is today's listing with the changes of that sync and every later one
undone, as :func:`cachedex.diff.diff_since` does; a package is *added* when none of its
specs was listed before, *removed* when none is after.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar

import msgspec

from ..catalog import Catalog
from ..catalog.history import ChangedSpec, FirstSeen
from ..diff import diff_since, diff_tags
from ..query import tag_order, version_key
from ..values import ROOT_STACK

__all__ = [
    "RECENT",
    "SYNCS_SHOWN",
    "ChangesPage",
    "ComparePage",
    "RecentSync",
    "SpecChange",
    "StackChanges",
    "SyncChanges",
    "VersionChange",
    "changes_page",
    "compare_page",
    "history_from",
    "previous_tags",
    "recent_first_seen",
    "recent_syncs",
    "since_page",
]

#: Syncs a tag's change page details (the newest); older ones are counted only.
SYNCS_SHOWN = 50


class SpecChange(msgspec.Struct, frozen=True, gc=False):
    """A spec added or removed."""

    hash: str
    name: str
    version: str
    compiler: str
    arch: str  #: platform-os-target
    size: int | None  #: bytes; null when unknown
    page: bool = True  #: whether it has a page (a mirror of the catalog holds it now)


class VersionChange(msgspec.Struct, frozen=True):
    """A package whose versions changed: those that left and those that came."""

    name: str
    old: tuple[str, ...]  #: versions no longer listed, newest first
    new: tuple[str, ...]  #: versions listed only now, newest first


class StackChanges(msgspec.Struct, frozen=True):
    """What changed in one stack (``root``: the whole tag)."""

    stack: str
    added_count: int  #: specs added
    removed_count: int  #: specs removed
    size_change: int  #: bytes added minus bytes removed, of the sizes known
    added_packages: tuple[str, ...]  #: packages none of whose specs were listed before
    removed_packages: tuple[str, ...]  #: packages none of whose specs are listed after
    version_changes: tuple[VersionChange, ...]
    rebuilt: tuple[str, ...]  #: packages with specs added and removed, versions unchanged
    added: tuple[SpecChange, ...]
    removed: tuple[SpecChange, ...]


class SyncChanges(msgspec.Struct, frozen=True):
    """One sync of a tag that changed what it lists."""

    id: int  #: the sync's id (stable: feed entries and anchors use it)
    started_at: float
    finished_at: float  #: epoch seconds
    stacks: tuple[StackChanges, ...]  #: the stacks that changed, ``root`` first


class ChangesPage(msgspec.Struct, frozen=True, tag_field="page", tag="changes"):
    """Every sync that changed a tag, newest first (the newest :data:`SYNCS_SHOWN` in detail)."""

    tag: str
    syncs: tuple[SyncChanges, ...]
    older: int  #: syncs that changed the tag, older than those shown
    first_synced_at: float | None  #: the tag's first sync (which records no changes: nothing was before it)
    compare: tuple[str, ...] = ()  #: tags this one has a comparison page with (the previous of its series)


class ComparePage(msgspec.Struct, frozen=True, tag_field="page", tag="compare"):
    """What changed between two tags, or in one tag since a date: ``new`` minus ``old``."""

    old: str  #: a tag, or "<tag> at <date>"
    new: str  #: a tag
    old_tag: str  #: the tag compared with (``new`` itself for a comparison over time)
    stacks: tuple[StackChanges, ...]  #: the stacks that changed, ``root`` first
    since: str = ""  #: the date of a comparison over time
    live: bool = False  #: served at ``/diff`` (the static site's are under ``tags/<new>/compare/``)


class RecentSync(msgspec.Struct, frozen=True):
    """A tag's recent sync as its page's "recent changes" block shows it."""

    id: int
    finished_at: float
    added: int  #: specs the whole tag gained
    removed: int
    packages_added: tuple[str, ...]
    packages_removed: tuple[str, ...]
    versions: tuple[VersionChange, ...]


Listing = dict[str, tuple[str, str]]  # hash -> (name, version)


def _spec(c: ChangedSpec, page: bool) -> SpecChange:
    return SpecChange(c.hash, c.name, c.version, c.compiler, f"{c.platform}-{c.os}-{c.target}", c.size, page)


def _newest_first(versions: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(versions), key=version_key, reverse=True))


def _stack_changes(
    stack: str, added: list[SpecChange], removed: list[SpecChange], before: Listing, after: Listing
) -> StackChanges:
    """One stack's changes, from the specs added and removed and the listings around them."""
    order = lambda s: (s.name, s.version, s.arch, s.hash)  # noqa: E731
    added, removed = sorted(added, key=order), sorted(removed, key=order)
    names_before = Counter(name for name, _ in before.values())
    names_after = Counter(name for name, _ in after.values())
    versions_before = {pair for pair in before.values()}
    versions_after = {pair for pair in after.values()}
    new_names = {s.name for s in added if not names_before[s.name]}
    gone_names = {s.name for s in removed if not names_after[s.name]}
    changes, rebuilt = [], []
    for name in sorted({s.name for s in added} & {s.name for s in removed} - new_names - gone_names):
        old = _newest_first(s.version for s in removed if s.name == name and (name, s.version) not in versions_after)
        new = _newest_first(s.version for s in added if s.name == name and (name, s.version) not in versions_before)
        if old or new:
            changes.append(VersionChange(name, old, new))
        else:
            rebuilt.append(name)
    for name in sorted({s.name for s in added} - new_names - {s.name for s in removed}):
        new = _newest_first(s.version for s in added if s.name == name and (name, s.version) not in versions_before)
        if new:
            changes.append(VersionChange(name, (), new))
    for name in sorted({s.name for s in removed} - gone_names - {s.name for s in added}):
        old = _newest_first(s.version for s in removed if s.name == name and (name, s.version) not in versions_after)
        if old:
            changes.append(VersionChange(name, old, ()))
    changes.sort(key=lambda v: v.name)
    size = sum(s.size or 0 for s in added) - sum(s.size or 0 for s in removed)
    return StackChanges(
        stack,
        len(added),
        len(removed),
        size,
        tuple(sorted(new_names)),
        tuple(sorted(gone_names)),
        tuple(changes),
        tuple(rebuilt),
        tuple(added),
        tuple(removed),
    )


def _stack_key(stack: str) -> tuple[bool, str]:
    return stack != ROOT_STACK, stack


def changes_page(catalog: Catalog, tag: str, *, shown: int = SYNCS_SHOWN, held: set[str] | None = None) -> ChangesPage:
    """Every sync that changed ``tag``, newest first; UnknownTag if there is none.
    ``held``: the hashes some mirror holds (:meth:`Catalog.held_hashes`, read if not given)."""
    catalog.require_tag(tag)
    if held is None:
        held = catalog.held_hashes()
    records = [s for s in catalog.tag_syncs(tag, limit=1_000_000) if s.changes]
    listing: dict[str, Listing] = defaultdict(dict, catalog.tag_members(tag))  # after the sync being looked at
    syncs = []
    for record in records[:shown]:
        by_stack: dict[str, tuple[list[SpecChange], list[SpecChange]]] = defaultdict(lambda: ([], []))
        for change in catalog.sync_changes(record.id):
            by_stack[change.stack][0 if change.change > 0 else 1].append(_spec(change, change.hash in held))
        stacks = []
        for stack in sorted(by_stack, key=_stack_key):
            added, removed = by_stack[stack]
            after = listing[stack]
            before = dict(after)
            for spec in added:
                before.pop(spec.hash, None)
            for spec in removed:
                before[spec.hash] = (spec.name, spec.version)
            stacks.append(_stack_changes(stack, added, removed, before, after))
            listing[stack] = before
        syncs.append(SyncChanges(record.id, record.started_at, record.finished_at, tuple(stacks)))
    return ChangesPage(
        tag,
        tuple(syncs),
        max(0, len(records) - shown),
        catalog.first_synced_at(tag),
        tuple(previous_tags(catalog.tag_names()).get(tag, ())),
    )


# -- comparisons --------------------------------------------------------------------------

_SNAPSHOT = re.compile(r"(.+)-(\d{4}-\d{2}-\d{2})")
_RELEASE = re.compile(r"v?\d+(\.\d+)+")


def previous_tags(names: Iterable[str]) -> dict[str, list[str]]:
    """{tag: [the previous tag of its series]}: a dated snapshot (``develop-2026-11-08``)
    and the one before it of the same branch (``develop-2026-11-01``); a release and the
    one before it in version order (``v1.0.2`` and ``v1.0.1``)."""
    series: dict[str, list[str]] = defaultdict(list)
    for name in tag_order(names):  # newest first within each series
        snapshot = _SNAPSHOT.fullmatch(name)
        if snapshot is not None:
            series["snapshot " + snapshot[1]].append(name)
        elif _RELEASE.fullmatch(name):
            series["release"].append(name)
    pairs: dict[str, list[str]] = {}
    for members in series.values():
        for newer, older in zip(members, members[1:], strict=False):
            pairs[newer] = [older]
    return pairs


def _details(catalog: Catalog, tags: Iterable[str]) -> dict[str, SpecChange]:
    found: dict[str, SpecChange] = {}
    for tag in tags:
        for row in catalog.listed_rows(tag):
            found[row.hash] = SpecChange(
                row.hash, row.name, row.version, row.compiler, f"{row.platform}-{row.os}-{row.target}", row.size
            )
    return found


def _detail(catalog: Catalog, known: Mapping[str, SpecChange], dag_hash: str, name: str, version: str) -> SpecChange:
    found = known.get(dag_hash)
    if found is not None:
        return found
    summary = catalog.spec_summary(dag_hash)
    if summary is None:
        return SpecChange(dag_hash, name, version, "", "", None, False)
    arch = f"{summary.platform}-{summary.os}-{summary.target}"
    return SpecChange(dag_hash, name, version, summary.compiler, arch, summary.size, bool(summary.tags))


def _compare(
    catalog: Catalog,
    old_tag: str,
    new_tag: str,
    before: Mapping[str, Listing],
    after: Mapping[str, Listing],
    stacks: Iterable[str],
) -> tuple[StackChanges, ...]:
    known = _details(catalog, dict.fromkeys([new_tag, old_tag]))
    out = []
    for stack in stacks:
        old, new = before.get(stack, {}), after.get(stack, {})
        added = [_detail(catalog, known, h, *new[h]) for h in new.keys() - old.keys()]
        removed = [_detail(catalog, known, h, *old[h]) for h in old.keys() - new.keys()]
        out.append(_stack_changes(stack, added, removed, dict(old), dict(new)))
    return tuple(out)


def compare_page(catalog: Catalog, old: str, new: str, *, live: bool = False) -> ComparePage:
    """What ``new`` lists that ``old`` does not and the reverse, stack by stack
    (:func:`cachedex.diff.diff_tags`), with each spec's arch, compiler and size."""
    diff = diff_tags(catalog, old, new)
    stacks = [s.stack for s in diff.stacks]
    return ComparePage(
        old,
        new,
        old,
        _compare(catalog, old, new, catalog.tag_members(old), catalog.tag_members(new), stacks),
        live=live,
    )


def since_page(catalog: Catalog, tag: str, since: float, label: str) -> ComparePage:
    """What changed in ``tag`` after ``since`` (:func:`cachedex.diff.diff_since`)."""
    diff = diff_since(catalog, tag, since, label)
    now = catalog.tag_members(tag)
    then: dict[str, Listing] = {}
    for stack in diff.stacks:
        listing = dict(now.get(stack.stack, {}))
        for spec in stack.added:
            listing.pop(spec.hash, None)
        for spec in stack.removed:
            listing[spec.hash] = (spec.name, spec.version)
        then[stack.stack] = listing
    stacks = [s.stack for s in diff.stacks]
    return ComparePage(diff.old, tag, tag, _compare(catalog, tag, tag, then, now, stacks), since=label, live=True)


# -- what tag and spec pages show of the history --------------------------------------------

#: Syncs a tag page's "recent changes" block shows.
RECENT = 5

_HISTORY: ContextVar[Catalog | None] = ContextVar("cachedex_history", default=None)


@contextlib.contextmanager
def history_from(catalog: Catalog) -> Iterator[None]:
    """Pages rendered inside read their "recent changes" and "first seen" from ``catalog``
    (outside, they show none): the site's writer and the server render inside."""
    token = _HISTORY.set(catalog)
    try:
        yield
    finally:
        _HISTORY.reset(token)


def recent_syncs(tag: str) -> tuple[RecentSync, ...]:
    """The last few syncs that changed ``tag``, for its page (none outside :func:`history_from`)."""
    catalog = _HISTORY.get()
    if catalog is None:
        return ()
    page = changes_page(catalog, tag, shown=RECENT, held=set())
    out = []
    for sync in page.syncs:
        root = next((s for s in sync.stacks if s.stack == ROOT_STACK), None)
        if root is None:
            out.append(RecentSync(sync.id, sync.finished_at, 0, 0, (), (), ()))
        else:
            out.append(
                RecentSync(
                    sync.id,
                    sync.finished_at,
                    root.added_count,
                    root.removed_count,
                    root.added_packages,
                    root.removed_packages,
                    root.version_changes,
                )
            )
    return tuple(out)


def recent_first_seen(dag_hash: str) -> tuple[FirstSeen, ...]:
    """When and where a spec first appeared, for its page (none outside :func:`history_from`)."""
    catalog = _HISTORY.get()
    return () if catalog is None else tuple(catalog.first_seen(dag_hash))
