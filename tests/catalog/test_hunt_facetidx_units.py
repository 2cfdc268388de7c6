"""The facet index and its helpers, read directly: aliases, merged compiler counts,
facet terms, a page's boundaries, lookups by id, bit sets and the state cache."""

from __future__ import annotations

from collections import Counter

import pytest

from cachedex.catalog.dependents import Dependents
from cachedex.catalog.facets import (
    COMPILER_COLUMN,
    FacetIndex,
    StateCache,
    compiler_matcher,
    facet_terms,
    one_per_compiler,
)
from cachedex.catalog.terms import lowest_positions
from cachedex.query import parse

#: id, target, os, compiler, platform, in result order: two groups interleaved.
ROWS = [
    (50, "zen4", "ubuntu", "gcc@13", "linux"),
    (10, "x86_64", "rhel8", "llvm@19", "linux"),
    (40, "zen4", "ubuntu", "gcc@13", "linux"),
    (20, "x86_64", "rhel8", "llvm@19", "linux"),
    (30, "zen4", "ubuntu", "gcc@13", "linux"),
]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("clang", "llvm"),
        ("oneapi", "intel-oneapi-compilers"),
        ("rocmcc", "llvm-amdgpu"),
        ("intel", "intel-oneapi-compilers-classic"),
        ("arm", "acfl"),
    ],
)
def test_a_legacy_compiler_name_and_its_package_find_each_other(old: str, new: str) -> None:
    """Every pair of Spack's compiler aliases works both ways, and only with its partner."""
    assert compiler_matcher(parse(f"%{old}"))(f"{new}@1.0")
    assert compiler_matcher(parse(f"%{new}"))(f"{old}@1.0")
    assert not compiler_matcher(parse(f"%{old}"))("gcc@1.0")
    assert not compiler_matcher(parse("%intel"))("intel-oneapi-compilers@1.0")


def test_one_per_compiler_merges_names_without_versions_and_keeps_others_apart() -> None:
    """Bare names merge as versions do; distinct versions and compilers stay apart."""
    merged = one_per_compiler(Counter({"arm": 1, "acfl": 4, "acfl@24": 2, "gcc@13": 3, "gcc@12": 1}))
    assert merged == Counter({"acfl": 5, "acfl@24": 2, "gcc@13": 3, "gcc@12": 1})


def test_facet_terms_name_each_facets_own_column() -> None:
    """target, os, compiler and platform constrain columns 0, 1, 2 and 3; the compiler
    becomes the catalog's compiler strings that satisfy it, listed only when asked."""
    asked: list[int] = []

    def compilers() -> list[str]:
        asked.append(1)
        return ["gcc@12.3.0", "gcc@13.1.0", "clang@17", "gcc"]

    terms = facet_terms(parse("target=zen4 os=rhel8 platform=linux"), compilers)
    assert [(column, values[-1]) for column, values in terms] == [(0, "zen4"), (1, "rhel8"), (3, "linux")]
    assert asked == []
    assert facet_terms(parse("%gcc@:12"), compilers) == [(COMPILER_COLUMN, ("gcc@12.3.0",))]
    assert facet_terms(parse("%llvm"), compilers) == [(2, ("clang@17",))]


@pytest.mark.parametrize(
    ("offset", "limit", "page"),
    [
        (0, 5, [50, 10, 40, 20, 30]),  # result order across groups
        (0, 2, [50, 10]),
        (3, 2, [20, 30]),  # the last page, full
        (4, 5, [30]),  # one left
        (5, 5, []),  # just past the end
        (9, 5, []),
    ],
)
def test_a_page_of_facets_alone_is_the_slice_of_the_result_order(offset: int, limit: int, page: list[int]) -> None:
    """The merged page keeps result order across groups, and its bounds are exact."""
    index = FacetIndex(ROWS)
    assert index.matches([], offset, limit) == (5, page)
    assert index.matches([(2, ("gcc@13",))], offset, limit) == (3, [50, 40, 30][offset : offset + limit])


