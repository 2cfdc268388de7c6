"""What holds each spec of a search scope: within a tag, its stacks; in the whole
catalog, the tags whose root lists it.

A search result names them on every row. Asking SQL per page (a correlated subquery
joining members, mirrors and tags per row, or one read of the members' spec index)
cost as much as reading the rows themselves; a scope has only a few dozen distinct
combinations of holders, so each spec's combination is kept as a small number, found
by bisecting the scope's sorted spec ids: ~3 MB for a 250,000-spec tag.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable

__all__ = ["HolderIndex"]


class HolderIndex:
    """Each spec's holders (sorted names), from (spec id, holder bit) pairs and the
    holders' names by bit."""

    def __init__(self, pairs: Iterable[tuple[int, int]], names: list[str]) -> None:
        masks: dict[int, int] = {}
        get = masks.get
        for spec, bit in pairs:
            masks[spec] = get(spec, 0) | 1 << bit
        self._ids = array("q", sorted(masks))
        number: dict[int, int] = {}
        self._codes = array("I", [number.setdefault(masks[spec], len(number)) for spec in self._ids])
        self._names = [
            tuple(sorted(names[bit] for bit in range(mask.bit_length()) if mask >> bit & 1)) for mask in number
        ]

    def __len__(self) -> int:
        return len(self._ids)

    def of(self, spec: int) -> tuple[str, ...]:
        """The names of what holds ``spec`` (() for a spec nothing holds)."""
        at = bisect_left(self._ids, spec)
        if at < len(self._ids) and self._ids[at] == spec:
            return self._names[self._codes[at]]
        return ()
