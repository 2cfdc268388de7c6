"""Answering a query of facets alone (``target=zen4 %gcc``) without scanning rows.

Such a query may match tens of thousands of specs of a big tag; SQL would count and
sort them all for each page. A :class:`FacetIndex` holds a search scope's specs in
result order, grouped by their facets, built once per catalog state and scope; the
:class:`StateCache` keeps what was built for the catalog's current state only, shared
by every connection of the process (a server's threads), and drops it all when a sync
commits a new state.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import operator
import sqlite3
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence
from typing import Any

from ..query import Query, target_names
from ..versions import version_satisfies
from .dependents import Dependents
from .order import result_positions
from .rows import HAS_BINARY
from .terms import BITS_CACHE, RankColumn, bits_of, index_numbers

__all__ = [
    "COMPILER_COLUMN",
    "FACET_COLUMNS",
    "STATE_CACHE",
    "FacetIndex",
    "FacetTerms",
    "StateCache",
    "compiler_matcher",
    "facet_terms",
    "one_per_compiler",
    "read_facet_index",
    "scope_rows",
]

#: A compiler's names before Spack 1.0 (a spec's ``compiler`` key: ``oneapi@2025.1``) and
#: as a package since (its compiler node: ``intel-oneapi-compilers@2025.1``), each way:
#: ``%oneapi`` and ``%intel-oneapi-compilers`` find both (Spack 1.0 reads the old names as
#: the packages', ``spack/aliases.py``, and no longer finds old specs by them).
_LEGACY_COMPILERS = {
    "clang": "llvm",
    "oneapi": "intel-oneapi-compilers",
    "rocmcc": "llvm-amdgpu",
    "intel": "intel-oneapi-compilers-classic",
    "arm": "acfl",
}
COMPILER_ALIASES = {
    **{old: (new,) for old, new in _LEGACY_COMPILERS.items()},
    **{new: (old,) for old, new in _LEGACY_COMPILERS.items()},
}


def one_per_compiler(counts: Counter[str]) -> Counter[str]:
    """``counts`` of compilers (``name@version``, or names) with a legacy name and its
    package's (``oneapi@2025.1.0``, ``intel-oneapi-compilers@2025.1.0``), which are one,
    counted once, under the name more of them have: a hint listed both."""
    merged: Counter[str] = Counter()
    named: dict[str, tuple[int, str]] = {}  # one compiler -> (its most counted name's count, that name)
    for compiler, n in counts.items():
        name, at, version = compiler.partition("@")
        one = _LEGACY_COMPILERS.get(name, name) + at + version
        merged[one] += n
        named[one] = max(named.get(one, (-1, compiler)), (n, compiler))
    return Counter({named[one][1]: n for one, n in merged.items()})


#: Facet columns of ``specs``, in the order of a facet group's key.
FACET_COLUMNS = ("target", "os", "compiler", "platform")
#: The compiler's place among them.
COMPILER_COLUMN = FACET_COLUMNS.index("compiler")

#: A query's facet constraints: (column number in FACET_COLUMNS, allowed values).
FacetTerms = list[tuple[int, tuple[str, ...]]]


def compiler_matcher(query: Query) -> Callable[[str], bool]:
    """Whether a compiler string (``name@version``, or a name) satisfies the query's
    ``%compiler``: its name or its legacy name, and its version in the query's ranges."""
    names = {query.compiler, *COMPILER_ALIASES.get(query.compiler or "", ())}
    wanted = query.compiler_versions

    def matches(compiler: str) -> bool:
        name, at, version = compiler.partition("@")
        # (a compiler without a version satisfies no version asked for)
        return name in names and (not wanted or bool(at) and version_satisfies(version, wanted))

    return matches


def facet_terms(query: Query, compilers: Callable[[], list[str]]) -> FacetTerms:
    """The query's facet constraints; ``compilers`` lists the catalog's distinct compiler
    strings (asked only if the query names a compiler), so that a compiler constraint
    becomes ``compiler IN (...)`` on the index instead of a check on every row."""
    terms: FacetTerms = []
    if query.target is not None:
        terms.append((0, target_names(query.target)))
    if query.os is not None:
        terms.append((1, (query.os,)))
    if query.compiler is not None:
        terms.append((COMPILER_COLUMN, tuple(filter(compiler_matcher(query), compilers()))))
    if query.platform is not None:
        terms.append((3, (query.platform,)))
    return terms


def _group_matches(key: tuple[str, ...], facets: FacetTerms) -> bool:
    return all(key[column] in values for column, values in facets)


