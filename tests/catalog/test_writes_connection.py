"""What a catalog's writing connection is left as after a write (``catalog/connection.py``):
back in WAL mode, and still waiting for another process's write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cachedex.catalog import Catalog
from tests.helpers import _db, record, write_tag

A, B = "a" * 32, "b" * 32


def test_after_an_empty_catalog_s_first_sync_a_reader_may_read_while_the_next_one_writes(tmp_path: Path) -> None:
    """The first write may go through a rollback journal; the catalog must be back in WAL
    mode after it, or readers (``cachedex serve``) wait on every later sync."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", [record(A)])
        assert _db(catalog).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(B, "hdf5")], {})
            # (a catalog that holds specs is written through the log: readers never wait on it)
            assert _db(catalog).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            reader = sqlite3.connect(tmp_path / "c.sqlite", timeout=0)
            try:
                assert reader.execute("SELECT count(*) FROM specs").fetchone() == (1,)
            finally:
                reader.close()


def test_a_writer_still_waits_for_another_process_s_write_after_its_own(tmp_path: Path) -> None:
    """Its wait is set to 0 while it tries a lock; a wait left at 0 made the next sync fail at once."""
    with Catalog(tmp_path / "c.sqlite", write_wait=12.5) as catalog:
        for tag in ("dev", "prod"):
            write_tag(catalog, tag, [record(A if tag == "dev" else B, "hdf5")])
            assert _db(catalog).execute("PRAGMA busy_timeout").fetchone() == (12500,)


def test_an_empty_catalog_s_first_sync_through_a_rollback_journal_syncs_it_fully(tmp_path: Path) -> None:
    """A rollback journal's header must reach the disk, or a power loss mid-write leaves a torn catalog."""
    with Catalog(tmp_path / "c.sqlite") as catalog, catalog.writing_tag("dev") as writer:
        writer.add_specs([record(A)], {})
        db = _db(catalog)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        assert db.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
