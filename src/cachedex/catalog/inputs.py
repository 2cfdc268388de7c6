"""What a site's pages are made from, in a form cheap to compare between two builds, and
which specs' pages a change reaches.

A site build records :meth:`PageInputs.spec_inputs` (each held spec's size and memberships); the
next build compares them with the catalog's and writes only the pages the differences
reach (:meth:`~PageInputs.reached_by`), reading the graph only around them (:meth:`~PageInputs.closure_scope`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator
from typing import NamedTuple

import msgspec

from ..values import LINK_RUN, ROOT_STACK
from . import reads
from .rows import HAS_BINARY, DependentRow, MirrorState, among, as_rows, select_list
from .verifications import unsigned_mirrors

__all__ = ["PageInputs", "SpecInputs"]


class SpecInputs(NamedTuple):
    """What a held spec's own pages show that can change: everything else about a DAG
    hash (name, version, node, dependencies) is fixed by the hash."""

    hash: str
    name: str
    size: int | None
    #: its memberships, ``<mirror id>+`` (listed) or ``<mirror id>-``, by mirror id
    held: str
    listed: int  #: 1 when some mirror has its binary


class PageInputs:
    """Reads of :mod:`.inputs` on one connection (``Catalog.page_inputs``)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def spec_inputs(self) -> Iterator[SpecInputs]:
        """:class:`SpecInputs` of every spec some mirror holds."""
        # The members_spec index yields each spec's rows by mirror id, so the concatenation
        # comes in that order; were it ever otherwise, a spec would only look changed.
        cursor = self._db.execute(
            "SELECT s.hash, s.name, s.size, h.held, h.listed FROM specs s JOIN ("
            "  SELECT spec_id, group_concat(mirror_id || CASE WHEN listed THEN '+' ELSE '-' END, ' ') AS held,"
            "  max(listed) AS listed FROM (SELECT spec_id, mirror_id, listed FROM members ORDER BY spec_id, mirror_id)"
            "  GROUP BY spec_id"
            ") h ON h.spec_id = s.id"
        )
        while rows := cursor.fetchmany(5000):
            yield from map(SpecInputs._make, rows)

    def ids_of(self, hashes: Collection[str]) -> dict[str, int]:
        """{hash: catalog id} of those of ``hashes`` the catalog has."""
        return reads.spec_ids(self._db, hashes)

    def hashes_of(self, ids: Collection[int]) -> list[str]:
        """The hashes of those of the specs ``ids`` the catalog has."""
        return [
            row[0]
            for row in self._db.execute(
                "SELECT s.hash FROM json_each(?) j CROSS JOIN specs s ON s.id = j.value", (json.dumps(list(ids)),)
            )
        ]

    def reached_by(self, ids: Collection[int]) -> set[int]:
        """The specs whose pages show whether one of ``ids`` has a binary, or its size:
        ``ids`` themselves, their direct dependents (dependency lists) and dependencies
        (dependent lists), and everything depending on them through link or run edges
        (closures and their sizes)."""
        chosen = json.dumps(list(ids))
        found = self._db.execute(
            "WITH RECURSIVE up(id) AS (SELECT value FROM json_each(?1) "
            f"  UNION SELECT e.parent FROM edges e JOIN up ON e.child = up.id WHERE e.deptypes & {LINK_RUN}) "
            "SELECT id FROM up "
            "UNION SELECT parent FROM edges WHERE child IN (SELECT value FROM json_each(?1)) "
            "UNION SELECT child FROM edges WHERE parent IN (SELECT value FROM json_each(?1))",
            (chosen,),
        )
        return {spec_id for (spec_id,) in found}

    def closure_scope(self, ids: Collection[int]) -> set[int]:
        """``ids`` and everything they depend on through link or run edges: the specs whose
        edges a page of one of ``ids`` needs for its closure."""
        found = self._db.execute(
            "WITH RECURSIVE down(id) AS (SELECT value FROM json_each(?) "
            f"  UNION SELECT e.child FROM edges e JOIN down ON e.parent = down.id WHERE e.deptypes & {LINK_RUN}) "
            "SELECT id FROM down",
            (json.dumps(list(ids)),),
        )
        return {spec_id for (spec_id,) in found}

    def tags_mentioning(self, hashes: Collection[str]) -> set[str]:
        """The tags whose recorded history names one of ``hashes`` (their change pages link
        to a spec only while some mirror holds it)."""
        found = self._db.execute(
            "SELECT DISTINCT t.name FROM changes c JOIN mirrors m ON m.id = c.mirror_id JOIN tags t ON t.id = m.tag_id "
            "WHERE c.spec_id IN (SELECT id FROM specs WHERE hash IN (SELECT value FROM json_each(?)))",
            (json.dumps(list(hashes)),),
        )
        return {tag for (tag,) in found}

    def names_changed_after(self, sync: int) -> set[str]:
        """The packages some sync after ``sync`` added specs of to a tag's listing or
        removed some from it: their feeds gained an entry, even when their specs are as
        they were (a spec that came and left)."""
        found = self._db.execute(
            "SELECT DISTINCT s.name FROM changes c JOIN mirrors m ON m.id = c.mirror_id "
            f"JOIN specs s ON s.id = c.spec_id WHERE c.sync_id > ? AND m.stack = '{ROOT_STACK}'",
            (sync,),
        )
        return {name for (name,) in found}

    def hashes_changed_after(self, sync: int) -> set[str]:
        """The specs some sync after ``sync`` added to a mirror or removed from one: their
        pages' "first seen" lines read that history, even when they are held as before
        (a stack dropped for a sync and put back)."""
        found = self._db.execute(
            "SELECT DISTINCT s.hash FROM changes c JOIN specs s ON s.id = c.spec_id WHERE c.sync_id > ?", (sync,)
        )
        return {dag_hash for (dag_hash,) in found}

    def history_count(self, up_to_sync: int) -> int:
        """How many changes the syncs up to ``up_to_sync`` recorded: smaller than before
        when history was forgotten (``cachedex gc --history-before``)."""
        return int(self._db.execute("SELECT count(*) FROM changes WHERE sync_id <= ?", (up_to_sync,)).fetchone()[0])

    def verified_since(self, verification: int) -> set[tuple[str, str]]:
        """(tag, stack) of the mirrors verified after the verification ``verification``."""
        return set(self._db.execute("SELECT DISTINCT tag, stack FROM verifications WHERE id > ?", (verification,)))

    def dependent_edges(self, ids: Collection[int]) -> list[tuple[int, int, int, str]]:
        """``(parent id, child id, deptypes, virtuals)`` of every edge into the specs
        ``ids``: their direct dependents, which a hub library has by the ten thousand.
        Read bare, as ``all_edge_rows`` reads edges: which dependents have a binary, and
        their order, the caller learns from the spec rows it reads for them anyway (a
        join and a sort here took 1.7 times as long on 1.1 million edges)."""
        return self._db.execute(
            "SELECT parent, child, deptypes, virtuals FROM edges WHERE child IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),),
        ).fetchall()

    def listed_dependents(self, ids: Collection[int]) -> list[DependentRow]:
        """Those of the specs ``ids`` that have a binary, as a spec page lists its
        dependents: the parents of :meth:`dependent_edges`, a hub library's by the ten
        thousand, read without what their own pages need."""
        where, params = among("s.id", ids, "AND")
        cursor = self._db.execute(f"SELECT {select_list(DependentRow)} FROM specs s WHERE {HAS_BINARY}{where}", params)
        return list(as_rows(DependentRow, cursor))

    def tag_states(self, tags: Iterable[str] | None = None) -> dict[str, bytes]:
        """Per tag (of ``tags``), its totals and its mirrors' rows, encoded: what its pages
        show of it besides its specs (a sync changes a mirror's read time, a size recorded
        changes the totals)."""
        mirrors: dict[str, list[MirrorState]] = {}
        for mirror in reads.mirrors(self._db):
            mirrors.setdefault(mirror.tag, []).append(mirror)
        return {
            stats.tag: msgspec.json.encode([stats, mirrors.get(stats.tag, [])])
            for stats in reads.tag_stats(self._db, tags)
        }

    def mirror_ids(self) -> dict[int, tuple[str, str, str, int | None, bool, bool]]:
        """{mirror id: (tag, stack, url, layout, own index, unsigned)}: how
        :attr:`SpecInputs.held` names mirrors, and what of a mirror every page holding it
        shows (unsigned: the commands to add it, see :func:`.verifications.unsigned_mirrors`)."""
        unsigned = unsigned_mirrors(self._db)
        return {
            mirror_id: (tag, stack, url, layout, bool(own), (tag, stack) in unsigned)
            for mirror_id, tag, stack, url, layout, own in self._db.execute(
                "SELECT m.id, t.name, m.stack, m.url, m.layout, m.own_index "
                "FROM mirrors m JOIN tags t ON t.id = m.tag_id"
            )
        }

    def last_sync(self) -> int:
        """The id of the newest sync, 0 before the first."""
        return int(self._db.execute("SELECT coalesce(max(id), 0) FROM syncs").fetchone()[0])

    def history_mark(self, sync: int) -> str:
        """The catalog's own id and when sync ``sync`` finished ("" after it when there is
        no such sync): a build records it, and its history is this catalog's only while
        the mark is the same."""
        found = self._db.execute(
            "SELECT (SELECT id FROM identity), (SELECT finished_at FROM syncs WHERE id = ?)", (sync,)
        ).fetchone()
        return f"{found[0]}:{'' if found[1] is None else repr(found[1])}"

    def last_verification(self) -> int:
        """The id of the newest verification, 0 before the first."""
        return int(self._db.execute("SELECT coalesce(max(id), 0) FROM verifications").fetchone()[0])