def test_an_index_read_by_id_places_each_row_and_finds_ids_by_rank() -> None:
    """With ``at``, rows come by id and land at their result position; ids absent from
    the scope (below, between and above its own) are not found."""
    by_id = sorted(ROWS)
    at = [[row[0] for row in ROWS].index(row[0]) for row in by_id]
    index = FacetIndex(by_id, at)
    assert list(index.ids) == [50, 10, 40, 20, 30]
    assert index.matches([(0, ("x86_64",))], 0, 10) == (2, [10, 20])
    assert sorted(index.positions_of([5, 10, 15, 30, 99])) == [1, 4]
    assert index.positions_of([99]) == []
    assert index.id_bits([]) == 0
    assert lowest_positions(index.id_bits([20, 50, 77]), 0, 10) == [0, 3]


def test_bit_sets_of_facets_differ_by_the_values_asked() -> None:
    """Two queries on the same column with other values get their own bit sets."""
    index = FacetIndex(ROWS)
    assert lowest_positions(index.bits([(2, ("gcc@13",))]), 0, 10) == [0, 2, 4]
    assert lowest_positions(index.bits([(2, ("llvm@19",))]), 0, 10) == [1, 3]


def test_value_bits_are_per_column() -> None:
    """Each column's values carry the positions of the specs with them."""
    index = FacetIndex(ROWS)
    assert dict(index.value_bits(1)) == {"ubuntu": 0b10101, "rhel8": 0b01010}
    assert dict(index.value_bits(3)) == {"linux": 0b11111}
    assert dict(index.value_bits(2)) == {"gcc@13": 0b10101, "llvm@19": 0b01010}


def test_dependents_bits_read_a_scope_whose_highest_id_is_no_dependent() -> None:
    """The dependents' positions come out right when the scope holds an id above every
    dependent's; a kept answer is returned for its key, one not kept is not."""
    index = FacetIndex(ROWS)
    found = Dependents((1 << 10) | (1 << 40))
    assert lowest_positions(index.dependents_bits(b"k", found, keep=True), 0, 10) == [1, 2]
    assert index.dependents_bits(b"k", Dependents(1 << 50)) == 0b00110  # (kept)
    assert lowest_positions(index.dependents_bits(b"j", Dependents(1 << 50)), 0, 10) == [0]
    assert index.dependents_bits(b"z", Dependents(0)) == 0


def test_the_state_cache_keeps_one_state_per_catalog() -> None:
    """A value is made once per state; another token forgets the last state's values;
    peek answers only for the current token; forget drops a catalog's values."""
    cache = StateCache()
    made: list[str] = []

    def make(value: str) -> str:
        made.append(value)
        return value

    assert cache.get("c", "s1", ("k",), lambda: make("one")) == "one"
    assert cache.get("c", "s1", ("k",), lambda: make("again")) == "one"
    assert cache.peek("c", "s1", ("k",)) == "one" and cache.peek("c", "s2", ("k",)) is None
    assert cache.get("c", "s2", ("k",), lambda: make("two")) == "two"
    assert cache.get("c", "s2", ("other",), lambda: make("three")) == "three"
    assert cache.peek("c", "s1", ("k",)) is None  # (the old state went)
    assert cache.get("d", "s1", ("k",), lambda: make("four")) == "four"  # (another catalog)
    assert cache.peek("c", "s2", ("k",)) == "two"
    cache.forget("c")
    assert cache.peek("c", "s2", ("k",)) is None and cache.peek("d", "s1", ("k",)) == "four"
    assert made == ["one", "two", "three", "four"]


def test_a_target_range_becomes_every_target_it_names() -> None:
    """``target=x86_64_v3:`` holds zen4 (a descendant), so the facet index finds zen4
    specs, not only those whose target is literally the constraint."""
    (term,) = facet_terms(parse("target=x86_64_v3:"), list)
    assert term[0] == 0 and {"x86_64_v3", "zen4"} <= set(term[1])
    assert FacetIndex(ROWS).matches([term], 0, 10) == (3, [50, 40, 30])
