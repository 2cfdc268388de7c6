"""The website in a real browser: Debian's Chromium driven by Playwright, over a plain
static file server on 127.0.0.1 and over ``cachedex serve``. Screenshots go to
test-artifacts/ (git-ignored)."""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.pages import package_page, tag_page
from cachedex.publish.render import FIRST_ROWS
from cachedex.publish.site import write_site
from cachedex.query import parse
from cachedex.versions import version_key
from tests.helpers import Demo, StaticServer
from tests.lockfiles import (
    above,
    changed,
    closure,
    demo_nodes,
    developed,
    lockfile,
    roots_named,
    spliced,
    write_lockfile,
)
from tests.publish.conftest import PAGE_READY, opened, shot

pytestmark = pytest.mark.browser


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
    assert spec_hash == expected[0]["hash"]  # newest first, as the page's JSON lists them
    assert f"spack install --cache-only /{spec_hash}" in page.inner_text("#install-1")
    shot(page, "spec")
    dependency = page.locator("ul.edges a").first
    name = dependency.inner_text().split("@")[0]
    dependency.click()
    page.wait_for_function(f"document.querySelector('h1').innerText.startsWith({json.dumps(name)})")
    assert page.inner_text("h1").startswith(name)
    shot(page, "dependency")


def _texts(page: Any, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


def test_tag_page_filters_per_spec_from_a_shared_link(page: Any, served: str, demo_run: Demo) -> None:
    filters = {"stack": "ml-linux-aarch64-cpu", "target": "aarch64"}
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        expected = tag_page(catalog, "develop", filters)
        whole = tag_page(catalog, "develop")
    assert 0 < len(expected.packages) < len(whole.packages)
    page.goto(served + "tags/develop/index.html?stack=ml-linux-aarch64-cpu&target=aarch64")
    page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == str(len(expected.packages))
    assert _texts(page, "#rows tbody td.name") == [p.name for p in expected.packages]
    # Each row counts and summarizes only its matching specs.
    assert [int(n) for n in _texts(page, "#rows tbody td:nth-child(2)")] == [p.specs for p in expected.packages]
    narrowed = [p for p in expected.packages if p.specs < next(w.specs for w in whole.packages if w.name == p.name)]
    assert narrowed, "the filters leave some package with fewer specs"
    # Counts are contextual: the OS select counts what the other filters leave.
    for value, count in expected.facets["os"].items():
        assert page.locator(f"select[name=os] option[value='{value}']").inner_text() == f"{value} ({count})"
    # Filters go along to the package page, which applies them to its spec table.
    link = page.locator("#rows tbody td.name a").first
    assert link.get_attribute("href").endswith("?stack=ml-linux-aarch64-cpu&target=aarch64")
    link.click()
    page.wait_for_function(PAGE_READY)
    assert page.input_value("select[name=target]") == "aarch64"
    assert page.locator("#rows tbody tr:visible").count() == expected.packages[0].specs
    shot(page, "tag-filtered")


def test_runs_on_lists_what_a_machine_runs_and_follows_to_the_package_page(
    page: Any, served: str, demo_run: Demo
) -> None:
    """ "Runs on: zen3" keeps the packages with a spec built for zen3 or a target it
    descends from (Spack's rule, written apart in helpers), and the package page reached
    from it shows only those specs."""
    from tests.helpers import listed_specs, spack_target_satisfies

    with Catalog(demo_run.catalog, readonly=True) as catalog:
        listed = listed_specs(catalog, "develop")
    runs = [s for s in listed if spack_target_satisfies(s.target, ":zen3")]
    names = {s.name for s in runs}
    assert 0 < len(names) < len({s.name for s in listed}) and {s.target for s in runs} >= {"x86_64", "x86_64_v3"}
    page.goto(served + "tags/develop/index.html")
    page.wait_for_function(PAGE_READY)
    page.select_option("select[name=runs_on]", "zen3")
    page.wait_for_function(f"document.getElementById('shown').textContent === '{len(names)}'")
    assert "runs_on=zen3" in page.url and set(_texts(page, "#rows tbody td.name")) <= names
    page.click("#rows tbody td.name a >> text=hdf5")
    page.wait_for_function(PAGE_READY)
    assert page.input_value("select[name=runs_on]") == "zen3"
    hdf5 = [s for s in runs if s.name == "hdf5"]
    assert 0 < len(hdf5) < len([s for s in listed if s.name == "hdf5"])
    assert page.locator("#rows tbody tr:visible").count() == len(hdf5)
    shot(page, "runs-on")


def test_a_compiler_that_built_a_specs_fortran_finds_it_on_the_tag_and_package_pages(
    page: Any, served: str, demo_run: Demo
) -> None:
    """The demo's darwin netlib-lapack: apple-clang built its C, gcc its Fortran. The
    Compiler filter listed it under apple-clang alone; gcc's now lists it on the tag
    page, and the package page reached from it shows that spec (its row's
    ``data-other-compilers``, read by the script), as a plain reading of the specs says."""
    from tests.helpers import listed_specs

    with Catalog(demo_run.catalog, readonly=True) as catalog:
        listed = listed_specs(catalog, "develop")
    (darwin,) = [s for s in listed if s.name == "netlib-lapack" and s.os == "sequoia"]
    (other,) = darwin.other_compilers
    found = [s for s in listed if other in (s.compiler, *s.other_compilers) and s.os == "sequoia"]
    page.goto(served + "tags/develop/index.html?os=sequoia")
    page.wait_for_function(PAGE_READY)
    page.select_option("select[name=compiler]", other)
    names = {s.name for s in found}
    page.wait_for_function(f"document.getElementById('shown').textContent === '{len(names)}'")
    assert set(_texts(page, "#rows tbody td.name")) == names
    page.click("#rows tbody td.name a >> text=netlib-lapack")
    page.wait_for_function(PAGE_READY)
    assert page.input_value("select[name=compiler]") == other
    assert page.locator("#rows tbody tr:visible").count() == len([s for s in found if s.name == "netlib-lapack"])
    assert page.locator("#rows tbody tr:visible td[data-label=compiler]").first.inner_text().endswith(f"+{other}")


def test_an_impossible_combination_lists_nothing_and_offers_a_way_on(page: Any, served: str, demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        expected = tag_page(catalog, "develop", {"os": "sequoia", "target": "x86_64_v3"})
    assert expected.packages == () and expected.relax["os"] > 0 and expected.relax["target"] > 0
    page.goto(served + "tags/develop/index.html?os=sequoia&target=x86_64_v3")
    page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == "0" and page.locator("#rows tbody tr").count() == 0
    assert page.locator("#empty").is_visible()
    relax = _texts(page, "#relax li")
    assert relax == [f"Without {k}={v}: {expected.relax[k]} packages" for k, v in expected.filters.items()]
    shot(page, "tag-impossible")
    page.click("#relax li >> nth=0 >> a")  # drop os=sequoia
    page.wait_for_function(PAGE_READY + " && document.getElementById('shown').textContent !== '0'")
    assert "os=" not in page.url and page.input_value("select[name=target]") == "x86_64_v3"
    # A package page reached with impossible filters says so too.
    page.goto(served + "tags/develop/packages/cmake/index.html?os=sequoia&target=x86_64_v3")
    page.wait_for_function(PAGE_READY)
    assert page.locator("#rows tbody tr:visible").count() == 0 and page.locator("#empty").is_visible()
    assert "No spec of cmake" in page.inner_text("#empty")


#: In the demo's develop: no package on sequoia for zen4, and none in e4s on either alone.
NOTHING_HELPS = {"os": "sequoia", "target": "zen4", "stack": "e4s"}


@pytest.mark.parametrize("script", [False, True], ids=["server", "script"])
def test_an_empty_page_offers_only_the_removals_that_find_something(
    browser: Any, uvicorn_server: str, demo_run: Demo, script: bool
) -> None:
    """No "Without os=...: 0 packages" (a link to another empty page): each removal it
    offers finds something, and when none does it says so and offers clearing them all,
    the server's page (without the script) and the script's alike."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        tag = tag_page(catalog, "develop", NOTHING_HELPS)
        hwloc = package_page(catalog, "develop", "hwloc", {"os": "sequoia", "target": "zen4"})
    assert tag.packages == () and set(tag.relax.values()) == {0} and tag.tag.packages > 0
    assert not any(hwloc.matches) and hwloc.relax["os"] == 0 and hwloc.relax["target"] > 0
    context, page = opened(
        browser, f"{uvicorn_server}/tags/develop/index.html?{urllib.parse.urlencode(NOTHING_HELPS)}", script=script
    )
    assert page.locator("#empty").is_visible() and not page.locator("#relax li").count()
    said = page.inner_text("#no-relax")
    assert (
        said
        == f"Removing any one of these filters finds nothing either. Clear all filters: {tag.tag.packages} packages."
    )
    page.click("#clear-filters")
    page.wait_for_url("**/tags/develop/index.html")
    if script:
        page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == str(tag.tag.packages) and not page.locator("#empty").is_visible()

    page.goto(f"{uvicorn_server}/tags/develop/packages/hwloc/index.html?os=sequoia&target=zen4")
    if script:
        page.wait_for_function(PAGE_READY)
    assert _texts(page, "#relax li") == [
        f"Without target=zen4: {hwloc.relax['target']} spec{'s' * (hwloc.relax['target'] != 1)}"
    ]
    assert not page.locator("#no-relax").is_visible()
    context.close()


def test_the_script_redraws_the_empty_box_s_ways_on_as_filters_change(page: Any, served: str, demo_run: Demo) -> None:
    """Filters changed in the page: a removal that comes to find nothing leaves the list
    (a disabled option cannot be chosen: a name typed narrows every count), and when none
    is left the box says so; those that find something again come back."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        two = tag_page(catalog, "develop", {"os": "sequoia", "target": "zen4"})
        named = tag_page(catalog, "develop", {"os": "sequoia", "target": "zen4"}, "zzz")
    assert two.packages == () and min(two.relax.values()) > 0
    assert set(named.relax.values()) == {0} and named.without_text == 0
    page.goto(served + "tags/develop/index.html?os=sequoia&target=zen4")
    page.wait_for_function(PAGE_READY)
    assert _texts(page, "#relax li") == [f"Without {k}={v}: {two.relax[k]} packages" for k, v in two.filters.items()]
    assert not page.locator("#no-relax").is_visible()
    page.fill("input[data-text]", "zzz")
    page.wait_for_function("document.getElementById('relax').hidden")
    assert not page.locator("#relax li:visible").count() and page.locator("#no-relax").is_visible()
    assert page.locator("#clear-filters").get_attribute("href") == "index.html"
    assert page.inner_text("#no-relax").endswith(f"Clear all filters: {two.tag.packages} packages.")
    shot(page, "tag-nothing-helps")
    page.fill("input[data-text]", "")
    page.wait_for_function("!document.getElementById('relax').hidden")
    assert len(_texts(page, "#relax li")) == 2 and not page.locator("#no-relax").is_visible()


@pytest.mark.parametrize("script", [False, True], ids=["server", "script"])
def test_a_version_filter_stays_in_the_relax_links_and_their_counts(
    browser: Any, uvicorn_server: str, demo_run: Demo, script: bool
) -> None:
    """With nothing found, "Without os=...: N specs" counts the specs the Version text
    keeps, and its link keeps the text: it lands on N specs (live, with the script and
    without)."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        whole = package_page(catalog, "develop", "hdf5")
    text = min({s.version for s in whole.specs}, key=lambda v: sum(v in s.version for s in whole.specs))
    found = sum(text in s.version for s in whole.specs)
    assert 0 < found < len(whole.specs)  # the text narrows: the relax must not count the rest
    context, page = opened(
        browser, f"{uvicorn_server}/tags/develop/packages/hdf5/index.html?os=nope&q={text}", script=script
    )
    assert page.locator("#empty").is_visible()
    assert _texts(page, "#relax li") == [f"Without os=nope: {found} spec{'s' if found != 1 else ''}"]
    page.click("#relax a")
    page.wait_for_url(f"**/hdf5/index.html?q={text}")
    if script:
        page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == str(found) and page.input_value("input[data-text]") == text
    assert page.locator("#rows tbody tr:visible").count() == found
    context.close()


def test_tag_page_rows_sorting_and_more(page: Any, served: str, demo_run: Demo) -> None:
    data = json.loads((demo_run.site / "tags/develop/index.json").read_text())
    page.goto(served + "tags/develop/index.html")
    page.wait_for_function(PAGE_READY)
    total = len(data["packages"])
    assert total > FIRST_ROWS and page.locator("#rows tbody tr").count() == FIRST_ROWS
    for clicks in range(1, total // FIRST_ROWS + 1):  # each click shows FIRST_ROWS more
        page.click("#more")
        assert page.locator("#rows tbody tr").count() == min(total, (clicks + 1) * FIRST_ROWS)
    assert page.locator("#more").is_hidden() and page.inner_text("#shown") == str(total)
    header = page.locator("th[data-key=specs]")
    header.locator("button").focus()
    page.keyboard.press("Enter")  # sortable from the keyboard; a number sorts largest first
    assert header.get_attribute("aria-sort") == "descending"
    counts = [int(c) for c in _texts(page, "#rows tbody td:nth-child(2)")[:FIRST_ROWS]]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    page.keyboard.press("Enter")
    assert header.get_attribute("aria-sort") == "ascending"
    page.goto(served + "tags/develop/all.html")
    assert page.locator("ul.names li").count() == total
    page.goto(served + "mirrors/index.html")
    assert page.locator("table tbody tr").count() == sum(1 for _ in Catalog(demo_run.catalog, readonly=True).mirrors())
    shot(page, "mirrors")


@pytest.mark.parametrize("live", [False, True])
def test_a_table_s_order_is_kept_in_its_url(page: Any, served: str, uvicorn_server: str, live: bool) -> None:
    """A sorted table lost its order on a reload or through a shared link: the order is
    in the URL beside the filters (and the server takes the parameter it does not read)."""
    root = uvicorn_server + "/" if live else served
    page.goto(root + "tags/develop/index.html?os=ubuntu22.04")
    page.wait_for_function(PAGE_READY)
    page.click("th[data-key=specs] button")  # largest first
    assert "sort=-specs" in page.url and "os=ubuntu22.04" in page.url
    counts = [int(c) for c in _texts(page, "#rows tbody td:nth-child(2)")]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    page.reload()
    page.wait_for_function(PAGE_READY)
    assert page.get_attribute("th[data-key=specs]", "aria-sort") == "descending"
    assert [int(c) for c in _texts(page, "#rows tbody td:nth-child(2)")] == counts
    page.select_option("select[name=os]", "")  # a filter changed keeps the order
    assert "sort=-specs" in page.url and "os=" not in page.url
    page.fill("input[data-text]", "no-such-package-at-all")  # and the way out of an empty page
    assert page.get_attribute("#relax a", "href") == "index.html?sort=-specs"  # (without the name typed)

    package = root + "tags/develop/packages/gcc-runtime/index.html"
    page.goto(package)
    page.wait_for_function(PAGE_READY)
    newest_first = _texts(page, "#rows tbody td:nth-child(2)")
    page.click("th[data-key=version] button")  # descending already: now oldest first
    assert page.url.endswith("?sort=version")
    page.goto(package + "?sort=version")
    page.wait_for_function(PAGE_READY)
    assert _texts(page, "#rows tbody td:nth-child(2)") == newest_first[::-1]
    page.goto(package + "?sort=nothing")  # a key the table does not have: its own order
    page.wait_for_function(PAGE_READY)
    assert _texts(page, "#rows tbody td:nth-child(2)") == newest_first
    assert page.get_attribute("th[data-key=version]", "aria-sort") == "descending"  # as written


@pytest.mark.parametrize("query", ["", "?os=ubuntu22.04&runs_on=zen3", "?q=py&compiler=gcc@11.4.0"])
def test_the_script_draws_the_rows_the_page_was_written_with(
    browser: Any, served: str, uvicorn_server: str, query: str
) -> None:
    """The script loads the tag's columns alone and makes every row from them: the rows
    it draws (sizes summed to the byte, versions in Spack's order, "+N" chips) are those
    written into the page: the static site's unfiltered, the server's under filters."""
    url = (uvicorn_server + "/" if query else served) + "tags/develop/index.html" + query
    cells = "#rows tbody tr td"
    written, page = opened(browser, url, script=False)
    html = page.eval_on_selector_all(cells, "cells => cells.map((c) => c.textContent.trim())")
    written.close()
    drawn, page = opened(browser, url, script=True)
    try:
        assert len(html) > 8 * 10
        assert page.eval_on_selector_all(cells, "cells => cells.map((c) => c.textContent.trim())") == html
    finally:
        drawn.close()


def test_package_page_sorts_versions_as_spack_does(page: Any, served: str, demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        expected = package_page(catalog, "develop", "gcc-runtime")
    versions = [s.version for s in expected.specs]
    assert versions.index("13.3.0") < versions.index("8.5.0")  # not as text, where 8.5.0 comes first
    page.goto(served + "tags/develop/packages/gcc-runtime/index.html")
    page.wait_for_function(PAGE_READY)
    assert _texts(page, "#rows tbody td:nth-child(2)") == versions
    page.click("th[data-key=version] button")  # descending already: now oldest first
    assert _texts(page, "#rows tbody td:nth-child(2)") == versions[::-1]
    # Compilers by name, then by version in Spack's order (as text, gcc@13 came before gcc@7)
    page.goto(served + "tags/develop/packages/berkeley-db/index.html")
    page.wait_for_function(PAGE_READY)
    page.click("th[data-key=compiler] button")
    shown = page.eval_on_selector_all("#rows tbody tr", "rows => rows.map((row) => row.dataset.compiler)")
    gcc = [version_key(c.split("@")[1]) for c in shown if c.startswith("gcc@")]
    assert len(set(gcc)) > 2 and (gcc == sorted(gcc) or gcc == sorted(gcc, reverse=True)), shown


def test_pages_read_without_javascript_and_on_a_phone(browser: Any, served: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(served + "tags/develop/packages/zlib/index.html")
    assert page.locator("#rows tbody tr").count() >= 1 and "zlib" in page.inner_text("h1")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1, "the page must not scroll sideways on a phone"
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
        facts = page.inner_text("dl.facts")
        assert "note=<script>alert(1)</script>" in facts
        # A right-to-left override shown as its escape: nothing after it reads backwards.
        assert "label=\\u202egnp.exe +shared" in facts and "\u202e" not in page.inner_text("body")
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
        page.wait_for_function(PAGE_READY)
        tag = next((site / "tags").glob("t*")).name
        page.goto(server.url + f"tags/{tag.replace('<', '%3C').replace('>', '%3E')}/index.html")
        page.wait_for_function(PAGE_READY)
        shot(page, "escaped")
    finally:
        server.close()
    assert not dialogs


def test_the_search_page_when_served_by_cachedex(page: Any, uvicorn_server: str, demo_run: Demo) -> None:
    query = "%gcc@11"
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        expected = catalog.search(parse(query), tag="develop", limit=1000)
    assert expected.total > 50  # more than a page
    page.goto(uvicorn_server + "/index.html")
    page.fill("#package-search", "target=:zen3")  # a key, not a package named "target"
    page.wait_for_selector("#search-results li a")
    page.wait_for_timeout(300)  # (the names, if it looked any up, come after the link)
    assert "no package name matches" not in page.inner_text("#search-results")
    page.fill("#package-search", query)
    page.wait_for_selector("#search-results li a")
    page.press("#package-search", "Enter")  # a spec query goes to the search page
    page.wait_for_url("**/search.html?q=*")
    page.wait_for_function("() => document.getElementById('results')")
    page.wait_for_timeout(300)  # (once the script knows it is live)
    assert page.locator("#search-results li").count() == 0  # the results are below, not a list of one link
    page.select_option("select[name=tag]", "develop")
    page.click("form.search button[type=submit]")
    page.wait_for_selector("#results")
    assert f"{expected.total:,} specs match" in page.inner_text("p.lead")
    first_page = [a.split("/")[-1].removesuffix(".html") for a in _hrefs(page, "#results td.name a")]
    assert first_page == [s.hash for s in expected.specs[:50]]
    shot(page, "search-page")
    page.click("nav.pages a[rel=next]")
    page.wait_for_url("**page=2*")
    second = [a.split("/")[-1].removesuffix(".html") for a in _hrefs(page, "#results td.name a")]
    assert second == [s.hash for s in expected.specs[50:100]]
    # Nothing found: what each dropped condition would find.
    page.goto(uvicorn_server + "/search.html?q=" + "py-keras%20target%3Daarch64")
    hints = _texts(page, "#empty li")
    # (the targets of py-keras's specs, none of them aarch64's family)
    assert any(
        re.match(r"nothing matches target=aarch64; without it, \d+ specs [^:]*match: target=x86", h) for h in hints
    )
    # An exact target nothing is built for: a link to what runs on it.
    page.goto(uvicorn_server + "/search.html?q=" + "hdf5%20target%3Dzen3&tag=develop")
    page.click("#empty a.suggested")
    page.wait_for_selector("#results")
    assert page.input_value("input[name=q]") == "hdf5 target=:zen3"
    targets = {arch.rsplit("-", 1)[1] for arch in _texts(page, "#results td[data-label=arch]")}
    assert targets and targets <= {"x86_64", "x86_64_v2", "x86_64_v3", "zen", "zen2", "zen3"}
    # A virtual's version, which is not compared: a link to the virtual without it.
    page.goto(uvicorn_server + "/search.html?q=" + "hdf5%20%5Empi%403&tag=develop")
    assert any("mpi is a virtual package" in h for h in _texts(page, "#empty li"))
    page.click("#empty a.suggested")
    page.wait_for_selector("#results")
    assert page.input_value("input[name=q]") == "hdf5 ^mpi"
    assert {spec.split("@")[0] for spec in _texts(page, "#results td.name")} == {"hdf5"}
    page.goto(uvicorn_server + "/search.html?q=" + "py-keras%20target%3Daarch64")
    page.click("#empty a.name-only")  # the package alone
    page.wait_for_selector("#results")
    assert _texts(page, "#results td.name a")[0].startswith("py-keras@")
    shot(page, "search-zero")
    page.goto(uvicorn_server + "/search.html?q=hdf5%20%2Bmpi%40")  # malformed: the parser's caret
    assert "^" in page.inner_text(".error pre")


def test_a_spec_page_served_live_links_to_the_search_of_its_dependents(
    page: Any, uvicorn_server: str, served: str, demo_run: Demo
) -> None:
    """Served by cachedex, a spec page with dependents links to the search of every
    spec depending on it (``^/<hash>``: its list stops at 300); a static copy, whose
    search finds names only, shows no such link."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        hub = max(catalog.search(parse("zlib-ng"), tag="develop", limit=100).specs, key=lambda s: len(s.stacks))
        expected = catalog.search(parse(f"^/{hub.hash}"), limit=1000)
        tool = catalog.search(parse("cmake"), tag="develop", limit=1).specs[0]  # needed to build, only
        assert catalog.search(parse(f"^/{tool.hash}")).total == 0
    assert expected.total > 50
    # a spec its dependents need only to build: the search of them would find none, so no link
    page.goto(f"{uvicorn_server}/specs/{tool.hash[:2]}/{tool.hash}.html")
    page.wait_for_load_state("networkidle")
    assert page.get_attribute("#dependents", "data-count") != "0"
    assert page.locator("#dependents-search").count() == 0
    page.goto(f"{uvicorn_server}/specs/{hub.hash[:2]}/{hub.hash}.html")
    page.wait_for_selector("#dependents-search")
    assert page.inner_text("#dependents-search") == f"^/{hub.hash[:7]}"
    page.click("#dependents-search")
    page.wait_for_selector("#results")
    assert f"{expected.total:,} specs match" in page.inner_text("p.lead")
    page.goto(f"{served}specs/{hub.hash[:2]}/{hub.hash}.html")
    page.wait_for_load_state("networkidle")  # (its question to the server answered: static)
    assert page.locator("#dependents").count() == 1 and page.locator("#dependents-search").count() == 0


def _hrefs(page: Any, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "links => links.map((a) => a.getAttribute('href'))")


def test_the_search_box_of_a_static_site_says_it_searches_names(page: Any, served: str, demo_run: Demo) -> None:
    failed: list[str] = []  # a static copy answers every request the script makes: no 404 in its console
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    assert json.loads((demo_run.site / "live.json").read_text()) == {"live": False}
    page.goto(served + "index.html")
    page.fill("#package-search", "hdf5+mpi %gcc@13")
    page.wait_for_selector("#search-results li a")
    text = page.inner_text("#search-results")
    assert "searches package names only" in text and "hdf5" in text
    assert "static" in page.inner_text("#search-hint")
    page.fill("#package-search", "^zlib-ng")  # no name to look up: no list of names promised
    page.wait_for_function("() => document.querySelector('#search-results').innerText.includes('names only')")
    assert page.inner_text("#search-results").strip().endswith("needs cachedex serve.")
    page.goto(served + "search.html?q=zlib")
    page.wait_for_selector("#search-results li a")
    assert "static" in page.inner_text("#search-hint") and "zlib" in page.inner_text("#search-results")
    assert not failed, failed


def test_cos4_the_tag_page_script_does_not_link_names_without_a_page(page: Any, tmp_path: Path) -> None:
    from tests.helpers import record, write_tag

    site = tmp_path / "site"
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("s" * 32, "a/b"), record("z" * 32, "zlib")])
        write_site(catalog, site)
    server = StaticServer(site)
    try:
        page.goto(server.url + "tags/t/index.html?q=")
        page.wait_for_function(PAGE_READY)
        page.fill("input[name=q]", "b")  # the script draws the rows: a/b and zlib
        page.fill("input[name=q]", "")
        assert page.locator("#rows tbody tr").count() == 2
        assert _hrefs(page, "#rows a") == ["packages/zlib/index.html"]  # a/b has no page: shown, not linked
        assert page.locator("#rows tbody td", has_text="a/b").count() == 1
    finally:
        server.close()


def test_a_facet_value_that_would_reorder_text_shows_as_escapes_on_the_tag_page(page: Any, tmp_path: Path) -> None:
    """The tag page's rows and filters are drawn by its script from the JSON twin: a
    right-to-left override in an OS shows as its escape there too, as in the pages
    written by Python, and the filter still selects by the value itself."""
    from tests.helpers import record, write_tag

    site = tmp_path / "site"
    with Catalog(tmp_path / "c.sqlite") as catalog:
        specs = [
            record("s" * 32, "zlib", os="rhel\u202e8"),
            record("t" * 32, "zlib", os="rhel8"),
            record("z" * 32, "zstd"),
        ]
        write_tag(catalog, "t", specs)
        write_site(catalog, site)
    server = StaticServer(site)
    try:
        page.goto(server.url + "tags/t/index.html")
        page.wait_for_function(PAGE_READY)
        page.select_option("select[name=os]", "rhel\u202e8")
        page.wait_for_function("() => document.getElementById('shown').textContent === '1'")
        assert _texts(page, "#rows tbody td[data-label=os]") == ["rhel\\u202e8"]
        assert "rhel\\u202e8 (1)" in _texts(page, "select[name=os] option")
        assert "\u202e" not in page.inner_text("body")
        # A package page's rows are written by Python; its script filters them by their data.
        page.goto(server.url + "tags/t/packages/zlib/index.html")
        page.wait_for_function(PAGE_READY)
        assert "rhel\\u202e8" in page.inner_text("#rows tbody") and page.inner_text("#shown") == "2"
        page.select_option("select[name=os]", "rhel\u202e8")
        page.wait_for_function("() => document.getElementById('shown').textContent === '1'")
        assert "\u202e" not in page.inner_text("body")
    finally:
        server.close()


def test_the_raw_spec_json_is_indented_when_opened_and_otherwise_as_held(page: Any, tmp_path: Path) -> None:
    """Opening "Raw spec JSON" indents it (the UX review: one minified blob), only by
    spacing outside strings: keys keep their order, a repeated key stays, a long number
    keeps its digits and strings their brackets, commas and escapes; a short list of
    plain values stays on one line."""
    from tests.helpers import record, write_tag

    node = (
        b'{"name":"odd","note":"a,{b}:[c]\\"d\\\\","empty":{},"list":[ ],"big":12345678901234567890,'
        b'"dup":1,"dup":2,"deps":[{"name":"x","types":["link","run","a,[b]"]}]}'
    )
    site = tmp_path / "site"
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("o" * 32, "odd", node=node)])
        write_site(catalog, site)
    server = StaticServer(site)
    try:
        page.goto(server.url + f"specs/oo/{'o' * 32}.html")
        pre = page.locator("details > pre.json")
        assert pre.text_content() == node.decode()  # as held until opened
        page.click("details:has(pre.json) > summary")
        page.wait_for_function("() => document.querySelector('details > pre.json').dataset.indented === '1'")
        shown = pre.text_content()
    finally:
        server.close()
    assert shown.splitlines()[:4] == ["{", '  "name": "odd",', '  "note": "a,{b}:[c]\\"d\\\\",', '  "empty": {},']
    assert '  "list": [],\n  "big": 12345678901234567890,\n  "dup": 1,\n  "dup": 2,' in shown
    # a short list of plain values on one line, spaced outside its strings only
    deps = [
        '  "deps": [',
        "    {",
        '      "name": "x",',
        '      "types": ["link", "run", "a,[b]"]',
        "    }",
        "  ]",
        "}",
    ]
    assert shown.splitlines()[-len(deps) :] == deps


