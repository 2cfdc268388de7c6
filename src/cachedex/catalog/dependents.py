"""The specs that depend on others: what a ``^dependency`` search asks.

``^zlib`` matches every spec with a link or run path down to a zlib: on a big tag, most
of its specs. Walking up the edges from a core library (a level at a time, through the
edges' covering child index) visits most of the catalog's edges: 0.6-0.7 s on a
250,000-spec tag. A search walked twice (its count, then its page, one recursive SQL query
each), and again for every page and filter after. The
walk is now made once per catalog state and dependency, and kept as a bit set over
catalog ids in :data:`~.terms.BITS_CACHE` (bounded in bytes). A search then reads it in
one of two ways: as a bit set over a scope's positions (a search without a name, with
the other constraints' bit sets), or id by id for the few rows a name or hash selects.

A server warming its indexes also reads the link and run edges into a
:class:`ReverseGraph`, which walks up from a core library in ~0.17 s instead of 0.43 s,
and walks the most depended-on packages before anyone asks (:func:`.search.warm_walks`).
It answers a ``^dep`` search on its event loop once the walk is made, and makes there a
walk that reaches few specs (:func:`walk_if_small`, given up as soon as it reaches more).
"""

from __future__ import annotations

import array
import sqlite3
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import msgspec

from ..values import LINK_RUN
from .terms import BITS_CACHE, bits_of

__all__ = [
    "WARMED_WALKS",
    "Dependents",
    "ReverseGraph",
    "WalkStart",
    "dependents",
    "is_walked",
    "most_depended_on",
    "walk_if_small",
]

#: How many packages a server walks up from when it warms its indexes: the most
#: depended-on, whose walks cost the most (~0.17 s each from a core library of a
#: 250,000-spec tag) and whose ``^dep`` searches are the likeliest.
WARMED_WALKS = 20

_encode = msgspec.json.encode
_NO_LIMIT = 2**62  # (SQLite's LIMIT takes a 64-bit integer)


