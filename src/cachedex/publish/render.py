"""HTML for the page data of :mod:`.pages`, shared by the static site and the server.

Every link is relative (``root`` leads from a page back to the site's top; see
:mod:`.urls`), so the same HTML works from any folder, any static file server and
``cachedex serve``. Jinja2 escapes every value (autoescape), whatever a package, tag or
variant says. The Jinja speedups live in :mod:`._jinja_fast`.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import re
from collections.abc import Sequence
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import Any
from urllib.parse import quote

import msgspec
from jinja2 import PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from .. import __version__
from ..catalog import SpecSummary
from ..values import (
    LINK_RUN,
    counted,
    json_visible,
    size_change_text,
    size_text,
    spec_manifest_path,
    tarball_path_v2,
    total_size_text,
)
from ._jinja_fast import FastEnvironment, escape_exact, fast_join, render_template
from .cells import chips, compilers_html, options, package_rows, search_rows
from .changes import ChangesPage, ComparePage
from .coverage import BottleTable, CoveragePage, bottle_table
from .edge_lists import Configs, EdgeItems, dependents, edge_list, heaviest
from .facets import FACETS, PACKAGE_FACETS, shown_stacks
from .first_seen import first_seen_html
from .gzipped import COMPRESSOR
from .pages import Holder, HomePage, MirrorsPage, PackagePage, SpecPage, TagColumns, TagPage, TagRow
from .recent_changes import recent_syncs
from .reuse_page import ReuseView
from .search_page import SearchView
from .urls import EVERY_PAGE, Page, PageLinks, json_path, page_path, query_string, root_of, segment, spec_url

__all__ = [
    "ASSETS",
    "ASSET_SOURCES",
    "COLUMNS_FILE",
    "FIRST_ROWS",
    "LIVE_FILE",
    "asset_text",
    "columns_json",
    "download",
    "live_marker",
    "render",
    "render_all_packages",
    "render_not_found",
    "render_stamp",
    "to_json",
]

#: A file every copy of the site has, saying whether cachedex serves it: the pages'
#: script reads it to offer what only the server answers (a static copy says false). A
#: file both have, not a request only the server answers: a static server logs no 404.
LIVE_FILE = "live.json"


def live_marker(live: bool) -> bytes:
    """The bytes of :data:`LIVE_FILE`."""
    return b'{"live":true}\n' if live else b'{"live":false}\n'


#: Where each asset's text lives in the package.
ASSET_SOURCES = {"css": "cachedex.css", "core": "cachedex-core.js", "js": "cachedex.js"}


def asset_text(kind: str) -> bytes:
    """The bytes of a static asset (``css`` or ``js``)."""
    from importlib.resources import files

    return files("cachedex.publish").joinpath("static", ASSET_SOURCES[kind]).read_bytes()


def _asset_name(kind: str) -> str:
    """``static/<name>-<version>-<digest>.<ext>``: a browser keeps an asset for a year
    (``immutable``), and a version is kept until it is tagged while its assets change:
    the name must change with the text."""
    digest = hashlib.sha256(asset_text(kind)).hexdigest()[:10]
    stem, _, extension = ASSET_SOURCES[kind].rpartition(".")
    return f"static/{stem}-{__version__}-{digest}.{extension}"


#: The site's own assets, their version and their text's digest in their names (cache
#: forever, never stale).
ASSETS = {kind: _asset_name(kind) for kind in ASSET_SOURCES}

_TEMPLATES = {
    HomePage: "home.html",
    TagPage: "tag.html",
    PackagePage: "package.html",
    SpecPage: "spec.html",
    MirrorsPage: "mirrors.html",
    SearchView: "search.html",
    ReuseView: "reuse.html",
    ChangesPage: "changes.html",
    ComparePage: "compare.html",
    CoveragePage: "coverage.html",
}

#: Rows of a tag page in its HTML; the script shows the others (10,000 rows would take
#: a browser seconds to lay out), and ``all.html`` lists every package by name.
FIRST_ROWS = 100


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


@lru_cache(maxsize=4096)  # a few tags and roots, on every spec page
def _tag_link(tag: str, root: str, links: PageLinks) -> str:
    if not links.tag(tag):
        return str(escape(tag))
    return f'<a href="{escape(root)}tags/{escape(segment(tag))}/index.html">{escape(tag)}</a>'


@lru_cache(maxsize=4096)
def _holder_rows(
    holders: tuple[Holder, ...], root: str, spec: SpecSummary | None = None, links: PageLinks = EVERY_PAGE
) -> Markup:
    """A spec page's rows of the mirrors that name a spec: those with its binary, each
    with a link to its file there (see :func:`download`), apart from those whose index
    names it without one (as a dependency, or an external): those do not hold it."""
    if not holders:
        return Markup('<dt>Held by</dt><dd><ul class="holders"><li>no mirror</li></ul></dd>')
    rows = []
    binaries = [h for h in holders if h.listed]
    if binaries:
        items = "".join(f"<li>{_holder_item(h, root, links)}{_download_link(h, spec)}</li>" for h in binaries)
        rows.append(f'<dt>Binary in</dt><dd><ul class="holders">{items}</ul></dd>')
    if len(binaries) < len(holders):
        items = "".join(f"<li>{_holder_item(h, root, links)}</li>" for h in holders if not h.listed)
        rows.append(f'<dt>No binary in</dt><dd><ul class="holders muted">{items}</ul></dd>')
    return Markup("\n  ".join(rows))


@lru_cache(maxsize=4096)  # a few hundred kinds of holders recur on every spec page
def _holder_item(holder: Holder, root: str, links: PageLinks) -> str:
    return f"{_tag_link(holder.tag, root, links)} / {escape(holder.stack)}"


#: A path that needs no quoting in a URL (most of a mirror's file names).
_PLAIN_PATH = re.compile(r"[A-Za-z0-9._/-]*")


#: A matrix cell of no binary: a dot, read as "none".
NO_BINARY_MARK = '<span class="muted" role="img" aria-label="none">&middot;</span>'


def _bottle_rows(table: BottleTable) -> Markup:
    """The rows of a package page's version × architecture table: a check mark where a
    binary is (with the count when there are several), a dot where none is. Written
    here, not in Jinja: a big package has thousands of cells."""
    # (the marks said to screen readers too: "none", "yes", or the count alone)
    cells = {
        0: f'<td class="num">{NO_BINARY_MARK}</td>',
        1: '<td class="num"><span role="img" aria-label="yes">&#10003;</span></td>',
    }
    rows = []
    for version, counts in zip(table.versions, table.counts, strict=True):
        row = "".join(
            cells.get(n) or f'<td class="num"><span aria-hidden="true">&#10003;</span> {n}</td>' for n in counts
        )
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


def _without(filters: dict[str, str], key: str, text: str = "") -> dict[str, str]:
    """``filters`` but ``key``, and the name filter ``text`` (``q``) kept if there is one:
    the counts a page offers without one filter are made with the name filter applied."""
    kept = {k: v for k, v in filters.items() if k != key}
    return {**kept, "q": text} if text else kept


_env.filters.update(
    join=fast_join(_env),
    size=size_text,
    total=total_size_text,
    num="{:,}".format,
    counted=counted,
    # The dependents a ^/hash search finds go through link and run edges: a spec page
    # offers it only when some dependent links or runs the spec (the first found ends
    # the look, on a hub's thousands of dependents).
    links_or_runs=lambda edges: int(any(edge.deptypes & LINK_RUN for edge in edges)),
    chips=chips,
    query=query_string,
    without=_without,
    shown_stacks=shown_stacks,
    groupby_kind=_groupby_kind,
    search_rows=search_rows,
    package_rows=package_rows,
    compilers=compilers_html,
    options=options,
    exact=lambda value: Markup(escape_exact(value)),  # an attribute the page's script reads back as data
    # (exact once parsed; what would hide or reorder text as JSON escapes in the source)
    json_attribute=lambda value: Markup(escape_exact(json_visible(msgspec.json.encode(value).decode()))),
    page_link=_page_link,
    pick=lambda values: {key: value for key, value in values.items() if value},
    window=_window,
    element_text=_element_text,
    when=_when,
    segment=segment,
    spec_url=spec_url,
    edge_list=edge_list,
    dependents=dependents,
    heaviest=heaviest,
    holder_rows=_holder_rows,
    size_change=lambda c: size_change_text(c.size_change, c.sized, c.added_count + c.removed_count),
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


def render(
    page: Page,
    *,
    edge_items: EdgeItems | None = None,
    configs: Configs | None = None,
    query: str = "",
    links: PageLinks = EVERY_PAGE,
) -> str:
    """The page's HTML. A whole-site build passes one ``edge_items`` to every call;
    ``configs`` tells a spec page how its dependents were built (not in its data: a
    hash fixes it, so the page's HTML still follows from its JSON twin). ``query``: the
    live page's query string, which its links to "this page as JSON" keep (a diff, a
    search, a filtered page: its twin without them is another answer, or a 400).
    ``links``: which tags and packages have a page to link to (a static site's build
    gives none to names that clash where case is ignored; see :func:`.urls.page_links`)."""
    path = page_path(page)
    twin = json_path(path).rsplit("/", 1)[-1]
    # Markup: the root and the twin's name are ours and safe; escaping them again on
    # each of their uses is a measurable part of a spec page's render.
    return _render(
        _TEMPLATES[type(page)],
        page=page,
        root=Markup(root_of(path)),
        json_href=escape(f"{twin}?{query}") if query else Markup(twin),
        first_rows=FIRST_ROWS,
        edge_items=edge_items,
        configs=configs,
        links=links,
    )


def render_all_packages(page: TagPage) -> str:
    """``all.html`` beside a tag page: every package of the tag by name, no script needed."""
    return _render("all.html", page=page, root=root_of(page_path(page)), json_href="index.json")


def render_not_found(message: str = "", root: str = "/", heading: str = "Not found") -> str:
    """The 404 page: self-contained (its style inline), since it is shown at any URL.
    Its links lead to ``root`` ("/"), and its script finds the site's top when it is
    served under a sub-path. A live server's other error pages are it with another
    ``heading`` ("400 Bad Request"), so that they keep the site's navigation."""
    return _render("404.html", message=message, root=root, heading=heading, json_href="", css=Markup(_css()))


