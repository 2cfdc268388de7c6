"""Atom feeds: parsed by feedparser with no error, an entry per sync that changed a tag
(brute force: the syncs table), stable ids, the syncs' times, links that lead to the
change pages, the pages' alternate links, escaping."""

from __future__ import annotations

import calendar
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin

import feedparser
import pytest

from cachedex.catalog import Catalog
from cachedex.publish.changes import changes_page
from cachedex.publish.feeds import ATOM, all_tags_feed, package_feed, tag_feed
from cachedex.publish.serve import create_app
from cachedex.publish.site import write_site
from tests.helpers import Demo, evil_catalog, history, record, replace_mirror, write_tag
from tests.publish.serve import get


def _parse(data: bytes) -> Any:
    feed = feedparser.parse(data)
    assert feed.bozo == 0, feed.get("bozo_exception")
    assert feed.version == "atom10"
    return feed


def _link_target(site: Path, feed_path: str, href: str) -> tuple[Path, str]:
    url = urljoin("http://x/" + feed_path, href)
    path, _, anchor = url.removeprefix("http://x/").partition("#")
    return site / unquote(path), anchor


def test_each_tag_feed_has_an_entry_per_sync_that_changed_it(demo_run: Demo) -> None:
    site = demo_run.site
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            feed = _parse((site / "tags" / tag / "changes.atom").read_bytes())
            changed = [(at, added, removed) for at, added, removed in history(catalog, tag)]
            recorded = [s for s in catalog.tag_syncs(tag) if s.changes]
            assert len(feed.entries) == len(recorded) == (1 if tag == "develop" else 0), tag
            assert len(changed) >= len(recorded)
            for entry, sync in zip(feed.entries, recorded, strict=True):
                assert entry.id == f"urn:cachedex:{catalog.identity()}:tag:{tag}:sync:{sync.id}"
                assert calendar.timegm(entry.updated_parsed) == int(sync.finished_at)
                assert entry.title.startswith(f"{tag}: +{sync.added} \u2212{sync.removed} specs")
                target, anchor = _link_target(site, f"tags/{tag}/changes.atom", entry.link)
                assert target.is_file() and f'id="{anchor}"' in target.read_text(), entry.link
                assert "git 2.47.1 \u2192 2.47.2" in entry.content[0].value
            assert feed.feed.title == f"Changes in {tag}"
        # the feed is built from the change page: the same bytes as from the builder
        assert (site / "tags/develop/changes.atom").read_bytes() == tag_feed(
            changes_page(catalog, "develop"), catalog.identity()
        )
        everything = _parse((site / "changes.atom").read_bytes())
        assert (site / "changes.atom").read_bytes() == all_tags_feed(catalog)
        assert [e.id for e in everything.entries] == [
            f"urn:cachedex:{catalog.identity()}:tag:{s.tag}:sync:{s.id}" for s in catalog.tag_syncs(None) if s.changes
        ]
        for entry in everything.entries:
            target, anchor = _link_target(site, "changes.atom", entry.link)
            assert target.is_file() and f'id="{anchor}"' in target.read_text()
        # Each entry names the packages whose specs the sync added to or removed from a
        # root mirror, as its change page lists them.
        for entry, sync in zip(everything.entries, [s for s in catalog.tag_syncs(None) if s.changes], strict=True):
            root = [c for c in catalog.sync_changes(sync.id) if c.stack == "root"]
            for sign, said in ((1, "Specs added of: "), (-1, "Specs removed of: ")):
                names = sorted({c.name for c in root if c.change == sign})
                shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
                assert names and f"{said}{shown}</p>" in entry.content[0].value


def test_pages_name_their_feed(demo_run: Demo) -> None:
    site = demo_run.site
    alternate = re.compile(r'<link rel="alternate" type="application/atom\+xml" title="[^"]*" href="([^"]+)">')
    for page, feed in (
        ("index.html", "changes.atom"),
        ("tags/develop/index.html", "tags/develop/changes.atom"),
        ("tags/develop/changes/index.html", "tags/develop/changes.atom"),
        ("tags/develop/packages/zlib/index.html", "tags/develop/packages/zlib/changes.atom"),
    ):
        (href,) = alternate.findall((site / page).read_text())
        assert (site / page).parent.joinpath(href).resolve() == (site / feed).resolve(), page


