"""A spec page's edge lists, written in Python: its dependencies, its closure (and the
largest binaries of its download), and its cached dependents grouped by package (those
of one version labelled with what differs between their builds), each the first
:data:`EDGE_ROWS` (the page's JSON twin has them all).

A hub library's page lists hundreds of edges, and a site shows each edge on dozens of
pages: each item is made once per edge object (:class:`EdgeItems`), and a dependent's
link is escaped as plain text, not through a ``Markup`` per value.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Callable, Collection, Container, Mapping, Sequence
from operator import attrgetter

from markupsafe import Markup, escape

from ..catalog import Edge, SpecConfig
from ..values import LINK_RUN, decode_variants, is_dag_hash, size_text
from ._jinja_fast import escape_text
from .spec_pages import CLOSURE_LISTED, SpecPage, largest_dependencies
from .urls import spec_path, spec_url

__all__ = [
    "EDGE_ROWS",
    "Configs",
    "EdgeItems",
    "dependents",
    "edge_item",
    "edge_list",
    "heaviest",
    "told_apart",
]

#: How a page finds the builds (variants, compiler, OS, target) of the dependents it
#: labels, by their hashes; those it does not know are left out.
Configs = Callable[[Collection[str]], Mapping[str, SpecConfig]]

#: Entries of each edge list of a spec page (dependencies, closure, dependents) in its
#: HTML; all are in its JSON (but a closure's past :data:`CLOSURE_LISTED`). A core
#: package can have tens of thousands of dependents.
EDGE_ROWS = 300

_NO_BINARY = ' <span class="tag muted" title="no binary of this in the cache">no binary</span>'


def edge_item(edge: Edge, root: str, *, linked: bool = True) -> str:
    """A dependency's (or a closure's) list item, linking to its spec page (``linked``;
    else its name alone: a spec no mirror holds has no page in a site)."""
    short, named = escape(edge.hash[:7]), f"{escape(edge.name)}@{escape(edge.version)}"
    shown = f'<a href="{escape(root)}{escape(spec_url(edge.hash))}">{named}</a>' if linked else named
    return (
        f"<li>{shown} <code>/{short}</code>"
        + (f' <span class="tag">{_KIND[edge.deptypes]}</span>' if edge.deptypes in _KIND else "")
        + (f' <span class="tag">{escape_text(edge.virtuals)}</span>' if edge.virtuals else "")
        + (f' <span class="size">{size_text(edge.size)}</span>' if edge.listed else _NO_BINARY)
        + "</li>"
    )


#: How an edge's types show when it is not link or run (bits: build 1, link 2, run 4, test 8).
_KIND = {deptypes: "build" if deptypes & 1 else "test" for deptypes in range(1, 16) if not deptypes & LINK_RUN}


class EdgeItems:
    """Each edge's list item, made once per edge object and ``root``: a whole-site
    build creates one and passes it to every ``render.render``.

    A whole site shows each edge on dozens of pages (in closures, as a dependency, as
    a dependent), the very same objects (``graph.SpecGraph`` makes each once): a spec
    page then costs a lookup per edge, by identity, instead of escaping hundreds of
    values, or hashing every field of each edge as a cache keyed by the edge would. The
    edges are kept alive with their items, so an identity cannot be reused while it is
    cached; past :attr:`LIMIT` edges the cache starts again (bench/README.md §site)."""

    LIMIT = 1 << 16

    def __init__(self) -> None:
        self.items: dict[str, dict[int, str]] = {}  # root -> id(edge) -> item
        self.edges: list[Edge] = []
        #: The hashes that have a spec page (a site's: those some mirror holds), if not
        #: every one: a dependency a mirror dropped while its dependents stay is named,
        #: not linked to a page the site does not have.
        self.pages: Container[str] | None = None
        #: The specs whose page came or went since the pages on disk were written (see
        #: :func:`.site_delta.relinked`): a page linking one is rendered again, its JSON
        #: twin unchanged or not.
        self.relinked: frozenset[str] = frozenset()

    def relinks(self, page: SpecPage) -> bool:
        """Whether a spec's ``page`` shows a spec of :attr:`relinked`."""
        relinked = self.relinked
        shown = (page.dependencies, page.closure, page.dependents)
        return bool(relinked) and any(edge.hash in relinked for edges in shown for edge in edges)

    def __call__(self, edges: Sequence[Edge], root: str, make: Callable[[Edge, str], str] | None = None) -> list[str]:
        """Each edge's item as ``make`` (default: a dependency list's item) writes it."""
        make = make or edge_item
        key = f"{make.__name__}\0{root}"
        items = list(map(self.items.get(key, {}).get, map(id, edges)))  # a loop in C: the hot path
        if None in items:
            if len(self.edges) + len(edges) > self.LIMIT:
                self.items.clear()
                self.edges.clear()
            cache = self.items.setdefault(key, {})
            pages = self.pages if make is edge_item else None
            for n, edge in enumerate(edges):
                if items[n] is None:
                    made = (
                        make(edge, root) if pages is None or edge.hash in pages else edge_item(edge, root, linked=False)
                    )
                    items[n] = cache[id(edge)] = made
                    self.edges.append(edge)
        return items  # type: ignore[return-value]


