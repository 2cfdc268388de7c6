"""How a sync writes new specs and their edges in bulk (catalog/batches.py,
catalog/edge_writer.py): ids at the packing's bound, every column of a new spec, and
sizes that come while batches are written in turn."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.catalog.batches import RecordBatches
from cachedex.catalog.edge_writer import ID_BITS, EdgeWriter
from cachedex.values import Dependency, SpecRecord
from tests.helpers import record, replace_mirror, write_tag


def _edges_written(ids: dict[str, int], records: list[SpecRecord], top: int) -> list[tuple[int, int, int, str]]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE edges (parent, child, deptypes, virtuals, PRIMARY KEY (parent, child)) WITHOUT ROWID")
    EdgeWriter(db).insert([ids[r.hash] for r in records], records, ids, top, lambda batch: None)
    return db.execute("SELECT * FROM edges ORDER BY parent, child").fetchall()


def test_ids_up_to_the_packing_s_bound_are_written_exactly() -> None:
    """Ids just below 2**ID_BITS are packed (every bit of them counts); an id of
    2**ID_BITS is not, and goes a row at a time: either way the edge names its specs."""
    for top in ((1 << ID_BITS) - 1, 1 << ID_BITS):
        low, high = 1 << (ID_BITS - 1), top - 1
        parent = record(
            "p" * 32,
            "app",
            dependencies=(Dependency("h" * 32, "hi", 6, "mpi"), Dependency("t" * 32, "top", 2, "")),
        )
        child_high = record("h" * 32, "hi", dependencies=(Dependency("l" * 32, "lo", 1, ""),))
        ids = {"p" * 32: top, "h" * 32: high, "t" * 32: top - 2, "l" * 32: low}
        assert _edges_written(ids, [parent, child_high], top) == [
            (high, low, 1, ""),
            (top, top - 2, 2, ""),
            (top, high, 6, "mpi"),
        ]


def test_a_new_spec_s_row_keeps_its_os_target_and_external(tmp_path: Path) -> None:
    """The os, target and whether it is external are what a sync read in the index."""
    specs = [
        record("a" * 32, "zlib", os="rhel8", target="zen4"),
        record("e" * 32, "openssl", external=True, os="centos7", target="x86_64"),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
    db = sqlite3.connect(tmp_path / "c.sqlite")
    try:
        rows = db.execute("SELECT hash, os, target, external FROM specs ORDER BY hash").fetchall()
    finally:
        db.close()
    assert rows == [("a" * 32, "rhel8", "zen4", 0), ("e" * 32, "centos7", "x86_64", 1)]


class _SizedOnReady(RecordBatches):
    """Batches whose sizes come only when each is ready (as a sync's prefetch gives them)."""

    def __init__(self, batches: Sequence[Sequence[SpecRecord]], sizes: dict[str, int]) -> None:
        super().__init__(batches)
        self.sizes = sizes

    def ready(self, position: int) -> None:
        self.sizes.update((r.hash, 100 + position) for r in self.build(position))


def test_batches_written_in_turn_wait_until_ready_for_their_sizes(tmp_path: Path) -> None:
    """Few specs, written here batch by batch: each is written only once it is ready,
    with the sizes that came meanwhile (else the catalog shows them unsized)."""
    records = [record(f"{n:032x}".replace("0", "q"), f"pkg{n}") for n in range(6)]
    sizes: dict[str, int] = {}
    batches = _SizedOnReady([records[:3], records[3:]], sizes)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_spec_batches([r.hash for r in records], batches, sizes)
            replace_mirror(writer, "root", {r.hash: True for r in records})
        assert catalog.spec_sizes([r.hash for r in records]) == {r.hash: 100 + n // 3 for n, r in enumerate(records)}
