"""Package names close to a misspelled one: the "did you mean" of a search that finds
nothing.

``difflib.get_close_matches`` over every name of a big catalog (10,000) takes 20-90 ms,
too long for a server answering in its event loop. A :class:`NameIndex` computes
difflib's own upper bound on each name's ratio (``quick_ratio``: the characters the two
names share, counted with repeats) for every name at once from posting lists, at C
speed, then scores names from the highest bound down and stops once no bound left can
reach the cutoff or beat the third best: exactly difflib's answer, usually from a few
names.
"""

from __future__ import annotations

import difflib
import heapq
from collections import Counter
from collections.abc import Iterable

__all__ = ["NameIndex"]


class NameIndex:
    """Every package name, and for each character and count ``k`` the names holding
    that character at least ``k`` times."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(set(names))
        self._holding: dict[tuple[str, int], list[int]] = {}
        for number, name in enumerate(self.names):
            for char, count in Counter(name).items():
                for k in range(1, count + 1):
                    self._holding.setdefault((char, k), []).append(number)

    def close(self, name: str, *, n: int = 3, cutoff: float = 0.6) -> list[str]:
        """What ``difflib.get_close_matches(name, names, n, cutoff)`` answers."""
        shared: Counter[int] = Counter()
        for char, count in Counter(name).items():
            for k in range(1, count + 1):
                shared.update(self._holding.get((char, k), ()))
        bounds = sorted(
            (
                (2.0 * common / (len(name) + len(self.names[number])), self.names[number])
                for number, common in shared.items()
            ),
            reverse=True,
        )
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(name)
        best: list[tuple[float, str]] = []  # the n best (ratio, name) so far, the least first
        for bound, candidate in bounds:
            # No name left can reach the cutoff, or beat the n-th best: difflib's ratio
            # never exceeds the bound.
            if bound < cutoff or (len(best) == n and bound < best[0][0]):
                break
            matcher.set_seq1(candidate)
            score = matcher.ratio()
            if score >= cutoff:
                if len(best) < n:
                    heapq.heappush(best, (score, candidate))
                else:
                    heapq.heappushpop(best, (score, candidate))
        return [candidate for _, candidate in sorted(best, reverse=True)]
