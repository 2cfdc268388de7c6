"""Diffs between tags and over a tag's history: what they say when there is little to say."""

from __future__ import annotations

import datetime
import random
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.diff import Listing, _compare, diff_since, diff_tags, parse_since
from cachedex.errors import UnknownTag
from tests.helpers import record, write_tag


def test_msg7_since_a_date_before_the_first_sync_says_where_history_starts(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        result = diff_since(catalog, "t", 0.0, "1970-01-01")
        later = diff_since(catalog, "t", 4e9, "2096-10-02")
    assert result.unchanged
    assert result.old.startswith("t at its first sync (") and result.old.endswith("; no history before it)")
    assert later.old == "t at 2096-10-02"


def test_msg7_a_tag_listing_no_spec_is_a_tag(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "empty", [], checksum="x")
        write_tag(catalog, "t", [record("a" * 32)])
        result = diff_tags(catalog, "empty", "t")
    (root,) = result.stacks
    assert [s.hash for s in root.added] == ["a" * 32] and not root.removed


def test_a_diff_since_reads_only_touched_packages_and_equals_the_whole_listings_diff(tmp_path: Path) -> None:
    """diff_since reads today's listing of the packages a change touched only: checked
    against the diff of the whole listings, as they were before each sync and today."""
    rng = random.Random(7)
    records = [record(f"{n:032d}", name=f"p{n % 6}", version=f"1.{n % 3}") for n in range(36)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", records, members={r.hash: rng.random() < 0.5 for r in records})
        # a mirror's first sync records no changes: both exist before the history starts
        write_tag(catalog, "t", [], members={r.hash: rng.random() < 0.5 for r in records}, stack="s")
        before: list[tuple[float, Mapping[str, Listing]]] = []
        for round_ in range(8):
            time.sleep(0.002)
            stack = ("root", "s")[round_ % 2]
            chosen = rng.sample(records, 20)
            members = {r.hash: rng.random() < 0.6 for r in chosen}
            (last,) = catalog.tag_syncs("t", limit=1)
            whole = catalog.tag_members("t")
            time.sleep(0.002)
            before.append(((last.finished_at + time.time()) / 2, whole))
            write_tag(catalog, "t", [], members=members, stack=stack, checksum=f"c{round_}")
        today = catalog.tag_members("t")
        for since, then in before:
            assert diff_since(catalog, "t", since, "then") == _compare("t at then", "t", then, today)
        assert any(not diff_since(catalog, "t", since, "then").unchanged for since, _ in before)


def test_a_diff_of_two_tags_equals_the_whole_listings_diff(tmp_path: Path) -> None:
    """diff_tags finds the specs one tag lists and the other does not in SQL, then reads
    the listings of the packages they touch only: checked against the diff of the whole
    listings, with stacks of one tag only and unlisted members."""
    rng = random.Random(11)
    records = [record(f"{n:032d}", name=f"p{n % 7}", version=f"2.{n % 4}") for n in range(60)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "seed", records, members=dict.fromkeys((r.hash for r in records), False))
        for tag, stacks in (("a", ("root", "s", "only-a")), ("b", ("root", "s", "only-b")), ("c", ("root",))):
            for stack in stacks:
                members = {r.hash: rng.random() < 0.7 for r in rng.sample(records, 35)}
                write_tag(catalog, tag, [], members=members, stack=stack, checksum=stack)
        for old, new in (("a", "b"), ("b", "a"), ("a", "c"), ("c", "b"), ("a", "a")):
            listings = {tag: catalog.tag_members(tag) for tag in (old, new)}
            whole = _compare(old, new, listings[old], listings[new])
            assert diff_tags(catalog, old, new) == whole
            expected = {
                (stack, dag_hash, *listings[one].get(stack, {})[dag_hash], side)
                for one, other, side in ((new, old, 1), (old, new, -1))
                for stack in listings[one]
                for dag_hash in listings[one][stack].keys() - listings[other].get(stack, {}).keys()
            }
            assert sorted(catalog.listing_difference(old, new)) == sorted(expected)
            assert (old == new) == whole.unchanged


def test_a_package_that_lost_or_gained_some_of_its_specs_is_a_changed_package() -> None:
    """Only specs both added and removed made a package "changed": one that lost some
    of its binaries (not all), or gained some, was named nowhere in the table."""
    old = {"a1": ("lost", "1.0"), "a2": ("lost", "1.1"), "b1": ("gained", "1.0"), "c1": ("rebuilt", "1.0")}
    old |= {"d1": ("same", "1.0"), "e1": ("gone", "1.0")}
    new = {"a1": ("lost", "1.0"), "b1": ("gained", "1.0"), "b2": ("gained", "2.0"), "c2": ("rebuilt", "1.0")}
    new |= {"d1": ("same", "1.0"), "f1": ("new", "1.0")}
    (root,) = _compare("old", "new", {"root": old}, {"root": new}).stacks
    assert root.changed_packages == ("gained", "lost", "rebuilt")
    assert (root.added_packages, root.removed_packages) == (("new",), ("gone",))


def test_specs_added_and_removed_are_by_name_then_newest_version_first() -> None:
    """By name, newest version first in Spack's order (1.10 before 1.9), then hash, as
    searches list them; not in hash order, nor 1.10 before 1.9 as text sorts them."""
    old = {"z1": ("zlib", "1.9"), "a2": ("zlib", "1.10"), "m1": ("cmake", "3.0"), "b1": ("bzip2", "1.0")}
    old |= {"q9": ("zlib", "1.10")}
    new = {"y1": ("zlib", "1.9"), "c2": ("zlib", "1.10"), "n1": ("cmake", "3.0"), "d1": ("bzip2", "1.0")}
    new |= {"p9": ("zlib", "1.10")}
    (root,) = _compare("old", "new", {"root": old}, {"root": new}).stacks
    assert [(s.name, s.version, s.hash) for s in root.removed] == [
        ("bzip2", "1.0", "b1"),
        ("cmake", "3.0", "m1"),
        ("zlib", "1.10", "a2"),
        ("zlib", "1.10", "q9"),
        ("zlib", "1.9", "z1"),
    ]
    assert [s.hash for s in root.added] == ["d1", "n1", "c2", "p9", "y1"]


def test_a_diff_with_a_tag_the_catalog_lacks_says_so(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "a", [record("a" * 32)])
        for old, new in (("a", "nope"), ("nope", "a")):
            with pytest.raises(UnknownTag, match="nope"):
                diff_tags(catalog, old, new)


def test_a_date_without_a_zone_is_utc_wherever_the_machine_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert parse_since("2026-11-01") == datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC).timestamp()
        assert (
            parse_since("2026-11-01T12:00+01:00") == datetime.datetime(2026, 11, 1, 11, tzinfo=datetime.UTC).timestamp()
        )
    finally:
        monkeypatch.undo()
        time.tzset()
