"""The pages' state as people move through them (real Chromium over a static server and
over ``cachedex serve``): filters that can always be changed, fragments that land, the
way up keeping the filters, a slow or missing data file said, the newest check drawn."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest

from tests.lockfiles import closure, demo_nodes, lockfile, roots_named, write_lockfile
from tests.publish.conftest import PAGE_READY

pytestmark = pytest.mark.browser


def _options(page: Any, name: str) -> list[str]:
    return page.eval_on_selector_all(f"select[name={name}] option", "os => os.map(o => o.value).filter(Boolean)")


@pytest.mark.parametrize("where", ["tags/develop/index.html", "tags/develop/packages/zlib-ng/index.html"])
def test_a_live_filtered_page_offers_every_value_to_change_to(page: Any, uvicorn_server: str, where: str) -> None:
    """Rendered filtered (a reload, a shared link), the live page offered only the values
    with a count: cleared, the other filters could not be changed back."""
    page.goto(f"{uvicorn_server}/{where}")
    page.wait_for_function(PAGE_READY)
    every = {name: _options(page, name) for name in ("os", "target")}
    page.goto(f"{uvicorn_server}/{where}?os=sequoia")
    page.wait_for_function(PAGE_READY)
    assert {name: _options(page, name) for name in ("os", "target")} == every
    disabled = page.eval_on_selector_all("select[name=target] option[disabled]", "os => os.map(o => o.value)")
    assert disabled and all(value in every["target"] for value in disabled)
    page.select_option("select[name=os]", "")
    page.wait_for_function("() => !document.querySelector('select[name=target] option[disabled]')")


def test_a_link_to_a_fragment_lands_there_with_the_script_on(page: Any, served: str) -> None:
    """The script's replaceState dropped #coverage before the browser scrolled to it."""
    page.set_viewport_size({"width": 1000, "height": 500})
    page.goto(served + "tags/develop/packages/zlib-ng/index.html#coverage")
    page.wait_for_function(PAGE_READY)
    assert page.evaluate("location.hash") == "#coverage"
    # Scrolled to it: its top at the window's, or as far as the page goes.
    off = page.evaluate(
        "(() => { const at = document.getElementById('coverage').getBoundingClientRect().top + scrollY;"
        " return Math.abs(scrollY - Math.min(at, document.documentElement.scrollHeight - innerHeight)); })()"
    )
    assert page.evaluate("scrollY") > 0 and off < 3, off


def test_the_way_up_to_the_tag_keeps_the_filters(page: Any, served: str, uvicorn_server: str) -> None:
    for site in (served, uvicorn_server + "/"):
        page.goto(site + "tags/develop/packages/zlib-ng/index.html?os=sequoia")
        page.wait_for_function(PAGE_READY)
        options = _options(page, "os")
        other = next(value for value in options if value != "sequoia")
        page.select_option("select[name=os]", other)
        crumb = page.get_attribute("p.crumbs a[data-carry]", "href")
        assert crumb == f"../../index.html?os={other}", (site, crumb)


def test_a_tag_page_whose_data_is_slow_or_missing_says_so(page: Any, served: str) -> None:
    """The selects showed ?os=sequoia while every row was listed, with no word; when the
    data never came, the page stayed so for good."""
    held: list[Any] = []
    page.route(re.compile(r".*/tags/develop/columns\.json(\.gz)?$"), lambda route: held.append(route))  # answered later
    page.goto(served + "tags/develop/index.html?os=sequoia")
    assert "Loading the tag's specs" in page.inner_text("#load-status")
    while held:
        held.pop().continue_()
    page.wait_for_function(PAGE_READY)
    assert page.locator("#load-status").count() == 0
    page.unroute(re.compile(r".*/tags/develop/columns\.json(\.gz)?$"))
    page.route(re.compile(r".*/tags/develop/columns\.json(\.gz)?$"), lambda route: route.abort())
    page.goto(served + "tags/develop/index.html?os=sequoia")
    page.wait_for_function(PAGE_READY)
    alert = page.inner_text("#load-status[role=alert]")
    assert "The filters need this tag's data" in alert and "unfiltered" in alert
    assert page.is_visible("#facets [data-apply]")


def test_the_filters_stay_unfolded_on_a_phone_when_a_name_or_runs_on_filter_is_on(browser: Any, served: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 800})
    page = context.new_page()
    for query, heading in (("", "Filters"), ("runs_on=zen4", "Filters (1)"), ("q=py", "Filters (1)")):
        page.goto(served + f"tags/develop/index.html?{query}")
        page.wait_for_function(PAGE_READY)
        assert page.evaluate("document.getElementById('filters-box').open") is bool(query), query
        assert page.inner_text("#filters-box > summary") == heading, query
    page.fill("input[data-text]", "Py")  # kept as typed in the URL, matched in any case
    page.wait_for_function("() => location.search === '?q=Py'")
    context.close()


