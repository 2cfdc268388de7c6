"""Specs that more than one compiler built, read from the catalog: by hash for pages,
for a few hashes, and with repeated or version-less compilers."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.catalog.other_compilers import others_of_hashes
from cachedex.query import parse
from cachedex.values import DEPTYPE_BITS, Dependency, SpecRecord
from tests.helpers import record, write_tag

BUILD = DEPTYPE_BITS["build"]
DARWIN = {"platform": "darwin", "os": "sequoia", "target": "m1"}
GCC, GCC_TWIN, CLANG, BARE = "g" * 32, "f" * 32, "c" * 32, "b" * 32


def _specs() -> list[SpecRecord]:
    """a and b: apple-clang with gcc for Fortran; c: two gcc builds of one version for
    C and Fortran; d: a version-less compiler for Fortran; e: apple-clang alone."""
    compilers = [
        record(h, name, version=version, compiler="none", external=True, in_buildcache=False, **DARWIN)
        for h, name, version in (
            (GCC, "gcc", "13.3.0"),
            (GCC_TWIN, "gcc", "13.3.0"),
            (CLANG, "apple-clang", "16.0.0"),
            (BARE, "nag", ""),
        )
    ]

    def built(h: str, name: str, *edges: tuple[str, str, str]) -> SpecRecord:
        deps = tuple(Dependency(child, cname, BUILD, virtuals) for child, cname, virtuals in edges)
        return record(h, name, compiler="apple-clang@16.0.0", dependencies=deps, **DARWIN)

    return [
        *compilers,
        built("a" * 32, "a", (CLANG, "apple-clang", "c"), (GCC, "gcc", "fortran")),
        built("1" * 32, "b", (CLANG, "apple-clang", "c,cxx"), (GCC, "gcc", "fortran")),
        built("2" * 32, "c", (CLANG, "apple-clang", "cxx"), (GCC, "gcc", "c"), (GCC_TWIN, "gcc", "fortran")),
        built("3" * 32, "d", (CLANG, "apple-clang", "c"), (BARE, "nag", "fortran")),
        built("4" * 32, "e", (CLANG, "apple-clang", "c,cxx")),
    ]


def test_every_spec_built_by_two_compilers_is_listed_by_hash(tmp_path: Path) -> None:
    """Pages read each such spec by hash, each compiler once, a version-less one by name."""
    specs = _specs()
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs, members={s.hash: s.in_buildcache for s in specs})
        assert catalog.other_compilers() == {
            "a" * 32: ("gcc@13.3.0",),
            "1" * 32: ("gcc@13.3.0",),
            "2" * 32: ("gcc@13.3.0",),
            "3" * 32: ("nag",),
        }
        assert sorted(s.name for s in catalog.search(parse("%nag"), tag="t").specs) == ["d"]


def test_the_other_compilers_of_a_few_hashes_leave_out_specs_of_one_compiler(tmp_path: Path) -> None:
    """A page's hashes: only those with another compiler are answered, each its own."""
    specs = _specs()
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs, members={s.hash: s.in_buildcache for s in specs})
        db, path, token = catalog._db, str(catalog.path), catalog.state_token()[0]
        wanted = ["a" * 32, "4" * 32, "3" * 32]
        assert others_of_hashes(db, path, token, wanted) == {"a" * 32: ("gcc@13.3.0",), "3" * 32: ("nag",)}
        catalog.search(parse("%gcc"), tag="t")  # (now read for the whole state)
        assert others_of_hashes(db, path, token, wanted) == {"a" * 32: ("gcc@13.3.0",), "3" * 32: ("nag",)}
        assert others_of_hashes(db, path, token, []) == {}
