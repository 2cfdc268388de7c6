"""Diffs between tags and over a tag's history: what they say when there is little to say."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.diff import diff_since, diff_tags
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
