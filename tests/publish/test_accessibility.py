"""Accessibility and phones: axe-core in Chromium on every kind of page, light and dark,
desktop and phone; and the layouts a phone gets (cards, folded filters)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Demo
from tests.lockfiles import demo_nodes, lockfile, roots_named, spliced, write_lockfile
from tests.publish.conftest import PAGE_READY, TIMEOUT_MS, shot

pytestmark = pytest.mark.browser

#: One page of each kind, with JavaScript's work done (``data-ready``) where it has some.
PAGES = {
    "home": "index.html",
    "tag": "tags/develop/index.html",
    "tag-filtered": "tags/develop/index.html?os=sequoia&target=x86_64_v3",
    "package": "tags/develop/packages/py-torch/index.html",
    "package-filtered": "tags/develop/packages/cmake/index.html?variant=%2Bdoc&os=sequoia",
    "spec": None,  # the first spec page of hdf5, found below
    "all": "tags/develop/all.html",
    "mirrors": "mirrors/index.html",
    "search": "search.html?q=hdf",
    "not-found": "tags/develop/packages/nothing-here/index.html",
    "changes": "tags/develop/changes/index.html",
    "compare": "tags/develop-2026-11-08/compare/develop-2026-11-01/index.html",
    "coverage": "tags/develop/coverage/index.html",
}


#: Moderate rules the pages keep too (a hunt found each broken once): a landmark's name
#: told apart from the others', headings in order.
HELD_RULES = ("landmark-unique", "heading-order")


def _path(kind: str, demo_run: Demo) -> str:
    if PAGES[kind] is None:
        spec = sorted((demo_run.site / "specs").glob("*/*.html"))[0]
        return str(spec.relative_to(demo_run.site))
    return PAGES[kind]  # type: ignore[return-value]


# A test per page (52 in all, each a few seconds of axe): spread over pytest-xdist's
# workers, not four tests of a minute or two each.
@pytest.mark.parametrize("kind", list(PAGES))
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_no_serious_or_critical_axe_violation(
    browser: Any, served: str, demo_run: Demo, axe_source: str, scheme: str, width: int, kind: str
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    try:
        page.goto(served + _path(kind, demo_run))
        if kind.startswith(("tag", "package")):
            page.wait_for_function(PAGE_READY)
        page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")  # (all checked)
        page.add_script_tag(content=axe_source)
        # Rows past a table's tenth come from the same template as those before: axe
        # takes a minute over the compare page's ~1,900 rows (16,000 elements) opened.
        page.evaluate("document.querySelectorAll('tbody > tr:nth-child(n+11)').forEach((r) => r.remove())")
        result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        if width < 640:
            shot(page, f"a11y-{kind}-phone-{scheme}")
    finally:
        context.close()
    _assert_no_serious(result)


def _assert_no_serious(result: dict[str, Any]) -> None:
    serious = [v for v in result["violations"] if v["impact"] in ("serious", "critical") or v["id"] in HELD_RULES]
    assert not serious, [f"{v['id']}: {v['help']} ({len(v['nodes'])}: {v['nodes'][0]['target']})" for v in serious]


#: States of a page the live server draws (the script's filters from the URL, and the
#: server's without it), each with the element that shows the state is there.
LIVE_STATES = {
    # No single removal finds anything: "... Clear all filters" (#no-relax).
    "nothing-helps": ("/tags/develop/index.html?os=sequoia&target=zen4&stack=e4s", "#clear-filters"),
    # Version text that matches nothing: the empty box offers dropping it.
    "version-text-empty": ("/tags/develop/packages/hwloc/index.html?q=9.9", "#relax li"),
    # The details heading's muted "of all N specs, whatever the filters", under filters.
    "bottles-filtered": ("/tags/develop/packages/hwloc/index.html?os=sequoia", "#coverage summary .muted"),
}


def _axe_live(browser: Any, url: str, *, scheme: str, width: int, script: bool, ready: bool = True) -> tuple[Any, Any]:
    """(its context, a page) at ``url``, with the site's script or without it (the
    server's page as drawn; axe is a script, so the site's alone is refused). The live
    server's content security policy would refuse axe's inline script: the context
    bypasses it (for the tests' script only)."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    refused: list[str] = []
    if not script:  # (axe comes inline: not refused)
        page.route("**/*.js", lambda route: (refused.append(route.request.url), route.abort()))
    page.goto(url)
    if script and ready:
        page.wait_for_function(PAGE_READY)
    assert script or any("/static/cachedex" in u for u in refused), refused
    return context, page


def _run_axe(page: Any, axe_source: str) -> dict[str, Any]:
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    page.add_script_tag(content=axe_source)
    page.evaluate("() => document.querySelectorAll('tbody > tr:nth-child(n+11)').forEach((r) => r.remove())")
    return page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")  # type: ignore[no-any-return]


@pytest.mark.parametrize("state", list(LIVE_STATES))
@pytest.mark.parametrize("script", [False, True], ids=["server", "script"])
def test_no_serious_or_critical_axe_violation_in_an_empty_or_filtered_state(
    browser: Any, uvicorn_server: str, axe_source: str, script: bool, state: str
) -> None:
    """The server's page in the light at a desktop's width; the script's in the dark at a
    phone's (the other pages' tests take every pair)."""
    path, shown = LIVE_STATES[state]
    scheme, width = ("dark", 390) if script else ("light", 1280)
    context, page = _axe_live(browser, uvicorn_server + path, scheme=scheme, width=width, script=script)
    try:
        assert page.locator(shown).first.is_visible()  # the state checked is the one drawn
        result = _run_axe(page, axe_source)
    finally:
        context.close()
    _assert_no_serious(result)


@pytest.mark.parametrize(("scheme", "width"), [("light", 1280), ("dark", 390)])
def test_no_serious_or_critical_axe_violation_on_a_reuse_report_with_spliced_specs(
    browser: Any, uvicorn_server: str, axe_source: str, tmp_path: Path, scheme: str, width: int
) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = spliced(nodes, roots, "zlib-ng")
    path = write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed[r] for r in roots]))
    context, page = _axe_live(
        browser, uvicorn_server + "/reuse.html", scheme=scheme, width=width, script=True, ready=False
    )
    try:
        page.set_input_files("#lockfile", str(path))
        page.select_option("select[name=tag]", "develop")
        page.click("#reuse-form button[type=submit]")
        page.wait_for_selector("#reuse-result p.rewired")
        result = _run_axe(page, axe_source)
    finally:
        context.close()
    _assert_no_serious(result)


