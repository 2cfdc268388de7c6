"""Hunted mutations of ``catalog/dependents.py``, ``catalog/virtuals.py`` and
``catalog/holders.py``: the walk bounded by ``walk_up_to``, a walk's bit map, and a
virtual's providers and users."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.catalog.dependents import Dependents, ReverseGraph, _walk_in_sql
from cachedex.catalog.schema import migrate
from cachedex.catalog.terms import bits_of
from cachedex.query import parse
from cachedex.values import Dependency
from tests.helpers import record, write_tag

LINK, RUN, BUILD = 2, 4, 1


def _edges_db(edges: list[tuple[int, int, int]]) -> sqlite3.Connection:
    """A catalog in memory whose edges are ``edges`` (parent, child, deptypes), no specs."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    migrate(db, Path(":memory:"), readonly=False)
    db.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, '')", edges)
    return db


def test_a_walk_in_sql_past_its_limit_is_given_up_when_a_parent_has_two_edges_to_the_level() -> None:
    """Parent 10 depends on both 1 and 2, parent 11 on 2: three specs reach 2 parents, more
    than a limit of 1. The SQL level read ``LIMIT limit + 1`` rows (10, 10) and took
    their one distinct parent for the whole level, as the graph does not."""
    db = _edges_db([(10, 1, LINK), (10, 2, LINK), (11, 2, LINK)])
    assert ReverseGraph(db).walk([1, 2], 1) is None
    assert _walk_in_sql(db, [1, 2], 1) is None


