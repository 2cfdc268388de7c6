"""Search: a parsed :class:`~cachedex.query.Query` answered from the catalog's indexes.

How it stays quick on a big tag:

- indexed columns (name, hash, target, os, compiler) narrow the rows first; what SQL
  cannot compare (Spack versions, variant sets) is checked by two SQL functions written
  in Python (:func:`.sql_functions.register_functions`) on the rows the indexes left;
- a query of facets only (target, os, compiler, platform), which may match tens of
  thousands of specs, is answered by the scope's :class:`~.facets.FacetIndex`;
- a query of versions and variants without a name (``+cuda @2: target=zen4``) by bit
  sets of its tag's positions (:mod:`.terms`), one per constraint, facet and stack;
- a ``^dependency`` by one walk up the edges per catalog state (:mod:`.dependents`),
  kept: a bit set of positions among the others without a name, or each row a name or
  hash selects looked up in it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from operator import itemgetter
from typing import Any, NamedTuple

import msgspec

from ..query import Query
from ..query_text import format_query
from ..values import ROOT_STACK
from .dependents import (
    WARMED_WALKS,
    Dependents,
    ReverseGraph,
    WalkStart,
    dependents,
    is_walked,
    most_depended_on,
    walk_if_small,
)
from .facets import COMPILER_COLUMN, STATE_CACHE, FacetIndex, FacetTerms, facet_terms, read_facet_index, scope_rows
from .order import in_result_order
from .other_compilers import compiled_also_by, other_compilers
from .rows import SearchPage
from .scopes import holder_index, mirror_ids, scope_mirrors
from .search_where import query_where, scope_where
from .summaries import RESULT_COLUMNS, found_specs, summaries
from .terms import TermIndex, bits_of, lowest_positions
from .virtuals import is_virtual, virtual_names, virtual_providers, virtual_users

__all__ = [
    "Matches",
    "explain_search",
    "facet_index",
    "found_bits",
    "search",
    "search_ids",
    "term_index",
    "walks_made",
    "warm_search",
    "warm_walks",
]

_encode = msgspec.json.encode


def _by_indexes(query: Query) -> bool:
    """No name or hash: the facet index answers (with the term index's bit sets when the
    query has versions or variants, and the walks' when it has dependencies), not SQL
    over the rows."""
    return query.name is None and query.hash_prefix is None


def _walks(
    db: sqlite3.Connection, path: str, token: str, query: Query, *, keep: bool = False
) -> list[tuple[bytes, Dependents]]:
    """(key, the specs depending on a match) of each of ``query``'s ``^dependencies``;
    ``keep``: kept as long as the state's graph (the warm-up's)."""
    graph = STATE_CACHE.peek(path, token, _GRAPH_KEY)  # read by a warm-up only
    found = []
    for dependency in query.dependencies:
        start = _walk_start(db, path, token, dependency)
        found.append((start.key, dependents(db, path, token, start, graph, keep=keep)))
    return found


def walks_made(db: sqlite3.Connection, path: str, token: str, query: Query, walk_up_to: int) -> bool:
    """Whether each of ``query``'s ``^dependencies`` is walked in the catalog state
    ``token``, so that its search reads kept bit sets, as a facet search does; one not
    walked yet that names a package or a hash is walked now unless it reaches more than
    ``walk_up_to`` specs (see :func:`.dependents.walk_if_small`)."""
    graph = STATE_CACHE.peek(path, token, _GRAPH_KEY)
    for dependency in query.dependencies:
        if is_walked(path, token, _encode(dependency), graph):
            continue
        if not walk_up_to or (dependency.name is None and dependency.hash_prefix is None):
            return False  # (and its first specs would be read by a scan)
        if not walk_if_small(db, path, token, _walk_start(db, path, token, dependency), graph, walk_up_to):
            return False
    return True


def _walk_start(db: sqlite3.Connection, path: str, token: str, dependency: Query) -> WalkStart:
    """Where the walk up from one ``^dependency`` begins: its key and the specs it matches."""
    facets = facet_terms(dependency, lambda: _compilers(db, path, token))
    also = compiled_also_by(db, path, token, dependency)
    if dependency.name is not None and is_virtual(db, path, token, dependency.name):
        if dependency.versions:  # (an interface's version: not compared, see .virtuals)
            return WalkStart(_encode(dependency), "0", [])
        child = query_where(msgspec.structs.replace(dependency, name=None), facets, also=also)
        term, params = virtual_users(dependency.name, child.sql, child.params)
        return WalkStart(_encode(dependency), term, params, itself=True)
    inner = query_where(dependency, facets, also=also)
    return WalkStart(_encode(dependency), inner.sql, inner.params)


_GRAPH_KEY = ("reverse graph",)
#: The SQL order of a search's matches by name or hash, before Python puts them in result order.
_BY_NAME = "ORDER BY s.name, s.version, s.hash"


def term_index(db: sqlite3.Connection, path: str, token: str, root: int | None) -> TermIndex:
    """The variant and version index of a tag (root mirror id ``root``), or of the whole
    catalog, in state ``token``, built on first use."""

    def make() -> TermIndex:
        at = facet_index(db, path, token, root, None).at
        # Read by spec id, as the facet index was: each row goes where that index put it.
        return TermIndex(scope_rows(db, root, "s.version, s.variants"), at)

    return STATE_CACHE.get(path, token, ("terms", root), make)  # type: ignore[no-any-return]


def _found_bits(
    db: sqlite3.Connection,
    path: str,
    token: str,
    query: Query,
    facets: FacetTerms,
    root: int | None,
    stack: int | None,
    also: list[int],
) -> tuple[FacetIndex, int]:
    """The tag's (or the catalog's) facet index, and the positions in it of the specs
    matching a query of versions, variants, dependencies and facets within the scope, as
    a bit set: one per constraint, ANDed with the stack's (a stack shares its tag's
    indexes). ``also``: the specs another of whose compilers the query names, which its
    compiler's term finds too."""
    index = facet_index(db, path, token, root, None)
    every = (1 << index.size) - 1
    found = term_index(db, path, token, root).bits(query) if query.versions or query.variants else every
    if facets and also:
        found &= index.bits([term for term in facets if term[0] != COMPILER_COLUMN])
        found &= index.bits([term for term in facets if term[0] == COMPILER_COLUMN]) | index.id_bits(also)
    elif facets:
        found &= index.bits(facets)
    for key, walked in _walks(db, path, token, query):
        found &= index.dependents_bits(key, walked)
    if root is not None and stack is not None:  # (a stack is always a tag's)
        found &= _stack_scope(db, path, token, root, stack)[1]
    return index, found


