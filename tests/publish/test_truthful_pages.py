"""What the site's pages say, against plain definitions, mostly in Chromium: a package
page's option counts are the specs that would be shown with that option chosen, the other
filters AND the Version box applied (as a tag page's counts apply its name box); a text
filter that alone empties a page offers its drop; a spec's JSON names its stacks; the
versions × architectures table says the filters do not narrow it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.facets import PACKAGE_KEYS
from cachedex.publish.pages import package_page, tag_page
from cachedex.values import variant_name
from tests.helpers import Demo
from tests.publish.conftest import PAGE_READY, opened, shot

pytestmark = pytest.mark.browser

#: hwloc in the demo's develop: 7 specs of 2.11.1 (one +cuda), 1 of 2.9.1 (~cuda).
PACKAGE = "tags/develop/packages/hwloc/index.html"


def _texts(page: Any, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


def _values(spec: dict[str, Any], facet: str, differing: list[str]) -> list[str]:
    if facet == "stack":
        return list(spec["stacks"])
    if facet == "variant":
        return [v for v in spec["variants"] if variant_name(v) in differing]
    return [spec[facet]]


def _plain_counts(demo_run: Demo, filters: dict[str, str], text: str) -> dict[str, dict[str, int]]:
    """Per facet and value: the specs whose version holds ``text`` and that meet the
    other filters and that value."""
    data = json.loads((demo_run.site / PACKAGE.replace(".html", ".json")).read_text())
    kept = [s for s in data["specs"] if text.lower() in s["version"].lower()]
    counts: dict[str, dict[str, int]] = {}
    for facet in PACKAGE_KEYS:
        others = {k: v for k, v in filters.items() if k != facet}
        found: dict[str, int] = {}
        for spec in kept:
            if all(v in _values(spec, k, data["differing"]) for k, v in others.items()):
                for value in set(_values(spec, facet, data["differing"])):
                    found[value] = found.get(value, 0) + 1
        counts[facet] = found
    return counts


def _shown_counts(page: Any) -> dict[str, dict[str, int]]:
    """Per counted select: each option's value and the count its label says."""
    shown: dict[str, dict[str, int]] = {}
    for facet in PACKAGE_KEYS:
        options = page.eval_on_selector_all(
            f"select[data-facet={facet}] option", "os => os.filter(o => o.value).map(o => [o.value, o.textContent])"
        )
        shown[facet] = {}
        for value, label in options:
            found = re.fullmatch(r".* \(([\d,]+)\)", label)
            assert found, label
            shown[facet][value] = int(found.group(1).replace(",", ""))
    return shown


def _assert_counts_are_true(page: Any, expected: dict[str, dict[str, int]], every: dict[str, dict[str, int]]) -> None:
    """The counts are ``expected``'s, and every value of the unfiltered page (``every``)
    stays a choice, at 0 if need be (root: never listed unless chosen)."""
    shown = _shown_counts(page)
    for facet, options in shown.items():
        assert options == {value: expected[facet].get(value, 0) for value in options}, facet
        assert set(options) == set(every[facet]) - {"root"}, facet


@pytest.mark.parametrize(
    ("filters", "text"),
    [({}, "2.9"), ({"target": "x86_64_v3"}, "2.11"), ({"variant": "~cuda"}, "2.11")],
    ids=["version", "version-and-target", "version-and-variant"],
)
def test_package_page_counts_apply_the_version_filter_typed(
    page: Any, served: str, demo_run: Demo, filters: dict[str, str], text: str
) -> None:
    query = "&".join(f"{k}={v}" for k, v in filters.items())
    page.goto(f"{served}{PACKAGE}{'?' + query if query else ''}")
    page.wait_for_function(PAGE_READY)
    page.fill("input[data-text]", text)
    expected = _plain_counts(demo_run, filters, text)
    shown = page.locator("#rows tbody tr:visible").count()
    assert page.inner_text("#shown") == str(shown) and shown > 0
    _assert_counts_are_true(page, expected, _plain_counts(demo_run, {}, ""))
    shot(page, "package-version-counts")
    if not filters:  # the 2.9.1 build is ~cuda: +cuda cannot be chosen with it
        assert page.locator("select[data-facet=variant] option[value='+cuda']").is_disabled()


