"""A tag's totals (records, listed specs, packages, size, sized): counted again after a
sync changed its listings, and grown by the binary sizes recorded later."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

import msgspec

__all__ = ["record_sizes", "update_totals"]

_encode = msgspec.json.encode


def update_totals(db: sqlite3.Connection, tag_id: int, replaced: Mapping[int, list[int]]) -> None:
    """Count the totals of tag ``tag_id`` (records, listed specs, packages, size) again after
    a sync changed its listings; ``replaced`` holds the spec ids of each mirror (by id)
    whose listing the sync wrote."""
    mirrors = [row[0] for row in db.execute("SELECT id FROM mirrors WHERE tag_id = ?", (tag_id,))]
    if all(mirror in replaced for mirror in mirrors):
        # Every mirror's listing was written here (a first sync): counted from its ids
        # in ~0.02 s rather than by SQLite's DISTINCT over its 550,000 rows (~0.1 s).
        records = len(set().union(*(replaced[mirror] for mirror in mirrors)))
    else:
        (records,) = db.execute(
            "SELECT count(DISTINCT spec_id) FROM members WHERE mirror_id IN (SELECT id FROM mirrors WHERE tag_id = ?)",
            (tag_id,),
        ).fetchone()
    specs, packages, size, sized = db.execute(
        "SELECT count(*), count(DISTINCT s.name), coalesce(sum(s.size), 0), count(s.size) "
        "FROM members mb JOIN specs s ON s.id = mb.spec_id "
        "WHERE mb.listed AND mb.mirror_id = "
        "(SELECT id FROM mirrors WHERE tag_id = ? AND stack = 'root')",
        (tag_id,),
    ).fetchone()
    db.execute(
        "UPDATE tags SET records = ?, specs = ?, packages = ?, size = ?, sized = ? WHERE id = ?",
        (records, specs, packages, size, sized, tag_id),
    )


def record_sizes(db: sqlite3.Connection, sizes: Mapping[int, int]) -> int:
    """Record binary sizes (by spec id) the catalog did not know (a hash's size never
    changes), and add them to the totals of every tag whose root mirror lists them,
    inside the caller's write transaction. Returns how many sizes were new.

    The pairs go in as one JSON text and every row is written by SQLite itself: a sync
    records a hundred thousand sizes, and a Python call per row would cost more than
    reading them did."""
    db.execute("CREATE TEMP TABLE IF NOT EXISTS new_sizes (id INTEGER PRIMARY KEY, size INTEGER NOT NULL)")
    db.execute("DELETE FROM new_sizes")
    db.execute(
        "INSERT OR IGNORE INTO new_sizes SELECT s.id, json_extract(j.value, '$[1]') FROM json_each(?) j "
        "JOIN specs s ON s.id = json_extract(j.value, '$[0]') WHERE s.size IS NULL",
        (_encode(list(sizes.items())).decode(),),
    )
    (new,) = db.execute("SELECT count(*) FROM new_sizes").fetchone()
    db.execute(
        "UPDATE specs SET size = (SELECT n.size FROM new_sizes n WHERE n.id = specs.id) "
        "WHERE id IN (SELECT id FROM new_sizes)"
    )
    db.execute(
        "UPDATE tags SET size = tags.size + t.bytes, sized = tags.sized + t.count FROM (SELECT m.tag_id, "
        "sum(n.size) AS bytes, count(*) AS count FROM new_sizes n JOIN members mb ON mb.spec_id = n.id "
        "AND mb.listed JOIN mirrors m ON m.id = mb.mirror_id AND m.stack = 'root' GROUP BY m.tag_id) AS t "
        "WHERE tags.id = t.tag_id"
    )
    return int(new)
