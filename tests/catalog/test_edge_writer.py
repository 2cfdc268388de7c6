"""A batch's edges as one JSON list of packed integers, and the row-at-a-time path it
falls back to: the same rows, in the same order, whatever their kinds."""

from __future__ import annotations

import sqlite3

import pytest

from cachedex.catalog import Catalog
from cachedex.catalog.edge_writer import ID_BITS, KIND_BITS, EdgeWriter
from cachedex.values import Dependency, SpecRecord
from tests.helpers import record, write_tag


def _edges(db: sqlite3.Connection) -> list[tuple[int, int, int, str]]:
    return db.execute("SELECT parent, child, deptypes, virtuals FROM edges ORDER BY parent, child").fetchall()


def test_edges_keep_their_kinds_and_a_repeated_one_is_one_edge_of_both(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A dependency named twice (to build, then to link and run, as Spack 1.x keeps it)
    was the first alone: a link dependency listed second was build-only."""
    parent = record(
        "p" * 32,
        "app",
        dependencies=(
            Dependency("c" * 32, "mpich", 1, ""),
            Dependency("c" * 32, "mpich", 6, "mpi"),  # repeated: one edge of both
            Dependency("d" * 32, "openblas", 2, "blas,lapack"),
            Dependency("x" * 32, "gone", 2, ""),  # no such spec: the index was incomplete
            Dependency("e" * 32, "cmake", 1, ""),
        ),
    )
    specs = [parent, record("c" * 32, "mpich"), record("d" * 32, "openblas"), record("e" * 32, "cmake")]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        found = {(e.hash[0], e.deptypes, e.virtuals) for e in catalog.edges_of("p" * 32)}
        assert found == {("c", 7, "mpi"), ("d", 2, "blas,lapack"), ("e", 1, "")}
        # A second tag's writer numbers its kinds again: its edges get their own.
        later = record("q" * 32, "lib", dependencies=(Dependency("e" * 32, "cmake", 8, "c"),))
        write_tag(catalog, "u", [later])
        assert [(e.hash[0], e.deptypes, e.virtuals) for e in catalog.edges_of("q" * 32)] == [("e", 8, "c")]
    for top in (10, 1 << ID_BITS):  # packed, and a row at a time
        twice = record(
            "p" * 32, "app", dependencies=(Dependency("c" * 32, "x", 2, "c"), Dependency("c" * 32, "x", 1, "cxx"))
        )
        assert _write([twice, record("c" * 32, "x")], top=top) == [(1, 2, 3, "c,cxx")]


def _write(records: list[SpecRecord], top: int) -> list[tuple[int, int, int, str]]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE edges (parent, child, deptypes, virtuals, PRIMARY KEY (parent, child)) WITHOUT ROWID")
    ids = {r.hash: n + 1 for n, r in enumerate(records)}
    writer = EdgeWriter(db)
    for at in range(0, len(records), 3):  # batches: kinds numbered in one are known in the next
        batch = records[at : at + 3]
        writer.insert([ids[r.hash] for r in batch], batch, ids, top, lambda records: None)
    return _edges(db)


@pytest.mark.parametrize("kinds", [3, (1 << KIND_BITS) + 5])
def test_packed_edges_are_the_rows_written_one_at_a_time(kinds: int) -> None:
    """Past what the packing holds (an id too large, more kinds than it numbers), the
    rows are written one at a time: either way, every edge with its own kind."""
    count = 100
    records = [
        record(
            f"{n:032d}",
            f"p{n}",
            dependencies=tuple(
                Dependency(f"{m:032d}", f"p{m}", (n + m) % 16, f"v{(n * count + m) % kinds}" if m % 2 else "")
                for m in range(count)
                if m != n
            ),
        )
        for n in range(count)
    ]
    expected = [
        (n + 1, m + 1, (n + m) % 16, f"v{(n * count + m) % kinds}" if m % 2 else "")
        for n in range(count)
        for m in range(count)
        if m != n
    ]
    assert len({(d, v) for _, _, d, v in expected}) > (1 << KIND_BITS if kinds > 3 else 3)
    assert _write(records, top=count) == expected
    assert _write(records, top=1 << ID_BITS) == expected  # an id too large to pack


@pytest.mark.parametrize("top", [10, 1 << ID_BITS])
def test_a_child_without_an_id_is_asked_for_and_left_out_if_still_unknown(top: int) -> None:
    """Edges to specs the writer has no id for go to ``on_unknown`` first (the catalog may
    hold them from another tag); those it cannot name are left out, the rest written."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE edges (parent, child, deptypes, virtuals, PRIMARY KEY (parent, child)) WITHOUT ROWID")
    deps = (
        Dependency("k" * 32, "known", 2, ""),
        Dependency("o" * 32, "other", 1, ""),
        Dependency("g" * 32, "gone", 4, ""),
    )
    parent = record("p" * 32, "app", dependencies=deps)
    ids = {"p" * 32: 1, "k" * 32: 2}
    asked: list[list[str]] = []

    def on_unknown(records: object) -> None:
        asked.append([r.hash for r in records])  # type: ignore[attr-defined]
        ids["o" * 32] = 3  # stored by another tag; "g" is nowhere

    EdgeWriter(db).insert([1], [parent], ids, top, on_unknown)
    assert asked == [["p" * 32]]
    assert _edges(db) == [(1, 2, 2, ""), (1, 3, 1, "")]
    EdgeWriter(db).insert([4], [record("q" * 32, "lib", dependencies=deps[:1])], ids, top, on_unknown)
    assert asked == [["p" * 32]]  # every child known: not asked


def test_a_batch_past_the_kinds_packing_holds_asks_for_its_unknown_children_once() -> None:
    """A batch that numbers more kinds than the packing holds is written a row at a time;
    its unknown children were asked for already, and asking again counted each dangling
    edge twice in the sync's warning."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE edges (parent, child, deptypes, virtuals, PRIMARY KEY (parent, child)) WITHOUT ROWID")
    lib = record("l" * 32, "lib")
    users = [
        record(f"{n:032d}", f"u{n}", dependencies=(Dependency("l" * 32, "lib", 2, f"v{n}"),))
        for n in range((1 << KIND_BITS) + 10)
    ]
    orphan = record("o" * 32, "orphan", dependencies=(Dependency("g" * 32, "gone", 2, ""),))
    records = [lib, *users, orphan]
    ids = {r.hash: n + 1 for n, r in enumerate(records)}
    asked: list[int] = []
    EdgeWriter(db).insert([ids[r.hash] for r in records], records, ids, 1 << 20, lambda batch: asked.append(1))
    assert asked == [1]
    assert len(_edges(db)) == len(users)
