"""HTML for the page data of :mod:`.pages`, shared by the static site and the server.

Every link is relative (``root`` leads from a page back to the site's top; see
:mod:`.urls`), so the same HTML works from any folder, any static file server and
``cachedex serve``. Jinja2 escapes every value (autoescape), whatever a package, tag or
variant says. The Jinja speedups live in :mod:`._jinja_fast`.
"""

from __future__ import annotations

import datetime
import hashlib
import html
import itertools
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import attrgetter
from typing import Any
from urllib.parse import quote

import msgspec
from jinja2 import PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from .. import __version__
from ..catalog import Edge, SpecSummary
from ..values import LINK_RUN, human_size, is_dag_hash, spec_manifest_path, tarball_path_v2
from ._jinja_fast import FastEnvironment, escape_text, fast_join, render_template
from .cells import chips, options, package_rows, search_rows, size_text
from .changes import ChangesPage, ComparePage, recent_syncs
from .coverage import BottleTable, CoveragePage, bottle_table
from .facets import FACETS, PACKAGE_FACETS, shown_stacks
from .first_seen import first_seen_html
from .pages import Holder, HomePage, MirrorsPage, PackagePage, SpecPage, TagPage, TagRow
from .search_page import SearchView
from .urls import Page, has_page, json_path, page_path, query_string, root_of, segment, spec_url

__all__ = [
    "ASSETS",
    "ASSET_SOURCES",
    "EDGE_ROWS",
    "FIRST_ROWS",
    "EdgeItems",
    "asset_text",
    "download",
    "render",
    "render_all_packages",
    "render_not_found",
    "render_stamp",
    "to_json",
]

#: The site's own assets, their version in their names (cache forever, never stale).
ASSETS = {
    "css": f"static/cachedex-{__version__}.css",
    "core": f"static/cachedex-core-{__version__}.js",
    "js": f"static/cachedex-{__version__}.js",
}
#: Where each asset's text lives in the package.
ASSET_SOURCES = {"css": "cachedex.css", "core": "cachedex-core.js", "js": "cachedex.js"}

_TEMPLATES = {
    HomePage: "home.html",
    TagPage: "tag.html",
    PackagePage: "package.html",
    SpecPage: "spec.html",
    MirrorsPage: "mirrors.html",
    SearchView: "search.html",
    ChangesPage: "changes.html",
    ComparePage: "compare.html",
    CoveragePage: "coverage.html",
}

#: Rows of a tag page in its HTML; the script shows the others (10,000 rows would take
#: a browser seconds to lay out), and ``all.html`` lists every package by name.
FIRST_ROWS = 100
#: Entries of each edge list of a spec page (dependencies, closure, dependents) in its
#: HTML; all are in its JSON. A core package can have tens of thousands of dependents.
EDGE_ROWS = 300


