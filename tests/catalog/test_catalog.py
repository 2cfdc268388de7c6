"""The SQLite catalog: schema versions, read-only use, readers during a write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import pytest

from cachedex.catalog import PAGE_SIZE, SCHEMA_VERSION, Catalog
from cachedex.errors import CatalogError
from cachedex.values import SpecRecord
from tests.helpers import dependencies, dump, spec_row, write_tag


def _record(dag_hash: str, name: str = "zlib") -> SpecRecord:
    return SpecRecord(
        hash=dag_hash,
        name=name,
        version="1.3.1",
        platform="linux",
        os="ubuntu24.04",
        target="x86_64_v3",
        compiler="gcc@13.2.0",
        variants=("+shared",),
        dependencies=(),
        in_buildcache=True,
        external=False,
        node=b'{"name": "zlib"}',
    )


def test_new_catalog_has_the_current_schema(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        assert catalog.schema_version == SCHEMA_VERSION
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"specs", "edges", "tags", "mirrors", "members", "syncs", "changes"} <= tables


def test_a_new_catalog_has_big_pages_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    with Catalog(tmp_path / "new.sqlite") as catalog:
        write_tag(catalog, "t", [_record("a" * 32)])
    assert sqlite3.connect(tmp_path / "new.sqlite").execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 16384
    old = sqlite3.connect(tmp_path / "old.sqlite")  # as cachedex made catalogs before
    old.execute("PRAGMA page_size=4096")
    old.execute("PRAGMA journal_mode=WAL")
    old.close()
    with Catalog(tmp_path / "old.sqlite") as catalog:
        write_tag(catalog, "t", [_record("a" * 32), _record("b" * 32)])
        assert catalog.tag_stats(["t"])[0].specs == 2
    assert sqlite3.connect(tmp_path / "old.sqlite").execute("PRAGMA page_size").fetchone()[0] == 4096


def test_a_catalog_from_a_newer_cachedex_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    Catalog(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(CatalogError, match="is newer than this cachedex understands"):
        Catalog(path)


def test_read_only_needs_an_existing_catalog(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="run 'cachedex sync' first"):
        Catalog(tmp_path / "missing.sqlite", readonly=True)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"definitely not sqlite" * 100)
    with pytest.raises(CatalogError, match="not an SQLite file, so not a catalog"):
        Catalog(path)


def test_writes_roll_back_on_error_and_readers_see_the_old_state(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([_record("a" * 32)], {})
            writer.replace_mirror(
                "root",
                "/m",
                layout=2,
                db_version=8,
                checksum="x",
                etag=None,
                last_modified=None,
                fetched_at=0.0,
                members={"a" * 32: True},
            )
        before = dump(catalog)
        reader = Catalog(path, readonly=True)
        with pytest.raises(RuntimeError), catalog.writing_tag("t") as writer:
            writer.add_specs([_record("b" * 32)], {})
            # a reader during the write sees the committed state only (WAL)
            assert spec_row(reader, "b" * 32) is None and spec_row(reader, "a" * 32) is not None
            raise RuntimeError("boom")
        reader.close()
        assert dump(catalog) == before


def test_sizes_are_kept_forever_per_hash_and_counted_in_the_totals(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [_record("a" * 32), _record("b" * 32)], sizes={"a" * 32: 1234})
        # (c: a dependency u holds and does not list, whose size comes later)
        write_tag(catalog, "u", [_record("c" * 32)], members={"b" * 32: True, "a" * 32: False, "c" * 32: False})
        (t,) = catalog.tag_stats(["t"])
        assert (t.size, t.sized, t.specs) == (1234, 1, 2)
        assert catalog.sized_hashes(["a" * 32, "b" * 32, "c" * 32]) == {"a" * 32}  # b unsized, c unknown
        assert catalog.unsized_listed_by_stack("t") == {"root": {"b" * 32}}
        assert catalog.unsized_listed_by_stack("u") == {"root": {"b" * 32}}  # a: known, and not listed
        ids = catalog.spec_ids(["a" * 32, "b" * 32, "c" * 32])
        assert catalog.record_sizes({ids["a" * 32]: 999, ids["b" * 32]: 10}) == 1  # never overwrites a known size
        assert catalog.record_sizes({ids["c" * 32]: 5}) == 1  # (not u's to count: it does not list it)
        assert catalog.sized_hashes(["a" * 32, "b" * 32]) == {"a" * 32, "b" * 32}
        row = spec_row(catalog, "a" * 32)
        assert row is not None and row["size"] == 1234
        t, u = catalog.tag_stats(["t", "u"])
        assert (t.size, t.sized) == (1244, 2) and (u.size, u.sized) == (10, 1)  # u lists b only
        assert catalog.unsized_listed_by_stack("t") == {}


def test_spec_batches_may_point_to_specs_of_later_batches(tmp_path: Path) -> None:
    from cachedex.values import Dependency

    parent = msgspec.structs.replace(
        _record("p" * 32, "app"),
        dependencies=(
            Dependency(name="zlib", hash="z" * 32, deptypes=2, virtuals=""),
            Dependency(name="gone", hash="g" * 32, deptypes=2, virtuals=""),
        ),
    )
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            count = writer.add_spec_batches(["p" * 32, "z" * 32], iter([[parent], [_record("z" * 32)]]), {})
        assert count == 2
        # the edge to a later batch is kept; the one to a hash no index holds is dropped
        assert [(h, n) for h, n, _, _ in dependencies(catalog, "p" * 32)] == [("z" * 32, "zlib")]
        with pytest.raises(AssertionError, match="2 specs announced, 1 given"), catalog.writing_tag("t") as writer:
            writer.add_spec_batches(["a" * 32, "b" * 32], [[_record("a" * 32)]], {})
        assert spec_row(catalog, "a" * 32) is None


def test_a_version_1_catalog_is_upgraded_in_place(tmp_path: Path) -> None:
    from cachedex.catalog.schema import _SCHEMA_V1, _split_sql

    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    for statement in _split_sql(_SCHEMA_V1):
        db.execute(statement)
    db.execute(
        "INSERT INTO specs VALUES (1, ?, 'zlib', '1.3', 'linux', 'rhel8', 'x86_64', "
        "'gcc@13', '[]', 0, 10, '{\"name\": \"zlib\"}')",
        ("a" * 32,),
    )
    db.execute("PRAGMA user_version=1")
    db.close()
    with pytest.raises(CatalogError, match="needs an upgrade; run 'cachedex sync' once"):
        Catalog(path, readonly=True)
    with Catalog(path) as catalog:
        assert catalog.schema_version == SCHEMA_VERSION
        assert catalog.node("a" * 32) == '{"name": "zlib"}'
        row = spec_row(catalog, "a" * 32)
        assert row is not None and row["size"] == 10 and "node" not in row
    columns = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(specs)")]
    assert "node" not in columns and "size" in columns
    # Schema 8: a spec's dependents (and a walk up to them) read the edges' child index alone.
    dependents = "SELECT parent, deptypes, virtuals FROM edges WHERE child = 1"
    plan = sqlite3.connect(path).execute(f"EXPLAIN QUERY PLAN {dependents}")
    assert "USING COVERING INDEX edges_child" in str(plan.fetchall())


def test_a_catalog_whose_first_sync_was_killed_says_so_to_readers(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    sqlite3.connect(path).execute("PRAGMA journal_mode=WAL").close()  # created, no schema yet
    with pytest.raises(
        CatalogError, match=r"holds no catalog yet \(no sync has finished writing it\); run 'cachedex sync' first$"
    ):
        Catalog(path, readonly=True)
    with Catalog(path) as catalog:  # a writer creates the schema as on a first sync
        assert catalog.schema_version == SCHEMA_VERSION


def test_facet_search_indexes_follow_each_sync(tmp_path: Path) -> None:
    from cachedex.query import parse

    path = tmp_path / "c.sqlite"

    def sync(hashes: list[str], new: list[str]) -> None:
        with Catalog(path) as catalog, catalog.writing_tag("t") as writer:
            writer.add_specs([_record(h, name=f"p{h[0]}") for h in new], {})
            writer.replace_mirror(
                "root",
                "/m",
                layout=2,
                db_version=8,
                checksum=",".join(hashes),
                etag=None,
                last_modified=None,
                fetched_at=0.0,
                members=dict.fromkeys(hashes, True),
            )

    sync(["a" * 32], ["a" * 32])
    with Catalog(path, readonly=True) as reader:
        assert reader.warm_search() == 2  # the whole catalog, and tag t
        assert reader.search(parse("target=x86_64_v3"), tag="t").total == 1
        sync(["a" * 32, "b" * 32], ["b" * 32])  # a new catalog state: the reader's indexes must not be stale
        found = reader.search(parse("target=x86_64_v3 os=ubuntu24.04"), tag="t")
        assert found.total == 2 and [s.name for s in found.specs] == ["pa", "pb"]
        assert reader.search(parse("target=x86_64_v3")).total == 2  # no tag: every listed spec
        assert reader.search(parse("os=rhel8"), tag="t").total == 0


def test_stack_names_are_the_mirrors_of_the_tag_root_first(demo_run) -> None:  # type: ignore[no-untyped-def]
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            assert catalog.stack_names(tag) == [m.stack for m in catalog.mirrors(tag)]
            assert len(catalog.stack_names(tag)) > 1
        assert catalog.stack_names("no-such-tag") == []


def _indexes(catalog: Catalog) -> set[str]:
    return {row[0] for row in catalog._db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_a_first_sync_s_members_go_in_before_their_index_by_spec(tmp_path: Path) -> None:
    records = [_record(f"{number:032d}") for number in range(25_000)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs(records, {})
            with writer.members_in_bulk(len(records)):
                assert "members_spec" not in _indexes(catalog)
                members = {r.hash: True for r in records}
                writer.replace_mirror(
                    "root", "file:///m", layout=3, db_version=8, checksum="c", etag=None,
                    last_modified=None, fetched_at=0.0, members=members,
                )  # fmt: skip
        assert "members_spec" in _indexes(catalog)
        (stats,) = catalog.tag_stats(["t"])
        assert stats.specs == 25_000
        # a later sync no bigger than the catalog: the index is kept up as the rows go in
        with catalog.writing_tag("u") as writer, writer.members_in_bulk(25_000):
            assert "members_spec" in _indexes(catalog)
        # a failed bulk sync: the rollback brings the index back
        with pytest.raises(RuntimeError), catalog.writing_tag("v") as writer, writer.members_in_bulk(60_000):
            assert "members_spec" not in _indexes(catalog)
            raise RuntimeError("boom")
        assert "members_spec" in _indexes(catalog)


def test_ids_and_sizes_are_found_whether_the_specs_are_read_or_looked_up(tmp_path: Path) -> None:
    """Few hashes asked of many specs are looked up; many asked of few, read from every
    spec (reads._asked): both give the same answer, unknown hashes left out."""
    from cachedex.catalog import reads

    records = [_record(f"{n:032d}") for n in range(100)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", records, sizes={r.hash: 10 for r in records[::2]})
        every = catalog.spec_ids(r.hash for r in records)
        for asked in ([records[3].hash, "x" * 32], [r.hash for r in records[:60]] + ["y" * 32]):
            _wanted, scan = reads._asked(catalog._db, asked)
            assert scan == (len(asked) > 40)  # 100 specs: read when more than 100 / 2.5 are asked
            assert catalog.spec_ids(asked) == {h: every[h] for h in asked if h in every}
            assert catalog.sized_hashes(asked) == {h for h in asked if h in every and int(h) % 2 == 0}
            known = catalog.known_specs(asked)
            assert known.ids == catalog.spec_ids(asked) and known.sized == catalog.sized_hashes(asked)


def test_what_the_catalog_knew_holds_until_another_process_commits(tmp_path: Path) -> None:
    """A sync reads ids before taking the write lock and uses them under it only if no
    other connection committed in between (its own commits do not count)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [_record("a" * 32)])
        known = catalog.known_specs(["a" * 32, "b" * 32])
        assert known.ids.keys() == {"a" * 32} and catalog.still_as_of(known)
        write_tag(catalog, "u", [_record("c" * 32)])  # this connection's own write
        assert catalog.still_as_of(known)
        with Catalog(tmp_path / "c.sqlite") as other:
            write_tag(other, "v", [_record("b" * 32)])
        assert not catalog.still_as_of(known)
        assert catalog.known_specs(["b" * 32]).ids.keys() == {"b" * 32}