def test_the_environment_check_served_by_cachedex(
    page: Any, uvicorn_server: str, tmp_path: Path, axe_source: str
) -> None:
    """From the live search page to the environment check: a lockfile with zlib-ng at
    another version shows, for develop, zlib-ng as the one cause and what follows."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = changed(closure(nodes, roots), "zlib-ng", lambda node: node.update(version="9.9.9"))
    path = write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed[r] for r in roots]))
    page.goto(uvicorn_server + "/search.html")
    page.click("#reuse-link a")
    page.wait_for_url("**/reuse.html")
    _check_environment(page, None, path)
    rows = _texts(page, "#reuse-tags tbody tr")
    missing = above(specs, {key for key, node in specs.items() if node["name"] == "zlib-ng"})
    external = sum("external" in node for node in specs.values())
    assert len(rows) == 1 and rows[0].split("\t")[:4] == [
        "develop",
        "root",
        f"{len(specs) - external - len(missing)} of {len(specs) - external}",
        str(len(missing)),
    ]
    (cause,) = _texts(page, "ul.causes li")
    assert cause.startswith("zlib-ng@9.9.9 /") and cause.endswith("version 2.2.1 (yours 9.9.9)")
    # (axe comes in through the devtools: the server's content security policy refuses
    # a script the page did not bring, as it should)
    page.evaluate(f"() => {{ {axe_source}\n }}")
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    assert not [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")]
    shot(page, "reuse")
    page.click("ul.causes li a")  # the nearest build's page
    page.wait_for_url("**/specs/**")
    assert page.inner_text("h1").startswith("zlib-ng@2.2.1")
    page.go_back()
    (tmp_path / "not.lock").write_text("{}")
    page.set_input_files("#lockfile", str(tmp_path / "not.lock"))
    page.click("#reuse-form button[type=submit]")
    page.wait_for_selector("#reuse-result [role=alert]")
    assert "not a Spack lockfile" in page.inner_text("#reuse-result [role=alert]")
    shot(page, "reuse-error")


def test_the_environment_check_counts_spliced_specs_from_their_build_specs(
    page: Any, uvicorn_server: str, tmp_path: Path
) -> None:
    """A spliced spec comes from its build spec's binary: the page says how many, as
    cachedex reuse does, and only the new zlib-ng is to build."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = spliced(nodes, roots, "zlib-ng")
    path = write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed[r] for r in roots]))
    _check_environment(page, uvicorn_server, path)
    rewired = sum("build_spec" in node for node in specs.values())
    assert page.inner_text("#reuse-result p.rewired") == (
        f"develop: {rewired} spliced specs from the binary of the spec each was spliced from "
        "(Spack installs it so, rewired)"
    )
    assert _texts(page, "#reuse-tags tbody tr")[0].split("\t")[3] == "1"


