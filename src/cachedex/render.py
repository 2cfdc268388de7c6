"""HTML for the page data of :mod:`cachedex.pages`, shared by the static site and the server.

Every link is relative (``root`` leads from a page back to the site's top), so the
same HTML works from any folder, any static file server and ``cachedex serve``. Jinja2
escapes every value (autoescape), whatever a package, tag or variant says.
"""

from __future__ import annotations

import datetime
from urllib.parse import quote

import msgspec
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from . import __version__
from .pages import FACETS, HomePage, MirrorsPage, PackagePage, SpecPage, TagPage
from .values import human_size

__all__ = ["ASSETS", "page_path", "render", "render_all_packages", "render_not_found", "to_json"]

#: The site's own assets, their version in their names (cache forever, never stale).
ASSETS = {"css": f"static/cachedex-{__version__}.css", "js": f"static/cachedex-{__version__}.js"}
#: Where each asset's text lives in the package.
ASSET_SOURCES = {"css": "cachedex.css", "js": "cachedex.js"}

Page = HomePage | TagPage | PackagePage | SpecPage | MirrorsPage

_TEMPLATES = {HomePage: "home.html", TagPage: "tag.html", PackagePage: "package.html",
              SpecPage: "spec.html", MirrorsPage: "mirrors.html"}


def _when(value: float | None) -> str:
    if value is None:
        return "never"
    return datetime.datetime.fromtimestamp(value, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _segment(value: str) -> str:
    """A name as one URL path segment."""
    return quote(value, safe="")


_env = Environment(
    loader=PackageLoader("cachedex", "templates"),
    autoescape=select_autoescape(["html"], default_for_string=True, default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters.update(size=human_size, when=_when, segment=_segment)
_env.globals.update(assets=ASSETS, facets=FACETS, version=__version__)


def page_path(page: Page, *, url: bool = False) -> str:
    """The page's HTML file inside the site (its JSON twin is ``index.json`` beside it);
    with ``url``, the same path as a URL (names percent-encoded)."""
    name = _segment if url else str
    if isinstance(page, HomePage):
        return "index.html"
    if isinstance(page, TagPage):
        return f"tags/{name(page.tag.name)}/index.html"
    if isinstance(page, PackagePage):
        return f"tags/{name(page.tag)}/packages/{name(page.name)}/index.html"
    if isinstance(page, SpecPage):
        return f"specs/{name(page.spec.hash)}/index.html"
    return "mirrors/index.html"


def _root(path: str) -> str:
    return "../" * path.count("/")


#: Rows of a tag page in its HTML; the script shows the others (10,000 rows would take
#: a browser seconds to lay out), and ``all.html`` lists every package by name.
FIRST_ROWS = 200
#: Entries of a spec's transitive closure listed in its HTML (all are in its JSON).
CLOSURE_ROWS = 300


def render(page: Page) -> str:
    """The page's HTML."""
    template = _env.get_template(_TEMPLATES[type(page)])
    return template.render(page=page, root=_root(page_path(page)), first_rows=FIRST_ROWS,
                           closure_rows=CLOSURE_ROWS)


def render_all_packages(page: TagPage) -> str:
    """``all.html`` beside a tag page: every package of the tag by name, no script needed."""
    return _env.get_template("all.html").render(page=page, root=_root(page_path(page)))


def render_not_found(message: str = "", root: str = "/") -> str:
    """The 404 page. ``root`` is absolute ("/") because a 404 is shown at any depth."""
    return _env.get_template("404.html").render(message=message, root=root)


def to_json(page: Page) -> bytes:
    """The page's JSON twin."""
    return msgspec.json.encode(page)


def asset_text(kind: str) -> bytes:
    """The bytes of a static asset (``css`` or ``js``)."""
    from importlib.resources import files

    return files("cachedex").joinpath("static", ASSET_SOURCES[kind]).read_bytes()
