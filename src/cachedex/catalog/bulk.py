"""Whole-catalog reads for publishers: rows streamed from a cursor, a batch at a time.

A site or a Jekyll tree of a big tag reads hundreds of thousands of rows; these reads
stream them (memory does not grow with the tag) in the shapes of :mod:`.rows`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from .nodes import node_bytes_reader, node_text_reader
from .rows import HolderRow, HoldingMirror, ListedRow, SpecRow, among, as_rows, few_names, select_list

__all__ = [
    "all_edge_rows",
    "all_holder_rows",
    "all_spec_rows",
    "listed_rows",
    "members_by_mirror",
    "nodes_of",
    "root_listing_tags",
    "spec_nodes",
    "stack_listings",
]


def _stream(cursor: sqlite3.Cursor, batch: int) -> Iterator[Any]:
    """Every row of ``cursor``, fetched ``batch`` at a time."""
    while rows := cursor.fetchmany(batch):
        yield from rows


#: How the packages of a tag are shared among processes (``parts``): by the name's
#: length plus its last two characters (padded: never NULL), which spreads names evenly.
_SHARE = " AND (length(s.name) + unicode(substr(' ' || s.name, -1)) + unicode(substr('  ' || s.name, -2))) % ? = ?"


def listed_rows(
    db: sqlite3.Connection, tag: str, *, part: int = 0, parts: int = 1, names: Collection[str] | None = None
) -> Iterator[ListedRow]:
    """The specs ``tag``'s root mirror lists, as :class:`ListedRow`, ordered by package
    name then hash; nothing for an unknown tag.

    ``parts`` > 1 splits the packages into that many groups and yields only group
    ``part`` (0-based): processes can each write a share of a big tag, every package
    whole in exactly one share."""
    if not 0 <= part < parts:
        raise ValueError(f"part must be in 0..{parts - 1}, got {part}")
    row = db.execute(
        "SELECT m.id, m.tag_id FROM mirrors m JOIN tags t ON t.id = m.tag_id WHERE t.name = ? AND m.stack = 'root'",
        (tag,),
    ).fetchone()
    if row is None:
        return
    root_id, tag_id = row
    share = _SHARE if parts > 1 else ""
    named, chosen = among("s.name", names, "AND")
    # A few packages (a build after a small sync): their specs by the name index, each
    # checked against the mirror (see rows.FEW_NAMES).
    joined = (
        "specs s CROSS JOIN members mb ON mb.mirror_id = ? AND mb.spec_id = s.id WHERE mb.listed"
        if few_names(names)
        else "members mb JOIN specs s ON s.id = mb.spec_id WHERE mb.mirror_id = ? AND mb.listed"
    )
    cursor = db.execute(
        f"SELECT {select_list(ListedRow)} FROM {joined}{share}{named} ORDER BY s.name, s.hash",
        ((tag_id, root_id, parts, part) if parts > 1 else (tag_id, root_id)) + chosen,
    )
    yield from as_rows(ListedRow, _stream(cursor, 2000))


def all_spec_rows(db: sqlite3.Connection, ids: Collection[int] | None = None) -> Iterator[SpecRow]:
    """Every spec of the catalog (or those of ``ids``), as :class:`SpecRow`."""
    where, params = among("s.id", ids)
    cursor = db.execute(f"SELECT {select_list(SpecRow)} FROM specs s{where}", params)
    return as_rows(SpecRow, _stream(cursor, 5000))


def all_edge_rows(
    db: sqlite3.Connection, parents: Collection[int] | None = None
) -> Iterator[tuple[int, int, int, str]]:
    """``(parent id, child id, deptypes, virtuals)`` of every edge (from ``parents``)."""
    where, params = among("parent", parents)
    return _stream(db.execute(f"SELECT parent, child, deptypes, virtuals FROM edges{where}", params), 20000)


#: The order of a spec's holders: tags by name, each tag's root mirror first.
_HOLDER_ORDER = "ORDER BY t.name, m.stack != 'root', m.stack"


def all_holder_rows(db: sqlite3.Connection, ids: Collection[int] | None = None) -> Iterator[HolderRow]:
    """Every mirror's records (of the specs of ``ids``), as :class:`HolderRow`, tags in
    order and each tag's root mirror first (the order of ``Catalog.holders``)."""
    where, params = among("mb.spec_id", ids)
    cursor = db.execute(
        f"SELECT {select_list(HolderRow)} FROM members mb JOIN mirrors m ON m.id = mb.mirror_id "
        f"JOIN tags t ON t.id = m.tag_id{where} {_HOLDER_ORDER}",
        params,
    )
    return as_rows(HolderRow, _stream(cursor, 20000))


