"""The history's pages in the static site: each tag's change page, its comparison with the
previous tag of its series (see :mod:`.changes`), its Atom feed (:mod:`.feeds`), and its
coverage page (:mod:`.coverage`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..catalog import Catalog
from .badges import package_badge
from .changes import changes_page, compare_page, previous_tags
from .coverage import coverage_page
from .feeds import tag_feed
from .files import name_problem
from .recent_changes import keep_for_tag_page
from .sitefiles import SiteWriter

__all__ = ["compared_with", "pairs_by_new", "write_changes"]


def pairs_by_new(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """The config's ``compare:`` (old, new) pairs by new tag, each old once, in their
    order: what the site and the server both read a tag's comparison pages from."""
    by_new: dict[str, list[str]] = {}
    for old, new in pairs:
        olds = by_new.setdefault(new, [])
        if old not in olds:
            olds.append(old)
    return by_new


def compared_with(previous: Mapping[str, list[str]], compare: Mapping[str, list[str]] | None, tag: str) -> list[str]:
    """The tags ``tag``'s change page compares it with: the previous of its series
    (``previous``: :func:`.changes.previous_tags`), then those the config pairs it with."""
    olds = previous.get(tag, [])
    return olds + [old for old in (compare or {}).get(tag, []) if old not in olds]


def write_changes(
    catalog: Catalog,
    writer: SiteWriter,
    tags: list[str],
    compare: Mapping[str, list[str]] | None = None,
    *,
    held: set[str] | None = None,
) -> None:
    """The change page of each of ``tags`` (names that can be folder names), its
    comparison pages (with the previous tag of its series, and with the tags
    ``compare`` names for it: the config's pairs), feed, coverage page and badge;
    written before the tag pages, which link to them. ``held``: every hash some mirror
    holds, if the caller has read them (:meth:`Catalog.held_hashes`; else each page reads
    those of the changes it shows)."""
    if not tags:
        return
    previous, origin = previous_tags(catalog.tag_names()), catalog.identity()
    for tag in tags:
        olds = compared_with(previous, compare, tag)
        page = changes_page(catalog, tag, held=held, compare=olds)
        writer.page(page)
        keep_for_tag_page(page)  # its recent changes, without reading them again
        writer.file(f"tags/{tag}/changes.atom", tag_feed(page, origin))
        coverage = coverage_page(catalog, tag)
        writer.page(coverage)
        writer.file(f"tags/{tag}/badge.svg", package_badge(coverage.stacks[0].total if coverage.stacks else 0))
        for old in olds:
            if name_problem(old) is None:
                writer.page(compare_page(catalog, old, tag))
    writer.flush()
