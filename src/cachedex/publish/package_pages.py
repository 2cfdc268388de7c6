"""A package's page: its specs in one tag, what tells them apart, and how to install them.

Built one at a time (:func:`package_page`, from a search), or for every package of a
tag from one pass over it (:func:`package_pages`, for a whole site); both give the
same page (a test compares them on the demo).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator, Mapping, Sequence
from operator import attrgetter
from urllib.parse import quote

import msgspec

from ..catalog import Catalog, SpecSummary, summary_of
from ..errors import UnknownPackage
from ..query import Query
from ..values import ROOT_STACK, shared_variants, stack_order, variant_name
from ..versions import version_key
from .facets import PACKAGE_FILTER_KEYS, PACKAGE_KEYS, select_specs, spec_values, with_every_value
from .spec_pages import mirror_commands
from .tag_columns import machines

__all__ = [
    "PACKAGE_FILTERS",
    "PackagePage",
    "differing_variants",
    "install_preamble",
    "package_page",
    "package_pages",
    "recipe_url",
]

#: The filters of a package page: the facets, ``variant`` and ``runs_on``.
PACKAGE_FILTERS = PACKAGE_FILTER_KEYS


class PackagePage(msgspec.Struct, frozen=True, tag_field="page", tag="package"):
    """A package's specs in one tag (newest version first), facet counts (in specs,
    the other filters applied), and its other tags."""

    tag: str
    name: str
    specs: tuple[SpecSummary, ...]
    facets: dict[str, dict[str, int]]  #: facet -> value -> specs having it that match the other filters
    other_tags: tuple[tuple[str, int], ...]  #: (tag, specs) of the other tags listing it
    size: int | None  #: bytes of its specs whose size is known; null when none is
    sized: int = 0  #: its specs whose size is known
    differing: tuple[str, ...] = ()  #: the variants whose values differ between its specs (their names)
    filters: dict[str, str] = {}  #: the filters applied: facets, and ``variant`` (e.g. ``+mpi``)
    matches: tuple[bool, ...] = ()  #: for each spec, whether it matches the filters
    relax: dict[str, int] = {}  #: filter -> specs that would match with it alone dropped (the Version text kept)
    install: str = ""  #: shell commands that add the tag's mirror and trust its keys
    recipe: str = ""  #: the package's page on packages.spack.io
    #: each target of its specs -> the machines that run its binaries (the ``runs_on`` filter)
    runs_on: dict[str, tuple[str, ...]] = {}
    text: str = ""  #: the Version filter, as typed: part of a version
    #: with no spec found under a Version filter: the specs the filters find without it (else 0)
    without_text: int = 0

    @property
    def shared(self) -> list[str]:
        """The variants every spec holds (``+mpi`` of six that all have it): a filter on
        one matches them all, though the filter's choices list those that differ only."""
        return sorted(shared_variants(self.specs))

    @property
    def machines(self) -> list[str]:
        """The machines some of its specs run on: the ``runs_on`` filter's choices."""
        return sorted({machine for run in self.runs_on.values() for machine in run})


def recipe_url(name: str) -> str:
    """The package's recipe on packages.spack.io."""
    return f"https://packages.spack.io/package.html?name={quote(name, safe='')}"


def install_preamble(catalog: Catalog, tag: str) -> str:
    """The commands that add a tag's root mirror and trust its keys ("" before its first
    sync): values shell-quoted; a mirror known not to sign, or an OCI registry, with
    ``--unsigned`` and no keys step (see :func:`spec_pages.mirror_commands`)."""
    root = catalog.mirror_state(tag, ROOT_STACK)
    if root is None:
        return ""
    return mirror_commands(tag, root.url, signed=(tag, ROOT_STACK) not in catalog.unsigned_mirrors())


def package_page(
    catalog: Catalog, tag: str, name: str, filters: Mapping[str, str] | None = None, text: str = ""
) -> PackagePage:
    """A package's specs in a tag, with facet counts (in specs) and its other tags;
    ``filters`` and ``text`` (part of a version) choose which of them match."""
    catalog.require_tag(tag)
    found = catalog.search(Query(name=name), tag=tag, limit=1_000_000)
    if not found.total:
        raise UnknownPackage(name, tag, catalog.package_tags(name))  # (naming where it is)
    return _package_page(
        tag, name, found.specs, catalog.package_tags(name), install_preamble(catalog, tag), filters, text
    )


