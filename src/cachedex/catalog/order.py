"""The order of search results: by package name, then newest version first in Spack's
order (as package pages list them: 2.11.1 before 2.9.1), then by hash.

SQL sorts versions as text, so every path that makes a page of results sorts in
Python: a scope's facet index sorts the scope's specs once (its term index, read in the
same order, takes the same permutation), and a search by name or hash sorts its
matches before taking a page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from ..versions import version_key

__all__ = ["in_result_order", "result_positions"]

T = TypeVar("T")


def result_positions(rows: Sequence[tuple[Any, ...]]) -> list[int]:
    """The positions of ``rows``, each starting with (name, version, hash), in result order."""
    # Each distinct version ranked once (a big tag has hundreds of specs per version string).
    ranked = sorted({row[1] for row in rows}, key=lambda version: (version_key(version), version))
    newest_first = {version: -rank for rank, version in enumerate(ranked)}
    return sorted(range(len(rows)), key=lambda i: (rows[i][0], newest_first[rows[i][1]], rows[i][2]))


def in_result_order(rows: Iterable[T], fields: Callable[[T], tuple[str, str, str]]) -> list[T]:
    """``rows`` in result order; ``fields`` gives a row's (name, version, hash)."""
    rows = list(rows)
    return [rows[i] for i in result_positions([fields(row) for row in rows])]
