"""Accessibility and phones: axe-core in Chromium on every kind of page, light and dark,
desktop and phone; and the layouts a phone gets (cards, folded filters)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import Demo
from tests.publish.conftest import PAGE_READY, shot

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


def _path(kind: str, demo_run: Demo) -> str:
    if PAGES[kind] is None:
        spec = sorted((demo_run.site / "specs").glob("*/*.html"))[0]
        return str(spec.relative_to(demo_run.site))
    return PAGES[kind]  # type: ignore[return-value]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_no_serious_or_critical_axe_violation(
    browser: Any, served: str, demo_run: Demo, axe_source: str, scheme: str, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    try:
        for kind in PAGES:
            page.goto(served + _path(kind, demo_run))
            if kind.startswith(("tag", "package")):
                page.wait_for_function(PAGE_READY)
            page.add_script_tag(content=axe_source)
            result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
            serious = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
            if serious:
                found[kind] = [
                    f"{v['id']}: {v['help']} ({len(v['nodes'])}: {v['nodes'][0]['target']})" for v in serious
                ]
            if width < 640:
                shot(page, f"a11y-{kind}-phone-{scheme}")
    finally:
        context.close()
    assert not found, found


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
        # Long URLs wrap at their full width, not a few characters a line.
        url_lines = page.eval_on_selector_all(
            "td.url",
            "cells => cells.map((c) => Math.round(c.offsetHeight / parseFloat(getComputedStyle(c).lineHeight)))",
        )
        assert max(url_lines) <= 3, url_lines
        assert page.evaluate("document.documentElement.scrollHeight") < 8000
        # Filters chosen in the URL stay unfolded.
        page.goto(served + "tags/develop/index.html?target=aarch64")
        page.wait_for_function(PAGE_READY)
        assert page.evaluate("document.getElementById('filters-box').open") is True
    finally:
        context.close()
