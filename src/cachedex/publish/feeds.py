"""Atom feeds of the history: ``tags/<tag>/changes.atom`` (an entry per sync that changed
the tag, from its change page), ``changes.atom`` (the newest syncs of every tag) and
``tags/<tag>/packages/<name>/changes.atom`` (the syncs that added specs of one package
to the tag or removed some: what an admin follows for the packages they care about).

Every value is XML-escaped, characters XML 1.0 cannot hold are dropped, and those that
hide or reorder text are written as their escapes, as on the pages. Entry ids
are stable and never name two entries: the catalog's own id (random, made with it), the
tag and the sync's id (a catalog made again numbers its syncs from 1 again, and two
sites' feeds meet in one reader). Times are the syncs' (never the clock's: an unchanged
catalog gives the same bytes), and links are relative to the feed, so a feed works
wherever the site is served, like the pages.
"""

from __future__ import annotations

import datetime
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter
from xml.sax.saxutils import escape, quoteattr

from markupsafe import escape as html

from ..catalog import Catalog
from ..catalog.history import ChangedSpec, PackageChange
from ..values import ROOT_STACK, compilers_text, human_size, page_visible, size_change_text
from .changes import ChangesPage, StackChanges, SyncChanges
from .urls import has_page, segment

__all__ = ["ATOM", "FEED_ENTRIES", "FEED_FILE", "PACKAGE_FEED_ENTRIES", "all_tags_feed", "package_feed", "tag_feed"]

#: The media type of a feed.
ATOM = "application/atom+xml"
#: Every feed's file name, in the folder of the page it follows.
FEED_FILE = "changes.atom"
#: Entries of the all-tags feed (the newest syncs).
FEED_ENTRIES = 100
#: Entries of a package's feed (the newest syncs that changed it in its tag).
PACKAGE_FEED_ENTRIES = 50

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    # (An entry's HTML goes through here too, so its values need no escapes of their own.)
    return escape(page_visible(_NOT_XML.sub("", value)))


def _attr(value: str) -> str:
    return quoteattr(page_visible(_NOT_XML.sub("", value)))


def _time(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _urn(origin: str, *parts: str | int) -> str:
    """A feed's or an entry's id: ``urn:cachedex:<origin>:`` then ``parts`` (names go
    through :func:`segment` first, so none reads as two parts). ``origin``: the
    catalog's id (:meth:`Catalog.identity`)."""
    return ":".join(("urn:cachedex", origin, *map(str, parts)))


def _names(names: Sequence[str], limit: int = 20) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _stack_summary(c: StackChanges) -> str:
    """One stack's changes as the HTML of an entry (escaped once here, once more as XML)."""
    where = "Whole tag" if c.stack == ROOT_STACK else f"Stack {c.stack}"
    size = size_change_text(c.size_change, c.sized, c.added_count + c.removed_count)
    parts = [f"<h3>{html(where)}</h3><p>+{c.added_count} \u2212{c.removed_count} specs, {size}</p>"]
    if c.added_packages:
        parts.append(f"<p>Packages added: {html(_names(c.added_packages))}</p>")
    if c.removed_packages:
        parts.append(f"<p>Packages removed: {html(_names(c.removed_packages))}</p>")
    if c.version_changes:
        items = "".join(
            f"<li>{html(v.name)} {html(', '.join(v.old) or '(none)')} \u2192 {html(', '.join(v.new) or '(none)')}</li>"
            for v in c.version_changes[:30]
        )
        more = len(c.version_changes) - 30
        parts.append(f"<ul>{items}{f'<li>and {more} more</li>' if more > 0 else ''}</ul>")
    return "".join(parts)


def _title(tag: str, sync: SyncChanges) -> str:
    root = next((s for s in sync.stacks if s.stack == ROOT_STACK), None)
    added, removed = (root.added_count, root.removed_count) if root else (0, 0)
    return _counts_title(tag, added, removed, sync.finished_at)


def _counts_title(tag: str, added: int, removed: int, at: float) -> str:
    """An entry's title: the tag's counts, or, for a sync that changed only its stacks
    (the tag lists the same specs), that ("+0 −0 specs" said nothing happened)."""
    if not added and not removed:
        return f"{tag}: its stacks changed ({_time(at)[:10]})"
    return f"{tag}: +{added} \u2212{removed} specs ({_time(at)[:10]})"


def _feed(feed_id: str, title: str, alternate: str, updated: float, entries: Iterable[str]) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"<id>{_text(feed_id)}</id>\n<title>{_text(title)}</title>\n"
        f'<link rel="alternate" type="text/html" href={_attr(alternate)}/>\n'
        # Readers and validators ask a feed for its own address; relative, like the others.
        f'<link rel="self" type="{ATOM}" href="{FEED_FILE}"/>\n'
        f"<updated>{_time(updated)}</updated>\n<author><name>cachedex</name></author>\n"
        f"<generator>cachedex</generator>\n{''.join(entries)}</feed>\n"
    ).encode()


def _entry(entry_id: str, title: str, href: str, at: float, html: str) -> str:
    return (
        f"<entry>\n<id>{_text(entry_id)}</id>\n<title>{_text(title)}</title>\n"
        f'<link rel="alternate" type="text/html" href={_attr(href)}/>\n'
        f"<updated>{_time(at)}</updated>\n"
        f'<content type="html">{_text(html)}</content>\n</entry>\n'
    )