def _contrast(one: str, two: str) -> float:
    """WCAG's contrast ratio of two computed ``rgb(...)`` colours."""

    def luminance(color: str) -> float:
        channels = [int(c) / 255 for c in color[color.index("(") + 1 : -1].split(",")[:3]]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(one), luminance(two)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize(("scheme", "script"), [("light", True), ("dark", False)], ids=["light-script", "dark-server"])
def test_clear_all_filters_is_reached_by_tab_and_shows_its_focus(
    browser: Any, uvicorn_server: str, scheme: str, script: bool
) -> None:
    """The empty box's "Clear all filters" is a keyboard's way on too: Tab reaches it
    from the top of the page, and its focus ring is drawn, 3:1 against the box (WCAG's
    non-text contrast)."""
    path, _ = LIVE_STATES["nothing-helps"]
    context, page = _axe_live(browser, uvicorn_server + path, scheme=scheme, width=1280, script=script)
    try:
        for _ in range(80):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.id") == "clear-filters":
                break
        else:
            pytest.fail("Tab never reached #clear-filters")
        ring = page.eval_on_selector(
            "#clear-filters",
            "(a) => { const s = getComputedStyle(a); return [a.matches(':focus-visible'), s.outlineStyle,"
            " parseFloat(s.outlineWidth), s.outlineColor, getComputedStyle(a.closest('.empty')).backgroundColor]; }",
        )
        visible, style, width, color, behind = ring
        assert visible and style != "none" and width >= 2 and _contrast(color, behind) >= 3, ring
        shot(page, f"clear-filters-focus-{scheme}-{'script' if script else 'server'}")
    finally:
        context.close()


