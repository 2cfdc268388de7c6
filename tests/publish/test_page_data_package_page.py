"""What a package page's data says: its specs' order, filters, counts, sizes, other tags
and install commands, built one at a time or for a whole tag, on small real catalogs."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.package_pages import package_page, package_pages
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import record, replace_mirror, write_tag

A, B, C, D = "a" * 32, "b" * 32, "c" * 32, "d" * 32


def _catalog(path: Path) -> Catalog:
    catalog = Catalog(path)
    specs = [
        record(D, version="1.9", variants=("+shared", "~pic"), os="rocky9"),
        record(B, version="1.10", variants=("+shared", "+pic"), target="aarch64"),
        record(A, version="1.10", variants=("+shared", "~pic")),
        record(C, version="1.2", variants=("+shared", "~pic")),
    ]
    write_tag(catalog, "t", specs, sizes={A: 100, B: 20})
    return catalog


def test_specs_are_newest_version_first_in_spack_order_and_a_versions_builds_by_hash(tmp_path: Path) -> None:
    """1.10 is newer than 1.9 (not as text), and its two builds are listed by hash, as searches list them."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib")
    assert [(s.version, s.hash) for s in page.specs] == [("1.10", A), ("1.10", B), ("1.9", D), ("1.2", C)]


def test_only_variants_that_differ_are_choices_and_a_shared_one_matches_every_spec(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib")
        shared = package_page(catalog, "t", "zlib", {"variant": "+shared"})
    assert page.differing == ("pic",)
    assert page.facets["variant"] == {"+pic": 1, "~pic": 3}
    assert shared.matches == (True, True, True, True)


def test_a_version_filter_applies_to_the_counts_and_keeps_other_values_at_zero(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", text=" 1.1 ")
    assert page.text == "1.1" and page.matches == (True, True, False, False)
    assert page.facets["os"] == {"rocky9": 0, "ubuntu24.04": 2}
    assert page.facets["target"] == {"aarch64": 1, "x86_64_v3": 1}
    assert page.without_text == 0


def test_an_empty_page_under_a_version_filter_counts_what_the_facet_filters_find(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", {"os": "ubuntu24.04"}, text="2.0")
    assert not any(page.matches)
    assert page.without_text == 3


def test_relax_counts_the_specs_each_filter_alone_dropped_would_match(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", {"os": "rocky9", "target": "aarch64"})
    assert not any(page.matches)
    assert page.relax == {"os": 1, "target": 1}  # B without os, D without target
    assert page.facets["os"] == {"rocky9": 0, "ubuntu24.04": 1}
    assert page.facets["target"] == {"aarch64": 0, "x86_64_v3": 1}


def test_a_package_whose_sizes_are_unknown_has_an_unknown_size(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "u", [record("e" * 32, name="xz")])
        known = package_page(catalog, "t", "zlib")
        unknown = package_page(catalog, "u", "xz")
    assert (known.size, known.sized) == (120, 2)
    assert (unknown.size, unknown.sized) == (None, 0)


def test_other_tags_name_the_tags_besides_this_one(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "u", [record("e" * 32)])
        page = package_page(catalog, "t", "zlib")
        (whole,) = [p for p in package_pages(catalog, "u") if p.name == "zlib"]
    assert page.other_tags == (("u", 1),)
    assert whole.other_tags == (("t", 4),)


def test_the_install_steps_of_a_mirror_known_not_to_sign_add_it_unsigned_without_keys(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "signed", [record(A)])
        with catalog.writing_tag("plain") as writer:
            writer.add_specs([record(B)], {})
            replace_mirror(writer, "root", {B: True}, url="https://m.example/plain", signed=False)
        signed = package_page(catalog, "signed", "zlib").install
        plain = package_page(catalog, "plain", "zlib").install
    assert "--unsigned" not in signed and "keys --install --trust" in signed
    assert plain == "spack mirror add --unsigned plain https://m.example/plain"


def test_a_whole_tags_pages_list_each_specs_stacks_root_first_as_one_page_does(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record(A), record(B, name="xz")], {})
            replace_mirror(writer, "zz", {A: True}, checksum="zz")
            replace_mirror(writer, "root", {A: True, B: True}, checksum="root")
            replace_mirror(writer, "aa", {A: True}, checksum="aa")
        one = package_page(catalog, "t", "zlib")
        (whole,) = [p for p in package_pages(catalog, "t") if p.name == "zlib"]
    assert whole.specs[0].stacks == ("root", "aa", "zz")
    assert whole == one


def test_a_tag_split_in_shares_gives_each_package_page_exactly_once(tmp_path: Path) -> None:
    """A parallel site build writes share ``part`` of ``parts`` in each worker: no page lost or repeated."""
    names = ["zlib", "xz", "bzip2", "zstd", "lz4", "snappy", "brotli"]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(f"{n:032x}", name=name) for n, name in enumerate(names)])
        shares = [[p.name for p in package_pages(catalog, "t", part=part, parts=3)] for part in range(3)]
    assert sorted(name for share in shares for name in share) == sorted(names)
    assert all(shares)


def test_relax_counts_the_specs_that_already_match_too(tmp_path: Path) -> None:
    """Dropping the os filter keeps the three specs it lets through and adds the fourth."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", {"os": "ubuntu24.04"})
    assert page.matches == (True, True, False, True)
    assert page.relax == {"os": 4}


def test_a_whole_tags_page_counts_a_spec_under_each_compiler_that_built_it(tmp_path: Path) -> None:
    """apple-clang for C and gcc for Fortran: the spec is gcc's too, on a site's page as on a searched one."""
    gcc, clang = "1" * 32, "2" * 32
    darwin = {"platform": "darwin", "os": "sequoia", "target": "m1"}
    externals = [
        record(h, name, version=version, compiler="none", external=True, in_buildcache=False, **darwin)
        for h, name, version in ((gcc, "gcc", "13.3.0"), (clang, "apple-clang", "16.0.0"))
    ]
    lapack = record(
        A,
        "netlib-lapack",
        compiler="apple-clang@16.0.0",
        dependencies=(
            Dependency(clang, "apple-clang", DEPTYPE_BITS["build"], "c"),
            Dependency(gcc, "gcc", DEPTYPE_BITS["build"], "fortran"),
        ),
        **darwin,
    )
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([*externals, lapack], {})
            replace_mirror(writer, "root", {gcc: False, clang: False, A: True})
        (whole,) = package_pages(catalog, "t")
        one = package_page(catalog, "t", "netlib-lapack")
    assert whole.specs[0].other_compilers == ("gcc@13.3.0",)
    assert whole.facets["compiler"] == {"apple-clang@16.0.0": 1, "gcc@13.3.0": 1}
    assert whole == one


def test_runs_on_counts_under_a_runs_on_filter_count_the_specs_each_other_machine_runs(tmp_path: Path) -> None:
    """Three builds for x86_64_v3, one for aarch64: under ``runs_on=a64fx`` a zen3 still offers three."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = package_page(catalog, "t", "zlib", {"runs_on": "a64fx"})
    assert page.matches == (False, True, False, False)
    assert (page.facets["runs_on"]["zen3"], page.facets["runs_on"]["a64fx"]) == (3, 1)
