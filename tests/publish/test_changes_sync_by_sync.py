"""Change pages, comparisons over time and a tag page's "recent changes", on small
catalogs made sync by sync: what a user reads on them (found by mutations of the code
the other tests passed)."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.changes import changes_page, previous_tags
from cachedex.publish.recent_changes import RECENT
from cachedex.publish.render import render
from cachedex.publish.serve import create_app
from cachedex.publish.site import write_site
from tests.helpers import record, write_tag
from tests.publish.serve import get


def _at(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def test_a_tag_page_shows_only_its_last_few_syncs(tmp_path: Path) -> None:
    """A site's tag page takes its "recent changes" from the change page just built,
    which details up to 50 syncs: the block shows the newest few, each linking its sync."""
    specs = [record(f"{n}".ljust(32, "a"), f"p{n}") for n in range(RECENT + 3)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("q" * 32, "q")])
        for n, spec in enumerate(specs):  # each sync adds one package
            write_tag(catalog, "t", [spec], members={"q" * 32: True, spec.hash: True}, checksum=str(n))
        syncs = changes_page(catalog, "t").syncs
        assert len(syncs) == RECENT + 3
        write_site(catalog, tmp_path / "site", tags=["t"])
        app = create_app(tmp_path / "c.sqlite")
    html = (tmp_path / "site/tags/t/index.html").read_text()
    block = html.split('id="recent-changes"')[1].split("</section>")[0]
    shown = [int(n) for n in re.findall(r'href="changes/index.html#sync-(\d+)"', block)]
    assert shown == [sync.id for sync in syncs[:RECENT]]
    assert [f"added {spec.name};" in block for spec in specs] == [False] * 3 + [True] * RECENT
    assert get(app, "/tags/t/index.html").text == html  # the server's page says the same


def test_a_comparison_since_a_date_links_the_specs_added(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``/diff?tag=…&since=…``: an added spec is listed now, so it has a page and the
    comparison links it (as a removed one a mirror still holds)."""
    clock = [_at("2026-01-01T12:00:00")]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    old, new = record("a" * 32, "zlib"), record("b" * 32, "cmake", version="3.31.3")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [old])
        clock[0] = _at("2026-02-01T12:00:00")
        write_tag(catalog, "t", [new], members={new.hash: True}, checksum="2")  # zlib leaves, cmake comes
    answer = get(create_app(tmp_path / "c.sqlite"), "/diff?tag=t&since=2026-01-15")
    assert answer.status_code == 200, answer.text
    links = set(re.findall(r'href="(specs/[^"]+)"', answer.text))
    assert f"specs/{new.hash[:2]}/{new.hash}.html" in links
    assert not any(old.hash in link for link in links)  # (no mirror holds zlib now: no page)
    as_json = get(create_app(tmp_path / "c.sqlite"), "/diff.json?tag=t&since=2026-01-15").json()
    (root,) = as_json["stacks"]
    assert [(s["name"], s["page"]) for s in root["added"]] == [("cmake", True)]
    assert [(s["name"], s["page"]) for s in root["removed"]] == [("zlib", False)]


def test_a_new_build_of_a_version_a_package_still_has_is_no_rebuild(tmp_path: Path) -> None:
    """zlib@1.3.1 gains an aarch64 build while its x86_64 one stays: nothing was
    rebuilt (no spec replaced), and no version changed; cmake's build replaced by
    another of the same version is a rebuild."""
    x86 = record("a" * 32, "zlib")
    arm = record("b" * 32, "zlib", target="aarch64")
    cmake_old, cmake_new = record("c" * 32, "cmake"), record("d" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [x86, cmake_old])
        write_tag(
            catalog, "t", [arm, cmake_new], members={x86.hash: True, arm.hash: True, cmake_new.hash: True}, checksum="2"
        )
        (sync,) = changes_page(catalog, "t").syncs
        (root,) = sync.stacks
        assert (root.added_count, root.removed_count) == (2, 1)
        assert root.rebuilt == ("cmake",) and root.version_changes == ()
        html = render(changes_page(catalog, "t"))
    assert "Rebuilt (new hashes, same versions): cmake</p>" in html


def test_snapshots_are_compared_with_the_previous_of_their_own_branch(tmp_path: Path) -> None:
    """develop's snapshot pairs with develop's previous one, not with a snapshot of
    another branch dated in between: its change page links that comparison only."""
    tags = ["develop-2026-11-01", "releases-v1-2026-11-04", "develop-2026-11-08", "releases-v1-2026-11-07"]
    assert previous_tags(tags) == {
        "develop-2026-11-08": ["develop-2026-11-01"],
        "releases-v1-2026-11-07": ["releases-v1-2026-11-04"],
    }
    with Catalog(tmp_path / "c.sqlite") as catalog:
        for n, tag in enumerate(tags):
            write_tag(catalog, tag, [record(f"{n}".ljust(32, "a"), "zlib")])
            write_tag(catalog, tag, [record(f"{n}".ljust(32, "b"), "zlib")], checksum="2")
        html = render(changes_page(catalog, "develop-2026-11-08"))
    assert re.findall(r'href="\.\./compare/([^/"]+)/index.html"', html) == ["develop-2026-11-01"]
