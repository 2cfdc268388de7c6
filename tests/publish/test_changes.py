"""Change pages: each tag's syncs and the comparisons of tags, against the demo (develop
synced twice), ``cachedex diff`` and a brute-force walk of the catalog; the site's files,
the server's ``/diff``, escaping."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.catalog.history import ChangedSpec, PackageChange
from cachedex.cli import main
from cachedex.diff import diff_tags
from cachedex.publish.changes import ComparePage, changes_page, compare_page, previous_tags, since_page
from cachedex.publish.feeds import package_feed
from cachedex.publish.render import render
from cachedex.publish.serve import create_app
from cachedex.publish.site import write_site
from cachedex.query import parse
from tests.helpers import Demo, changes, evil_catalog, listed_specs, record, write_tag
from tests.publish.conftest import MAIN_OPENS
from tests.publish.serve import get


def _hashes(page: Any, stack: str, kind: str) -> set[str]:
    found = [s for s in page.stacks if s.stack == stack]
    return {spec.hash for spec in getattr(found[0], kind)} if found else set()


def test_a_sync_shows_what_the_catalog_recorded(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        page = changes_page(catalog, "develop")
        (sync,) = page.syncs  # the demo's second sync of develop; the first records nothing
        assert page.older == 0 and page.first_synced_at is not None and page.first_synced_at < sync.finished_at
        stacks = [s.stack for s in sync.stacks]
        assert stacks[0] == "root" and stacks[1:] == sorted(stacks[1:]) and len(stacks) > 5
        for stack in stacks:  # brute force: the changes table, mirror by mirror
            recorded = changes(catalog, "develop", stack)
            assert _hashes(sync, stack, "added") == {h for _, h, _, c in recorded if c > 0}, stack
            assert _hashes(sync, stack, "removed") == {h for _, h, _, c in recorded if c < 0}, stack
        root = sync.stacks[0]
        listed = {s.hash: s for s in listed_specs(catalog, "develop")}
        for spec in root.added:  # each added spec with its arch, compiler and size as listed
            now = listed[spec.hash]
            assert (spec.compiler, spec.arch, spec.size) == (
                now.compiler,
                f"{now.platform}-{now.os}-{now.target}",
                now.size,
            )
        known = [s.size for s in root.added if s.size] + [-(s.size or 0) for s in root.removed]
        assert root.size_change == sum(known) != 0
        # packages and versions, brute force: today's listing and the one before the sync
        after = defaultdict(set)
        for s in listed.values():
            after[s.name].add(s.version)
        removed_names = {s.name for s in root.removed}
        added_names = {s.name for s in root.added}
        before_hashes = (set(listed) - {s.hash for s in root.added}) | {s.hash for s in root.removed}
        versions_before: dict[str, set[str]] = defaultdict(set)
        for s in list(listed.values()) + list(root.removed):
            if s.hash in before_hashes:
                versions_before[s.name].add(s.version)
        assert set(root.added_packages) == {n for n in added_names if n not in versions_before} and root.added_packages
        assert set(root.removed_packages) == {n for n in removed_names if n not in after} and root.removed_packages
        for change in root.version_changes:
            assert set(change.old) == versions_before[change.name] - after[change.name], change
            assert set(change.new) == after[change.name] - versions_before[change.name], change
            assert change.old or change.new
        git = next(v for v in root.version_changes if v.name == "git")
        assert (git.old, git.new) == (("2.47.1",), ("2.47.2",))


def test_since_and_compare_agree_with_cachedex_diff(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        assert previous_tags(catalog.tag_names()) == {"develop-2026-11-08": ["develop-2026-11-01"]}
        page = compare_page(catalog, "develop-2026-11-01", "develop-2026-11-08")
        diff = diff_tags(catalog, "develop-2026-11-01", "develop-2026-11-08")
        assert [s.stack for s in page.stacks] == [s.stack for s in diff.stacks] and page.stacks
        for mine, theirs in zip(page.stacks, diff.stacks, strict=True):
            assert {s.hash for s in mine.added} == {s.hash for s in theirs.added}
            assert {s.hash for s in mine.removed} == {s.hash for s in theirs.removed}
            assert set(mine.added_packages) == set(theirs.added_packages)
            assert set(mine.removed_packages) == set(theirs.removed_packages)
            assert all(s.arch.count("-") >= 2 and s.compiler for s in mine.added + mine.removed)
            assert mine.sized == sum(s.size is not None for s in mine.added + mine.removed)
        # since before the second sync: the same specs as that sync changed
        (sync,) = changes_page(catalog, "develop").syncs
        since = since_page(catalog, "develop", sync.started_at - 0.001, "then")
        assert [(s.stack, s.added_count, s.removed_count) for s in since.stacks] == [
            (s.stack, s.added_count, s.removed_count) for s in sync.stacks
        ]
        # the CLI's diff says the same
        result = CliRunner().invoke(
            main, ["--config", str(demo_run.config), "diff", "develop-2026-11-01", "develop-2026-11-08", "--json"]
        )
        assert result.exit_code == 0, result.output
        cli = json.loads(result.stdout)
        assert {s["stack"]: len(s["added"]) for s in cli["stacks"]} == {s.stack: s.added_count for s in page.stacks}


def test_a_rebuild_by_another_fortran_compiler_is_told_apart_on_change_pages_and_feeds(demo_run: Demo) -> None:
    """The demo's darwin netlib-lapack: develop-2026-11-08's build has gcc's gfortran
    beside apple-clang, develop-2026-11-01's apple-clang alone. The comparison listed
    the two as the same line ("apple-clang@16.0.0 darwin-sequoia-m1"), and a package's
    feed named the C's compiler alone (found by a hunt)."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        others = catalog.other_compilers()
        page = compare_page(catalog, "develop-2026-11-01", "develop-2026-11-08")
        rows = [s for stack in page.stacks for s in stack.added + stack.removed if s.name == "netlib-lapack"]
        darwin = [s for s in rows if s.arch.startswith("darwin-")]
        assert {s.other_compilers for s in darwin} == {(), others[next(s.hash for s in darwin if s.hash in others)]}
        assert all(s.other_compilers == others.get(s.hash, ()) for s in rows)
        built_twice = next(s for s in darwin if s.other_compilers)  # (in the root and its stack)
        (other,) = built_twice.other_compilers
        assert f'{built_twice.compiler} <span class="muted">+{other}</span></td>' in render(page)
        encoded = json.loads(msgspec.json.encode(page))["stacks"]
        shown = [s for stack in encoded for s in stack["added"] + stack["removed"]]
        assert all("page" in s for s in shown)  # (always said, true or not)
        assert sum("other_compilers" in s for s in shown) == sum(bool(others.get(s["hash"])) for s in shown) > 0
        spec = catalog.search(parse(f"/{built_twice.hash}")).specs[0]
        changed = ChangedSpec(
            "root",
            1,
            spec.hash,
            spec.name,
            spec.version,
            spec.compiler,
            spec.platform,
            spec.os,
            spec.target,
            spec.variants,
            spec.size,
        )
        feed = package_feed("develop", spec.name, [PackageChange(1, 0.0, changed)], None, "urn:x", others)
        assert f"%{spec.compiler} +{other} darwin-".encode() in feed


