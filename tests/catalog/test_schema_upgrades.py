"""Older catalogs with synced tags are upgraded in place and read as they were: the
columns a later schema added take values that keep what the catalog already held."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from cachedex.catalog import SCHEMA_VERSION, Catalog
from cachedex.catalog.schema import _MIGRATIONS, _split_sql
from cachedex.errors import CatalogError
from tests.helpers import listed_specs, record, write_tag


def _old_catalog(path: Path, version: int) -> sqlite3.Connection:
    """A catalog file at schema ``version``, made by the steps up to it, as an older
    cachedex left it."""
    db = sqlite3.connect(path, isolation_level=None)
    for step in range(version):
        for statement in _split_sql(_MIGRATIONS[step]):
            db.execute(statement)
    db.execute(f"PRAGMA user_version={version}")
    return db


def _one_synced_tag(db: sqlite3.Connection) -> None:
    """Tag t, its root mirror listing zlib, and the sync that wrote it (columns of schema 4)."""
    db.execute(
        "INSERT INTO specs VALUES (1, ?, 'zlib', '1.3', 'linux', 'rhel8', 'x86_64', 'gcc@13', '[]', 0, 10)",
        ("a" * 32,),
    )
    db.execute('INSERT INTO nodes VALUES (1, \'{"name": "zlib"}\')')
    db.execute(
        "INSERT INTO tags (id, name, synced_at, records, specs, packages, size, sized) "
        "VALUES (1, 't', 5.0, 1, 1, 1, 10, 1)"
    )
    db.execute(
        "INSERT INTO mirrors (id, tag_id, stack, url, layout, db_version, checksum, fetched_at, records, listed) "
        "VALUES (1, 1, 'root', '/m', 2, 7, 'c', 5.0, 1, 1)"
    )
    db.execute("INSERT INTO members VALUES (1, 1, 1)")
    db.execute("INSERT INTO syncs VALUES (1, 1, 4.0, 5.0, 1, 0)")


def test_a_version_4_catalog_s_mirrors_keep_their_listing_after_the_upgrade(tmp_path: Path) -> None:
    """Mirrors synced before views, dropped stacks and signing were recorded have their own
    index, are still configured, and have unknown signing: none of that may hide them or
    their specs, or say they sign (the pages would then leave out --unsigned)."""
    path = tmp_path / "c.sqlite"
    db = _old_catalog(path, 4)
    _one_synced_tag(db)
    db.close()
    with Catalog(path) as catalog:
        assert catalog.schema_version == SCHEMA_VERSION
        (mirror,) = catalog.mirrors("t")
        assert (mirror.stack, mirror.url, mirror.view) == ("root", "/m", None)
        assert mirror.own_index is True and mirror.signed is None
        assert [(s.name, s.hash) for s in listed_specs(catalog, "t")] == [("zlib", "a" * 32)]
        assert catalog.stack_names("t") == ["root"]
        (stats,) = catalog.tag_stats(["t"])
        assert stats.specs == 1


@pytest.mark.parametrize("version", range(2, SCHEMA_VERSION))
def test_a_catalog_of_every_older_schema_is_upgraded_and_reads_as_it_was(tmp_path: Path, version: int) -> None:
    path = tmp_path / "c.sqlite"
    db = _old_catalog(path, version)
    _one_synced_tag(db)
    db.close()
    with Catalog(path) as catalog:
        assert catalog.schema_version == SCHEMA_VERSION
        assert [(m.stack, m.own_index, m.signed) for m in catalog.mirrors("t")] == [("root", True, None)]
        assert [s.hash for s in listed_specs(catalog, "t")] == ["a" * 32]
        assert catalog.node("a" * 32) == '{"name": "zlib"}'
        assert catalog.state_token() == (f"{catalog.identity()[:8]}s1z1", 5.0)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_an_upgrade_that_fails_leaves_the_catalog_as_it_was_and_unlocked(tmp_path: Path) -> None:
    """A step that fails (here: a table of its name is already there) rolls every step back
    and gives up the write lock, so that another process can still write the file."""
    path = tmp_path / "c.sqlite"
    db = _old_catalog(path, 5)
    _one_synced_tag(db)
    db.execute("CREATE TABLE node_dictionaries (x)")  # step 6 to 7 makes it
    db.close()
    with pytest.raises(CatalogError) as failed:
        Catalog(path)
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # not "database is locked" while the error is held
    other.execute("ROLLBACK")
    assert failed.value is not None
    assert other.execute("PRAGMA user_version").fetchone()[0] == 5
    tables = {row[0] for row in other.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "verifications" not in tables  # the step from 5 to 6, which ran, is undone too


def test_the_catalog_holds_one_spec_per_hash_and_one_mirror_per_stack_of_a_tag(tmp_path: Path) -> None:
    """Every read by hash or by (tag, stack) expects at most one row."""
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO specs SELECT NULL, hash, name, version, platform, os, target, compiler, "
                   "variants, external, size FROM specs")  # fmt: skip
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO mirrors (tag_id, stack, url) SELECT tag_id, stack, url FROM mirrors")


def test_a_catalog_from_before_forgetting_gets_its_own_id_and_a_token_that_moves(tmp_path: Path) -> None:
    """Two catalogs upgraded from schema 8 each get a random id of their own (shared
    folders of pages are told apart by it), and their state token moves with a sync."""
    ids = []
    for name in ("a.sqlite", "b.sqlite"):
        db = _old_catalog(tmp_path / name, 8)
        _one_synced_tag(db)
        db.close()
        with Catalog(tmp_path / name) as catalog:
            identity = catalog.identity()
            assert re.fullmatch("[0-9a-f]{32}", identity)
            before = catalog.state_token()[0]
            assert before.startswith(identity[:8])
            write_tag(catalog, "u", [record("b" * 32, "cmake")])
            assert catalog.state_token()[0] != before
            ids.append(identity)
    assert ids[0] != ids[1]


def test_a_tag_forgotten_in_an_upgraded_catalog_takes_no_sync_id_it_had(tmp_path: Path) -> None:
    """Forgettings recorded before schema 10 had no highest sync id: the next sync must still
    take an id above every sync the catalog has had."""
    path = tmp_path / "c.sqlite"
    db = _old_catalog(path, 9)
    _one_synced_tag(db)
    db.execute("INSERT INTO forgotten (tag, at) VALUES ('old', 1.0)")
    db.close()
    with Catalog(path) as catalog:
        before = catalog.state_token()[0]
        write_tag(catalog, "u", [record("b" * 32, "cmake")])
        after = catalog.state_token()[0]
        assert after != before and "s2" in after
        catalog.forget_tags(["u"])
        assert catalog.state_token()[0] != after
        write_tag(catalog, "v", [record("c" * 32, "curl")])
        (last,) = catalog._db.execute("SELECT max(id) FROM syncs").fetchone()
        assert last == 3  # not 2 again: sync 2 was tag u's, now forgotten
