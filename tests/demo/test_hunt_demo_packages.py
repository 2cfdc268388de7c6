"""cachedex.demo.packages: the table syntax the module docstring documents, on small tables."""

from __future__ import annotations

import pytest

from cachedex.demo.packages import PACKAGES, Package, parse_packages
from cachedex.versions import version_key

TOOLS = """
gmake | 4.4.1     | generic | c |              |
cmake | 3.30.5    | generic | c | curl         |
curl  | 8.11.0    | cmake   | c |              |
"""


def parse(rows: str) -> dict[str, Package]:
    return parse_packages((TOOLS + rows).strip())


def test_variant_syntax_bool_single_and_multi_valued() -> None:
    (foo,) = (
        p
        for p in parse("foo | 2.0,1.0 | autotools | c,cxx | | +shared ~docs abi=none libs:=shared,static").values()
        if p.name == "foo"
    )
    assert foo.versions == ("2.0", "1.0") and foo.languages == ("c", "cxx")
    assert foo.variants == {
        "build_system": "autotools",
        "shared": True,
        "docs": False,
        "abi": "none",
        "libs": ["shared", "static"],
    }
    assert PACKAGES["zlib"].variants["shared"] is True and PACKAGES["bzip2"].variants["debug"] is False


def test_dependency_kinds_and_implied_build_tools() -> None:
    packages = parse(
        "bar | 1.0 | generic | - | |\n"
        "foo | 1.0 | cmake | c | bar:r cmake:lr curl |\n"
        "baz | 1.0 | autotools | c | bar:b |"
    )
    assert dict(packages["foo"].deps) == {
        "bar": ("build", "run"),
        "cmake": ("build", "link", "run"),  # an explicit kind wins over the implied cmake:b
        "curl": ("build", "link"),
    }
    assert dict(packages["baz"].deps) == {"bar": ("build",), "gmake": ("build",)}
    assert packages["bar"].languages == () and packages["bar"].deps == ()
    # cmake links curl: curl, though built with cmake, does not build-depend on it.
    assert dict(packages["curl"].deps) == {}


def test_cmake_packages_get_spack_defaults_that_the_table_can_override() -> None:
    packages = parse("foo | 1.0 | cmake | c | | build_type=Debug +ipo")
    assert packages["foo"].variants == {
        "build_system": "cmake",
        "build_type": "Debug",
        "generator": "make",
        "ipo": True,
    }
    assert PACKAGES["snappy"].variants["build_type"] == "Release"
    assert PACKAGES["snappy"].variants["generator"] == "make"


def test_unknown_dependencies_and_cycles_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown dependencies"):
        parse("foo | 1.0 | generic | c | nowhere |")
    with pytest.raises(ValueError, match="cycle"):
        parse("foo | 1.0 | generic | c | bar |\nbar | 1.0 | generic | c | foo |")


def test_each_package_lists_its_versions_newest_first() -> None:
    # The table says so, and the stacks pin by position: the first is what develop
    # builds, the last what an old stack pins (gcc's were listed oldest first).
    for name, package in PACKAGES.items():
        keys = [version_key(version) for version in package.versions]
        assert keys == sorted(keys, reverse=True), name
