"""Binaries that more than one compiler built: ``%gcc`` finds them by any of theirs.

A spec keeps one compiler (``specs.compiler``: its C's, else its C++'s, else its
Fortran's), the one a tag page lists and a facet filter picks. A Spack 1.0 spec names
its compilers as build edges that provide ``c``, ``cxx`` or ``fortran``, and a spec may
have two: apple-clang for C and C++ with gfortran from gcc (as Spack's darwin stacks are
built), or a C++ of another vendor. A ``%gcc`` search finds it by those too, as Spack's
``%gcc`` (a direct dependency named gcc) does.

Such specs are few, and no column names them: they are read from the edges once per
catalog state (one pass over the edges in SQLite, ~0.2 s for 1.6 million), and only
when a search names a compiler.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

import msgspec

from ..query import Query
from .facets import STATE_CACHE, compiler_matcher
from .reads import spec_ids

__all__ = ["compiled_also_by", "other_compilers", "other_compilers_by_hash", "other_compilers_of", "others_of_hashes"]

#: Where :func:`other_compilers` and :func:`other_compilers_by_hash` keep their answers
#: in the state cache.
_KEY = ("other compilers",)
_BY_HASH = ("other compilers", "by hash")

#: An edge whose child compiles one of its parent's languages (the column lists the
#: virtuals comma-separated).
_COMPILES = " OR ".join(f"instr(',' || e.virtuals || ',', ',{language},') > 0" for language in ("c", "cxx", "fortran"))


def other_compilers(db: sqlite3.Connection, path: str, token: str) -> dict[int, tuple[str, ...]]:
    """Each spec that more than one compiler built (by id), with the compilers other
    than its own (``name@version``), in state ``token``: read once per state."""
    return STATE_CACHE.get(path, token, _KEY, lambda: _read(db, "1", ()))  # type: ignore[no-any-return]


def other_compilers_by_hash(db: sqlite3.Connection, path: str, token: str) -> dict[str, tuple[str, ...]]:
    """:func:`other_compilers` by each spec's hash: what pages, which stream their specs
    by hash, read to filter and count a spec under each of its compilers."""

    def by_hash() -> dict[str, tuple[str, ...]]:
        others = other_compilers(db, path, token)
        if not others:
            return {}
        ids = msgspec.json.encode(list(others)).decode()
        rows = db.execute("SELECT id, hash FROM specs WHERE id IN (SELECT value FROM json_each(?))", (ids,))
        return {dag_hash: others[spec_id] for spec_id, dag_hash in rows}

    return STATE_CACHE.get(path, token, _BY_HASH, by_hash)  # type: ignore[no-any-return]


def _read(db: sqlite3.Connection, among: str, params: Sequence[object]) -> dict[int, tuple[str, ...]]:
    """:func:`other_compilers` of the specs whose edges ``among`` (SQL over ``edges e``,
    with ``params``) keeps: every one (``"1"``), or a page's."""
    # Edges are stored by parent: the grouping streams, and only specs with two
    # compiling edges or more (one compiler for C and C++ is one edge) are joined.
    rows = db.execute(
        "SELECT e.parent, s.compiler, c.name, c.version FROM edges e "
        "JOIN specs c ON c.id = e.child JOIN specs s ON s.id = e.parent "
        f"WHERE e.parent IN (SELECT e.parent FROM edges e WHERE {among} AND e.virtuals != '' AND ({_COMPILES}) "
        "GROUP BY e.parent HAVING count(*) > 1) "
        f"AND e.virtuals != '' AND ({_COMPILES}) ORDER BY e.parent, c.name, c.version",
        params,
    )
    found: dict[int, tuple[str, ...]] = {}
    for spec_id, own, name, version in rows:
        compiler = f"{name}@{version}" if version else name
        if compiler != own and compiler not in found.get(spec_id, ()):
            found[spec_id] = (*found.get(spec_id, ()), compiler)
    return found


def compiled_also_by(db: sqlite3.Connection, path: str, token: str, query: Query) -> list[int]:
    """The ids of the specs another of whose compilers satisfies the query's
    ``%compiler`` (none when the query names none), in id order: what a search adds to
    those its ``compiler`` column finds."""
    if query.compiler is None:
        return []
    others = other_compilers(db, path, token)
    if not others:
        return []
    matches = compiler_matcher(query)
    return sorted(spec_id for spec_id, compilers in others.items() if any(map(matches, compilers)))


def other_compilers_of(db: sqlite3.Connection, path: str, token: str, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """:func:`other_compilers` of a page of specs (``ids``): what a result shows of why
    ``%gcc`` found a spec whose own compiler is apple-clang. Those of the whole state if
    read already (a server's, a compiler's search), else read from the page's edges by
    parent (a lookup a spec, not a pass over every edge)."""
    if not ids:
        return {}
    known = STATE_CACHE.peek(path, token, _KEY)
    if known is not None:
        return {spec_id: known[spec_id] for spec_id in ids if spec_id in known}
    return _read(db, "e.parent IN (SELECT value FROM json_each(?))", (msgspec.json.encode(list(ids)).decode(),))


def others_of_hashes(
    db: sqlite3.Connection, path: str, token: str, hashes: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """:func:`other_compilers_of` the specs of ``hashes`` (a page's few), by hash: those
    that more than one compiler built."""
    ids = spec_ids(db, hashes)
    others = other_compilers_of(db, path, token, list(ids.values()))
    return {dag_hash: others[spec_id] for dag_hash, spec_id in ids.items() if spec_id in others}
