"""The website in a real browser: Debian's Chromium driven by Playwright, over a plain
static file server on 127.0.0.1. Screenshots go to test-artifacts/ (git-ignored)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.render import FIRST_ROWS
from cachedex.publish.site import write_site
from cachedex.query import parse
from tests.helpers import REPO, Demo, StaticServer

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = REPO / "test-artifacts"
TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed (apt-get install -y chromium); scripts/test installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=TIMEOUT_MS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def served(demo_run: Demo) -> Iterator[str]:
    server = StaticServer(demo_run.site)
    yield server.url
    server.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    external: list[str] = []
    opened.on("request", lambda r: external.append(r.url) if not r.url.startswith("http://127.0.0.1") else None)
    yield opened
    context.close()
    assert not external, f"requests to other hosts: {external}"


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


def test_search_open_filter_follow_and_install(page: Any, served: str, demo_run: Demo) -> None:
    page.goto(served + "index.html")
    shot(page, "home")
    page.fill("#package-search", "hdf")
    page.wait_for_selector("#search-results a")
    first = page.locator("#search-results li").first
    assert first.locator("a").first.inner_text() == "hdf5"
    first.locator("a").first.click()
    page.wait_for_url("**/tags/develop/packages/hdf5/index.html")
    shot(page, "package")

    data = json.loads((demo_run.site / "tags/develop/packages/hdf5/index.json").read_text())
    stack = "e4s"
    target = next(s["target"] for s in data["specs"] if stack in s["stacks"])
    expected = [s for s in data["specs"] if stack in s["stacks"] and s["target"] == target]
    assert 0 < len(expected) < len(data["specs"])  # the filter really filters
    page.select_option("select[name=stack]", stack)
    page.select_option("select[name=target]", target)
    assert page.locator("#rows tbody tr:visible").count() == len(expected)
    assert page.inner_text("#shown") == str(len(expected))
    assert f"stack={stack}" in page.url and f"target={target}" in page.url
    shot(page, "package-filtered")

    page.locator("#rows tbody tr:visible td.hash a").first.click()
    page.wait_for_selector("#hash")
    spec_hash = page.inner_text("#hash")
    assert spec_hash == expected[0]["hash"]
    assert f"spack install --cache-only /{spec_hash}" in page.inner_text("#install-1")
    shot(page, "spec")
    dependency = page.locator("ul.edges a").first
    name = dependency.inner_text()
    dependency.click()
    page.wait_for_function(f"document.querySelector('h1').innerText.startsWith({json.dumps(name)})")
    assert page.inner_text("h1").startswith(name)
    shot(page, "dependency")


def test_tag_page_filters_from_a_shared_link(page: Any, served: str, demo_run: Demo) -> None:
    data = json.loads((demo_run.site / "tags/develop/index.json").read_text())
    expected = [p for p in data["packages"] if "e4s" in p["stacks"] and "x86_64_v3" in p["targets"]]
    page.goto(served + "tags/develop/index.html?stack=e4s&target=x86_64_v3")
    page.wait_for_function(f"document.getElementById('shown').textContent === '{len(expected)}'")
    assert page.locator("#rows tbody tr:visible").count() == len(expected) > 0
    assert page.input_value("select[name=stack]") == "e4s"
    page.click("th[data-sort=num] >> nth=0")  # sort by number of specs
    counts = [int(c) for c in page.locator("#rows tbody tr:visible td:nth-child(2)").all_inner_texts()]
    assert counts == sorted(counts)
    shot(page, "tag")
    # No filter: the first rows, then the rest on demand; all.html names every package.
    page.goto(served + "tags/develop/index.html")
    page.wait_for_function("document.body.dataset.ready === '1'")
    total = len(data["packages"])
    assert total > FIRST_ROWS and page.locator("#rows tbody tr").count() == FIRST_ROWS
    page.click("#more")
    assert page.locator("#rows tbody tr").count() == total and page.inner_text("#shown") == str(total)
    page.goto(served + "tags/develop/all.html")
    assert page.locator("ul.names li").count() == total
    page.goto(served + "mirrors/index.html")
    assert page.locator("table tbody tr").count() == sum(1 for _ in Catalog(demo_run.catalog, readonly=True).mirrors())
    shot(page, "mirrors")


def test_pages_read_without_javascript_and_on_a_phone(browser: Any, served: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(served + "tags/develop/packages/zlib/index.html")
    assert page.locator("#rows tbody tr").count() >= 1 and "zlib" in page.inner_text("h1")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1, "the page must not scroll sideways on a phone (tables scroll in their box)"
    shot(page, "phone-no-js")
    context.close()


def test_script_in_a_variant_stays_text(page: Any, tmp_path: Path) -> None:
    from tests.helpers import evil_catalog

    site = tmp_path / "site"
    with evil_catalog(tmp_path / "c.sqlite") as catalog:
        write_site(catalog, site)
    server = StaticServer(site)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(server.url + f"specs/aa/{'a' * 32}.html")
        assert "note=<script>alert(1)</script>" in page.inner_text("dl.facts")
        assert "we\"ird'<b>name" in page.inner_text("h1")
        package = next((site / "tags").glob("t*/packages/we*"))
        page.goto(
            server.url
            + str(package.relative_to(site))
            .replace("<", "%3C")
            .replace(">", "%3E")
            .replace('"', "%22")
            .replace("'", "%27")
            + "/index.html"
        )
        assert "we\"ird'<b>name" in page.inner_text("h1")
        shot(page, "escaped")
    finally:
        server.close()
    assert not dialogs


def test_spec_syntax_in_the_search_box_when_served_by_cachedex(page: Any, uvicorn_server: str, demo_run: Demo) -> None:
    query = "hdf5+mpi target=x86_64:"
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        expected = catalog.search(parse(query), limit=30)
    assert expected.total > 0
    page.goto(uvicorn_server + "/index.html")
    page.fill("#package-search", query)
    page.wait_for_selector("#search-results li a")
    assert f"{expected.total:,} specs match" in page.inner_text("#search-results")
    links = page.locator("#search-results li a")
    assert links.count() == len(expected.specs)
    first = expected.specs[0]
    assert links.first.inner_text() == f"{first.name}@{first.version} /{first.hash[:7]}"
    shot(page, "search-spec-syntax")
    links.first.click()
    page.wait_for_url(f"**/specs/{first.hash[:2]}/{first.hash}.html")
    assert page.inner_text("#hash") == first.hash
    page.goto(uvicorn_server + "/index.html")
    page.fill("#package-search", "hdf5 +mpi@")  # malformed: the parser's message, with its caret
    page.wait_for_selector("#search-results li.error")
    assert "^" in page.inner_text("#search-results li.error")


def test_spec_syntax_on_a_static_site_falls_back_to_package_names(page: Any, served: str) -> None:
    page.goto(served + "index.html")
    page.fill("#package-search", "hdf5+mpi %gcc@13")
    page.wait_for_selector("#search-results li a")
    text = page.inner_text("#search-results")
    assert "needs the site served by cachedex serve" in text and "hdf5" in text


def test_cos4_the_tag_page_script_does_not_link_names_without_a_page(page: Any, tmp_path: Path) -> None:
    from tests.helpers import record, write_tag

    site = tmp_path / "site"
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("s" * 32, "a/b"), record("z" * 32, "zlib")])
        write_site(catalog, site)
    server = StaticServer(site)
    try:
        page.goto(server.url + "tags/t/index.html")
        page.wait_for_function("document.body.dataset.ready === '1'")
        assert page.locator("#rows tbody tr").count() == 2
        assert page.locator("#rows tbody tr[data-name]").count() == 0  # the script's rows, not the HTML's
        links = page.eval_on_selector_all("#rows a", "links => links.map((a) => a.getAttribute('href'))")
        assert links == ["packages/zlib/index.html"]  # a/b has no page: its name is shown, not linked
        assert page.locator("#rows tbody td", has_text="a/b").count() == 1
    finally:
        server.close()
