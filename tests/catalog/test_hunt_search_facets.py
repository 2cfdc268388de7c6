"""Facet answers a user sees: compilers by two names, platforms, groups, listed specs, other compilers."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.query import parse
from cachedex.values import Dependency
from tests.helpers import record, write_tag


def test_a_compiler_known_by_two_names_is_counted_once_under_the_name_more_specs_have(tmp_path: Path) -> None:
    """oneapi (Spack before 1.0) and intel-oneapi-compilers (its package since) are one
    compiler: 2 specs name it oneapi, 1 the package, so the hint says oneapi, 3 specs."""
    specs = [
        record("a" * 32, "a", compiler="intel-oneapi-compilers@2025.1.0"),
        record("b" * 32, "b", compiler="oneapi@2025.1.0"),
        record("c" * 32, "c", compiler="oneapi@2025.1.0"),
        record("d" * 32, "d", compiler="gcc@13.2.0"),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        page = catalog.search(parse("%intel"), tag="t", hints=True)
    assert page.total == 0
    assert page.hints == ("nothing in t matches %intel; the compilers in t: oneapi (3 specs), gcc (1 spec)",)


def test_a_platform_alone_finds_the_specs_of_that_platform(tmp_path: Path) -> None:
    """A query of facets alone is answered by the facet index: platform= must be checked
    against each spec's platform, not another facet (os or target)."""
    specs = [
        record("a" * 32, "a", platform="linux", os="ubuntu24.04"),
        record("b" * 32, "b", platform="darwin", os="sequoia", target="m1"),
        record("c" * 32, "c", platform="linux", os="rhel8"),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)

        def names(text: str) -> list[str]:
            return [s.name for s in catalog.search(parse(text), tag="t").specs]

        assert names("platform=linux") == ["a", "c"]
        assert names("platform=darwin") == ["b"]
        assert names("platform=linux os=rhel8") == ["c"]
        assert names("os=sequoia target=m1") == ["b"]


def test_a_compiler_finds_no_spec_of_a_tag_through_a_spec_another_tag_holds(tmp_path: Path) -> None:
    """lapack (tag a) was built by apple-clang with gcc for Fortran: %gcc finds it by its
    other compiler. Tag b holds only zlib, apple-clang alone, of a higher id: %gcc in b
    finds nothing (lapack's id, looked up among b's, is not b's spec just above it)."""
    build, link = 1, 2
    darwin = {"platform": "darwin", "os": "sequoia", "target": "m1"}
    gcc, clang = "g" * 32, "c" * 32
    compilers = [
        record(h, name, version=version, compiler="none", external=True, in_buildcache=False, **darwin)
        for h, name, version in ((gcc, "gcc", "13.3.0"), (clang, "apple-clang", "16.0.0"))
    ]
    lapack = record(
        "l" * 32,
        "netlib-lapack",
        compiler="apple-clang@16.0.0",
        dependencies=(Dependency(clang, "apple-clang", build, "c"), Dependency(gcc, "gcc", build, "fortran")),
        **darwin,
    )
    zlib = record(
        "z" * 32,
        "zlib",
        compiler="apple-clang@16.0.0",
        dependencies=(Dependency(clang, "apple-clang", link, ""),),
        **darwin,
    )
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "a", [*compilers, lapack], members={s.hash: s.in_buildcache for s in [*compilers, lapack]})
        write_tag(catalog, "b", [zlib])
        assert [s.name for s in catalog.search(parse("%gcc"), tag="a").specs] == ["netlib-lapack"]
        assert [s.name for s in catalog.search(parse("%gcc"), tag="b").specs] == []
        assert [s.name for s in catalog.search(parse("%apple-clang"), tag="b").specs] == ["zlib"]


def test_facets_alone_find_every_listed_spec_of_each_matching_group_in_result_order(tmp_path: Path) -> None:
    """os=ubuntu24.04 matches two facet groups (targets x86_64_v3 and zen4) whose specs
    alternate in result order (by name); u is the tag's but not listed: no search finds it."""
    specs = [
        record("a" * 32, "a"),
        record("b" * 32, "b", target="zen4"),
        record("c" * 32, "c"),
        record("d" * 32, "d", target="zen4"),
        record("e" * 32, "e", os="rhel8"),
        record("u" * 32, "u"),
    ]
    members = {s.hash: s.name != "u" for s in specs}
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs, members=members)
        page = catalog.search(parse("os=ubuntu24.04"), tag="t")
        assert page.total == 4 and [s.name for s in page.specs] == ["a", "b", "c", "d"]
        page = catalog.search(parse("os=ubuntu24.04"), tag="t", offset=1, limit=2)
        assert page.total == 4 and [s.name for s in page.specs] == ["b", "c"]
        assert [s.name for s in catalog.search(parse("target=zen4"), tag="t").specs] == ["b", "d"]
        # The whole catalog's scope: the specs some mirror lists, u still not among them.
        assert [s.name for s in catalog.search(parse("os=ubuntu24.04")).specs] == ["a", "b", "c", "d"]
