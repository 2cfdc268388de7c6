"""The catalog's history and coverage, as change pages, feeds and coverage matrices read them.

Every sync of a tag has a row in ``syncs``; what it added to or removed from each
mirror's listing is in ``changes`` (a mirror's first sync records nothing: there was
nothing before). Coverage counts a tag's listed specs by stack and architecture.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from typing import Any

import msgspec

from ..values import ROOT_STACK, decode_variants
from .rows import among, few_names

__all__ = [
    "ChangedSpec",
    "CoverageCell",
    "FirstSeen",
    "PackageChange",
    "PackageCoverage",
    "SyncRecord",
    "additions",
    "changed_packages",
    "changes_since",
    "coverage_cells",
    "first_seen",
    "first_seen_order",
    "first_sync_after",
    "first_synced_at",
    "first_syncs",
    "listing_counts",
    "listing_difference",
    "package_changes",
    "package_coverage",
    "sync_changes",
    "tag_syncs",
]


class SyncRecord(msgspec.Struct, frozen=True):
    """One sync of a tag: when, and how many of the root's listed specs it added and removed."""

    id: int
    tag: str
    started_at: float
    finished_at: float
    added: int  #: listed specs the root mirror gained
    removed: int  #: listed specs the root mirror lost
    changes: int  #: spec changes recorded over all mirrors of the tag (0: nothing changed)


class ChangedSpec(msgspec.Struct, frozen=True):
    """A spec a sync added to (``change`` +1) or removed from (-1) one mirror's listing."""

    stack: str
    change: int
    hash: str
    name: str
    version: str
    compiler: str
    platform: str
    os: str
    target: str
    variants: tuple[str, ...]
    size: int | None  #: bytes, None when unknown


class PackageChange(msgspec.Struct, frozen=True):
    """A spec of a package that one sync added to or removed from a tag's listing."""

    sync_id: int
    finished_at: float  #: epoch seconds
    spec: ChangedSpec  #: (its stack the root: the tag's listing)


class FirstSeen(msgspec.Struct, frozen=True):
    """When a spec first appeared in one mirror of a tag, as far as the history says."""

    tag: str
    stack: str
    at: float  #: epoch seconds of the sync that added it (or of the mirror's first sync)
    first_sync: bool  #: True when it was there at the mirror's first sync (no earlier history)


class CoverageCell(msgspec.Struct, frozen=True):
    """Listed specs of one stack (``root``: the tag) on one platform-os-target."""

    stack: str
    platform: str
    os: str
    target: str
    specs: int
    size: int = 0  #: bytes of those whose size is known
    sized: int = 0  #: those whose size is known


class PackageCoverage(msgspec.Struct, frozen=True):
    """Listed specs of one package of a tag per platform, target and version."""

    name: str
    version: str
    platform: str
    os: str
    target: str
    specs: int
    size: int  #: bytes of those whose size is known
    sized: int  #: how many those are


def tag_syncs(
    db: sqlite3.Connection, tag: str | None, *, limit: int = 1000, changed_only: bool = False
) -> list[SyncRecord]:
    """The syncs of ``tag`` (of every tag with None), newest first, each with the number of
    changes it recorded; with ``changed_only``, those that recorded some (a cron job's
    syncs that found nothing new would push them out of any window of the newest)."""
    where = ["t.name = ?"] if tag is not None else []
    if changed_only:
        where.append("EXISTS (SELECT 1 FROM changes c WHERE c.sync_id = y.id)")
    rows = db.execute(
        "SELECT y.id, t.name, y.started_at, y.finished_at, y.added, y.removed, "
        " (SELECT count(*) FROM changes c WHERE c.sync_id = y.id) "
        "FROM syncs y JOIN tags t ON t.id = y.tag_id "
        + (f"WHERE {' AND '.join(where)} " if where else "")
        # By id, not by time: a clock set back between two syncs must not reorder them
        # (stats, a package's changes and a diff since a date all go by id).
        + "ORDER BY y.id DESC LIMIT ?",
        (tag, limit) if tag is not None else (limit,),
    )
    return [SyncRecord(*row) for row in rows]


#: The columns of a :class:`ChangedSpec`, in its fields' order (``changes c``, ``mirrors
#: m``, ``specs s``), as :func:`_changed_spec` reads them.
_CHANGED_COLUMNS = (
    "m.stack, c.change, s.hash, s.name, s.version, s.compiler, s.platform, s.os, s.target, s.variants, s.size"
)