def test_the_site_has_change_pages_and_the_pages_link_them(demo_run: Demo) -> None:
    site = demo_run.site
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            twin = json.loads((site / "tags" / tag / "changes" / "index.json").read_text())
            assert twin == json.loads(msgspec.json.encode(changes_page(catalog, tag)))
        (sync,) = changes_page(catalog, "develop").syncs
        compare = site / "tags/develop-2026-11-08/compare/develop-2026-11-01/index.html"
        assert compare.is_file() and not (site / "tags/develop/compare").exists()
        # the old snapshot's sizes are partly unknown: the size change says of how many
        root = compare_page(catalog, "develop-2026-11-01", "develop-2026-11-08").stacks[0]
        changed = root.added_count + root.removed_count
        assert 0 < root.sized < changed
        assert f"({root.sized:,} of {changed:,} sizes known)" in compare.read_text()
    html = (site / "tags/develop/changes/index.html").read_text()
    assert f'id="sync-{sync.id}"' in html and "git</strong> 2.47.1 &rarr; 2.47.2" in html
    assert "../compare/" not in html
    assert (
        'href="../compare/develop-2026-11-01/index.html"'
        in (site / "tags/develop-2026-11-08/changes/index.html").read_text()
    )
    tag = (site / "tags/develop/index.html").read_text()
    assert f'href="changes/index.html#sync-{sync.id}"' in tag and "Recent changes" in tag
    # every spec link of a change page leads to a page that exists
    for link in re.findall(r'href="((?:\.\./)+specs/[^"]+)"', html):
        assert (site / "tags/develop/changes" / link).resolve().is_file(), link
    added = sync.stacks[0].added[0]
    spec = (site / "specs" / added.hash[:2] / f"{added.hash}.html").read_text()
    assert '<dt>First seen</dt><dd id="first-seen">' in spec and "in develop" in spec


