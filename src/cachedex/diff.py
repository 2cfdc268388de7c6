"""What changed: between two tags, or in one tag since a date (from the sync history).

Per stack (``root`` is the tag's own mirror), specs are *added* or *removed* by hash; a
package listed before and after with a spec added or removed has *changed* (a new
build, one more, one fewer), and a package whose specs all appeared or all left is an
added or removed *package*.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Mapping
from operator import attrgetter

import msgspec

from .catalog import Catalog
from .catalog.order import in_result_order
from .errors import BadQuery
from .values import stack_order

__all__ = [
    "DiffSpec",
    "Listing",
    "StackDiff",
    "TagDiff",
    "diff_since",
    "diff_since_read",
    "diff_tags",
    "diff_tags_read",
    "parse_since",
]


class DiffSpec(msgspec.Struct, frozen=True):
    """A spec added or removed."""

    hash: str
    name: str
    version: str


class StackDiff(msgspec.Struct, frozen=True):
    """What changed in one stack (``root``: the tag's own mirror)."""

    stack: str
    added_packages: tuple[str, ...]  #: packages none of whose specs were there before
    removed_packages: tuple[str, ...]  #: packages none of whose specs are there now
    #: packages listed before and after whose specs changed (added, removed, or both)
    changed_packages: tuple[str, ...]
    added: tuple[DiffSpec, ...]
    removed: tuple[DiffSpec, ...]


class TagDiff(msgspec.Struct, frozen=True):
    """What changed between two tags, or in one tag since a date."""

    old: str  #: a tag, or "<tag> at <date>"
    new: str
    stacks: tuple[StackDiff, ...]  #: only stacks with a change, root first

    @property
    def unchanged(self) -> bool:
        """True when no stack changed."""
        return not self.stacks


def parse_since(text: str) -> float:
    """``YYYY-MM-DD`` (or an ISO date and time; UTC unless it says) as epoch seconds.
    BadQuery for anything else."""
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError as exc:
        raise BadQuery(f"since must be a date like 2026-11-01, got {text!r}") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


Listing = Mapping[str, tuple[str, str]]  # hash -> (name, version)
_ORDER_FIELDS = attrgetter("name", "version", "hash")


def _stack_diff(stack: str, old: Listing, new: Listing) -> StackDiff | None:
    # (by name, newest version first in Spack's order, then hash: as searches list them)
    added = in_result_order((DiffSpec(h, *new[h]) for h in new.keys() - old.keys()), _ORDER_FIELDS)
    removed = in_result_order((DiffSpec(h, *old[h]) for h in old.keys() - new.keys()), _ORDER_FIELDS)
    if not added and not removed:
        return None
    old_names = {name for name, _ in old.values()}
    new_names = {name for name, _ in new.values()}
    # (specs both added and removed alone left out a package that lost some of its
    # specs, or gained some: "which packages lost binaries" named none of them)
    touched = {s.name for s in added} | {s.name for s in removed}
    return StackDiff(
        stack=stack,
        added_packages=tuple(sorted(new_names - old_names)),
        removed_packages=tuple(sorted(old_names - new_names)),
        changed_packages=tuple(sorted(touched & old_names & new_names)),
        added=tuple(added),
        removed=tuple(removed),
    )


def _compare(old_label: str, new_label: str, old: Mapping[str, Listing], new: Mapping[str, Listing]) -> TagDiff:
    stacks = sorted(old.keys() | new.keys(), key=stack_order)
    diffs = [_stack_diff(stack, old.get(stack, {}), new.get(stack, {})) for stack in stacks]
    return TagDiff(old_label, new_label, tuple(d for d in diffs if d is not None))


def diff_tags(catalog: Catalog, old: str, new: str) -> TagDiff:
    """What ``new`` lists that ``old`` does not, and the reverse, stack by stack."""
    return diff_tags_read(catalog, old, new)[0]


def diff_tags_read(catalog: Catalog, old: str, new: str) -> tuple[TagDiff, Mapping[str, Listing]]:
    """:func:`diff_tags`, and the listings of ``new`` read for it: those of the packages
    with a spec in one tag only, in the stacks where they differ (the rest is the same in
    both, so it is not read)."""
    for tag in (old, new):
        catalog.require_tag(tag)
    difference = catalog.listing_difference(old, new)
    names = {name for _stack, _hash, name, _version, _side in difference}
    stacks = {stack for stack, *_ in difference}
    listings = {tag: catalog.tag_members(tag, names, stacks) for tag in (old, new)}
    return _compare(old, new, listings[old], listings[new]), listings[new]


def diff_since(catalog: Catalog, tag: str, since: float, label: str) -> TagDiff:
    """What changed in ``tag`` after ``since`` (epoch seconds): see :func:`diff_since_read`."""
    return diff_since_read(catalog, tag, since, label)[0]


def diff_since_read(catalog: Catalog, tag: str, since: float, label: str) -> tuple[TagDiff, Mapping[str, Listing]]:
    """What changed in ``tag`` after ``since`` (epoch seconds), from the recorded changes,
    and the listings read for it: today's, per stack, of the packages a change touched.

    Today's listing minus what was added after ``since`` plus what was removed after it
    is the listing at ``since`` (see docs/catalog.md); the diff compares the two. Only
    the packages and stacks a change touched can differ, so only their listings are read.
    """
    catalog.require_tag(tag)
    first = catalog.first_synced_at(tag)
    if first is not None and since < first:
        # The first sync records no changes: nothing is known before it, so say which
        # state the comparison really starts from rather than label it with the date.
        first_day = datetime.datetime.fromtimestamp(first, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        label = f"its first sync ({first_day}; no history before it)"
    changes = catalog.changes_since(tag, since)
    now = catalog.tag_members(
        tag, {name for _stack, _hash, name, _version, _change in changes}, {stack for stack, *_ in changes}
    )
    then: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for stack, listing in now.items():
        then[stack].update(listing)
    for stack, dag_hash, name, version, change in reversed(changes):
        if change > 0:
            then[stack].pop(dag_hash, None)
        else:
            then[stack][dag_hash] = (name, version)
    return _compare(f"{tag} at {label}", tag, then, now), now