def test_a_phone_gets_cards_and_folded_filters(browser: Any, served: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(served + "tags/develop/index.html")
        page.wait_for_function(PAGE_READY)
        assert page.evaluate("document.getElementById('filters-box').open") is False  # behind a disclosure
        heights = page.eval_on_selector_all("#rows tbody tr", "rows => rows.slice(0, 30).map((r) => r.offsetHeight)")
        # Compact cards with no blank cells: the review found 100-175 px rows of mostly blank
        # space, two packages per screen. A card is as tall as its lines of facts, no more.
        assert max(heights) < 180 and sum(heights) / len(heights) < 110, heights
        blank = page.eval_on_selector_all(
            "#rows tbody tr",
            "rows => rows.slice(0, 30).filter((r) =>"
            " [...r.cells].some((c) => c.offsetHeight > 0 && !c.textContent.trim())).length",
        )
        assert blank == 0
        assert page.evaluate("document.documentElement.scrollWidth") <= 391  # nothing scrolls sideways
        page.goto(served + "mirrors/index.html")
        # Long URLs wrap at their full width, not a few characters a line (the demo's are
        # paths of its folder, as long as the test's temporary folder makes them).
        url_lines = page.eval_on_selector_all(
            "td.url",
            "cells => cells.map((c) => [Math.round(c.offsetHeight / parseFloat(getComputedStyle(c).lineHeight)),"
            " c.textContent.trim().length])",
        )
        assert url_lines and all(lines <= max(1, math.ceil(length / 24)) for lines, length in url_lines), url_lines
        # Compact rows: 8,000 px with URLs of two lines each, a line more for every longer one.
        line = page.eval_on_selector("td.url", "c => parseFloat(getComputedStyle(c).lineHeight)")
        longer = sum(max(0, lines - 2) for lines, _ in url_lines)
        assert page.evaluate("document.documentElement.scrollHeight") < 8000 + longer * line
        # Filters chosen in the URL stay unfolded.
        page.goto(served + "tags/develop/index.html?target=aarch64")
        page.wait_for_function(PAGE_READY)
        assert page.evaluate("document.getElementById('filters-box').open") is True
    finally:
        context.close()


def test_the_rest_of_a_list_opens_by_keyboard_and_touch(page: Any, served: str) -> None:
    """ "+N" after a list's first values (a tag page's versions, targets, stacks) opens on
    the others with Enter or a tap: a title on hover alone showed them to a mouse only."""
    page.goto(served + "tags/develop/index.html")
    page.wait_for_function(PAGE_READY)
    more = page.locator("#rows details.more").first
    summary = more.locator("summary")
    count = int(summary.inner_text().removeprefix("+").split()[0])
    summary.focus()
    page.keyboard.press("Enter")
    assert more.evaluate("(d) => d.open") is True
    rest = more.evaluate("(d) => d.textContent.slice(d.querySelector('summary').textContent.length)")
    assert len(rest.split(", ")) == count and all(rest.split(", "))


def test_a_focused_matrix_cell_is_not_hidden_under_its_row_name(page: Any, served: str) -> None:
    """Tabbing along a coverage matrix: the row name stays in view (sticky), and the cell
    focused is beside it, not under it (the hunt found the next row's first count hidden
    after the previous row's last had scrolled the box)."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(served + "tags/develop/coverage/index.html")
    page.locator("table.coverage tbody a").first.focus()
    hidden, seen = [], 0
    for _ in range(60):  # Tab along the rows, as a keyboard does
        page.keyboard.press("Tab")
        overlap = page.evaluate(
            "() => { const a = document.activeElement; const row = a.closest('table.coverage tbody tr');"
            " const name = row && row.querySelector('th[scope=row]'); if (!row) return null;"
            " return name.contains(a) ? 0 : name.getBoundingClientRect().right - a.getBoundingClientRect().left; }"
        )
        if overlap is None:
            break
        seen += 1
        if overlap > 0:
            hidden.append((seen, overlap))
    assert seen > 20 and not hidden, (seen, hidden)