def test_the_server_answers_the_same_pages_and_any_diff(demo_run: Demo) -> None:
    app = create_app(demo_run.catalog)
    site = demo_run.site
    for path in ("tags/develop/changes/index.html", "tags/develop-2026-11-08/compare/develop-2026-11-01/index.html"):
        served = get(app, "/" + path)
        assert served.status_code == 200 and served.content == (site / path).read_bytes(), path
    assert get(app, "/tags/develop/index.html").content == (site / "tags/develop/index.html").read_bytes()
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        (sync,) = changes_page(catalog, "develop").syncs
    for spec in (sync.stacks[0].added[0], sync.stacks[-1].added[0]):  # "first seen": one query, or read once
        path = f"specs/{spec.hash[:2]}/{spec.hash}.html"
        assert get(app, "/" + path).content == (site / path).read_bytes(), path
    assert get(app, "/tags/develop/compare/v1.0.2/").status_code == 404
    pair = get(app, "/diff.json?old=develop-2026-11-01&new=develop-2026-11-08")
    static = json.loads((site / "tags/develop-2026-11-08/compare/develop-2026-11-01/index.json").read_text())
    assert pair.status_code == 200 and pair.json() == {**static, "live": True}
    html = get(app, "/diff?old=v1.0.2&new=develop")
    assert html.status_code == 200 and "<h1>v1.0.2 &rarr; develop</h1>" in html.text
    assert 'href="specs/' in html.text  # links from the server's top
    since = get(app, "/diff?tag=develop&since=2000-01-01")
    assert since.status_code == 200 and "its first sync" in since.text
    for bad in ("/diff", "/diff?old=develop", "/diff?tag=develop", "/diff?tag=develop&since=yesterday"):
        assert get(app, bad).status_code == 400, bad
    assert get(app, "/diff?old=nope&new=develop").status_code == 404


def _evil_history(tmp_path: Path) -> Catalog:
    catalog = evil_catalog(tmp_path / "evil.sqlite")
    common: dict[str, Any] = {"os": "rhel8", "target": "x86_64", "compiler": "gcc@<i>13", "node": b"{}"}
    evil = record("d" * 32, "<img src=x onerror=alert(1)>", version="2<b>", variants=(), **common)
    write_tag(catalog, "t<i>x", [evil], members={"d" * 32: True, "b" * 32: True}, checksum="z")
    return catalog


