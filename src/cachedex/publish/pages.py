"""The data of every page, built once from the catalog and shown three ways.

Each builder returns a frozen struct: the static site (``site``) and the live server
(``serve``) render it with the same templates (``render``) and publish it as JSON beside
the HTML; the CLI's ``show`` prints it. The structs are the public JSON API: their
docstrings become the OpenAPI document's descriptions. Unknown tags, packages and
hashes raise :class:`~cachedex.errors.LookupFailed` subclasses. Spec pages live in
:mod:`.spec_pages`, package pages in :mod:`.package_pages`; which specs facet filters
select, in :mod:`.facets`.

Sizes are honest: a size no mirror told is null (shown "unknown"), never 0; a total
counts the sizes it knows (``sized``) beside the specs it adds up.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from operator import attrgetter
from typing import NamedTuple

import msgspec

from ..catalog import Catalog, MirrorState, SpecSummary
from ..catalog.verifications import MirrorVerification
from ..errors import UnknownPackage, UnknownSpec
from ..values import ROOT_STACK
from ..versions import SNAPSHOT_TAG, tag_kind, version_key
from .facets import FACETS, FILTER_KEYS, select_tag, with_every_value
from .files import name_problem
from .package_pages import PackagePage, install_preamble, package_page, package_pages
from .spec_pages import Holder, Install, SpecPage, install_commands, spec_page, spec_page_from
from .tag_columns import SpecColumns, TagSpecs, tag_specs

__all__ = [
    "FACETS",
    "MIRROR_PROBLEMS",
    "TAG_KINDS",
    "Holder",
    "HomePage",
    "Install",
    "MirrorsPage",
    "PackagePage",
    "PackageRow",
    "SpecPage",
    "TagColumns",
    "TagData",
    "TagPage",
    "TagRow",
    "full_hash",
    "home_page",
    "install_commands",
    "mirrors_page",
    "package_page",
    "package_pages",
    "resolve",
    "spec_page",
    "spec_page_from",
    "tag_data",
    "tag_kind",
    "tag_order",
    "tag_page",
    "tag_page_from",
    "tag_row",
]


class TagRow(msgspec.Struct, frozen=True):
    """A tag with its totals, as of its last sync."""

    name: str
    specs: int  #: specs its root mirror lists
    packages: int
    stacks: int  #: mirrors besides the root
    size: int | None  #: bytes of the listed specs whose size is known; null when none is
    synced_at: float | None  #: epoch seconds of the last sync
    layout: int | None  #: build-cache layout version of the root mirror
    db_version: int | None  #: Database version of the root index
    sized: int = 0  #: listed specs whose size is known
    kind: str = "branch"  #: ``branch`` (develop), ``release`` (v1.0.2) or ``snapshot`` (develop-2026-11-08)


class HomePage(msgspec.Struct, frozen=True, tag_field="page", tag="home"):
    """The home page: every tag, branches first, then releases and snapshots, newest first."""

    tags: tuple[TagRow, ...]


class PackageRow(msgspec.Struct, frozen=True):
    """A package of a tag, summarising its specs (those matching the filters, if any)."""

    name: str
    specs: int
    versions: tuple[str, ...]  #: newest first, in Spack's order
    compilers: tuple[str, ...]
    platforms: tuple[str, ...]
    oses: tuple[str, ...]
    targets: tuple[str, ...]
    stacks: tuple[str, ...]  #: ``root`` included
    size: int | None  #: bytes of its specs whose size is known; null when none is
    sized: int = 0  #: its specs whose size is known
    has_page: bool = True  #: False for a name that cannot be a folder name: it has no page to link to


class TagPage(msgspec.Struct, frozen=True, tag_field="page", tag="tag"):
    """A tag's page: a row per package with a spec matching every filter (every
    package without filters), facet counts, and every spec of the tag as columns
    (``specs``), which the page's script filters in the browser."""

    tag: TagRow
    packages: tuple[PackageRow, ...]
    #: facet -> value -> packages having a spec with it that matches the other filters
    #: (``runs_on``: a spec a machine of that target runs)
    facets: dict[str, dict[str, int]]
    specs: SpecColumns
    filters: dict[str, str] = {}  #: the filters applied (``?stack=e4s&target=aarch64``, ``?runs_on=zen3``)
    text: str = ""  #: the package name filter applied (``?q=``), lower case
    relax: dict[str, int] = {}  #: filter -> packages that would match with it alone dropped
    install: str = ""  #: shell commands that add the tag's root mirror and trust its keys
    #: with no package found under a name filter: the packages the filters find without it (else 0)
    without_text: int = 0


