"""What a tag page's data says under a name filter and facet filters, and what a name or
hash resolves to, on small real catalogs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.errors import UnknownSpec
from cachedex.publish.pages import full_hash, resolve, tag_page
from tests.helpers import record, write_tag


def _catalog(path: Path) -> Catalog:
    catalog = Catalog(path)
    write_tag(
        catalog,
        "t",
        [
            record("a" * 32, "zlib", target="x86_64_v3", os="ubuntu24.04"),
            record("b" * 32, "zlib", target="aarch64", os="ubuntu24.04"),
            record("c" * 32, "bzip2", target="aarch64", os="rocky9"),
            record("d" * 32, "bzip2", target="x86_64_v3", os="ubuntu24.04"),
            record("e" * 32, "xz", target="x86_64_v3", os="rocky9"),
        ],
    )
    return catalog


def test_the_name_filter_ignores_case(tmp_path: Path) -> None:
    """A name typed in capitals finds the package, and the page says the filter in lower case."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = tag_page(catalog, "t", text=" ZLib ")
    assert [row.name for row in page.packages] == ["zlib"]
    assert page.text == "zlib"


def test_under_a_name_filter_every_facet_value_of_the_tag_stays_a_choice_at_zero(tmp_path: Path) -> None:
    """A value only other packages have is shown at 0 (disabled), not dropped: the filter can still be changed."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = tag_page(catalog, "t", text="zlib")
    assert page.facets["os"] == {"rocky9": 0, "ubuntu24.04": 1}
    assert page.facets["target"] == {"aarch64": 1, "x86_64_v3": 1}


def test_an_empty_page_under_a_name_filter_counts_what_the_other_filters_find(tmp_path: Path) -> None:
    """The way on from an empty page: the packages the facet filters find without the name."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        empty = tag_page(catalog, "t", {"os": "rocky9"}, text="zlib")
        found = tag_page(catalog, "t", {"os": "rocky9"}, text="bz")
    assert empty.packages == () and empty.without_text == 2  # bzip2 and xz run rocky9
    assert [row.name for row in found.packages] == ["bzip2"] and found.without_text == 0


def test_a_filter_on_a_value_the_tag_lacks_matches_no_package(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = tag_page(catalog, "t", {"os": "centos7"})
    assert page.packages == ()
    assert page.relax == {"os": 3}


def test_a_row_counts_only_the_specs_that_match_and_the_relax_counts_each_filter_dropped(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = tag_page(catalog, "t", {"os": "ubuntu24.04", "target": "aarch64"})
    assert [(row.name, row.specs, row.targets, row.oses) for row in page.packages] == [
        ("zlib", 1, ("aarch64",), ("ubuntu24.04",))
    ]
    # without the os filter: zlib and bzip2 have aarch64; without the target filter: zlib and bzip2 have ubuntu
    assert page.relax == {"os": 2, "target": 2}
    assert page.facets["target"] == {"aarch64": 1, "x86_64_v3": 2}
    assert page.facets["os"] == {"rocky9": 1, "ubuntu24.04": 1}


def test_a_hash_prefix_two_specs_share_is_ambiguous_not_the_first(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("ab" + "1" * 30), record("ab" + "2" * 30, name="bzip2")])
        with pytest.raises(UnknownSpec, match="ambiguous"):
            full_hash(catalog, "ab")
        with pytest.raises(UnknownSpec, match="ambiguous"):
            resolve(catalog, "/ab")
        assert full_hash(catalog, "ab1") == "ab" + "1" * 30


def test_a_word_that_names_a_package_and_starts_a_hash_is_the_package(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("beef" + "0" * 28, name="bee")])
        assert resolve(catalog, "bee") == "bee"
        spec = resolve(catalog, "/bee")
    assert not isinstance(spec, str) and spec.hash == "beef" + "0" * 28


def test_a_row_lists_its_versions_newest_first_in_spack_order(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(f"{n:032x}", version=v) for n, v in enumerate(["1.9", "1.10", "1.2"])])
        (row,) = tag_page(catalog, "t").packages
    assert row.versions == ("1.10", "1.9", "1.2")


def test_a_row_whose_sizes_are_unknown_has_an_unknown_size(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32), record("b" * 32, "xz"), record("c" * 32, "xz")], sizes={"b" * 32: 5})
        rows = {row.name: row for row in tag_page(catalog, "t").packages}
    assert (rows["zlib"].size, rows["zlib"].sized) == (None, 0)
    assert (rows["xz"].size, rows["xz"].sized) == (5, 1)


def test_runs_on_counts_each_package_once_per_machine(tmp_path: Path) -> None:
    """zlib and bzip2 (x86_64_v3 and aarch64) and xz (x86_64_v3): three packages a zen3 runs, two an a64fx."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = tag_page(catalog, "t")
    assert (page.facets["runs_on"]["zen3"], page.facets["runs_on"]["a64fx"]) == (3, 2)


def test_a_package_whose_name_cannot_be_a_folder_has_a_row_but_no_page_to_link(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, "a/b"), record("b" * 32)])
        rows = {row.name: row.has_page for row in tag_page(catalog, "t").packages}
    assert rows == {"a/b": False, "zlib": True}


def test_the_name_filter_finds_a_name_with_capitals(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, "PyQt"), record("b" * 32)])
        page = tag_page(catalog, "t", text="pyqt")
    assert [row.name for row in page.packages] == ["PyQt"]


def test_compilers_are_ordered_by_name_then_version_in_spack_order(tmp_path: Path) -> None:
    """gcc@13 after gcc@7 (not before, as text), and clang before gcc."""
    compilers = ["gcc@13.2.0", "gcc@7.5.0", "clang@18.1.0", "gcc@9.4.0"]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(f"{n:032x}", compiler=c) for n, c in enumerate(compilers)])
        page = tag_page(catalog, "t")
    assert list(page.facets["compiler"]) == ["clang@18.1.0", "gcc@7.5.0", "gcc@9.4.0", "gcc@13.2.0"]
    assert page.packages[0].compilers == ("clang@18.1.0", "gcc@7.5.0", "gcc@9.4.0", "gcc@13.2.0")
