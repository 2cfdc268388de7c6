"""The data of every page, built once from the catalog and shown three ways.

Each builder returns a frozen struct: the static site (``site.py``) and the live server
(``serve.py``) render it with the same templates (``render.py``) and publish it as
JSON beside the HTML; the CLI's ``show`` prints it. Unknown tags, packages and hashes
raise :class:`PageNotFound`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import msgspec

from .catalog import Catalog, Edge, ListedSpec, MirrorState, SpecSummary
from .errors import CachedexError
from .query import Query

__all__ = [
    "FACETS",
    "HomePage",
    "MirrorsPage",
    "PackagePage",
    "PageNotFound",
    "SpecPage",
    "TagPage",
    "home_page",
    "mirrors_page",
    "package_page",
    "spec_page",
    "tag_page",
]

#: Facets of the tag and package pages: (key in the URL, label).
FACETS = (("stack", "Stack"), ("os", "OS"), ("target", "Target"), ("compiler", "Compiler"),
          ("platform", "Platform"))


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


class Holder(msgspec.Struct, frozen=True):
    tag: str
    stack: str
    listed: bool
    url: str


class Install(msgspec.Struct, frozen=True):
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
        TagRow(s.tag, s.specs, s.packages, s.stacks, s.size, s.synced_at,
               roots[s.tag].layout if s.tag in roots else None,
               roots[s.tag].db_version if s.tag in roots else None)
        for s in catalog.tag_stats(names)
    ]


def home_page(catalog: Catalog) -> HomePage:
    return HomePage(tuple(_tag_rows(catalog)))


def _tag_row(catalog: Catalog, tag: str) -> TagRow:
    if tag not in catalog.tag_names():
        raise PageNotFound(f"no tag {tag!r} in the catalog")
    (row,) = _tag_rows(catalog, [tag])
    return row


def _facet_values(spec: SpecSummary) -> dict[str, tuple[str, ...]]:
    return {"stack": spec.stacks, "os": (spec.os,), "target": (spec.target,),
            "compiler": (spec.compiler,), "platform": (spec.platform,)}


def tag_page(catalog: Catalog, tag: str) -> TagPage:
    """One row per package of a tag, with the facet counts (in packages)."""
    row = _tag_row(catalog, tag)
    packages: list[PackageRow] = []
    facets: dict[str, Counter[str]] = {key: Counter() for key, _ in FACETS}
    for name, specs in _by_package(catalog.listed_specs(tag)):
        values: dict[str, set[str]] = {key: set() for key, _ in FACETS}
        for spec in specs:
            for key, found in _facet_values(spec).items():
                values[key].update(found)
        for key, found in values.items():
            facets[key].update(found)
        packages.append(PackageRow(
            name=name, specs=len(specs),
            versions=tuple(sorted({s.version for s in specs}, reverse=True)),
            compilers=tuple(sorted(values["compiler"])), platforms=tuple(sorted(values["platform"])),
            oses=tuple(sorted(values["os"])), targets=tuple(sorted(values["target"])),
            stacks=tuple(sorted(values["stack"])), size=sum(s.size or 0 for s in specs),
        ))
    return TagPage(row, tuple(packages), {k: dict(sorted(c.items())) for k, c in facets.items()})


def _by_package(listed: Iterable[ListedSpec]) -> Iterable[tuple[str, list[SpecSummary]]]:
    """Group a tag's listed specs (ordered by name) into packages, as SpecSummary."""
    name = ""
    group: list[SpecSummary] = []
    for spec in listed:
        if spec.name != name and group:
            yield name, group
            group = []
        name = spec.name
        group.append(SpecSummary(
            hash=spec.hash, name=spec.name, version=spec.version, compiler=spec.compiler,
            platform=spec.platform, os=spec.os, target=spec.target, variants=spec.variants,
            size=spec.size, tags=(), stacks=spec.stacks,
        ))
    if group:
        yield name, group


def package_page(catalog: Catalog, tag: str, name: str) -> PackagePage:
    """A package's specs in a tag, with facet counts (in specs) and its other tags."""
    _tag_row(catalog, tag)
    found = catalog.search(Query(name=name), tag=tag, limit=1_000_000)
    if not found.total:
        raise PageNotFound(f"tag {tag!r} lists no package {name!r}")
    facets: dict[str, Counter[str]] = {key: Counter() for key, _ in FACETS}
    for spec in found.specs:
        for key, values in _facet_values(spec).items():
            facets[key].update(values)
    others = tuple((t, n) for t, n in catalog.package_tags(name) if t != tag)
    return PackagePage(
        tag, name, found.specs, {k: dict(sorted(c.items())) for k, c in facets.items()},
        others, sum(s.size or 0 for s in found.specs),
    )


def install_commands(tag: str, stack: str, url: str, dag_hash: str) -> str:
    mirror = f"{tag}-{stack}" if stack != "root" else tag
    return (f"spack mirror add {mirror} {url}\n"
            "spack buildcache keys --install --trust\n"
            f"spack install --cache-only /{dag_hash}")


def spec_page(catalog: Catalog, dag_hash: str) -> SpecPage:
    """Everything known about one hash."""
    spec = catalog.spec_summary(dag_hash)
    if spec is None:
        raise PageNotFound(f"no spec with hash {dag_hash!r} in the catalog")
    holders = tuple(Holder(t, s, bool(listed), url) for t, s, listed, url in catalog.holders(dag_hash))
    closure = tuple(catalog.closure(dag_hash))
    # Only binaries are downloaded: a dependency without one (an external) costs nothing.
    binaries = [e.size for e in closure if e.listed] + ([spec.size] if spec.tags else [])
    return SpecPage(
        spec=spec,
        holders=holders,
        dependencies=tuple(catalog.edges_of(dag_hash)),
        closure=closure,
        dependents=tuple(e for e in catalog.edges_of(dag_hash, reverse=True) if e.listed),
        closure_size=sum(size for size in binaries if size is not None),
        closure_unknown=sum(1 for size in binaries if size is None),
        install=tuple(Install(h.tag, h.stack, install_commands(h.tag, h.stack, h.url, dag_hash))
                      for h in holders if h.listed),
        node=catalog.node(dag_hash) or "{}",
    )


def mirrors_page(catalog: Catalog) -> MirrorsPage:
    return MirrorsPage(tuple(catalog.mirrors()))