def test_the_environment_check_lists_a_spec_developed_in_place_apart(
    page: Any, uvicorn_server: str, tmp_path: Path
) -> None:
    """A spec with ``dev_path`` (``spack develop``) was shown as a cause with a nearest
    cached build: Spack builds it from its source, so the page lists it apart, as
    cachedex reuse does, and what builds on it follows."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = developed(nodes, roots, "zlib-ng")
    (zlib,) = [key for key, node in specs.items() if node["name"] == "zlib-ng"]
    path = write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed[r] for r in roots]))
    _check_environment(page, uvicorn_server, path)
    assert page.inner_text("#reuse-result p.lead").endswith("; 1 developed locally (always built from source).")
    assert _texts(page, "ul.developed li") == [f"zlib-ng@{specs[zlib]['version']} /{zlib[:7]}"]
    assert _texts(page, "ul.causes li") == []  # what builds on it follows from it
    external = sum("external" in node for node in specs.values())
    built = len(above(specs, {zlib})) - 1
    assert _texts(page, "#reuse-tags tbody tr")[0].split("\t")[2:4] == [
        f"{len(specs) - external - 1 - built} of {len(specs) - external - 1}",
        str(built),
    ]


def test_the_environment_check_of_externals_only_says_so(page: Any, uvicorn_server: str, tmp_path: Path) -> None:
    """An environment of externals alone showed "To build from source with develop: 0
    specs"; it says, as cachedex reuse does, that every spec is external."""
    nodes = demo_nodes()
    external = {key: node for key, node in nodes.items() if "external" in node}
    assert external
    path = write_lockfile(tmp_path / "spack.lock", lockfile(external, list(external)[:1]))
    _check_environment(page, uvicorn_server, path)
    text = page.inner_text("#reuse-result")
    assert "No spec of the environment comes from a build cache: every one is external." in text
    assert "To build from source" not in text


