"""How a catalog file is written: the first write of an empty catalog through a rollback
journal (each page written once), every other write through the write-ahead log."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cachedex.catalog import Catalog, bulk_load
from cachedex.errors import CatalogError
from tests.helpers import dump, replace_mirror, spec_row, write_tag

from .test_catalog import _record


def _journal(path: Path) -> str:
    """The journal mode a new connection finds in the file's header."""
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        db.close()


def _mode(catalog: Catalog) -> str:
    return str(catalog._db.execute("PRAGMA journal_mode").fetchone()[0])


def test_an_empty_catalog_s_first_write_goes_through_a_rollback_journal_then_back_to_the_log(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        with catalog.writing_tag("t") as writer:
            assert _mode(catalog) == "delete"
            writer.add_specs([_record("a" * 32)], {})
            replace_mirror(writer, "root", {"a" * 32: True})
        assert _mode(catalog) == "wal"
        assert spec_row(catalog, "a" * 32) is not None
        with catalog.writing_tag("u") as writer:  # not empty now: through the log
            assert _mode(catalog) == "wal"
            writer.add_specs([_record("b" * 32)], {})
            replace_mirror(writer, "root", {"b" * 32: True})
    assert _journal(path) == "wal"
    assert not path.with_name("c.sqlite-journal").exists()


def test_an_empty_catalog_another_connection_has_open_keeps_the_log_for_its_readers(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        reader = Catalog(path, readonly=True)  # (a server started before the first sync)
        with catalog.writing_tag("t", on_wait=lambda: pytest.fail("waited")) as writer:
            assert _mode(catalog) == "wal"
            writer.add_specs([_record("a" * 32)], {})
            replace_mirror(writer, "root", {"a" * 32: True})
            assert spec_row(reader, "a" * 32) is None  # it reads on, the committed state
        assert spec_row(reader, "a" * 32) is not None
        reader.close()


def test_a_failed_first_write_leaves_the_catalog_empty_and_in_the_log(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        before = dump(catalog)
        with pytest.raises(RuntimeError), catalog.writing_tag("t") as writer:
            writer.add_specs([_record(f"{n:032d}".replace("0", "a")) for n in range(3)], {})
            raise RuntimeError("boom")
        assert dump(catalog) == before
        assert _mode(catalog) == "wal"
        write_tag(catalog, "t", [_record("b" * 32)])  # and the next write still goes in whole
        assert spec_row(catalog, "b" * 32) is not None
    assert not path.with_name("c.sqlite-journal").exists()


def _killed_first_write(path: Path) -> None:
    """Leave ``path`` (an empty catalog) as a first write in a rollback journal leaves it
    when its process is killed just before the end of its commit: the write's pages in
    the file, the journal of the pages they replaced hot beside it."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("PRAGMA synchronous=OFF")  # its header then says: as many pages as it holds
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO tags (name) VALUES ('t')")
    db.executemany(
        "INSERT INTO specs (id, hash, name, version, platform, os, target, compiler, variants, external) "
        "VALUES (?, ?, 'zlib', '1', 'linux', 'x', 'y', 'z', '[]', 0)",
        [(n, f"{n:032d}") for n in range(1, 5000)],
    )
    journal = path.with_name(path.name + "-journal")
    hot = journal.read_bytes()
    db.execute("COMMIT")
    db.close()
    journal.write_bytes(hot)
    alone = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)  # the file, its journal ignored
    assert alone.execute("SELECT count(*) FROM specs").fetchone()[0] == 4999
    alone.close()


def test_a_first_write_killed_midway_is_rolled_back_by_the_next_writer(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    Catalog(path).close()
    _killed_first_write(path)
    with Catalog(path) as catalog:
        assert spec_row(catalog, f"{1:032d}") is None
        assert catalog.tag_stats([]) == []
        assert _mode(catalog) == "wal"
    assert not path.with_name("c.sqlite-journal").exists()


def test_a_reader_does_not_read_a_killed_first_write_s_pages(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    Catalog(path).close()
    _killed_first_write(path)
    with pytest.raises(CatalogError, match="first sync was interrupted .* run 'cachedex sync'$"):
        Catalog(path, readonly=True)  # (not the pages the killed write left in the file)
    with Catalog(path) as catalog:  # which a writer rolls back
        assert spec_row(catalog, f"{1:032d}") is None
    with Catalog(path, readonly=True) as reader:
        assert reader.tag_stats([]) == []


def test_a_bulk_load_builds_its_indexes_with_a_small_cache_then_gives_the_cache_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk_load, "BULK_MIN", 1)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        (cache,) = catalog._db.execute("PRAGMA cache_size").fetchone()
        seen: list[str] = []
        catalog._db.set_trace_callback(seen.append)
        with catalog.writing_tag("t") as writer:
            with writer.specs_in_bulk(2):
                writer.add_specs([_record("a" * 32), _record("b" * 32)], {})
            replace_mirror(writer, "root", {"a" * 32: True, "b" * 32: True})
        catalog._db.set_trace_callback(None)
        built = [s for s in seen if s.startswith(("PRAGMA cache_size=", "CREATE INDEX edges_child"))]
        small = f"PRAGMA cache_size={bulk_load.SORT_CACHE_KIB}"
        edges = "CREATE INDEX edges_child ON edges (child, parent, deptypes, virtuals)"
        assert built == [small, edges, f"PRAGMA cache_size={cache}"]
        assert catalog._db.execute("PRAGMA cache_size").fetchone()[0] == cache
        assert spec_row(catalog, "a" * 32) is not None and spec_row(catalog, "b" * 32) is not None
