"""What a tag page shows of its history: the "recent changes" block, the last few syncs
that changed the tag, taken from its change page.

A page is rendered by a template that only has the tag's name, so the catalog (and any
change page a build made just before) comes from the context :func:`history_from` sets:
the site's writer and the server render inside it, and outside it a tag page shows no
recent changes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

import msgspec

from ..catalog import Catalog
from ..values import ROOT_STACK
from .changes import ChangesPage, VersionChange, changes_page

__all__ = ["RECENT", "RecentSync", "history_from", "keep_for_tag_page", "recent_syncs"]

#: Syncs a tag page's "recent changes" block shows.
RECENT = 5


class RecentSync(msgspec.Struct, frozen=True):
    """A tag's recent sync as its page's "recent changes" block shows it."""

    id: int
    finished_at: float
    added: int  #: specs the whole tag gained
    removed: int
    packages_added: tuple[str, ...]
    packages_removed: tuple[str, ...]
    versions: tuple[VersionChange, ...]
    #: the other stacks it changed (a sync that changed only stacks is no "+0 −0")
    stacks: tuple[str, ...] = ()


class _Source:
    """What :func:`history_from` keeps: the catalog, and the change pages built meanwhile."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.pages: dict[str, ChangesPage] = {}  #: change pages built meanwhile (:func:`keep_for_tag_page`)


_HISTORY: ContextVar[_Source | None] = ContextVar("cachedex_history", default=None)


@contextlib.contextmanager
def history_from(catalog: Catalog) -> Iterator[None]:
    """Tag pages rendered inside read their "recent changes" from ``catalog`` (outside,
    they show none): the site's writer and the server render inside."""
    token = _HISTORY.set(_Source(catalog))
    try:
        yield
    finally:
        _HISTORY.reset(token)


def keep_for_tag_page(page: ChangesPage) -> None:
    """Have the tag page rendered next inside :func:`history_from` take its recent
    changes from ``page`` rather than read them again."""
    source = _HISTORY.get()
    if source is not None:
        source.pages[page.tag] = page


def recent_syncs(tag: str) -> tuple[RecentSync, ...]:
    """The last few syncs that changed ``tag``, for its page (none outside :func:`history_from`)."""
    source = _HISTORY.get()
    if source is None:
        return ()
    page = source.pages.pop(tag, None) or changes_page(source.catalog, tag, shown=RECENT, held=set())
    out = []
    for sync in page.syncs[:RECENT]:
        root = next((s for s in sync.stacks if s.stack == ROOT_STACK), None)
        stacks = tuple(s.stack for s in sync.stacks if s.stack != ROOT_STACK)
        if root is None:
            out.append(RecentSync(sync.id, sync.finished_at, 0, 0, (), (), (), stacks))
        else:
            out.append(
                RecentSync(
                    sync.id,
                    sync.finished_at,
                    root.added_count,
                    root.removed_count,
                    root.added_packages,
                    root.removed_packages,
                    root.version_changes,
                    stacks,
                )
            )
    return tuple(out)
