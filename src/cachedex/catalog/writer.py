"""Writing one tag: the only code that changes the catalog, inside ``Catalog.writing_tag``.

A :class:`TagWriter` inserts the specs a sync found new (with their nodes and edges;
in bulk on a first sync, ``bulk_load.py``), replaces each changed mirror's membership
(recording what its listing gained and lost as history), and at the end records the
sync and the tag's totals (``totals.py``, which also records binary sizes).
``Catalog.writing_tag`` opens the transaction and rolls it back if anything fails: a tag
is written whole or not at all.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import msgspec

from ..values import ROOT_STACK, Dependency, SpecRecord
from . import bulk_load
from .batches import (
    INSERT_NODE,
    INSERT_SPEC,
    OWN_SHARE,
    ForkedBatches,
    RecordBatches,
    batch_bytes,
    forking_pays,
    insert_batch_bytes,
    spec_row,
)
from .edge_writer import EdgeWriter, insert_edge_rows
from .mirror_rows import record_signing, write_mirror_row
from .nodes import NodePacker
from .reads import spec_ids
from .schema import BULK_INDEXES, BULK_MEMBER_INDEXES
from .totals import update_totals

__all__ = ["TagWriter"]

_encode = msgspec.json.encode


class TagWriter:
    """Writes one tag inside the transaction opened by :meth:`Catalog.writing_tag`."""

    def __init__(self, db: sqlite3.Connection, tag: str) -> None:
        self._db = db
        self.tag = tag
        self.started_at = time.time()
        db.execute("INSERT OR IGNORE INTO tags (name) VALUES (?)", (tag,))
        self._tag_id: int = db.execute("SELECT id FROM tags WHERE name = ?", (tag,)).fetchone()[0]
        self._ids: dict[str, int] = {}
        self._pending_changes: list[tuple[int, int, int]] = []  # (mirror, spec, +1/-1)
        self._root_added = 0
        self._root_removed = 0
        self._root_first = False
        self._kept_stacks: set[str] = set()
        self._changed = False  # whether the tag's totals must be counted again
        #: The spec ids each mirror replaced in this write lists (by mirror id).
        self._replaced: dict[int, list[int]] = {}
        #: Edges of new specs to specs without an id yet: written once they have one.
        self._pending_edges: list[tuple[SpecRecord, Dependency]] = []
        #: Edges of new specs to specs neither the indexes nor the catalog holds (skipped):
        #: how many, and the first as "name /hash needs name /hash".
        self.dangling = 0
        self.dangling_example = ""

    def remember_ids(self, ids: Mapping[str, int]) -> None:
        """Ids of specs the catalog has (hash -> id), as the caller read them in this
        transaction: the members and edges that point to them need not ask again."""
        self._ids.update(ids)

    def add_specs(self, records: Iterable[SpecRecord], sizes: Mapping[str, int]) -> int:
        """Insert specs the catalog does not have yet, then their edges. Returns the count."""
        records = list(records)
        added = self.add_spec_batches([r.hash for r in records], [records], sizes)
        self.link_pending_edges()
        return added

    def add_spec_batches(
        self,
        hashes: Sequence[str],
        batches: Iterable[Iterable[SpecRecord]],
        sizes: Mapping[str, int],
    ) -> int:
        """Insert the specs ``hashes``, new to the catalog, built batch by batch by ``batches``.

        Ids are given to every hash first, so an edge may point to a spec of a later batch;
        only one batch of decoded records is alive at a time, which bounds the memory of
        a first sync. An edge to a spec with no id yet (neither among ``hashes`` nor in the
        catalog) waits for :meth:`link_pending_edges`. Returns the number of specs
        inserted. Around a bulk load, see :meth:`specs_in_bulk`.
        """
        if not hashes:
            return 0  # a re-sync with nothing new: not even a count of the table
        next_id = bulk_load.max_spec_id(self._db) + 1
        ids = self._ids
        for offset, dag_hash in enumerate(hashes):
            ids[dag_hash] = next_id + offset
        inserted = self._insert_batches(batches, sizes, len(hashes), top=next_id + len(hashes) - 1)
        if inserted != len(hashes):
            raise AssertionError(f"{len(hashes)} specs announced, {inserted} given")
        return inserted

    @contextmanager
    def specs_in_bulk(self, count: int) -> Iterator[None]:
        """Around the :meth:`add_spec_batches` calls that bring ``count`` specs. When they
        outnumber the catalog's own (a first sync), the rows go in without the specs' and
        edges' secondary indexes, which are built once afterwards from sorted data: kept
        up row by row, they cost more. That build runs in SQLite without the GIL, so
        what the block starts in other threads goes on meanwhile."""
        with bulk_load.indexes_built_after(self._db, BULK_INDEXES, bulk_load.is_bulk_load(self._db, count)):
            yield

    def _insert_batches(
        self, batches: Iterable[Iterable[SpecRecord]], sizes: Mapping[str, int], count: int, top: int
    ) -> int:
        """Insert each batch's specs, nodes and edges (``count`` specs, their ids given
        already, none above ``top``); returns the count. Of many specs in several
        batches, the later batches are built by a forked process meanwhile
        (``catalog/batches.py``)."""
        packer, edges = NodePacker(self._db), EdgeWriter(self._db)
        if isinstance(batches, RecordBatches) and batches.may_fork and forking_pays(count, len(batches)):
            # Trained before the fork (on the nodes the first batch would train it on): the
            # forked process packs nodes with it.
            packer.prepare(batches.nodes(0))
            if packer.packs_frames:
                return self._insert_forked(batches, sizes, packer, edges, top)
        return sum(self._insert_records(list(batch), sizes, packer, edges, top) for batch in batches)

    def _insert_forked(
        self, batches: RecordBatches, sizes: Mapping[str, int], packer: NodePacker, edges: EdgeWriter, top: int
    ) -> int:
        """The first share of ``batches`` built and written here while a forked process
        builds the others, which are then written here in order."""
        count = len(batches)
        split = max(1, round(count * OWN_SHARE))
        forked_edges = EdgeWriter(self._db, kinds_table="edge_kinds_forked")
        ids = self._ids

        def make(position: int) -> bytes | None:  # (in the forked process)
            return batch_bytes(batches.build(position), ids, packer, forked_edges, top)

        inserted = 0
        with ForkedBatches(make, range(split, count)) as forked:
            for position in range(split):
                inserted += self._insert_built(batches, position, sizes, packer, edges, top)
            for position, data in forked.results():
                if data is None:
                    inserted += self._insert_built(batches, position, sizes, packer, edges, top)
                    continue
                batches.ready(position)
                inserted += insert_batch_bytes(self._db, data, sizes, forked_edges)
        return inserted

    def _insert_built(
        self,
        batches: RecordBatches,
        position: int,
        sizes: Mapping[str, int],
        packer: NodePacker,
        edges: EdgeWriter,
        top: int,
    ) -> int:
        records = batches.build(position)
        batches.ready(position)
        return self._insert_records(records, sizes, packer, edges, top)

    def _insert_records(
        self, records: Sequence[SpecRecord], sizes: Mapping[str, int], packer: NodePacker, edges: EdgeWriter, top: int
    ) -> int:
        """Insert the specs, nodes and edges of ``records``; returns their count."""
        db, ids = self._db, self._ids
        get_size = sizes.get
        # Rows are generated while SQLite consumes them: no second copy of every node.
        db.executemany(INSERT_SPEC, ((*spec_row(ids, r), get_size(r.hash)) for r in records))
        parents = [ids[r.hash] for r in records]
        db.executemany(INSERT_NODE, zip(parents, packer.pack([r.node for r in records]), strict=True))
        edges.insert(parents, records, ids, top, self._unknown_children)
        return len(records)

    def _unknown_children(self, records: Sequence[SpecRecord]) -> None:
        """Ids for the dependencies of ``records`` that no index read so far holds but the
        catalog does; edges to the others wait (:meth:`link_pending_edges`)."""
        ids = self._ids
        ids.update(spec_ids(self._db, [d.hash for r in records for d in r.dependencies if d.hash not in ids]))
        self._pending_edges.extend((r, d) for r in records for d in r.dependencies if d.hash not in ids)

    def link_pending_edges(self) -> None:
        """Write the edges of new specs to specs that had no id when those were written:
        the catalog or a stack read since may hold them. Edges to specs still unknown are
        dangling (the index was incomplete): skipped, counted in :attr:`dangling`."""
        pending, self._pending_edges = self._pending_edges, []
        if not pending:
            return
        ids = self._ids
        ids.update(spec_ids(self._db, {d.hash for _, d in pending if d.hash not in ids}))
        insert_edge_rows(
            self._db, [(ids[r.hash], ids[d.hash], d.deptypes, d.virtuals) for r, d in pending if d.hash in ids]
        )
        for record, dep in pending:
            if dep.hash not in ids:
                if not self.dangling:
                    self.dangling_example = f"{record.name} /{record.hash[:7]} needs {dep.name} /{dep.hash[:7]}"
                self.dangling += 1

    @contextmanager
    def members_in_bulk(self, rows: int) -> Iterator[None]:
        """Around the :meth:`replace_mirror` calls of a sync that brings ``rows`` members.
        When they outnumber the catalog's own (a first sync), the members are written
        without the index by spec, which is then built once from sorted data: kept up
        row by row, it took most of their write."""
        (existing,) = self._db.execute("SELECT coalesce(sum(records), 0) FROM mirrors").fetchone()
        with bulk_load.indexes_built_after(self._db, BULK_MEMBER_INDEXES, rows > max(bulk_load.BULK_MIN, existing)):
            yield

    def keep_mirror(
        self,
        stack: str,
        url: str,
        *,
        fetched_at: float,
        etag: str | None,
        last_modified: str | None,
        signed: bool | None = None,
        looked: bool = True,
    ) -> None:
        """Mark an unchanged mirror as read now (its index checksum did not change);
        ``signed``: what this read found of its signing, if it looked (see
        :func:`.mirror_rows.signing_samples`); ``looked`` False: a passing failure kept it
        from telling (see :func:`.mirror_rows.record_signing`)."""
        self._kept_stacks.add(stack)
        self._db.execute(
            "UPDATE mirrors SET url = ?, fetched_at = ?, etag = coalesce(?, etag), "
            "last_modified = coalesce(?, last_modified) WHERE tag_id = ? AND stack = ?",
            (url, fetched_at, etag, last_modified, self._tag_id, stack),
        )
        record_signing(self._db, self._tag_id, stack, signed, fetched_at, looked=looked)

    def replace_mirror(
        self,
        stack: str,
        url: str,
        *,
        layout: int,
        db_version: int,
        checksum: str | None,
        etag: str | None,
        last_modified: str | None,
        fetched_at: float,
        members: Mapping[str, bool],
        view: str | None = None,
        own_index: bool = True,
        member_ids: list[int] | None = None,
        signed: bool | None = None,
        moved: bool = False,
        looked: bool = True,
    ) -> None:
        """Store a mirror's new index: its state and the records it holds (hash -> listed).
        ``own_index`` False: a root without an index, listing what its stacks list.
        ``signed``: see :attr:`MirrorState.signed`; None (nothing readable this time)
        keeps what the row knew, unless the mirror ``moved``; ``looked``: see :meth:`keep_mirror`.
        ``member_ids``: the ids of ``members``, in order, if :meth:`known_ids` found them."""
        self._kept_stacks.add(stack)
        self._changed = True
        db = self._db
        listed_count = sum(members.values())  # bools: a C loop
        values = (
            url, layout, db_version, checksum, etag, last_modified, fetched_at, len(members), listed_count, view,
            int(own_index),
        )  # fmt: skip
        mirror_id, first_sync = write_mirror_row(
            db, self._tag_id, stack, values, signed=signed, moved=moved, looked=looked
        )
        old: dict[int, int] = {}
        if not first_sync:
            old = dict(db.execute("SELECT spec_id, listed FROM members WHERE mirror_id = ?", (mirror_id,)))
        if member_ids is None:
            member_ids = self._ids_of(members, stack)
        self._replaced[mirror_id] = member_ids
        if first_sync:
            # One statement for the whole listing: each row as id * 2 + listed, in id order,
            # in one JSON text that SQLite takes apart itself (0.4 s against 1.05 s for a
            # Python call per row, for 550,000 rows).
            rows = sorted(spec_id * 2 + listed for spec_id, listed in zip(member_ids, members.values(), strict=True))
            db.execute(
                "INSERT INTO members SELECT ?, value >> 1, value & 1 FROM json_each(?)",
                (mirror_id, _encode(rows).decode()),
            )
            if stack != ROOT_STACK and self._tag_synced_before():
                # A stack new to a tag synced before (added to the config, a view that
                # appeared) brings its specs into the tag now: recorded as added, so that
                # a diff since then, and each spec's "first seen", say so.
                self._record_changes(
                    mirror_id, stack, {}, dict(zip(member_ids, map(int, members.values()), strict=True))
                )
        else:
            new = dict(zip(member_ids, map(int, members.values()), strict=True))
            gone = [(mirror_id, spec_id) for spec_id in old.keys() - new.keys()]
            db.executemany("DELETE FROM members WHERE mirror_id = ? AND spec_id = ?", gone)
            upsert = [(mirror_id, spec_id, listed) for spec_id, listed in new.items() if old.get(spec_id) != listed]
            db.executemany("INSERT OR REPLACE INTO members VALUES (?,?,?)", upsert)
            self._record_changes(mirror_id, stack, old, new)
        if stack == ROOT_STACK:
            self._root_first = first_sync

    def _tag_synced_before(self) -> bool:
        return self._db.execute("SELECT 1 FROM syncs WHERE tag_id = ? LIMIT 1", (self._tag_id,)).fetchone() is not None

    def known_ids(self, members: Mapping[str, bool]) -> list[int] | None:
        """The ids of ``members``' hashes, in order, if this write knows each (None if
        not). Reads only what the write holds, not the catalog: another thread may call
        it while the catalog's connection builds indexes."""
        ids = self._ids
        try:
            return [ids[h] for h in members]
        except KeyError:
            return None

    def _ids_of(self, members: Mapping[str, bool], stack: str) -> list[int]:
        """The ids of ``members``' hashes, in order, asking the catalog for those not yet known."""
        ids = self._ids
        try:
            # One pass over the listing (250,000 hashes): each lookup is a random read of a
            # big dict, and three passes cost ~0.5 s.
            return [ids[h] for h in members]
        except KeyError:
            pass
        ids.update(spec_ids(self._db, [h for h in members if h not in ids]))
        unknown = [h for h in members if h not in ids]
        if unknown:
            raise AssertionError(f"{len(unknown)} records of {stack} were not stored first")
        return [ids[h] for h in members]

    def _record_changes(self, mirror_id: int, stack: str, old: dict[int, int], new: dict[int, int]) -> None:
        was = {spec_id for spec_id, listed in old.items() if listed}
        now = {spec_id for spec_id, listed in new.items() if listed}
        added, removed = now - was, was - now
        self._pending_changes.extend((mirror_id, spec_id, 1) for spec_id in added)
        self._pending_changes.extend((mirror_id, spec_id, -1) for spec_id in removed)
        if stack == ROOT_STACK:
            self._root_added, self._root_removed = len(added), len(removed)

    def drop_other_stacks(self) -> list[str]:
        """Drop the mirrors of this tag that were not kept or replaced (stacks no longer
        configured, views gone): their specs are recorded as removed by this sync and
        they list nothing; the rows stay, marked, with their history."""
        placeholders = ",".join("?" * len(self._kept_stacks)) or "''"
        db = self._db
        stale = db.execute(
            f"SELECT id, stack FROM mirrors WHERE tag_id = ? AND NOT dropped AND stack NOT IN ({placeholders})",
            (self._tag_id, *sorted(self._kept_stacks)),
        ).fetchall()
        self._changed = self._changed or bool(stale)
        for mirror_id, stack in stale:
            old = dict(db.execute("SELECT spec_id, listed FROM members WHERE mirror_id = ?", (mirror_id,)))
            self._record_changes(mirror_id, stack, old, {})
            db.execute("DELETE FROM members WHERE mirror_id = ?", (mirror_id,))
            # (no validators: a stack put back is read whole, whatever its server says)
            db.execute(
                "UPDATE mirrors SET dropped = 1, records = 0, listed = 0, checksum = NULL, etag = NULL, "
                "last_modified = NULL WHERE id = ?",
                (mirror_id,),
            )
        return [stack for _id, stack in stale]

    @property
    def root_added(self) -> int:
        """Listed specs the root mirror gained in this sync (0 on a first sync)."""
        return self._root_added

    @property
    def root_first(self) -> bool:
        """True when this sync wrote the root mirror's first listing: nothing to compare
        with, so :attr:`root_added` and :attr:`root_removed` say nothing."""
        return self._root_first

    @property
    def root_removed(self) -> int:
        """Listed specs the root mirror lost in this sync."""
        return self._root_removed

    def _finish(self) -> None:
        self.link_pending_edges()  # (a caller that wrote specs without it loses no edge)
        now = time.time()
        sync_id = self._db.execute(
            "INSERT INTO syncs (id, tag_id, started_at, finished_at, added, removed) VALUES ("
            " max((SELECT ifnull(max(id), 0) FROM syncs), (SELECT ifnull(max(last_sync), 0) FROM forgotten)) + 1,"
            " ?,?,?,?,?)",
            (self._tag_id, self.started_at, now, self._root_added, self._root_removed),
        ).lastrowid
        self._db.executemany(
            "INSERT INTO changes VALUES (?,?,?,?)",
            [(sync_id, mirror, spec, change) for mirror, spec, change in self._pending_changes],
        )
        self._db.execute("UPDATE tags SET synced_at = ? WHERE id = ?", (now, self._tag_id))
        if self._changed:
            update_totals(self._db, self._tag_id, self._replaced)
