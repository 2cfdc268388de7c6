"""What a hint says of the values a search's scope has: for an OS, target, platform or
compiler no spec of the scope has, the values close to it or those it has (a compiler's
versions, newest first); for a variant name none has, the close names that find specs;
each list as ``a (3 specs), b (1 spec), and 4 more`` (:func:`listed`)."""

from __future__ import annotations

import difflib
import sqlite3
from collections import Counter

from ..query import Query
from ..query_text import query_parts
from ..values import ROOT_STACK, counted
from ..versions import version_key
from .facets import COMPILER_ALIASES, FACET_COLUMNS, one_per_compiler
from .name_hints import stacks_alone
from .other_compilers import other_compilers
from .reads import hashes_starting, holders, spec_summary
from .scopes import scope_mirrors
from .search import facet_index, found_bits, search_ids, term_index
from .terms import firsts_among

__all__ = [
    "FACETS_LISTED",
    "close_variants",
    "compiler_versions",
    "counted_by_indexes",
    "facet_values",
    "finds",
    "hash_hint",
    "lacking_facets",
    "listed",
    "scope_values",
]


#: The facets whose values a hint lists: Query field, what the values are called.
FACETS_LISTED = (("os", "OSes"), ("target", "targets"), ("platform", "platforms"), ("compiler", "compilers"))
#: Values a hint lists, at most (the most common), and the closest it offers.
_VALUES_SHOWN, _CLOSE_VALUES = 6, 3


def facet_values(
    db: sqlite3.Connection, path: str, token: str, query: Query, scope: str, tag: str | None, stack: str | None
) -> str:
    """For a query of one OS, target, platform or compiler that found nothing in the
    scope: ``"; did you mean os=ubuntu24.04 (120 specs)?"`` for values close to it, else
    ``"; the OSes in t: ..."``, the most common first; for a compiler the scope has but
    not at the versions asked, its versions there (:func:`compiler_versions`); ``""``
    otherwise."""
    field, plural = next(((f, p) for f, p in FACETS_LISTED if getattr(query, f) is not None), ("", ""))
    if not field:
        return ""
    wanted: str = getattr(query, field)
    specs = scope_values(db, path, token, field, tag, stack)
    if field == "compiler":
        builds = specs
        specs = Counter()
        for compiler, count in builds.items():
            specs[compiler.split("@", 1)[0]] += count
        specs = one_per_compiler(specs)  # (oneapi and intel-oneapi-compilers are one)
        specs.pop("none", None)  # specs built by no compiler (pure Python packages): not one to ask for
        wanted = next((name for name in (wanted, *COMPILER_ALIASES.get(wanted, ())) if name in specs), wanted)
        if wanted in specs and query.compiler_versions:
            return compiler_versions(builds, query, scope)
    if not specs or wanted in specs:  # an empty scope; a value there would have found specs
        return ""
    label = "%{}".format if field == "compiler" else f"{field}={{}}".format
    # (a target range is no misspelt name: the targets there say more)
    ranged = field == "target" and (":" in wanted or "," in wanted)
    close = [] if ranged else difflib.get_close_matches(wanted, list(specs), n=_CLOSE_VALUES, cutoff=0.6)
    if close:
        return f"; did you mean {listed([(label(v), specs[v]) for v in close])}?"
    said = f"; the {plural} {scope}: {listed(specs.most_common())}"
    if field == "compiler" and db.execute("SELECT 1 FROM specs WHERE name = ? LIMIT 1", (wanted,)).fetchone():
        # A package, not a compiler: what Spack 1.0 means by %cmake, and what cachedex reads.
        said += (
            f" (Spack 1.0 reads %{wanted} as any direct dependency named {wanted}, build ones included; "
            f"here % is a compiler of a binary's C, C++ or Fortran, and ^{wanted} its link and run dependencies)"
        )
    return said


def listed(values: list[tuple[str, int]]) -> str:
    """``a (3 specs), b (1 spec), and 4 more``: the first few of ``(value, specs)``."""
    shown = ", ".join(f"{value} ({counted(n, 'spec')})" for value, n in values[:_VALUES_SHOWN])
    return shown + (f", and {len(values) - _VALUES_SHOWN} more" if len(values) > _VALUES_SHOWN else "")


def scope_values(
    db: sqlite3.Connection, path: str, token: str, field: str, tag: str | None, stack: str | None
) -> Counter[str]:
    """The scope's specs per value of ``field`` (a compiler's: name@version), from its
    facet index (the search that found nothing has just read it). A spec that more than
    one compiler built counts for each, as ``%compiler`` finds it by each."""
    index = facet_index(db, path, token, *scope_mirrors(db, path, token, tag, stack))
    column = FACET_COLUMNS.index(field)
    specs: Counter[str] = Counter()
    for group, key in enumerate(index.groups):
        specs[key[column]] += len(index.positions[group])
    if field == "compiler" and (others := other_compilers(db, path, token)):
        for position in index.positions_of(others):
            specs.update(others[index.ids[position]])
    return specs


def compiler_versions(builds: Counter[str], query: Query, scope: str) -> str:
    """``"; the versions of gcc in t: %gcc@13.2.0 (4 specs), ...``, newest first: the
    scope's versions of ``query``'s compiler (none of which it asks)."""
    name = query.compiler or ""
    names = (name, *COMPILER_ALIASES.get(name, ()))  # (the legacy name and its package's are one)
    versions: Counter[str] = Counter()
    for compiler, n in builds.items():
        built_by, at, version = compiler.partition("@")
        if at and built_by in names:
            versions[version] += n
    newest = sorted(versions, key=version_key, reverse=True)
    return f"; the versions of {name} {scope}: {listed([(f'%{name}@{v}', versions[v]) for v in newest])}"