def test_the_environment_check_of_an_empty_environment_says_so(page: Any, uvicorn_server: str, tmp_path: Path) -> None:
    """An environment of no spec was said to be "every one external", as no CLI says."""
    path = write_lockfile(tmp_path / "spack.lock", lockfile({}, []))
    _check_environment(page, uvicorn_server, path)
    text = page.inner_text("#reuse-result")
    assert "The environment has no spec." in text and "external." not in text


def _check_environment(page: Any, server: str | None, path: Path) -> None:
    """Check the lockfile at ``path`` against develop on the live reuse page (opened
    first from ``server``, unless the page is there already), until its answer shows."""
    if server is not None:
        page.goto(server + "/reuse.html")
    page.set_input_files("#lockfile", str(path))
    page.select_option("select[name=tag]", "develop")
    page.click("#reuse-form button[type=submit]")
    page.wait_for_selector("#reuse-tags")


def test_the_search_box_lists_what_its_text_finds_and_keeps_the_scope(
    page: Any, served: str, uvicorn_server: str
) -> None:
    """Typed while the names load, each keystroke's list came after the last's ("z"'s
    names, then "zl"'s; Enter took the first, zfp); Enter before any list drew did
    nothing on a static copy; the live search page's "Search specs" link dropped the
    tag the form had chosen."""
    import time

    def slowly(route: Any) -> None:
        time.sleep(0.6)  # the names arrive after both keystrokes
        route.continue_()

    page.route("**/packages.json", slowly)
    page.goto(served + "index.html")
    page.fill("#package-search", "z")
    page.type("#package-search", "l")
    page.wait_for_selector("#search-results li a")
    page.wait_for_timeout(800)
    names = page.eval_on_selector_all("#search-results li > a:first-child", "links => links.map((a) => a.textContent)")
    assert names and all("zl" in name for name in names), names
    page.unroute("**/packages.json")
    page.goto(served + "index.html")
    page.fill("#package-search", "zlib-n")
    page.press("#package-search", "Enter")  # at once: its list may not be drawn yet
    page.wait_for_url("**/packages/zlib-ng/index.html")
    page.goto(served + "index.html")
    page.fill("#package-search", "hdf5+mpi")  # spec syntax on a static copy: the name it starts with
    page.press("#package-search", "Enter")
    page.wait_for_url("**/packages/hdf5/index.html")
    page.goto(uvicorn_server + "/search.html?q=hdf5&tag=develop")
    page.fill("#package-search", "hdf5+mpi")
    page.wait_for_selector("#search-results li a")
    assert "tag=develop" in page.get_attribute("#search-results li a", "href")
    # A name in capitals: its list shows hdf5, and Enter searches hdf5 (it found 0 specs of "HDF5").
    page.fill("#package-search", "HDF5")
    page.press("#package-search", "Enter")
    page.wait_for_url("**/search.html?q=hdf5*")
    assert "0 specs" not in page.inner_text("p.lead")


