"""Which pages of a site a change of the catalog reaches, so a build after a sync writes
those and no others.

A complete build records what its pages were made from (:class:`SiteInputs`, in
``.cachedex-site-inputs``): each held spec's size and memberships, the mirrors, each
tag's totals and mirror rows, and how far the history and the verifications went. The
next build reads the same from the catalog and compares (:func:`changed_pages`):

- a spec whose size or memberships changed gets its page written again; so do the
  package pages of its name, in every tag (they count a package's specs per tag), and
  those of every package the history since names (their feeds gained an entry);
- when whether a spec has a binary, or its size, changed (or it came or left), so
  do the pages showing it as a dependency, a dependent, or in a closure (its size);
- a mirror verified since: every spec it holds;
- a tag any of those specs is or was in, or whose totals or mirrors changed, gets its
  tag, change, coverage and comparison pages written again; so does a tag whose
  history names a spec that came or left (its change page links to held specs only).

Anything it cannot tell apart this way (a mirror whose URL or layout changed, or found
to sign or not since, history forgotten, specs forgotten, a verification removed) gives
None: compare every page.
Every difference it finds is one the full build would write; the reverse is what the
tests check, a build after each kind of change against a full build, file for file.

A build after a change names the pages it may write in ``.cachedex-site-building``
before it writes any (:class:`Unfinished`). If it does not complete (a sync committed
meanwhile), the next build writes those pages again besides the ones its own changes
reach; a build killed before it named them, or one writing every page, leaves the
marker empty, and the next build compares every page.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import msgspec

from ..catalog import Catalog
from .changes import previous_tags
from .files import update_file

__all__ = [
    "BUILDING",
    "INPUTS",
    "PageSet",
    "Recorded",
    "SiteInputs",
    "Unfinished",
    "begin_build",
    "changed_pages",
    "load_inputs",
    "read_inputs",
    "relinked",
    "save_inputs",
    "tags_changed",
    "unfinished",
]

#: Where a complete build records :class:`SiteInputs`, beside ``.cachedex-site``.
INPUTS = ".cachedex-site-inputs"
#: Present while a build writes pages: one that did not complete (killed, or the
#: catalog changed meanwhile) may have written pages of a state that no record names.
#: Empty, or the pages it may write (:class:`Unfinished`).
BUILDING = ".cachedex-site-building"
#: The largest :data:`BUILDING` read: a build after a change reaching a quarter of a
#: million specs names them in ~9 MB.
_MOST_BUILDING = 64 << 20

#: Above this share of the held specs reached, a build after a sync compares every
#: page instead: reading the graph around that many costs more than reading it whole.
MOST = 0.25


class SiteInputs(msgspec.Struct, array_like=True):
    """What a build's pages were made from (see the module doc)."""

    specs: dict[str, tuple[str, int | None, str, int]]  #: hash -> (name, size, held, listed)
    mirrors: dict[int, tuple[str, str, str, int | None, bool, bool]]  #: :meth:`PageInputs.mirror_ids`
    tags: dict[str, bytes]  #: tag -> its totals and mirror rows, encoded
    last_sync: int
    history: int  #: changes recorded up to ``last_sync``
    verified: int  #: the newest verification's id
    scope: bytes = b""  #: the tags asked for and the comparisons: a build of other tags tells nothing
    #: :meth:`~.catalog.PageInputs.history_mark` of ``last_sync``: another catalog (made
    #: again) or this one restored from a copy may give the same ids to other syncs
    mark: str = ""


class PageSet(msgspec.Struct):
    """The pages a build after a change writes: those of these spec ids (the ones some
    tag of the build holds), of these package names (in each tag listing them), and
    the tag pages and change pages of these tags; and the spec pages it removes."""

    spec_ids: list[int]
    names: set[str]
    tags: set[str]
    change_tags: set[str]
    gone: set[str]  #: hashes no mirror holds any more