def finds(db: sqlite3.Connection, path: str, token: str, query: Query, tag: str | None, stack: str | None) -> bool:
    return bool(search_ids(db, path, token, query, tag=tag, stack=stack, limit=1, offset=0).total)


def lacking_facets(
    db: sqlite3.Connection, path: str, token: str, query: Query, scope: str, tag: str | None, stack: str | None
) -> tuple[str, ...]:
    """A line for each OS, target, platform or compiler (with its versions) of ``query``
    that no spec of the scope has (``no spec in t has target=zen9; did you mean ...``),
    and for each variant whose name none has and has a close one that finds specs."""
    lines = []
    for field, _plural in FACETS_LISTED:
        if getattr(query, field) is not None:
            extra: dict[str, object] = {}
            if field == "compiler":
                extra = {"compiler_versions": query.compiler_versions}
            alone = Query(**{field: getattr(query, field)}, **extra)  # type: ignore[arg-type]
            # (asked by the search itself, as a target range or a compiler's versions match)
            if finds(db, path, token, alone, tag, stack):
                continue  # the scope has it: something else found nothing
            if values := facet_values(db, path, token, alone, scope, tag, stack):
                lines.append(f"no spec {scope} has {query_parts(alone)[0][0]}{values}")
    for variant in query.variants:
        if offers := close_variants(db, path, token, variant, tag, stack):
            lines.append(f"no spec {scope} has a variant named {variant[0]}{offers}")
    return tuple(lines)


def close_variants(
    db: sqlite3.Connection,
    path: str,
    token: str,
    variant: tuple[str, str | bool | tuple[str, ...]],
    tag: str | None,
    stack: str | None,
) -> str:
    """For a variant whose name no spec of the scope's tag has (``+mpii``): the same
    asked of the names close to it that find specs in the scope, ``"; did you mean +mpi
    (120 specs)?"``; ``""`` when its name is there or none is close."""
    name, wanted = variant
    names = term_index(db, path, token, scope_mirrors(db, path, token, tag, stack)[0]).variant_names()
    if name in names:
        return ""
    offers = []
    for close in difflib.get_close_matches(name, names, n=_CLOSE_VALUES, cutoff=0.6):
        alike = Query(variants=((close, wanted),))
        total = search_ids(db, path, token, alike, tag=tag, stack=stack, limit=1, offset=0).total
        if total:
            offers.append((query_parts(alike)[0][0], total))
    return f"; did you mean {listed(offers)}?" if offers else ""


def counted_by_indexes(
    db: sqlite3.Connection,
    path: str,
    token: str,
    query: Query,
    *,
    facet: str,
    variant: str,
    tag: str | None,
    stack: str | None,
) -> Counter[str] | None:
    """How many of the specs ``query`` finds have each value of ``facet`` (``os``,
    ``target``, ``compiler``, ``platform``) or, without one, each string of ``variant``
    (``+mpi``, ``~mpi``), in the order a count of their rows in result order gives (the
    first found, first), from the search's indexes: no row is read. None for a query
    that names a package or a hash. Reading the matches' rows (up to 2,000 by id, for
    each hint) took 15 % of a server's time under the bench's name-less searches
    (``serve.py`` (a''), py-spy)."""
    found = found_bits(db, path, token, query, tag=tag, stack=stack)
    if found is None:
        return None
    facets, terms, bits = found
    if facet:
        firsts = firsts_among(facets.value_bits(FACET_COLUMNS.index(facet)), bits)
    else:
        firsts = terms.strings_among(variant, bits)
    firsts.sort()
    counts = Counter({value: count for _first, value, count in firsts})
    if facet == "compiler" and (others := other_compilers(db, path, token)):
        # (a spec that more than one compiler built counts for each: %compiler finds it by each)
        for position in sorted(facets.positions_of(others)):
            if bits >> position & 1:
                counts.update(others[facets.ids[position]])
    return counts


def hash_hint(db: sqlite3.Connection, prefix: str, tag: str | None, stack: str | None) -> str:
    """For ``/prefix`` that found nothing in ``tag`` (its ``stack``; or the catalog), what it knows of a spec
    of that hash (``spack find`` prints seven characters): the tags that list it and the
    stacks that list it where their tag's root does not, or that it holds it only as a
    record without a binary, or from an earlier sync; its page (``/spec/<hash>``) shows
    it still. ``""`` when no spec has such a hash."""
    found = hashes_starting(db, prefix, 2)
    summary = spec_summary(db, found[0]) if len(found) == 1 else None
    if summary is None:  # (none, or a prefix too short to name one: the search says so)
        return ""
    dag_hash = summary.hash
    spec = f"{summary.name}@{summary.version} /{dag_hash[:7]}"
    held = holders(db, dag_hash)
    roots = {other for other, mirror, listed, _url, _layout in held if listed and mirror == ROOT_STACK}
    # (the searched tag too, when a stack of it was searched: another of its mirrors lists it)
    tags = sorted(other for other in roots if other != tag or stack)
    alone = [
        f"stack {mirror} of {other} lists it, not {other}'s root"
        for other, mirror, listed, _url, _layout in held
        if listed and other not in roots
    ]
    if tags or alone:
        said = [f"{spec} is listed in {', '.join(tags)}"] if tags else []
        if alone:
            said.append(("" if tags else f"{spec}: ") + stacks_alone(alone))
        return "; " + "; ".join(said)
    how = "mirrors hold it only as a record, without a binary" if held else "the catalog keeps it from an earlier sync"
    return f"; {spec}: {how} (its page: /spec/{dag_hash[:7]})"