def test_enter_on_spec_syntax_opens_the_package_while_the_site_asks_if_it_is_live(page: Any, served: str) -> None:
    """Enter on "hdf5+mpi" before live.json answered: the form had already gone to the
    static search page when the script, still waiting, cancelled it (too late); the
    static copy must open hdf5 as it does once live.json has answered."""
    held: list[Any] = []
    page.route("**/live.json", lambda route: held.append(route))  # answered only after Enter
    page.goto(served + "index.html")
    page.fill("#package-search", "hdf5+mpi")
    page.press("#package-search", "Enter")
    page.wait_for_timeout(500)
    assert "search.html" not in page.url, page.url
    assert held, "the page asked live.json"
    for route in held:
        route.continue_()
    page.wait_for_url("**/packages/hdf5/index.html")


def test_a_copy_button_copies_what_it_shows_and_says_so_to_screen_readers(page: Any, served: str) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(served + "index.html")
    page.click("text=develop")
    page.wait_for_function(PAGE_READY)
    page.locator("#rows tbody tr td.name a").first.click()
    page.locator("#rows tbody tr td.hash a").first.click()
    page.wait_for_selector("#hash")
    button = page.locator("button.copy").first
    name = button.get_attribute("aria-label")
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("[role=status]:has-text('copied')")
    assert page.inner_text("[role=status]") == "copied" and button.get_attribute("aria-label") == name
    assert page.evaluate("navigator.clipboard.readText()") == button.get_attribute("data-copy")