class Unfinished(msgspec.Struct, array_like=True):
    """The pages a build after a change may write (a :class:`PageSet`'s, its spec
    pages by hash), named before it writes any."""

    hashes: list[str]
    names: list[str]
    tags: list[str]
    change_tags: list[str]


def unfinished(catalog: Catalog, pages: PageSet) -> Unfinished:
    """What ``pages`` may write, as :func:`begin_build` names it."""
    hashes = catalog.page_inputs().hashes_of(pages.spec_ids)
    return Unfinished(sorted(hashes), sorted(pages.names), sorted(pages.tags), sorted(pages.change_tags))


def read_inputs(catalog: Catalog, scope: bytes) -> SiteInputs:
    """The catalog's :class:`SiteInputs`, read in the caller's snapshot; ``scope``
    names what the build writes (its tags and comparisons)."""
    reads = catalog.page_inputs()
    specs = {row.hash: (row.name, row.size, row.held, row.listed) for row in reads.spec_inputs()}
    last = reads.last_sync()
    verified = reads.last_verification()
    return SiteInputs(
        specs,
        reads.mirror_ids(),
        reads.tag_states(),
        last,
        reads.history_count(last),
        verified,
        scope,
        reads.history_mark(last),
    )


def tags_changed(catalog: Catalog, before: SiteInputs, left: Unfinished | None, tags: list[str]) -> list[str]:
    """Of ``tags``, those whose totals or mirrors changed since ``before`` (a sync
    changes its mirrors' read times), and those a build that did not complete named:
    a guess at the tags whose tag pages a build after a change writes, cheap enough to
    make before reading the rest."""
    states = catalog.page_inputs().tag_states(tags)
    named = set(left.tags) if left is not None else set()
    return [tag for tag in tags if tag in named or before.tags.get(tag) != states.get(tag)]


def begin_build(outdir: Path, pages: Unfinished | None = None) -> None:
    """Say that pages are being written: until :func:`save_inputs`, the record is not
    trusted, but for ``pages`` (all it may write), which the next build writes again."""
    update_file(str(outdir / BUILDING), b"" if pages is None else msgspec.msgpack.encode(pages))


def save_inputs(outdir: Path, inputs: SiteInputs) -> None:
    """Record what a complete build's pages were made from."""
    update_file(str(outdir / INPUTS), msgspec.msgpack.encode(inputs))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(outdir / BUILDING)


class Recorded(NamedTuple):
    """What :func:`load_inputs` finds: the last complete build's inputs, and the pages a
    build since that did not complete named (None if every build since completed)."""

    inputs: SiteInputs
    left: Unfinished | None


def load_inputs(outdir: Path) -> Recorded | None:
    """The inputs the last complete build recorded, or None (none, unreadable, or a
    build since did not complete without naming the pages it may have written)."""
    left = None
    if os.path.lexists(outdir / BUILDING):
        left = _named_pages(outdir)
        if left is None:
            return None
    try:
        with open(outdir / INPUTS, "rb") as recorded:
            return Recorded(msgspec.msgpack.decode(recorded.read(), type=SiteInputs), left)
    except (OSError, msgspec.ValidationError, msgspec.DecodeError):
        return None


def _named_pages(outdir: Path) -> Unfinished | None:
    """The pages the build that left :data:`BUILDING` named (see :func:`begin_build`),
    or None (none named, or unreadable)."""
    try:
        with open(outdir / BUILDING, "rb") as marker:
            data = marker.read(_MOST_BUILDING + 1)
        if not data or len(data) > _MOST_BUILDING:
            return None
        return msgspec.msgpack.decode(data, type=Unfinished)
    except (OSError, msgspec.ValidationError, msgspec.DecodeError):
        return None


