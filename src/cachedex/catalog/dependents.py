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
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

import msgspec

from ..values import LINK_RUN
from .terms import BITS_CACHE, bits_of

__all__ = ["Dependents", "dependents"]

_encode = msgspec.json.encode


class Dependents:
    """The catalog ids of the specs that depend on one matching a dependency, as a bitmap
    (a byte per 8 ids): a membership test is an index and a shift."""

    def __init__(self, bits: int) -> None:
        self._map = bits.to_bytes((bits.bit_length() + 7) // 8, "little")

    def __contains__(self, spec_id: object) -> bool:
        if not isinstance(spec_id, int) or spec_id < 0:
            return False
        at = spec_id >> 3
        return at < len(self._map) and bool(self._map[at] >> (spec_id & 7) & 1)

    def positions(self, ids: Sequence[int]) -> list[int]:
        """The positions in ``ids`` (a scope's ids in result order) of the specs held here."""
        held, size = self._map, len(self._map)
        return [at for at, spec_id in enumerate(ids) if spec_id >> 3 < size and held[spec_id >> 3] >> (spec_id & 7) & 1]


def dependents(
    db: sqlite3.Connection, path: str, token: str, key: bytes, matching: str, params: Sequence[object]
) -> Dependents:
    """The specs depending, through link or run edges, directly or not, on a spec of
    ``specs s WHERE matching`` (the dependency ``key`` names, encoded), in the catalog
    state ``token``: walked once per state while BITS_CACHE keeps it."""

    def walk() -> int:
        # A level at a time: each level's parents in one SQL statement, the ones seen
        # before dropped by a set difference (0.63 s from a core library, against 0.92-1.2 s
        # for one recursive query, whose UNION checks each row against a temporary b-tree).
        frontier = [
            spec_id
            for (spec_id,) in db.execute(f"SELECT s.id AS walked_from FROM specs s WHERE {matching}", list(params))
        ]
        seen: set[int] = set()
        while frontier:
            found = {
                parent
                for (parent,) in db.execute(
                    "SELECT parent FROM edges WHERE child IN (SELECT value FROM json_each(?)) "
                    f"AND deptypes & {LINK_RUN}",
                    (_encode(frontier).decode(),),  # text: SQLite 3.45.0 read a blob as JSONB
                )
            }
            found -= seen
            seen |= found
            frontier = list(found)
        return bits_of(seen, max(seen) + 1) if seen else 0

    # One walk per dependency at a time: a server's threads asking for one under way wait
    # for it (a core library's first searches come together) rather than walk it again.
    kept = ("dependents", path, token, key)
    with _WALKING_LOCK:
        walking = _WALKING.setdefault(kept, threading.Lock())
    with walking:
        bits = BITS_CACHE.get(kept, walk)
    with _WALKING_LOCK:
        if _WALKING.get(kept) is walking:
            del _WALKING[kept]
    return Dependents(bits)


#: The walks under way, each with the lock its walker holds.
_WALKING: dict[tuple[str, str, str, bytes], threading.Lock] = {}
_WALKING_LOCK = threading.Lock()