def test_each_feed_names_itself(demo_run: Demo) -> None:
    """Its ``rel="self"`` link, resolved against the feed's own address, is that feed (a
    reader keeps it as the feed's address; validators ask for it)."""
    site = demo_run.site
    feeds = sorted(site.rglob("*.atom"))
    assert len(feeds) > 10
    for path in feeds:
        feed_path = path.relative_to(site).as_posix()
        selves = [link["href"] for link in _parse(path.read_bytes()).feed.links if link["rel"] == "self"]
        assert [_link_target(site, feed_path, href) for href in selves] == [(path, "")], feed_path


def test_each_package_feed_has_an_entry_per_sync_that_changed_it_in_its_tag(demo_run: Demo) -> None:
    """Brute force: each sync's recorded changes of the tag's root, by package."""
    site = demo_run.site
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            syncs = {s.id: s for s in catalog.tag_syncs(tag)}
            root = {i: [c for c in catalog.sync_changes(i) if c.stack == "root"] for i in sorted(syncs, reverse=True)}
            changed = 0
            for folder in sorted((site / "tags" / tag / "packages").iterdir()):
                name, path = folder.name, f"tags/{tag}/packages/{folder.name}/changes.atom"
                feed = _parse((site / path).read_bytes())
                expected = [(i, found) for i, specs in root.items() if (found := [c for c in specs if c.name == name])]
                assert [e.id for e in feed.entries] == [
                    f"urn:cachedex:{catalog.identity()}:tag:{tag}:package:{name}:sync:{i}" for i, _ in expected
                ]
                for entry, (i, found) in zip(feed.entries, expected, strict=True):
                    added, removed = sum(c.change > 0 for c in found), sum(c.change < 0 for c in found)
                    assert entry.title.startswith(f"{name} in {tag}: +{added} \u2212{removed} specs")
                    assert calendar.timegm(entry.updated_parsed) == int(syncs[i].finished_at)
                    assert all(f"@{c.version} " in entry.content[0].value for c in found)
                    assert all(f"/{c.hash[:7]}" in entry.content[0].value for c in found)
                    target, anchor = _link_target(site, path, entry.link)
                    assert target.is_file() and f'id="{anchor}"' in target.read_text(), entry.link
                if not expected:  # (updated: when the tag was first synced)
                    assert calendar.timegm(feed.feed.updated_parsed) == int(catalog.first_synced_at(tag) or 0)
                assert feed.feed.title == f"{name} in {tag}"
                changed += bool(expected)
            # develop's second sync rebuilt some packages; the other tags were synced once
            assert (changed > 0) == (tag == "develop"), tag


def test_the_server_serves_the_same_feeds(demo_run: Demo) -> None:
    app = create_app(demo_run.catalog)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        (changed, *_) = sorted(catalog.package_changes("develop"))
    paths = ["changes.atom", "tags/develop/changes.atom", "tags/v1.0.2/changes.atom"]
    paths += [f"tags/develop/packages/{changed}/changes.atom", "tags/v1.0.2/packages/zlib/changes.atom"]
    for path in paths:
        answer = get(app, "/" + path)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(ATOM)
        assert answer.content == (demo_run.site / path).read_bytes(), path
    assert get(app, "/tags/nope/changes.atom").status_code == 404
    assert get(app, "/tags/develop/packages/nope/changes.atom").status_code == 404
    assert get(app, "/tags/nope/packages/zlib/changes.atom").status_code == 404


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    catalog = evil_catalog(tmp_path / "evil.sqlite")
    common: dict[str, Any] = {"os": "rhel8", "target": "x86_64", "compiler": "gcc", "node": b"{}"}
    nasty = "<img src=x>&amp;]]>\x01\x0b\u202egnp.exe"
    write_tag(catalog, "t<i>x", [record("d" * 32, nasty, version="2<b>", variants=(), **common)], checksum="z")
    catalog.close()
    return tmp_path / "evil.sqlite"


def test_hostile_names_in_feeds(evil: Path, tmp_path: Path) -> None:
    with Catalog(evil, readonly=True) as catalog:
        for data in (tag_feed(changes_page(catalog, "t<i>x"), catalog.identity()), all_tags_feed(catalog)):
            feed = _parse(data)
            assert b"<img" not in data and b"<i>" not in data and b"\x01" not in data
            # A right-to-left override would show the rest of its line backwards: its escape instead.
            assert "\u202e".encode() not in data and b"\\u202egnp.exe" in data
            (entry,) = feed.entries
            assert entry.title.startswith("t<i>x: +1")  # the text, unescaped once by the parser
            assert "&lt;img src=x&gt;&amp;amp;]]&gt;" in entry.content[0].value
        # A package's feed: its title, and its entry's spec
        name = next(n for n in catalog.package_names() if n.startswith("<img"))
        changes = catalog.package_changes("t<i>x", [name])[name]
        data = package_feed(
            "t<i>x", name, changes, catalog.first_synced_at("t<i>x"), catalog.identity(), catalog.other_compilers()
        )
        feed = _parse(data)
        assert feed.feed.title.startswith("<img src=x>&amp;]]>") and feed.feed.title.endswith(" in t<i>x")
        assert "&lt;img src=x&gt;&amp;amp;]]&gt;" in feed.entries[0].content[0].value
        assert b"<img" not in data and "\u202e".encode() not in data and b"\\u202egnp.exe" in data
        report = write_site(catalog, tmp_path / "site")
    _parse((tmp_path / "site/changes.atom").read_bytes())
    assert report.complete