def package_pages(
    catalog: Catalog,
    tag: str,
    *,
    part: int = 0,
    parts: int = 1,
    package_tags: dict[str, list[tuple[str, int]]] | None = None,
    names: Collection[str] | None = None,
) -> Iterator[PackagePage]:
    """The page of every package of a tag (or of share ``part`` of ``parts``, as
    :meth:`Catalog.listed_rows` splits them), streamed from one pass over the tag:
    what :func:`package_page` gives for each, without a query per package.
    ``package_tags`` is :meth:`Catalog.all_package_tags`, if the caller has it;
    ``names``: only the pages of these packages."""
    tags_of = package_tags if package_tags is not None else catalog.all_package_tags()
    install = install_preamble(catalog, tag)
    others = catalog.other_compilers()
    rows = catalog.listed_rows(tag, part=part, parts=parts, names=names)
    for name, group in itertools.groupby(rows, key=attrgetter("name")):
        specs = [
            summary_of(
                row,
                tags=(tag,),
                stacks=tuple(sorted(row.stacks.split("\x1f"), key=stack_order)) if row.stacks else (),
                other_compilers=others.get(row.hash, ()),
            )
            for row in group
        ]
        yield _package_page(tag, name, specs, tags_of.get(name, []), install)


def differing_variants(specs: Sequence[SpecSummary]) -> tuple[str, ...]:
    """The names of the variants whose values are not the same in every spec, sorted
    (one that some specs lack differs too)."""
    if not specs:
        return ()
    # A spec holds one value per variant: a name is the same everywhere exactly when one
    # of its values is in every spec.
    every = shared_variants(specs)
    some = set().union(*(spec.variants for spec in specs))
    return tuple(sorted({variant_name(text) for text in some} - {variant_name(text) for text in every}))


class _Faceted(msgspec.Struct, frozen=True, gc=False):
    """A spec as a package page's filters read it: its variants only those that differ."""

    version: str
    stacks: tuple[str, ...]
    os: str
    target: str
    compiler: str
    platform: str
    variants: tuple[str, ...]
    other_compilers: tuple[str, ...]


def _package_page(
    tag: str,
    name: str,
    found: Sequence[SpecSummary],
    package_tags: list[tuple[str, int]],
    install: str,
    filters: Mapping[str, str] | None = None,
    text: str = "",
) -> PackagePage:
    # Newest version first, and a version's builds by hash, as searches list them (a
    # reversed sort reversed the hashes too: the same builds in two orders)
    by_hash = sorted(found, key=attrgetter("hash"))
    specs = sorted(by_hash, key=lambda s: (version_key(s.version), s.version), reverse=True)  # (stable)
    differing = differing_variants(specs)
    wanted = {key: filters[key] for key in PACKAGE_FILTERS if filters and filters.get(key)}
    # A variant every spec holds is no choice of the filters, but asked for, every spec has it.
    # (asked only when a page is filtered by a variant: a whole site's pages are not)
    chosen_variant = wanted.get("variant")
    also = (chosen_variant,) if chosen_variant and chosen_variant in shared_variants(specs) else ()
    faceted = [
        _Faceted(
            s.version,
            s.stacks,
            s.os,
            s.target,
            s.compiler,
            s.platform,
            tuple(text for text in s.variants if variant_name(text) in differing) + also,
            s.other_compilers,
        )
        for s in specs
    ]
    needle = text.strip().lower()  # (as the script reads the Version box: part of a version)
    chosen = select_specs(faceted, wanted, PACKAGE_FILTER_KEYS, needle)  # (Runs on's counts too)
    # (the Version box's own way on an empty page: asked only when nothing is shown)
    without_text = sum(select_specs(faceted, wanted, PACKAGE_KEYS).matches) if needle and not any(chosen.matches) else 0
    sizes = [s.size for s in specs if s.size is not None]
    # (each value stays a choice, at 0, when the filters or the Version box narrow the counts)
    facets = (
        with_every_value(chosen.facets, spec_values(faceted, PACKAGE_FILTER_KEYS))
        if wanted or needle
        else chosen.facets
    )
    return PackagePage(
        tag=tag,
        name=name,
        specs=tuple(specs),
        facets=facets,
        other_tags=tuple((t, n) for t, n in package_tags if t != tag),
        size=sum(sizes) if sizes else None,
        sized=len(sizes),
        differing=differing,
        filters=wanted,
        matches=tuple(chosen.matches),
        text=text.strip(),
        relax=chosen.relax,
        install=install,
        recipe=recipe_url(name),
        runs_on={target: machines(target) for target in sorted({s.target for s in specs})},
        without_text=without_text,
    )