class FacetIndex:
    """A search scope's specs in result order (``order.py``), grouped by their
    facets (target, os, compiler, platform). It answers a query of facets alone without
    touching a row it does not return: the count is a sum over the matching groups, and
    the page merges their (sorted) lists of positions up to ``offset + limit``. A big
    tag has a few hundred groups."""

    def __init__(self, rows: Iterable[tuple[int, str, str, str, str]], at: Sequence[int] | None = None) -> None:
        """``rows`` (id, target, os, compiler, platform) in result order; or, with ``at``,
        in any order, the ``k``-th row at position ``at[k]``."""
        number: dict[tuple[str, ...], int] = {}
        group_number = number.setdefault
        if at is None:
            self.ids = array("q")
            self.group_of = array("I")  # each position's group
            # Bound methods and two plain loops: this runs once per row of every scope.
            add_id, add_group = self.ids.append, self.group_of.append
            for row in rows:
                add_id(row[0])
                add_group(group_number(row[1:], len(number)))
        else:
            self.ids = array("q", bytes(8 * len(at)))
            self.group_of = array("I", bytes(4 * len(at)))
            ids, group_of = self.ids, self.group_of
            for row, position in zip(rows, at, strict=True):
                ids[position] = row[0]
                group_of[position] = group_number(row[1:], len(number))
        self.positions: list[array[int]] = [array("q") for _ in number]
        add_position = [positions.append for positions in self.positions]
        for position, group in enumerate(self.group_of):
            add_position[group](position)
        self.groups = list(number)
        self.size = len(self.ids)
        self._groups_column: RankColumn | None = None
        self._gather: Callable[[bytes], tuple[int, ...]] | None = None  # the ids' itemgetter
        self._top = 0  # the highest id, found with it
        self._kept_dependents: dict[bytes, int] = {}
        self._value_bits: dict[int, list[tuple[str, int]]] = {}
        self._number = next(index_numbers)
        #: The position of each row given with ``at`` (a tag's or the catalog's index, read
        #: by spec id: its term index is read so and placed the same way); else empty.
        self.at: Sequence[int] = at if at is not None else ()
        self._sorted_ids: array[int] | None = None  # (see positions_of)

    def bits(self, facets: FacetTerms) -> int:
        """The positions of the specs matching ``facets`` as a bit set (see ``terms``)."""
        key = (self._number, "facets", tuple((column, values) for column, values in facets))
        return BITS_CACHE.get(
            key, lambda: self.groups_column().bits(g for g, k in enumerate(self.groups) if _group_matches(k, facets))
        )

    def id_bits(self, ids: Iterable[int]) -> int:
        """The positions of the specs of ``ids`` that this scope holds, as a bit set
        (a few: the specs another of whose compilers a search names)."""
        wanted = frozenset(ids)
        if not wanted:
            return 0
        return BITS_CACHE.get((self._number, "ids", wanted), lambda: bits_of(self.positions_of(wanted), self.size))

    def positions_of(self, ids: Iterable[int]) -> list[int]:
        """The positions of those of ``ids`` that this scope holds. A tag's or the
        catalog's index was read by spec id, :attr:`at` placing each row: an id's rank
        among the sorted ids (kept, made on first use, ~30 ms for 250,000) is its row,
        found by a binary search, not by a pass over every position (~50 ms a search)."""
        if not self.at:  # (a stack's, made from its tag's: a pass)
            wanted = set(ids)
            return [position for position, spec_id in enumerate(self.ids) if spec_id in wanted]
        if self._sorted_ids is None:
            self._sorted_ids = array("q", sorted(self.ids))
        found, at = [], self.at
        for spec_id in ids:
            rank = bisect.bisect_left(self._sorted_ids, spec_id)
            if rank < len(self._sorted_ids) and self._sorted_ids[rank] == spec_id:
                found.append(at[rank])
        return found

    def dependents_bits(self, key: bytes, found: Dependents, *, keep: bool = False) -> int:
        """The positions of the specs ``found`` holds (the dependents of the dependency
        ``key`` names) as a bit set, kept in BITS_CACHE; ``keep``: and by this index, out
        of that cache's reach (a warm-up's walks)."""
        if (kept := self._kept_dependents.get(key)) is not None:
            return kept
        if not found or not self.size:  # a leaf's (6 ms for 250,000), an empty scope's: no position to read
            return 0
        if self._gather is None:
            self._gather, self._top = operator.itemgetter(*self.ids), max(self.ids, default=0)
        gather, top = self._gather, self._top
        bits = BITS_CACHE.get((self._number, "dependents", key), lambda: found.position_bits(self.ids, gather, top))
        if keep:
            self._kept_dependents[key] = bits
        return bits

    def value_bits(self, column: int) -> list[tuple[str, int]]:
        """Each value of facet ``column`` (its number in :data:`FACET_COLUMNS`) the
        scope's specs have, with the bit set of their positions: made on first use and
        kept by the index (a few dozen values a column), not in BITS_CACHE, whose room
        is the searches' own."""
        made = self._value_bits.get(column)
        if made is None:
            groups_of: dict[str, list[int]] = {}
            for group, key in enumerate(self.groups):
                groups_of.setdefault(key[column], []).append(group)
            column_of = self.groups_column()
            made = self._value_bits[column] = [(value, column_of.bits(groups)) for value, groups in groups_of.items()]
        return made

    def groups_column(self) -> RankColumn:
        """Each position's group, made on first use (~50 ms for 250,000 specs)."""
        if self._groups_column is None:
            self._groups_column = RankColumn(self.group_of)
        return self._groups_column

    def select(self, members: Container[int]) -> tuple[FacetIndex, list[int]]:
        """The index of this scope's specs whose ids are in ``members`` (a stack's, from
        its tag's), in the same order, and their positions in this one."""
        positions = [position for position, spec_id in enumerate(self.ids) if spec_id in members]
        ids, groups, group_of = self.ids, self.groups, self.group_of
        rows = ((ids[position], *groups[group_of[position]]) for position in positions)
        return FacetIndex(rows), positions  # type: ignore[arg-type]

    def matches(self, facets: FacetTerms, offset: int, limit: int) -> tuple[int, list[int]]:
        """(number of specs matching, spec ids of the page ``offset``..``offset + limit``)."""
        lists = [self.positions[g] for g, key in enumerate(self.groups) if _group_matches(key, facets)]
        total = sum(len(found) for found in lists)
        merged = lists[0] if len(lists) == 1 else heapq.merge(*lists)
        page = itertools.islice(merged, offset, offset + limit) if total > offset else ()
        return total, [self.ids[position] for position in page]