#: An edge list with no edges.
_NONE = Markup('<ul class="edges">\n<li class="muted">none</li>\n</ul>')


def _more(edges: Sequence[Edge], json_href: str, total: int | None = None) -> str:
    """What follows a list of the first :data:`EDGE_ROWS` of ``edges`` (of ``total``, when
    the page's JSON lists fewer): how many it left out, and where they are."""
    count = len(edges) if total is None else total
    if count <= EDGE_ROWS:
        return ""
    listed = "" if count <= len(edges) else f", which lists the first {CLOSURE_LISTED:,}"
    return (
        f'\n<p class="muted">&hellip; and {count - EDGE_ROWS:,} more: see <a href="{escape(json_href)}">'
        f"this page as JSON</a>{listed}.</p>"
    )


def edge_list(
    edges: Sequence[Edge], root: str, json_href: str, edge_items: EdgeItems | None, total: int | None = None
) -> Markup:
    """A list of dependency edges (the first :data:`EDGE_ROWS`; the page's JSON twin
    has them all, or the first of ``total``)."""
    if not edges:
        return _NONE
    shown = edges[:EDGE_ROWS]
    items = "\n".join(edge_items(shown, root) if edge_items is not None else [edge_item(e, root) for e in shown])
    return Markup(f'<ul class="edges">\n{items}\n</ul>{_more(edges, json_href, total)}')


def heaviest(
    closure: Sequence[Edge], closure_size: int | None, root: str, edge_items: EdgeItems | None = None
) -> Markup:
    """:func:`largest_dependencies` as a spec page lists them, linked (each link made
    once per edge object by ``edge_items``: a hub's binary is among the largest of
    thousands of pages)."""
    largest = largest_dependencies(closure, closure_size)
    if not largest:
        return Markup("")
    root = html.escape(str(root))
    edges = [edge for edge, _ in largest]
    links = edge_items(edges, root, _heavy_link) if edge_items is not None else [_heavy_link(e, root) for e in edges]
    items = "".join(
        f'<li>{link} <span class="muted">({html.escape(share)})</span></li>'
        for link, (_, share) in zip(links, largest, strict=True)
    )
    return Markup(f'<ol class="heaviest">{items}</ol>')


def _heavy_link(edge: Edge, root: str) -> str:
    """A dependency among the largest: linked, with its size (``root`` comes escaped)."""
    label = html.escape(f"{edge.name}@{edge.version}")
    return f'<a href="{root}{html.escape(spec_url(edge.hash))}">{label}</a> {size_text(edge.size)}'


def _dependent_link(edge: Edge, root: str) -> str:
    """One dependent in its package's group: its version, linked, and its short hash.
    Escaped as plain text (``html.escape``): a hub library's page shows hundreds of
    these, and making a ``Markup`` of each value cost more than all the rest. ``root``
    comes escaped (once a page, by :func:`dependents`), and a DAG hash, checked, needs
    no escaping, nor does its page's path."""
    dag_hash = edge.hash
    if is_dag_hash(dag_hash):
        href, short = spec_path(dag_hash), dag_hash[:7]  # the path, without checking the hash again
    else:
        href, short = html.escape(spec_url(dag_hash)), html.escape(dag_hash[:7])
    version = edge.version
    return (
        f'<a href="{root}{href}">{version if _PLAIN(version) else html.escape(version)}</a>'
        f" <code>/{short}</code>" + (f' <span class="tag">{escape_text(edge.virtuals)}</span>' if edge.virtuals else "")
    )


