"""What a search that finds nothing says: each condition dropped in turn and what the
rest would find (for a package's versions, a variant or a dependency's versions dropped,
what those specs have instead); for a package name alone, the names close to it; for
another condition alone, what a looser one finds, or why nothing can match it; for an
OS, target, platform or compiler its scope has no spec of, the values close to it, or
the values it has; for a variant name no spec has, the names close to it."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from ..errors import BadQuery
from ..query import Query, parse_versions, target_names
from ..query_text import format_query, query_parts
from ..values import LINK_RUN, counted, decode_variants, variant_name
from ..versions import version_key, version_satisfies
from .facets import one_per_compiler
from .hint_values import (
    FACETS_LISTED,
    close_variants,
    counted_by_indexes,
    facet_values,
    finds,
    hash_hint,
    lacking_facets,
    listed,
)
from .name_hints import did_you_mean, name_hint, namespaced
from .other_compilers import other_compilers
from .rows import SpecSummary
from .search import search, search_ids
from .virtuals import is_virtual, virtual_hint

__all__ = ["ZeroHints", "zero_hints"]


class ZeroHints(NamedTuple):
    """Why a search found nothing: its lines, and the search likely meant (``""``: none)."""

    lines: tuple[str, ...]
    suggestion: str = ""


#: A search that found nothing tries at most this many reduced queries for its hints.
_MAX_HINTS = 8


def zero_hints(
    db: sqlite3.Connection, path: str, token: str, query: Query, *, tag: str | None, stack: str | None
) -> ZeroHints:
    """Why ``query`` found nothing (:func:`_why`), and the search likely meant: what runs
    on an exact target (see :func:`_runs_on`), or the query without the versions of its
    virtuals (``hdf5 ^mpi`` for ``hdf5 ^mpi@3``), when that finds specs."""
    hints = _why(db, path, token, query, tag=tag, stack=stack)
    if hints.suggestion:
        return hints
    unversioned = _without_virtual_versions(db, path, token, query)
    if unversioned != query and finds(db, path, token, unversioned, tag, stack):
        return ZeroHints(hints.lines, format_query(unversioned))
    return hints


def _without_virtual_versions(db: sqlite3.Connection, path: str, token: str, query: Query) -> Query:
    """``query`` with the versions of its virtuals dropped (see :mod:`.virtuals`)."""

    def plain(q: Query) -> Query:
        if q.versions and q.name is not None and is_virtual(db, path, token, q.name):
            return msgspec.structs.replace(q, versions=())
        return q

    return msgspec.structs.replace(plain(query), dependencies=tuple(plain(d) for d in query.dependencies))


def _why(
    db: sqlite3.Connection, path: str, token: str, query: Query, *, tag: str | None, stack: str | None
) -> ZeroHints:
    """Why ``query`` found nothing: each condition dropped in turn, and what the rest
    finds (``nothing matches target=aarch64; without it, 3 specs in t match, e.g. ...``; a
    name's versions stay with it), then a line for each OS, target, platform or compiler
    the scope has no spec of. A package name the scope has no spec of is the whole
    answer: where the package is, or which names are close. One condition alone has
    nothing to drop: see :func:`_one_condition_hint`."""
    parts = query_parts(query)
    scope = f"in {tag}" + (f"/{stack}" if stack else "") if tag else "in the catalog"
    if query.name is not None and is_virtual(db, path, token, query.name):
        # (its providers: a version is the interface's, not compared; or none in the scope)
        if query.versions or not finds(db, path, token, Query(name=query.name), tag, stack):
            nothing = f"nothing {scope} matches {format_query(Query(name=query.name, versions=query.versions))}"
            line = virtual_hint(db, query.name, nothing, scope, versions=bool(query.versions), dependency=False)
            return ZeroHints((line,))
    elif query.name is not None and (len(parts) == 1 or not finds(db, path, token, Query(name=query.name), tag, stack)):
        # No spec of that name in the scope: that is the answer, whatever else was asked.
        return ZeroHints((name_hint(db, path, token, query.name, scope, tag, stack),))
    runs_on = _runs_on(db, path, token, query, scope, tag, stack)
    if runs_on:  # what the asker most likely wants: binaries their machine can run
        return runs_on
    if len(parts) == 1:  # nothing to drop: "even with one condition dropped" would mislead
        return ZeroHints((_one_condition_hint(db, path, token, query, parts[0][0], scope, tag, stack),))
    hints = []
    for label, rest in parts[:_MAX_HINTS]:
        name_dropped = rest.name is None and query.name is not None
        if rest.is_empty or (name_dropped and query.versions):
            # (versions are the named package's: "hdf5@2:" without hdf5 is another question,
            # and "nothing matches hdf5" would say hdf5 has no spec)
            continue
        found = search(db, path, token, rest, tag=tag, stack=stack, limit=1, offset=0)
        if found.total:
            had = _what_they_have(db, path, token, query, rest, found.total, tag, stack)
            matching = _matching(found.total, scope, found.specs[0], had)
            if name_dropped:  # (it has specs: "nothing matches hdf5" would say otherwise)
                hints.append(f"no {label} spec matches the rest; without the name, {matching}")
            else:
                hints.append(f"nothing matches {label}; without it, {matching}")
    # (each condition dropped is a search: a long query's are tried up to a bound, and said so)
    which = "one condition" if len(parts) <= _MAX_HINTS else f"one of its first {_MAX_HINTS} conditions"
    said = tuple(hints) or (f"no spec {scope} matches even with {which} dropped",)
    virtual = tuple(
        virtual_hint(db, d.name, f"nothing matches ^{format_query(d)}", scope, versions=True)
        for d in query.dependencies
        if d.versions and d.name is not None and is_virtual(db, path, token, d.name)
    )
    return ZeroHints(said + virtual + lacking_facets(db, path, token, query, scope, tag, stack))


def _runs_on(
    db: sqlite3.Connection, path: str, token: str, query: Query, scope: str, tag: str | None, stack: str | None
) -> ZeroHints | None:
    """For a query of an exact target (``hdf5 target=zen3``) that found nothing: the
    same query for what runs on that target (``target=:zen3``: zen3 and every target it
    descends from), when that finds specs, as the hint and the suggestion. Build caches
    are built for older targets (x86_64_v3) so that newer machines run them, which
    ``target=zen3`` does not ask for. None otherwise."""
    target = query.target
    if target is None or ":" in target or "," in target or target_names(f":{target}") == (target,):
        return None  # (a range, or a target archspec knows nothing below)
    runs_on = msgspec.structs.replace(query, target=f":{target}")
    found = search_ids(db, path, token, runs_on, tag=tag, stack=stack, limit=1, offset=0).total
    if not found:
        return None
    wider = format_query(runs_on)
    line = (
        f"no spec {scope} built for {target} itself matches, but binaries built for a target {target} "
        f"descends from run on it: {wider} finds {counted(found, 'spec')}"
    )
    return ZeroHints((line,), wider)


def _matching(total: int, scope: str, example: SpecSummary, had: str = "") -> str:
    """``3 specs in t match, e.g. ...``; with ``had``, what they have instead of an example."""
    count = f"1 spec {scope} matches" if total == 1 else f"{total:,} specs {scope} match"
    return f"{count}: {had}" if had else f"{count}, e.g. {_described(example)}"


#: A hint counts what the specs of a looser query have only when they are at most this
#: many (a package's specs: their versions or a variant's values, read from their rows;
#: a dependency's versions, from the edges below them).
_COUNTED = 2000


def _what_they_have(
    db: sqlite3.Connection,
    path: str,
    token: str,
    query: Query,
    rest: Query,
    total: int,
    tag: str | None,
    stack: str | None,
) -> str:
    """What the ``total`` specs ``rest`` finds have where ``query`` asked otherwise: for
    a package's versions dropped, their versions, newest first (``zlib@1.3.1 (4
    specs)``); for a variant dropped, its values among them, the most common first
    (``+mpi (23 specs)``, ``build_type=Release (20 specs)``); for a dependency asked at
    versions, the versions of it they depend on (:func:`_dependency_versions`), or that
    none of them depends on it; for an OS, target (a range too), platform or compiler
    dropped, theirs (``target=zen4 (8 specs)``, ``%gcc@13.2.0 (5 specs)``); ``""`` for
    another condition, past :data:`_COUNTED` specs, or of one spec where the example
    shows it."""
    versions_dropped = query.name is not None and query.versions and not rest.versions
    dropped = [name for name, value in query.variants if (name, value) not in rest.variants]
    at_versions = [
        d.name
        for d in query.dependencies
        if d not in rest.dependencies and d.name and d.versions and not is_virtual(db, path, token, d.name)
    ]
    facet = next((f for f, _ in FACETS_LISTED if getattr(query, f) is not None and getattr(rest, f) is None), "")
    if total > _COUNTED or not (at_versions or total > 1 and (versions_dropped or dropped or facet)):
        return ""
    counts = None
    if not (versions_dropped or at_versions):  # a facet's or a variant's values: from the indexes
        variant = "" if facet else dropped[0]
        counts = counted_by_indexes(db, path, token, rest, facet=facet, variant=variant, tag=tag, stack=stack)
    if counts is None:
        # Their ids, then the one column asked about: no summary of each (with what holds
        # it) is made, which for thousands of matches was most of a search that found nothing.
        ids = search_ids(db, path, token, rest, tag=tag, stack=stack, limit=total, offset=0).ids
        if at_versions:
            depended = _dependency_versions(db, ids, at_versions[0])
            none = "it does not depend" if total == 1 else "none of them depends"
            return listed(depended) if depended else f"{none} on {at_versions[0]} through link or run"
        column = "version" if versions_dropped else facet or "variants"  # (a facet is its column's name)
        read = f"SELECT id, {column} FROM specs WHERE id IN (SELECT value FROM json_each(?))"
        by_id = dict(db.execute(read, (json.dumps(ids),)))
        values = [by_id[spec_id] for spec_id in ids]  # (in result order: it orders ties)
        if versions_dropped:
            versions = Counter(values)
            newest = sorted(versions, key=version_key, reverse=True)
            return listed([(f"{query.name}{_version_label(version, newest)}", versions[version]) for version in newest])
        counts = (
            Counter(values)
            if facet
            else Counter(text for v in values for text in decode_variants(v) if variant_name(text) == dropped[0])
        )
        if facet == "compiler" and (others := other_compilers(db, path, token)):
            for spec_id in ids:  # (a spec that more than one compiler built counts for each)
                counts.update(others.get(spec_id, ()))
    if not facet:
        return listed(counts.most_common())
    if facet != "compiler":
        return listed([(f"{facet}={value}", n) for value, n in counts.most_common()])
    common = one_per_compiler(counts).most_common()
    # (specs of pure Python packages are built by no compiler: "%none" is no compiler to ask for)
    return listed([("no compiler" if value == "none" else f"%{value}", n) for value, n in common])


#: The link/run edges below some specs (``?1``: their ids as JSON), at any depth.
_EDGES_BELOW = f"""
    WITH RECURSIVE down(id) AS (
        SELECT value FROM json_each(?1)
        UNION SELECT e.child FROM down JOIN edges e ON e.parent = down.id AND e.deptypes & {LINK_RUN})
    SELECT e.parent, e.child FROM down JOIN edges e ON e.parent = down.id AND e.deptypes & {LINK_RUN}"""


def _dependency_versions(db: sqlite3.Connection, roots: Sequence[int], name: str) -> list[tuple[str, int]]:
    """How many of the specs ``roots`` (ids) depend on each version of package ``name``
    (through link and run edges, at any depth: what ``^`` follows), newest first:
    ``[("^zlib@1.3.1", 12), ...]``; a spec that depends on two versions counts for each."""
    children: dict[int, list[int]] = {}
    for parent, child in db.execute(_EDGES_BELOW, (json.dumps(roots),)):
        children.setdefault(parent, []).append(child)
    reached = json.dumps(sorted({child for below in children.values() for child in below}))
    named = dict(db.execute(_VERSIONS_AMONG, (name, reached)))
    # Each spec's versions of it below, made once per spec, children first, without
    # recursion (a hostile index may nest deeper than Python's stack; a cycle ends).
    below: dict[int, frozenset[str]] = {}
    opened: set[int] = set()
    for root in roots:
        todo = [root]
        while todo:
            node = todo[-1]
            if node in below:
                todo.pop()
            elif node not in opened:
                opened.add(node)
                todo.extend(c for c in children.get(node, ()) if c not in below and c not in opened)
            else:
                todo.pop()
                kids = children.get(node, ())
                below[node] = frozenset(named[c] for c in kids if c in named).union(*(below.get(c, ()) for c in kids))
    counts = Counter(version for root in roots for version in below.get(root, ()))
    newest = sorted(counts, key=version_key, reverse=True)
    return [(f"^{name}{_version_label(v, newest)}", counts[v]) for v in newest]


def _version_label(version: str, listed: Sequence[str]) -> str:
    """``@4.4``, or ``@=4.4`` when another version listed starts with it (``4.4.1``), which
    ``@4.4`` would hold too: a count next to it is of that version alone."""
    try:
        asked = parse_versions(version)
    except BadQuery:  # (a version an index holds that a query cannot name: only exactly)
        return f"@={version}"
    ambiguous = any(other != version and version_satisfies(other, asked) for other in listed)
    return f"@={version}" if ambiguous else f"@{version}"


#: The ids and versions of package ``?1`` among the specs of ``?2`` (a JSON list of ids).
_VERSIONS_AMONG = "SELECT id, version FROM specs WHERE name = ?1 AND id IN (SELECT value FROM json_each(?2))"


def _one_condition_hint(
    db: sqlite3.Connection,
    path: str,
    token: str,
    query: Query,
    label: str,
    scope: str,
    tag: str | None,
    stack: str | None,
) -> str:
    """Why a query of one condition, not a package name, found nothing: for an OS,
    target, platform or compiler, the values its scope has (:func:`facet_values`: a
    compiler's versions, for ``%gcc@14``); for a variant, the names close to it
    (:func:`close_variants`); for ``^dep``, what the dependency by its name
    alone finds (``^zlib`` for ``^zlib@1.4``), or that no package has that name, or that
    specs need it only to build (``^`` follows link and run dependencies), or that
    nothing in the scope depends on it."""
    said = f"nothing {scope} matches {label}"
    if query.variants:
        return said + close_variants(db, path, token, query.variants[0], tag, stack)
    if query.hash_prefix is not None and not query.dependencies:
        return said + hash_hint(db, query.hash_prefix, tag, stack)
    if not query.dependencies or query.dependencies[0].name is None:
        return said + facet_values(db, path, token, query, scope, tag, stack)
    (dependency,) = query.dependencies
    if dependency.name is not None and is_virtual(db, path, token, dependency.name):
        return virtual_hint(db, dependency.name, said, scope, versions=bool(dependency.versions))
    looser = _dependency_by_name(query)
    if looser is not None:
        found = search(db, path, token, looser, tag=tag, stack=stack, limit=1, offset=0)
        if found.total:
            (loose_label, _), *_ = query_parts(looser)
            had = _what_they_have(db, path, token, query, looser, found.total, tag, stack)  # (its versions)
            return f"{said}; {loose_label} alone: {_matching(found.total, scope, found.specs[0], had)}"
    name = query.dependencies[0].name
    if not db.execute("SELECT 1 FROM specs WHERE name = ? LIMIT 1", (name,)).fetchone():
        return f"{said}: no package {name!r} in the catalog" + (
            namespaced(db, name, "^") or did_you_mean(db, path, token, name)
        )
    dependents, link_run = db.execute(
        f"SELECT count(DISTINCT e.parent), count(CASE WHEN e.deptypes & {LINK_RUN} THEN 1 END) "
        "FROM specs s JOIN edges e ON e.child = s.id WHERE s.name = ?",
        (name,),
    ).fetchone()
    if dependents and not link_run:
        needs = f"needs {name} only to build it" if dependents == 1 else f"need {name} only to build them"
        return (
            f"{said}: {counted(dependents, 'spec')} in the catalog {needs}, "
            "and ^ follows link and run dependencies (what installing a spec needs)"
        )
    return f"{said}: no spec {scope} depends on {name} through link or run dependencies"


def _dependency_by_name(query: Query) -> Query | None:
    """A query of one ``^dep`` made looser: the dependency by its name alone; None if
    there is nothing to drop."""
    (dependency,) = query.dependencies
    if dependency.name is not None and dependency != Query(name=dependency.name):
        return msgspec.structs.replace(query, dependencies=(Query(name=dependency.name),))
    return None


def _described(spec: SpecSummary) -> str:
    """A spec as Spack's syntax writes it (a spec built by no compiler, as a pure Python
    package is, without ``%none``, which Spack would read as a compiler named "none")."""
    variants = " ".join(spec.variants[:4]) + (" ..." if len(spec.variants) > 4 else "")
    arch = f"{spec.platform}-{spec.os}-{spec.target}"
    compiler = "" if spec.compiler == "none" else f" %{spec.compiler}"  # (last: in Spack 1.0 what follows is its)
    return f"{spec.name}@{spec.version}" + (f" {variants}" if variants else "") + f" arch={arch}{compiler}"
