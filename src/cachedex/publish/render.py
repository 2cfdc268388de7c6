"""HTML for the page data of :mod:`cachedex.pages`, shared by the static site and the server.

Every link is relative (``root`` leads from a page back to the site's top), so the
same HTML works from any folder, any static file server and ``cachedex serve``. Jinja2
escapes every value (autoescape), whatever a package, tag or variant says.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import quote

import msgspec
from jinja2 import Environment, PackageLoader, StrictUndefined, pass_eval_context, select_autoescape
from jinja2.compiler import CodeGenerator
from markupsafe import Markup, escape

try:
    from markupsafe import _escape_inner  # the C function behind escape(), on str only
except ImportError:  # pragma: no cover - another MarkupSafe; the same text, a little slower

    def _escape_inner(text: str) -> str:
        return str.__str__(escape(text))


from .. import __version__
from ..catalog import Edge
from ..values import human_size, is_dag_hash
from .pages import FACETS, Holder, HomePage, MirrorsPage, PackagePage, SpecPage, TagPage

__all__ = [
    "ASSETS",
    "json_path",
    "page_path",
    "render",
    "render_all_packages",
    "render_not_found",
    "render_stamp",
    "spec_url",
    "to_json",
]

#: The site's own assets, their version in their names (cache forever, never stale).
ASSETS = {"css": f"static/cachedex-{__version__}.css", "js": f"static/cachedex-{__version__}.js"}
#: Where each asset's text lives in the package.
ASSET_SOURCES = {"css": "cachedex.css", "js": "cachedex.js"}

Page = HomePage | TagPage | PackagePage | SpecPage | MirrorsPage

_TEMPLATES = {
    HomePage: "home.html",
    TagPage: "tag.html",
    PackagePage: "package.html",
    SpecPage: "spec.html",
    MirrorsPage: "mirrors.html",
}


def _when(value: float | None) -> str:
    if value is None:
        return "never"
    return datetime.datetime.fromtimestamp(value, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _segment(value: str) -> str:
    """A name as one URL path segment."""
    return quote(value, safe="")


def _escape_output(value: object) -> str:
    """The text ``markupsafe.escape`` gives (the same characters), as a plain string.

    Jinja escapes each ``{{ value }}`` with ``escape``, which wraps its result in a
    ``Markup``: 0.46 us, two thirds of it making the ``Markup``, and a spec page has
    about 45 of them. The page only joins those pieces, so a plain string will do."""
    if type(value) is str:
        return _escape_inner(value)
    html = getattr(value, "__html__", None)
    if html is not None:  # Markup, or an object that renders itself
        return html()  # type: ignore[no-any-return]
    return _escape_inner(str(value))  # StrictUndefined raises here, as in escape()


class _CodeGenerator(CodeGenerator):
    """Jinja's code generator, but ``{{ value }}`` in autoescaped output calls
    :func:`_escape_output`. Anything else (a volatile autoescape setting, a
    ``finalize``) is compiled as Jinja does; so would everything if a later Jinja
    renamed this hook: same pages, slower."""

    def _output_child_pre(self, node: Any, frame: Any, finalize: Any) -> None:
        if frame.eval_ctx.autoescape and not frame.eval_ctx.volatile and finalize.src is None:
            self.write("environment.escape_output(")
        else:
            super()._output_child_pre(node, frame, finalize)


class _Environment(Environment):
    code_generator_class = _CodeGenerator
    escape_output = staticmethod(_escape_output)


_env = _Environment(
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


class _EdgeItems:
    """Each edge's list item, made once per edge object and ``root``.

    A whole site shows each edge on dozens of pages (in closures, as a dependency, as
    a dependent), the very same objects (:class:`~cachedex.pages.SpecGraph` makes
    each once): a spec page then costs a lookup per edge, by identity, instead of
    escaping hundreds of values, or hashing every field of each edge as a cache keyed
    by the edge would. The edges are kept alive with their items, so an identity
    cannot be reused while it is cached; past :attr:`LIMIT` edges the cache starts
    again. A server's pages bring new edge objects each time: it keeps at most that
    many (~20 MB). A site's worker sees ~170,000 edges, 6.7 million times, and a limit
    of 65,536 costs it 1,000 items made again (seen on the benchmark tag)."""

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


_edge_items = _EdgeItems()


def _edge_list(edges: Sequence[Edge], root: str, json_href: str) -> Markup:
    """A list of dependency edges (the first :data:`EDGE_ROWS`; the page's JSON twin
    has them all)."""
    if not edges:
        return Markup('<ul class="edges">\n<li class="muted">none</li>\n</ul>')
    items = "\n".join(_edge_items(edges[:EDGE_ROWS], root))
    more = (
        f'\n<p class="muted">&hellip; and {len(edges) - EDGE_ROWS:,} more: see <a href="{escape(json_href)}">'
        "this page as JSON</a>.</p>"
        if len(edges) > EDGE_ROWS
        else ""
    )
    return Markup(f'<ul class="edges">\n{items}\n</ul>{more}')


@lru_cache(maxsize=4096)
def _holder_items(holders: tuple[Holder, ...], root: str) -> Markup:
    """The mirrors holding a spec; the same few combinations recur on most spec pages."""
    if not holders:
        return Markup("<li>no mirror</li>")
    return Markup(
        "".join(
            f'<li><a href="{escape(root)}tags/{escape(_segment(h.tag))}/index.html">{escape(h.tag)}</a> / '
            f"{escape(h.stack)}" + ("" if h.listed else ' <span class="tag muted">no binary</span>') + "</li>"
            for h in holders
        )
    )


def _element_text(value: str) -> Markup:
    """``value`` escaped for the text of an element (never an attribute): only ``&``,
    ``<`` and ``>``. The raw JSON of a spec is full of quotes, which escaping
    everything would turn into ``&#34;``: that part of the page half again as long."""
    return Markup(value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


_jinja_join = _env.filters["join"]


@pass_eval_context
def _join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
    """Jinja's ``join`` filter, in one call for what pages join: plain strings (a package
    page joins each spec's stacks and variants; Jinja's filter costs 2 us a call). The
    text is the same: Jinja joins plain strings plainly too, and autoescape escapes the
    result."""
    if attribute is None and type(d) is str and type(value) is tuple and all(type(v) is str for v in value):
        return d.join(value)
    return _jinja_join(eval_ctx, value, d, attribute)  # type: ignore[no-any-return]


_env.filters.update(
    join=_join,
    size=human_size,
    element_text=_element_text,
    when=_when,
    segment=_segment,
    edge_list=_edge_list,
    holder_items=_holder_items,
)
#: What every template may use besides its own values. Each render gets these and its
#: values as its whole context (see :func:`_render`), not Jinja's globals.
_GLOBALS = {"assets": ASSETS, "facets": FACETS, "version": __version__}


def _render(name: str, **values: object) -> str:
    """Render a template with :data:`_GLOBALS` and ``values`` as its context.

    What ``Template.render`` does, less the merging of Jinja's own globals (a chain
    of dicts) into every context: on a site of 250,000 small pages that merge is a
    tenth of the rendering."""
    template = _env.get_template(name)
    context = template.new_context({**_GLOBALS, **values}, shared=True)
    try:
        return _env.concat(template.root_render_func(context))  # type: ignore[attr-defined]
    except Exception:
        _env.handle_exception()  # re-raised with the template's own lines in the traceback


def page_path(page: Page, *, url: bool = False) -> str:
    """The page's HTML file inside the site (its JSON twin: :func:`json_path`); with
    ``url``, the same path as a URL (names percent-encoded).

    A spec page is a file, ``specs/<first two characters>/<hash>.html``, not a folder:
    a site holds hundreds of thousands of them. A folder each would double the cost of
    writing them, and one folder for all would triple the cost of creating a file."""
    name = _segment if url else str
    if isinstance(page, HomePage):
        return "index.html"
    if isinstance(page, TagPage):
        return f"tags/{name(page.tag.name)}/index.html"
    if isinstance(page, PackagePage):
        return f"tags/{name(page.tag)}/packages/{name(page.name)}/index.html"
    if isinstance(page, SpecPage):
        return f"specs/{name(page.spec.hash[:2])}/{name(page.spec.hash)}.html"
    return "mirrors/index.html"


def spec_url(dag_hash: str) -> str:
    """A spec page's path from the site's top, as a URL."""
    if is_dag_hash(dag_hash):  # nothing to quote
        return f"specs/{dag_hash[:2]}/{dag_hash}.html"
    return f"specs/{_segment(dag_hash[:2])}/{_segment(dag_hash)}.html"


_env.filters["spec_url"] = spec_url


def json_path(html_path: str) -> str:
    """The JSON twin of an HTML page: ``index.json`` beside ``index.html``,
    ``<hash>.json`` beside ``<hash>.html``."""
    return html_path.removesuffix(".html") + ".json"


def _root(path: str) -> str:
    return "../" * path.count("/")


#: Rows of a tag page in its HTML; the script shows the others (10,000 rows would take
#: a browser seconds to lay out), and ``all.html`` lists every package by name.
FIRST_ROWS = 200
#: Entries of each edge list of a spec page (dependencies, closure, dependents) in its
#: HTML; all are in its JSON. A core package can have tens of thousands of dependents.
EDGE_ROWS = 300


def render(page: Page) -> str:
    """The page's HTML."""
    path = page_path(page)
    # Markup: the root and the twin's name are ours and safe; escaping them again on
    # each of their uses is a measurable part of a spec page's render.
    return _render(
        _TEMPLATES[type(page)],
        page=page,
        root=Markup(_root(path)),
        json_href=Markup(json_path(path).rsplit("/", 1)[-1]),
        first_rows=FIRST_ROWS,
    )


def render_all_packages(page: TagPage) -> str:
    """``all.html`` beside a tag page: every package of the tag by name, no script needed."""
    return _render("all.html", page=page, root=_root(page_path(page)), json_href="index.json")


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
