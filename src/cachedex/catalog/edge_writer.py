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

__all__ = ["EdgeWriter", "insert_edge_rows", "pack_text"]

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
    :data:`KIND_BITS` number, is written a row at a time.

    Packing (:meth:`pack`) and writing (:meth:`write_packed`) are apart so that a forked
    process may pack what this one writes (``catalog/batches.py``): that process numbers
    kinds in its own copy of a writer, and hands the new ones over with its edges, which
    are joined to a kinds table of their own (``kinds_table``)."""

    def __init__(self, db: sqlite3.Connection, kinds_table: str = "edge_kinds") -> None:
        self._db = db
        self._table = f"temp.{kinds_table}"  # (a name of ours, never a value from outside)
        self._kinds = _Numbers()
        self._stored = 0  # kinds in the temporary table
        db.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {kinds_table} (id INTEGER PRIMARY KEY, deptypes INTEGER, virtuals TEXT)"
        )
        db.execute(f"DELETE FROM {self._table}")  # another tag's, whose numbers were its own

    def pack(
        self,
        parents: Sequence[int],
        records: Sequence[SpecRecord],
        ids: Mapping[str, int],
        top: int,
        *,
        skip_unknown: bool = False,
    ) -> list[int] | None:
        """Each edge of ``records`` (whose ids are ``parents``, none above ``top``) as one
        integer; None when a child has no id in ``ids`` (unless ``skip_unknown``: its
        edge is left out), or when ids or kinds outgrow the packing. It reads nothing but
        its arguments (a forked process may call it)."""
        kinds = self._kinds
        if top >= 1 << ID_BITS or len(kinds) > 1 << KIND_BITS:
            return None
        if skip_unknown:
            child_id = ids.get
            packed = [
                (parent << ID_BITS | child) << KIND_BITS | kinds[dep.deptypes, dep.virtuals]
                for parent, record in zip(parents, records, strict=True)
                for dep in record.dependencies
                if (child := child_id(dep.hash)) is not None
            ]
        else:
            try:
                # Every child known, as nearly always: no test an edge, of millions (a
                # pass over the edges beforehand to find unknown ones cost ~0.25 s a first sync).
                packed = [
                    (parent << ID_BITS | ids[dep.hash]) << KIND_BITS | kinds[dep.deptypes, dep.virtuals]
                    for parent, record in zip(parents, records, strict=True)
                    for dep in record.dependencies
                ]
            except KeyError:
                return None
        return packed if len(kinds) <= 1 << KIND_BITS else None

    def new_kinds(self) -> list[tuple[int, int, str]]:
        """The kinds numbered since the last call, as rows of the kinds table."""
        new = list(self._kinds.items())[self._stored :]
        self._stored += len(new)
        return [(n, deptypes, virtuals) for (deptypes, virtuals), n in new]

    def write_packed(self, packed: str, kinds: Sequence[tuple[int, int, str]]) -> None:
        """Write edges packed by :meth:`pack` (as JSON text) whose new kinds are ``kinds``."""
        self._db.executemany(f"INSERT INTO {self._table} VALUES (?, ?, ?)", kinds)
        self._db.execute(
            f"INSERT INTO edges SELECT j.value >> {ID_BITS + KIND_BITS}, "
            f"(j.value >> {KIND_BITS}) & {(1 << ID_BITS) - 1}, k.deptypes, k.virtuals "
            f"FROM json_each(?) j CROSS JOIN {self._table} k ON k.id = j.value & {(1 << KIND_BITS) - 1} "
            "WHERE true" + _MERGED,  # ("WHERE": or SQLite reads ON CONFLICT as the join's)
            (packed,),
        )

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
        packed = self.pack(parents, records, ids, top)
        if packed is None:
            if any(dep.hash not in ids for record in records for dep in record.dependencies):
                on_unknown(records)
            packed = self.pack(parents, records, ids, top, skip_unknown=True)
        if packed is not None:
            self.write_packed(pack_text(packed), self.new_kinds())
            return
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


def pack_text(packed: list[int]) -> str:
    """Packed edges as the JSON text :meth:`EdgeWriter.write_packed` takes (text: SQLite
    3.45.0 read a blob as JSONB)."""
    return msgspec.json.encode(packed).decode()


def insert_edge_rows(db: sqlite3.Connection, rows: Iterable[tuple[int, int, int, str]]) -> None:
    """Edges as (parent, child, deptypes, virtuals) rows, a row at a time (a repeated edge
    is one edge of both: see :data:`_MERGED`)."""
    db.executemany("INSERT INTO edges VALUES (?,?,?,?)" + _MERGED, rows)