def scope_rows(db: sqlite3.Connection, root: int | None, columns: str) -> sqlite3.Cursor:
    """``columns`` of the listed specs of a tag (its root mirror id, as
    ``scopes.scope_mirrors`` gives it), or of the whole catalog (None), by spec id: the
    order a scan gives for free. A stack's scope is its tag's, kept to the stack's
    members (:meth:`FacetIndex.select`)."""
    if root is None:
        return db.execute(f"SELECT {columns} FROM specs s WHERE {HAS_BINARY} ORDER BY s.id")
    return db.execute(
        f"SELECT {columns} FROM members mb0 JOIN specs s ON s.id = mb0.spec_id "
        "WHERE mb0.mirror_id = ? AND mb0.listed ORDER BY mb0.spec_id",
        (root,),
    )


def read_facet_index(db: sqlite3.Connection, root: int | None) -> FacetIndex:
    """The :class:`FacetIndex` of a tag, or of the whole catalog, from one pass over its
    specs by id, placed in result order (``order.py``); the index keeps each one's place
    (:attr:`FacetIndex.at`) for the scope's term index."""
    # What the pass keeps is small: a column each, names, versions and facets shared.
    shared: dict[Any, Any] = {}
    names, versions, hashes, ids, facets = [], [], [], array("q"), []
    for row in scope_rows(db, root, "s.name, s.version, s.hash, s.id, s.target, s.os, s.compiler, s.platform"):
        names.append(shared.setdefault(row[0], row[0]))
        versions.append(shared.setdefault(row[1], row[1]))
        hashes.append(row[2])
        ids.append(row[3])
        facet = row[4:]
        facets.append(shared.setdefault(facet, facet))
    at = array("I", bytes(4 * len(ids)))
    for position, k in enumerate(result_positions(names, versions, hashes)):
        at[k] = position
    del names, versions, hashes
    return FacetIndex(((spec_id, *facet) for spec_id, facet in zip(ids, facets, strict=True)), at)


class StateCache:
    """Values derived from one catalog state (facet indexes, the compiler list), shared
    by every connection of the process: per catalog file, only those of the newest state
    seen are kept, so memory is bounded by one state's scopes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, tuple[str, dict[tuple[object, ...], Any]]] = {}

    def peek(self, path: str, token: str, key: tuple[object, ...]) -> Any:
        """The value of ``key`` in state ``token`` if it was made, else None."""
        with self._lock:
            state = self._states.get(path)
            return state[1].get(key) if state is not None and state[0] == token else None

    def get(self, path: str, token: str, key: tuple[object, ...], make: Callable[[], Any]) -> Any:
        """The value of ``key`` in state ``token`` of the catalog at ``path``, made once."""
        with self._lock:
            state = self._states.get(path)
            if state is not None and state[0] == token and key in state[1]:
                return state[1][key]
        value = make()
        with self._lock:
            state = self._states.get(path)
            if state is None or state[0] != token:
                state = self._states[path] = (token, {})  # another state: forget the last
            state[1][key] = value
        return value

    def forget(self, path: str) -> None:
        """Forget what was made from the catalog at ``path`` (a file replaced by a copy
        that went its own way may have the old file's token)."""
        with self._lock:
            self._states.pop(path, None)


#: The process's cache of derived values.
STATE_CACHE = StateCache()
