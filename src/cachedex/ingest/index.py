"""Decode Spack build-cache indexes (``index.json``, Database versions 6-9), step 1 of 2.

Decoding happens in two steps so that a sync only pays for what it uses:

1. :func:`decode_index` reads the outer structure: the Database version and, per DAG
   hash, ``in_buildcache`` plus the node as undecoded JSON (``msgspec.Raw``, a view
   into the original bytes, no copy).
2. :mod:`.records` decodes the nodes a caller asks for into :class:`SpecRecord` values.

A stack's index is only needed for its set of hashes, so a sync never runs step 2
on a stack unless the stack holds records the root index does not.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import TypeVar

import msgspec

from .._perf import gc_paused
from ..errors import IndexFormatError
from ..values import format_version, is_dag_hash, short_repr

__all__ = [
    "SUPPORTED_DB_VERSIONS",
    "IndexRecord",
    "RawIndex",
    "count_made",
    "counting_decode",
    "decode_index",
    "reject_duplicate_hashes",
]

#: Database versions whose node formats we read (format doc §2.3).
SUPPORTED_DB_VERSIONS = (6, 7, 8, 9)

# -- typed views of the JSON: only the fields we use are declared ---------------------


#: Every counted struct a decode makes, until :func:`counting_decode` has counted them.
_made: list[object] = []
#: The ``__post_init__`` of a struct that counts itself (index records, a lockfile's
#: specs): an append, a call into C, where a Python method cost ~0.1 s a first sync
#: (550,000 records) and let other threads take the GIL in every decode.
count_made = _made.append
#: One decode at a time appends to ``_made``: a sync decodes its stacks in several
#: threads, and each must count only its own records (the decodes take turns with the
#: GIL anyway, so waiting here costs nothing).
_counting = threading.Lock()

_T = TypeVar("_T")


def counting_decode(decoder: msgspec.json.Decoder[_T], data: bytes | bytearray | memoryview) -> tuple[_T, int]:
    """``decoder``'s value for ``data``, and how many structs whose ``__post_init__`` is
    :data:`count_made` it made: more than the keys of the objects holding them means a
    key repeats (a repeated JSON key silently decodes to its last value)."""
    with _counting, gc_paused():
        try:
            return decoder.decode(data), len(_made)
        finally:
            _made.clear()


class IndexRecord(msgspec.Struct):
    """One record of ``database.installs``: its node, undecoded, and ``in_buildcache``."""

    spec: msgspec.Raw  # required: a record without its node is not one
    in_buildcache: bool = False

    # Every record decoded is counted, those a repeated key overwrites too: more records
    # than keys means a key repeats (see reject_duplicate_hashes).
    __post_init__ = count_made  # type: ignore[misc]  # msgspec calls it with the record


class _Database(msgspec.Struct):
    version: str | int | float | None = None
    installs: dict[str, IndexRecord] = {}


class _IndexFile(msgspec.Struct):
    database: _Database


class _VersionOnlyDatabase(msgspec.Struct):
    version: str | int | float | None = None


class _VersionOnlyFile(msgspec.Struct):
    database: _VersionOnlyDatabase


_index_decoder = msgspec.json.Decoder(_IndexFile)
_version_decoder = msgspec.json.Decoder(_VersionOnlyFile)


class RawIndex(msgspec.Struct, frozen=True):
    """An index after step 1: its Database version and its records, nodes undecoded."""

    url: str
    db_version: int
    records: dict[str, IndexRecord]

    def listed_hashes(self) -> list[str]:
        """Hashes of the records that have a binary in this mirror (``in_buildcache``)."""
        return [h for h, rec in self.records.items() if rec.in_buildcache]


def _db_version_number(version: object, url: str) -> int:
    text = str(version) if version is not None else ""
    number = format_version(text)
    if number is None:
        raise IndexFormatError(url, f"unsupported Database version {short_repr(text)} (cachedex reads versions 6 to 9)")
    if number > max(SUPPORTED_DB_VERSIONS):
        raise IndexFormatError(
            url,
            f"Database version {number} is newer than this cachedex reads (6 to 9); upgrade cachedex",
        )
    if number < min(SUPPORTED_DB_VERSIONS):
        raise IndexFormatError(url, f"Database version {number} is too old (cachedex reads versions 6 to 9)")
    return number


def decode_index(data: bytes | bytearray | memoryview, *, url: str) -> RawIndex:
    """Decode the outer structure of an ``index.json`` (step 1).

    Raises :class:`IndexFormatError` naming ``url`` for invalid JSON, a wrong shape,
    nesting too deep, an unsupported Database version or a malformed hash.
    """
    try:
        parsed, made = counting_decode(_index_decoder, data)
    except RecursionError as exc:  # msgspec's depth limit, even inside Raw values
        raise IndexFormatError(url, "not a valid Spack index: nested too deeply") from exc
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # bytes that are not UTF-8 too
        # A wrong shape may just be an older or newer Database version: say that instead.
        version = _sniff_version(data)
        if version is not None:
            _db_version_number(version, url)
        raise IndexFormatError(url, f"not a valid Spack index: {exc}") from exc
    number = _db_version_number(parsed.database.version, url)
    reject_duplicate_hashes(data, len(parsed.database.installs), made, url)
    _reject_malformed_hashes(parsed.database.installs, url)
    return RawIndex(url=url, db_version=number, records=parsed.database.installs)


def _reject_malformed_hashes(keys: Iterable[str], url: str) -> None:
    """Reject keys of ``installs`` that are not DAG hashes. Every key is checked at once
    (0.02 s against 0.09-0.25 s for a regular expression per key, for 250,000): all 32
    characters long (the longest is 32 and they add up to 32 each) and, joined, nothing
    left once ``[a-z0-9]`` is deleted."""
    keys = list(keys)
    joined = "".join(keys)
    if not keys or (
        len(joined) == 32 * len(keys)
        and max(map(len, keys)) == 32
        and joined.isascii()
        and not joined.encode("ascii").translate(None, _HASH_CHARACTERS)
    ):
        return
    bad = next(key for key in keys if not is_dag_hash(key))
    raise IndexFormatError(url, f"malformed DAG hash {short_repr(bad)} in database.installs (expected 32 of a-z0-9)")


_HASH_CHARACTERS = b"abcdefghijklmnopqrstuvwxyz0123456789"


def reject_duplicate_hashes(
    data: bytes | bytearray | memoryview, keys: int, decoded: int, url: str, where: str = "database.installs"
) -> None:
    """Reject a document whose ``where`` objects hold the same DAG hash twice.

    A repeated JSON key silently decodes to its last value, but the decoder made a record
    for each (``decoded``), so more records than keys tell that a key repeats, whatever
    escapes spell it (``\\u0061`` is also "a"). This costs one append a record; counting
    the bytes ``"spec"`` instead took ~1 s over the bench tag's 966 MB of indexes. Only
    then is the file parsed again, slowly, to name the repeated key.
    """
    if decoded <= keys:
        return
    blob = bytes(data) if isinstance(data, memoryview) else data
    repeated: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> None:
        seen: set[str] = set()
        for key, _value in items:
            if key in seen and is_dag_hash(key):
                repeated.append(key)
            seen.add(key)

    try:
        # Values are not needed: numbers are not converted (a 5,000-digit integer would
        # exceed Python's limit for int()), objects are not built.
        json.loads(blob, object_pairs_hook=pairs, parse_int=len, parse_float=len, parse_constant=len)
    except RecursionError as exc:
        raise IndexFormatError(url, "not a valid Spack index: nested too deeply") from exc
    except ValueError as exc:
        raise IndexFormatError(url, f"not a valid Spack index: {exc}") from exc
    if repeated:
        raise IndexFormatError(
            url,
            f"DAG hash {repeated[0]} appears {repeated.count(repeated[0]) + 1} times in "
            f"{where} ({len(set(repeated))} duplicated hashes in all)",
        )


def _sniff_version(data: bytes | bytearray | memoryview) -> object | None:
    try:
        return _version_decoder.decode(data).database.version
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
