"""Named point reads: what one page, one command or one sync step asks the catalog.

Each function takes an open connection and returns plain values or the typed results of
:mod:`.rows`; ``Catalog`` exposes each as a method of the same name.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, KeysView
from typing import Any

import msgspec

from ..values import LINK_RUN, ROOT_STACK, decode_variants
from ..versions import tag_order
from .nodes import node_text_reader
from .rows import (
    HAS_BINARY,
    Edge,
    MirrorState,
    SizeKey,
    SpecConfig,
    SpecSummary,
    TagStats,
    among,
    as_rows,
    select_list,
)

__all__ = [
    "all_package_tags",
    "closure",
    "edges_of",
    "hashes_starting",
    "held_hashes",
    "holders",
    "known_specs",
    "listed_hashes",
    "members_of",
    "mirror_state",
    "mirrors",
    "node",
    "package_tags",
    "size_keys",
    "sized_hashes",
    "spec_configs",
    "spec_ids",
    "spec_sizes",
    "spec_summary",
    "tag_members",
    "tag_names",
    "tag_stats",
    "unsized_listed_by_stack",
]

_MIRROR_COLUMNS = (
    "t.name, m.stack, m.url, m.layout, m.db_version, m.checksum, m.etag, m.last_modified, "
    "m.fetched_at, m.records, m.listed, m.view, m.own_index, m.signed"
)


def _hashes_json(hashes: Iterable[str]) -> str:
    """A list of hashes as one bound parameter, for ``IN (SELECT value FROM json_each(?))``.
    Sorted: probing the hash index in its own order keeps each probe near the last one
    (250,000 lookups among 650,000 specs: 0.41-0.45 s against 0.68-0.82 s unsorted)."""
    # Text, not bytes: SQLite 3.45.0 read a blob argument as binary JSONB.
    return msgspec.json.encode(sorted(hashes)).decode()


def _mirror_state(row: tuple[Any, ...]) -> MirrorState:
    fields = dict(zip(MirrorState.__struct_fields__, row, strict=True))
    fields["own_index"] = bool(fields["own_index"])  # SQLite has no booleans
    fields["signed"] = None if fields["signed"] is None else bool(fields["signed"])
    return MirrorState(**fields)


def mirror_state(db: sqlite3.Connection, tag: str, stack: str) -> MirrorState | None:
    """The stored state of one mirror, or None if it was never synced."""
    row = db.execute(
        f"SELECT {_MIRROR_COLUMNS} FROM mirrors m JOIN tags t ON t.id = m.tag_id "
        "WHERE t.name = ? AND m.stack = ? AND NOT m.dropped",
        (tag, stack),
    ).fetchone()
    return _mirror_state(row) if row else None


def mirrors(db: sqlite3.Connection, tag: str | None = None) -> list[MirrorState]:
    """All mirrors (of one tag), sorted by tag then stack with root first."""
    sql = (
        f"SELECT {_MIRROR_COLUMNS} FROM mirrors m JOIN tags t ON t.id = m.tag_id WHERE NOT m.dropped "
        + ("AND t.name = ? " if tag else "")
        + "ORDER BY t.name, m.stack != 'root', m.stack"
    )
    return [_mirror_state(row) for row in db.execute(sql, (tag,) if tag else ())]


def members_of(db: sqlite3.Connection, tag: str, stack: str) -> dict[str, bool]:
    """{hash: listed} of every record one mirror of a tag holds."""
    return {
        dag_hash: bool(listed)
        for dag_hash, listed in db.execute(
            "SELECT s.hash, mb.listed FROM members mb JOIN specs s ON s.id = mb.spec_id "
            "JOIN mirrors m ON m.id = mb.mirror_id JOIN tags t ON t.id = m.tag_id WHERE t.name = ? AND m.stack = ?",
            (tag, stack),
        )
    }


def tag_names(db: sqlite3.Connection) -> list[str]:
    """Names of the tags in the catalog, as people look for them (``versions.tag_order``:
    branches, their snapshots newest first, releases newest first, then the others)."""
    return tag_order(row[0] for row in db.execute("SELECT name FROM tags"))


#: Looking up n hashes probes the hash index once each (1.4-1.8 us in sorted order);
#: reading the hash of every spec the catalog holds costs 0.4-0.8 us a spec (a catalog of
#: 650,000 specs, warm). A first sync asks 250,000 hashes of an empty catalog, which
#: then took a second: with fewer specs than this many per hash asked, they are read
#: instead. (At 8, as first set, reading cost twice the lookups; at 4, before the lookups
#: were sorted, 100,000 hashes among 650,000 specs took 0.27-0.29 s, now 0.14-0.15 s.)
_SPECS_PER_HASH_TO_SCAN = 2.5


def _asked(db: sqlite3.Connection, hashes: Iterable[str]) -> tuple[Collection[str], bool]:
    """``hashes`` as a collection, and whether reading every spec beats looking them up."""
    wanted = hashes if isinstance(hashes, (set, frozenset, dict, KeysView)) else set(hashes)
    (top,) = db.execute("SELECT coalesce(max(id), 0) FROM specs").fetchone()  # ids rise: bounds the count
    return wanted, top < len(wanted) * _SPECS_PER_HASH_TO_SCAN


def spec_ids(db: sqlite3.Connection, hashes: Iterable[str]) -> dict[str, int]:
    """Map the given hashes to the ids of the specs the catalog already has."""
    wanted, scan = _asked(db, hashes)
    if scan:
        return {h: i for h, i in db.execute("SELECT hash, id FROM specs") if h in wanted}
    return dict(
        db.execute(
            "SELECT s.hash, s.id FROM json_each(?) j CROSS JOIN specs s ON s.hash = j.value", (_hashes_json(wanted),)
        )
    )


def known_specs(db: sqlite3.Connection, hashes: Iterable[str]) -> tuple[dict[str, int], set[str]]:
    """The ids of those of ``hashes`` the catalog has, and those of them whose binary size
    it knows. A sync asks both of a whole listing: one read of the hash index (which holds
    the ids) and the ids of the unsized specs answer both, where testing each spec's size
    would read its row at random (9.5 us a hash against 1.5 us)."""
    ids = spec_ids(db, hashes)
    unsized = {row[0] for row in db.execute("SELECT id FROM specs WHERE size IS NULL")}
    return ids, {h for h, spec_id in ids.items() if spec_id not in unsized}


def sized_hashes(db: sqlite3.Connection, hashes: Iterable[str]) -> set[str]:
    """Those of ``hashes`` whose binary size the catalog already knows."""
    return known_specs(db, hashes)[1]


def spec_sizes(db: sqlite3.Connection, hashes: Iterable[str]) -> dict[str, int | None]:
    """{hash: binary size, or None when unknown} of those of ``hashes`` the catalog has."""
    cursor = db.execute(
        "SELECT s.hash, s.size FROM specs s WHERE s.hash IN (SELECT value FROM json_each(?))", (_hashes_json(hashes),)
    )
    return dict(cursor.fetchall())


def size_keys(db: sqlite3.Connection, hashes: Iterable[str]) -> list[SizeKey]:
    """What locating the manifest or tarball of each known spec of ``hashes`` needs, by hash."""
    cursor = db.execute(
        f"SELECT {select_list(SizeKey)} FROM specs s WHERE s.hash IN (SELECT value FROM json_each(?)) ORDER BY s.hash",
        (_hashes_json(hashes),),
    )
    return list(as_rows(SizeKey, cursor))


def tag_stats(db: sqlite3.Connection, tags: Iterable[str] | None = None) -> list[TagStats]:
    """Totals per tag (of ``tags`` in the catalog, default all): records, listed specs,
    packages, stacks, sizes, what the last sync changed."""
    known = tag_names(db)
    wanted = known if tags is None else [tag for tag in tags if tag in known]
    return [_one_tag_stats(db, tag) for tag in wanted]


def _one_tag_stats(db: sqlite3.Connection, tag: str) -> TagStats:
    tag_id, synced_at, records, specs, packages, size, sized = db.execute(
        "SELECT id, synced_at, records, specs, packages, size, sized FROM tags WHERE name = ?", (tag,)
    ).fetchone()
    stacks = db.execute(
        "SELECT count(*) FROM mirrors WHERE tag_id = ? AND stack != 'root' AND NOT dropped", (tag_id,)
    ).fetchone()[0]
    # The tag's first sync is its oldest (syncs are never forgotten, only their changes):
    # the one history pages call its first too.
    last = db.execute(
        "SELECT added, removed, id = (SELECT min(id) FROM syncs WHERE tag_id = ?1) "
        "FROM syncs WHERE tag_id = ?1 ORDER BY id DESC LIMIT 1",
        (tag_id,),
    ).fetchone()
    added, removed, first = last if last else (0, 0, False)
    return TagStats(tag, records, specs, packages, stacks, size, sized, synced_at, added, removed, bool(first))


def listed_hashes(
    db: sqlite3.Connection, tag: str, stack: str = ROOT_STACK, among: Iterable[str] | None = None
) -> set[str]:
    """Hashes listed (``in_buildcache``) by one mirror of a tag (of ``among`` only, if given:
    then the hashes drive the read, not the whole listing)."""
    if among is not None:
        # CROSS JOIN keeps this order (the planner would scan the whole listing instead).
        rows = db.execute(
            "SELECT s.hash FROM json_each(?3) j CROSS JOIN specs s ON s.hash = j.value "
            "CROSS JOIN members mb ON mb.spec_id = s.id AND mb.listed CROSS JOIN mirrors m ON m.id = mb.mirror_id "
            "WHERE m.stack = ?1 AND m.tag_id = (SELECT id FROM tags WHERE name = ?2)",
            (stack, tag, _hashes_json(among)),
        )
        return {row[0] for row in rows}
    return {
        row[0]
        for row in db.execute(
            "SELECT s.hash FROM members mb JOIN specs s ON s.id = mb.spec_id "
            "JOIN mirrors m ON m.id = mb.mirror_id JOIN tags t ON t.id = m.tag_id "
            "WHERE t.name = ? AND m.stack = ? AND mb.listed",
            (tag, stack),
        )
    }


def unsized_listed_by_stack(db: sqlite3.Connection, tag: str) -> dict[str, set[str]]:
    """{stack: hashes it lists whose size is unknown} of every mirror of a tag, in one
    query driven by the unsized specs (through their partial index, then each one's
    memberships): after a first sync, nearly none, where a pass over 300,000 listed
    hashes of 40 stacks took ~0.1 s."""
    found: dict[str, set[str]] = {}
    for stack, dag_hash in db.execute(
        "SELECT m.stack, s.hash FROM specs s CROSS JOIN members mb ON mb.spec_id = s.id AND mb.listed "
        "CROSS JOIN mirrors m ON m.id = mb.mirror_id "  # (CROSS JOIN: in this order)
        "WHERE s.size IS NULL AND m.tag_id = (SELECT id FROM tags WHERE name = ?)",
        (tag,),
    ):
        found.setdefault(stack, set()).add(dag_hash)
    return found


def node(db: sqlite3.Connection, dag_hash: str) -> str | None:
    """The raw node JSON of a spec, as its index held it, or None."""
    row = db.execute(
        "SELECT n.node FROM nodes n JOIN specs s ON s.id = n.spec_id WHERE s.hash = ?", (dag_hash,)
    ).fetchone()
    return None if row is None else node_text_reader(db)(row[0])


def holders(db: sqlite3.Connection, dag_hash: str) -> list[tuple[str, str, bool, str, int | None]]:
    """(tag, stack, listed, mirror URL, layout) of every mirror whose index holds a hash."""
    return [
        (tag, stack, bool(listed), url, layout)
        for tag, stack, listed, url, layout in db.execute(
            "SELECT t.name, m.stack, mb.listed, m.url, m.layout FROM specs s "
            "JOIN members mb ON mb.spec_id = s.id JOIN mirrors m ON m.id = mb.mirror_id "
            "JOIN tags t ON t.id = m.tag_id WHERE s.hash = ? "
            "ORDER BY t.name, m.stack != 'root', m.stack",
            (dag_hash,),
        )
    ]


def edges_of(db: sqlite3.Connection, dag_hash: str, *, reverse: bool = False) -> list[Edge]:
    """Direct dependencies of a spec (or, ``reverse``, its direct dependents)."""
    near, far = ("child", "parent") if reverse else ("parent", "child")
    return [
        Edge(other, name, version, bool(listed), size, deptypes, virtuals)
        for other, name, version, deptypes, virtuals, listed, size in db.execute(
            "SELECT o.hash, o.name, o.version, e.deptypes, e.virtuals, "
            "EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = o.id AND mb.listed), o.size "
            f"FROM edges e JOIN specs me ON me.id = e.{near} JOIN specs o ON o.id = e.{far} "
            "WHERE me.hash = ? ORDER BY o.name, o.version, o.hash",
            (dag_hash,),
        )
    ]


def spec_configs(db: sqlite3.Connection, hashes: Collection[str]) -> dict[str, SpecConfig]:
    """{hash: variants, compiler, OS and target} of those of ``hashes`` the catalog has."""
    where, params = among("s.hash", hashes)
    return {
        row.hash: row
        for row in as_rows(SpecConfig, db.execute(f"SELECT {select_list(SpecConfig)} FROM specs s{where}", params))
    }


def closure(db: sqlite3.Connection, dag_hash: str, *, mask: int = LINK_RUN) -> list[Edge]:
    """Every spec reachable from a spec through edges whose deptypes meet ``mask``
    (default link and run: what installing the binary downloads), itself excluded."""
    return [
        Edge(other, name, version, bool(listed), size)
        for other, name, version, listed, size in db.execute(
            "WITH RECURSIVE reach(id) AS ("
            " SELECT e.child FROM edges e JOIN specs s ON s.id = e.parent"
            "  WHERE s.hash = ? AND e.deptypes & ?"
            " UNION SELECT e.child FROM edges e JOIN reach r ON e.parent = r.id WHERE e.deptypes & ?)"
            f" SELECT s.hash, s.name, s.version, {HAS_BINARY}, s.size "
            # A cycle back to the spec (a self-loop) must not count it as its own dependency.
            " FROM reach JOIN specs s ON s.id = reach.id WHERE s.hash != ? ORDER BY s.name, s.hash",
            (dag_hash, mask, mask, dag_hash),
        )
    ]


def package_tags(db: sqlite3.Connection, name: str) -> list[tuple[str, int]]:
    """(tag, listed specs) of every tag whose root mirror lists a package."""
    return list(
        db.execute(
            "SELECT t.name, count(*) FROM specs s JOIN members mb ON mb.spec_id = s.id AND mb.listed "
            "JOIN mirrors m ON m.id = mb.mirror_id AND m.stack = 'root' JOIN tags t ON t.id = m.tag_id "
            "WHERE s.name = ? GROUP BY t.name ORDER BY t.name",
            (name,),
        )
    )


def all_package_tags(db: sqlite3.Connection) -> dict[str, list[tuple[str, int]]]:
    """{package: :func:`package_tags` of it} for every package, in one pass."""
    result: dict[str, list[tuple[str, int]]] = {}
    for name, tag, count in db.execute(
        "SELECT s.name, t.name, count(*) FROM specs s JOIN members mb ON mb.spec_id = s.id AND mb.listed "
        "JOIN mirrors m ON m.id = mb.mirror_id AND m.stack = 'root' JOIN tags t ON t.id = m.tag_id "
        "GROUP BY s.name, t.name ORDER BY t.name"
    ):
        result.setdefault(name, []).append((tag, count))
    return result


def tag_members(
    db: sqlite3.Connection, tag: str, names: Collection[str] | None = None, stacks: Collection[str] | None = None
) -> dict[str, dict[str, tuple[str, str]]]:
    """{stack: {hash: (name, version)}} of the listed specs of every mirror of a tag
    (a stack's own listing; of the packages ``names`` and the stacks ``stacks`` only, if
    given), for diffs."""
    result: dict[str, dict[str, tuple[str, str]]] = {}
    (named, name_values), (stacked, stack_values) = among("s.name", names, "AND"), among("m.stack", stacks, "AND")
    for stack, dag_hash, name, version in db.execute(
        "SELECT m.stack, s.hash, s.name, s.version FROM mirrors m JOIN tags t ON t.id = m.tag_id "
        "JOIN members mb ON mb.mirror_id = m.id AND mb.listed JOIN specs s ON s.id = mb.spec_id "
        f"WHERE t.name = ?{named}{stacked}",
        (tag, *name_values, *stack_values),
    ):
        result.setdefault(stack, {})[dag_hash] = (name, version)
    return result


def held_hashes(db: sqlite3.Connection, hashes: Iterable[str] | None = None) -> set[str]:
    """Every hash some mirror holds, listed or not (of ``hashes`` only, if given)."""
    held = "EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = s.id)"
    if hashes is None:
        return {row[0] for row in db.execute(f"SELECT s.hash FROM specs s WHERE {held}")}
    wanted, scan = _asked(db, hashes)
    if scan:  # most of the catalog's hashes: reading them all is faster
        return held_hashes(db).intersection(wanted)
    return {
        row[0]
        for row in db.execute(
            f"SELECT s.hash FROM json_each(?) j CROSS JOIN specs s ON s.hash = j.value WHERE {held}",
            (_hashes_json(wanted),),
        )
    }


def hashes_starting(db: sqlite3.Connection, prefix: str, limit: int) -> list[str]:
    """Up to ``limit`` hashes of the catalog's records (listed, held without a binary,
    or kept for history only) that start with ``prefix``, in order."""
    rows = db.execute(
        "SELECT hash FROM specs WHERE hash >= ? AND hash < ? ORDER BY hash LIMIT ?", (prefix, prefix + "{", limit)
    )
    return [row[0] for row in rows]


def spec_summary(db: sqlite3.Connection, dag_hash: str) -> SpecSummary | None:
    """One spec by its full hash, whatever lists it (``tags`` and ``stacks`` left empty), or None."""
    row = db.execute(
        f"SELECT {select_list(SizeKey)}, s.variants, s.size FROM specs s WHERE s.hash = ?", (dag_hash,)
    ).fetchone()
    if row is None:
        return None
    key = SizeKey(*row[:7])
    return SpecSummary(
        hash=key.hash,
        name=key.name,
        version=key.version,
        compiler=key.compiler,
        platform=key.platform,
        os=key.os,
        target=key.target,
        variants=decode_variants(row[7]),
        size=row[8],
        tags=(),
        stacks=(),
    )