def test_a_walk_past_walk_up_to_is_not_kept_when_one_dependent_uses_two_specs_of_it(tmp_path: Path) -> None:
    """``both`` depends on base@1 and base@2, ``only2`` on base@2: ^base reaches 2 specs,
    more than walk_up_to=1. The walk in SQL (no warmed graph) was kept cut at ``both``,
    and ``^base`` then found ``both`` alone."""
    b1, b2 = record("b" * 32, "base", version="1"), record("c" * 32, "base", version="2")
    both = record(
        "d" * 32, "both", dependencies=(Dependency("b" * 32, "base", LINK, ""), Dependency("c" * 32, "base", LINK, ""))
    )
    only2 = record("e" * 32, "only2", dependencies=(Dependency("c" * 32, "base", LINK, ""),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [b1, b2, both, only2])
        made = catalog.walks_made(parse("^base"), walk_up_to=1)
        assert sorted(s.name for s in catalog.search(parse("^base"), tag="t").specs) == ["both", "only2"]
        assert not made


def test_a_walks_bit_map_holds_exactly_its_ids() -> None:
    """Membership reads the right byte and bit: no negative id (Python's ``map[-1]``
    would read the last byte), no id past the map, and an id's bit within its byte."""
    walked = Dependents(bits_of({0, 5, 7}, 8))
    assert [spec_id for spec_id in range(-9, 20) if spec_id in walked] == [0, 5, 7]
    assert -1 not in walked and "5" not in walked and 8 not in walked
    assert 0 in Dependents(1) and bool(Dependents(1)) and not Dependents(0)


def test_a_walk_reaches_more_specs_than_a_thousand() -> None:
    """A walk without a limit is not cut, however many specs it reaches (1,100 here)."""
    db = _edges_db([(parent, 1, LINK) for parent in range(2, 1102)])
    assert ReverseGraph(db).walk([1]) == set(range(2, 1102)) == _walk_in_sql(db, [1])


def test_the_warm_up_breaks_a_tie_of_link_and_run_edges_by_name(tmp_path: Path) -> None:
    """zz and aa have one link or run dependent each (zz a build-only one too, which
    does not count): the first by name comes first."""
    from cachedex.catalog.dependents import most_depended_on

    zz, aa = record("b" * 32, "zz"), record("c" * 32, "aa")
    users = [
        record("d" * 32, "u1", dependencies=(Dependency("b" * 32, "zz", LINK, ""),)),
        record("e" * 32, "u2", dependencies=(Dependency("b" * 32, "zz", BUILD, ""),)),
        record("f" * 32, "u3", dependencies=(Dependency("c" * 32, "aa", RUN, ""),)),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [zz, aa, *users])
        assert most_depended_on(catalog._db, 1) == ["aa"]
        assert most_depended_on(catalog._db, 5) == ["aa", "zz"]


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[Catalog]:
    """app -> lib -> base, link edges."""
    base = record("b" * 32, "base", version="1")
    lib = record("l" * 32, "lib", dependencies=(Dependency("b" * 32, "base", LINK, ""),))
    app = record("a" * 32, "app", dependencies=(Dependency("l" * 32, "lib", LINK, ""),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [base, lib, app])
        yield catalog


@pytest.fixture
def tiny_bits_cache() -> Iterator[None]:
    """BITS_CACHE keeping nothing: what the graph keeps is all that is kept."""
    from cachedex.catalog.terms import BITS_CACHE

    BITS_CACHE.max_bytes, kept = 0, BITS_CACHE.max_bytes
    try:
        yield
    finally:
        BITS_CACHE.max_bytes = kept


def test_a_warmed_walk_is_read_from_the_graph_not_walked_again(chain: Catalog, tiny_bits_cache: None) -> None:
    """After the warm-up, ``^base`` reads the graph's walk even where BITS_CACHE lost it."""
    assert "base" in chain.warm_walks()
    walks: list[str] = []
    chain._db.set_trace_callback(lambda sql: walks.append(sql) if "AS walked_from" in sql else None)
    assert sorted(s.name for s in chain.search(parse("^base"), tag="t").specs) == ["app", "lib"]
    assert walks == []


def test_a_searchs_own_walk_is_not_kept_by_the_graph(chain: Catalog, tiny_bits_cache: None) -> None:
    """Only the warm-up's walks live as long as the graph: a search's (``^base@1:``,
    not one of them) is kept in BITS_CACHE alone, and is gone when that lets it go."""
    chain.warm_walks()
    assert sorted(s.name for s in chain.search(parse("^base@1:"), tag="t").specs) == ["app", "lib"]
    chain.search(parse("+shared"), tag="t")
    assert not chain.walks_made(parse("^base@1:"))
    assert chain.walks_made(parse("^base"))


def test_a_search_leaves_no_walk_under_way(chain: Catalog) -> None:
    """A search's walk takes its entry out of the table of walks under way: one left
    there would make every later ``walk_if_small`` of it say another thread makes it."""
    from cachedex.catalog import dependents as walks

    chain.search(parse("^lib"), tag="t")
    assert walks._WALKING == {}


def test_a_walk_that_fails_leaves_no_walk_under_way(chain: Catalog) -> None:
    """A walk that raises (a read error of SQLite here) takes its entry out of the table
    of walks under way, as ``walk_if_small`` does: one left there makes every later
    ``walk_if_small`` of that dependency say another thread is making it, for the
    catalog state's life."""
    import sqlite3

    from cachedex.catalog import dependents as walks

    path, token = str(chain.path), chain.state_token()[0]
    broken = walks.WalkStart(b"broken", "s.no_such_column = ?", [1])
    try:
        with pytest.raises(sqlite3.OperationalError):
            walks.dependents(chain._db, path, token, broken)
        fixed = walks.WalkStart(b"broken", "s.name = ?", ["base"])
        assert walks.walk_if_small(chain._db, path, token, fixed, None, 10)
    finally:  # (an entry left would fail other tests' checks of the table)
        walks._WALKING.pop(walks._walk_key(path, token, b"broken"), None)


def test_a_walk_made_is_made_for_the_event_loop_whatever_its_limit(chain: Catalog) -> None:
    """``walk_if_small`` of a walk already made says it is made, even with a limit the
    walk is past (it reads the walk kept rather than walking again)."""
    from cachedex.catalog import dependents as walks

    path, token = str(chain.path), chain.state_token()[0]
    start = walks.WalkStart(b"hunt-base", "s.name = ?", ["base"])
    assert not walks.walk_if_small(chain._db, path, token, start, None, 1)  # app and lib: 2
    assert walks.walk_if_small(chain._db, path, token, start, None, 2)
    assert walks.walk_if_small(chain._db, path, token, start, None, 0)
    assert walks.is_walked(path, token, b"hunt-base", None)
