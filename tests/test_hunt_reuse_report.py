"""``reuse_report`` on small synthetic catalogs: the edges the demo-based tests leave open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.errors import UnknownStack, UnknownTag
from cachedex.reuse import ReuseReport, reuse_report
from cachedex.values import DEPTYPE_BITS, Dependency, SpecRecord
from tests.helpers import record, write_tag

_LINK = DEPTYPE_BITS["link"]


def _synthetic(tmp_path: Path, cached: list[SpecRecord], lock: list[SpecRecord], roots: list[str]) -> ReuseReport:
    """``lock`` against a catalog whose tag ``t`` lists ``cached``."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", cached)
        return reuse_report(catalog, "spack.lock", lock, roots, tags=["t"])


def _app(dag_hash: str, *deps: SpecRecord | str, **fields: Any) -> SpecRecord:
    """An ``app`` linking ``deps`` (records, or ``name/hash`` of specs in no catalog)."""
    edges = tuple(
        Dependency(d.hash, d.name, _LINK, "")
        if isinstance(d, SpecRecord)
        else Dependency(*d.split("/")[::-1], _LINK, "")
        for d in deps
    )
    return record(dag_hash, "app", dependencies=edges, **fields)


def test_an_external_with_a_dev_path_is_counted_as_an_external(tmp_path: Path) -> None:
    """An external is never in a build cache and counted apart, whatever its variants:
    not also as developed in place (the counts would not add up to the specs)."""
    ext = record("e" * 32, "openssl", external=True, in_buildcache=False, variants=("dev_path=/src",))
    zlib = record("a" * 32, "zlib")
    report = _synthetic(tmp_path, [zlib], [zlib, ext], [zlib.hash])
    assert (report.specs, report.external, report.developed) == (2, 1, ())
    assert (report.tags[0].cached, report.tags[0].needed) == (1, 1)


def test_a_stack_in_a_catalog_with_no_tags_is_an_empty_report(tmp_path: Path) -> None:
    """With no tag at all there is none to compare: an empty report, not "no tag has the stack"."""
    zlib = record("a" * 32, "zlib")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        report = reuse_report(catalog, "spack.lock", [zlib], [zlib.hash], stack="e4s")
    assert (report.tags, report.without_stack) == ((), ())


def test_with_a_stack_the_tags_lacking_it_are_set_aside(tmp_path: Path) -> None:
    """No tags asked for and a stack: the tags that have it are compared, the others are
    named as ``without_stack`` (one lacking it is no error)."""
    zlib = record("a" * 32, "zlib")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "has", [zlib])
        write_tag(catalog, "has", [], members={zlib.hash: True}, stack="e4s", checksum="s")
        write_tag(catalog, "lacks", [], members={zlib.hash: True})
        report = reuse_report(catalog, "spack.lock", [zlib], [zlib.hash], stack="e4s")
    assert [(row.tag, row.stack, row.cached) for row in report.tags] == [("has", "e4s", 1)]
    assert report.without_stack == ("lacks",)


def test_tags_that_give_as_much_keep_the_order_asked_for(tmp_path: Path) -> None:
    """Tags with as many cached specs are in the order given (the catalog's tag order
    when none is given), not reversed."""
    zlib = record("a" * 32, "zlib")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "alpha", [zlib])
        write_tag(catalog, "beta", [], members={zlib.hash: True})
        asked = reuse_report(catalog, "spack.lock", [zlib], [zlib.hash], tags=["beta", "alpha"])
        every = reuse_report(catalog, "spack.lock", [zlib], [zlib.hash])
    assert [row.tag for row in asked.tags] == ["beta", "alpha"]
    assert [row.tag for row in every.tags] == ["alpha", "beta"]


def test_a_root_given_twice_is_one_root(tmp_path: Path) -> None:
    """Roots are counted by hash: one given twice is one."""
    zlib = record("a" * 32, "zlib")
    assert _synthetic(tmp_path, [zlib], [zlib], [zlib.hash, zlib.hash]).roots == 1


def test_a_root_no_tag_has_a_build_of_is_a_root_with_no_nearest(tmp_path: Path) -> None:
    """A package the tag lists no build of: missing with no nearest build, and still said
    to be a root."""
    zlib, cmake = record("a" * 32, "zlib"), record("b" * 32, "cmake")
    (row,) = _synthetic(tmp_path, [zlib], [zlib, cmake], [cmake.hash]).tags
    (missing,) = row.missing
    assert (missing.hash, missing.name, missing.root, missing.nearest) == (cmake.hash, "cmake", True, None)


def test_the_nearest_build_of_another_version_says_its_own_version(tmp_path: Path) -> None:
    """No build of the spec's version listed: the nearest is one of another version,
    whose own version (not the wanted one) is given, and the version is why."""
    cached = record("a" * 32, "zlib", version="1.2.13")
    wanted = record("w" * 32, "zlib", version="1.3.1")
    (row,) = _synthetic(tmp_path, [cached], [wanted], [wanted.hash]).tags
    (missing,) = row.missing
    assert missing.nearest is not None
    assert (missing.nearest.hash, missing.nearest.version) == (cached.hash, "1.2.13")
    assert [(d.what, d.cached, d.wanted) for d in missing.nearest.differences] == [("version", "1.2.13", "1.3.1")]