def test_the_live_json_link_follows_the_filters(page: Any, uvicorn_server: str, served: str) -> None:
    """ "this page as JSON" kept the filters the page was opened with, and its answer
    was for those; a static copy's twin is the whole page, and stays so."""
    twin = "() => document.querySelector(\"footer a[href^='index.json']\").getAttribute('href')"
    page.goto(f"{uvicorn_server}/tags/develop/index.html?os=ubuntu22.04")
    page.wait_for_function(PAGE_READY)
    assert page.evaluate(twin) == "index.json?os=ubuntu22.04"
    page.select_option("select[name=os]", "")
    page.select_option("select[name=target]", "aarch64")
    page.wait_for_function(f"() => ({twin})() === 'index.json?target=aarch64'")
    page.goto(f"{uvicorn_server}/tags/develop/packages/hdf5/index.html?target=x86_64_v3")
    page.wait_for_function(PAGE_READY)
    page.fill("input[data-text]", "1.14")
    page.select_option("select[name=target]", "")
    page.wait_for_function(f"() => ({twin})() === 'index.json?q=1.14'")
    page.goto(served + "tags/develop/index.html?os=ubuntu22.04")
    page.wait_for_function(PAGE_READY)
    page.select_option("select[name=target]", "aarch64")
    page.wait_for_timeout(300)
    assert page.evaluate(twin) == "index.json"


