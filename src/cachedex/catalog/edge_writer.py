"""Writing the edges of new specs: one statement a batch, each edge one integer.

A first sync of a big tag writes 1.6 million edges. Bound a row at a time
(``executemany``), each costs the sqlite3 module's binding ~1 us. Here a batch's edges
go as one JSON list of integers that SQLite takes apart itself (``json_each``), as a
first sync's members do: each packs its parent's and child's ids and the number of its
kind (its deptypes and virtuals: an index has a few dozen distinct), joined from a
temporary table. 1.5 million edges: 0.98 s against 1.41 s (bench/README.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from ..values import SpecRecord

__all__ = ["EdgeWriter", "insert_edge_rows"]

#: Bits of each id in a packed edge (ids below 2**25: 33 million specs), and of its kind.
ID_BITS = 25
KIND_BITS = 12


class _Numbers(dict[tuple[int, str], int]):
    """Each kind's number, given in the order kinds are first seen."""

    def __missing__(self, kind: tuple[int, str]) -> int:
        number = self[kind] = len(self)
        return number


#: A node may name one dependency twice (for build, then to link and run: Spack 1.x keeps
#: both edges; older Spack refused the node): one edge, of both deptypes and virtuals.
#: Keeping the first alone made a link dependency build-only (no ``^dep`` match, a
#: closure without it) depending on the edges' order.
_MERGED = (
    " ON CONFLICT (parent, child) DO UPDATE SET deptypes = edges.deptypes | excluded.deptypes, "
    "virtuals = CASE WHEN excluded.virtuals IN ('', edges.virtuals) THEN edges.virtuals "
    "WHEN edges.virtuals = '' THEN excluded.virtuals ELSE edges.virtuals || ',' || excluded.virtuals END"
)


class EdgeWriter:
    """Inserts the edges of batches of new specs, in their order (an edge repeated in a
    node is one edge of every deptype and virtual they give: see :data:`_MERGED`).
    A catalog of more ids than :data:`ID_BITS` hold, or an index of more kinds than
    :data:`KIND_BITS` number, is written a row at a time."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._kinds = _Numbers()
        self._stored = 0  # kinds in the temporary table
        db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS edge_kinds (id INTEGER PRIMARY KEY, deptypes INTEGER, virtuals TEXT)"
        )
        db.execute("DELETE FROM temp.edge_kinds")  # another tag's, whose numbers were its own

    def insert(
        self,
        parents: Sequence[int],
        records: Sequence[SpecRecord],
        ids: Mapping[str, int],
        top: int,
        on_unknown: Callable[[Sequence[SpecRecord]], None],
    ) -> None:
        """The edges of ``records`` (whose ids are ``parents``) to the specs ``ids`` knows;
        ``top``: no id is larger. ``on_unknown(records)`` is called first if an edge names
        a spec ``ids`` lacks (an index that is incomplete, or a spec another tag stored):
        it may add ids; edges to specs still without one are left out."""
        kinds = self._kinds
        asked = False  # (once: a second call would count each dangling edge twice)
        if top < 1 << ID_BITS and len(kinds) <= 1 << KIND_BITS:
            try:
                # Every child known, as nearly always: no test an edge, of millions (a
                # pass over the edges beforehand to find unknown ones cost ~0.25 s a first sync).
                packed = [
                    (parent << ID_BITS | ids[dep.hash]) << KIND_BITS | kinds[dep.deptypes, dep.virtuals]
                    for parent, record in zip(parents, records, strict=True)
                    for dep in record.dependencies
                ]
            except KeyError:
                on_unknown(records)
                asked = True
                child_id = ids.get
                packed = [
                    (parent << ID_BITS | child) << KIND_BITS | kinds[dep.deptypes, dep.virtuals]
                    for parent, record in zip(parents, records, strict=True)
                    for dep in record.dependencies
                    if (child := child_id(dep.hash)) is not None
                ]
            if len(kinds) <= 1 << KIND_BITS:
                self._store_kinds()
                self._db.execute(
                    f"INSERT INTO edges SELECT j.value >> {ID_BITS + KIND_BITS}, "
                    f"(j.value >> {KIND_BITS}) & {(1 << ID_BITS) - 1}, k.deptypes, k.virtuals "
                    f"FROM json_each(?) j CROSS JOIN temp.edge_kinds k ON k.id = j.value & {(1 << KIND_BITS) - 1} "
                    "WHERE true" + _MERGED,  # ("WHERE": or SQLite reads ON CONFLICT as the join's)
                    (msgspec.json.encode(packed).decode(),),  # text: SQLite 3.45.0 read a blob as JSONB
                )
                return
        if not asked and any(dep.hash not in ids for record in records for dep in record.dependencies):
            on_unknown(records)
        child_id = ids.get
        insert_edge_rows(
            self._db,
            [
                (parent, child, dep.deptypes, dep.virtuals)
                for parent, record in zip(parents, records, strict=True)
                for dep in record.dependencies
                if (child := child_id(dep.hash)) is not None
            ],
        )

    def _store_kinds(self) -> None:
        """The kinds numbered since the last batch, into the temporary table."""
        new = list(self._kinds.items())[self._stored :]
        self._db.executemany(
            "INSERT INTO temp.edge_kinds VALUES (?, ?, ?)", [(n, deptypes, virtuals) for (deptypes, virtuals), n in new]
        )
        self._stored += len(new)


def insert_edge_rows(db: sqlite3.Connection, rows: Iterable[tuple[int, int, int, str]]) -> None:
    """Edges as (parent, child, deptypes, virtuals) rows, a row at a time (a repeated edge
    is one edge of both: see :data:`_MERGED`)."""
    db.executemany("INSERT INTO edges VALUES (?,?,?,?)" + _MERGED, rows)
