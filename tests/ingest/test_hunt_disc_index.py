"""index.json: a repeated DAG hash is named even where other keys repeat or nodes nest
deeply, and an index of the wrong shape says when its Database version is the cause."""

from __future__ import annotations

import sys

import pytest

from cachedex.errors import IndexFormatError
from cachedex.ingest.index import decode_index

HASH_A, HASH_B = "a" * 32, "b" * 32
URL = "file:///mirror/build_cache/index.json"


def _record(node: str) -> str:
    return f'{{"spec": {node}, "in_buildcache": true}}'


def _index(*records: tuple[str, str], version: str = "8") -> bytes:
    installs = ", ".join(f'"{key}": {_record(node)}' for key, node in records)
    return f'{{"database": {{"version": "{version}", "installs": {{{installs}}}}}}}'.encode()


def test_a_repeated_hash_is_named_not_a_repeated_key_inside_a_node() -> None:
    # The node's own repeated "name" comes first in the file; the message names the hash.
    data = _index((HASH_B, '{"name": "zlib", "name": "zlib"}'), (HASH_A, "{}"), (HASH_A, "{}"))
    with pytest.raises(IndexFormatError, match=f"DAG hash {HASH_A} appears 2 times in database.installs"):
        decode_index(data, url=URL)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deepest_node_read() -> int:
    """The deepest node ``decode_index`` reads (both its parses stop at Python's
    recursion limit, so this depends on the stack of the caller)."""
    low, high = 1, sys.getrecursionlimit()
    while low < high:
        middle = (low + high + 1) // 2
        try:
            decode_index(_index((HASH_A, _nested(middle))), url=URL)
            low = middle
        except IndexFormatError:
            high = middle - 1
    return low


def test_a_repeated_hash_beside_the_deepest_node_read_is_an_index_error_not_a_crash() -> None:
    # The second parse, which names the repeated hash, is Python's json: a few frames
    # deeper than msgspec's, it runs out of recursion at a node msgspec read.
    data = _index((HASH_B, _nested(_deepest_node_read())), (HASH_A, "{}"), (HASH_A, "{}"))
    with pytest.raises(IndexFormatError) as caught:
        decode_index(data, url=URL)
    assert caught.value.url == URL
    assert "nested too deeply" in str(caught.value) or f"DAG hash {HASH_A} appears 2 times" in str(caught.value)


def test_an_old_index_of_another_shape_is_said_to_be_too_old() -> None:
    # (installs a list: a shape no supported version has; the version is the cause to tell)
    data = b'{"database": {"version": "5", "installs": []}}'
    with pytest.raises(IndexFormatError, match="Database version 5 is too old"):
        decode_index(data, url=URL)


def test_an_index_without_a_version_says_so_without_a_python_none() -> None:
    with pytest.raises(IndexFormatError, match="unsupported Database version") as caught:
        decode_index(b'{"database": {"installs": {}}}', url=URL)
    assert "None" not in str(caught.value)


def test_a_repeated_hash_in_an_index_given_as_a_memoryview_is_named() -> None:
    # (a caller may hand the index's bytes as a view, without a copy)
    data = _index((HASH_A, "{}"), (HASH_A, "{}"))
    with pytest.raises(IndexFormatError, match=f"DAG hash {HASH_A} appears 2 times"):
        decode_index(memoryview(data), url=URL)


def test_a_repeated_hash_beside_an_integer_too_long_for_python_is_named() -> None:
    # Python refuses to convert an integer of more digits than sys.int_info allows.
    digits = "9" * (sys.int_info.default_max_str_digits + 1)
    data = _index((HASH_B, f'{{"n": {digits}}}'), (HASH_A, "{}"), (HASH_A, "{}"))
    with pytest.raises(IndexFormatError, match=f"DAG hash {HASH_A} appears 2 times"):
        decode_index(data, url=URL)


def test_an_index_of_the_wrong_shape_holding_deep_nesting_is_an_index_error() -> None:
    # The wrong shape sends it to the sniffing of its version, which meets the nesting.
    deep = _nested(sys.getrecursionlimit() * 2)
    data = f'{{"database": {{"installs": [], "version": "8", "x": {deep}}}}}'.encode()
    with pytest.raises(IndexFormatError, match="not a valid Spack index"):
        decode_index(data, url=URL)