@pytest.mark.parametrize("live", [False, True])
def test_a_variant_typed_with_a_plus_in_the_url_is_that_variant(
    page: Any, served: str, uvicorn_server: str, demo_run: Demo, live: bool
) -> None:
    """?variant=+cuda, as a Spack user types it: a query's "+" is a space, and " cuda"
    found nothing, without a word."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        cuda = sum("+cuda" in s.variants for s in package_page(catalog, "develop", "py-torch").specs)
    assert cuda > 0
    base = f"{uvicorn_server}/" if live else served
    page.goto(base + "tags/develop/packages/py-torch/index.html?variant=+cuda")
    page.wait_for_function(PAGE_READY)
    assert page.input_value("select[name=variant]") == "+cuda"
    assert page.inner_text("#shown") == str(cuda)


def test_the_filters_heading_counts_the_filters_on(page: Any, served: str) -> None:
    """Folded on a phone, the box's heading is what says filters are on: the script
    keeps its count as filters change (a static copy said "Filters" alone)."""
    page.goto(served + "tags/develop/index.html?os=ubuntu24.04&target=x86_64_v3")
    page.wait_for_function(PAGE_READY)
    assert page.inner_text("#filters-box > summary") == "Filters (2)"
    page.select_option("select[name=os]", "")
    page.wait_for_function("() => document.querySelector('#filters-box > summary').textContent === 'Filters (1)'")
    page.select_option("select[name=target]", "")
    page.wait_for_function("() => document.querySelector('#filters-box > summary').textContent === 'Filters'")


def test_a_card_table_s_hidden_sort_buttons_are_not_tabbed_to_on_a_phone(page: Any, served: str) -> None:
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(served + "tags/develop/index.html")
    page.wait_for_function(PAGE_READY)
    tab_indexes = "() => Array.from(document.querySelectorAll('#rows th button.sort')).map((b) => b.tabIndex)"
    assert set(page.evaluate(tab_indexes)) == {-1}
    page.set_viewport_size({"width": 1280, "height": 800})  # a table again: sortable by keyboard
    page.wait_for_function(f"({tab_indexes})().every((index) => index === 0)")


def test_a_variant_every_spec_holds_keeps_every_row(page: Any, served: str, demo_run: Demo) -> None:
    """A link to hdf5's page with ``?variant=`` of a variant all its specs have (the
    filter's choices list those that differ only): every row stays, counted."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        whole = package_page(catalog, "develop", "hdf5")
    shared = next(v for v in whole.shared if v.startswith("+"))
    page.goto(served + "tags/develop/packages/hdf5/index.html?variant=" + urllib.parse.quote(shared))
    page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == str(len(whole.specs))
    assert page.locator("#rows tbody tr:not([hidden])").count() == len(whole.specs)


