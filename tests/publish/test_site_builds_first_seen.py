"""A spec page's "first seen" line, as a site build makes it for every page at once
(:class:`.first_seen.FirstSeenIndex`), says what :meth:`Catalog.first_seen` says for
one spec: only the mirrors listing it, and "and N more" only when there are more."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.catalog.history import FirstSeen
from cachedex.publish.first_seen import SHOWN, FirstSeenIndex, first_seen_html
from cachedex.publish.pages import spec_page
from tests.helpers import record, replace_mirror


def test_a_mirror_holding_a_spec_unlisted_is_not_where_it_was_first_seen(tmp_path: Path) -> None:
    """A stack that holds a spec without its binary (a dependency) never offered it."""
    a = record("a" * 32, "zlib")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([a], {})
            replace_mirror(writer, "root", {a.hash: True})
            replace_mirror(writer, "e4s", {a.hash: False})
        holders = spec_page(catalog, a.hash).holders
        assert {holder.stack for holder in holders} == {"root", "e4s"}
        seen = FirstSeenIndex(catalog).of(a.hash, holders)
        assert seen == tuple(catalog.first_seen(a.hash))
        assert [found.stack for found in seen] == ["root"]


def test_first_seen_in_exactly_as_many_mirrors_as_shown_says_no_more() -> None:
    seen = tuple(FirstSeen("t", f"s{n}", 1_700_000_000.0 + n, False) for n in range(SHOWN))
    assert "more" not in first_seen_html(seen)
    assert "and 1 more" in first_seen_html((*seen, FirstSeen("t", "z", 1_700_000_100.0, False)))


def test_first_seen_names_a_stack_but_not_the_whole_tag_s_root() -> None:
    root, stack = FirstSeen("t", "root", 1_700_000_000.0, False), FirstSeen("t", "e4s", 1_700_000_000.0, False)
    assert "in t</dd>" in first_seen_html((root,))
    assert "in t / e4s</dd>" in first_seen_html((stack,))