@pytest.mark.parametrize("script", [False, True], ids=["server", "script"])
@pytest.mark.parametrize(("filters", "text"), [({}, "2.9"), ({"target": "x86_64_v3"}, "2.11")], ids=["alone", "target"])
def test_package_page_counts_apply_the_version_filter_of_a_link(
    browser: Any, uvicorn_server: str, demo_run: Demo, script: bool, filters: dict[str, str], text: str
) -> None:
    """Served live, a link with a Version (``?q=2.9``) counts the same with the script
    and without (the server's counts), and keeps every choice."""
    query = "".join(f"{k}={v}&" for k, v in filters.items())
    context, page = opened(browser, f"{uvicorn_server}/{PACKAGE}?{query}q={text}", script=script)
    _assert_counts_are_true(page, _plain_counts(demo_run, filters, text), _plain_counts(demo_run, {}, ""))
    context.close()


def test_a_text_filter_that_alone_empties_a_page_offers_its_drop(page: Any, served: str, demo_run: Demo) -> None:
    """A Version (package page) or Name (tag page) that no spec has: the empty box offers
    the page without it, with what it finds, as it offers each facet's drop."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        whole = package_page(catalog, "develop", "hwloc")
        on_sequoia = len(tag_page(catalog, "develop", {"os": "sequoia"}).packages)
    page.goto(f"{served}{PACKAGE}?q=9.9")
    page.wait_for_function(PAGE_READY)
    assert page.locator("#empty").is_visible()
    assert _texts(page, "#relax li") == [f'Without Version "9.9": {len(whole.specs)} specs']
    page.click("#relax a")
    page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == str(len(whole.specs)) and page.input_value("input[data-text]") == ""

    page.goto(f"{served}tags/develop/index.html?os=sequoia&q=zzz")
    page.wait_for_function(PAGE_READY)
    assert on_sequoia > 0 and _texts(page, "#relax li")[0] == f'Without Name "zzz": {on_sequoia} packages'
    page.locator("#relax a").first.click()
    page.wait_for_url("**/tags/develop/index.html?os=sequoia")
    page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == str(on_sequoia)


def test_a_spec_page_s_json_says_which_stacks_list_it(demo_run: Demo, uvicorn_server: str) -> None:
    """Its ``spec.stacks`` are its listing holders' (root first), not an empty list, in
    the site's JSON twin and the API alike."""
    import urllib.request

    checked = 0
    for twin in sorted((demo_run.site / "specs").glob("*/*.json"))[:40]:
        page = json.loads(twin.read_text())
        listed = {h["stack"] for h in page["holders"] if h["listed"]}
        assert page["spec"]["stacks"] == sorted(listed, key=lambda s: (s != "root", s)), twin.name
        checked += bool(listed)
    assert checked > 20
    with urllib.request.urlopen(f"{uvicorn_server}/api/specs/{twin.stem}") as answer:
        assert json.load(answer)["spec"]["stacks"] == page["spec"]["stacks"]


def test_the_versions_by_architectures_table_says_the_filters_do_not_narrow_it(page: Any, served: str) -> None:
    """Filtered to macOS on x86_64_v3 (none), the table still marks hwloc's builds: its
    heading says they are all of its specs."""
    page.goto(f"{served}{PACKAGE}?os=sequoia&target=x86_64_v3")
    page.wait_for_function(PAGE_READY)
    assert page.inner_text("#shown") == "0"
    assert page.inner_text("#coverage > summary") == "Versions × architectures of all 8 specs, whatever the filters"