def _changed_spec(row: Sequence[Any]) -> ChangedSpec:
    stack, change, h, name, version, compiler, platform, os, target, variants, size = row
    return ChangedSpec(stack, change, h, name, version, compiler, platform, os, target, decode_variants(variants), size)


def sync_changes(db: sqlite3.Connection, sync_id: int) -> list[ChangedSpec]:
    """What one sync added and removed, mirror by mirror, root first, then by package."""
    rows = db.execute(
        f"SELECT {_CHANGED_COLUMNS} FROM changes c JOIN mirrors m ON m.id = c.mirror_id "
        "JOIN specs s ON s.id = c.spec_id WHERE c.sync_id = ? "
        f"ORDER BY m.stack != '{ROOT_STACK}', m.stack, s.name, s.version, s.hash",
        (sync_id,),
    )
    return [_changed_spec(row) for row in rows]


def changed_packages(db: sqlite3.Connection, sync_id: int, stack: str) -> list[tuple[bool, str]]:
    """``(added, name)`` of the packages one sync added specs of to (True) or removed
    specs of from (False) a mirror of ``stack``: what a feed entry names, without reading
    each change whole (:func:`sync_changes`)."""
    rows = db.execute(
        "SELECT DISTINCT c.change > 0, s.name FROM changes c JOIN mirrors m ON m.id = c.mirror_id "
        "JOIN specs s ON s.id = c.spec_id WHERE c.sync_id = ? AND m.stack = ?",
        (sync_id, stack),
    )
    return [(bool(added), name) for added, name in rows]


def additions(db: sqlite3.Connection, ids: Collection[int] | None = None) -> list[tuple[str, str, str, float]]:
    """``(hash, tag, stack, finished_at)`` of each spec (of ``ids``) whose first recorded
    change in a mirror added it there: what a site's "first seen" lines are made from,
    without the rest of each change (:func:`sync_changes` reads it all, 3 us a change,
    for a million). A spec whose first change removed it was there from the mirror's
    first sync (a stack dropped for a sync and put back: it is not new there)."""
    where, params = among("spec_id", ids, "WHERE")
    return db.execute(
        "SELECT s.hash, t.name, m.stack, y.finished_at FROM "
        # (min(): SQLite reads ``change`` from the row that has it: the first change)
        f" (SELECT mirror_id, spec_id, change, min(sync_id) AS sync_id FROM changes{where} "
        "  GROUP BY mirror_id, spec_id) c "
        "JOIN syncs y ON y.id = c.sync_id JOIN tags t ON t.id = y.tag_id JOIN mirrors m ON m.id = c.mirror_id "
        "JOIN specs s ON s.id = c.spec_id WHERE c.change > 0",
        params,
    ).fetchall()


def first_syncs(db: sqlite3.Connection) -> dict[str, float]:
    """When each tag's first sync ended (tags with a sync)."""
    # (min(id): SQLite reads the other column from the row that has it; the first sync
    # by order, whatever the clock said)
    rows = db.execute(
        "SELECT t.name, y.finished_at, min(y.id) FROM syncs y JOIN tags t ON t.id = y.tag_id GROUP BY t.name"
    )
    return {tag: float(at) for tag, at, _first in rows}


def first_seen(db: sqlite3.Connection, dag_hash: str) -> list[FirstSeen]:
    """For each mirror listing the spec now, when it first appeared there: the sync that
    added it, or the mirror's first sync when no recorded change added it (or the first
    removed it: it was there before). The earliest first (:func:`first_seen_order`)."""
    rows = db.execute(
        "SELECT t.name, m.stack, "
        " (SELECT CASE WHEN c.change > 0 THEN y.finished_at END FROM changes c JOIN syncs y ON y.id = c.sync_id "
        "   WHERE c.mirror_id = m.id AND c.spec_id = s.id ORDER BY c.sync_id LIMIT 1), "
        " (SELECT y.finished_at FROM syncs y WHERE y.tag_id = m.tag_id ORDER BY y.id LIMIT 1) "
        "FROM specs s JOIN members mb ON mb.spec_id = s.id AND mb.listed "
        "JOIN mirrors m ON m.id = mb.mirror_id AND m.own_index JOIN tags t ON t.id = m.tag_id "
        "WHERE s.hash = ?",
        (dag_hash,),
    )
    found = [
        FirstSeen(tag, stack, added if added is not None else (first or 0.0), added is None)
        for tag, stack, added, first in rows
    ]
    return sorted(found, key=first_seen_order)


def first_seen_order(seen: FirstSeen) -> tuple[float, str, bool, str]:
    """The earliest first (a page names only the first few), then by tag and stack, the
    root first."""
    return (seen.at, seen.tag, seen.stack != ROOT_STACK, seen.stack)