#: Text that escaping leaves as it is (most versions): told by one C-level match.
_PLAIN = re.compile(r"[\w.+\-]*").fullmatch


#: What may tell apart specs of one package and version listed together, beyond their
#: hashes, each as Spack's spec syntax writes it (their variants come first, apart).
_TOLD_BY = (
    ("os", "os={}"),
    ("target", "target={}"),
    ("compiler", "%{}"),
)  # (the compiler last, as Spack 1.0 writes it)


def told_apart(edges: Sequence[Edge], configs: Configs) -> list[str]:
    """For a spec's dependents in the order pages list them (name, version, hash), what
    tells apart those of one package and version, which otherwise differ by their
    hashes alone (the UX review: three adios2@2.10.2 in a row): the variants not all of
    them have, and those of their compiler, OS and target that are not the same for all
    (``"+mpi target=zen4 %gcc@11.4.0"``); ``""`` for the rest. ``configs`` is asked
    once, for those that share their name and version with another (on most pages,
    none)."""
    keys = list(map(attrgetter("name", "version"), edges))
    if len(set(keys)) == len(keys):  # (told in C: most pages)
        return [""] * len(edges)
    runs = [len(tuple(run)) for _, run in itertools.groupby(keys)]
    alike, at = [], 0
    for count in runs:
        alike.append(edges[at : at + count])
        at += count
    found = configs([edge.hash for run in alike if len(run) > 1 for edge in run])
    told: list[str] = []
    for run in alike:
        told += _differences([found.get(edge.hash) for edge in run]) if len(run) > 1 else [""]
    return told


def _differences(builds: list[SpecConfig | None]) -> list[str]:
    """Each build's variants that not all of ``builds`` have, then its values of those
    of the fields :data:`_TOLD_BY` names that differ between them (a compiler "none",
    of a spec built by none, is left out: the others' ``%gcc@...`` tells it apart)."""
    known = [build for build in builds if build is not None]
    variants = {build.variants: decode_variants(build.variants) for build in known}
    common = set.intersection(*map(set, variants.values())) if variants else set()
    differ = [(field, form) for field, form in _TOLD_BY if len({getattr(build, field) for build in known}) > 1]
    return [
        ""
        if build is None
        else " ".join(
            [v for v in variants[build.variants] if v not in common]
            + [form.format(value) for field, form in differ if (value := getattr(build, field)) != "none"]
        )
        for build in builds
    ]


def dependents(
    edges: Sequence[Edge],
    root: str,
    json_href: str,
    edge_items: EdgeItems | None = None,
    configs: Configs | None = None,
) -> Markup:
    """Cached dependents grouped by package (the first :data:`EDGE_ROWS`; the JSON twin
    has them all); with ``configs``, each labelled with what tells it apart from the
    others of its package (:func:`told_apart`)."""
    if not edges:
        return _NONE
    shown = edges[:EDGE_ROWS]
    root = html.escape(str(root))  # once for every link; and a plain str: a Markup would make each escape one
    links = (
        edge_items(shown, root, _dependent_link)
        if edge_items is not None
        else [_dependent_link(e, root) for e in shown]
    )
    groups = [(name, len(tuple(group))) for name, group in itertools.groupby(map(attrgetter("name"), shown))]
    if configs is not None and len(groups) < len(shown):
        told = told_apart(shown, configs)
        links = [
            f'{link} <span class="told">{html.escape(label)}</span>' if label else link
            for link, label in zip(links, told, strict=True)
        ]
    items = []
    at = 0
    for name, count in groups:
        items.append(f"<li><strong>{escape_text(name)}</strong> ({count}): {', '.join(links[at : at + count])}</li>")
        at += count
    return Markup('<ul class="edges grouped">\n' + "\n".join(items) + f"\n</ul>{_more(edges, json_href)}")