def test_every_feed_entry_links_to_an_anchor_its_change_page_has(tmp_path: Path) -> None:
    """A change page details the newest SYNCS_SHOWN syncs; a package's feed names the
    newest that changed the package, and the site-wide feed the newest of every tag:
    older than those, their #sync-N named no anchor (a daily cron's tag in two months)."""
    from cachedex.publish.changes import SYNCS_SHOWN

    old = record("a" * 32, "zlib")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [old, record("b" * 32, "cmake")])
        with catalog.writing_tag("t") as writer:  # zlib changes once, early
            writer.add_specs([record("c" * 32, "zlib", version="1.3.2")], {})
            replace_mirror(writer, "root", {"b" * 32: True, "c" * 32: True}, checksum="z")
        write_tag(catalog, "t", [], members={"b" * 32: True}, stack="s", checksum="s")  # a stack's alone
        for n in range(SYNCS_SHOWN + 3):  # then cmake, again and again
            builds = [record(f"{n:031d}x", "cmake", version=f"3.{n}")]
            with catalog.writing_tag("t") as writer:
                writer.add_specs(builds, {})
                replace_mirror(writer, "root", {"c" * 32: True, builds[0].hash: True}, checksum=str(n))
        write_site(catalog, tmp_path / "site")
    tag = tmp_path / "site/tags/t"
    anchors = set(re.findall(r'id="(sync-\d+)"', (tag / "changes/index.html").read_text()))
    # (an older sync that changed a stack alone was listed "+0 −0 specs")
    earlier = (tag / "changes/index.html").read_text().split('id="earlier"')[1]
    assert "no spec added or removed; its stacks changed" in earlier and "+0 &minus;0" not in earlier
    for feed in (tag / "packages/zlib/changes.atom", tmp_path / "site/changes.atom", tag / "changes.atom"):
        named = set(re.findall(r"changes/index\.html#(sync-\d+)", feed.read_text()))
        assert named and named <= anchors, (feed, named - anchors)


def test_a_catalog_made_again_gives_its_entries_new_ids(tmp_path: Path) -> None:
    """Entry ids were the tag and the sync's id alone: a catalog made again numbers its
    syncs from 1 again, and a reader that had seen the old catalog's first sync skipped
    the new one's as read (two sites' feeds in one reader met the same way)."""
    ids = []
    for made in ("first", "again"):
        path = tmp_path / made / "c.sqlite"
        path.parent.mkdir()
        with Catalog(path) as catalog:
            write_tag(catalog, "develop", [record("a" * 32, "zlib")])
            with catalog.writing_tag("develop") as writer:  # a second sync, which changes the tag
                writer.add_specs([record("b" * 32, "zlib", version="1.3.2")], {})
                replace_mirror(writer, "root", {"a" * 32: True, "b" * 32: True}, checksum="z")
            write_site(catalog, tmp_path / made / "site")
        feeds = ["changes.atom", "tags/develop/changes.atom", "tags/develop/packages/zlib/changes.atom"]
        parsed = [_parse((tmp_path / made / "site" / feed).read_bytes()) for feed in feeds]
        ids.append({f.feed.id for f in parsed} | {e.id for f in parsed for e in f.entries})
        assert len(ids[-1]) == 5, ids[-1]  # three feeds' ids; the sync's entry, in two of them, and the package's
    assert not ids[0] & ids[1]


