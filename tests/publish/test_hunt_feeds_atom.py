"""Atom feeds read with the stdlib's XML parser, as a strict reader would: the elements
RFC 4287 requires, RFC 3339 times in UTC whatever the machine's zone, and what an
entry's HTML says of a sync (each stack's heading, packages removed, versions that came
or left alone), escaped once for HTML and once for XML."""

from __future__ import annotations

import datetime
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.changes import changes_page
from cachedex.publish.feeds import FEED_ENTRIES, PACKAGE_FEED_ENTRIES, all_tags_feed, package_feed, tag_feed
from tests.helpers import record, replace_mirror, write_tag

ATOM = "{http://www.w3.org/2005/Atom}"
#: RFC 3339 as a feed writes it: seconds, and "Z" for UTC (a time without its zone is
#: no Atom date: a reader guesses the zone).
RFC3339_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _utc(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entries(data: bytes) -> list[ET.Element]:
    return ET.fromstring(data).findall(f"{ATOM}entry")


def _content(entry: ET.Element) -> str:
    """An entry's HTML, unescaped once (by the XML parser), as a reader gets it."""
    content = entry.find(f"{ATOM}content")
    assert content is not None and content.get("type") == "html"
    return content.text or ""


@pytest.fixture
def far_from_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local zone 5 to 4 hours behind UTC (a builder's machine need not be in UTC)."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def two_syncs(tmp_path: Path) -> Catalog:
    """A tag synced twice: zlib 1.0 and cmake, then zlib 2.0 beside 1.0 and cmake gone."""
    catalog = Catalog(tmp_path / "c.sqlite")
    old, cmake, new = (
        record("a" * 32, "zlib", version="1.0"),
        record("b" * 32, "cmake"),
        record("c" * 32, "zlib", version="2.0"),
    )
    write_tag(catalog, "t", [old, cmake])
    write_tag(catalog, "t", [new], members={old.hash: True, new.hash: True}, checksum="2")
    return catalog


def _three_feeds(catalog: Catalog) -> list[bytes]:
    """Tag t's feed, every tag's, and zlib's in t."""
    changes = catalog.package_changes("t")["zlib"]
    return [
        tag_feed(changes_page(catalog, "t"), catalog.identity()),
        all_tags_feed(catalog),
        package_feed("t", "zlib", changes, catalog.first_synced_at("t"), catalog.identity(), {}),
    ]


def test_every_time_is_utc_with_its_zone_whatever_the_local_zone(far_from_utc: None, two_syncs: Catalog) -> None:
    with two_syncs as catalog:
        (sync,) = [s for s in catalog.tag_syncs("t") if s.changes]
        feeds = _three_feeds(catalog)
    for data in feeds:
        root = ET.fromstring(data)
        times = [e.text or "" for e in root.iter(f"{ATOM}updated")]
        assert len(times) == 2 and all(RFC3339_UTC.fullmatch(t) for t in times), times
        assert set(times) == {_utc(sync.finished_at)}
        # an entry's title says the sync's UTC date, as its <updated> does
        (entry,) = _entries(data)
        assert (entry.findtext(f"{ATOM}title") or "").endswith(f"({_utc(sync.finished_at)[:10]})")


def test_each_feed_and_entry_has_what_atom_requires(two_syncs: Catalog) -> None:
    """RFC 4287: a feed has an id, a title, updated and an author (else each entry must
    have one); an entry an id, a title, updated and a link (it has no summary: content)."""
    with two_syncs as catalog:
        feeds = _three_feeds(catalog)
    for data in feeds:
        root = ET.fromstring(data)
        assert root.tag == f"{ATOM}feed"
        for element in (root, *_entries(data)):
            for required in ("id", "title", "updated"):
                assert len(element.findall(f"{ATOM}{required}")) == 1, required
                assert element.findtext(f"{ATOM}{required}"), required
        assert [a.findtext(f"{ATOM}name") for a in root.findall(f"{ATOM}author")] == ["cachedex"]
        for entry in _entries(data):
            assert [link.get("rel") for link in entry.findall(f"{ATOM}link")] == ["alternate"]
            _content(entry)


def test_an_entry_heads_each_stack_and_says_what_left(tmp_path: Path) -> None:
    """A sync that removed a package from the tag and changed a stack: the whole tag's
    part first under its heading, then the stack's under its name."""
    zlib, cmake = record("a" * 32, "zlib"), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([zlib, cmake], {})
            replace_mirror(writer, "root", {zlib.hash: True, cmake.hash: True})
            replace_mirror(writer, "s", {zlib.hash: True, cmake.hash: True}, url="/s", checksum="s1")
        with catalog.writing_tag("t") as writer:
            replace_mirror(writer, "root", {zlib.hash: True}, checksum="r2")
            replace_mirror(writer, "s", {zlib.hash: True}, url="/s", checksum="s2")
        (entry,) = _entries(tag_feed(changes_page(catalog, "t"), catalog.identity()))
    html = _content(entry)
    assert re.findall(r"<h3>([^<]*)</h3>", html) == ["Whole tag", "Stack s"]
    assert html.count("<p>Packages removed: cmake</p>") == 2  # the tag's and the stack's


def test_a_version_that_came_or_left_alone_is_shown_against_none(tmp_path: Path) -> None:
    """A package whose new version joined the one listed (nothing left), then whose old
    one left (nothing came): "(none)" on that side, not an empty arrow's end."""
    old, new = record("a" * 32, "zlib", version="1.0"), record("b" * 32, "zlib", version="2.0")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [old])
        write_tag(catalog, "t", [new], members={old.hash: True, new.hash: True}, checksum="2")
        write_tag(catalog, "t", [], members={new.hash: True}, checksum="3")
        left, came = _entries(tag_feed(changes_page(catalog, "t"), catalog.identity()))  # newest first
    assert "<li>zlib (none) \u2192 2.0</li>" in _content(came)
    assert "<li>zlib 1.0 \u2192 (none)</li>" in _content(left)


def test_a_hostile_name_whose_version_changed_stays_text(tmp_path: Path) -> None:
    """The HTML a reader gets (the XML unescaped once) holds the name escaped, not markup."""
    name = "<img src=x onerror=alert(1)>"
    old, new = record("a" * 32, name, version="1<b>"), record("b" * 32, name, version="2<b>")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [old])
        write_tag(catalog, "t", [new], checksum="2")
        (entry,) = _entries(tag_feed(changes_page(catalog, "t"), catalog.identity()))
    html = _content(entry)
    assert "<img" not in html and "<b>" not in html
    assert "<li>&lt;img src=x onerror=alert(1)&gt; 1&lt;b&gt; \u2192 2&lt;b&gt;</li>" in html


