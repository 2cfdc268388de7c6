"""Variant and version indexes of a search scope: queries without a package name.

``+mpi target=zen4`` or ``@2: %gcc`` may match tens of thousands of specs; checking each
row's variants or version in SQL takes hundreds of milliseconds on a big tag. A
:class:`TermIndex` maps every variant string and every version of a scope's specs to
the positions holding it (in :class:`~.facets.FacetIndex` order, so the two combine):
a constraint is then checked once per distinct value, not once per spec.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterable

from ..query import Query, variants_satisfy, version_satisfies
from ..values import decode_variants

__all__ = ["TermIndex", "read_term_index"]


class TermIndex:
    """Positions of a scope's specs by variant string and by version."""

    def __init__(self, rows: Iterable[tuple[str, str]]) -> None:
        self.by_variant: dict[str, array[int]] = {}
        self.by_version: dict[str, array[int]] = {}
        for position, (version, variants) in enumerate(rows):
            self.by_version.setdefault(version, array("I")).append(position)
            for variant in decode_variants(variants):
                found = self.by_variant.get(variant)
                if found is None:
                    found = self.by_variant[variant] = array("I")
                found.append(position)
        # Variant strings by the variant's name ('+mpi', 'mpi=x', 'cuda_arch:=80,90' -> ...).
        self._by_name: dict[str, list[str]] = {}
        for variant in self.by_variant:
            name = variant[1:] if variant[:1] in "+~" else variant.split("=", 1)[0].rstrip(":")
            self._by_name.setdefault(name, []).append(variant)

    def positions(self, query: Query) -> set[int]:
        """Positions of the specs satisfying ``query``'s versions and variants (the query
        must have at least one of them)."""
        groups: list[list[array[int]]] = []
        if query.versions:
            groups.append([p for v, p in self.by_version.items() if version_satisfies(v, query.versions)])
        for name, wanted in query.variants:
            one = Query(variants=((name, wanted),))
            groups.append([self.by_variant[s] for s in self._by_name.get(name, ()) if variants_satisfy((s,), one)])
        # Intersect from the smallest candidate set: the others only filter it.
        groups.sort(key=lambda arrays: sum(len(a) for a in arrays))
        found: set[int] = set()
        for arrays in groups[:1]:
            for positions in arrays:
                found.update(positions)
        for arrays in groups[1:]:
            if not found:
                break
            other: set[int] = set()
            for positions in arrays:
                other.update(positions)
            found &= other
        return found


def read_term_index(db: sqlite3.Connection, source: str, where: str, params: list[object]) -> TermIndex:
    """The :class:`TermIndex` of the scope ``facets.scope_sql`` describes, in result order."""
    return TermIndex(
        db.execute(
            f"SELECT s.version, s.variants FROM {source} WHERE {where} ORDER BY s.name, s.version, s.hash", params
        )
    )
