"""The data of every page, built once from the catalog and shown three ways.

Each builder returns a frozen struct: the static site (``site.py``) and the live server
(``serve.py``) render it with the same templates (``render.py``) and publish it as
JSON beside the HTML; the CLI's ``show`` prints it. Unknown tags, packages and hashes
raise :class:`PageNotFound`.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from operator import attrgetter

import msgspec

from ..catalog import Catalog, Edge, MirrorState, SpecSummary
from ..errors import CachedexError
from ..query import Query

__all__ = [
    "FACETS",
    "Holder",
    "HomePage",
    "MirrorsPage",
    "PackagePage",
    "PageNotFound",
    "SpecGraph",
    "SpecPage",
    "TagPage",
    "home_page",
    "mirrors_page",
    "package_page",
    "package_pages",
    "spec_page",
    "tag_page",
]

#: Facets of the tag and package pages: (key in the URL, label).
FACETS = (("stack", "Stack"), ("os", "OS"), ("target", "Target"), ("compiler", "Compiler"), ("platform", "Platform"))


class PageNotFound(CachedexError):
    """No such tag, package or spec in the catalog."""


class TagRow(msgspec.Struct, frozen=True):
    name: str
    specs: int
    packages: int
    stacks: int
    size: int
    synced_at: float | None
    layout: int | None
    db_version: int | None


class HomePage(msgspec.Struct, frozen=True, tag_field="page", tag="home"):
    tags: tuple[TagRow, ...]


class PackageRow(msgspec.Struct, frozen=True):
    name: str
    specs: int
    versions: tuple[str, ...]
    compilers: tuple[str, ...]
    platforms: tuple[str, ...]
    oses: tuple[str, ...]
    targets: tuple[str, ...]
    stacks: tuple[str, ...]
    size: int


class TagPage(msgspec.Struct, frozen=True, tag_field="page", tag="tag"):
    tag: TagRow
    packages: tuple[PackageRow, ...]
    facets: dict[str, dict[str, int]]  # facet -> value -> packages having it


class PackagePage(msgspec.Struct, frozen=True, tag_field="page", tag="package"):
    tag: str
    name: str
    specs: tuple[SpecSummary, ...]
    facets: dict[str, dict[str, int]]  # facet -> value -> specs having it
    other_tags: tuple[tuple[str, int], ...]  # (tag, specs) of the other tags listing it
    size: int


class Holder(msgspec.Struct, frozen=True, gc=False):  # only strings: not tracked by the GC
    tag: str
    stack: str
    listed: bool
    url: str


class Install(msgspec.Struct, frozen=True, gc=False):
    tag: str
    stack: str
    commands: str


class SpecPage(msgspec.Struct, frozen=True, tag_field="page", tag="spec"):
    spec: SpecSummary
    holders: tuple[Holder, ...]
    dependencies: tuple[Edge, ...]
    closure: tuple[Edge, ...]  # link and run dependencies, transitively
    dependents: tuple[Edge, ...]  # that have a binary in the cache
    closure_size: int  # this binary and its closure's, in bytes (known sizes only)
    closure_unknown: int  # binaries of the spec and its closure whose size is unknown
    install: tuple[Install, ...]
    node: str  # the raw node JSON as the index holds it


class MirrorsPage(msgspec.Struct, frozen=True, tag_field="page", tag="mirrors"):
    mirrors: tuple[MirrorState, ...]


def _tag_rows(catalog: Catalog, names: Iterable[str] | None = None) -> list[TagRow]:
    roots = {m.tag: m for m in catalog.mirrors() if m.stack == "root"}
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
    return HomePage(tuple(_tag_rows(catalog)))


def _tag_row(catalog: Catalog, tag: str) -> TagRow:
    if tag not in catalog.tag_names():
        raise PageNotFound(f"no tag {tag!r} in the catalog")
    (row,) = _tag_rows(catalog, [tag])
    return row


def tag_page(catalog: Catalog, tag: str) -> TagPage:
    """One row per package of a tag, with the facet counts (in packages)."""
    row = _tag_row(catalog, tag)
    packages: list[PackageRow] = []
    facets: dict[str, Counter[str]] = {key: Counter() for key, _ in FACETS}
    # Raw rows, not decoded specs: a tag page needs no variants, and a big tag has
    # 250,000 rows.
    for name, group in itertools.groupby(catalog.listed_spec_rows(tag), key=lambda r: r[0]):
        count, size = 0, 0
        values: dict[str, set[str]] = {key: set() for key, _ in FACETS}
        versions: set[str] = set()
        for _, _, version, compiler, os, platform, target, _, spec_size, stacks in group:
            count += 1
            size += spec_size or 0
            versions.add(version)
            values["compiler"].add(compiler)
            values["os"].add(os)
            values["platform"].add(platform)
            values["target"].add(target)
            values["stack"].update(stacks.split("\x1f"))
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
            )
        )
    return TagPage(row, tuple(packages), {k: dict(sorted(c.items())) for k, c in facets.items()})


def package_page(catalog: Catalog, tag: str, name: str) -> PackagePage:
    """A package's specs in a tag, with facet counts (in specs) and its other tags."""
    _tag_row(catalog, tag)
    found = catalog.search(Query(name=name), tag=tag, limit=1_000_000)
    if not found.total:
        raise PageNotFound(f"tag {tag!r} lists no package {name!r}")
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
    :meth:`Catalog.listed_spec_rows` splits them), streamed from one pass over the tag:
    what :func:`package_page` gives for each, without a query per package.
    ``package_tags`` is :meth:`Catalog.all_package_tags`, if the caller has it."""
    tags_of = package_tags if package_tags is not None else catalog.all_package_tags()
    rows = catalog.listed_spec_rows(tag, part=part, parts=parts)
    for name, group in itertools.groupby(rows, key=lambda row: row[0]):
        specs = sorted(
            (
                SpecSummary(
                    hash=h,
                    name=n,
                    version=v,
                    compiler=c,
                    platform=p,
                    os=o,
                    target=t,
                    variants=_variants.decode(var),
                    size=size,
                    tags=(tag,),
                    stacks=tuple(sorted(stacks.split("\x1f"))),
                )
                for n, h, v, c, o, p, t, var, size, stacks in group
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
    mirror = f"{tag}-{stack}" if stack != "root" else tag
    return (
        f"spack mirror add {mirror} {url}\n"
        "spack buildcache keys --install --trust\n"
        f"spack install --cache-only /{dag_hash}"
    )


def spec_page(catalog: Catalog, dag_hash: str) -> SpecPage:
    """Everything known about one hash."""
    spec = catalog.spec_summary(dag_hash)
    if spec is None:
        raise PageNotFound(f"no spec with hash {dag_hash!r} in the catalog")
    return _spec_page(
        spec,
        holders=[Holder(t, s, bool(listed), url) for t, s, listed, url in catalog.holders(dag_hash)],
        dependencies=catalog.edges_of(dag_hash),
        closure=catalog.closure(dag_hash),
        dependents=[e for e in catalog.edges_of(dag_hash, reverse=True) if e.listed],
        node=catalog.node(dag_hash) or "{}",
    )


def _spec_page(
    spec: SpecSummary,
    *,
    holders: Sequence[Holder],
    dependencies: list[Edge],
    closure: list[Edge],
    dependents: list[Edge],
    node: str,
) -> SpecPage:
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


#: Link and run: the edges installing a binary follows.
_LINK_RUN = 0b110


class SpecGraph:
    """What spec pages show, for every spec of the catalog, read in a few bulk passes.

    :func:`spec_page` costs a few queries per page, which a site of 250,000 spec
    pages cannot afford. This reads specs, edges (kept as plain tuples), holders and
    listing tags once, about 1 GB for 250,000 specs and 1.6 million edges, and builds
    any spec's page from memory, given its raw node. :func:`spec_page` and
    :meth:`page` agree exactly (a test compares them on every spec of the demo).
    """

    def __init__(self, catalog: Catalog) -> None:
        with catalog.snapshot():  # one state of the catalog, even if a sync commits meanwhile
            self._read(catalog)

    def _read(self, catalog: Catalog) -> None:
        # Specs are kept in closure order (name, hash) and known inside by their
        # position in it: a closure, a set of positions, then sorts as plain integers,
        # and its entries are made once, here, for every spec.
        rows = sorted(catalog.all_spec_rows(), key=lambda row: (row[2], row[1]))
        self._rows = rows
        self.ids = {row[1]: row[0] for row in rows}  # hash -> catalog id
        self._position = position = {row[0]: n for n, row in enumerate(rows)}
        self._plain = [Edge(row[1], row[2], row[3], row[10], row[9]) for row in rows]
        # The order dependencies and dependents are listed in: name, version, hash.
        self._rank = rank = [0] * len(rows)
        for n, at in enumerate(sorted(range(len(rows)), key=lambda at: (rows[at][2], rows[at][3], rows[at][1]))):
            rank[at] = n
        # Each spec's dependencies and cached dependents, as edges in the order pages
        # list them; an edge (spec, deptypes, virtuals) recurs on many pages: made once.
        made: dict[tuple[int, int, str], Edge] = {}

        def edge_to(at: int, deptypes: int, virtuals: str) -> Edge:
            edge = made.get((at, deptypes, virtuals))
            if edge is None:
                row = rows[at]
                edge = made[at, deptypes, virtuals] = Edge(row[1], row[2], row[3], row[10], row[9], deptypes, virtuals)
            return edge

        children: dict[int, list[tuple[int, Edge]]] = {}
        parents: dict[int, list[tuple[int, Edge]]] = {}
        link_run: dict[int, list[int]] = {}  # children through link or run edges
        for parent, child, deptypes, virtuals in catalog.all_edge_rows():
            parent, child = position[parent], position[child]
            children.setdefault(parent, []).append((rank[child], edge_to(child, deptypes, virtuals)))
            if rows[parent][10]:  # a dependent is listed only if it has a binary
                parents.setdefault(child, []).append((rank[parent], edge_to(parent, deptypes, virtuals)))
            if deptypes & _LINK_RUN:
                link_run.setdefault(parent, []).append(child)
        self._link_run = link_run
        # (rank, edge) pairs sort by rank alone: a spec is at most once among another's ends.
        self._children = {at: [edge for _, edge in sorted(ends)] for at, ends in children.items()}
        self._dependents = {at: [edge for _, edge in sorted(ends)] for at, ends in parents.items()}
        # A million memberships come in a few hundred kinds (tag, stack, listed, URL),
        # and most specs share their whole list with many others: each made once.
        holder_of: dict[tuple[str, str, bool, str], Holder] = {}
        holders: dict[int, list[Holder]] = {}
        for spec_id, tag, stack, listed, url in catalog.all_holder_rows():
            key = (tag, stack, listed, url)
            holder = holder_of.get(key)
            if holder is None:
                holder = holder_of[key] = Holder(tag, stack, listed, url)
            holders.setdefault(spec_id, []).append(holder)
        lists: dict[tuple[Holder, ...], tuple[Holder, ...]] = {}
        self._holders = {spec_id: lists.setdefault(tuple(found), tuple(found)) for spec_id, found in holders.items()}
        self._tags: dict[int, list[str]] = {}
        for spec_id, tag in catalog.root_listing_tags():
            self._tags.setdefault(spec_id, []).append(tag)

    def held_by(self, tags: Iterable[str]) -> list[tuple[int, str]]:
        """(catalog id, hash) of every spec some mirror of ``tags`` holds, by id."""
        wanted = set(tags)
        return sorted(
            (spec_id, self._rows[self._position[spec_id]][1])
            for spec_id, holders in self._holders.items()
            if any(holder.tag in wanted for holder in holders)
        )

    def page(self, spec_id: int, node: str) -> SpecPage:
        """The page of one spec (by catalog id), given its raw node JSON."""
        at = self._position[spec_id]
        _, dag_hash, name, version, compiler, platform, os, target, variants, size, _ = self._rows[at]
        spec = SpecSummary(
            hash=dag_hash,
            name=name,
            version=version,
            compiler=compiler,
            platform=platform,
            os=os,
            target=target,
            variants=_variants.decode(variants),
            size=size,
            tags=tuple(self._tags.get(spec_id, ())),
            stacks=(),
        )
        return _spec_page(
            spec,
            holders=self._holders.get(spec_id, ()),
            dependencies=self._children.get(at, []),
            closure=self._closure(at),
            dependents=self._dependents.get(at, []),
            node=node,
        )

    def _closure(self, at: int) -> list[Edge]:
        link_run = self._link_run
        seen = set(link_run.get(at, ()))
        frontier = list(seen)
        while frontier:  # breadth first, a level at a time in C (set operations)
            reached: set[int] = set()
            for found in frontier:
                reached.update(link_run.get(found, ()))
            reached -= seen
            seen |= reached
            frontier = list(reached)
        plain = self._plain
        return [plain[n] for n in sorted(seen)]


_variants = msgspec.json.Decoder(tuple[str, ...])


def mirrors_page(catalog: Catalog) -> MirrorsPage:
    return MirrorsPage(tuple(catalog.mirrors()))