class TagColumns(msgspec.Struct, frozen=True):
    """What a tag page's script reads (``tags/<tag>/columns.json``): the tag and every
    spec of it as columns, without the rows and counts of the page's JSON twin (whose
    rows the script makes from the columns): half the twin's bytes to load and parse."""

    tag: TagRow
    specs: SpecColumns


class MirrorsPage(msgspec.Struct, frozen=True, tag_field="page", tag="mirrors"):
    """Every mirror of every tag, what its last read found and, once ``cachedex verify``
    ran, what its latest verification found (``verifications[i]`` is ``mirrors[i]``'s,
    null when never verified; at most :data:`MIRROR_PROBLEMS` problems each)."""

    mirrors: tuple[MirrorState, ...]
    verifications: tuple[MirrorVerification | None, ...] = ()


#: Problems of a mirror's verification that the mirrors page lists (``cachedex verify``
#: and ``/api/tags/{tag}/verify`` give them all).
MIRROR_PROBLEMS = 5


#: The kinds of tags, in the order the home page shows them.
TAG_KINDS = ("branch", "release", "snapshot")


def tag_order(rows: list[TagRow]) -> list[TagRow]:
    """The home page's order: branches by name, then releases newest first (Spack's
    version order), then snapshots newest first (by date), names breaking ties."""
    kinds: dict[str, list[TagRow]] = {kind: [] for kind in TAG_KINDS}
    for row in rows:
        kinds[row.kind].append(row)
    ordered = sorted(kinds["branch"], key=attrgetter("name"))
    ordered += sorted(kinds["release"], key=lambda r: (version_key(r.name.lstrip("v")), r.name), reverse=True)
    ordered += sorted(kinds["snapshot"], key=lambda r: (_date(r.name), r.name), reverse=True)
    return ordered


def _date(name: str) -> str:
    found = SNAPSHOT_TAG.fullmatch(name)
    return found[2] if found else ""


def _tag_rows(catalog: Catalog, names: list[str] | None = None) -> list[TagRow]:
    roots = {m.tag: m for m in catalog.mirrors() if m.stack == ROOT_STACK}
    return [
        TagRow(
            s.tag,
            s.specs,
            s.packages,
            s.stacks,
            s.size if s.sized else None,
            s.synced_at,
            roots[s.tag].layout if s.tag in roots else None,
            roots[s.tag].db_version if s.tag in roots else None,
            s.sized,
            tag_kind(s.tag),
        )
        for s in catalog.tag_stats(names)
    ]


def home_page(catalog: Catalog) -> HomePage:
    """Every tag with its totals."""
    return HomePage(tuple(tag_order(_tag_rows(catalog))))


def tag_row(catalog: Catalog, tag: str) -> TagRow:
    """One tag's totals; UnknownTag if there is no such tag."""
    catalog.require_tag(tag)
    (row,) = _tag_rows(catalog, [tag])
    return row


class TagData(NamedTuple):
    """What :func:`tag_page_from` filters (a server keeps it, to answer any filters
    without reading the tag again)."""

    row: TagRow
    specs: TagSpecs
    install: str  #: see ``TagPage.install``


def tag_data(catalog: Catalog, tag: str, *, folded: bool = True) -> TagData:
    """A tag's row, its specs as columns, and how to use its mirror. ``folded``: as a
    static site links names (those one folder with another where case is ignored have
    no page there); the server, which answers each, passes False."""
    row = tag_row(catalog, tag)
    # Raw rows, not decoded specs: a tag page needs no variants, and a big tag has
    # 250,000 rows.
    groups = itertools.groupby(catalog.listed_rows(tag), key=attrgetter("name"))
    packages = ((name, list(group)) for name, group in groups)
    specs = tag_specs(packages, lambda name: name_problem(name) is None, catalog.other_compilers(), folded=folded)
    return TagData(row, specs, install_preamble(catalog, tag))