def tag_feed(page: ChangesPage, origin: str) -> bytes:
    """``tags/<tag>/changes.atom``: an entry per sync of the change page, linking to it
    (``origin``: the catalog's id)."""
    entries = [
        _entry(
            _urn(origin, "tag", segment(page.tag), "sync", sync.id),
            _title(page.tag, sync),
            f"changes/index.html#sync-{sync.id}",
            sync.finished_at,
            "".join(_stack_summary(c) for c in sync.stacks),
        )
        for sync in page.syncs
    ]
    # The latest entry's time, not the newest sync's: a clock set back may have dated
    # the newest sync before the one it follows (entries go by sync, newest first).
    updated = max((sync.finished_at for sync in page.syncs), default=page.first_synced_at or 0.0)
    return _feed(
        _urn(origin, "tag", segment(page.tag), "changes"),
        f"Changes in {page.tag}",
        "changes/index.html",
        updated,
        entries,
    )


def all_tags_feed(catalog: Catalog, *, limit: int = FEED_ENTRIES, linked: Callable[[str], bool] = has_page) -> bytes:
    """``changes.atom``: the newest syncs that changed any tag, each with its counts (of
    the whole tag) and the packages whose specs it added or removed. ``linked``: whether
    a tag has its pages (a site's build: :meth:`.urls.PageLinks.tag`); else the top."""
    entries, origin = [], catalog.identity()
    syncs = catalog.tag_syncs(None, limit=limit, changed_only=True)
    for sync in syncs:
        root = catalog.changed_packages(sync.id, ROOT_STACK)
        added = sorted({name for up, name in root if up})
        removed = sorted({name for up, name in root if not up})
        body = (
            f"<p>+{sync.added} \u2212{sync.removed} specs in {html(sync.tag)}</p>"
            if sync.added or sync.removed
            else f"<p>No spec added to {html(sync.tag)} or removed from it; its stacks changed.</p>"
        )
        if added:
            body += f"<p>Specs added of: {html(_names(added))}</p>"
        if removed:
            body += f"<p>Specs removed of: {html(_names(removed))}</p>"
        title = _counts_title(sync.tag, sync.added, sync.removed, sync.finished_at)
        href = f"tags/{segment(sync.tag)}/changes/index.html#sync-{sync.id}" if linked(sync.tag) else "index.html"
        entry_id = _urn(origin, "tag", segment(sync.tag), "sync", sync.id)
        entries.append(_entry(entry_id, title, href, sync.finished_at, body))
    updated = max(
        (sync.finished_at for sync in syncs or catalog.tag_syncs(None, limit=1)), default=0.0
    )  # (as in tag_feed)
    return _feed(_urn(origin, "changes"), "Changes in every tag", "index.html", updated, entries)


def _spec_item(spec: ChangedSpec, others: Mapping[str, tuple[str, ...]]) -> str:
    """One spec of a package's entry: version, compilers (its own, then the others that
    built it, as pages show them), architecture, hash and size."""
    shown = compilers_text(spec.compiler, others.get(spec.hash, ()))
    compiler = f" %{shown}" if spec.compiler != "none" else shown.removeprefix("none")  # (no "%none")
    size = f" ({human_size(spec.size)})" if spec.size is not None else ""
    text = f"{spec.name}@{spec.version}{compiler} {spec.platform}-{spec.os}-{spec.target} /{spec.hash[:7]}{size}"
    return f"<li>{html(text)}</li>"


def package_feed(
    tag: str,
    name: str,
    changes: Sequence[PackageChange],
    first_synced_at: float | None,
    origin: str,
    others: Mapping[str, tuple[str, ...]],
) -> bytes:
    """``tags/<tag>/packages/<name>/changes.atom``: an entry per sync that added specs of
    the package to the tag or removed some (``changes``: :meth:`Catalog.package_changes`),
    the newest :data:`PACKAGE_FEED_ENTRIES`, each linking to that sync on the tag's change
    page. Updated when the newest did, or when the tag was first synced (no entry yet).
    ``origin``: the catalog's id; ``others``: :meth:`Catalog.other_compilers`."""
    folder = ("tag", segment(tag), "package", segment(name))
    entries = []
    for sync_id, group in itertools.islice(itertools.groupby(changes, key=attrgetter("sync_id")), PACKAGE_FEED_ENTRIES):
        found = list(group)
        added = [c.spec for c in found if c.spec.change > 0]
        removed = [c.spec for c in found if c.spec.change < 0]
        at = found[0].finished_at
        body = "".join(
            f"<p>{label}</p><ul>{''.join(_spec_item(spec, others) for spec in specs)}</ul>"
            for label, specs in (("Added", added), ("Removed", removed))
            if specs
        )
        entries.append(
            _entry(
                _urn(origin, *folder, "sync", sync_id),
                f"{name} in {tag}: +{len(added)} \u2212{len(removed)} specs ({_time(at)[:10]})",
                f"../../changes/index.html#sync-{sync_id}",
                at,
                body,
            )
        )
    updated = max((change.finished_at for change in changes), default=first_synced_at or 0.0)  # (as in tag_feed)
    return _feed(_urn(origin, *folder, "changes"), f"{name} in {tag}", "index.html", updated, entries)