def found_bits(
    db: sqlite3.Connection, path: str, token: str, query: Query, *, tag: str | None, stack: str | None
) -> tuple[FacetIndex, TermIndex, int] | None:
    """For a query without a name or a hash: the facet and term indexes of the scope's
    tag (or of the catalog), and the positions in them of the specs ``query`` finds, as a
    bit set (in result order: the lowest position first). None for a query that names a
    package or a hash (its rows are read instead)."""
    if not _by_indexes(query):
        return None
    root, stack_id = scope_mirrors(db, path, token, tag, stack)
    facets = facet_terms(query, lambda: _compilers(db, path, token))
    index, found = _found_bits(db, path, token, query, facets, root, stack_id, compiled_also_by(db, path, token, query))
    return index, term_index(db, path, token, root), found


def _compilers(db: sqlite3.Connection, path: str, token: str) -> list[str]:
    """The distinct compiler strings (a few dozen) of the catalog's current state."""
    return STATE_CACHE.get(  # type: ignore[no-any-return]
        path, token, ("compilers",), lambda: [row[0] for row in db.execute("SELECT DISTINCT compiler FROM specs")]
    )


def facet_index(db: sqlite3.Connection, path: str, token: str, root: int | None, stack: int | None) -> FacetIndex:
    """The scope's facet index in state ``token``, built once per state."""
    if root is not None and stack is not None:
        return _stack_scope(db, path, token, root, stack)[0]
    return STATE_CACHE.get(  # type: ignore[no-any-return]
        path, token, ("facets", root), lambda: read_facet_index(db, root)
    )


