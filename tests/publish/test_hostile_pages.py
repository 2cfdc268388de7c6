"""A hostile mirror's values on every kind of page, static and live, in Chromium: markup,
script, template syntax, javascript: URLs and text-reordering characters stay text.

One mirror (two tags of a release series, the older synced twice so that changes, feeds and coverage have
something), one site build, one live server; every page reached by following links from
each home page, plus the pages no link reaches (404s, comparison, diff, reuse)."""

from __future__ import annotations

import copy
import json
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urldefrag, urlsplit

import httpx
import pytest

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.publish.site import write_site
from tests.helpers import (
    LIBDWARF_CORE2,
    MIRRORS,
    StaticServer,
    fixture_index,
    make_config,
    write_v3_mirror,
    write_v3_view,
)
from tests.publish.conftest import PAGE_READY, TIMEOUT_MS
from tests.servers import uvicorn_serving

IMG = "<img src=x onerror=alert(1)>"
SVG = "\"'><svg onload=alert(2)>"
JS = "javascript:alert(3)"
SCRIPT = "</script><script>alert(4)</script>"
TEMPLATE = "{{7*7}}"
SEPARATORS = "a\u2028b\u2029c"
OVERRIDE = "\u202egnp.exe"
#: Sets the flag the tests look for, where a dialog could be swallowed.
FLAG = "<img src=x onerror=window.pwned=1>"
#: What sync takes as a package name: no '/', no '..', nothing invisible.
NAMES = (IMG, SVG, JS, TEMPLATE)

EVIL, SECOND, THIRD, LATER = "a" * 32, "b" * 32, "c" * 32, "d" * 32


def _index(*, later: bool) -> dict[str, object]:
    """The real v2 test index with hostile records added (and one more when ``later``)."""
    index = fixture_index(MIRRORS)
    installs = index["database"]["installs"]  # type: ignore[index]
    base = installs[LIBDWARF_CORE2]

    def add(dag_hash: str, name: str, version: str, parameters: dict[str, object], **spec: Any) -> None:
        made = copy.deepcopy(base)
        node = made["spec"]
        node.update(name=name, version=version, hash=dag_hash)
        node["parameters"].update(parameters)
        node["annotations"]["compiler"] = spec.get("compiler", "gcc@=10.2.1")
        node["arch"]["platform_os"] = spec.get("os", "debian6")
        node["arch"]["target"]["name"] = spec.get("target", "core2")
        node["dependencies"] = spec.get("dependencies", node["dependencies"])
        installs[dag_hash] = made

    add(
        EVIL,
        IMG,
        SCRIPT,
        {
            "note": IMG,
            "label": OVERRIDE,
            "sep": SEPARATORS,
            "url": JS,
            "tpl": TEMPLATE,
            "script": SCRIPT,
            SVG: "v",
            "flag": FLAG,
        },
        compiler="gcc@=" + SVG.replace(" ", ""),
        os=SVG,
        target=SCRIPT,
        dependencies=[{"name": JS, "hash": SECOND, "parameters": {"deptypes": ["build", "link"], "virtuals": [IMG]}}],
    )
    add(SECOND, JS, "\"'><svg/onload=alert(5)>", {"x": JS}, os=FLAG, target=IMG)
    add(
        THIRD,
        SVG,
        TEMPLATE,
        {"y": TEMPLATE},
        dependencies=[{"name": IMG, "hash": EVIL, "parameters": {"deptypes": ["link"], "virtuals": []}}],
    )
    if later:
        add(LATER, TEMPLATE, "1.0", {"z": SEPARATORS, "w": OVERRIDE}, target=JS)
    return index


@dataclass(frozen=True)
class Hostile:
    catalog: Path
    site: Path
    mirror: Path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Hostile:
    folder = tmp_path_factory.mktemp("hostile")
    # (the mirror's folder is shown on the mirrors page and in install commands)
    mirror = folder / SVG / IMG
    mirror.mkdir(parents=True)
    write_v3_mirror(mirror, _index(later=False))
    write_v3_view(mirror, "ml", _index(later=False))
    other = folder / "other"
    write_v3_mirror(other, _index(later=True))
    config = make_config(
        folder,
        [
            {"name": "v1.0.0", "url": str(mirror), "stacks": {"ml": {"view": "ml"}}},
            {"name": "v1.0.1", "url": str(other)},
        ],
    )
    with Catalog(config.catalog) as catalog:
        assert [r.error for r in sync(config, catalog)] == [None, None]
        write_v3_mirror(mirror, _index(later=True))
        time.sleep(0.01)
        assert [r.error for r in sync(config, catalog)] == [None, None]
        write_site(catalog, folder / "site")
    return Hostile(config.catalog, folder / "site", mirror)


@pytest.fixture(scope="module")
def static_url(hostile: Hostile) -> Iterator[str]:
    server = StaticServer(hostile.site)
    yield server.url
    server.close()


@pytest.fixture(scope="module")
def live_url(hostile: Hostile) -> Iterator[str]:
    from cachedex.cli.serve_app import serve_app

    with uvicorn_serving(serve_app(hostile.catalog), log_level="error") as url:
        yield url + "/"


