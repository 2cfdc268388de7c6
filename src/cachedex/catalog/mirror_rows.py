"""A mirror's row as a sync writes it (:meth:`.writer.TagWriter.replace_mirror`): its
state, and whether it signs its binaries, with when a sync found that.

``signed`` NULL with a ``signed_at`` is "looked at, not told" (a v3 mirror whose sampled
manifests could not be read): a sync of the same index does not sample it again, as it
would find the same; a changed index is sampled whatever the row says, and a moved
mirror's row forgets both."""

from __future__ import annotations

import sqlite3

__all__ = ["MirrorValues", "record_signing", "signing_samples", "write_mirror_row"]

#: (url, layout, db_version, checksum, etag, last_modified, fetched_at, records,
#: listed, view, own_index): the columns every write of a mirror's new index sets.
MirrorValues = tuple[str, int, int, "str | None", "str | None", "str | None", float, int, int, "str | None", int]


def write_mirror_row(
    db: sqlite3.Connection,
    tag_id: int,
    stack: str,
    values: MirrorValues,
    *,
    signed: bool | None,
    moved: bool,
    looked: bool = True,
) -> tuple[int, bool]:
    """Insert or update the mirror ``stack`` of tag ``tag_id``: (its id, whether it is
    new). ``signed`` (see :attr:`.rows.MirrorState.signed`) is recorded with the sync's
    time (``fetched_at``), which a newer verification overrides; None (nothing readable
    this time) keeps what the row knew, unless the mirror ``moved``; where the row knew
    nothing, it is recorded as looked at (see :func:`record_signing`) unless not
    ``looked`` (a passing failure: the next sync asks again)."""
    found_at = values[6] if signed is not None or (values[1] == 3 and looked) else None
    row = db.execute("SELECT id FROM mirrors WHERE tag_id = ? AND stack = ?", (tag_id, stack)).fetchone()
    if row is None:
        inserted = db.execute(
            "INSERT INTO mirrors (url, layout, db_version, checksum, etag, last_modified, fetched_at, records, "
            "listed, view, own_index, signed, signed_at, tag_id, stack) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
            (*values, signed, found_at, tag_id, stack),  # (a bool is stored as 1 or 0)
        ).fetchone()
        return int(inserted[0]), True
    mirror_id = int(row[0])
    db.execute(
        "UPDATE mirrors SET url = ?, layout = ?, db_version = ?, checksum = ?, etag = ?, last_modified = ?, "
        "fetched_at = ?, records = ?, listed = ?, view = ?, own_index = ?, dropped = 0 WHERE id = ?",
        (*values, mirror_id),
    )
    if moved:
        db.execute("UPDATE mirrors SET signed = NULL, signed_at = NULL WHERE id = ?", (mirror_id,))
    record_signing(db, tag_id, stack, signed, values[6], looked=looked)
    return mirror_id, False


def record_signing(
    db: sqlite3.Connection, tag_id: int, stack: str, signed: bool | None, found_at: float, *, looked: bool = True
) -> None:
    """Record what a sync read at ``found_at`` found of a mirror's signing; None (not
    told this time) leaves what the row knew, and when it was found. A v3 mirror not
    known is recorded as looked at (``signed_at`` set, ``signed`` NULL): its sync read
    its samples or had none to read, and the same index would tell no more next time
    (see :func:`signing_samples`); not ``looked`` (a read failed for a passing reason: a
    server error, a timeout), it is not, and the next sync samples it again."""
    if signed is not None:
        db.execute(
            "UPDATE mirrors SET signed = ?, signed_at = ? WHERE tag_id = ? AND stack = ?",
            (signed, found_at, tag_id, stack),
        )
    else:
        db.execute(
            "UPDATE mirrors SET signed_at = ? WHERE tag_id = ? AND stack = ? AND signed IS NULL AND layout = 3",
            (found_at if looked else None, tag_id, stack),
        )


def signing_samples(db: sqlite3.Connection, tag: str, stack: str, count: int) -> list[tuple[str, str, str]]:
    """(hash, name, version) of up to ``count`` listed specs of a mirror, spread over its
    listing (its first, middle and last by id): what a sync reads to tell whether a
    mirror whose index did not change signs, when its row does not say (a catalog made
    before it was recorded). Nothing once a sync looked at this index and was not told (see
    :func:`record_signing`): each sync of it read the same unreadable files again."""
    mirror = db.execute(
        "SELECT m.id, m.signed IS NULL AND m.signed_at IS NOT NULL FROM mirrors m JOIN tags t ON t.id = m.tag_id "
        "WHERE t.name = ? AND m.stack = ?",
        (tag, stack),
    ).fetchone()
    if mirror is None or mirror[1]:
        return []
    mirror_id = mirror[0]
    (listed,) = db.execute("SELECT count(*) FROM members WHERE mirror_id = ? AND listed", (mirror_id,)).fetchone()
    found: dict[str, tuple[str, str, str]] = {}
    for offset in dict.fromkeys((0, listed // 2, listed - 1)) if listed else ():
        for row in db.execute(
            "SELECT s.hash, s.name, s.version FROM members mb JOIN specs s ON s.id = mb.spec_id "
            "WHERE mb.mirror_id = ? AND mb.listed ORDER BY mb.spec_id LIMIT 1 OFFSET ?",
            (mirror_id, offset),
        ):
            found.setdefault(row[0], tuple(row))
    return list(found.values())[:count]
