"""The response cache's bound counts every byte an answer holds (the gzipped copy, and
something for an empty body); where a heavy answer keeps only its gzipped copy; and
(a defect) the keys, which hold what clients send."""

from __future__ import annotations

import os

import msgspec

from cachedex.catalog import Catalog
from cachedex.publish.serve import create_app
from cachedex.publish.serve.cache import ResponseCache, cached
from cachedex.publish.serve.refusals import JSON
from tests.publish.serve import get


def test_the_bound_counts_the_gzipped_copies_too() -> None:
    """What the kept answers hold, bodies and gzipped copies, never exceeds the bound."""
    answers = [cached(os.urandom(1500), JSON, 200, f'"{n}"') for n in range(20)]
    assert all(answer.gzipped is not None for answer in answers)
    cache = ResponseCache(max_bytes=20_000)
    for n, answer in enumerate(answers):
        cache.put("s", (n,), answer)
    kept = [hit for n in range(20) if (hit := cache.get((n,))) is not None]
    assert kept and sum(len(hit.body) + len(hit.gzipped or b"") for hit in kept) <= cache.max_bytes


def test_answers_with_empty_bodies_are_bounded_in_number() -> None:
    """An entry holds its key and slot even with no body: a client asking for many
    empty answers cannot make the cache keep them without bound."""
    cache = ResponseCache(max_bytes=10_000)
    for n in range(1000):
        cache.put("s", (n,), cached(b"", JSON, 200, '"e"'))
    assert len(cache) <= cache.max_bytes // 100


def test_an_answer_weighing_a_quarter_of_the_bound_exactly_is_kept_whole() -> None:
    """Only an answer heavier than a quarter of the bound is cut to its gzipped copy."""
    answer = cached(b"x" * 2000, JSON, 200, '"w"')
    assert answer.gzipped is not None
    cache = ResponseCache(max_bytes=4 * answer.weight)
    cache.put("s", ("w",), answer)
    kept = cache.get(("w",))
    assert kept is not None and (kept.body, kept.gzipped_only) == (answer.body, False)


def test_an_answer_over_a_quarter_is_kept_gzipped_though_it_would_fit_half() -> None:
    """Over a quarter of the bound, an answer keeps its gzipped copy alone, if that fits
    a quarter, whatever its full weight (which here is under half the bound)."""
    answer = cached(os.urandom(1000), JSON, 200, '"h"')  # (gzip gains nothing: both ~1 kB)
    alone = msgspec.structs.replace(answer, body=b"", gzipped_only=True).weight
    cache = ResponseCache(max_bytes=4 * alone)
    assert cache.max_bytes // 4 < answer.weight <= cache.max_bytes // 2
    cache.put("s", ("h",), answer)
    kept = cache.get(("h",))
    assert kept is not None and kept.gzipped_only and kept.plain() == answer.body


def test_the_bound_counts_the_keys_clients_choose(small_catalog: Catalog) -> None:
    """Keys hold what a client sends (a filter's value, any length the server takes):
    the bytes kept, keys included, stay within the bound whatever the parameters (a key
    was counted as 512 bytes: 20 answers to a 6 kB ``os=`` held 93,604 bytes of 16 KiB)."""
    app = create_app(small_catalog.path)
    cache = app.state.cachedex.cache
    cache.max_bytes = 16 * 1024
    for n in range(20):
        assert get(app, f"/api/tags/t/packages?os={n:04d}{'o' * 6000}").status_code == 200
    entries = list(cache._entries.items())
    held = sum(len(repr(key)) + len(hit.body) + len(hit.gzipped or b"") for key, (hit, _weight) in entries)
    assert 0 < held <= cache.max_bytes
