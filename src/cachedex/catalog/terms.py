"""Bit sets of a search scope's positions: queries without a package name.

``+mpi target=zen4`` or ``@2: %gcc`` may match a hundred thousand specs of a big tag;
checking each row in SQL, or even gathering their positions in Python sets, takes tens
to hundreds of milliseconds. Here a set of positions (in :class:`~.facets.FacetIndex`
order, the scope's result order) is a Python int whose bit ``i`` stands for position
``i``: constraints, facets and a stack combine with ``&`` at C speed, ``bit_count()``
gives the total, and :func:`lowest_positions` reads a page.

A :class:`TermIndex` checks a constraint once per distinct value (a version, a variant
string), never once per spec; the bit sets of the constraints asked lately are kept in
:data:`BITS_CACHE`, bounded in bytes for the whole process.
"""

from __future__ import annotations

import itertools
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from functools import partial

from ..query import Query, variants_satisfy
from ..values import decode_variants, variant_name
from ..versions import VersionRange, version_satisfies

__all__ = [
    "BITS_CACHE",
    "BITS_KEPT",
    "BitsCache",
    "RankColumn",
    "TermIndex",
    "bits_of",
    "firsts_among",
    "index_numbers",
    "lowest_positions",
]

_ONE = ord("1")

#: lowest_positions counts a bit set's bits this many bytes (4,096 bits) at a time.
_CHUNK_BYTES = 512

#: What the process keeps of the bit sets made lately, every index's together: ~1,000 bit
#: sets of a 250,000-spec tag, however many tags and distinct queries there are.
BITS_KEPT = 32 * 1024 * 1024


def bits_of(positions: Iterable[int], size: int) -> int:
    """The bit set of ``positions`` (each below ``size``)."""
    if size == 0:
        return 0
    digits = bytearray(b"0") * size
    for position in positions:
        digits[position] = _ONE
    digits.reverse()  # the lowest bit is the last digit
    return int(digits, 2)  # base 2 parses in linear time


def firsts_among(sets: Iterable[tuple[str, int]], found: int) -> list[tuple[int, str, int]]:
    """(first position, value, how many) of each ``(value, bit set)`` of ``sets`` that
    has positions in the bit set ``found``; the first is its lowest position there (the
    first in result order)."""
    counted = []
    for value, bits in sets:
        both = bits & found
        if both:
            counted.append(((both & -both).bit_length() - 1, value, both.bit_count()))
    return counted


def lowest_positions(bits: int, offset: int, limit: int) -> list[int]:
    """The positions of set bits number ``offset`` to ``offset + limit - 1``, counted
    from the lowest: a page of results, in result order."""
    found: list[int] = []
    skip = offset
    data = bits.to_bytes(_bytes_of(bits), "little")
    view = memoryview(data)
    # Whole chunks before the page are only counted; in the chunk where it begins, a
    # sparse chunk is read bit by bit, a dense one by pieces of 256 bits first.
    for start in range(0, len(data), _CHUNK_BYTES):
        chunk = int.from_bytes(view[start : start + _CHUNK_BYTES], "little")
        count = chunk.bit_count()
        if count <= skip:
            skip -= count
            continue
        pieces = [(start, chunk)] if count <= 64 else _pieces(view, start, len(data))
        for first, piece in pieces:
            count = piece.bit_count()
            if count <= skip:
                skip -= count
                continue
            while piece:
                lowest = piece & -piece
                piece ^= lowest
                if skip:
                    skip -= 1
                    continue
                found.append(first * 8 + lowest.bit_length() - 1)
                if len(found) == limit:
                    return found
    return found


