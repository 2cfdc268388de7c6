"""Bit sets of positions (``catalog/terms.py``) against plain sets of positions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cachedex.catalog.facets import FacetIndex
from cachedex.catalog.terms import RankColumn, TermIndex, bits_of, lowest_positions
from cachedex.query import parse

# Sizes on both sides of lowest_positions' 4096-bit chunks.
_positions = st.integers(min_value=0, max_value=9000).flatmap(
    lambda size: st.tuples(
        st.just(size), st.sets(st.integers(0, max(0, size - 1)), max_size=300) if size else st.just(set())
    )
)


@settings(max_examples=150)
@given(_positions, st.integers(0, 400), st.integers(1, 120))
def test_a_page_of_a_bit_set_is_the_same_slice_of_its_sorted_positions(
    case: tuple[int, set[int]], offset: int, limit: int
) -> None:
    size, positions = case
    bits = bits_of(positions, size)
    assert bits.bit_count() == len(positions)
    assert lowest_positions(bits, offset, limit) == sorted(positions)[offset : offset + limit]


def test_a_page_starting_inside_a_later_chunk() -> None:
    """Whole chunks before the page are counted, not read; the page begins mid-chunk."""
    positions = [*range(0, 8192, 2), 8200, 8201, 12000]
    bits = bits_of(positions, 12001)
    assert lowest_positions(bits, 4095, 5) == [8190, 8200, 8201, 12000]
    assert lowest_positions(bits, 4100, 5) == []


@settings(max_examples=60)
@given(
    st.lists(st.integers(0, 700), max_size=2000),
    st.sets(st.integers(0, 700), max_size=400),
)
def test_a_rank_column_finds_the_positions_whose_rank_is_wanted(ranks: list[int], wanted: set[int]) -> None:
    """Up to 701 ranks: three blocks of 256, each read by one translate."""
    column = RankColumn(ranks)
    expected = {position for position, rank in enumerate(ranks) if rank in wanted}
    assert column.bits(wanted) == bits_of(expected, len(ranks))


def test_a_whole_block_of_ranks_is_its_block_bit_set() -> None:
    ranks = [i % 600 for i in range(3000)]
    column = RankColumn(ranks)
    wanted = set(range(256, 512))
    assert column.bits(wanted) == bits_of((p for p, r in enumerate(ranks) if r in wanted), 3000)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("+mpi", [0, 2]),
        ("~mpi", [1]),
        ("@2:", [2, 3]),
        ("@:1 +mpi", [0]),
        ("cuda_arch=80", [2, 3]),
        ("cuda_arch=80,90", [3]),
        ("+nope", []),
    ],
)
def test_a_term_index_answers_versions_and_variants(text: str, expected: list[int]) -> None:
    index = TermIndex(
        [
            ("1.0", '["+mpi"]'),
            ("1.2", '["~mpi"]'),
            ("2.0", '["+mpi", "cuda_arch=80"]'),
            ("3.1", '["cuda_arch:=80,90"]'),
        ]
    )
    found = index.bits(parse(text))
    assert lowest_positions(found, 0, 10) == expected
    assert index.bits(parse(text)) == found  # the remembered answer is the same


def test_a_stacks_index_is_its_tags_kept_to_its_members() -> None:
    tag = FacetIndex(
        [
            (10, "zen4", "ubuntu", "gcc", "linux"),
            (4, "x86_64", "rhel8", "gcc", "linux"),
            (7, "zen4", "ubuntu", "gcc", "linux"),
        ]
        + [(30, "x86_64", "rhel8", "llvm", "linux"), (2, "zen4", "ubuntu", "gcc", "linux")]
    )
    stack, positions = tag.select({4, 30, 99})
    assert positions == [1, 3] and list(stack.ids) == [4, 30]
    assert stack.groups == [("x86_64", "rhel8", "gcc", "linux"), ("x86_64", "rhel8", "llvm", "linux")]
    assert stack.matches([(2, ("llvm",))], 0, 10) == (1, [30])


def test_the_bits_cache_is_bounded_in_bytes_and_drops_the_least_recently_used() -> None:
    from cachedex.catalog.terms import _KEY_OVERHEAD, BitsCache

    each = 1000 + len(repr("a")) + _KEY_OVERHEAD  # (a bit set's bytes, and its key's)
    cache = BitsCache(max_bytes=3 * each)
    made: list[str] = []

    def make(key: str) -> int:
        made.append(key)
        return 1 << (8 * 1000 - 1)  # 1,000 bytes

    for key in "abc":
        cache.get(key, lambda k=key: make(k))  # type: ignore[misc]
    cache.get("a", lambda: make("a"))  # kept: not made again, and now the most recent
    cache.get("d", lambda: make("d"))  # 4,000 bytes: the least recent ("b") goes
    assert made == ["a", "b", "c", "d"] and len(cache) == 3 and cache.bytes == 3 * each
    cache.get("b", lambda: make("b"))
    assert made[-1] == "b"
    cache.get("a", lambda: make("a"))
    assert made[-1] == "b", "a was used more lately than c"
    # However many distinct queries come, the bytes stay within the bound.
    for n in range(100):
        cache.get(n, lambda n=n: make(str(n)))  # type: ignore[misc]
    assert cache.bytes <= 3 * each and len(cache) == 3


def test_the_bits_cache_counts_keys_of_sets_that_match_nothing() -> None:
    """A search naming a value that matches nothing makes an empty bit set (0 bytes):
    its key, which holds what the client named, is counted, so however many such
    searches come, the cache holds a bounded number of them (it kept every one)."""
    from cachedex.catalog.terms import BitsCache

    cache = BitsCache(max_bytes=10_000)
    for n in range(1_000):
        cache.get((7, "variant", (f"nothing-{n}", "x" * 100), False), lambda: 0)
    assert 0 < cache.bytes <= 10_000 and 20 < len(cache) < 100
