"""A binary that more than one compiler built (apple-clang for C and C++, gfortran from
gcc for Fortran, as Spack's darwin stacks are built) is found by ``%gcc`` too, in every
way a search is answered: by name, by facets alone, by bit sets, within a stack, over
the whole catalog and as a ``^dependency``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.publish.cells import search_rows
from cachedex.query import parse
from cachedex.values import DEPTYPE_BITS, Dependency, SpecRecord
from tests.helpers import record, replace_mirror, write_tag

BUILD, LINK = DEPTYPE_BITS["build"], DEPTYPE_BITS["link"]
GCC, CLANG = "g" * 32, "c" * 32


def _compiler(h: str, name: str, virtuals: str) -> Dependency:
    return Dependency(h, name, BUILD, virtuals)


DARWIN = {"platform": "darwin", "os": "sequoia", "target": "m1"}


def _externals(*compilers: tuple[str, str, str]) -> list[SpecRecord]:
    """Compilers (hash, name, version) as Spack records them: externals, not listed."""
    return [
        record(h, name, version=version, compiler="none", external=True, in_buildcache=False, **DARWIN)
        for h, name, version in compilers
    ]


#: gcc and apple-clang
TWO_COMPILERS = ((GCC, "gcc", "13.3.0"), (CLANG, "apple-clang", "16.0.0"))


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    """lapack: apple-clang for C, gcc for Fortran; zlib: apple-clang alone; hdf5: gcc
    alone, linking lapack; gcc and apple-clang themselves: externals, not listed."""

    specs = [
        *_externals(*TWO_COMPILERS),
        record(
            "l" * 32,
            "netlib-lapack",
            version="3.12.0",
            compiler="apple-clang@16.0.0",
            dependencies=(_compiler(CLANG, "apple-clang", "c"), _compiler(GCC, "gcc", "fortran")),
            **DARWIN,
        ),
        record(
            "z" * 32,
            "zlib",
            compiler="apple-clang@16.0.0",
            dependencies=(_compiler(CLANG, "apple-clang", "c,cxx"),),
            **DARWIN,
        ),
        record(
            "h" * 32,
            "hdf5",
            version="1.14.5",
            compiler="gcc@13.3.0",
            dependencies=(
                _compiler(GCC, "gcc", "c,cxx,fortran"),
                Dependency("l" * 32, "netlib-lapack", LINK, "lapack"),
            ),
            **DARWIN,
        ),
    ]
    with Catalog(tmp_path / "c.sqlite") as opened:
        with opened.writing_tag("t") as writer:
            writer.add_specs(specs, {})
            replace_mirror(writer, "root", {s.hash: s.in_buildcache for s in specs})
            replace_mirror(writer, "stack", {"l" * 32: True, "z" * 32: True})
        yield opened


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("%gcc", ["hdf5", "netlib-lapack"]),  # facets alone
        ("%gcc@13", ["hdf5", "netlib-lapack"]),
        ("%gcc@14:", []),
        ("target=m1 os=sequoia %gcc", ["hdf5", "netlib-lapack"]),
        ("os=ubuntu24.04 %gcc", []),  # the other facets still hold
        ("+shared %gcc", ["hdf5", "netlib-lapack"]),  # bit sets (a variant)
        ("@3: %gcc", ["netlib-lapack"]),
        ("@:2 %gcc", ["hdf5"]),
        ("netlib-lapack %gcc", ["netlib-lapack"]),  # by name
        ("netlib-lapack %gcc@14", []),
        ("zlib %gcc", []),
        ("%apple-clang", ["netlib-lapack", "zlib"]),  # its own compiler, as before
        ("hdf5 ^netlib-lapack%gcc", ["hdf5"]),  # a dependency's
        ("^lapack%gcc", ["hdf5"]),  # a virtual's provider (netlib-lapack) by its Fortran's
        ("^lapack%apple-clang", ["hdf5"]),
        ("^lapack%gcc@14", []),
    ],
)
def test_a_binary_is_found_by_each_of_its_compilers(catalog: Catalog, text: str, found: list[str]) -> None:
    for tag in ("t", None):
        page = catalog.search(parse(text), tag=tag, limit=50)
        assert sorted(s.name for s in page.specs) == found, (text, tag)
        assert page.total == len(found)


def test_within_a_stack_and_by_page(catalog: Catalog) -> None:
    assert [s.name for s in catalog.search(parse("%gcc"), tag="t", stack="stack").specs] == ["netlib-lapack"]
    first = catalog.search(parse("%gcc"), tag="t", limit=1)
    second = catalog.search(parse("%gcc"), tag="t", limit=1, offset=1)
    assert first.total == second.total == 2
    assert {first.specs[0].name, second.specs[0].name} == {"hdf5", "netlib-lapack"}


def test_the_explanation_names_them(catalog: Catalog) -> None:
    lines = catalog.explain_search(parse("%gcc"), tag="t")
    assert any("1 spec(s) another of whose compilers is %gcc" in line for line in lines), lines


@pytest.mark.parametrize(
    ("text", "stack", "said"),
    [
        # the versions of gcc there: netlib-lapack's Fortran's too
        ("%gcc@15", None, "the versions of gcc in t: %gcc@13.3.0 (2 specs)"),
        # a stack whose only gcc is a Fortran's: gcc is a compiler there, not a package
        ("%gcc@15", "stack", "the versions of gcc in t/stack: %gcc@13.3.0 (1 spec)"),
        # without the compiler's versions: the specs counted by each of their compilers
        ("+shared %gcc@15", None, "%gcc@13.3.0 (2 specs), %apple-clang@16.0.0 (2 specs)"),
        ("target=m1 %gcc@15", None, "%gcc@13.3.0 (2 specs), %apple-clang@16.0.0 (2 specs)"),
    ],
)
def test_a_search_that_finds_nothing_counts_each_compiler(
    catalog: Catalog, text: str, stack: str | None, said: str
) -> None:
    page = catalog.search(parse(text), tag="t", stack=stack, hints=True)
    assert page.total == 0
    assert any(said in line for line in page.hints), page.hints
    assert not any("direct dependency named gcc" in line for line in page.hints), page.hints


def test_a_result_names_its_other_compilers(catalog: Catalog) -> None:
    """A %gcc result whose compiler reads apple-clang said nothing of why it was found."""
    # (first read from the page's edges: no search has named a compiler yet)
    (alone,) = catalog.search(parse("netlib-lapack"), tag="t").specs
    assert alone.other_compilers == ("gcc@13.3.0",)
    page = catalog.search(parse("%gcc"), tag="t")  # (then from those of the whole state)
    by_name = {s.name: s for s in page.specs}
    assert by_name["netlib-lapack"].compiler == "apple-clang@16.0.0"
    assert by_name["netlib-lapack"].other_compilers == ("gcc@13.3.0",)
    assert by_name["hdf5"].other_compilers == ()  # (one compiler for its C, C++ and Fortran)
    encoded = msgspec.json.decode(msgspec.json.encode(page.specs))
    assert encoded[1]["other_compilers"] == ["gcc@13.3.0"] and "other_compilers" not in encoded[0]
    rows = search_rows(page.specs, {}, "", by_stack=True)
    assert '<td data-label="compiler">apple-clang@16.0.0 <span class="muted">+gcc@13.3.0</span></td>' in rows


def test_a_binary_three_compilers_built_is_found_by_each(tmp_path: Path) -> None:
    """apple-clang its C, gcc its Fortran, llvm its C++: ``%llvm`` finds it too (a
    search read the first of its other compilers alone, and no test had a third)."""

    llvm = "v" * 32
    compilers = _externals(*TWO_COMPILERS, (llvm, "llvm", "19.1.0"))
    mixed = record(
        "m" * 32,
        "mixed",
        compiler="apple-clang@16.0.0",
        dependencies=(
            _compiler(CLANG, "apple-clang", "c"),
            _compiler(GCC, "gcc", "fortran"),
            _compiler(llvm, "llvm", "cxx"),
        ),
        **DARWIN,
    )
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [*compilers, mixed], members={s.hash: s.in_buildcache for s in [*compilers, mixed]})
        for text in ("%apple-clang", "%gcc", "%gcc@13", "%llvm", "%llvm@19", "mixed %llvm", "%clang"):
            for tag in ("t", None):
                assert [s.name for s in catalog.search(parse(text), tag=tag).specs] == ["mixed"], (text, tag)
        assert catalog.search(parse("%llvm@20"), tag="t").specs == ()
        (found,) = catalog.search(parse("mixed"), tag="t").specs
        assert found.other_compilers == ("gcc@13.3.0", "llvm@19.1.0")


def test_a_spec_s_other_compilers_are_its_compilers_alone_not_its_other_dependencies(tmp_path: Path) -> None:
    """Only edges that compile a language name a compiler: a library it links (a
    virtual's provider or not) is no compiler of it."""

    specs = [
        *_externals(*TWO_COMPILERS),
        record("z" * 32, "zlib", compiler="apple-clang@16.0.0", **DARWIN),
        record("o" * 32, "openblas", version="0.3.28", compiler="apple-clang@16.0.0", **DARWIN),
        record(
            "a" * 32,
            "app",
            compiler="apple-clang@16.0.0",
            dependencies=(
                _compiler(CLANG, "apple-clang", "c"),
                _compiler(GCC, "gcc", "fortran"),
                Dependency("z" * 32, "zlib", LINK, ""),
                Dependency("o" * 32, "openblas", LINK, "blas,lapack"),
            ),
            **DARWIN,
        ),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs, members={s.hash: s.in_buildcache for s in specs})
        (app,) = catalog.search(parse("app"), tag="t").specs
        assert app.other_compilers == ("gcc@13.3.0",)