def _pieces(view: memoryview, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(first byte, value) of each 32-byte piece of a chunk."""
    for first in range(start, min(start + _CHUNK_BYTES, end), 32):
        yield first, int.from_bytes(view[first : first + 32], "little")


class BitsCache:
    """Bit sets made lately, least recently used out first once they hold more than
    ``max_bytes``; thread-safe. A bit set is made outside the lock: two threads asking
    for the same new one may both make it."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, tuple[int, int]] = OrderedDict()  #: key -> (bits, weight)
        self._bytes = 0

    def get(self, key: Hashable, make: Callable[[], int]) -> int:
        """The bit set of ``key``, made by ``make`` if it is not kept."""
        with self._lock:
            kept = self._items.get(key)
            if kept is not None:
                self._items.move_to_end(key)
                return kept[0]
        found = make()
        # A key holds what a search names (a variant, a version range, a facet's value):
        # counted with its text, as a set of nothing matched weighs nothing, and a client
        # naming new values that match nothing filled the memory with keys.
        weight = _bytes_of(found) + len(repr(key)) + _KEY_OVERHEAD
        with self._lock:
            if key not in self._items:
                self._items[key] = (found, weight)
                self._bytes += weight
                while self._bytes > self.max_bytes and len(self._items) > 1:
                    _, (_dropped, dropped_weight) = self._items.popitem(last=False)
                    self._bytes -= dropped_weight
        return found

    def __contains__(self, key: Hashable) -> bool:
        """Whether the bit set of ``key`` is kept now (it may be pushed out at any time)."""
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    @property
    def bytes(self) -> int:
        """The bytes of the bit sets kept, and of their keys."""
        return self._bytes


#: Counted per bit set besides its bytes and its key's text: the objects and the dict slot.
_KEY_OVERHEAD = 100


def _bytes_of(bits: int) -> int:
    return (bits.bit_length() + 7) // 8


#: The process's bit sets (facet sets, version ranges, variants), for every index.
BITS_CACHE = BitsCache(BITS_KEPT)

#: Each index's part of BITS_CACHE's keys: a number never given twice in a process.
index_numbers = itertools.count()


class RankColumn:
    """One number per position, with few distinct numbers (a version's rank, a facet
    group): :meth:`bits` gives the positions whose number is in a set at C speed, with
    one ``bytes.translate`` per block of 256 numbers, so its cost does not grow with the
    number of positions matched."""

    def __init__(self, ranks: Sequence[int]) -> None:
        self.size = len(ranks)
        # Each position's number modulo 256, the last position first (as bits_of's digits).
        self._low = bytes(rank & 255 for rank in reversed(ranks))
        self._count = blocks = (max(ranks, default=0) >> 8) + 1
        # With more than 256 numbers, the positions of each block of 256.
        self._blocks: list[int] = []
        if blocks > 1:
            members: list[list[int]] = [[] for _ in range(blocks)]
            for position, rank in enumerate(ranks):
                members[rank >> 8].append(position)
            self._blocks = [bits_of(block, self.size) for block in members]

    def bits(self, wanted: Iterable[int]) -> int:
        """The bit set of the positions whose number is in ``wanted``."""
        by_block: dict[int, list[int]] = {}
        for rank in wanted:
            by_block.setdefault(rank >> 8, []).append(rank & 255)
        found = 0
        for block, lows in by_block.items():
            if block >= self._count:  # no position has a number that high
                continue
            if self._blocks and len(lows) == 256:
                found |= self._blocks[block]
                continue
            table = bytearray(b"0") * 256
            for low in lows:
                table[low] = _ONE
            bits = int(self._low.translate(table), 2) if self.size else 0
            found |= bits & self._blocks[block] if self._blocks else bits
        return found


class TermIndex:
    """A scope's versions and variant strings, position by position, answering a
    query's version and variant constraints as a bit set."""

    def __init__(self, rows: Iterable[tuple[str, str]], at: Sequence[int] | None = None) -> None:
        """``rows`` (version, variants) in result order; or, with ``at``, in any order,
        the ``k``-th row at position ``at[k]``."""
        if at is None:
            rows = list(rows)
            at = range(len(rows))
        rank_of: dict[str, int] = {}
        ranks = array("I", bytes(4 * len(at)))
        self._by_variant: dict[str, array[int]] = {}
        for (version, variants), position in zip(rows, at, strict=True):
            ranks[position] = rank_of.setdefault(version, len(rank_of))
            for variant in decode_variants(variants):
                found = self._by_variant.get(variant)
                if found is None:
                    found = self._by_variant[variant] = array("I")
                found.append(position)
        self.size = len(ranks)
        self._versions = list(rank_of)  # by rank
        self._version_column = RankColumn(ranks)
        # Variant strings by the variant's name ('+mpi', 'mpi=x', 'cuda_arch:=80,90' -> ...).
        self._by_name: dict[str, list[str]] = {}
        for variant in self._by_variant:
            self._by_name.setdefault(variant_name(variant), []).append(variant)
        # The bit sets of the variant strings at least 1 spec in 8 has (+shared,
        # build_system=cmake): made now, as a constraint would make them on first use
        # (~35 ms for 250,000 positions, while a server's other requests wait).
        self._common = {s: bits_of(p, self.size) for s, p in self._by_variant.items() if len(p) * 8 >= self.size}
        self._number = next(index_numbers)

    def variant_names(self) -> list[str]:
        """The names of the variants the scope's specs have (``mpi``, ``cuda_arch``)."""
        return list(self._by_name)

    def strings_among(self, name: str, found: int) -> list[tuple[int, str, int]]:
        """(first position, string, how many) of each string of variant ``name`` (``+mpi``,
        ``~mpi``, ``build_type=Release``) the positions of the bit set ``found`` have: a
        common string by its bit set, another by its positions, looked up among those of
        ``found`` (read once; a hint asks with at most 2,000)."""
        strings = self._by_name.get(name, ())
        common = self._common
        counted = firsts_among(((s, common[s]) for s in strings if s in common), found)
        among: set[int] | None = None
        for string in strings:
            if string in common:
                continue
            if among is None:
                among = set(lowest_positions(found, 0, found.bit_count()))
            hits = [position for position in self._by_variant[string] if position in among]
            if hits:
                counted.append((min(hits), string, len(hits)))
        return counted

    def bits(self, query: Query) -> int:
        """The positions of the specs satisfying ``query``'s versions and variants (it
        must have at least one of them) as a bit set."""
        number = self._number
        parts = []
        if query.versions:
            parts.append(
                BITS_CACHE.get((number, "versions", query.versions), partial(self._read_versions, query.versions))
            )
        for constraint in query.variants:
            exact = constraint[0] in query.exact_variants
            key = (number, "variant", constraint, exact)
            parts.append(BITS_CACHE.get(key, partial(self._read_variant, constraint, exact)))
        found = parts[0]
        for part in parts[1:]:
            found &= part
        return found

    def _read_versions(self, ranges: tuple[VersionRange, ...]) -> int:
        wanted = (rank for rank, version in enumerate(self._versions) if version_satisfies(version, ranges))
        return self._version_column.bits(wanted)

    def _read_variant(self, constraint: tuple[str, str | bool | tuple[str, ...]], exact: bool) -> int:
        one = Query(variants=(constraint,), exact_variants=(constraint[0],) if exact else ())
        strings = [s for s in self._by_name.get(constraint[0], ()) if variants_satisfy((s,), one)]
        found = bits_of((p for s in strings if s not in self._common for p in self._by_variant[s]), self.size)
        for string in strings:
            found |= self._common.get(string, 0)
        return found
