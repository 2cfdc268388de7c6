"""When and where each spec first appeared, for every spec page of a site at once.

:meth:`Catalog.first_seen` answers for one spec, scanning the changes of each mirror
holding it: fine for one page, too slow for 250,000. :class:`FirstSeenIndex` reads the
history once (every change that added a spec, or one of the specs whose pages a build
after a change writes, with its sync's time) and answers from a spec page's holders,
with the same result (a test compares them on every spec of the demo).
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Sequence
from functools import lru_cache

from markupsafe import Markup, escape

from ..catalog import Catalog
from ..catalog.history import FirstSeen, first_seen_order
from ..values import ROOT_STACK
from .spec_pages import Holder

__all__ = ["SHOWN", "FirstSeenIndex", "first_seen_html"]

#: Mirrors a spec page names in its "first seen" line; it counts the others.
SHOWN = 4


class FirstSeenIndex:
    """The history read once: when each spec was added to each mirror, each tag's first
    sync, and which mirrors have an index of their own (a views-only root has not)."""

    def __init__(self, catalog: Catalog, only: Collection[int] | None = None) -> None:
        """The whole history, or (``only``) what it says of those spec ids."""
        added: dict[tuple[str, str, str], float] = {}  # (hash, tag, stack) -> first time added
        for dag_hash, tag, stack, at in catalog.additions(only):
            key = (dag_hash, tag, stack)
            if at < added.get(key, at + 1):
                added[key] = at
        self.added = added
        self.first = catalog.first_syncs()  # tag -> its first sync's end
        self.own = {(m.tag, m.stack) for m in catalog.mirrors() if m.own_index}

    def of(self, dag_hash: str, holders: Sequence[Holder]) -> tuple[FirstSeen, ...]:
        """As :meth:`Catalog.first_seen` of ``dag_hash``, from its page's ``holders``."""
        found = []
        for holder in holders:
            if not holder.listed or (holder.tag, holder.stack) not in self.own:
                continue
            added = self.added.get((dag_hash, holder.tag, holder.stack))
            at = added if added is not None else self.first.get(holder.tag, 0.0)
            found.append(FirstSeen(holder.tag, holder.stack, at, added is None))
        return tuple(sorted(found, key=first_seen_order))


@lru_cache(maxsize=4096)
def first_seen_html(seen: tuple[FirstSeen, ...]) -> Markup:
    """A spec page's "first seen" entry (``<dt>``, ``<dd>``), or nothing. Most spec
    pages of a site say the same few things: made once each."""
    if not seen:
        return Markup("")
    parts = []
    for found in seen[:SHOWN]:
        when = datetime.datetime.fromtimestamp(found.at, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        where = escape(found.tag) + (Markup(" / ") + escape(found.stack) if found.stack != ROOT_STACK else "")
        parts.append(f"{when} in {where}" + (" (its first sync)" if found.first_sync else ""))
    more = f"; and {len(seen) - SHOWN} more" if len(seen) > SHOWN else ""
    return Markup(f'<dt>First seen</dt><dd id="first-seen">{"; ".join(parts)}{more}</dd>\n')