@pytest.fixture(scope="module")
def watched(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """One page for the whole module, with every dialog any script opens recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    dialogs: list[str] = []

    def dismiss(dialog: Any) -> None:
        dialogs.append(f"{page.url}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", dismiss)
    yield page, dialogs
    context.close()


#: What a payload would leave in the DOM had it become markup: event handler attributes,
#: javascript: links, the payload's own elements, an inline script.
FOUND_MARKUP = """() => {
  const found = [];
  for (const element of document.querySelectorAll("*")) {
    for (const attribute of element.attributes) {
      const said = `${element.tagName} ${attribute.name}=${attribute.value}`;
      if (attribute.name.startsWith("on")) found.push(said);
      const link = ["href", "src", "action", "formaction", "xlink:href", "data", "poster"].includes(attribute.name);
      if (link && /^\\s*javascript:/i.test(attribute.value)) found.push(said);
    }
    if ((element.tagName === "A" || element.tagName === "AREA") && element.protocol === "javascript:") {
      found.push(`link to ${element.href}`);
    }
    if (element.tagName === "IMG" && element.getAttribute("src") === "x") found.push("img src=x");
    if (element.localName === "svg" && element.closest("main") && !element.closest("button, .badge, a"))
      found.push("svg in main");
    if (element.tagName === "SCRIPT" && !element.src && /alert|pwned/.test(element.textContent)) found.push("script");
  }
  if (window.pwned) found.push("window.pwned");
  return found;
}"""


def _inert(page: Any, dialogs: list[str]) -> str:
    """The page's text, once it is shown that no payload ran or became an element."""
    found = page.evaluate(FOUND_MARKUP)
    assert found == [], f"{page.url}: {found}"
    assert dialogs == []
    text = str(page.inner_text("body"))
    for raw in ("\u202e", "\u2028", "\u2029"):
        assert raw not in text, f"{page.url}: a raw {raw!r} is shown"
    assert not re.search(r"(tpl=|y=|@)49\b", text), f"{page.url}: a template was evaluated"
    return text


def _visit(page: Any, dialogs: list[str], url: str, *, found: bool = True) -> str:
    response = page.goto(url)
    assert response is not None and response.ok == found, f"{url}: {response and response.status}"
    if response.ok and _FILTERED.search(urlsplit(url).path):
        page.wait_for_function(PAGE_READY)
    return _inert(page, dialogs)


#: The pages whose script filters rows and then says it is ready: a tag's, a package's.
_FILTERED = re.compile(r"/tags/[^/]+/(index\.html|packages/[^/]+/(index\.html)?)?$")


def _links(page: Any, origin: str) -> set[str]:
    hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]')].map((a) => a.href)")
    found = set()
    for href in hrefs:
        url = urldefrag(href)[0]
        path = urlsplit(url).path
        if url.startswith(origin) and (path.endswith((".html", "/")) or "." not in path.rsplit("/", 1)[-1]):
            found.add(url)
    return found


def _crawl(page: Any, dialogs: list[str], root: str) -> dict[str, str]:
    """Every page of the site at ``root`` that links reach from its home: {url: its text};
    of the spec pages, the hostile spec's only, and no page twice with other filters
    (those show what it shows: the test of the tag page's script chooses filters)."""
    seen: dict[str, str] = {}
    todo = [root + "index.html"]
    while todo:
        url = todo.pop()
        if url in seen or len(seen) > 150 or ("/specs/" in url and EVIL not in url) or "?" in url:
            continue
        seen[url] = _visit(page, dialogs, url)
        todo.extend(sorted(_links(page, root) - seen.keys()))
    return seen


def _package_page(root: str, tag: str, name: str) -> str:
    return f"{root}tags/{tag}/packages/{quote(name, safe='')}/index.html"


@pytest.mark.parametrize("where", ["static", "live"])
def test_every_linked_page_shows_the_payloads_as_text(
    where: str, static_url: str, live_url: str, watched: tuple[Any, list[str]]
) -> None:
    page, dialogs = watched
    root = static_url if where == "static" else live_url
    texts = _crawl(page, dialogs, root)
    kinds = {
        "tags/v1.0.0/index.html",
        "tags/v1.0.0/changes/index.html",
        "tags/v1.0.0/coverage/index.html",
        "mirrors/index.html",
    }
    kinds.add("search.html")
    if where == "static":  # (the live change page links no comparison: its own test visits one)
        assert root + "tags/v1.0.1/compare/v1.0.0/index.html" in texts
    assert {root + kind for kind in kinds} <= texts.keys()
    assert all(_package_page(root, "v1.0.0", name) in texts for name in NAMES)
    spec = texts[f"{root}specs/aa/{EVIL}.html"]
    for shown in (IMG, SVG, SCRIPT, f"note='{IMG}'", f"url='{JS}'", f"tpl='{TEMPLATE}'", "\\u202egnp.exe", "\\u2028"):
        assert shown in spec, shown
    assert IMG in texts[root + "mirrors/index.html"]
    assert TEMPLATE in texts[root + "tags/v1.0.0/changes/index.html"]