def tag_page_from(data: TagData, filters: Mapping[str, str] | None = None, text: str = "") -> TagPage:
    """A tag's page from :func:`tag_data`, under facet ``filters`` and a name filter."""
    wanted = {key: filters[key] for key in FILTER_KEYS if filters and filters.get(key)}
    needle = text.strip().lower()
    chosen = select_tag(data.specs, wanted, needle, FILTER_KEYS)  # (Runs on's counts too)
    values = data.specs.columns.values
    return TagPage(
        tag=data.row,
        packages=tuple(PackageRow(*found) for found in chosen.rows),
        facets=with_every_value(chosen.facets, values) if wanted or needle else chosen.facets,
        specs=data.specs.columns,
        filters=wanted,
        text=needle,
        relax=chosen.relax,
        install=data.install,
        # (the name box's own way on an empty page: asked only when nothing is shown)
        without_text=len(select_tag(data.specs, wanted).rows) if needle and not chosen.rows else 0,
    )


def tag_page(catalog: Catalog, tag: str, filters: Mapping[str, str] | None = None, text: str = "") -> TagPage:
    """One row per package of a tag, with the facet counts (in packages); see :func:`tag_page_from`."""
    return tag_page_from(tag_data(catalog, tag), filters, text)


def mirrors_page(catalog: Catalog) -> MirrorsPage:
    """Every mirror of every tag, with its latest verification."""
    with catalog.snapshot():
        mirrors = tuple(catalog.mirrors())
        verified = {(v.tag, v.stack): v for v in catalog.latest_verifications(problems=MIRROR_PROBLEMS)}
    return MirrorsPage(mirrors, tuple(verified.get((m.tag, m.stack)) for m in mirrors) if verified else ())


def full_hash(catalog: Catalog, prefix: str) -> str:
    """The one hash of the catalog's records that starts with ``prefix`` (a full hash is
    its own prefix). Every record counts, listed or not: a dependency held without a
    binary, a spec that left every tag. UnknownSpec when none or several do."""
    return _the_one(prefix, _hashes_starting(catalog, prefix))


def _hashes_starting(catalog: Catalog, prefix: str) -> list[str]:
    """Two of the hashes that start with ``prefix`` at most: enough to tell one from several."""
    return catalog.hashes_starting(prefix, limit=2) if prefix.isalnum() else []


def _the_one(prefix: str, hashes: list[str]) -> str:
    if len(hashes) > 1:
        raise UnknownSpec(prefix, f"hash prefix {prefix!r} is ambiguous; give more characters")
    if not hashes:
        raise UnknownSpec(prefix)
    return hashes[0]


def resolve(catalog: Catalog, what: str) -> SpecSummary | str:
    """What ``what`` names: a spec (a hash or a unique prefix, with or without a leading
    ``/``: :func:`full_hash`) as its summary, or else a package name, returned as it is.

    A leading ``/`` means a hash. Without it, a word that is a known package's name is
    that package, even if it is also the start of a hash. UnknownSpec for a prefix that
    matches no spec or several; UnknownPackage for a name no tag lists."""
    if not what.isprintable():  # (a lone surrogate, an argument that was not UTF-8, is no name SQLite can encode)
        raise UnknownPackage(what)
    prefix = what.lstrip("/")
    hashes = _hashes_starting(catalog, prefix)  # looked up once, for both questions
    if not what.startswith("/"):
        if catalog.package_tags(what):
            return what
        if not hashes:
            raise UnknownPackage(what)
        if len(hashes) > 1:  # a word like "gcc" (no tag lists it: an external) is no hash either
            raise UnknownSpec(
                prefix,
                f"no tag lists a package {what!r}, and as the start of a hash it is ambiguous "
                f"(several specs' hashes start so): try 'cachedex search {what}', or give more of the hash",
            )
    spec = catalog.spec_summary(_the_one(prefix, hashes))
    if spec is None:
        raise UnknownSpec(prefix)
    return spec
