"""What SQL cannot compare, for the searches that ask SQL: Spack versions and variant sets,
checked by two functions written in Python on the rows the indexes left."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import lru_cache

import msgspec

from ..query import Query, variants_satisfy
from ..values import decode_variants
from ..versions import VersionRange, version_satisfies

__all__ = ["register_functions"]

_ranges_decoder = msgspec.json.Decoder(tuple[VersionRange, ...])
_query_decoder = msgspec.json.Decoder(Query)
# The constraint is the same JSON text on every row of one query: decode it once.
_decoded_ranges: Callable[[str], tuple[VersionRange, ...]] = lru_cache(maxsize=64)(_ranges_decoder.decode)
_decoded_query: Callable[[str], Query] = lru_cache(maxsize=64)(_query_decoder.decode)


def _sql_version(version: str, ranges: str) -> bool:
    return version_satisfies(version or "", _decoded_ranges(ranges))


def _sql_variants(stored: str, wanted: str) -> bool:
    return variants_satisfy(decode_variants(stored), _decoded_query(wanted))


def register_functions(db: sqlite3.Connection) -> None:
    """Give a connection the SQL functions searches use (``cx_version``, ``cx_variants``)."""
    db.create_function("cx_version", 2, _sql_version, deterministic=True)
    db.create_function("cx_variants", 2, _sql_variants, deterministic=True)
