"""The specs that depend on others: what a ``^dependency`` search asks.

``^zlib`` matches every spec with a link or run path down to a zlib: on a big tag, most
of its specs. Walking up the edges from a core library (SQL, through the edges' covering
child index) visits most of the catalog's edges and takes about a second; a search asked
for it twice (its count, then its page), and again for every page and filter after. The
walk is now made once per catalog state and dependency, and kept as a bit set over
catalog ids in :data:`~.terms.BITS_CACHE` (bounded in bytes). A search then reads it in
one of two ways: as a bit set over a scope's positions (a search without a name, with
the other constraints' bit sets), or id by id for the few rows a name or hash selects.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..values import LINK_RUN
from .terms import BITS_CACHE, bits_of

__all__ = ["Dependents", "dependents"]


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
        ids = [
            spec_id
            for (spec_id,) in db.execute(
                "WITH RECURSIVE up(id) AS ("
                f"SELECT e.parent FROM edges e WHERE e.deptypes & {LINK_RUN} AND e.child IN "
                f"(SELECT s.id FROM specs s WHERE {matching}) "
                f"UNION SELECT e.parent FROM edges e JOIN up ON e.child = up.id WHERE e.deptypes & {LINK_RUN}"
                ") SELECT id FROM up",
                list(params),
            )
        ]
        return bits_of(ids, max(ids) + 1) if ids else 0

    return Dependents(BITS_CACHE.get(("dependents", path, token, key), walk))
