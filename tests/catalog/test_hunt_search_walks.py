"""``^dep`` walks: the warm-up's choice of packages, and a walk bounded by ``walk_up_to``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.query import parse
from cachedex.values import Dependency
from tests.helpers import record, write_tag

LINK, RUN, BUILD = 2, 4, 1


def _dep(letter: str, name: str, mask: int = LINK) -> Dependency:
    return Dependency(letter * 32, name, mask, "")


def _names(catalog: Catalog, text: str) -> list[str]:
    return sorted(s.name for s in catalog.search(parse(text), tag="t", limit=100).specs)


@pytest.fixture
def fan(tmp_path: Path) -> Catalog:
    """Two specs of base: base@1 has the dependents p1 and p2, base@2 has p3 (a run
    dependency); nothing else depends on anything."""
    base1 = record("b" * 32, "base", version="1")
    base2 = record("c" * 32, "base", version="2")
    p1 = record("d" * 32, "p1", dependencies=(_dep("b", "base"),))
    p2 = record("e" * 32, "p2", dependencies=(_dep("b", "base"),))
    p3 = record("f" * 32, "p3", dependencies=(_dep("c", "base", RUN),))
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [base1, base2, p1, p2, p3])
    return catalog


@pytest.mark.parametrize("warm", [False, True], ids=["in-sql", "over-the-graph"])
def test_a_walk_reaching_more_than_walk_up_to_is_not_made_and_the_search_finds_all(fan: Catalog, warm: bool) -> None:
    """^base reaches 3 specs. With walk_up_to=2 the walk is given up, however its first
    level is split between base's two specs (2 parents of one, 1 of the other): a walk
    cut at the bound and kept as if whole would make ``^base`` find 2 of its 3."""
    query = "^base@1:"  # (not the warm-up's own ^base walk: this one walks the graph)
    if warm:
        fan.warm_walks()
    assert not fan.walks_made(parse(query), walk_up_to=2)
    assert not fan.walks_made(parse(query))
    assert _names(fan, query) == ["p1", "p2", "p3"]


@pytest.mark.parametrize("warm", [False, True], ids=["in-sql", "over-the-graph"])
def test_a_walk_reaching_exactly_walk_up_to_is_made_and_kept(fan: Catalog, warm: bool) -> None:
    query = "^base@1:"
    if warm:
        fan.warm_walks()
    assert fan.walks_made(parse(query), walk_up_to=3)
    assert fan.walks_made(parse(query))  # kept: asked again without a bound, nothing to walk
    assert _names(fan, query) == ["p1", "p2", "p3"]


def test_the_warm_up_walks_the_packages_with_the_most_link_and_run_edges_first(tmp_path: Path) -> None:
    """one: a single spec with 3 dependents (3 edges); two: two specs with 1 each (2 edges,
    but 2 specs: counting specs would put it first); aa and zz: 1 edge each, told apart by
    name; tool: 4 build-only edges, which installing needs none of."""
    one = record("o" * 32, "one")
    two1 = record("t" * 32, "two", version="1")
    two2 = record("u" * 32, "two", version="2")
    zz = record("z" * 32, "zz")
    aa = record("a" * 32, "aa")
    tool = record("x" * 32, "tool")
    users = [
        record("1" * 32, "u1", dependencies=(_dep("o", "one"), _dep("t", "two"), _dep("x", "tool", BUILD))),
        record("2" * 32, "u2", dependencies=(_dep("o", "one"), _dep("u", "two"), _dep("x", "tool", BUILD))),
        record("3" * 32, "u3", dependencies=(_dep("o", "one", RUN), _dep("z", "zz"), _dep("x", "tool", BUILD))),
        record("4" * 32, "u4", dependencies=(_dep("a", "aa"), _dep("x", "tool", BUILD))),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [zz, tool, two2, one, two1, aa, *users])
        assert catalog.warm_walks() == ["one", "two", "aa", "zz"]


def test_a_virtuals_walk_counts_its_users_with_their_dependents_against_walk_up_to(tmp_path: Path) -> None:
    """^mpi's specs are the users of mpi (a1, a2) and what depends on them (top): 3, the
    users counted too."""
    openmpi = record("o" * 32, "openmpi")
    a1 = record("1" * 32, "a1", dependencies=(Dependency("o" * 32, "openmpi", LINK, "mpi"),))
    a2 = record("2" * 32, "a2", dependencies=(Dependency("o" * 32, "openmpi", LINK, "mpi"),))
    top = record("3" * 32, "top", dependencies=(_dep("1", "a1"),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [openmpi, a1, a2, top])
        assert not catalog.walks_made(parse("^mpi"), walk_up_to=2)
        assert catalog.walks_made(parse("^mpi"), walk_up_to=3)
        assert _names(catalog, "^mpi") == ["a1", "a2", "top"]


def test_a_dependency_search_without_a_name_reads_every_spec_of_the_scope(tmp_path: Path) -> None:
    """The spec of the highest id (aaa, written last, no dependency) comes first in result
    order and depends on nothing: the walk's bit set ends below its id, and ^base must
    still read it (as not a dependent) rather than fail or stop at the last spec shown."""
    base = record("b" * 32, "base")
    tool = record("t" * 32, "tool")
    lib = record("l" * 32, "lib", dependencies=(_dep("b", "base"),))
    aaa = record("a" * 32, "aaa")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [base, tool, lib, aaa])
        assert _names(catalog, "^base") == ["lib"]
        assert _names(catalog, "^base os=ubuntu24.04") == ["lib"]


def test_searches_after_a_sync_read_the_new_state_not_the_indexes_of_the_last(tmp_path: Path) -> None:
    """A warm catalog (facet indexes, the edges' graph, the walks) synced again: the new
    dependent of base and the new spec on ubuntu are found, by a search without a name
    (facet index) and a ``^dep`` search not warmed (walked over the graph, if any)."""
    base = record("b" * 32, "base")
    lib = record("l" * 32, "lib", dependencies=(_dep("b", "base"),))
    app = record("a" * 32, "app", dependencies=(_dep("b", "base"),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [base, lib])
        catalog.warm_search()
        catalog.warm_walks()
        assert _names(catalog, "os=ubuntu24.04") == ["base", "lib"]
        assert _names(catalog, "^base@1:") == ["lib"]
        write_tag(catalog, "t", [app], members={h * 32: True for h in "bla"})
        assert catalog.walks_made(parse("^base@1:"), walk_up_to=10)  # (first: the old graph still kept)
        assert _names(catalog, "^base@1:") == ["app", "lib"]
        assert _names(catalog, "os=ubuntu24.04") == ["app", "base", "lib"]
        assert _names(catalog, "^base") == ["app", "lib"]
