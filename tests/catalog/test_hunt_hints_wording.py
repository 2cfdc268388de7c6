"""What a user reads of the example spec and the values a hint offers (catalog/hints.py,
hint_values.py)."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.query import parse
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import record, replace_mirror, write_tag

BUILD = DEPTYPE_BITS["build"]


def test_an_example_spec_built_by_no_compiler_is_written_without_one(tmp_path: Path) -> None:
    """A pure Python package's spec: ``%none`` would be read by Spack as a compiler named none."""
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "py-six", compiler="none")])
    assert catalog.search(parse("py-six ~shared"), tag="t", hints=True).hints == (
        "nothing matches ~shared; without it, 1 spec in t matches, e.g. py-six@1.3.1 +shared "
        "arch=linux-ubuntu24.04-x86_64_v3",
    )


def test_a_hash_a_tag_s_root_lists_is_not_said_to_be_listed_by_its_stack_alone(tmp_path: Path) -> None:
    """Tag t lists the spec in its root and in stack s: searched in tag u, "t lists it"
    is the whole answer ("stack s of t lists it, not t's root" would be false)."""
    spec = record("a" * 32)
    catalog = Catalog(tmp_path / "c.sqlite")
    with catalog.writing_tag("t") as writer:
        writer.add_specs([spec], {})
        replace_mirror(writer, "root", {spec.hash: True})
        replace_mirror(writer, "s", {spec.hash: True}, url="/s")
    write_tag(catalog, "u", [record("b" * 32, "cmake")])
    assert catalog.search(parse("/aaaaaaa"), tag="u", hints=True).hints == (
        "nothing in u matches /aaaaaaa; zlib@1.3.1 /aaaaaaa is listed in t",
    )


def test_a_package_s_compilers_dropped_count_each_compiler_that_built_a_spec(tmp_path: Path) -> None:
    """Two lapack specs, both built by apple-clang (C), one by gcc too (Fortran): a hint
    on ``lapack %intel`` counts gcc for that one, as ``lapack %gcc`` finds it."""
    gcc, clang = "g" * 32, "c" * 32
    external = {"compiler": "none", "external": True, "in_buildcache": False}
    specs = [
        record(gcc, "gcc", version="13.3.0", **external),
        record(clang, "apple-clang", version="16.0.0", **external),
        *(
            record(
                h * 32,
                "lapack",
                version=version,
                compiler="apple-clang@16.0.0",
                dependencies=(Dependency(clang, "apple-clang", BUILD, "c"), *fortran),
            )
            for h, version, fortran in (
                ("a", "3.12.0", (Dependency(gcc, "gcc", BUILD, "fortran"),)),
                ("b", "3.11.0", ()),
            )
        ),
    ]
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", specs, members={s.hash: s.in_buildcache for s in specs})
    assert catalog.search(parse("lapack %gcc"), tag="t").total == 1
    assert catalog.search(parse("lapack %intel"), tag="t", hints=True).hints[0] == (
        "nothing matches %intel; without it, 2 specs in t match: %apple-clang@16.0.0 (2 specs), %gcc@13.3.0 (1 spec)"
    )


def test_a_hash_prefix_two_specs_share_names_neither(tmp_path: Path) -> None:
    """``/ab`` is the start of two hashes: naming one of them would be a guess."""
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("abc" + "a" * 29), record("abd" + "b" * 29, "cmake")])
    write_tag(catalog, "u", [record("e" * 32, "xz")])
    assert catalog.search(parse("/ab"), tag="u", hints=True).hints == ("nothing in u matches /ab",)
    assert catalog.search(parse("/abc"), tag="u", hints=True).hints == (
        "nothing in u matches /abc; zlib@1.3.1 /abcaaaa is listed in t",
    )


def test_a_list_of_targets_is_told_the_targets_there_not_a_close_name(tmp_path: Path) -> None:
    """``zen5,z`` is two targets, no misspelt one: difflib would find it close to zen4."""
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, target="zen4")])
    assert catalog.search(parse("target=zen5,z"), tag="t", hints=True).hints == (
        "nothing in t matches target=zen5,z; the targets in t: zen4 (1 spec)",
    )


def test_a_compiler_recorded_without_a_version_is_no_version_to_offer(tmp_path: Path) -> None:
    """A spec whose compiler has no version (``gcc``) is not listed as ``%gcc@``."""
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, compiler="gcc"), record("b" * 32, "cmake", compiler="gcc@13.2.0")])
    assert catalog.search(parse("%gcc@14"), tag="t", hints=True).hints == (
        "nothing in t matches %gcc@14; the versions of gcc in t: %gcc@13.2.0 (1 spec)",
    )


def test_a_package_asked_for_as_a_compiler_is_told_how_spack_and_cachedex_read_it(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32), record("b" * 32, "cmake")])
    (hint,) = catalog.search(parse("%cmake"), tag="t", hints=True).hints
    assert hint.startswith("nothing in t matches %cmake; the compilers in t: gcc (2 specs) (Spack 1.0 reads %cmake ")
    assert hint.endswith("and ^cmake its link and run dependencies)")
    # (a name no package has: the compilers alone)
    assert catalog.search(parse("%nvhpc"), tag="t", hints=True).hints == (
        "nothing in t matches %nvhpc; the compilers in t: gcc (2 specs)",
    )


def test_a_hash_no_mirror_holds_any_more_is_kept_from_an_earlier_sync(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32)], checksum="1")
    write_tag(catalog, "t", [record("b" * 32, "cmake")], checksum="2")
    assert catalog.search(parse("/aaaaaaa"), tag="t", hints=True).hints == (
        "nothing in t matches /aaaaaaa; zlib@1.3.1 /aaaaaaa: the catalog keeps it from an earlier sync "
        "(its page: /spec/aaaaaaa)",
    )


def test_a_version_no_query_can_name_is_written_exact(tmp_path: Path) -> None:
    """An index may hold a version Spack's syntax cannot parse (``1.0 beta``): only ``@=`` names it."""
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "lib", version="2.0"), record("b" * 32, "lib", version="1.0 beta")])
    (hint,) = catalog.search(parse("lib@3:"), tag="t", hints=True).hints
    assert "lib@=1.0 beta (1 spec)" in hint and "lib@2.0 (1 spec)" in hint


def test_a_package_nothing_depends_on_is_not_said_to_be_needed_to_build(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32), record("b" * 32, "cmake")])
    assert catalog.search(parse("^cmake"), tag="t", hints=True).hints == (
        "nothing in t matches ^cmake: no spec in t depends on cmake through link or run dependencies",
    )


def test_an_empty_scope_lists_no_values(tmp_path: Path) -> None:
    """A tag with no spec: no "the OSes in e:" followed by nothing."""
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32)])
    write_tag(catalog, "e", [])
    assert catalog.search(parse("os=foo"), tag="e", hints=True).hints == ("nothing in e matches os=foo",)
