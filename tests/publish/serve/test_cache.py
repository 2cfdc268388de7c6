"""The server's answer cache: least recently used goes first; a gzip file is not gzipped again."""

from __future__ import annotations

import gzip
import os

from cachedex.publish.serve.cache import GZIP, GZIP_MIN, ResponseCache, cached
from cachedex.publish.serve.refusals import JSON


def test_the_answer_used_least_recently_is_the_one_let_go() -> None:
    answers = {name: cached(name.encode() * 10, JSON, 200, f'"{name}"') for name in "abcde"}
    cache = ResponseCache(max_bytes=4 * answers["a"].weight)  # (room for four)
    for name in "abcd":
        cache.put("s", (name,), answers[name])
    assert cache.get(("a",)) is answers["a"]  # (used since b, c and d came)
    cache.put("s", ("e",), answers["e"])
    assert [name for name in "abcde" if cache.get((name,)) is not None] == ["a", "c", "d", "e"]


def test_a_gzip_file_is_not_gzipped_again() -> None:
    body = gzip.compress(os.urandom(GZIP_MIN * 2))
    assert cached(body, GZIP, 200, '"z"').gzipped is None
    assert cached(b"x" * GZIP_MIN, JSON, 200, '"j"').gzipped is not None