def test_hostile_names_are_escaped_in_change_pages(tmp_path: Path) -> None:
    with _evil_history(tmp_path) as catalog:
        page = changes_page(catalog, "t<i>x")
        assert page.syncs and page.syncs[0].stacks[0].added_packages == ("<img src=x onerror=alert(1)>",)
        html = render(page)
        assert "<img" not in html and "<b>" not in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<i>" not in html.split(MAIN_OPENS)[1]
        compare = render(ComparePage("t<i>x", "../up", "t<i>x", page.syncs[0].stacks, live=True))
        assert "<img" not in compare and "we&#34;ird&#39;&lt;b&gt;name" in compare
        report = write_site(catalog, tmp_path / "site")
        assert not (tmp_path / "site/tags/t<i>x").exists() or (tmp_path / "site/tags/t<i>x/changes").is_dir()
        for html_file in (tmp_path / "site").rglob("changes/index.html"):
            text = html_file.read_text()
            assert "<img" not in text and "<script>" not in text, html_file
        assert report.complete


@pytest.mark.parametrize("path", ["/diff?old=t%3Ci%3Ex&new=..%2Fup", "/tags/t%3Ci%3Ex/changes/index.html"])
def test_hostile_names_are_escaped_by_the_server(tmp_path: Path, path: str) -> None:
    _evil_history(tmp_path).close()
    answer = get(create_app(tmp_path / "evil.sqlite"), path)
    assert answer.status_code == 200, answer.text
    main_part = answer.text.split(MAIN_OPENS)[1]
    assert "<img" not in main_part and "<i>" not in main_part and "<script>" not in main_part


def test_first_seen_read_once_equals_the_catalogs_answer(demo_run: Demo) -> None:
    from cachedex.publish.first_seen import FirstSeenIndex
    from cachedex.publish.pages import spec_page

    with Catalog(demo_run.catalog, readonly=True) as catalog:
        index = FirstSeenIndex(catalog)
        hashes = sorted(catalog.held_hashes())
        assert len(hashes) > 500
        fresh: list[str] = []
        for dag_hash in hashes:
            expected = tuple(catalog.first_seen(dag_hash))
            assert index.of(dag_hash, spec_page(catalog, dag_hash).holders) == expected, dag_hash
            if any(not f.first_sync for f in expected):
                fresh.append(dag_hash)
        assert len(fresh) > 10  # specs a later sync added, not only those of first syncs
        # As a build after a change reads it: what it says of the pages written only.
        part = set(fresh[::2] + hashes[::7])
        partial = FirstSeenIndex(catalog, list(catalog.page_inputs().ids_of(part).values()))
        for dag_hash in part:
            holders = spec_page(catalog, dag_hash).holders
            assert partial.of(dag_hash, holders) == tuple(catalog.first_seen(dag_hash)), dag_hash
        # Spec pages carry it, so their JSON twins and the API have it too.
        some = hashes[::50]
        twins = {h: msgspec.json.decode((demo_run.site / "specs" / h[:2] / f"{h}.json").read_bytes()) for h in some}
        for dag_hash in some:
            expected = [msgspec.to_builtins(f) for f in catalog.first_seen(dag_hash)]
            assert twins[dag_hash]["first_seen"] == expected and spec_page(catalog, dag_hash).first_seen == tuple(
                catalog.first_seen(dag_hash)
            )


def test_first_seen_is_the_first_of_several_additions(tmp_path: Path) -> None:
    """A spec a stack dropped and listed again, twice: first seen when first added."""
    from cachedex.publish.first_seen import FirstSeenIndex
    from cachedex.publish.pages import spec_page

    spec = record("a" * 32, name="p")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("c" * 32, name="q")])
        write_tag(catalog, "t", [spec], stack="s", checksum="0")
        for again in range(1, 5):  # gone, back, gone, back
            write_tag(
                catalog, "t", [], members={spec.hash: True} if again % 2 == 0 else {}, stack="s", checksum=str(again)
            )
        expected = tuple(catalog.first_seen(spec.hash))
        added = sorted(when for when, _, _, change in changes(catalog, "t", "s") if change > 0)
        # (the stack's first read is an addition too: the tag was synced before it)
        assert len(added) == 3 and [(f.stack, f.at, f.first_sync) for f in expected] == [("s", added[0], False)]
        holders = spec_page(catalog, spec.hash).holders
        assert FirstSeenIndex(catalog).of(spec.hash, holders) == expected
        assert (
            FirstSeenIndex(catalog, list(catalog.page_inputs().ids_of([spec.hash]).values())).of(spec.hash, holders)
            == expected
        )