def test_a_member_the_catalog_does_not_hold_fails_the_tag_and_changes_nothing(tmp_path: Path) -> None:
    """Members are given ids in one pass; a hash neither written first nor in the catalog
    is a bug of the caller, named, and the tag's write rolls back."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [_record("a" * 32)])
        before = dump(catalog)
        with pytest.raises(AssertionError, match="1 records of root were not stored first"):
            write_tag(catalog, "u", [], members={"a" * 32: True, "b" * 32: False})
        assert dump(catalog) == before
        write_tag(catalog, "u", [], members={"a" * 32: False})  # known, though not remembered: asked
        (u,) = catalog.tag_stats(["u"])
        assert (u.records, u.specs) == (1, 0)


def test_held_hashes_read_whole_or_looked_up_say_the_same(tmp_path: Path) -> None:
    """Asked about most of the catalog's hashes, it reads every held one; about a few, it
    looks each up: either way, those of the asked that some mirror holds."""
    records = [_record(f"{n:032d}") for n in range(40)]
    held = {r.hash for r in records[:30]}
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", records, members=dict.fromkeys(held, True))
        many = {r.hash for r in records} | {"z" * 32}  # 41 asked of 40 specs: read whole
        assert catalog.held_hashes(many) == held
        few = [records[0].hash, records[35].hash, "z" * 32]  # looked up
        assert catalog.held_hashes(few) == {records[0].hash}
        assert catalog.held_hashes() == held


def test_a_catalog_opened_not_to_be_created_must_exist(tmp_path: Path) -> None:
    """``create=False`` (gc, forget) refuses a missing catalog as a reader does, and
    makes neither the file nor its folder; an existing one opens to write."""
    missing = tmp_path / "not-yet" / "cachedex.sqlite"
    with pytest.raises(CatalogError, match="no catalog here yet; run 'cachedex sync' first"):
        Catalog(missing, create=False)
    assert not missing.parent.exists()
    Catalog(tmp_path / "c.sqlite").close()
    with Catalog(tmp_path / "c.sqlite", create=False) as catalog:
        assert catalog.tag_names() == [] and not catalog.readonly


def test_hashes_starting_with_a_prefix_include_those_whose_next_letter_is_z(tmp_path: Path) -> None:
    """Spack's hashes are base32 (a-z, 2-7): a prefix's range ends past 'z'."""
    hashes = ["a" * 32, "az" + "a" * 30, "azz" + "7" * 29, "b" * 32]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [_record(h) for h in hashes])
        assert catalog.hashes_starting("a", limit=10) == hashes[:3]
        assert catalog.hashes_starting("az", limit=10) == hashes[1:3]
        assert catalog.hashes_starting("a", limit=2) == hashes[:2]
