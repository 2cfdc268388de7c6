"""HTML for the page data of :mod:`.pages`, shared by the static site and the server.

Every link is relative (``root`` leads from a page back to the site's top; see
:mod:`.urls`), so the same HTML works from any folder, any static file server and
``cachedex serve``. Jinja2 escapes every value (autoescape), whatever a package, tag or
variant says. The Jinja speedups live in :mod:`._jinja_fast`.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import msgspec
from jinja2 import PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from .. import __version__
from ..catalog import Edge
from ..values import human_size
from ._jinja_fast import FastEnvironment, fast_join, render_template
from .pages import FACETS, Holder, HomePage, MirrorsPage, PackagePage, SpecPage, TagPage
from .urls import Page, has_page, json_path, page_path, root_of, segment, spec_url

__all__ = [
    "ASSETS",
    "ASSET_SOURCES",
    "EDGE_ROWS",
    "FIRST_ROWS",
    "EdgeItems",
    "asset_text",
    "render",
    "render_all_packages",
    "render_not_found",
    "render_stamp",
    "to_json",
]

#: The site's own assets, their version in their names (cache forever, never stale).
ASSETS = {"css": f"static/cachedex-{__version__}.css", "js": f"static/cachedex-{__version__}.js"}
#: Where each asset's text lives in the package.
ASSET_SOURCES = {"css": "cachedex.css", "js": "cachedex.js"}

_TEMPLATES = {
    HomePage: "home.html",
    TagPage: "tag.html",
    PackagePage: "package.html",
    SpecPage: "spec.html",
    MirrorsPage: "mirrors.html",
}

#: Rows of a tag page in its HTML; the script shows the others (10,000 rows would take
#: a browser seconds to lay out), and ``all.html`` lists every package by name.
FIRST_ROWS = 200
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
        + (f' <span class="tag">{escape(edge.virtuals)}</span>' if edge.virtuals else "")
        + ("" if edge.listed else _NO_BINARY)
        + "</li>"
    )


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

    def __call__(self, edges: Sequence[Edge], root: str) -> list[str]:
        items = list(map(self.items.get(root, {}).get, map(id, edges)))  # a loop in C: the hot path
        if None in items:
            if len(self.edges) + len(edges) > self.LIMIT:
                self.items.clear()
                self.edges.clear()
            cache = self.items.setdefault(str(root), {})
            for n, edge in enumerate(edges):
                if items[n] is None:
                    items[n] = cache[id(edge)] = _edge_item(edge, root)
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


def _tag_link(tag: str, root: str) -> str:
    if not has_page(tag):
        return str(escape(tag))
    return f'<a href="{escape(root)}tags/{escape(segment(tag))}/index.html">{escape(tag)}</a>'


@lru_cache(maxsize=4096)
def _holder_items(holders: tuple[Holder, ...], root: str) -> Markup:
    """The mirrors holding a spec; the same few combinations recur on most spec pages."""
    if not holders:
        return Markup("<li>no mirror</li>")
    return Markup(
        "".join(
            f"<li>{_tag_link(h.tag, root)} / {escape(h.stack)}"
            + ("" if h.listed else ' <span class="tag muted">no binary</span>')
            + "</li>"
            for h in holders
        )
    )


def _element_text(value: str) -> Markup:
    """``value`` escaped for the text of an element (never an attribute): only ``&``,
    ``<`` and ``>``. The raw JSON of a spec is full of quotes, which escaping
    everything would turn into ``&#34;``: that part of the page half again as long."""
    return Markup(value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


_env.filters.update(
    join=fast_join(_env),
    size=human_size,
    element_text=_element_text,
    when=_when,
    segment=segment,
    spec_url=spec_url,
    edge_list=_edge_list,
    holder_items=_holder_items,
    has_page=has_page,
)
#: What every template may use besides its own values. Each render gets these and its
#: values as its whole context, not Jinja's globals.
_GLOBALS = {"assets": ASSETS, "facets": FACETS, "version": __version__}


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
    """The 404 page. ``root`` is absolute ("/") because a 404 is shown at any depth."""
    return _render("404.html", message=message, root=root, json_href="")


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
