"""The server's answer cache: least recently used goes first; a gzip file is not gzipped again."""

from __future__ import annotations

import gzip
import os

from cachedex.publish.serve.cache import GZIP, GZIP_MIN, Cached, ResponseCache, cached
from cachedex.publish.serve.refusals import JSON


def _weight(answer: Cached, key: tuple[str, ...]) -> int:
    """What an entry counts: its answer's bytes and its key's text."""
    return answer.weight + len(repr(key))


def test_the_answer_used_least_recently_is_the_one_let_go() -> None:
    answers = {name: cached(name.encode() * 10, JSON, 200, f'"{name}"') for name in "abcde"}
    cache = ResponseCache(max_bytes=4 * _weight(answers["a"], ("a",)))  # (room for four)
    for name in "abcd":
        cache.put("s", (name,), answers[name])
    assert cache.get(("a",)) is answers["a"]  # (used since b, c and d came)
    cache.put("s", ("e",), answers["e"])
    assert [name for name in "abcde" if cache.get((name,)) is not None] == ["a", "c", "d", "e"]


def test_a_gzip_file_is_not_gzipped_again() -> None:
    body = gzip.compress(os.urandom(GZIP_MIN * 2))
    assert cached(body, GZIP, 200, '"z"').gzipped is None
    assert cached(b"x" * GZIP_MIN, JSON, 200, '"j"').gzipped is not None


def test_an_answer_stored_again_is_counted_once() -> None:
    answer = cached(b"x" * 100, JSON, 200, '"x"')
    cache = ResponseCache(max_bytes=4 * answer.weight)
    for _ in range(10):  # (a sync committed while it was built: stored again under its key)
        cache.put("s", ("x",), answer)
    assert (len(cache), cache.size) == (1, _weight(answer, ("x",)))


def test_a_new_catalog_state_lets_every_answer_of_the_last_go() -> None:
    answer = cached(b"x" * 100, JSON, 200, '"x"')
    cache = ResponseCache(max_bytes=4 * answer.weight)
    cache.put("old", ("a",), answer)
    cache.put("new", ("b",), answer)
    assert (cache.get(("a",)), len(cache), cache.size) == (None, 1, _weight(answer, ("b",)))


def test_an_answer_over_a_quarter_of_the_bound_even_gzipped_is_not_kept() -> None:
    body = gzip.compress(os.urandom(2_000))  # (a gzip file: kept as it is)
    answer = cached(body, GZIP, 200, '"z"')
    cache = ResponseCache(max_bytes=4 * answer.weight - 4)
    cache.put("s", ("z",), answer)
    assert (len(cache), cache.size) == (0, 0)
    cache = ResponseCache(max_bytes=4 * answer.weight)
    cache.put("s", ("z",), answer)
    assert len(cache) == 1