def test_the_tag_page_s_script_draws_hostile_rows_filters_and_the_empty_box(
    static_url: str, live_url: str, watched: tuple[Any, list[str]]
) -> None:
    page, dialogs = watched
    for root in (static_url, live_url):
        _visit(page, dialogs, root + "tags/v1.0.0/index.html")
        names = [t.strip() for t in page.locator("#rows tbody td.name").all_inner_texts()]
        assert set(NAMES) <= set(names)
        page.select_option("select[name=os]", SVG)
        page.wait_for_function("() => document.getElementById('shown').textContent === '1'")
        assert [t.strip() for t in page.locator("#rows tbody td.name").all_inner_texts()] == [IMG]
        _inert(page, dialogs)
        # An OS and a target no spec has together: the empty box, its ways on drawn by the script.
        _visit(page, dialogs, f"{root}tags/v1.0.0/index.html?os={quote(SVG)}&target={quote(IMG)}")
        assert page.inner_text("#shown") == "0" and page.locator("#empty").is_visible()
        page.select_option("select[name=os]", "")
        page.wait_for_function("() => document.getElementById('shown').textContent === '1'")
        assert [t.strip() for t in page.locator("#rows tbody td.name").all_inner_texts()] == [JS]
        _inert(page, dialogs)
        # A package page's own filters, from the payload OS.
        _visit(page, dialogs, _package_page(root, "v1.0.0", IMG) + "?os=" + quote(SVG))
        assert page.locator("#rows tbody tr:visible").count() == 1


def test_the_spec_page_s_json_viewer_shows_the_node_as_text(
    static_url: str, live_url: str, watched: tuple[Any, list[str]]
) -> None:
    page, dialogs = watched
    for root in (static_url, live_url):
        _visit(page, dialogs, f"{root}specs/aa/{EVIL}.html")
        page.locator("details summary", has_text="JSON").first.click()
        text = _inert(page, dialogs)
        assert json.dumps(IMG)[1:-1] in text and "</script><script>" in text


#: A query Spack's syntax reads (a name with markup is not one): the live page's results.
QUOTED = f'note="{IMG}"'


@pytest.mark.parametrize(
    "query",
    [IMG, TEMPLATE, "note=" + IMG, QUOTED, "os=" + SVG, "^" + JS, "%gcc@" + SVG.replace(" ", "")],
)
def test_search_pages_and_their_hints(
    query: str, static_url: str, live_url: str, watched: tuple[Any, list[str]]
) -> None:
    page, dialogs = watched
    for root in (static_url, live_url):
        text = _visit(page, dialogs, root + "search.html?q=" + quote(query))
        if root == live_url and query == QUOTED:
            assert f"/{EVIL[:7]}" in text and "cannot be read" not in text
        _visit(page, dialogs, root + "search.html?tag=v1.0.0&q=" + quote(query + " os=none"))
        _visit(page, dialogs, root + "index.html")
        page.fill("#package-search", query)
        page.wait_for_timeout(200)
        _inert(page, dialogs)


def test_pages_no_link_reaches(static_url: str, live_url: str, watched: tuple[Any, list[str]]) -> None:
    page, dialogs = watched
    _visit(page, dialogs, static_url + "404.html")
    _visit(page, dialogs, static_url + "tags/v1.0.0/packages/" + quote(IMG + "x", safe="") + "/index.html", found=False)
    compared = _visit(page, dialogs, live_url + "tags/v1.0.1/compare/v1.0.0/index.html")
    assert TEMPLATE in compared
    _visit(page, dialogs, live_url + "diff.html?old=v1.0.0&new=v1.0.1")
    _visit(page, dialogs, live_url + "reuse.html")
    for path in (
        "tags/v1.0.0/packages/" + quote(IMG + "x", safe="") + "/index.html",
        "tags/" + quote(SVG, safe="") + "/index.html",
        "specs/aa/" + quote(IMG, safe="") + ".html",
        "search.html?tag=" + quote(SVG, safe=""),
    ):
        _visit(page, dialogs, live_url + path, found=False)


def test_atom_feeds_are_well_formed_and_hold_the_payloads_as_text(hostile: Hostile, live_url: str) -> None:
    feeds = sorted(hostile.site.rglob("*.atom"))
    assert len(feeds) > 4
    for feed in feeds:
        ET.fromstring(feed.read_bytes())  # (a payload written raw is an XML error)
    shown = ET.fromstring((hostile.site / "tags/v1.0.0/changes.atom").read_bytes())
    assert TEMPLATE in "".join(shown.itertext())
    with httpx.Client(base_url=live_url, timeout=10) as client:
        for path in (
            "changes.atom",
            "tags/v1.0.0/changes.atom",
            f"tags/v1.0.0/packages/{quote(TEMPLATE, safe='')}/changes.atom",
        ):
            answer = client.get(path)
            assert answer.status_code == 200
            ET.fromstring(answer.content)