def test_a_dependency_the_lockfile_does_not_hold_has_an_unknown_version(tmp_path: Path) -> None:
    """A wanted dependency whose hash is not among the lockfile's specs is said with a
    ``?`` for its version."""
    lib = record("a" * 32, "liba")
    wanted = _app("f" * 32, f"liba/{'e' * 32}")
    (row,) = _synthetic(tmp_path, [lib, _app("d" * 32, lib)], [wanted], [wanted.hash]).tags
    (found,) = row.missing
    assert found.nearest is not None
    assert [(d.what, d.cached, d.wanted) for d in found.nearest.differences] == [
        ("^liba", "1.3.1 /aaaaaaa", "? /eeeeeee")
    ]


def test_variants_that_differ_are_said_spaced_each_side_its_own(tmp_path: Path) -> None:
    """Several variants are said as Spack prints a spec, spaced: those only the cached
    build has, and those only the wanted spec has."""
    cached = record("a" * 32, "hdf5", variants=("+cxx", "+mpi", "+shared"))
    wanted = record("w" * 32, "hdf5", variants=("~cxx", "~mpi", "+shared"))
    (row,) = _synthetic(tmp_path, [cached], [wanted], [wanted.hash]).tags
    (missing,) = row.missing
    assert missing.nearest is not None
    assert [(d.what, d.cached, d.wanted) for d in missing.nearest.differences] == [
        ("variants", "+cxx +mpi", "~cxx ~mpi")
    ]


def test_dependencies_that_differ_are_said_in_name_order(tmp_path: Path) -> None:
    """Many dependencies of other builds: said by name, not in a set's order."""
    names = [f"lib{n:02d}" for n in range(25)]
    old = [record(f"{n:02d}".ljust(32, "a"), name) for n, name in enumerate(names)]
    new = [record(f"{n:02d}".ljust(32, "b"), name, version="9") for n, name in enumerate(names)]
    wanted = _app("w" * 32, *new[::-1])
    (row,) = _synthetic(tmp_path, [*old, _app("c" * 32, *old)], [wanted, *new], [wanted.hash]).tags
    app = {m.name: m for m in row.missing}["app"]
    assert app.nearest is not None
    assert [d.what for d in app.nearest.differences] == [f"^{name}" for name in names]


@pytest.mark.parametrize("same_first", [True, False])
def test_of_builds_as_near_the_one_of_the_fewest_other_dependencies_is_named(tmp_path: Path, same_first: bool) -> None:
    """Two builds of the same configuration and node: the one built against the wanted
    dependencies is named (it differs least in its DAG), whichever the search finds first."""
    lib, other = record("a" * 32, "liba"), record("b" * 32, "liba", version="2")
    same_hash, other_hash = ("c" * 32, "d" * 32) if same_first else ("d" * 32, "c" * 32)
    same, different = _app(same_hash, lib), _app(other_hash, other)
    wanted = _app("w" * 32, lib)
    (row,) = _synthetic(tmp_path, [lib, other, same, different], [wanted, lib], [wanted.hash]).tags
    (missing,) = row.missing
    assert missing.nearest is not None and missing.nearest.hash == same.hash
    assert missing.nearest.differences == ()


def test_sizes_add_up_the_known_ones_and_none_known_is_unknown(tmp_path: Path) -> None:
    """A tag's size sums the cached binaries whose size is known (``sized`` says how
    many); none known is None (unknown), not 0. The nearest build says its own size."""
    zlib, cmake, tmux = record("a" * 32, "zlib"), record("b" * 32, "cmake"), record("c" * 32, "tmux")
    wanted = record("w" * 32, "tmux", version="9.9")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "sized", [zlib, cmake, tmux], sizes={zlib.hash: 1000, tmux.hash: 77})
        write_tag(catalog, "unsized", [], members={cmake.hash: True})
        report = reuse_report(catalog, "spack.lock", [zlib, cmake, wanted], [wanted.hash], tags=["sized", "unsized"])
    first, second = report.tags
    assert (first.tag, first.cached, first.size, first.sized) == ("sized", 2, 1000, 1)
    assert (second.tag, second.cached, second.size, second.sized) == ("unsized", 1, None, 0)
    (missing,) = first.missing
    assert missing.nearest is not None and (missing.nearest.hash, missing.nearest.size) == (tmux.hash, 77)


def test_a_spec_developed_in_place_is_neither_external_nor_needed(tmp_path: Path) -> None:
    """The specs split into externals, developed ones and those a cache could give: a
    developed spec is not counted as an external too."""
    zlib = record("a" * 32, "zlib")
    dev = record("d" * 32, "cmake", variants=("build_system=generic", "dev_path=/home/me/cmake"))
    ext = record("e" * 32, "openssl", external=True, in_buildcache=False)
    report = _synthetic(tmp_path, [zlib], [zlib, dev, ext], [dev.hash])
    assert (report.specs, report.external, [d.hash for d in report.developed]) == (3, 1, [dev.hash])
    assert (report.tags[0].cached, report.tags[0].needed, report.tags[0].missing) == (1, 1, ())


def test_an_unknown_tag_or_stack_is_refused_even_with_nothing_to_look_for(tmp_path: Path) -> None:
    """A tag or stack that does not exist is refused up front, not only when a missing
    spec's nearest build is searched for (an environment of externals alone has none)."""
    ext = record("e" * 32, "openssl", external=True, in_buildcache=False)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, "zlib")])
        with pytest.raises(UnknownTag, match="nope"):
            reuse_report(catalog, "spack.lock", [ext], [ext.hash], tags=["nope"])
        with pytest.raises(UnknownStack):
            reuse_report(catalog, "spack.lock", [ext], [ext.hash], tags=["t"], stack="e4s")
