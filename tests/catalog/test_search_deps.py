"""``^dep`` queries and the hints of a search that finds nothing."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cachedex.catalog import Catalog
from cachedex.catalog.dependents import Dependents
from cachedex.catalog.schema import migrate
from cachedex.errors import BadQuery
from cachedex.query import parse
from cachedex.query_text import format_query
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import (
    Listed,
    compilers_of,
    in_result_order,
    listed_specs,
    record,
    replace_mirror,
    spack_target_satisfies,
    write_tag,
)


def _scope(catalog: Catalog, scope: str) -> tuple[str | None, str | None, dict[str, Listed]]:
    """(tag, stack, its listed specs by hash) of a test's scope in the demo: develop, its
    stack e4s, or the whole catalog."""
    tag = None if scope == "catalog" else "develop"
    stack = "e4s" if scope == "stack" else None
    tags = catalog.tag_names() if tag is None else [tag]
    return tag, stack, {s.hash: s for t in tags for s in listed_specs(catalog, t) if stack is None or stack in s.stacks}


def _names(catalog: Catalog, text: str) -> list[str]:
    return [s.name for s in catalog.search(parse(text), tag="t", limit=100).specs]


@pytest.fixture
def chain(tmp_path) -> Catalog:  # type: ignore[no-untyped-def]
    """app -> lib (link) -> base (run); app -> tool (build only); lib2 -> base (link)."""

    def dep(h: str, name: str, mask: int) -> Dependency:
        return Dependency(h * 32, name, mask, "")

    base = record("b" * 32, "base", version="1.3.1")
    tool = record("t" * 32, "tool", version="2.0")
    lib = record("l" * 32, "lib", version="4.1", variants=("+shared",), dependencies=(dep("b", "base", 4),))
    lib2 = record("m" * 32, "lib2", version="1.0", dependencies=(dep("b", "base", 2),))
    app = record("a" * 32, "app", version="0.9", dependencies=(dep("l", "lib", 2), dep("t", "tool", 1)))
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [base, tool, lib, lib2, app])
    return catalog


def test_a_dependency_at_any_depth_through_link_and_run(chain: Catalog) -> None:
    assert _names(chain, "^base") == ["app", "lib", "lib2"]
    assert _names(chain, "^base@1.3") == ["app", "lib", "lib2"]
    assert _names(chain, "app ^base") == ["app"]
    assert _names(chain, "^lib+shared") == ["app"]
    assert _names(chain, "^tool") == []  # build-only: installing app does not need it
    assert _names(chain, "^base@2") == []
    assert _names(chain, "^lib ^base") == ["app"]
    assert _names(chain, "app ^lib ^base") == ["app"]  # (a name and dependencies: each one holds)
    assert _names(chain, "lib2 ^lib ^base") == []
    assert _names(chain, "base ^base") == []  # a spec is not its own dependency


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [("app ^", "'^' needs a dependency", 4), ("^ ^x", "'^' needs a dependency", 0), ("^x@", "'@' needs a version", 3)],
)
def test_caret_errors_point_at_the_problem(text: str, message: str, column: int) -> None:
    with pytest.raises(BadQuery) as caught:
        parse(text)
    assert caught.value.problem.startswith(message) and caught.value.position == column


def test_queries_print_back_as_spack_syntax() -> None:
    for text in (
        "py-keras@3.9 target=aarch64: backend=jax",
        "hdf5 os=ubuntu24.04 +mpi ~cuda %gcc@13 ^openmpi@5",
        "^zlib",
    ):
        assert parse(format_query(parse(text))) == parse(text)


def test_zero_results_say_which_condition_nothing_satisfies(chain: Catalog, tmp_path: Path) -> None:
    page = chain.search(parse("lib@4.1 ~shared"), tag="t", hints=True)
    assert page.total == 0
    assert page.hints == (
        "nothing matches ~shared; without it, 1 spec in t matches, e.g. lib@4.1 +shared "
        "arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0",
    )
    # A spec built by no compiler (a pure Python package) is written without "%none".
    with Catalog(tmp_path / "py.sqlite") as catalog:
        write_tag(catalog, "t", [record("p" * 32, "py-keras", compiler="none", variants=("backend=tensorflow",))])
        (example,) = catalog.search(parse("py-keras backend=jax"), tag="t", hints=True).hints
    assert example == (
        "nothing matches backend=jax; without it, 1 spec in t matches, e.g. py-keras@1.3.1 "
        "backend=tensorflow arch=linux-ubuntu24.04-x86_64_v3"
    )
    (only,) = chain.search(parse("lbi"), tag="t", hints=True).hints
    assert only == "no package 'lbi' in t; did you mean lib?"
    (upper,) = chain.search(parse("LIB"), tag="t", hints=True).hints  # Spack's names are lower case
    assert upper == "no package 'LIB' in t; did you mean lib, lib2?"
    assert chain.search(parse("lib"), tag="t", hints=True).hints == ()  # found: no hints
    assert chain.search(parse("lib@4.1 ~shared"), tag="t").hints == ()  # not asked


@pytest.mark.parametrize(
    ("text", "hints"),
    [
        # versions are the name's: "@2:" alone is another question, not a hint
        ("base@2:", ("nothing matches @2:; without it, 1 spec in t matches, e.g. base@1.3.1 +shared "
                     "arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0",)),
        ("bse@1 +shared", ("no package 'bse' in t; did you mean base?",)),  # the name is the answer
        ("tool ^base", ("no tool spec matches the rest; without the name, 3 specs in t match, e.g. app@0.9 "
                        "+shared arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0",
                        "nothing matches ^base; without it, 1 spec in t matches, e.g. tool@2.0 +shared "
                        "arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0")),
    ],
)  # fmt: skip
def test_a_named_package_that_finds_nothing_is_not_said_to_have_no_spec(
    chain: Catalog, text: str, hints: tuple[str, ...]
) -> None:
    """A package that has specs is never "nothing matches" itself; one that has none is
    the whole answer."""
    assert chain.search(parse(text), tag="t", hints=True).hints == hints


def test_a_package_name_that_finds_nothing_says_where_it_is(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A name listed in another tag names that tag; a name the catalog knows only without
    a binary says so (it is not its own "did you mean"); close names are only those some
    mirror lists."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        libc = record("c" * 32, "glibc", version="2.35")
        write_tag(catalog, "t", [record("a" * 32, "app"), libc], members={"a" * 32: True, "c" * 32: False})
        write_tag(catalog, "u", [record("z" * 32, "zlib-ng", version="2.2.1"), record("y" * 32, "glibd")])
        with catalog.writing_tag("u") as writer:  # glibd leaves
            replace_mirror(writer, "root", {"z" * 32: True}, checksum="y")

        def hint(name: str, tag: str | None = "t") -> str:
            (only,) = catalog.search(parse(name), tag=tag, hints=True).hints
            return only

        assert hint("zlib-ng") == "no package 'zlib-ng' in t; it is in u (1 spec)"
        assert hint("glibc", None) == (
            "no spec of 'glibc' in the catalog has a binary; mirrors hold glibc@2.35 /ccccccc only as a dependency, "
            "without one"
        )
        assert hint("glibd") == (
            "no spec of 'glibd' in t has a binary; the catalog keeps glibd@1.3.1 /yyyyyyy from an earlier sync, "
            "no mirror holds it now"
        )
        assert hint("glibx") == "no package 'glibx' in t"  # glibc and glibd: no binary anywhere
        assert hint("ap") == "no package 'ap' in t; did you mean app?"


def test_cos5_a_self_loop_is_not_in_the_catalogs_closure(tmp_path) -> None:  # type: ignore[no-untyped-def]
    looped = record(
        "s" * 32, "loop", dependencies=(Dependency("s" * 32, "loop", 2, ""), Dependency("b" * 32, "base", 2, ""))
    )
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [looped, record("b" * 32, "base")])
        assert [edge.hash for edge in catalog.closure("s" * 32)] == ["b" * 32]


@pytest.mark.parametrize(
    "text",
    [
        "+shared",
        "~doc",
        "@1:",
        "@2.2.1",
        "build_type=Release",
        "fabrics:=none",
        "+shared @1: target=x86_64_v3",
        "@:2 os=ubuntu24.04",
        "+shared %gcc",
        "@2: %gcc@12:",
        "target=x86_64_v3",
        "+shared target=:zen4",
        "os=ubuntu22.04 %gcc",
        "~nope",
    ],
)
@pytest.mark.parametrize("scope", ["tag", "stack", "catalog"])
def test_queries_without_a_name_match_what_each_spec_says(demo_run, text: str, scope: str) -> None:  # type: ignore[no-untyped-def]
    """Answered from bit sets of the tag's (or the catalog's) positions, or from the
    scope's facet index (a stack's made from its tag's): the same specs, in the same
    order, as checking every listed spec of the scope one by one."""
    from cachedex.query import variants_satisfy
    from cachedex.versions import version_satisfies

    query = parse(text)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        tag, stack, every = _scope(catalog, scope)
        found = catalog.search(query, tag=tag, stack=stack, limit=100_000)
        page = catalog.search(query, tag=tag, stack=stack, limit=7, offset=5)
        how = "variant and version index" if query.versions or query.variants else "facet index"
        explained = catalog.explain_search(query, tag=tag, stack=stack)
        compilers = compilers_of(catalog)
    # (a query of facets alone reads bit sets too where a spec another compiler built is found)
    if any("another of whose compilers" in line for line in explained):
        how = "variant and version index"
    assert explained[0].startswith(how), explained

    def compiler_matches(compiler: str) -> bool:
        name, _, version = compiler.partition("@")
        return query.compiler is None or (
            name == query.compiler
            and (not query.compiler_versions or version_satisfies(version, query.compiler_versions))
        )

    expected = [
        s.hash
        for s in in_result_order(every.values())
        if (not query.versions or version_satisfies(s.version, query.versions))
        and variants_satisfy(s.variants, query)
        and (query.target is None or spack_target_satisfies(s.target, query.target))
        and (query.os is None or s.os == query.os)
        and any(map(compiler_matches, compilers[s.hash]))  # (any of its C, C++ and Fortran compilers)
    ]
    assert [s.hash for s in found.specs] == expected and found.total == len(expected)
    assert [s.hash for s in page.specs] == expected[5:12] and page.total == len(expected)
    if text != "~nope" and scope != "stack":
        assert expected, "each query but the last finds something in the demo"


@pytest.mark.parametrize(
    "text",
    [
        "^zlib-ng",
        "^python@3.13",
        "^openmpi",
        "^hdf5+mpi",
        "+mpi ^hdf5",
        "target=x86_64_v3 ^openblas",
        "^glibc ^python",
        "^gmake",  # build-only everywhere: nothing
        "^nosuch",
        "py-numpy ^python",
        "hdf5@1.14 ^openmpi",
        "hdf5 ^openmpi ^zlib-ng",
    ],
)
@pytest.mark.parametrize("scope", ["tag", "stack", "catalog"])
def test_dependency_queries_match_what_each_specs_closure_says(demo_run, text: str, scope: str) -> None:  # type: ignore[no-untyped-def]
    """Each ``^dep`` is one walk up the edges, kept (a bit set of positions without a
    name, each row looked up with one): the same specs, in the same order, on every
    page, as checking every listed spec's link/run closure one by one."""
    from cachedex.query import Query, variants_satisfy
    from cachedex.versions import version_satisfies

    query = parse(text)

    def matches(name: str, version: str, variants: tuple[str, ...], wanted: Query) -> bool:
        return (
            (wanted.name is None or name == wanted.name)
            and (not wanted.versions or version_satisfies(version, wanted.versions))
            and variants_satisfy(variants, wanted)
        )

    with Catalog(demo_run.catalog, readonly=True) as catalog:
        tag, stack, every = _scope(catalog, scope)
        found = catalog.search(query, tag=tag, stack=stack, limit=100_000)
        pages = [catalog.search(query, tag=tag, stack=stack, limit=7, offset=at) for at in (0, 7, 14)]
        explained = catalog.explain_search(query, tag=tag, stack=stack)
        variants: dict[str, tuple[str, ...]] = {}

        def closure_matches(dag_hash: str, dependency: Query) -> bool:
            for edge in catalog.closure(dag_hash):
                if edge.hash not in variants:
                    summary = catalog.spec_summary(edge.hash)
                    variants[edge.hash] = summary.variants if summary is not None else ()
                if matches(edge.name, edge.version, variants[edge.hash], dependency):
                    return True
            return False

        expected = [
            s.hash
            for s in in_result_order(every.values())
            if matches(s.name, s.version, s.variants, query)
            and (query.target is None or s.target == query.target)
            and all(closure_matches(s.hash, dependency) for dependency in query.dependencies)
        ]
    assert [s.hash for s in found.specs] == expected and found.total == len(expected)
    for at, page in zip((0, 7, 14), pages, strict=True):
        assert [s.hash for s in page.specs] == expected[at : at + 7] and page.total == len(expected)
    assert any(line.startswith("the specs depending on ^") for line in explained)
    if text not in ("^gmake", "^nosuch") and scope == "tag":
        assert expected, "each query but two finds something in the demo's develop"


