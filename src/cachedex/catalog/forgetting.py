"""Forgetting: a tag no longer configured (``cachedex forget``), and what nothing needs
any more (``cachedex gc``). Each runs inside the caller's write transaction
(``Catalog.forget_tags`` and ``Catalog.collect_garbage``), so that either is whole or not at all.
"""

from __future__ import annotations

import sqlite3
import time

__all__ = ["collect_garbage", "forget_tag"]


def collect_garbage(db: sqlite3.Connection, history_before: float | None) -> tuple[int, int]:
    """Forget what nothing needs any more, inside the caller's write transaction:
    the recorded changes of syncs that finished before ``history_before`` (if given),
    then every spec that no mirror holds, no remaining change names and no kept spec
    depends on. Returns (specs forgotten, changes forgotten)."""
    changes = 0
    if history_before is not None:
        changes = db.execute(
            "DELETE FROM changes WHERE sync_id IN (SELECT id FROM syncs WHERE finished_at < ?)", (history_before,)
        ).rowcount
    db.execute("CREATE TEMP TABLE keep (id INTEGER PRIMARY KEY)")
    try:
        db.execute(
            "WITH RECURSIVE k(id) AS (SELECT spec_id FROM members UNION SELECT spec_id FROM changes "
            "UNION SELECT e.child FROM edges e JOIN k ON e.parent = k.id) "
            "INSERT OR IGNORE INTO temp.keep SELECT id FROM k"
        )
        db.execute("DELETE FROM edges WHERE parent NOT IN (SELECT id FROM temp.keep)")
        db.execute("DELETE FROM nodes WHERE spec_id NOT IN (SELECT id FROM temp.keep)")
        specs = db.execute("DELETE FROM specs WHERE id NOT IN (SELECT id FROM temp.keep)").rowcount
    finally:
        db.execute("DROP TABLE temp.keep")
    if specs or changes:  # pages change (a spec's is gone): the state token counts this
        db.execute("UPDATE identity SET collected = collected + 1")
    return specs, changes


def forget_tag(db: sqlite3.Connection, tag: str) -> int:
    """Remove ``tag`` from the catalog inside the caller's write transaction: its
    mirrors, what they listed, its syncs and their history, its verifications. Its
    specs stay for :func:`collect_garbage` (another tag may hold them). Returns the
    specs its root listed; 0 for a tag the catalog does not have."""
    found = db.execute("SELECT id, specs FROM tags WHERE name = ?", (tag,)).fetchone()
    if found is None:
        return 0
    tag_id, listed = found
    (last_sync,) = db.execute("SELECT ifnull(max(id), 0) FROM syncs").fetchone()
    _drop_mirrors(db, [mirror_id for (mirror_id,) in db.execute("SELECT id FROM mirrors WHERE tag_id = ?", (tag_id,))])
    db.execute("DELETE FROM syncs WHERE tag_id = ?", (tag_id,))
    runs = "SELECT id FROM verifications WHERE tag = ?"
    for table in ("verification_problems", "verification_signatures"):
        db.execute(f"DELETE FROM {table} WHERE verification_id IN ({runs})", (tag,))
    db.execute("DELETE FROM verifications WHERE tag = ?", (tag,))
    db.execute("DELETE FROM tags WHERE id = ?", (tag_id,))
    db.execute("INSERT INTO forgotten (tag, at, last_sync) VALUES (?, ?, ?)", (tag, time.time(), last_sync))
    return int(listed)


def _drop_mirrors(db: sqlite3.Connection, mirror_ids: list[int]) -> None:
    """Remove mirrors with what they listed and their history (every mirror of a tag
    forgotten)."""
    for table, column in (("changes", "mirror_id"), ("members", "mirror_id"), ("mirrors", "id")):
        db.executemany(f"DELETE FROM {table} WHERE {column} = ?", [(mirror_id,) for mirror_id in mirror_ids])