def _stack_scope(db: sqlite3.Connection, path: str, token: str, root: int, stack: int) -> tuple[FacetIndex, int]:
    """A stack's facet index and the bit set of its specs among its tag's, both from its
    tag's index kept to the stack's members: no ordered pass over the specs again."""

    def make() -> tuple[FacetIndex, int]:
        tag = facet_index(db, path, token, root, None)
        members = {row[0] for row in db.execute("SELECT spec_id FROM members WHERE mirror_id = ?", (stack,))}
        index, positions = tag.select(members)
        return index, bits_of(positions, tag.size)

    return STATE_CACHE.get(path, token, ("stack", root, stack), make)  # type: ignore[no-any-return]


def search(
    db: sqlite3.Connection,
    path: str,
    token: str,
    query: Query,
    *,
    tag: str | None,
    stack: str | None,
    limit: int,
    offset: int,
) -> SearchPage:
    """Listed specs satisfying ``query``, in result order (``order.py``: by name, newest
    version first, then hash); run inside one read transaction whose state is
    ``token``. See ``Catalog.search``."""
    found = search_ids(db, path, token, query, tag=tag, stack=stack, limit=limit, offset=offset)
    if found.rows is not None:
        specs = summaries(db, path, token, tag, found.rows)
    else:
        specs = found_specs(db, path, token, tag, found.ids) if found.ids else ()
    return SearchPage(total=found.total, offset=offset, limit=limit, specs=specs)


class Matches(NamedTuple):
    """What :func:`search_ids` finds: how many, the catalog ids of the page in result
    order, and the page's whole rows when a name or a hash read them (else None)."""

    total: int
    ids: list[int]
    rows: list[Any] | None = None


def search_ids(
    db: sqlite3.Connection,
    path: str,
    token: str,
    query: Query,
    *,
    tag: str | None,
    stack: str | None,
    limit: int,
    offset: int,
) -> Matches:
    """:func:`search` with no summary made: for a caller that wants only the total, or
    reads one column of thousands of matches (a hint)."""
    mirrors = scope_mirrors(db, path, token, tag, stack)
    facets = facet_terms(query, lambda: _compilers(db, path, token))
    also = compiled_also_by(db, path, token, query)
    if _by_indexes(query):
        if query.versions or query.variants or query.dependencies or also:
            index, found = _found_bits(db, path, token, query, facets, *mirrors, also)
            total, ids = found.bit_count(), [index.ids[position] for position in lowest_positions(found, offset, limit)]
        else:
            total, ids = facet_index(db, path, token, *mirrors).matches(facets, offset, limit)
        return Matches(total, ids)
    # A name or a hash selects a few rows: all of them sorted, then a page taken.
    providers = virtual_providers(db, path, token, query.name)  # (``mpi``: the providers edges name)
    where = query_where(msgspec.structs.replace(query, dependencies=()), facets, providers=providers, also=also)
    scope_where(where, *mirrors)
    # An ORDER BY, although Python sorts: with it, SQLite picks the name or the hash
    # index, as it did when it made the page. The rows are whole: one query, not a
    # count and then a page.
    rows: Iterable[Any] = db.execute(f"SELECT {RESULT_COLUMNS} FROM specs s WHERE {where.sql} {_BY_NAME}", where.params)
    if query.dependencies:  # each looked up in the walks
        walks = [walked for _, walked in _walks(db, path, token, query)]
        rows = (row for row in rows if all(row[0] in walked for walked in walks))
    matches = in_result_order(rows, itemgetter(2, 3, 1))
    page = matches[offset : offset + limit]
    return Matches(len(matches), [row[0] for row in page], page)