def coverage_cells(db: sqlite3.Connection, tag: str, *, root: bool = True) -> list[CoverageCell]:
    """Listed specs per stack (``root`` for the whole tag; left out if not ``root``) and
    platform-os-target, and their known sizes."""
    rows = db.execute(
        "SELECT m.stack, s.platform, s.os, s.target, count(*), coalesce(sum(s.size), 0), count(s.size) "
        "FROM mirrors m JOIN tags t ON t.id = m.tag_id "
        "JOIN members mb ON mb.mirror_id = m.id AND mb.listed JOIN specs s ON s.id = mb.spec_id "
        f"WHERE t.name = ?{'' if root else f' AND m.stack != {ROOT_STACK!r}'} "
        "GROUP BY m.stack, s.platform, s.os, s.target "
        f"ORDER BY m.stack != '{ROOT_STACK}', m.stack, s.platform, s.os, s.target",
        (tag,),
    )
    return [CoverageCell(*row) for row in rows]


def package_coverage(
    db: sqlite3.Connection, tag: str, name: str | None = None, *, versions: bool = True
) -> list[PackageCoverage]:
    """Listed specs of the tag (of one package) per version and platform-os-target; with
    ``versions`` False, a package's versions are counted together (``version`` is ''),
    in half the time on a big tag (whose specs are nearly one per version and arch)."""
    version, order = ("s.version", " ORDER BY s.name, s.version") if versions else ("''", "")
    rows = db.execute(
        f"SELECT s.name, {version}, s.platform, s.os, s.target, count(*), total(s.size), count(s.size) FROM mirrors m "
        "JOIN tags t ON t.id = m.tag_id "
        "JOIN members mb ON mb.mirror_id = m.id AND mb.listed JOIN specs s ON s.id = mb.spec_id "
        f"WHERE t.name = ? AND m.stack = '{ROOT_STACK}'" + (" AND s.name = ?" if name is not None else "") + " "
        f"GROUP BY s.name, {version}, s.platform, s.os, s.target{order}",
        (tag, name) if name is not None else (tag,),
    )
    return [
        PackageCoverage(name, version, platform, os, target, specs, int(size), sized)  # total(): a float
        for name, version, platform, os, target, specs, size, sized in rows
    ]


def listing_counts(
    db: sqlite3.Connection, tag: str, names: Collection[str] | None = None, stacks: Collection[str] | None = None
) -> list[tuple[str, str, str, int]]:
    """(stack, name, version, listed specs) of every mirror of a tag (of the packages
    ``names`` and the stacks ``stacks`` only, if given): what a change page needs of the
    listings around a sync."""
    (named, name_values), (stacked, stack_values) = among("s.name", names, "AND"), among("m.stack", stacks, "AND")
    # A sync's few packages: their specs by the name index, then each one's members (50 of
    # the bench tag's packages: 10 ms against 86 ms for every member of its mirrors).
    joined = (
        "specs s CROSS JOIN members mb ON mb.spec_id = s.id AND mb.listed CROSS JOIN mirrors m ON m.id = mb.mirror_id "
        "JOIN tags t ON t.id = m.tag_id"
        if few_names(names)
        else "mirrors m JOIN tags t ON t.id = m.tag_id "
        "JOIN members mb ON mb.mirror_id = m.id AND mb.listed JOIN specs s ON s.id = mb.spec_id"
    )
    return list(
        db.execute(
            f"SELECT m.stack, s.name, s.version, count(*) FROM {joined} "
            f"WHERE t.name = ?{named}{stacked} GROUP BY m.stack, s.name, s.version",
            (tag, *name_values, *stack_values),
        )
    )