def test_a_dependency_is_walked_once_per_catalog_state(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Its count, its pages and the other queries with the same ``^dep`` read the walk
    kept; a sync (a new catalog state) walks again, and finds what it added."""
    base = record("b" * 32, "base")
    lib = record("l" * 32, "lib", dependencies=(Dependency("b" * 32, "base", 2, ""),))
    app = record("a" * 32, "app", dependencies=(Dependency("l" * 32, "lib", 2, ""),))
    walks: list[str] = []
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [base, lib])
        catalog._db.set_trace_callback(lambda sql: walks.append(sql) if "AS walked_from" in sql else None)
        for text, offset in (("^base", 0), ("^base", 1), ("lib ^base", 0), ("+shared ^base", 0)):
            catalog.search(parse(text), tag="t", offset=offset)
        assert len(walks) == 1
        assert _names(catalog, "^base") == ["lib"]
        write_tag(catalog, "t", [app], members={h * 32: True for h in "bla"})
        assert _names(catalog, "^base") == ["app", "lib"] and _names(catalog, "app ^base") == ["app"]
        assert len(walks) == 2


def test_a_catalog_says_which_dependencies_are_walked_in_its_state(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """What lets a server answer a ``^dep`` search at once rather than in a thread: its
    walk made in the present state, by a search (kept for now) or the warm-up (kept as
    long as the state's graph); a sync makes a new state, walked again."""
    from cachedex.catalog.terms import BITS_CACHE

    base = record("b" * 32, "base")
    lib = record("l" * 32, "lib", dependencies=(Dependency("b" * 32, "base", 2, ""),))
    app = record("a" * 32, "app", dependencies=(Dependency("l" * 32, "lib", 2, ""),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [base, lib])
        assert catalog.walks_made(parse("zlib"))  # nothing to walk
        assert not catalog.walks_made(parse("^base")) and not catalog.walks_made(parse("lib ^base"))
        catalog.search(parse("lib ^base"), tag="t")
        assert catalog.walks_made(parse("^base")) and catalog.walks_made(parse("+shared ^base"))
        assert not catalog.walks_made(parse("^base ^lib")) and not catalog.walks_made(parse("^base@2"))
        write_tag(catalog, "t", [app], members={h * 32: True for h in "bla"})
        assert not catalog.walks_made(parse("^base"))
        catalog.search(parse("^base"), tag="t")
        assert catalog.walks_made(parse("^base"))
        BITS_CACHE.max_bytes, kept = 0, BITS_CACHE.max_bytes
        try:
            catalog.search(parse("+shared"), tag="t")  # another bit set pushes the walk out
            assert not catalog.walks_made(parse("^base"))
            assert catalog.warm_walks() == ["base", "lib"]
            catalog.search(parse("+shared"), tag="t")
            assert catalog.walks_made(parse("^base"))  # the graph's, out of the cache's reach
        finally:
            BITS_CACHE.max_bytes = kept


def test_a_thread_waiting_for_a_small_walk_made_on_the_event_loop_takes_it(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A search in a thread asking for a walk that ``walk_if_small`` is making waits for
    it and reads it; neither takes the other's entry out of the table of walks under way
    (the walk's maker used to find its entry gone: a KeyError on a server's event loop)."""
    from cachedex.catalog import dependents as walks

    base = record("b" * 32, "base")
    lib = record("l" * 32, "lib", dependencies=(Dependency("b" * 32, "base", 2, ""),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [base, lib])
    for round_ in range(12):  # the two threads' ends race: a dozen rounds met it every time
        failures, made, found = _walk_made_while_a_thread_waits(tmp_path / "c.sqlite", f"t{round_}", monkeypatch)
        assert not failures and made == [True], failures
        assert len(found) == 1 and 2 in found[0] and 1 not in found[0] and not walks._WALKING


def _walk_made_while_a_thread_waits(
    path: Path, token: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[BaseException], list[bool], list[Dependents]]:
    """``walk_if_small`` of ^base in one thread, ``dependents`` of it in another that
    waits for that walk, both ending together: (the first's errors, what it returned,
    what the second found)."""
    from cachedex.catalog import dependents as walks

    walk, started, go = walks._walk, threading.Event(), threading.Event()

    def slow(*args: Any, **kwargs: Any) -> Any:
        started.set()
        assert go.wait(10)
        return walk(*args, **kwargs)

    monkeypatch.setattr(walks, "_walk", slow)
    start = walks.WalkStart(b"base", "s.name = ?", ["base"])
    failures: list[BaseException] = []
    made: list[bool] = []
    found: list[Dependents] = []

    def inline() -> None:
        with Catalog(path, readonly=True) as reader:
            try:
                made.append(walks.walk_if_small(reader._db, str(path), token, start, None, 10))
            except BaseException as exc:  # noqa: BLE001 (reported by the caller)
                failures.append(exc)

    def in_thread() -> None:
        with Catalog(path, readonly=True) as reader:
            found.append(walks.dependents(reader._db, str(path), token, start))

    maker = threading.Thread(target=inline)
    maker.start()
    assert started.wait(10)
    waiter = threading.Thread(target=in_thread)
    waiter.start()
    time.sleep(0.02)  # the waiter now waits on the maker's lock
    with walks._WALKING_LOCK:  # both end together: the waiter wakes as the maker ends
        go.set()
        time.sleep(0.02)
    maker.join(10)
    waiter.join(10)
    monkeypatch.setattr(walks, "_walk", walk)
    return failures, made, found


def test_threads_asking_for_one_dependency_together_walk_it_once(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A server's threads searching the same new ``^dep`` at once: one walks, the others
    wait for its walk (each with its own connection, as a server's threads have)."""
    import threading
    import time

    from cachedex.catalog import dependents as walking

    base = record("b" * 32, "base")
    lib = record("l" * 32, "lib", dependencies=(Dependency("b" * 32, "base", 2, ""),))
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [base, lib])
    walks: list[int] = []
    made = walking.bits_of

    def slow_bits(positions, size):  # type: ignore[no-untyped-def]
        walks.append(size)
        time.sleep(0.3)  # a long walk: the other threads ask meanwhile
        return made(positions, size)

    monkeypatch.setattr(walking, "bits_of", slow_bits)
    start = threading.Barrier(4)
    found: list[list[str]] = []

    def search() -> None:
        with Catalog(path, readonly=True) as reader:
            start.wait(timeout=10)
            found.append([s.name for s in reader.search(parse("^base"), tag="t").specs])

    threads = [threading.Thread(target=search) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert found == [["lib"]] * 4
    assert len(walks) == 1


def test_a_warm_catalog_has_walked_its_most_depended_on_packages(chain: Catalog, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A server's warm-up reads the link/run edges once and walks up from the packages
    most depended on; their ``^dep`` searches then walk nothing, even once the other bit
    sets have pushed theirs out, and the others walk the edges read, not SQL, with the
    same answers."""
    from cachedex.catalog.dependents import Dependents, most_depended_on
    from cachedex.catalog.terms import BITS_CACHE

    monkeypatch.setattr(BITS_CACHE, "max_bytes", 0)  # each bit set pushes the one before out
    placed: list[int] = []
    place = Dependents.position_bits
    monkeypatch.setattr(Dependents, "position_bits", lambda walk, *a: placed.append(1) or place(walk, *a))

    assert most_depended_on(chain._db, 20) == ["base", "lib"]  # tool: build-only edges alone
    assert most_depended_on(chain._db, 1) == ["base"]
    assert chain.warm_walks() == ["base", "lib"]
    assert len(placed) == 4  # each walk in the tag's search index and the catalog's
    statements: list[str] = []
    chain._db.set_trace_callback(statements.append)
    assert _names(chain, "^base") == ["app", "lib", "lib2"] and _names(chain, "^lib") == ["app"]
    assert [s.name for s in chain.search(parse("^base"), limit=100).specs] == ["app", "lib", "lib2"]
    assert not [sql for sql in statements if "AS walked_from" in sql]  # walked while warming
    assert len(placed) == 4  # and placed in the scopes' indexes then
    assert _names(chain, "^lib+shared") == ["app"] and _names(chain, "^base@1.3") == ["app", "lib", "lib2"]
    assert len([sql for sql in statements if "AS walked_from" in sql]) == 2
    # the graph walked (the page's compilers aside: read by parent)
    assert not [sql for sql in statements if "json_each" in sql and "FROM edges" in sql and ",fortran," not in sql]


def _edges_db(edges: list[tuple[int, int, int]]) -> sqlite3.Connection:
    """A catalog in memory whose edges are ``edges`` (parent, child, deptypes), and no
    specs: the walks read the edges alone (foreign keys are off, as a sync writes them)."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    migrate(db, Path(":memory:"), readonly=False)
    db.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, '')", edges)
    return db


@settings(max_examples=150)
@given(
    edges=st.lists(st.tuples(st.integers(1, 40), st.integers(1, 40), st.integers(0, 15)), max_size=120),
    start=st.lists(st.integers(0, 45), max_size=6),
    limit=st.integers(0, 45),
)
def test_the_graph_walks_up_as_sql_does(edges: list[tuple[int, int, int]], start: list[int], limit: int) -> None:
    """Any edges (cycles, self loops, build- and test-only edges), any start (ids with
    no edges, above every id): the graph's walk finds what the walk in SQL finds, and
    both give up (None) exactly when it is more than a limit."""
    from cachedex.catalog.dependents import ReverseGraph, _walk_in_sql

    db = _edges_db(edges)
    found = ReverseGraph(db).walk(start)
    assert found is not None and found == _walk_in_sql(db, list(start))
    within = found if len(found) <= limit else None
    assert ReverseGraph(db).walk(start, limit) == within == _walk_in_sql(db, list(start), limit)


def test_a_walk_for_the_event_loop_is_made_only_if_small_and_not_under_way(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``walk_if_small``: a walk that reaches more than its limit is given up and not
    kept; one within it is kept, as a search's walk; one another thread is making is not
    waited for."""
    from cachedex.catalog import dependents as walks

    base = record("b" * 32, "base")
    libs = [record(f"{n:032x}", f"lib{n}", dependencies=(Dependency("b" * 32, "base", 2, ""),)) for n in range(3)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [base, *libs])
        path, token = str(catalog.path), catalog.state_token()[0]

        def small(name: str, limit: int) -> bool:
            start = walks.WalkStart(name.encode(), "s.name = ?", [name])
            return walks.walk_if_small(catalog._db, path, token, start, None, limit)

        assert not small("base", 2) and not walks.is_walked(path, token, b"base", None)
        assert small("base", 3) and walks.is_walked(path, token, b"base", None)
        key = walks._walk_key(path, token, b"lib0")
        walks._WALKING[key] = threading.Lock()
        try:
            assert not small("lib0", 10) and not walks.is_walked(path, token, b"lib0", None)
        finally:
            del walks._WALKING[key]
        assert small("lib0", 10) and not walks._WALKING
        assert [s.name for s in catalog.search(parse("^base"), tag="t").specs] == ["lib0", "lib1", "lib2"]


def test_the_graph_walks_up_the_demo_as_sql_does(demo_run) -> None:  # type: ignore[no-untyped-def]
    from cachedex.catalog.dependents import ReverseGraph, _walk_in_sql

    with Catalog(demo_run.catalog, readonly=True) as catalog:
        db = catalog._db
        graph = ReverseGraph(db)
        names = [name for (name,) in db.execute("SELECT DISTINCT name FROM specs ORDER BY name")]
        walked = 0
        for name in names:
            start = [i for (i,) in db.execute("SELECT id FROM specs WHERE name = ?", (name,))]
            found = graph.walk(start)
            assert found == _walk_in_sql(db, start), name
            walked += bool(found)
        assert walked > 10  # the demo's libraries have dependents


@settings(max_examples=200)
@given(
    ids=st.lists(st.integers(0, 300), unique=True, max_size=60).flatmap(st.permutations),
    held=st.sets(st.integers(0, 200), max_size=80),
)
def test_a_walks_positions_in_a_scope_are_the_ids_it_holds(ids: list[int], held: set[int]) -> None:
    """Any scope order, ids above the highest held, none, one: the bit set gathered in C
    has the positions whose ids the walk holds."""
    import operator

    from cachedex.catalog.dependents import Dependents
    from cachedex.catalog.terms import bits_of

    walked = Dependents(bits_of(held, max(held) + 1) if held else 0)
    expected = sum(1 << at for at, spec_id in enumerate(ids) if spec_id in held)
    gather = operator.itemgetter(*ids) if len(ids) >= 2 else operator.itemgetter(0)  # unused below two
    assert walked.position_bits(ids, gather, max(ids, default=0)) == expected


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("^tool", "nothing in t matches ^tool: 1 spec in the catalog needs tool only to build it, and ^ follows "
         "link and run dependencies (what installing a spec needs)"),
        ("^app", "nothing in t matches ^app: no spec in t depends on app through link or run dependencies"),
        ("^nosuch", "nothing in t matches ^nosuch: no package 'nosuch' in the catalog"),
        ("^bse", "nothing in t matches ^bse: no package 'bse' in the catalog; did you mean base?"),
        ("^base@2", "nothing in t matches ^base@2; ^base alone: 3 specs in t match: ^base@1.3.1 (3 specs)"),
        ("%gcc@99", "nothing in t matches %gcc@99; the versions of gcc in t: %gcc@13.2.0 (5 specs)"),
        ("+nosuch", "nothing in t matches +nosuch"),
    ],
)  # fmt: skip
def test_one_condition_that_finds_nothing_says_why(chain: Catalog, text: str, hint: str) -> None:
    """A query of one condition has none to drop ("even with one condition dropped"
    would mislead): it says what a looser one finds, or why ``^dep`` finds nothing."""
    assert chain.search(parse(text), tag="t", hints=True).hints == (hint,)
    # Two conditions, each nothing: the message for more than one condition stays.
    (both,) = chain.search(parse("+nosuch ^nosuch"), tag="t", hints=True).hints
    assert both == "no spec in t matches even with one condition dropped"


@pytest.fixture
def providers(tmp_path) -> Catalog:  # type: ignore[no-untyped-def]
    """Virtuals on edges, as Spack 0.21 and later write them: app1 -> openmpi as mpi (link),
    app2 -> mpich as mpi (run), app3 -> openmpi by name (link), top -> app1 (link),
    tool -> mpich as mpi (build only), app1 -> gcc as c (build), lib -> glibc as libc."""

    def dep(h: str, name: str, mask: int, virtuals: str = "") -> Dependency:
        return Dependency(h * 32, name, mask, virtuals)

    specs = [
        record("o" * 32, "openmpi", version="5.0.5", target="zen2"),
        record("m" * 32, "mpich", version="4.2.1"),
        record("g" * 32, "gcc", version="13.2.0"),
        record("c" * 32, "glibc", version="2.39"),
        record("l" * 32, "lib", dependencies=(dep("c", "glibc", 2, "libc"),)),
        record("a" * 32, "app1", dependencies=(dep("o", "openmpi", 3, "mpi"), dep("g", "gcc", 1, "c,cxx"))),
        record("b" * 32, "app2", dependencies=(dep("m", "mpich", 4, "mpi"),)),
        record("d" * 32, "app3", dependencies=(dep("o", "openmpi", 2),)),
        record("t" * 32, "top", dependencies=(dep("a", "app1", 2),)),
        record("u" * 32, "tool", dependencies=(dep("m", "mpich", 1, "mpi"),)),
    ]
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", specs)
    return catalog


def test_a_virtual_dependency_matches_what_depends_on_a_provider(providers: Catalog) -> None:
    """``^mpi`` names no package: as Spack's ``satisfies``, it matches the specs whose
    DAG, through link or run edges, holds an edge using some spec as mpi (app3 names
    openmpi itself, with no virtual on its edge: not); through build edges only,
    nothing (tool)."""
    assert _names(providers, "^mpi") == ["app1", "app2", "top"]
    assert _names(providers, "app1 ^mpi") == ["app1"]
    assert _names(providers, "^mpi target=zen2") == ["app1", "top"]  # (the provider's)
    assert _names(providers, "^libc") == ["lib"]
    assert _names(providers, "^openmpi") == ["app1", "app3", "top"]  # a package is still a package
    assert _names(providers, "^c") == []  # a compiler is a build dependency
    assert _names(providers, "^mpi@3") == []  # an interface's version, which cachedex does not compare


def test_a_virtual_alone_finds_its_providers(providers: Catalog) -> None:
    """As ``spack find mpi`` lists the MPIs installed: the specs some edge uses as mpi."""
    assert _names(providers, "mpi") == ["mpich", "openmpi"]
    assert _names(providers, "mpi target=zen2") == ["openmpi"]
    assert _names(providers, "libc") == ["glibc"]
    assert _names(providers, "mpi@3") == []
    assert _names(providers, "openmpi") == ["openmpi"]
    (hint,) = providers.search(parse("mpi@3"), tag="t", hints=True).hints
    assert hint.startswith("nothing in t matches mpi@3: mpi is a virtual package, which mpich, openmpi provide")
    assert hint.endswith("name the provider and its version (mpich@4.2.1)")
    write_tag(providers, "u", [record("z" * 32, "zlib")])  # a tag with no MPI
    assert providers.search(parse("mpi"), tag="u", hints=True).hints == (
        "nothing in u matches mpi: mpi is a virtual package, which mpich, openmpi provide in the catalog, "
        "and no binary of them is in u",
    )


def test_a_virtual_that_finds_nothing_says_what_provides_it(providers: Catalog) -> None:
    def hints(text: str) -> tuple[str, ...]:
        return providers.search(parse(text), tag="t", hints=True).hints

    assert hints("^mpi@3") == (
        "nothing in t matches ^mpi@3: mpi is a virtual package, which mpich, openmpi provide in the catalog; "
        "cachedex does not compare the version of a virtual (the interface's, not its provider's): drop it, "
        "or name the provider and its version (^mpich@4.2.1)",
    )
    assert hints("^c") == (
        "nothing in t matches ^c: c is a virtual package, which gcc provides in the catalog, and specs need "
        "it only to build, while ^ follows link and run dependencies (what installing a spec needs)",
    )
    # The search likely meant, which the search page links: the virtual without its version.
    for text, meant in [("^mpi@3", "^mpi"), ("app2 ^mpi@3", "app2 ^mpi"), ("mpi@3", "mpi"), ("^c", "")]:
        assert providers.search(parse(text), tag="t", hints=True).suggestion == meant, text
    first, virtual = hints("app2 ^mpi@3")
    assert first.startswith("nothing matches ^mpi@3; without it, 1 spec in t matches, e.g. app2@1.3.1")
    assert virtual.startswith("nothing matches ^mpi@3: mpi is a virtual package, which mpich, openmpi provide")


@pytest.mark.parametrize("text", ["^libc", "cmake ^libc", "+shared ^libc", "^c"])
@pytest.mark.parametrize("scope", ["tag", "catalog"])
def test_virtual_dependency_queries_match_what_each_specs_closure_says(demo_run, text: str, scope: str) -> None:  # type: ignore[no-untyped-def]
    """On the demo (glibc is its specs' libc, compilers their c), Spack's rule: the specs
    whose link or run DAG (the spec and its closure) holds a link or run edge that
    uses a spec as that virtual."""
    from cachedex.query import variants_satisfy

    query = parse(text)
    (virtual,) = [d.name for d in query.dependencies]
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        tag, stack, every = _scope(catalog, scope)
        found = catalog.search(query, tag=tag, stack=stack, limit=100_000)
        closures = {h: {e.hash for e in catalog.closure(h)} for h in every}
        reached = set(every).union(*closures.values())
        users = {
            h
            for h in reached
            for e in catalog.edges_of(h)
            if virtual in e.virtuals.split(",") and e.deptypes & (DEPTYPE_BITS["link"] | DEPTYPE_BITS["run"])
        }
    expected = [
        s.hash
        for s in in_result_order(every.values())
        if (query.name is None or s.name == query.name)
        and variants_satisfy(s.variants, query)
        and ({s.hash} | closures[s.hash]) & users
    ]
    assert [s.hash for s in found.specs] == expected and found.total == len(expected)
    assert bool(expected) == (virtual == "libc"), "the demo's specs link glibc and only build with a compiler"


@pytest.mark.parametrize("text", ["mpi", "blas target=x86_64_v3", "zlib-api os=rhel8", "libc"])
@pytest.mark.parametrize("scope", ["tag", "stack", "catalog"])
def test_a_virtual_alone_matches_the_specs_edges_use_as_it(demo_run, text: str, scope: str) -> None:  # type: ignore[no-untyped-def]
    """On the demo: the listed specs of the scope that some edge of the catalog uses as
    that virtual, with the query's other conditions, in result order."""
    query = parse(text)
    assert query.name is not None
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        tag, stack, every = _scope(catalog, scope)
        found = catalog.search(query, tag=tag, stack=stack, limit=100_000)
        used = {e.hash for t in catalog.tag_names() for s in listed_specs(catalog, t) for e in catalog.edges_of(s.hash)}
        used |= {e.hash for h in list(used) for e in catalog.edges_of(h)}
        provided = {
            e.hash for h in used | set(every) for e in catalog.edges_of(h) if query.name in e.virtuals.split(",")
        }
    expected = [
        s.hash
        for s in in_result_order(every.values())
        if s.hash in provided
        and (query.target is None or s.target == query.target)
        and (query.os is None or s.os == query.os)
    ]
    assert [s.hash for s in found.specs] == expected and found.total == len(expected)
    if scope == "tag" and text != "libc":  # (glibc is an external: no binary)
        assert expected, "the demo's develop has binaries of each provider"


def test_exact_variant_values_in_every_search_path(demo_run) -> None:  # type: ignore[no-untyped-def]
    """``languages:=c,c++`` is those values exactly (gcc's are c,c++,fortran): none, by
    name (SQL) and without one (bit sets); ``languages=c,c++`` is held by them."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for name in ("", "gcc "):
            held = catalog.search(parse(f"{name}languages=c,c++"), tag="develop")
            exact = catalog.search(parse(f"{name}languages:=c,c++"), tag="develop")
            whole = catalog.search(parse(f"{name}languages:=c,c++,fortran"), tag="develop")
            assert held.total > 0 and exact.total == 0 and whole.total == held.total, name


def test_a_compiler_without_a_version_satisfies_no_version_asked_for(tmp_path: Path) -> None:
    """A spec whose compiler's version is unknown (its compiler's record absent) is
    built by gcc, at no version one can name: `%gcc` finds it, `%gcc@13` does not."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, "p", compiler="gcc"), record("b" * 32, "q", compiler="gcc@13.2.0")])
        for text in ("%gcc@13", "%gcc@=9", "p %gcc@1"):
            assert {s.name for s in catalog.search(parse(text), tag="t").specs} <= {"q"}, text
        assert {s.name for s in catalog.search(parse("%gcc"), tag="t").specs} == {"p", "q"}


def test_versions_as_an_index_may_hold_them_can_be_searched(tmp_path: Path) -> None:
    """A git branch's version holds a '/', a git ref's its Spack version after '=': both
    are versions a mirror lists, and a search finds them (it refused them as bad)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(
            catalog,
            "t",
            [record("a" * 32, "p", version="git.release/1.0"), record("b" * 32, "q", version="git.abc=2.2.1")],
        )
        for text, name in (("p@git.release/1.0", "p"), ("@=git.release/1.0", "p"), ("q@git.abc=2.2.1", "q")):
            assert [s.name for s in catalog.search(parse(text), tag="t").specs] == [name], text