@lru_cache(maxsize=1)
def _css() -> str:
    return asset_text("css").decode()


def to_json(page: Page) -> bytes:
    """The page's JSON twin."""
    return msgspec.json.encode(page)


#: Beside a tag page: what its script loads (:func:`columns_json`), gzipped beside it.
COLUMNS_FILE = "columns.json"


def columns_json(page: TagPage) -> bytes:
    """:data:`COLUMNS_FILE` of a tag page: its tag and spec columns (an unfiltered page's)."""
    return msgspec.json.encode(TagColumns(tag=page.tag, specs=page.specs))


@lru_cache(maxsize=1)
def render_stamp() -> bytes:
    """What a page's files depend on besides its data: the version, the templates and
    the assets, the code (HTML is made in Python too, and a release keeps its version
    number until it is tagged), and what gzips the big twins, as a digest. Equal
    stamps, equal data: equal files."""
    from importlib.resources import files

    digest = hashlib.sha256(f"{__version__}\0{COMPRESSOR}".encode())
    for folder in ("templates", "static"):
        for entry in sorted(files("cachedex.publish").joinpath(folder).iterdir(), key=lambda e: e.name):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
    package = Path(str(files("cachedex")))
    for module in sorted(package.rglob("*.py")):
        digest.update(str(module.relative_to(package)).encode() + b"\0" + module.read_bytes())
    return f"cachedex {__version__} {digest.hexdigest()}\n".encode()