def test_a_tag_feed_with_no_entry_yet_is_dated_by_the_tag_s_first_sync(tmp_path: Path) -> None:
    """Not 1970: the tag's first sync records no change (nothing was before it)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, "zlib")])
        (first,) = catalog.tag_syncs("t")
        data = tag_feed(changes_page(catalog, "t"), catalog.identity())
    assert not _entries(data)
    assert ET.fromstring(data).findtext(f"{ATOM}updated") == _utc(first.finished_at)


def _versions(catalog: Catalog, tag: str, count: int) -> list[int]:
    """``count`` syncs of ``tag`` after its first, each replacing zlib's one spec by a
    new version: the ids of the syncs, oldest first."""
    write_tag(catalog, tag, [record(f"{0:032d}", "zlib", version="0")])
    for n in range(1, count + 1):
        write_tag(catalog, tag, [record(f"{n:032d}", "zlib", version=str(n))], checksum=str(n))
    return sorted(s.id for s in catalog.tag_syncs(tag) if s.changes)


def test_the_all_tags_feed_keeps_the_newest_syncs_newest_first(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        synced = _versions(catalog, "t", FEED_ENTRIES + 2)
        origin = catalog.identity()
        bounded = _entries(all_tags_feed(catalog))
        three = _entries(all_tags_feed(catalog, limit=3))
    expected = [f"urn:cachedex:{origin}:tag:t:sync:{i}" for i in reversed(synced)]
    assert [e.findtext(f"{ATOM}id") for e in bounded] == expected[:FEED_ENTRIES]
    assert [e.findtext(f"{ATOM}id") for e in three] == expected[:3]


def test_a_package_feed_keeps_its_newest_syncs_newest_first(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        synced = _versions(catalog, "t", PACKAGE_FEED_ENTRIES + 2)
        origin = catalog.identity()
        # (more than it shows: the sites' callers ask the catalog for as many, this is its own bound)
        changes = catalog.package_changes("t", syncs=PACKAGE_FEED_ENTRIES + 2)["zlib"]
        data = package_feed("t", "zlib", changes, catalog.first_synced_at("t"), origin, {})
    ids = [e.findtext(f"{ATOM}id") for e in _entries(data)]
    newest = list(reversed(synced))[:PACKAGE_FEED_ENTRIES]
    assert ids == [f"urn:cachedex:{origin}:tag:t:package:zlib:sync:{i}" for i in newest]
    # each entry: the version that came, then the one that left
    first = _content(_entries(data)[0])
    said = re.fullmatch(
        r"<p>Added</p><ul><li>zlib@(\d+) [^<]*</li></ul><p>Removed</p><ul><li>zlib@(\d+) [^<]*</li></ul>", first
    )
    assert said is not None, first
    came, left = said.groups()
    assert (int(came), int(left)) == (PACKAGE_FEED_ENTRIES + 2, PACKAGE_FEED_ENTRIES + 1)


def test_the_all_tags_feed_counts_a_sync_that_only_removed_and_escapes_the_tag(tmp_path: Path) -> None:
    """Not "no spec added or removed" for a sync that removed one; the tag and the
    packages named as text in the HTML a reader gets."""
    tag, kept, gone = "t<i>x", record("a" * 32, "zlib"), record("b" * 32, "<b>\tcmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, tag, [kept, gone])
        write_tag(catalog, tag, [], members={kept.hash: True}, checksum="2")
        (entry,) = _entries(all_tags_feed(catalog))
    html = _content(entry)
    assert (
        html == "<p>+0 \u22121 specs in t&lt;i&gt;x</p><p>Specs removed of: &lt;b&gt;\tcmake</p>"
    )  # (a tab is XML: kept)
    assert (entry.findtext(f"{ATOM}title") or "").startswith("t<i>x: +0 \u22121 specs (")


def test_a_package_entry_names_each_spec_as_its_pages_do(tmp_path: Path) -> None:
    """Version, its compilers (no "%none"), platform-os-target, short hash and size;
    a hostile version stays text. Updated when its newest entry was."""
    built = record("a" * 32, "zlib", version="1<b>", compiler="apple-clang@16.0.0", platform="darwin", os="sequoia")
    bare = record("b" * 32, "zlib", version="2", compiler="none", target="aarch64")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("c" * 32, "cmake")])
        write_tag(
            catalog,
            "t",
            [built, bare],
            members={"c" * 32: True, built.hash: True, bare.hash: True},
            sizes={built.hash: 1_500_000},
            checksum="2",
        )
        (sync,) = [s for s in catalog.tag_syncs("t") if s.changes]
        changes = catalog.package_changes("t")["zlib"]
        data = package_feed("t", "zlib", changes, 0.0, "o", {built.hash: ("gcc@14.2.0",), bare.hash: ("gcc@13.2.0",)})
    (entry,) = _entries(data)
    assert _content(entry) == (
        "<p>Added</p><ul>"
        "<li>zlib@1&lt;b&gt; %apple-clang@16.0.0 +gcc@14.2.0 darwin-sequoia-x86_64_v3 /aaaaaaa (1.5 MB)</li>"
        "<li>zlib@2 +gcc@13.2.0 linux-ubuntu24.04-aarch64 /bbbbbbb</li></ul>"
    )
    assert ET.fromstring(data).findtext(f"{ATOM}updated") == _utc(sync.finished_at)
