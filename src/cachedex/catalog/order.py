"""The order of search results: by package name, then newest version first in Spack's
order (as package pages list them: 2.11.1 before 2.9.1), then by hash.

SQL sorts versions as text, so every path that makes a page of results sorts in
Python: a scope's facet index sorts the scope's specs once (its term index, read in the
same order, takes the same permutation), and a search by name or hash sorts its
matches before taking a page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import add
from typing import TypeVar

from ..versions import version_key

__all__ = ["in_result_order", "result_positions"]

T = TypeVar("T")


def result_positions(names: Sequence[str], versions: Sequence[str], hashes: Sequence[str]) -> list[int]:
    """The positions of specs (``names[i]``, ``versions[i]``, ``hashes[i]``) in result order."""
    # Two stable sorts whose keys C computes, and no tuple per spec: a big scope has
    # hundreds of thousands, ~10,000 names and a few hundred versions.
    name_rank = {name: rank << 32 for rank, name in enumerate(sorted(set(names)))}
    ranked = sorted(set(versions), key=lambda version: (version_key(version), version))
    newest_first = {version: len(ranked) - rank for rank, version in enumerate(ranked)}
    by_hash = sorted(range(len(hashes)), key=hashes.__getitem__)
    keys = list(map(add, map(name_rank.__getitem__, names), map(newest_first.__getitem__, versions)))
    by_hash.sort(key=keys.__getitem__)
    return by_hash


def in_result_order(rows: Iterable[T], fields: Callable[[T], tuple[str, str, str]]) -> list[T]:
    """``rows`` in result order; ``fields`` gives a row's (name, version, hash)."""
    rows = list(rows)
    names, versions, hashes = zip(*map(fields, rows), strict=True) if rows else ((), (), ())
    return [rows[i] for i in result_positions(names, versions, hashes)]