class Dependents:
    """The catalog ids of the specs that depend on one matching a dependency, as a bitmap
    (a byte per 8 ids): a membership test is an index and a shift."""

    def __init__(self, bits: int) -> None:
        self._bits = bits
        self._map = bits.to_bytes((bits.bit_length() + 7) // 8, "little")

    def __bool__(self) -> bool:
        """Whether any spec depends on the dependency (nothing does on most packages)."""
        return self._bits != 0

    def __contains__(self, spec_id: object) -> bool:
        if not isinstance(spec_id, int) or spec_id < 0:
            return False
        at = spec_id >> 3
        return at < len(self._map) and bool(self._map[at] >> (spec_id & 7) & 1)

    def position_bits(self, ids: Sequence[int], gather: Callable[[bytes], tuple[int, ...]], top: int) -> int:
        """The positions in ``ids`` (a scope's ids in result order, none above ``top``) of
        the specs held here, as a bit set. ``gather`` is ``operator.itemgetter(*ids)``:
        each id's bit is read in C, one digit a byte (4.4-5.4 ms for 250,000 ids on a quiet
        machine, 20 ms in a busier hour, where a Python loop took 70 ms)."""
        if len(ids) < 2:  # itemgetter of one index returns the item, not a tuple
            return bits_of((at for at, spec_id in enumerate(ids) if spec_id in self), len(ids))
        digits = bin(self._bits)[:1:-1].encode()  # b"0" or b"1" per id, lowest id first
        return int(bytes(gather(digits.ljust(top + 1, b"0")))[::-1], 2)


class ReverseGraph:
    """The link and run edges of one catalog state by child, in two arrays: the parents
    of spec ``i`` are ``parents[starts[i]:starts[i + 1]]``. Reading it costs ~0.4 s on a
    250,000-spec tag (1.4 million edges, ~13 MB), more than a walk from a small library
    in SQL: only a server makes it, when it warms its indexes."""

    def __init__(self, db: sqlite3.Connection) -> None:
        # Two JSON lists in one statement (one read of the edges' covering child index,
        # in child order), decoded by msgspec: ~3 times faster than a row at a time.
        children_text, parents_text = db.execute(
            "SELECT json_group_array(child), json_group_array(parent) FROM "
            f"(SELECT child, parent FROM edges WHERE deptypes & {LINK_RUN} ORDER BY child, parent)"
        ).fetchone()
        children = msgspec.json.decode(children_text, type=list[int])
        self._parents = array.array("q", msgspec.json.decode(parents_text, type=list[int]))
        top = children[-1] + 1 if children else 0
        self._starts = array.array("q", [bisect_left(children, child) for child in range(top + 1)])
        #: The warm-up's walks (dependency key -> bit set), kept as long as the graph, out
        #: of BITS_CACHE's reach: a server's other bit sets would push them out.
        self.kept: dict[bytes, int] = {}

    def walk(self, start: Iterable[int], limit: int = _NO_LIMIT) -> set[int] | None:
        """The specs depending on one of ``start`` through link or run edges, directly or
        not (``start`` itself only where one depends on another); None once they are
        more than ``limit``."""
        return _walk_up(start, self._parents_of, limit)

    def _parents_of(self, children: list[int], limit: int) -> set[int]:
        parents, starts, top = self._parents, self._starts, len(self._starts) - 1
        found: set[int] = set()
        for child in children:
            if child < top:
                found.update(parents[starts[child] : starts[child + 1]])
                if len(found) > limit:
                    break
        return found


def most_depended_on(db: sqlite3.Connection, limit: int) -> list[str]:
    """The ``limit`` package names with the most link and run dependents (edges to any
    of their specs), most first."""
    return [
        name
        for (name,) in db.execute(
            "SELECT s.name FROM specs s JOIN (SELECT child, count(*) AS edges FROM edges "
            f"WHERE deptypes & {LINK_RUN} GROUP BY child) c ON c.child = s.id "
            "GROUP BY s.name ORDER BY sum(c.edges) DESC, s.name LIMIT ?",
            (limit,),
        )
    ]


class WalkStart(NamedTuple):
    """Where a walk up begins: the specs ``specs s WHERE matching`` matches (with
    ``params``), of the dependency ``key`` names (its query, encoded); ``itself``: those
    specs are dependents too (a virtual's: the parents of the edges that use it)."""

    key: bytes
    matching: str
    params: Sequence[object]
    itself: bool = False


def dependents(
    db: sqlite3.Connection,
    path: str,
    token: str,
    start: WalkStart,
    graph: ReverseGraph | None = None,
    *,
    keep: bool = False,
) -> Dependents:
    """The specs depending, through link or run edges, directly or not, on a spec
    ``start`` matches, in the catalog state ``token``: walked once per state while
    BITS_CACHE keeps it, over ``graph`` (that state's) if given, else in SQL; ``keep``:
    and kept by the graph as long as it lives."""
    if graph is not None and (bits := graph.kept.get(start.key)) is not None:
        return Dependents(bits)

    def walk() -> int:
        seen = _walk(db, start, graph)
        assert seen is not None  # (no limit)
        return _bits(seen)

    # One walk per dependency at a time: a server's threads asking for one under way wait
    # for it (a core library's first searches come together) rather than walk it again.
    kept = _walk_key(path, token, start.key)
    with _WALKING_LOCK:
        walking = _WALKING.setdefault(kept, threading.Lock())
    try:
        with walking:
            bits = BITS_CACHE.get(kept, walk)
    finally:  # (a walk that raised and stayed listed made it "under way" for good)
        with _WALKING_LOCK:
            if _WALKING.get(kept) is walking:
                del _WALKING[kept]
    if keep and graph is not None:
        graph.kept[start.key] = bits
    return Dependents(bits)


def walk_if_small(
    db: sqlite3.Connection, path: str, token: str, start: WalkStart, graph: ReverseGraph | None, limit: int
) -> bool:
    """:func:`dependents`'s walk for a caller that must not wait (a server's event loop):
    made now, and kept for now in BITS_CACHE, unless it reaches more than ``limit`` specs
    (given up as soon as it has: a few milliseconds) or another thread is making it.
    Whether the walk is made."""
    if is_walked(path, token, start.key, graph):
        return True
    kept = _walk_key(path, token, start.key)
    walking = threading.Lock()
    with _WALKING_LOCK:
        if kept in _WALKING:
            return False  # under way: a search in a thread waits for it
        _WALKING[kept] = walking
        walking.acquire()
    try:
        seen = _walk(db, start, graph, limit)
        if seen is not None:
            BITS_CACHE.get(kept, lambda: _bits(seen))
        return seen is not None
    finally:
        # Out of the table before the lock is let go: a thread that waited on it would
        # otherwise find it there, still this walk's, and take it out first.
        with _WALKING_LOCK:
            del _WALKING[kept]
        walking.release()


def _walk(
    db: sqlite3.Connection, start: WalkStart, graph: ReverseGraph | None, limit: int = _NO_LIMIT
) -> set[int] | None:
    first = [
        spec_id
        for (spec_id,) in db.execute(
            f"SELECT s.id AS walked_from FROM specs s WHERE {start.matching}", list(start.params)
        )
    ]
    seen = graph.walk(first, limit) if graph is not None else _walk_in_sql(db, first, limit)
    if seen is not None and start.itself:
        seen.update(first)
        if len(seen) > limit:
            return None
    return seen


def _bits(seen: set[int]) -> int:
    return bits_of(seen, max(seen) + 1) if seen else 0


def is_walked(path: str, token: str, key: bytes, graph: ReverseGraph | None) -> bool:
    """Whether the walk of the dependency ``key`` names is made in the catalog state
    ``token``: kept by ``graph`` (that state's) or, for now, in BITS_CACHE."""
    return (graph is not None and key in graph.kept) or _walk_key(path, token, key) in BITS_CACHE


def _walk_key(path: str, token: str, key: bytes) -> tuple[str, str, str, bytes]:
    return ("dependents", path, token, key)


def _walk_in_sql(db: sqlite3.Connection, start: list[int], limit: int = _NO_LIMIT) -> set[int] | None:
    """:meth:`ReverseGraph.walk` without the graph: each level's parents in one SQL
    statement (0.43-0.63 s from a core library, against 0.92-1.2 s for one recursive
    query, whose UNION checks each row against a temporary b-tree)."""
    level = f"SELECT parent FROM edges WHERE child IN (SELECT value FROM json_each(?)) AND deptypes & {LINK_RUN}"

    def parents_of(children: list[int], limit: int) -> set[int]:
        rows = db.execute(level, (_encode(children).decode(),))  # text: SQLite 3.45.0 read a blob as JSONB
        if limit >= _NO_LIMIT:
            return {parent for (parent,) in rows}
        # Read until more distinct parents than the limit, not a count of rows: a parent
        # of two of the level's specs is two rows, and a LIMIT of rows took the few
        # parents of a level cut short for the whole level (a cut walk kept as made).
        found: set[int] = set()
        for (parent,) in rows:
            found.add(parent)
            if len(found) > limit:
                break
        return found

    return _walk_up(start, parents_of, limit)


def _walk_up(start: Iterable[int], parents_of: Callable[[list[int], int], set[int]], limit: int) -> set[int] | None:
    """Everything above ``start`` a level at a time: each level's parents at once, the
    ones seen before dropped by a set difference; None once more than ``limit`` (which
    ``parents_of`` may stop at: more of a level than that is more in all)."""
    seen: set[int] = set()
    frontier = list(start)
    while frontier:
        found = parents_of(frontier, limit) - seen
        seen |= found
        if len(seen) > limit:
            return None
        frontier = list(found)
    return seen


#: The walks under way, each with the lock its walker holds.
_WALKING: dict[tuple[str, str, str, bytes], threading.Lock] = {}
_WALKING_LOCK = threading.Lock()