def test_a_deep_link_with_a_malformed_fragment_or_an_unknown_machine(page: Any, served: str) -> None:
    """A link ending in a malformed escape (``#%E0``) threw in the script (URI
    malformed): the page never said it was ready and a package page's columns did not
    sort. An unknown ``runs_on`` showed as "nope (0)": a machine archspec does not know
    is no choice with a count (the server writes "nope")."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(served + "tags/develop/packages/gcc-runtime/index.html#%E0")
    page.wait_for_function(PAGE_READY)
    versions = _texts(page, "#rows tbody td:nth-child(2)")
    page.click("th[data-key=version] button")
    assert _texts(page, "#rows tbody td:nth-child(2)") == versions[::-1]
    page.goto(served + "tags/develop/index.html?runs_on=nope#%E0")
    page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == "0"
    assert _texts(page, "select[name=runs_on] option:checked") == ["nope"]
    assert not errors, errors


def test_showing_the_last_rows_keeps_the_keyboard_in_the_table(page: Any, served: str, demo_run: Demo) -> None:
    """Enter on "Show more" that draws the last rows hides the button: focus fell to the
    page's start, and the next Tab skipped the rows just shown. It goes to the first of
    them."""
    total = len(json.loads((demo_run.site / "tags/develop/index.json").read_text())["packages"])
    page.goto(served + "tags/develop/index.html")
    page.wait_for_function(PAGE_READY)
    page.focus("#more")
    for _ in range(total // FIRST_ROWS - 1):
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "more"
    drawn = page.locator("#rows tbody tr").count()
    page.keyboard.press("Enter")  # the last rows
    assert page.locator("#more").is_hidden() and page.locator("#rows tbody tr").count() == total
    first_new = page.locator("#rows tbody tr").nth(drawn).locator("td.name").inner_text()
    assert page.evaluate("document.activeElement.closest('#rows') !== null")
    assert page.evaluate("document.activeElement.textContent") == first_new


def test_a_static_search_page_keeps_the_tag_its_url_asks_for(page: Any, served: str) -> None:
    """The static search page restored ``q`` from its URL but not ``tag``: the form
    showed "every tag", and Enter on a name opened the package in the first tag that
    has it, not the one asked for."""
    page.goto(served + "search.html?q=nothing-by-this-name&tag=v1.0.2&stack=")
    page.wait_for_selector("#search-results li")
    assert page.input_value("select[name=tag]") == "v1.0.2"
    page.fill("#package-search", "zlib")
    page.press("#package-search", "Enter")
    page.wait_for_url("**/tags/v1.0.2/packages/zlib/index.html")