def changed_pages(
    catalog: Catalog,
    before: SiteInputs,
    now: SiteInputs,
    compare: Mapping[str, list[str]],
    left: Unfinished | None = None,
) -> PageSet | None:
    """The pages a change from ``before`` to ``now`` reaches (see the module doc), and
    those a build that did not complete may have written (``left``), or None when it
    cannot tell, or when most pages are reached anyway. ``compare``: the comparison
    pages asked for besides each series' ({newer: [older]})."""
    reads = catalog.page_inputs()
    if before.scope != now.scope:
        return None  # the last build wrote other tags: their pages are not in its record
    if reads.history_mark(before.last_sync) != before.mark:
        return None  # another catalog, or this one restored from a copy: its history is not the one recorded
    if now.verified < before.verified or reads.history_count(before.last_sync) != before.history:
        return None  # a verification or history forgotten: what it showed is not named anywhere
    if any(now.mirrors.get(mirror_id, shown) != shown for mirror_id, shown in before.mirrors.items()):
        return None  # a mirror moved, changed layout or signing: every page holding it shows that
    old, new = before.specs, now.specs
    own = {h for h, _ in old.items() ^ new.items()}  # in C: 0.03 s for 250,000 specs, a loop 0.24 s
    came_or_left = (old.keys() ^ new.keys()) & own
    edge = {h for h in own if h in came_or_left or old[h][1::2] != new[h][1::2]}  # size, listed
    mirrors: set[int] = set()
    for h in own:
        for inputs in (old.get(h), new.get(h)):
            if inputs is not None:
                mirrors |= _held_ids(inputs[2])
    names = {(new.get(h) or old[h])[0] for h in own}  # (package pages show no verification)
    names |= reads.names_changed_after(before.last_sync)  # (their feeds)
    verified = reads.verified_since(before.verified)
    if verified:
        again = {m for m, (tag, stack, *_) in now.mirrors.items() if (tag, stack) in verified}
        mirrors |= again
        own |= {h for h, inputs in new.items() if again.intersection(_held_ids(inputs[2]))}
    # A page's "first seen" line reads the history: a spec a sync removed and another
    # put back is held as before, but its history is not.
    own |= reads.hashes_changed_after(before.last_sync) & new.keys()
    ids = reads.ids_of(own)
    if not edge <= ids.keys():
        return None  # specs forgotten by `cachedex gc`: the pages that showed them are not named
    reached = reads.reached_by([ids[h] for h in edge]) | set(ids.values())
    gone = old.keys() - new.keys()
    if left is not None:  # its pages, as the catalog is now; those of specs no mirror holds go
        reached |= set(reads.ids_of(left.hashes).values())
        names.update(left.names)
        gone |= set(left.hashes) - new.keys()
    if len(reached) > MOST * max(len(new), 1):
        return None
    tags = {now.mirrors.get(m, before.mirrors.get(m, ("",)))[0] for m in mirrors} - {""}
    tags |= {tag for tag in before.tags.keys() | now.tags.keys() if before.tags.get(tag) != now.tags.get(tag)}
    tags.update(left.tags if left is not None else ())
    # (and one naming a spec whose size changed: a change page sums its changes' sizes)
    change_tags = tags | reads.tags_mentioning(edge) | set(left.change_tags if left is not None else ())
    # A change page names the comparisons of its tag (with the previous of its series,
    # which a tag that came or left changes), and a comparison page shows two tags:
    # each written again with the newer when the older changed.
    for pairs in (previous_tags(before.tags), previous_tags(now.tags), compare):
        for newer, olders in pairs.items():
            if change_tags.intersection(olders):
                change_tags.add(newer)
    return PageSet(sorted(reached), names, tags, change_tags, gone)


def relinked(before: SiteInputs, now: SiteInputs) -> frozenset[str]:
    """The specs whose page came or went since ``before`` while no mirror lists them
    (held alone): a spec page links a dependency or dependent that has a page, which its
    JSON twin does not say (it says whether the spec is listed), so a page showing one
    of these is rendered though its twin is unchanged. (A listed spec that comes or goes
    changes ``listed`` in the twins of the pages showing it.)"""
    old, new = before.specs, now.specs
    return frozenset(h for h in old.keys() ^ new.keys() if not (new.get(h) or old[h])[3])


def _held_ids(held: str) -> set[int]:
    return {int(member[:-1]) for member in held.split()}