def _when(value: float | None) -> str:
    if value is None:
        return "never"
    return datetime.datetime.fromtimestamp(value, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


_env = FastEnvironment(
    loader=PackageLoader("cachedex.publish", "templates"),
    autoescape=select_autoescape(["html"], default_for_string=True, default=True),
    auto_reload=False,  # templates are package data; checking their files costs 4 stats a page
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


_NO_BINARY = ' <span class="tag muted" title="no binary of this in the cache">no binary</span>'


def _edge_item(edge: Edge, root: str) -> str:
    href, short = escape(spec_url(edge.hash)), escape(edge.hash[:7])
    return (
        f'<li><a href="{escape(root)}{href}">{escape(edge.name)}@{escape(edge.version)}</a> <code>/{short}</code>'
        + (f' <span class="tag">{_KIND[edge.deptypes]}</span>' if edge.deptypes in _KIND else "")
        + (f' <span class="tag">{escape(edge.virtuals)}</span>' if edge.virtuals else "")
        + (f' <span class="size">{size_text(edge.size)}</span>' if edge.listed else _NO_BINARY)
        + "</li>"
    )


#: How an edge's types show when it is not link or run (bits: build 1, link 2, run 4, test 8).
_KIND = {deptypes: "build" if deptypes & 1 else "test" for deptypes in range(1, 16) if not deptypes & LINK_RUN}


class EdgeItems:
    """Each edge's list item, made once per edge object and ``root``: a whole-site
    build creates one and passes it to every :func:`render`.

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

    def __call__(self, edges: Sequence[Edge], root: str, make: Callable[[Edge, str], str] | None = None) -> list[str]:
        """Each edge's item as ``make`` (default: a dependency list's item) writes it."""
        make = make or _edge_item
        key = f"{make.__name__}\0{root}"
        items = list(map(self.items.get(key, {}).get, map(id, edges)))  # a loop in C: the hot path
        if None in items:
            if len(self.edges) + len(edges) > self.LIMIT:
                self.items.clear()
                self.edges.clear()
            cache = self.items.setdefault(key, {})
            for n, edge in enumerate(edges):
                if items[n] is None:
                    items[n] = cache[id(edge)] = make(edge, root)
                    self.edges.append(edge)
        return items  # type: ignore[return-value]


def _edge_list(edges: Sequence[Edge], root: str, json_href: str, edge_items: EdgeItems | None) -> Markup:
    """A list of dependency edges (the first :data:`EDGE_ROWS`; the page's JSON twin
    has them all)."""
    if not edges:
        return Markup('<ul class="edges">\n<li class="muted">none</li>\n</ul>')
    shown = edges[:EDGE_ROWS]
    items = "\n".join(edge_items(shown, root) if edge_items is not None else [_edge_item(e, root) for e in shown])
    more = (
        f'\n<p class="muted">&hellip; and {len(edges) - EDGE_ROWS:,} more: see <a href="{escape(json_href)}">'
        "this page as JSON</a>.</p>"
        if len(edges) > EDGE_ROWS
        else ""
    )
    return Markup(f'<ul class="edges">\n{items}\n</ul>{more}')


def _dependent_link(edge: Edge, root: str) -> str:
    """One dependent in its package's group: its version, linked, and its short hash.
    Escaped as plain text (``html.escape``): a hub library's page shows hundreds of
    these, and making a ``Markup`` of each value cost more than all the rest. ``root``
    comes escaped (once a page, by :func:`_dependents`), and a DAG hash, checked, needs
    no escaping, nor does its page's path."""
    dag_hash = edge.hash
    if is_dag_hash(dag_hash):
        href, short = f"specs/{dag_hash[:2]}/{dag_hash}.html", dag_hash[:7]
    else:
        href, short = html.escape(spec_url(dag_hash)), html.escape(dag_hash[:7])
    version = edge.version
    return (
        f'<a href="{root}{href}">{version if _PLAIN(version) else html.escape(version)}</a>'
        f" <code>/{short}</code>" + (f' <span class="tag">{html.escape(edge.virtuals)}</span>' if edge.virtuals else "")
    )


#: Text that escaping leaves as it is (most versions): told by one C-level match.
_PLAIN = re.compile(r"[\w.+\-]*").fullmatch


def _dependents(edges: Sequence[Edge], root: str, json_href: str, edge_items: EdgeItems | None = None) -> Markup:
    """Cached dependents grouped by package (the first :data:`EDGE_ROWS`; the JSON twin has them all)."""
    if not edges:
        return Markup('<ul class="edges">\n<li class="muted">none</li>\n</ul>')
    shown = edges[:EDGE_ROWS]
    root = html.escape(str(root))  # once for every link; and a plain str: a Markup would make each escape one
    links = (
        edge_items(shown, root, _dependent_link)
        if edge_items is not None
        else [_dependent_link(e, root) for e in shown]
    )
    items = []
    at = 0
    for name, group in itertools.groupby(map(attrgetter("name"), shown)):
        count = len(tuple(group))
        items.append(f"<li><strong>{escape_text(name)}</strong> ({count}): {', '.join(links[at : at + count])}</li>")
        at += count
    more = (
        f'\n<p class="muted">&hellip; and {len(edges) - EDGE_ROWS:,} more: see <a href="{escape_text(json_href)}">'
        "this page as JSON</a>.</p>"
        if len(edges) > EDGE_ROWS
        else ""
    )
    return Markup('<ul class="edges grouped">\n' + "\n".join(items) + f"\n</ul>{more}")


@lru_cache(maxsize=4096)  # a few tags and roots, on every spec page
def _tag_link(tag: str, root: str) -> str:
    if not has_page(tag):
        return str(escape(tag))
    return f'<a href="{escape(root)}tags/{escape(segment(tag))}/index.html">{escape(tag)}</a>'


@lru_cache(maxsize=4096)
def _holder_items(holders: tuple[Holder, ...], root: str, spec: SpecSummary | None = None) -> Markup:
    """The mirrors holding a spec, each with a link to its file there (see :func:`download`)."""
    if not holders:
        return Markup("<li>no mirror</li>")
    return Markup("".join(f"<li>{_holder_item(h, root)}{_download_link(h, spec)}</li>" for h in holders))


@lru_cache(maxsize=4096)  # a few hundred kinds of holders recur on every spec page
def _holder_item(holder: Holder, root: str) -> str:
    return f"{_tag_link(holder.tag, root)} / {escape(holder.stack)}" + (
        "" if holder.listed else ' <span class="tag muted">no binary</span>'
    )


#: A path that needs no quoting in a URL (most of a mirror's file names).
_PLAIN_PATH = re.compile(r"[A-Za-z0-9._/-]*")


def _bottle_rows(table: BottleTable) -> Markup:
    """The rows of a package page's version × architecture table: a check mark where a
    binary is (with the count when there are several), a dot where none is. Written
    here, not in Jinja: a big package has thousands of cells."""
    cells = {0: '<td class="num"><span class="muted">&middot;</span></td>', 1: '<td class="num">&#10003;</td>'}
    rows = []
    for version, counts in zip(table.versions, table.counts, strict=True):
        row = "".join(cells.get(n) or f'<td class="num">&#10003; {n}</td>' for n in counts)
        rows.append(f'<tr><th scope="row">{escape(version)}</th>{row}</tr>')
    return Markup("\n".join(rows))


def _url_path(path: str) -> str:
    return path if _PLAIN_PATH.fullmatch(path) else quote(path)


def download(holder: Holder, spec: SpecSummary) -> tuple[str, str] | None:
    """(label, URL) of the file to download a spec's binary from a mirror served over
    HTTP(S) that lists it: a v2 mirror's ``.spack`` tarball; a v3 mirror's spec
    manifest, which names the tarball's blob and its sha256 (the catalog keeps no
    checksum). None for other mirrors (folders, OCI registries)."""
    if not holder.listed or not holder.url.startswith(("https://", "http://")):
        return None
    base = holder.url.rstrip("/") + "/"
    if holder.layout == 3:
        return "spec manifest", base + _url_path(spec_manifest_path(spec.name, spec.version, spec.hash))
    if holder.layout == 2:
        fields = {k: getattr(spec, k) for k in ("hash", "name", "version", "compiler", "platform", "os", "target")}
        return "binary (.spack)", base + _url_path(tarball_path_v2(**fields))
    return None


def _download_link(holder: Holder, spec: SpecSummary | None) -> str:
    found = download(holder, spec) if spec is not None else None
    return "" if found is None else f' &middot; <a href="{escape(found[1])}" rel="nofollow">{found[0]}</a>'


def _element_text(value: str) -> Markup:
    """``value`` escaped for the text of an element (never an attribute): only ``&``,
    ``<`` and ``>``. The raw JSON of a spec is full of quotes, which escaping
    everything would turn into ``&#34;``: that part of the page half again as long."""
    return Markup(value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def _total(size: int | None, sized: int, count: int) -> str:
    """A total of ``count`` sizes of which ``sized`` are known: "1.2 GB", "unknown",
    or "1.2 GB (3 of 5 known)"."""
    if not sized or size is None:
        return "unknown"
    return human_size(size) + ("" if sized >= count else f" ({sized:,} of {count:,} known)")


def _groupby_kind(tags: Sequence[TagRow]) -> list[tuple[str, list[TagRow]]]:
    """The home page's groups of tags, in order, each with its heading."""
    groups: list[tuple[str, list[TagRow]]] = []
    for kind, rows in itertools.groupby(tags, key=attrgetter("kind")):
        groups.append((_KIND_HEADINGS.get(kind, kind), list(rows)))
    return groups


_KIND_HEADINGS = {"branch": "Branches", "release": "Releases", "snapshot": "Snapshots"}


def _page_link(view: SearchView, number: int) -> str:
    """The link to page ``number`` of a search."""
    return _search_link_stem(view.query, view.tag, view.stack) + str(number)


@lru_cache(maxsize=256)  # a pager links up to 7 pages of one search
def _search_link_stem(query: str, tag: str, stack: str) -> str:
    """A search's link up to its page number (``...&page=``)."""
    scope = {"q": query, "tag": tag, "stack": stack}
    return "search.html" + query_string({**{k: v for k, v in scope.items() if v}, "page": ""})


def _window(current: int, last: int) -> list[int]:
    """The page numbers a pager shows: the first, the last, and two around the
    current one; 0 where some are left out."""
    wanted = sorted({1, last, *range(max(1, current - 2), min(last, current + 2) + 1)})
    shown: list[int] = []
    for number in wanted:
        if shown and number > shown[-1] + 1:
            shown.append(0)
        shown.append(number)
    return shown


def _without(filters: dict[str, str], key: str) -> dict[str, str]:
    return {k: v for k, v in filters.items() if k != key}


_env.filters.update(
    join=fast_join(_env),
    size=size_text,
    total=_total,
    num="{:,}".format,
    chips=chips,
    query=query_string,
    without=_without,
    shown_stacks=shown_stacks,
    groupby_kind=_groupby_kind,
    search_rows=search_rows,
    package_rows=package_rows,
    options=options,
    page_link=_page_link,
    pick=lambda values: {key: value for key, value in values.items() if value},
    window=_window,
    element_text=_element_text,
    when=_when,
    segment=segment,
    spec_url=spec_url,
    edge_list=_edge_list,
    dependents=_dependents,
    holder_items=_holder_items,
    has_page=has_page,
    size_change=lambda change: ("+" if change > 0 else "\u2212" if change < 0 else "\u00b1") + human_size(abs(change)),
    recent_syncs=recent_syncs,
    first_seen_html=first_seen_html,
    bottle_table=bottle_table,
    bottle_rows=_bottle_rows,
)
#: What every template may use besides its own values. Each render gets these and its
#: values as its whole context, not Jinja's globals.
_GLOBALS = {"assets": ASSETS, "facets": FACETS, "package_facets": PACKAGE_FACETS, "version": __version__}


def _render(name: str, **values: Any) -> str:
    return render_template(_env, _env.get_template(name), {**_GLOBALS, **values})


def render(page: Page, *, edge_items: EdgeItems | None = None) -> str:
    """The page's HTML. A whole-site build passes one ``edge_items`` to every call."""
    path = page_path(page)
    # Markup: the root and the twin's name are ours and safe; escaping them again on
    # each of their uses is a measurable part of a spec page's render.
    return _render(
        _TEMPLATES[type(page)],
        page=page,
        root=Markup(root_of(path)),
        json_href=Markup(json_path(path).rsplit("/", 1)[-1]),
        first_rows=FIRST_ROWS,
        edge_items=edge_items,
    )


def render_all_packages(page: TagPage) -> str:
    """``all.html`` beside a tag page: every package of the tag by name, no script needed."""
    return _render("all.html", page=page, root=root_of(page_path(page)), json_href="index.json")


def render_not_found(message: str = "", root: str = "/") -> str:
    """The 404 page: self-contained (its style inline), since it is shown at any URL.
    Its links lead to ``root`` ("/"), and its script finds the site's top when it is
    served under a sub-path."""
    return _render("404.html", message=message, root=root, json_href="", css=Markup(_css()))


@lru_cache(maxsize=1)
def _css() -> str:
    return asset_text("css").decode()


def to_json(page: Page) -> bytes:
    """The page's JSON twin."""
    return msgspec.json.encode(page)


@lru_cache(maxsize=1)
def render_stamp() -> bytes:
    """What the HTML of a page depends on besides its data: the version, the templates
    and the assets, as a digest. Equal stamps, equal data: equal HTML."""
    from importlib.resources import files

    digest = hashlib.sha256(__version__.encode())
    for folder in ("templates", "static"):
        for entry in sorted(files("cachedex.publish").joinpath(folder).iterdir(), key=lambda e: e.name):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return f"cachedex {__version__} {digest.hexdigest()}\n".encode()


def asset_text(kind: str) -> bytes:
    """The bytes of a static asset (``css`` or ``js``)."""
    from importlib.resources import files

    return files("cachedex.publish").joinpath("static", ASSET_SOURCES[kind]).read_bytes()