@pytest.mark.parametrize("plan", ["by names", "by members"])
def test_listing_counts_count_what_the_mirrors_list(demo_run: Demo, plan: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from collections import Counter

    from cachedex.catalog import rows

    # A few names are counted from the name index first, many from the mirrors' members.
    monkeypatch.setattr(rows, "FEW_NAMES", 10**9 if plan == "by names" else -1)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        brute = Counter(
            (stack, name, version)
            for stack, listing in catalog.tag_members("develop").items()
            for name, version in listing.values()
        )
        assert {(s, n, v): c for s, n, v, c in catalog.listing_counts("develop")} == dict(brute)
        some = {"cmake", "zlib", "no-such"}
        assert {(s, n, v): c for s, n, v, c in catalog.listing_counts("develop", some)} == {
            key: count for key, count in brute.items() if key[1] in some
        }
        assert {(s, n, v): c for s, n, v, c in catalog.listing_counts("develop", some, ["root", "e4s"])} == {
            key: count for key, count in brute.items() if key[1] in some and key[0] in ("root", "e4s")
        }


def test_pairs_named_in_the_config_get_comparison_pages(
    demo_run: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cachedex.cli.serve_app import COMPARE_ENV, app_from_environment
    from cachedex.publish.serve import CATALOG_ENV

    with Catalog(demo_run.catalog, readonly=True) as catalog:
        report = write_site(
            catalog,
            tmp_path / "site",
            tags=["develop"],
            compare=[("v1.0.2", "develop"), ("nope", "develop"), ("v1.0.2", "develop")],  # (one pair twice)
        )
    assert [s for s in report.skipped if "comparing" in s] == [
        "comparing 'nope' with 'develop': no tag 'nope' in the catalog"
    ]
    page = tmp_path / "site/tags/develop/compare/v1.0.2/index.json"
    twin = msgspec.json.decode(page.read_bytes())
    assert (twin["old"], twin["new"]) == ("v1.0.2", "develop")
    changes = (tmp_path / "site/tags/develop/changes/index.html").read_text()
    assert changes.count('href="../compare/v1.0.2/index.html"') == 1  # (listed as often as given, it was)
    assert "Comparison pages: " in changes  # (not "the previous of its series": no series pairs them)
    # The live server has the same pages, given the pairs as `cachedex serve` gives them
    # (its worker processes read them from the environment): it answered 404.
    monkeypatch.setenv(CATALOG_ENV, str(demo_run.catalog))
    monkeypatch.setenv(COMPARE_ENV, json.dumps([["v1.0.2", "develop"], ["nope", "develop"]]))
    app = app_from_environment()
    served = get(app, "/tags/develop/compare/v1.0.2/index.json")
    assert served.status_code == 200 and served.content == page.read_bytes()
    served_changes = get(app, "/tags/develop/changes/index.json").json()
    assert (
        served_changes["compare"]
        == msgspec.json.decode(page.parent.parent.parent.joinpath("changes/index.json").read_bytes())["compare"]
    )
    assert "v1.0.2" in served_changes["compare"] and "nope" not in served_changes["compare"]
    assert get(app, "/tags/develop/compare/nope/index.json").status_code == 404
    assert get(create_app(demo_run.catalog), "/tags/develop/compare/v1.0.2/index.json").status_code == 404
    # The pair left out of the config: its page goes (it stayed, linking to what may be gone)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        again = write_site(catalog, tmp_path / "site", tags=["develop"])
    assert again.removed >= 1 and not page.parent.exists() and not page.parent.parent.exists()  # (no empty folder)


def test_a_stack_s_new_version_of_a_package_it_had_is_a_version_change(tmp_path: Path) -> None:
    """Counted from that stack's own listing: p@1.0 was in stack s, so p@2.0 there is a
    new version, not a new package (the root never listed p)."""
    old, new = record("a" * 32, name="p", version="1.0"), record("b" * 32, name="p", version="2.0")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("c" * 32, name="q")])
        write_tag(catalog, "t", [old, new], members={old.hash: True}, stack="s", checksum="1")
        write_tag(catalog, "t", [], members={old.hash: True, new.hash: True}, stack="s", checksum="2")
        sync, first_read = changes_page(catalog, "t").syncs  # (the stack's first read added p@1.0)
    assert [s.stack for s in first_read.stacks] == ["s"] and first_read.stacks[0].added_packages
    (stack,) = sync.stacks
    assert stack.stack == "s" and stack.added_count == 1 and not stack.added_packages
    assert [(c.name, c.new) for c in stack.version_changes] == [("p", ("2.0",))]


