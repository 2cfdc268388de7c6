"""The WHERE clause a search reads rows with, when its query names a package or a hash
(:func:`.search.search_ids`), or when a ``^dependency``'s walk up begins: the query's
terms as SQL, indexed columns first, and the scope's.

Apart from :mod:`.search` because it is the one place a query becomes SQL text: each
value goes in as a parameter, never in the text (a mirror's values are hostile), and
what SQL cannot compare is left to :func:`.sql_functions.register_functions`.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..query import ANY, Query
from .facets import COMPILER_COLUMN, FACET_COLUMNS, FacetTerms
from .rows import HAS_BINARY

__all__ = ["Where", "query_where", "scope_where"]

_encode = msgspec.json.encode


class Where:
    """A WHERE clause under construction: terms joined by AND, and their parameters."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.params: list[object] = []

    def add(self, term: str, *params: object) -> None:
        self.terms.append(term)
        self.params.extend(params)

    @property
    def sql(self) -> str:
        return " AND ".join(self.terms) or "1"


def scope_where(where: Where, root: int | None, stack: int | None) -> None:
    if root is None:
        where.add(HAS_BINARY)
        return
    where.add("EXISTS (SELECT 1 FROM members mb WHERE mb.mirror_id = ? AND mb.spec_id = s.id AND mb.listed)", root)
    if stack is not None:
        where.add("EXISTS (SELECT 1 FROM members mb WHERE mb.mirror_id = ? AND mb.spec_id = s.id)", stack)


def query_where(query: Query, facets: FacetTerms, *, providers: str | None = None, also: Sequence[int] = ()) -> Where:
    """The WHERE terms of a query without ``^dependencies`` (they are walked) and its
    :func:`~.facets.facet_terms`, indexed columns first; ``providers``: its name is a
    virtual's, these specs' (see :mod:`.virtuals`), whose version is not compared: with
    one, it matches none. ``also``: the specs another of whose compilers the query's
    ``%compiler`` names (:mod:`.other_compilers`), found besides those of the column."""
    where = Where()
    if providers is not None:
        where.add("s.id IN (SELECT value FROM json_each(?))", providers)
        if query.versions:
            where.add("0")
            return where
    elif query.name is not None:
        where.add("s.name = ?", query.name)
    if query.hash_prefix is not None:
        # Hashes are lower-case base32: '{' sorts after every character they use.
        where.add("s.hash >= ? AND s.hash < ?", query.hash_prefix, query.hash_prefix + "{")
    for column, values in facets:
        among = f"s.{FACET_COLUMNS[column]} IN ({','.join('?' * len(values))})" if values else "0"
        if column == COMPILER_COLUMN and also:
            where.add(f"({among} OR s.id IN (SELECT value FROM json_each(?)))", *values, _encode(also).decode())
        else:
            where.add(among, *values)
    if query.versions:
        where.add("cx_version(s.version, ?)", _encode(query.versions).decode())
    if query.variants:
        # A C-speed text test first: '"+mpi"' must occur for +mpi, '"name=' or '"name:='
        # for a valued variant. Booleans need nothing more; values go on to the exact check.
        for name, value in query.variants:
            if isinstance(value, bool):
                where.add("instr(s.variants, ?) > 0", _encode(("+" if value else "~") + name).decode())
            elif value == ANY:  # (mpi=*: +mpi, ~mpi or any value)
                forms = (_encode(f"+{name}").decode(), _encode(f"~{name}").decode(), f'"{name}=', f'"{name}:=')
                where.add(" OR ".join(["instr(s.variants, ?) > 0"] * 4).join("()"), *forms)
            else:
                where.add("(instr(s.variants, ?) > 0 OR instr(s.variants, ?) > 0)", f'"{name}=', f'"{name}:=')
        if not all(isinstance(value, bool) for _, value in query.variants):
            wanted = Query(variants=query.variants, exact_variants=query.exact_variants)
            where.add("cx_variants(s.variants, ?)", _encode(wanted).decode())
    return where
