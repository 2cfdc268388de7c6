"""Mutation hunt: what a package page shows that no other test pinned down (ordering,
filters given empty, shared variants, sizes of 0, recipe links, install preamble, errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.errors import UnknownPackage, UnknownTag
from cachedex.publish.package_pages import (
    differing_variants,
    install_preamble,
    package_page,
    package_pages,
    recipe_url,
)
from tests.helpers import record, write_tag

A, B, C, D = "a" * 32, "b" * 32, "c" * 32, "d" * 32
SHARED = ("+a1", "+b2", "+c3", "+d4", "+e5", "+f6", "+g7", "+h8")


def _catalog(path: Path) -> Catalog:
    catalog = Catalog(path)
    specs = [
        record(A, version="1.0-RC1", variants=(*SHARED, "+pic", "~mpi")),
        record(B, version="1.1", variants=(*SHARED, "~pic", "+mpi"), target="aarch64"),
        record(C, version="1.2", variants=(*SHARED, "~pic", "~mpi"), target="zen2"),
        record(D, version="1.3", variants=(*SHARED, "~pic", "~mpi"), target="x86_64"),
    ]
    write_tag(catalog, "t", specs, sizes={A: 0, B: 5})
    return catalog


def test_the_recipe_link_names_the_package_and_escapes_a_slash() -> None:
    """The recipe link is packages.spack.io's ``name=`` parameter, with every reserved character quoted."""
    assert recipe_url("zlib") == "https://packages.spack.io/package.html?name=zlib"
    assert recipe_url("a/b&c") == "https://packages.spack.io/package.html?name=a%2Fb%26c"


def test_shared_variants_differing_variants_machines_and_runs_on_are_sorted(tmp_path: Path) -> None:
    """Lists a page shows (shared and differing variants, machines, runs_on's targets) come sorted."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib")
    assert page.shared == list(SHARED)
    assert page.differing == ("mpi", "pic")
    assert page.machines == sorted(page.machines) and len(page.machines) > 3
    assert list(page.runs_on) == ["aarch64", "x86_64", "x86_64_v3", "zen2"]


def test_differing_variants_of_no_specs_is_empty() -> None:
    """No specs: no variant differs (and no error)."""
    assert differing_variants([]) == ()


def test_a_size_of_zero_is_a_known_size(tmp_path: Path) -> None:
    """A spec of 0 bytes counts as sized: its 0 is a known size, not an unknown one."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A)], sizes={A: 0})
        page = package_page(catalog, "t", "zlib")
    assert (page.size, page.sized) == (0, 1)


def test_an_empty_filter_value_is_no_filter(tmp_path: Path) -> None:
    """A filter given as "" (an empty form field) is not applied nor echoed back."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", {"os": "", "variant": ""})
    assert page.filters == {}
    assert page.matches == (True, True, True, True)


def test_a_differing_variant_filter_matches_only_the_specs_holding_it(tmp_path: Path) -> None:
    """``+mpi`` (held by one spec) matches that spec only: it is not added to every spec as a shared one is."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", {"variant": "+mpi"})
    assert [s.hash for s, match in zip(page.specs, page.matches, strict=True) if match] == [B]


def test_the_version_box_ignores_case(tmp_path: Path) -> None:
    """Typed in capitals, the Version box still finds ``1.0-RC1`` (the script lowers both sides)."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", text="RC1")
    assert [s.hash for s, match in zip(page.specs, page.matches, strict=True) if match] == [A]
    assert page.without_text == 0


def test_without_text_is_zero_when_no_version_text_was_typed(tmp_path: Path) -> None:
    """Nothing found under a Runs on filter alone: ``without_text`` (the Version box's hint) stays 0."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", {"runs_on": "no-such-machine"})
    assert not any(page.matches)
    assert page.without_text == 0


def test_a_tag_without_a_root_mirror_has_no_install_preamble(tmp_path: Path) -> None:
    """A tag whose only mirror is a stack's has no root mirror to add: the preamble is "" (no crash)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A)], stack="cuda")
        assert install_preamble(catalog, "t") == ""


def test_an_unknown_tag_is_unknown_tag_not_unknown_package(tmp_path: Path) -> None:
    """Asked for a tag the catalog lacks, the error names the tag, not the package."""
    with _catalog(tmp_path / "c.sqlite") as catalog, pytest.raises(UnknownTag):
        package_page(catalog, "nope", "zlib")


def test_a_package_not_in_the_tag_names_the_tags_that_list_it(tmp_path: Path) -> None:
    """A package the tag lacks raises UnknownPackage naming the other tags where it is."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "u", [record("e" * 32, name="bzip2")])
        with pytest.raises(UnknownPackage) as raised:
            package_page(catalog, "u", "zlib")
    assert raised.value.package == "zlib" and "t (4 specs)" in str(raised.value)


def test_package_pages_uses_the_package_tags_it_is_given(tmp_path: Path) -> None:
    """``package_tags`` given by the caller is what the pages name as other tags (no query of its own)."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        pages = list(package_pages(catalog, "t", package_tags={"zlib": [("t", 4), ("elsewhere", 7)]}))
    assert [page.other_tags for page in pages] == [(("elsewhere", 7),)]