def test_choosing_a_tag_gives_its_own_stacks_and_a_stack_it_lacks_is_left_out(page: Any, uvicorn_server: str) -> None:
    page.goto(uvicorn_server + "/search.html?q=zlib&tag=develop&stack=e4s")
    assert page.input_value("select[name=stack]") == "e4s"
    page.select_option("select[name=tag]", "v1.0.2")
    stacks = _options(page, "stack")
    assert stacks and "e4s" in stacks and page.input_value("select[name=stack]") == "e4s"
    page.select_option("select[name=tag]", "")
    assert _options(page, "stack") == [] and page.input_value("select[name=stack]") == ""
    # A URL asking for what cannot be (a shared link, no script): searched without it, and said.
    page.goto(uvicorn_server + "/search.html?q=zlib&stack=e4s")
    assert "stack e4s left out" in page.inner_text("#scope-note") and page.locator("#results").count() == 1
    page.goto(uvicorn_server + "/search.html?q=zlib&tag=v1.0.2&stack=nope")
    assert "Tag v1.0.2 has no stack nope: searched the whole tag" in page.inner_text("#scope-note")


def test_only_the_newest_environment_check_is_drawn(page: Any, uvicorn_server: str, tmp_path: Path) -> None:
    """A slow first answer (every tag) came after the second (v1.0.2) and replaced it."""
    nodes = demo_nodes()
    path = write_lockfile(tmp_path / "spack.lock", lockfile(closure(nodes, roots_named(nodes, "hdf5")), []))
    held: list[Any] = []

    def hold_the_first(route: Any) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)  # answered only once the second check is drawn

    page.route("**/api/reuse*", hold_the_first)
    page.goto(uvicorn_server + "/reuse.html")
    page.set_input_files("#lockfile", str(path))
    page.click("#reuse-form button[type=submit]")
    page.select_option("select[name=tag]", "v1.0.2")
    page.click("#reuse-form button[type=submit]")
    page.wait_for_selector("#reuse-tags")
    with contextlib.suppress(Exception):  # (the page stopped that request: as well)
        held[0].continue_()
    page.wait_for_timeout(1500)
    rows = page.eval_on_selector_all("#reuse-tags tbody tr td:first-child", "cells => cells.map(c => c.textContent)")
    assert rows == ["v1.0.2"]


def test_an_answer_a_proxy_wrote_in_html_is_said_by_its_status(page: Any, uvicorn_server: str, tmp_path: Path) -> None:
    """nginx's 413 page (a lockfile over its 1 MiB default) read as JSON: "Unexpected token '<'"."""
    nodes = demo_nodes()
    path = write_lockfile(tmp_path / "spack.lock", lockfile(closure(nodes, roots_named(nodes, "hdf5")), []))
    page.route(
        "**/api/reuse*",
        lambda route: route.fulfill(status=413, content_type="text/html", body="<html>413 Too Large</html>"),
    )
    page.goto(uvicorn_server + "/reuse.html")
    page.set_input_files("#lockfile", str(path))
    page.click("#reuse-form button[type=submit]")
    page.wait_for_selector("#reuse-result [role=alert]")
    assert "larger than the server (or a proxy in front of it) takes (413)" in page.inner_text("#reuse-result")


def test_a_live_package_page_filters_by_version_without_javascript(browser: Any, uvicorn_server: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(uvicorn_server + "/tags/develop/packages/zlib-ng/index.html")
    every = page.locator("#rows tbody tr:not([hidden])").count()
    page.fill("input[name=q]", "2.2")
    page.click("#facets [data-apply]")
    page.wait_for_url("**q=2.2**")
    versions = page.eval_on_selector_all("#rows tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.version)")
    assert versions and len(versions) < every and all("2.2" in v for v in versions)
    assert page.input_value("input[name=q]") == "2.2"
    context.close()


def test_live_pages_work_under_their_content_security_policy(page: Any, uvicorn_server: str) -> None:
    """Every answer carries a policy that runs only the server's own scripts and styles
    (and the error page's inline ones, by their hashes): the pages break none of it."""
    violations: list[str] = []
    page.on(
        "console",
        lambda message: violations.append(message.text) if "Content Security Policy" in message.text else None,
    )
    for path in (
        "/",
        "/tags/develop/index.html?os=sequoia",
        "/tags/develop/packages/zlib-ng/",
        "/search.html?q=zlib",
        "/nope",
    ):
        answer = page.goto(uvicorn_server + path)
        assert answer is not None and "script-src 'self'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"
    page.goto(uvicorn_server + "/nope")
    assert (
        page.evaluate("getComputedStyle(document.querySelector('header.top')).display") != "inline"
    )  # its style applied
    page.goto(uvicorn_server + "/tags/develop/index.html?os=sequoia")
    page.wait_for_function(PAGE_READY)
    assert violations == []
    blocked = page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = 'window.injected = 1';"
        " document.body.append(s); return window.injected === 1; }"
    )
    assert blocked is False  # a script a value smuggled in would not run
