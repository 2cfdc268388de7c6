"""The history's pages in the static site: each tag's change page, its comparison with the
previous tag of its series (see :mod:`.changes`), its Atom feed (:mod:`.feeds`), and its
coverage page (:mod:`.coverage`)."""

from __future__ import annotations

from ..catalog import Catalog
from .badges import package_badge
from .changes import changes_page, compare_page, keep_for_tag_page, previous_tags
from .coverage import coverage_page
from .feeds import tag_feed
from .files import name_problem
from .sitefiles import SiteWriter

__all__ = ["write_changes"]


def write_changes(catalog: Catalog, writer: SiteWriter, tags: list[str]) -> None:
    """The change page of each of ``tags`` (names that can be folder names), its
    comparison pages, feed, coverage page and badge; written before the tag pages, which link
    to them."""
    if not tags:
        return
    held = catalog.held_hashes()
    previous = previous_tags(catalog.tag_names())
    for tag in tags:
        page = changes_page(catalog, tag, held=held)
        writer.page(page)
        keep_for_tag_page(page)  # its recent changes, without reading them again
        writer.file(f"tags/{tag}/changes.atom", tag_feed(page))
        coverage = coverage_page(catalog, tag)
        writer.page(coverage)
        writer.file(f"tags/{tag}/badge.svg", package_badge(coverage.stacks[0].total if coverage.stacks else 0))
        for old in previous.get(tag, ()):
            if name_problem(old) is None:
                writer.page(compare_page(catalog, old, tag))
    writer.flush()