def test_an_entry_says_how_many_version_changes_it_leaves_out(tmp_path: Path) -> None:
    """An entry lists 30 version changes: the others were left out without a word."""
    old = [record(f"{n:031d}a", f"p{n:02d}", version="1.0") for n in range(35)]
    new = [record(f"{n:031d}b", f"p{n:02d}", version="2.0") for n in range(35)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", old)
        write_tag(catalog, "t", new, checksum="2")
        (entry,) = _parse(tag_feed(changes_page(catalog, "t"), catalog.identity())).entries
    content = entry.content[0].value
    assert content.count("1.0 \u2192 2.0</li>") == 30 and "p29 1.0" in content and "p30 1.0" not in content
    assert "<li>and 5 more</li>" in content


def test_an_entry_at_its_bounds_says_no_more_than_there_is(tmp_path: Path) -> None:
    """30 version changes and 20 packages added are listed whole ("and 0 more" was one
    comparison away); a sync that only removed specs is counted, not "its stacks changed"."""
    old = [record(f"{n:031d}a", f"p{n:02d}", version="1.0") for n in range(30)]
    new = [record(f"{n:031d}b", f"p{n:02d}", version="2.0") for n in range(30)]
    added = [record(f"{n:031d}c", f"q{n:02d}") for n in range(20)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", old)
        write_tag(catalog, "t", new + added, checksum="2")
        write_tag(catalog, "t", [], members={r.hash: True for r in new}, checksum="3")  # the q's leave
        feed = _parse(tag_feed(changes_page(catalog, "t"), catalog.identity()))
    removed, changed = feed.entries
    assert removed.title.startswith("t: +0 \u221220 specs (")
    assert changed.title.startswith("t: +50 \u221230 specs (")
    content = changed.content[0].value
    assert content.count("1.0 \u2192 2.0</li>") == 30 and "more" not in content
    assert "Packages added: " + ", ".join(r.name for r in added) + "</p>" in content


def test_a_sync_that_changed_only_stacks_is_no_plus_zero_minus_zero(tmp_path: Path) -> None:
    """A spec left a stack, the tag's listing unchanged: the feeds' titles and the tag
    page's recent changes said "+0 −0 specs", as if nothing had happened."""
    from cachedex.publish.pages import tag_page
    from cachedex.publish.recent_changes import history_from
    from cachedex.publish.render import render

    zlib, cmake = record("a" * 32, "zlib"), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([zlib, cmake], {})
            replace_mirror(writer, "root", {zlib.hash: True, cmake.hash: True})
            replace_mirror(writer, "s", {zlib.hash: True, cmake.hash: True}, url="/s", checksum="s1")
        with catalog.writing_tag("t") as writer:
            writer.keep_mirror("root", "/m", fetched_at=1.0, etag=None, last_modified=None)
            replace_mirror(writer, "s", {zlib.hash: True}, url="/s", checksum="s2")
        (entry,) = _parse(tag_feed(changes_page(catalog, "t"), catalog.identity())).entries
        (every,) = _parse(all_tags_feed(catalog)).entries
        with history_from(catalog):
            page = render(tag_page(catalog, "t"))
    assert entry.title.startswith("t: its stacks changed (") and "+0" not in entry.title
    assert every.title == entry.title and "its stacks changed" in every.content[0].value
    recent = page[page.index('<section class="recent-changes"') :]
    recent = recent[: recent.index("</section>")]
    assert "+0" not in recent and "removed from it; changed in 1 stack: s</li>" in recent, recent


def test_a_feed_is_updated_when_its_latest_entry_was_and_links_a_tag_without_pages_to_the_top(
    tmp_path: Path,
) -> None:
    """With no entry yet a feed is dated by the tag's sync (not 1970); with a clock set
    back, by its latest entry (not the newest sync's); a tag whose pages a site does not
    have is linked to the site's top."""
    from tests.helpers import _db

    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, "zlib")])
        (first,) = catalog.tag_syncs("t")
        quiet = _parse(all_tags_feed(catalog))
        assert not quiet.entries and calendar.timegm(quiet.feed.updated_parsed) == int(first.finished_at)
        write_tag(catalog, "t", [record("b" * 32, "zlib", version="2")], checksum="2")
        write_tag(catalog, "t", [record("c" * 32, "zlib", version="3")], checksum="3")
        second, newest = sorted(catalog.tag_syncs("t"), key=lambda s: s.id)[1:]
        _db(catalog).execute("UPDATE syncs SET finished_at = ? WHERE id = ?", (second.finished_at - 86400, newest.id))
        _db(catalog).commit()
        everything = _parse(all_tags_feed(catalog, linked=lambda tag: False))
        tag = _parse(tag_feed(changes_page(catalog, "t"), catalog.identity()))
        package = _parse(package_feed("t", "zlib", catalog.package_changes("t")["zlib"], first.finished_at, "o", {}))
    for feed in (everything, tag, package):
        assert len(feed.entries) == 2 and calendar.timegm(feed.feed.updated_parsed) == int(second.finished_at), feed
    assert {entry.link for entry in everything.entries} == {"index.html"}
