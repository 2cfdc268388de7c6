"""Virtual packages in searches: ``hdf5 ^mpi``, and ``mpi`` alone, as Spack users write them.

A virtual (``mpi``, ``zlib-api``, ``blas``, ``libc``) is no package: packages provide it
(openmpi, mpich). Since Spack 0.21 every dependency edge says which virtuals its child
provides its parent (``parameters.virtuals``; the ``edges.virtuals`` column), so the
catalog knows a virtual by those edges alone, with no package repository. ``^mpi`` then
matches, as Spack's ``satisfies`` does, the specs whose DAG holds an edge using some
spec as mpi, through link or run edges as any ``^dep`` (a spec that names openmpi
itself, with no virtual on its edge, does not). A name that a package of the catalog has is that
package, not a virtual (Spack names none of its virtuals as a package). A search for
the virtual itself (``mpi``) finds those providers (``spack find mpi`` lists every
package able to provide it, which needs the package repository).

Spack compares a virtual's version with the version of the interface a provider
provides (``^mpi@3``: MPI 3), which a provider's own version is not (openmpi@5 provides
MPI 3.1); cachedex does not compare it, and a search with one finds nothing, with a hint
that says why (:func:`virtual_hint`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from ..values import LINK_RUN
from ..versions import version_key
from .facets import STATE_CACHE

__all__ = [
    "is_virtual",
    "providers",
    "virtual_hint",
    "virtual_names",
    "virtual_providers",
    "virtual_users",
]

#: The edges (of ``edges``) that use their child as a virtual; one parameter, what
#: :func:`_between_commas` makes of its name: the column lists them comma-separated.
_USES = "virtuals != '' AND instr(',' || virtuals || ',', ?) > 0"
#: The SQL term (over ``specs s``; :data:`_USES`'s parameter) of the specs that some edge
#: uses as that virtual.
_PROVIDED = f"s.id IN (SELECT child FROM edges WHERE {_USES})"


def _between_commas(name: str) -> str:
    return f",{name},"


def virtual_users(name: str, child_sql: str, params: Sequence[object]) -> tuple[str, list[object]]:
    """The SQL term (over ``specs s``) and parameters of the specs with a link or run edge
    that uses, as virtual ``name``, a spec ``child_sql`` matches (its other conditions:
    ``^mpi target=zen3``): where a walk for ``^name`` starts, and what it matches too
    (Spack's rule: a spec's DAG has an edge using that virtual)."""
    term = (
        f"s.id IN (SELECT parent FROM edges WHERE {_USES} "
        f"AND deptypes & {LINK_RUN} AND child IN (SELECT s.id FROM specs s WHERE {child_sql}))"
    )
    return term, [_between_commas(name), *params]


def virtual_names(db: sqlite3.Connection, path: str, token: str) -> frozenset[str]:
    """The virtuals some edge of the catalog's state ``token`` names: read from every
    edge once per state (~0.13 s for 1.25 million), only when a search asks for a name
    that no package has."""

    def read() -> frozenset[str]:
        rows = db.execute("SELECT DISTINCT virtuals FROM edges WHERE virtuals != ''")
        return frozenset(name for (joined,) in rows for name in joined.split(","))

    return STATE_CACHE.get(path, token, ("virtuals",), read)  # type: ignore[no-any-return]


def is_virtual(db: sqlite3.Connection, path: str, token: str, name: str | None) -> bool:
    """Whether ``name`` is a virtual in state ``token``: no package of the catalog has
    that name (an indexed lookup: what nearly every ``^dep`` search stops at), and some
    edge names it as a virtual."""
    if name is None or db.execute("SELECT 1 FROM specs WHERE name = ? LIMIT 1", (name,)).fetchone():
        return False
    return name in virtual_names(db, path, token)


def virtual_providers(db: sqlite3.Connection, path: str, token: str, name: str | None) -> str | None:
    """The ids (a JSON list) of the specs some edge uses as ``name`` if it is a virtual
    (:func:`is_virtual`), else None: read from every edge once per state and virtual
    (~0.1 s for a million), not once per search."""
    if name is None or not is_virtual(db, path, token, name):
        return None

    def read() -> str:
        rows = db.execute(f"SELECT s.id FROM specs s WHERE {_PROVIDED} ORDER BY s.id", (_between_commas(name),))
        return json.dumps([spec_id for (spec_id,) in rows])

    return STATE_CACHE.get(path, token, ("providers", name), read)  # type: ignore[no-any-return]


def providers(db: sqlite3.Connection, name: str) -> list[tuple[str, int]]:
    """(package, specs of it used as ``name``) of the virtual's providers, most first."""
    rows = db.execute(
        f"SELECT s.name, count(*) FROM specs s WHERE {_PROVIDED} GROUP BY s.name ORDER BY count(*) DESC, s.name",
        (_between_commas(name),),
    )
    return [(package, count) for package, count in rows]


def virtual_hint(
    db: sqlite3.Connection, name: str, said: str, scope: str, *, versions: bool, dependency: bool = True
) -> str:
    """Why ``^name`` (``dependency``) or ``name``, a virtual, found nothing (``said``:
    "nothing in develop matches ^mpi"): the version it was asked with, or its providers
    and why no spec of one, or depending on one, is found."""
    found = providers(db, name)
    named = ", ".join(package for package, _ in found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    what = f"{name} is a virtual package, which {named} provide{'s' if len(found) == 1 else ''} in the catalog"
    if versions:
        example = "its provider"
        if found:
            known = db.execute("SELECT DISTINCT version FROM specs WHERE name = ? ORDER BY version", (found[0][0],))
            # (Spack's newest: as text, 9.0 came after 10.0; of equal ones, the first as text)
            version = max((row[0] for row in known), key=version_key)
            example = f"{'^' * dependency}{found[0][0]}@{version}"
        return (
            f"{said}: {what}; cachedex does not compare the version of a virtual (the interface's, not its "
            f"provider's): drop it, or name the provider and its version ({example})"
        )
    if not dependency:
        return f"{said}: {what}, and no binary of {'it' if len(found) == 1 else 'them'} is {scope}"
    (link_run,) = db.execute(
        f"SELECT count(*) FROM edges WHERE {_USES} AND deptypes & {LINK_RUN}", (_between_commas(name),)
    ).fetchone()
    if not link_run:
        return (
            f"{said}: {what}, and specs need {'it' if len(found) == 1 else 'them'} only to build, "
            "while ^ follows link and run dependencies (what installing a spec needs)"
        )
    return f"{said}: {what}, and no spec {scope} depends on one through link or run dependencies"