def test_a_spec_only_a_stack_lists_links_to_its_page_in_a_comparison(tmp_path: Path) -> None:
    """Neither root lists x (stack s of a does): it has a page, and the comparison links it."""
    x = record("e" * 32, name="x")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "a", [record("c" * 32, name="q"), x], members={"c" * 32: True})
        write_tag(catalog, "a", [], members={x.hash: True}, stack="s", checksum="s")
        write_tag(catalog, "b", [], members={"c" * 32: True})
        assert catalog.held_hashes([x.hash]) == {x.hash}
        for old, new, kind in (("a", "b", "removed"), ("b", "a", "added")):
            (stack,) = compare_page(catalog, old, new).stacks
            assert stack.stack == "s" and [(s.hash, s.page) for s in getattr(stack, kind)] == [(x.hash, True)]


def test_a_sync_that_removed_versions_counts_their_sizes_and_names_them_newest_first(tmp_path: Path) -> None:
    """Twenty packages each lose N.9 and N.10 and keep N.11: each change names N.10
    before N.9 (two versions were left in a set's order), the stack counts the removed
    specs' sizes as known, and the comparison since links a removed spec only while a
    mirror holds it (each found by a mutation of the code the other tests passed)."""
    names = [f"p{n:02d}" for n in range(20)]
    specs = {
        (name, version): record(f"{name}{version.replace('.', 'x')}".ljust(32, "a"), name, version=version)
        for n, name in enumerate(names)
        for version in (f"{n + 1}.9", f"{n + 1}.10", f"{n + 1}.11")
    }
    sizes = {spec.hash: 1_000 for spec in specs.values()}
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", list(specs.values()), sizes=sizes)
        kept = {spec.hash: True for (_, version), spec in specs.items() if version.endswith(".11")}
        write_tag(catalog, "t", [], members=kept, checksum="y")
        still = specs["p00", "1.9"].hash  # held by another tag: its page stays
        write_tag(catalog, "u", [], members={still: True})
        (sync,) = changes_page(catalog, "t").syncs  # (the first sync is no change)
        (root,) = sync.stacks
        assert (root.removed_count, root.sized, root.size_change) == (40, 40, -40_000)
        assert [(v.name, v.old, v.new) for v in root.version_changes] == [
            (name, (f"{n + 1}.10", f"{n + 1}.9"), ()) for n, name in enumerate(names)
        ]
        since = since_page(catalog, "t", sync.started_at - 0.001, "then")
        (stack,) = since.stacks
        assert {s.hash: s.page for s in stack.removed} == {
            spec.hash: spec.hash == still for (_, version), spec in specs.items() if not version.endswith(".11")
        }
