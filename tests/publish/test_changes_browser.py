"""Change and coverage pages in Chromium, as a maintainer watching nightly pipelines
uses them: from a tag page to its latest change, on to a removed spec, to a coverage
cell and on to the specs behind it; and the same pages on a phone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.publish.conftest import PAGE_READY, shot

pytestmark = pytest.mark.browser


def test_from_a_tag_page_to_a_removed_spec_and_from_a_coverage_cell_to_its_specs(page: Any, served: str) -> None:
    page.goto(served + "tags/develop/index.html")
    latest = page.locator("section.recent-changes li a").first
    latest.click()
    page.wait_for_url("**/tags/develop/changes/index.html#sync-*")
    sync = page.locator("article.sync").first
    totals = sync.locator("p.totals").first.inner_text()
    removed = sync.locator("details.removed").first
    summary = removed.locator("summary").inner_text()
    assert f"\u2212{summary.split('(')[1].rstrip(')')}" in totals  # "Specs removed (40)" and "−40 specs"
    removed.locator("summary").click()
    link = removed.locator("tbody tr td a").first
    name = link.inner_text()
    link.click()
    page.wait_for_selector("#hash")
    assert page.inner_text("h1").startswith(name + "@")
    shot(page, "changes-removed-spec")

    coverage = served + "tags/develop/coverage/index.html"
    page.goto(coverage)
    cells = page.locator("#stacks ~ div table tbody td.num a")
    counts = [int(text.replace(",", "")) for text in cells.all_inner_texts()]
    hrefs = [cells.nth(n).get_attribute("href") for n in range(len(counts))]
    # Cells of the whole-tag row (a platform-os with several targets among them) and of
    # stacks, each small enough that the tag page draws all its packages.
    chosen = sorted((n for n in range(len(counts)) if counts[n] < 100), key=lambda n: (-counts[n], n))[::7][:6]
    assert len(chosen) >= 3
    for n in chosen:
        page.goto(coverage)
        page.locator("#stacks ~ div table tbody td.num a").nth(n).click()
        page.wait_for_url("**/tags/develop/index.html*")
        page.wait_for_function(PAGE_READY)
        specs = [int(text) for text in page.locator("#rows tbody td:nth-child(2)").all_inner_texts()]
        assert sum(specs) == counts[n], hrefs[n]  # the cell counts exactly the specs it leads to
        # and the page says that number where it counts what it shows, not packages alone
        assert page.inner_text("#shown-specs") == f" ({counts[n]:,} spec{'s' if counts[n] != 1 else ''})"
    shot(page, "coverage-cell-specs")


def test_change_and_coverage_pages_on_a_phone(browser: Any, served: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone = context.new_page()
    try:
        for path in ("tags/develop/changes/index.html", "tags/develop/coverage/index.html"):
            phone.goto(served + path)
            assert phone.evaluate("document.documentElement.scrollWidth") <= 391, path  # wide tables scroll inside
            shot(phone, "phone-" + path.split("/")[2])
    finally:
        context.close()
