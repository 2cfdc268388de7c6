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

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence

import msgspec

from ..catalog import Catalog
from ..catalog.history import ChangedSpec
from ..diff import Listing, TagDiff, diff_since_read, diff_tags_read
from ..values import stack_order
from ..versions import RELEASE_TAG, SNAPSHOT_TAG, tag_order, version_key

__all__ = [
    "SYNCS_SHOWN",
    "ChangesPage",
    "ComparePage",
    "EarlierSync",
    "SpecChange",
    "StackChanges",
    "SyncChanges",
    "VersionChange",
    "changes_page",
    "compare_page",
    "previous_tags",
    "since_page",
]

#: Syncs a tag's change page details (the newest); older ones are counted only.
SYNCS_SHOWN = 50


class SpecChange(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A spec added or removed."""

    hash: str
    name: str
    version: str
    compiler: str
    arch: str  #: platform-os-target
    size: int | None  #: bytes; null when unknown
    page: bool  #: whether it has a page (a mirror of the catalog holds it now)
    #: the compilers of its other languages when more than one built it (apple-clang its
    #: C, gcc its Fortran: a rebuild by another gfortran differs there alone); left out
    #: when one did
    other_compilers: tuple[str, ...] = ()


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
    sized: int  #: of the specs added and removed, those whose size is known (``size_change`` counts them)


class SyncChanges(msgspec.Struct, frozen=True):
    """One sync of a tag that changed what it lists."""

    id: int  #: the sync's id (stable: feed entries and anchors use it)
    started_at: float
    finished_at: float  #: epoch seconds
    stacks: tuple[StackChanges, ...]  #: the stacks that changed, ``root`` first


class EarlierSync(msgspec.Struct, frozen=True, gc=False):
    """A sync that changed a tag, older than those a change page details: counted, and
    an anchor there (feeds name any sync that changed a package, however old)."""

    id: int
    finished_at: float
    added: int  #: listed specs of the root mirror added
    removed: int


class ChangesPage(msgspec.Struct, frozen=True, tag_field="page", tag="changes"):
    """Every sync that changed a tag, newest first (the newest :data:`SYNCS_SHOWN` in detail)."""

    tag: str
    syncs: tuple[SyncChanges, ...]
    older: int  #: syncs that changed the tag, older than those shown
    first_synced_at: float | None  #: the tag's first sync (which records no changes: nothing was before it)
    #: tags this one has a comparison page with (the previous of its series, the config's)
    compare: tuple[str, ...] = ()
    earlier: tuple[EarlierSync, ...] = ()  #: the ``older`` syncs, newest first


class ComparePage(msgspec.Struct, frozen=True, tag_field="page", tag="compare"):
    """What changed between two tags, or in one tag since a date: ``new`` minus ``old``."""

    old: str  #: a tag, or "<tag> at <date>"
    new: str  #: a tag
    old_tag: str  #: the tag compared with (``new`` itself for a comparison over time)
    stacks: tuple[StackChanges, ...]  #: the stacks that changed, ``root`` first
    since: str = ""  #: the date of a comparison over time
    live: bool = False  #: served at ``/diff`` (the static site's are under ``tags/<new>/compare/``)


def _spec(c: ChangedSpec, page: bool, others: Mapping[str, tuple[str, ...]]) -> SpecChange:
    arch = f"{c.platform}-{c.os}-{c.target}"
    return SpecChange(c.hash, c.name, c.version, c.compiler, arch, c.size, page, others.get(c.hash, ()))


def _newest_first(versions: Iterable[str]) -> tuple[str, ...]:
    found = set(versions)
    if len(found) < 2:  # nearly always, a sync changing one version of a package: no order to find
        return tuple(found)
    return tuple(sorted(found, key=version_key, reverse=True))


#: Listed specs of a stack per (name, version), and per name.
Counts = tuple[Counter[tuple[str, str]], Counter[str]]


def _counts(pairs: Iterable[tuple[str, str]]) -> Counts:
    versions = Counter(pairs)
    names: Counter[str] = Counter()
    for (name, _), count in versions.items():
        names[name] += count
    return versions, names


def _counted(catalog: Catalog, tag: str, names: Collection[str], stacks: Collection[str]) -> dict[str, Counts]:
    """The listings of the mirrors ``stacks`` of ``tag``, of the packages ``names``, counted."""
    counted: dict[str, Counts] = {}
    for stack, name, version, count in catalog.listing_counts(tag, names, stacks):
        if stack not in counted:
            counted[stack] = (Counter(), Counter())
        versions, by_name = counted[stack]
        versions[name, version] += count
        by_name[name] += count
    return counted


def _stack_changes(stack: str, added: list[SpecChange], removed: list[SpecChange], after: Counts) -> StackChanges:
    """One stack's changes, from the specs added and removed and the listing after them
    (counted; the listing before is that one with the changes undone)."""
    order = lambda s: (s.name, s.version, s.arch, s.hash)  # noqa: E731
    added, removed = sorted(added, key=order), sorted(removed, key=order)
    versions_after, names_after = after
    delta: Counter[tuple[str, str]] = Counter((s.name, s.version) for s in removed)
    delta.subtract((s.name, s.version) for s in added)
    name_delta: Counter[str] = Counter()
    for (name, _), change in delta.items():
        name_delta[name] += change

    new_by_name: dict[str, set[str]] = defaultdict(set)
    old_by_name: dict[str, set[str]] = defaultdict(set)
    for spec in added:
        new_by_name[spec.name].add(spec.version)
    for spec in removed:
        old_by_name[spec.name].add(spec.version)
    named, moved = names_after.get, name_delta.get
    new_names = {n for n in new_by_name if named(n, 0) + moved(n, 0) <= 0}
    gone_names = {n for n in old_by_name if named(n, 0) <= 0}
    changes, rebuilt = [], []
    after_get, delta_get = versions_after.get, delta.get
    for name in sorted((new_by_name.keys() | old_by_name.keys()) - new_names - gone_names):
        # (``get``, not ``[]``: a Counter's missing key is a Python call, and most are missing)
        olds, news = old_by_name.get(name, ()), new_by_name.get(name, ())
        old = _newest_first([v for v in olds if after_get((name, v), 0) <= 0]) if olds else ()
        # (new: not in the listing before, which is the one after with the changes undone)
        new = _newest_first([v for v in news if after_get((name, v), 0) + delta_get((name, v), 0) <= 0]) if news else ()
        if old or new:
            changes.append(VersionChange(name, old, new))
        elif name in new_by_name and name in old_by_name:
            rebuilt.append(name)
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
        sum(1 for s in added if s.size is not None) + sum(1 for s in removed if s.size is not None),
    )


def changes_page(
    catalog: Catalog,
    tag: str,
    *,
    shown: int = SYNCS_SHOWN,
    held: set[str] | None = None,
    compare: Sequence[str] | None = None,
) -> ChangesPage:
    """Every sync that changed ``tag``, newest first; UnknownTag if there is none.
    ``held``: the hashes some mirror holds (:meth:`Catalog.held_hashes`; of the changes
    shown, read if not given);
    ``compare``: the tags it has comparison pages with (default: the previous of its series)."""
    catalog.require_tag(tag)
    records = catalog.tag_syncs(tag, limit=1_000_000, changed_only=True)
    # The listings after the sync being looked at, counted; undone sync by sync.
    changed = [(record, catalog.sync_changes(record.id)) for record in records[:shown]]
    touched = [c for _, changes in changed for c in changes]
    if held is None:  # those of the specs it shows
        held = catalog.held_hashes({c.hash for c in touched})
    counted = _counted(catalog, tag, {c.name for c in touched}, {c.stack for c in touched}) if changed else {}
    others = catalog.other_compilers()
    syncs = []
    for record, changes in changed:
        by_stack: dict[str, tuple[list[SpecChange], list[SpecChange]]] = defaultdict(lambda: ([], []))
        for change in changes:
            by_stack[change.stack][0 if change.change > 0 else 1].append(_spec(change, change.hash in held, others))
        stacks = []
        for stack in sorted(by_stack, key=stack_order):
            added, removed = by_stack[stack]
            versions, names = counted.setdefault(stack, (Counter(), Counter()))
            stacks.append(_stack_changes(stack, added, removed, (versions, names)))
            for spec in added:
                versions[spec.name, spec.version] -= 1
                names[spec.name] -= 1
            for spec in removed:
                versions[spec.name, spec.version] += 1
                names[spec.name] += 1
        syncs.append(SyncChanges(record.id, record.started_at, record.finished_at, tuple(stacks)))
    return ChangesPage(
        tag,
        tuple(syncs),
        max(0, len(records) - shown),
        catalog.first_synced_at(tag),
        tuple(previous_tags(catalog.tag_names()).get(tag, ()) if compare is None else compare),
        tuple(EarlierSync(r.id, r.finished_at, r.added, r.removed) for r in records[shown:]),
    )


# -- comparisons --------------------------------------------------------------------------


def previous_tags(names: Iterable[str]) -> dict[str, list[str]]:
    """{tag: [the previous tag of its series]}: a dated snapshot (``develop-2026-11-08``)
    and the one before it of the same branch (``develop-2026-11-01``); a release and the
    one before it in version order (``v1.0.2`` and ``v1.0.1``)."""
    series: dict[str, list[str]] = defaultdict(list)
    for name in tag_order(names):  # newest first within each series
        snapshot = SNAPSHOT_TAG.fullmatch(name)
        if snapshot is not None:
            series["snapshot " + snapshot[1]].append(name)
        elif RELEASE_TAG.fullmatch(name):
            series["release"].append(name)
    pairs: dict[str, list[str]] = {}
    for members in series.values():
        for newer, older in zip(members, members[1:], strict=False):
            pairs[newer] = [older]
    return pairs


def _details(catalog: Catalog, tags: Iterable[str], wanted: set[str]) -> dict[str, SpecChange]:
    """The details of those of ``wanted`` that the root mirror of one of ``tags`` lists,
    read at once (a comparison of two big tags changes thousands); :func:`_detail` reads
    the others one by one."""
    listed = set().union(*(catalog.listed_hashes(tag, among=wanted) for tag in tags)) if wanted else set()
    found: dict[str, SpecChange] = {}
    others = catalog.other_compilers() if listed else {}
    for row in catalog.all_spec_rows(catalog.spec_ids(listed).values()) if listed else ():
        arch = f"{row.platform}-{row.os}-{row.target}"
        also = others.get(row.hash, ())
        found[row.hash] = SpecChange(row.hash, row.name, row.version, row.compiler, arch, row.size, True, also)
    return found


def _detail(catalog: Catalog, known: Mapping[str, SpecChange], dag_hash: str, name: str, version: str) -> SpecChange:
    found = known.get(dag_hash)
    if found is not None:
        return found
    summary = catalog.spec_summary(dag_hash)
    if summary is None:
        return SpecChange(dag_hash, name, version, "", "", None, False)
    arch = f"{summary.platform}-{summary.os}-{summary.target}"
    # (spec_summary leaves its tags empty: ask whether any mirror, a stack's say, holds it)
    held = bool(catalog.held_hashes([dag_hash]))
    return SpecChange(dag_hash, name, version, summary.compiler, arch, summary.size, held, summary.other_compilers)


def _compare(
    catalog: Catalog, diff: TagDiff, known: Mapping[str, SpecChange], listings: Mapping[str, Listing]
) -> tuple[StackChanges, ...]:
    """The stacks of a :class:`cachedex.diff.TagDiff`, each spec with its details.
    ``listings``: the newer side's listings that the diff read (of at least the packages
    and stacks it changed), counted rather than read again."""
    counted = {stack: _counts(listing.values()) for stack, listing in listings.items()}
    out = []
    for part in diff.stacks:
        added = [_detail(catalog, known, s.hash, s.name, s.version) for s in part.added]
        removed = [_detail(catalog, known, s.hash, s.name, s.version) for s in part.removed]
        out.append(_stack_changes(part.stack, added, removed, counted.get(part.stack, (Counter(), Counter()))))
    return tuple(out)


def _changed(diff: TagDiff) -> set[str]:
    return {spec.hash for stack in diff.stacks for spec in (*stack.added, *stack.removed)}


def compare_page(catalog: Catalog, old: str, new: str, *, live: bool = False) -> ComparePage:
    """What ``new`` lists that ``old`` does not and the reverse, stack by stack
    (:func:`cachedex.diff.diff_tags`), with each spec's arch, compiler and size."""
    diff, listings = diff_tags_read(catalog, old, new)
    known = _details(catalog, dict.fromkeys([new, old]), _changed(diff))
    return ComparePage(old, new, old, _compare(catalog, diff, known, listings), live=live)


def since_page(catalog: Catalog, tag: str, since: float, label: str) -> ComparePage:
    """What changed in ``tag`` after ``since`` (:func:`cachedex.diff.diff_since`); each
    spec's details from the syncs that changed it."""
    diff, listings = diff_since_read(catalog, tag, since, label)
    start = catalog.first_sync_after(tag, since)
    changes = [
        change
        for sync in catalog.tag_syncs(tag, limit=1_000_000, changed_only=True)
        if start is not None and sync.id >= start
        for change in catalog.sync_changes(sync.id)
    ]
    held = catalog.held_hashes(change.hash for change in changes if change.change < 0)
    known: dict[str, SpecChange] = {}
    others = catalog.other_compilers()
    for change in changes:
        if change.hash not in known:
            known[change.hash] = _spec(change, change.change > 0 or change.hash in held, others)
    return ComparePage(diff.old, tag, tag, _compare(catalog, diff, known, listings), since=label, live=True)