def explain_search(
    db: sqlite3.Connection,
    path: str,
    token: str,
    query: Query,
    *,
    tag: str | None,
    stack: str | None,
    limit: int,
    offset: int,
) -> list[str]:
    """How :func:`search` answers ``query``: SQLite's plan of the rows' query, one line a
    step, or one line naming the indexes that answer a query without a name."""
    mirrors = scope_mirrors(db, path, token, tag, stack)
    compilers = lambda: _compilers(db, path, token)  # noqa: E731
    facets = facet_terms(query, compilers)
    also = compiled_also_by(db, path, token, query)
    walks = [f"the specs depending on ^{format_query(d)}: one walk up the edges, kept" for d in query.dependencies]
    if also:
        walks.append(f"and {len(also)} spec(s) another of whose compilers is %{query.compiler}, read from the edges")
    if _by_indexes(query) and (query.versions or query.variants or query.dependencies or also):
        index = facet_index(db, path, token, mirrors[0], None)
        within = " and the stack's" if mirrors[1] is not None else ""
        return [f"variant and version index: bit sets of the facets{within} over {index.size} specs", *walks]
    if _by_indexes(query):
        index = facet_index(db, path, token, *mirrors)
        return [f"facet index of {index.size} specs in {len(index.groups)} groups"]
    providers = virtual_providers(db, path, token, query.name)
    where = query_where(msgspec.structs.replace(query, dependencies=()), facets, providers=providers, also=also)
    scope_where(where, *mirrors)
    plan = db.execute(
        f"EXPLAIN QUERY PLAN SELECT {RESULT_COLUMNS} FROM specs s WHERE {where.sql} {_BY_NAME}", where.params
    )
    return [
        *(str(row[-1]) for row in plan),
        *(walk + ", each row looked up" for walk in walks),
        f"the matches sorted in result order, then rows {offset + 1} to {offset + limit} taken",
    ]


def warm_search(db: sqlite3.Connection, path: str, token: str) -> int:
    """Build the facet index of every scope (the whole catalog, each tag, each of its
    stacks), the variant and version index of each tag with its facet groups' column,
    the bit set of each stack's specs in its tag, what holds each spec of each tag and
    of the catalog, and the compiler list, the specs more than one compiler built and the
    virtual names of state ``token``; returns
    the number of scopes."""
    _compilers(db, path, token)
    # (~0.2 s for 1.6 million edges: not on a search's event loop; where some spec has two
    # compilers, each tag's and the catalog's index is ready to place them)
    compiled_twice = list(other_compilers(db, path, token))
    virtual_names(db, path, token)  # (~0.13 s a million edges: not on a search's event loop)
    holder_index(db, path, token, None)
    scopes: list[tuple[str | None, str | None]] = [(None, None)]
    scopes += db.execute(
        "SELECT t.name, m.stack FROM mirrors m JOIN tags t ON t.id = m.tag_id WHERE NOT m.dropped "
        "ORDER BY t.name, m.stack"
    ).fetchall()
    for tag, stack in scopes:
        mirrors = scope_mirrors(db, path, token, tag, stack)
        index = facet_index(db, path, token, *mirrors)  # a stack's bit set with it
        if compiled_twice and stack in (None, ROOT_STACK):
            index.positions_of(compiled_twice[:1])
        root = mirrors[0]
        if stack == ROOT_STACK:  # a tag's: its stacks' searches without a name share it
            holder_index(db, path, token, tag)
            term_index(db, path, token, root)
            facet_index(db, path, token, *mirrors).groups_column()
    return len(scopes)


def warm_walks(db: sqlite3.Connection, path: str, token: str) -> list[str]:
    """Read the link and run edges of state ``token`` into a graph, which later walks
    use, walk up from the :data:`~.dependents.WARMED_WALKS` most depended-on packages as
    their ``^name`` searches would, and place each walk in the search index of each tag
    and of the whole catalog (~10 ms each on a 250,000-spec tag); returns their names."""
    STATE_CACHE.get(path, token, _GRAPH_KEY, lambda: ReverseGraph(db))
    names = most_depended_on(db, WARMED_WALKS)
    walks = [
        walk for name in names for walk in _walks(db, path, token, Query(dependencies=(Query(name=name),)), keep=True)
    ]
    tags: list[str | None] = [None, *mirror_ids(db, path, token)]  # None: the whole catalog
    for tag in tags:
        index = facet_index(db, path, token, *scope_mirrors(db, path, token, tag, None))
        for key, walked in walks:
            index.dependents_bits(key, walked, keep=True)
    return names
