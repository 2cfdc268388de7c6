"""The order of a hint's variant strings: each string's first spec in result order,
whether the scope's term index keeps the string as a bit set (a string at least 1 spec
in 8 of the scope has) or as a list of positions (a rarer one)."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.query import parse
from tests.helpers import record, write_tag


def _hint(tmp_path: Path, specs: list, fillers: int) -> str:  # type: ignore[type-arg]
    """The hint of ``mpi=x os=rhel8`` (no spec has mpi=x) in a tag of ``specs`` (on
    rhel8) and ``fillers`` specs on ubuntu without an mpi variant; ``mpi=x`` dropped,
    the hint counts the mpi strings of the specs on rhel8, ties in result order."""
    filler = [record(f"{n:032x}", f"z{n}") for n in range(fillers)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [*specs, *filler])
        page = catalog.search(parse("mpi=x os=rhel8"), tag="t", hints=True)
    assert page.total == 0
    return page.hints[0]


def test_a_common_string_found_first_is_listed_before_a_rare_one_as_often(tmp_path: Path) -> None:
    """~mpi: 2 specs of 16 (common: a bit set), a first; +mpi: 1 spec (rare), b second.
    In rhel8 each has 1 spec: the tie goes to the one found first, ~mpi, though '+'
    sorts before '~'."""
    specs = [
        record("a" * 32, "a", os="rhel8", variants=("~mpi",)),
        record("b" * 32, "b", os="rhel8", variants=("+mpi",)),
        record("c" * 32, "c", variants=("~mpi",)),
    ]
    hint = _hint(tmp_path, specs, fillers=13)
    assert hint.endswith("2 specs in t match: ~mpi (1 spec), +mpi (1 spec)"), hint


def test_rare_strings_are_ordered_by_their_first_spec_in_result_order_not_by_id(tmp_path: Path) -> None:
    """+mpi and ~mpi, 2 specs each of 17 (both rare). In result order (by name) a: +mpi,
    b: ~mpi, m: ~mpi, n: +mpi, so +mpi comes first; written n, m, b, a, the lowest id of
    each string is its spec of n and m, and the last of each in result order is n's and m's."""
    specs = [
        record("n" * 32, "n", os="rhel8", variants=("+mpi",)),
        record("m" * 32, "m", os="rhel8", variants=("~mpi",)),
        record("b" * 32, "b", os="rhel8", variants=("~mpi",)),
        record("a" * 32, "a", os="rhel8", variants=("+mpi",)),
    ]
    hint = _hint(tmp_path, specs, fillers=13)
    assert hint.endswith("4 specs in t match: +mpi (2 specs), ~mpi (2 specs)"), hint


def test_the_newest_bit_set_is_kept_even_when_it_alone_is_over_the_bound() -> None:
    """A bit set bigger than the whole bound pushes out every older one but stays: the
    search that made it (a ``^dep`` walk) is answered from it when asked again."""
    from cachedex.catalog.terms import BitsCache

    cache = BitsCache(max_bytes=100)
    made: list[str] = []
    big = 1 << (8 * 1000 - 1)  # 1,000 bytes
    cache.get("old", lambda: made.append("old") or 1)  # type: ignore[func-returns-value]
    cache.get("walk", lambda: made.append("walk") or big)  # type: ignore[func-returns-value]
    assert "old" not in cache and "walk" in cache and len(cache) == 1 and 1000 < cache.bytes < 1200
    assert cache.get("walk", lambda: made.append("again") or big) == big  # type: ignore[func-returns-value]
    assert made == ["old", "walk"]


def test_an_exact_version_among_three_hundred_finds_that_one_alone(tmp_path: Path) -> None:
    """300 distinct versions in a tag: their ranks fill two blocks of 256, so rank r and
    r + 256 share their low byte; @=1.0.5 must find only the spec of 1.0.5, not the spec
    whose rank is 256 away."""
    specs = [record(f"{n:032x}", "p", version=f"1.0.{n}") for n in range(300)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        for version in ("1.0.5", "1.0.44", "1.0.290"):
            page = catalog.search(parse(f"@={version}"), tag="t")
            assert [(s.name, s.version) for s in page.specs] == [("p", version)]


def test_an_exact_multi_valued_variant_finds_only_specs_with_exactly_those_values(tmp_path: Path) -> None:
    """cuda_arch=80 asks for 80 among the values; cuda_arch:=80 for 80 and nothing else."""
    specs = [
        record("a" * 32, "a", variants=("cuda_arch:=80",)),
        record("b" * 32, "b", variants=("cuda_arch:=80,90",)),
        record("c" * 32, "c", variants=("cuda_arch:=90",)),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)

        def names(text: str) -> list[str]:
            return [s.name for s in catalog.search(parse(text), tag="t").specs]

        assert names("cuda_arch=80") == ["a", "b"]
        assert names("cuda_arch:=80") == ["a"]
        assert names("cuda_arch:=80,90") == ["b"]
