"""Diffs: the edges the other diff tests leave open (labels, errors, order, what is read)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.diff import _compare, diff_since, diff_since_read, diff_tags_read, parse_since
from cachedex.errors import BadQuery, UnknownTag
from tests.helpers import record, replace_mirror, write_tag

#: 2033-05-18 03:33:20 UTC, a time whose date and hour differ in most zones
_FIRST = 2_000_000_000.0


def test_a_since_that_is_not_a_date_is_a_bad_query() -> None:
    """Anything but an ISO date is refused as the user's mistake (BadQuery, which says
    what was given), not a ValueError from deep inside."""
    with pytest.raises(BadQuery, match="got 'last week'"):
        parse_since("last week")


def test_the_first_sync_label_says_its_utc_time_wherever_the_machine_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the first sync, the label names that sync's date and time in UTC (not the
    machine's local time labelled UTC, nor the date alone)."""
    monkeypatch.setattr(time, "time", lambda: _FIRST)
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        with Catalog(tmp_path / "c.sqlite") as catalog:
            write_tag(catalog, "t", [record("a" * 32)])
            assert catalog.first_synced_at("t") == _FIRST
            result = diff_since(catalog, "t", _FIRST - 1, "2033-05-18")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert result.old == "t at its first sync (2033-05-18 03:33 UTC; no history before it)"


def test_a_since_at_the_first_sync_s_very_time_keeps_its_label(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the first sync's own time its state is known (the sync has finished): only a
    time strictly before it has no history and is relabelled."""
    monkeypatch.setattr(time, "time", lambda: _FIRST)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        result = diff_since(catalog, "t", _FIRST, "then")
    assert result.old == "t at then" and result.unchanged


def test_the_listings_read_for_a_diff_since_are_today_s(tmp_path: Path) -> None:
    """diff_since_read hands back today's listings (the change page counts the newer
    side from them), not the rebuilt past one."""
    a, b, c = record("a" * 32, "zlib"), record("b" * 32, "tmux"), record("c" * 32, "tmux", version="3.4")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a, b, c], checksum="1")
        since = time.time()
        time.sleep(0.01)
        with catalog.writing_tag("t") as writer:  # one tmux leaves
            replace_mirror(writer, "root", {a.hash: True, c.hash: True}, checksum="2")
        diff, listings = diff_since_read(catalog, "t", since, "then")
    assert [s.hash for s in diff.stacks[0].removed] == [b.hash]
    assert listings == {"root": {c.hash: ("tmux", "3.4")}}  # (tmux, the one package touched, today)


def test_the_listings_read_for_a_diff_of_two_tags_are_the_newer_tag_s(tmp_path: Path) -> None:
    """diff_tags_read hands back the listings of ``new`` (counted on the compare page),
    not those of ``old``, and of the packages that differ only (cmake, in both, is not read)."""
    old, new = record("a" * 32, "zlib", version="1.0"), record("b" * 32, "zlib", version="2.0")
    both = record("c" * 32, "cmake", version="3.30")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "old", [old, both])
        write_tag(catalog, "new", [new], members={new.hash: True, both.hash: True})
        _diff, listings = diff_tags_read(catalog, "old", "new")
    assert listings == {"root": {new.hash: ("zlib", "2.0")}}


def test_a_diff_since_of_a_tag_the_catalog_lacks_says_so(tmp_path: Path) -> None:
    """An unknown tag is UnknownTag, as for diff_tags: not an empty diff ("unchanged")."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        with pytest.raises(UnknownTag, match="nope"):
            diff_since(catalog, "nope", 0.0, "1970-01-01")


def test_removed_packages_are_sorted_by_name() -> None:
    """Removed packages, like added and changed ones, are in name order, whatever order
    the set of names iterates in."""
    names = [f"p{n:02d}" for n in range(40)]
    old = {f"h{n}": (name, "1.0") for n, name in enumerate(names)}
    (root,) = _compare("old", "new", {"root": old}, {"root": {}}).stacks
    assert root.removed_packages == tuple(names)
    (back,) = _compare("old", "new", {"root": {}}, {"root": old}).stacks
    assert back.added_packages == tuple(names)


def test_the_root_stack_comes_first_then_stacks_by_name() -> None:
    """``root`` (the tag's own mirror) leads, as on every page, even where a stack's name
    sorts before it."""
    old = {stack: {} for stack in ("zeta", "root", "alpha")}
    new = {stack: {f"{stack}1": ("zlib", "1.0")} for stack in ("zeta", "root", "alpha")}
    diff = _compare("old", "new", old, new)
    assert [s.stack for s in diff.stacks] == ["root", "alpha", "zeta"]
