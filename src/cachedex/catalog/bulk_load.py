"""A bulk load: when a write brings more new rows than the catalog holds (a first sync),
its secondary indexes are dropped and built once afterwards from sorted data."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

__all__ = ["BULK_MIN", "SORT_CACHE_KIB", "indexes_built_after", "is_bulk_load", "max_spec_id"]

#: Rows a write must bring, at least, to load them in bulk (see :func:`is_bulk_load`).
BULK_MIN = 20_000


def is_bulk_load(db: sqlite3.Connection, new_specs: int) -> bool:
    """Whether ``new_specs`` new specs are written in bulk (:meth:`.writer.TagWriter.specs_in_bulk`):
    many, and more than the catalog holds (a first sync)."""
    return new_specs > max(BULK_MIN, max_spec_id(db))


def max_spec_id(db: sqlite3.Connection) -> int:
    # max(id), not count(*): ids are given in order, so it bounds the count, and it is
    # read from the end of the table rather than by a scan of it.
    (top,) = db.execute("SELECT coalesce(max(id), 0) FROM specs").fetchone()
    return int(top)


#: The page cache while a bulk load's indexes are built (negative: KiB), see below.
SORT_CACHE_KIB = -16384


@contextmanager
def indexes_built_after(db: sqlite3.Connection, indexes: Mapping[str, str], bulk: bool) -> Iterator[None]:
    """Around the rows of a bulk load (if ``bulk``): ``indexes`` (name -> CREATE) are
    dropped first and built once afterwards from sorted data, which costs less than
    keeping them up row by row. Not after a failure: the rollback restores them."""
    if bulk:
        for name in indexes:
            db.execute(f"DROP INDEX IF EXISTS {name}")
    yield
    if bulk:
        (cache,) = db.execute("PRAGMA cache_size").fetchone()
        # SQLite sorts an index's entries in runs of as many bytes as the page cache
        # holds, then merges them: runs of 16 MiB stay in the processor's caches (a
        # first sync's indexes 0.80 s against 0.95 s with its 128 MiB, bench/README.md).
        db.execute(f"PRAGMA cache_size={SORT_CACHE_KIB}")
        try:
            for statement in indexes.values():
                db.execute(statement)
        finally:
            db.execute(f"PRAGMA cache_size={int(cache)}")