def listing_difference(db: sqlite3.Connection, old: str, new: str) -> list[tuple[str, str, str, str, int]]:
    """(stack, hash, name, version, +1 listed by ``new`` only / -1 by ``old`` only) of the
    listed specs two tags do not share, stack by stack (a stack of one tag only: all of
    it). Each pair of listings is compared by SQLite walking both in the members' key
    order at once (a merge): two 250,000-spec tags take ~0.2 s, and only the specs that
    differ are read (a lookup of each member in the other listing took 0.6 s)."""
    mirrors = {
        tag: dict(
            db.execute(
                "SELECT m.stack, m.id FROM mirrors m JOIN tags t ON t.id = m.tag_id WHERE t.name = ? AND NOT m.dropped",
                (tag,),
            )
        )
        for tag in (old, new)
    }
    only = (
        "SELECT spec_id FROM members WHERE mirror_id = ? AND listed EXCEPT "
        "SELECT spec_id FROM members WHERE mirror_id = ? AND listed ORDER BY 1"
    )
    found: list[tuple[str, int, int]] = []
    for stack in sorted(mirrors[old].keys() | mirrors[new].keys()):
        for this, that, side in ((new, old, 1), (old, new, -1)):
            mine = mirrors[this].get(stack)
            if mine is not None:  # a stack the other tag lacks: compared with no mirror (-1), all of it
                found.extend((stack, row[0], side) for row in db.execute(only, (mine, mirrors[that].get(stack, -1))))
    details = {
        row[0]: row[1:]
        for row in db.execute(
            "SELECT id, hash, name, version FROM specs WHERE id IN (SELECT value FROM json_each(?))",
            (msgspec.json.encode(sorted({spec_id for _, spec_id, _ in found})).decode(),),
        )
    }
    return [(stack, *details[spec_id], side) for stack, spec_id, side in found]


def changes_since(db: sqlite3.Connection, tag: str, since: float) -> list[tuple[str, str, str, str, int]]:
    """(stack, hash, name, version, +1/-1) of listing changes of a tag's mirrors
    recorded by the syncs from the first that finished after ``since`` (epoch seconds;
    :func:`first_sync_after`) on, oldest first."""
    start = first_sync_after(db, tag, since)
    if start is None:
        return []
    return list(
        db.execute(
            "SELECT m.stack, s.hash, s.name, s.version, c.change FROM changes c "
            "JOIN specs s ON s.id = c.spec_id "
            "JOIN mirrors m ON m.id = c.mirror_id JOIN tags t ON t.id = m.tag_id "
            "WHERE t.name = ? AND c.sync_id >= ? ORDER BY c.sync_id",
            (tag, start),
        )
    )


def first_sync_after(db: sqlite3.Connection, tag: str, since: float) -> int | None:
    """The id of the first sync of ``tag`` that finished after ``since`` (epoch seconds),
    or None. The state at ``since`` is the one before it: every later sync (by id) is
    after it, whatever its recorded time (a clock set back between two syncs dated a later
    one earlier, and a state the tag never had was rebuilt from the syncs between)."""
    row = db.execute(
        "SELECT min(y.id) FROM syncs y JOIN tags t ON t.id = y.tag_id WHERE t.name = ? AND y.finished_at > ?",
        (tag, since),
    ).fetchone()
    return None if row is None else row[0]


def first_synced_at(db: sqlite3.Connection, tag: str) -> float | None:
    """When the first recorded sync of ``tag`` (by id: a clock set back dates a later one
    earlier) finished (epoch seconds), or None."""
    row = db.execute(
        "SELECT y.finished_at FROM syncs y JOIN tags t ON t.id = y.tag_id WHERE t.name = ? ORDER BY y.id LIMIT 1",
        (tag,),
    ).fetchone()
    return None if row is None else row[0]


def package_changes(
    db: sqlite3.Connection, tag: str, names: Collection[str] | None = None, *, syncs: int = 50
) -> dict[str, list[PackageChange]]:
    """What each of the newest ``syncs`` syncs that changed a package added to and
    removed from ``tag``'s listing (its root mirror), by package (of ``names`` only, if
    given): newest sync first, added before removed, then by version and hash. One read
    for every package of a tag (a site's feeds), bounded per package however long the
    history (a year of nightly syncs of a big tag holds millions of changes)."""
    wanted, params = among("s.name", names, "AND")
    rows = db.execute(
        f"SELECT * FROM (SELECT y.id AS sync_id, y.finished_at, {_CHANGED_COLUMNS}, "
        "  dense_rank() OVER (PARTITION BY s.name ORDER BY c.sync_id DESC) AS newest "
        "  FROM changes c JOIN mirrors m ON m.id = c.mirror_id "
        "  JOIN syncs y ON y.id = c.sync_id JOIN specs s ON s.id = c.spec_id "
        f"  WHERE m.tag_id = (SELECT id FROM tags WHERE name = ?) AND m.stack = '{ROOT_STACK}'{wanted}) "
        "WHERE newest <= ? ORDER BY name, sync_id DESC, change DESC, version, hash",
        (tag, *params, syncs),
    )
    found: dict[str, list[PackageChange]] = {}
    for sync_id, at, *changed, _newest in rows:
        spec = _changed_spec(changed)
        found.setdefault(spec.name, []).append(PackageChange(sync_id, at, spec))
    return found