def members_by_mirror(db: sqlite3.Connection) -> Iterator[tuple[HoldingMirror, list[tuple[int, int]]]]:
    """Every mirror in the order of :func:`all_holder_rows`, each with ``(spec id,
    listed)`` of every record it holds: a mirror at a time, along the members' primary
    key, where one read of every member sorted them all (a million rows: 0.3 s instead of
    1.4 s for the bench tag's graph)."""
    mirrors = db.execute(
        f"SELECT {select_list(HoldingMirror)} FROM mirrors m JOIN tags t ON t.id = m.tag_id {_HOLDER_ORDER}"
    ).fetchall()
    for mirror in as_rows(HoldingMirror, mirrors):
        yield mirror, db.execute("SELECT spec_id, listed FROM members WHERE mirror_id = ?", (mirror.id,)).fetchall()


def root_listing_tags(db: sqlite3.Connection, ids: Collection[int] | None = None) -> Iterator[tuple[int, str]]:
    """``(spec id, tag)`` for every tag whose root mirror lists a spec (of ``ids``), tags in order."""
    where, params = among("mb.spec_id", ids, "AND")
    return _stream(
        db.execute(
            "SELECT mb.spec_id, t.name FROM members mb JOIN mirrors m ON m.id = mb.mirror_id "
            f"JOIN tags t ON t.id = m.tag_id WHERE mb.listed AND m.stack = 'root'{where} ORDER BY t.name",
            params,
        ),
        20000,
    )


def nodes_of(db: sqlite3.Connection, ids: Sequence[int]) -> Iterator[tuple[int, str]]:
    """``(spec id, raw node JSON)`` for the given ids, in ascending id order."""
    wanted = sorted(ids)
    read = node_text_reader(db)
    for start in range(0, len(wanted), 5000):
        chunk = wanted[start : start + 5000]
        for spec_id, stored in db.execute(
            "SELECT spec_id, node FROM nodes WHERE spec_id IN (SELECT value FROM json_each(?)) ORDER BY spec_id",
            (json.dumps(chunk),),
        ):
            yield spec_id, read(stored)


def stack_listings(
    db: sqlite3.Connection,
    *,
    tags: Sequence[str] | None = None,
    stacks: Sequence[str] | None = None,
    packages: Sequence[str] | None = None,
    include_root: bool = False,
) -> tuple[dict[int, tuple[str, str]], Iterator[tuple[int, int]]]:
    """What the own index of each mirror in scope lists (``in_buildcache``): the
    mirrors, ``{mirror id: (tag, stack)}``, and ``(spec id, mirror id)`` of every
    listing, unordered. In scope: the stacks, the root too with ``include_root``, never
    a root of views only (it has no index of its own); ``tags``, ``stacks`` and
    ``packages`` (names) narrow it."""
    where = ["m.own_index"]
    params: list[str] = []
    if not include_root:
        where.append("m.stack != 'root'")
    for column, names in (("t.name", tags), ("m.stack", stacks)):
        if names is not None:
            where.append(f"{column} IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(list(names)))
    mirrors = {
        mirror_id: (tag, stack)
        for mirror_id, tag, stack in db.execute(
            f"SELECT m.id, t.name, m.stack FROM mirrors m JOIN tags t ON t.id = m.tag_id WHERE {' AND '.join(where)}",
            params,
        )
    }
    sql = "SELECT mb.spec_id, mb.mirror_id FROM members mb"
    listed = ["mb.listed", "mb.mirror_id IN (SELECT value FROM json_each(?))"]
    chosen = [json.dumps(list(mirrors))]
    if packages is not None:
        sql += " JOIN specs s ON s.id = mb.spec_id"
        listed.append("s.name IN (SELECT value FROM json_each(?))")
        chosen.append(json.dumps(list(packages)))
    return mirrors, _stream(db.execute(f"{sql} WHERE {' AND '.join(listed)}", chosen), 20000)


def spec_nodes(
    db: sqlite3.Connection, ids: Sequence[int]
) -> Iterator[tuple[int, str, str, str, str, str, str, str, int | None, bytes]]:
    """``(id, hash, name, version, compiler, platform, os, target, size, raw node)`` of
    the specs of ``ids``, in ascending id order (the tables' own order: no B-tree walk
    per spec); the node as the bytes of its JSON text."""
    cursor = db.execute(
        "SELECT s.id, s.hash, s.name, s.version, s.compiler, s.platform, s.os, s.target, s.size, "
        "CAST(n.node AS BLOB) FROM specs s JOIN nodes n ON n.spec_id = s.id "
        "WHERE s.id IN (SELECT value FROM json_each(?)) ORDER BY s.id",
        (json.dumps(sorted(ids)),),
    )
    read = node_bytes_reader(db)
    for *row, stored in _stream(cursor, 2000):
        yield (*row, read(stored))
