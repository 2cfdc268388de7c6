"""Buildcache views: stacks that are views of one mirror, mirrors of views only,
``views: all``, and a view's freshness."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.config import parse_config
from cachedex.ingest.sync import sync
from cachedex.publish.first_seen import FirstSeenIndex
from cachedex.publish.pages import mirrors_page, spec_page
from cachedex.publish.render import render
from tests.helpers import fixture_index, fixture_listing, listed_in, listed_specs, write_v3_mirror, write_v3_view

FIRST = "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"


def _config(tmp_path: Path, **tag: object) -> object:
    return parse_config({"catalog": "c.sqlite", "tags": [{"name": "t", **tag}]}, base=tmp_path)


def test_stacks_that_are_views_of_the_root_mirror(mirrors: Path, tmp_path: Path) -> None:
    sizes = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    small, big = fixture_listing(mirrors, 2), fixture_listing(mirrors, 5)
    write_v3_view(tmp_path / "m", "small", small)
    write_v3_view(tmp_path / "m", "big", big)
    config = _config(tmp_path, url="./m", stacks={"s": {"view": "small"}}, views=["big"])
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
        assert outcome.ok, outcome.error
        assert catalog.listed_hashes("t", "s") == listed_in(small)
        assert catalog.listed_hashes("t", "big") == listed_in(big)
        views = {m.stack: m.view for m in catalog.mirrors("t")}
        assert views == {"root": None, "s": "small", "big": "big"}
        specs = {s.hash: s for s in listed_specs(catalog, "t")}
    assert all(set(specs[h].stacks) == {"root", "s", "big"} for h in listed_in(small))
    assert all(specs[h].size == sizes[h] for h in specs)  # sizes from the shared spec manifests


def test_a_mirror_of_views_only(mirrors: Path, tmp_path: Path) -> None:
    sizes = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    shutil.rmtree(tmp_path / "m/v3/manifests/index")  # no root index at all
    first, second = fixture_listing(mirrors, 2), fixture_index(mirrors)
    del second["database"]["installs"][FIRST]  # type: ignore[index]
    write_v3_view(tmp_path / "m", "one", first)
    write_v3_view(tmp_path / "m", "two", second)
    config = _config(tmp_path, url="./m", views="all")
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
        assert outcome.ok, outcome.error
        root = catalog.mirror_state("t", "root")
        assert root is not None and not root.own_index
        union = listed_in(first) | listed_in(second)
        assert catalog.listed_hashes("t") == union
        specs = listed_specs(catalog, "t")
        (stats,) = catalog.tag_stats(["t"])
        mirrors_html = render(mirrors_page(catalog))  # the page says so plainly
        # First seen in the views, never in a root that lists them without an index of its own
        index = FirstSeenIndex(catalog)
        for dag_hash in union:
            seen = catalog.first_seen(dag_hash)
            assert seen and "root" not in {f.stack for f in seen}
            assert index.of(dag_hash, spec_page(catalog, dag_hash).holders) == tuple(seen)
    assert 't / root <span class="tag">views only: no index of its own</span>' in mirrors_html
    assert 't / one <span class="tag">view one</span>' in mirrors_html
    assert stats.stacks == 2 and stats.specs == len(union)
    assert all("root" not in s.stacks for s in specs)  # the root holds nothing of its own
    assert {s.hash: s.stacks for s in specs}[FIRST] == ("one",)
    assert stats.sized == len(union) and stats.size == sum(sizes[h] for h in union)


def test_views_all_finds_views_and_a_view_changed_is_read_again(mirrors: Path, tmp_path: Path) -> None:
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "e4s", fixture_listing(mirrors, 3))
    (tmp_path / "m/v3/manifests/index/stray").mkdir()  # a folder without an index manifest: no view
    config = _config(tmp_path, url="./m", views="all")
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (first,) = sync(config, catalog)  # type: ignore[arg-type]
        assert [m.stack for m in first.mirrors] == ["root", "e4s"] and all(m.changed for m in first.mirrors)
        assert first.warnings == ()
        (again,) = sync(config, catalog)  # type: ignore[arg-type]
        assert not again.changed
        write_v3_view(tmp_path / "m", "e4s", fixture_listing(mirrors, 4))
        write_v3_view(tmp_path / "m", "ml", fixture_listing(mirrors, 1))
        (third,) = sync(config, catalog)  # type: ignore[arg-type]
        assert {m.stack: m.changed for m in third.mirrors} == {"root": False, "e4s": True, "ml": True}
        assert catalog.listed_hashes("t", "e4s") == listed_in(fixture_listing(mirrors, 4))


def test_an_unchanged_view_over_http_downloads_nothing(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = http_server.state.root / "m"
    write_v3_mirror(root, fixture_index(mirrors))
    write_v3_view(root, "e4s", fixture_listing(mirrors, 3))
    config = _config(tmp_path, url=f"{http_server.url}/m", stacks={"e4s": {"view": "e4s"}})
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        sync(config, catalog)  # type: ignore[arg-type]
        http_server.state.requests.clear()
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
    assert outcome.ok and not outcome.changed
    paths = sorted(path for _, path in http_server.state.requests)
    assert paths == ["/m/v3/manifests/index/e4s/index.manifest.json", "/m/v3/manifests/index/index.manifest.json"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        (".hidden", "'.hidden' must not start with '.' (it becomes a folder name)"),
        ("bad name", "'bad name' may hold only letters, digits and . _ + @ = - (starting with a letter or digit)"),
        ("-rf", "'-rf' may hold only letters, digits and . _ + @ = - (starting with a letter or digit)"),
        ("x;y", "'x;y' may hold only letters, digits and . _ + @ = - (starting with a letter or digit)"),
    ],
)
def test_a_found_view_whose_name_cannot_be_a_stack_is_skipped_and_said(
    mirrors: Path, tmp_path: Path, name: str, why: str
) -> None:
    """One such view failed the whole tag: its other views and its root went unread."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", name, fixture_listing(mirrors, 1))
    write_v3_view(tmp_path / "m", "e4s", fixture_listing(mirrors, 3))
    config = _config(tmp_path, url="./m", views="all")
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
        assert outcome.ok, outcome.error
        assert [m.stack for m in outcome.mirrors] == ["root", "e4s"]
        assert catalog.listed_hashes("t", "e4s") == listed_in(fixture_listing(mirrors, 3))
        assert catalog.listed_hashes("t") == listed_in(fixture_index(mirrors))
    manifest = tmp_path / "m" / "v3/manifests/index" / name / "index.manifest.json"
    assert outcome.warnings == (f"root: {manifest}: view not read as a stack: its name {why}",)


def test_a_found_view_named_root_or_as_a_configured_stack_is_said(mirrors: Path, tmp_path: Path) -> None:
    """A view named ``root``, or as a configured stack that reads something else, was
    dropped without a word. A view a configured stack reads is read once, by that stack."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    for view, keep in (("root", 1), ("gcc", 2), ("small", 3), ("e4s", 4)):
        write_v3_view(tmp_path / "m", view, fixture_listing(mirrors, keep))
    config = _config(tmp_path, url="./m", views="all", stacks={"gcc": {"view": "small"}})
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
        assert outcome.ok, outcome.error
        assert {m.stack: m.view for m in catalog.mirrors("t")} == {"root": None, "gcc": "small", "e4s": "e4s"}
        assert catalog.listed_hashes("t", "gcc") == listed_in(fixture_listing(mirrors, 3))
    index = tmp_path / "m/v3/manifests/index"
    rename = "to read it, give it a stack name of its own: stacks: {NAME: {view: %s}}"
    assert sorted(outcome.warnings) == [
        f"root: {index}/gcc/index.manifest.json: view not read as a stack: stack 'gcc' of tag t is configured "
        f"already, as view 'small' of {tmp_path / 'm'}; " + rename % "gcc",
        f"root: {index}/root/index.manifest.json: view not read as a stack: 'root' names tag t's own mirror, "
        "not a stack; " + rename % "root",
    ]


def test_a_view_another_mirror_s_stack_reads_is_still_found_in_the_root_s(mirrors: Path, tmp_path: Path) -> None:
    """A configured stack reading view ``x`` of another mirror does not read the root
    mirror's own ``x``: ``views: all`` adds it as a stack."""
    for mirror, keep in (("a", 2), ("b", 3)):
        write_v3_mirror(tmp_path / mirror, fixture_index(mirrors))
        write_v3_view(tmp_path / mirror, "x", fixture_listing(mirrors, keep))
    config = _config(tmp_path, url="./a", views="all", stacks={"other": {"url": "./b", "view": "x"}})
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
        assert outcome.ok and outcome.warnings == (), outcome.error
        assert [m.stack for m in outcome.mirrors] == ["root", "other", "x"]
        assert catalog.listed_hashes("t", "x") == listed_in(fixture_listing(mirrors, 2))
        assert catalog.listed_hashes("t", "other") == listed_in(fixture_listing(mirrors, 3))


def test_a_mirror_whose_only_view_cannot_be_a_stack_says_why(mirrors: Path, tmp_path: Path) -> None:
    """Not "views: all, but this mirror has no view": it has one, named ``root``."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "root", fixture_listing(mirrors, 1))
    config = _config(tmp_path, url="./m", views="all")
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
    assert outcome.ok, outcome.error
    (warning,) = outcome.warnings
    assert "root/index.manifest.json: view not read as a stack: 'root' names tag t's own mirror" in warning


def test_a_missing_view_names_its_manifest(mirrors: Path, tmp_path: Path) -> None:
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    config = _config(tmp_path, url="./m", views=["nope"])
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
    assert outcome.error is not None
    assert outcome.error.startswith(str(tmp_path / "m/v3/manifests/index/nope/index.manifest.json"))
    assert "no view 'nope' in this mirror" in outcome.error


def test_views_all_of_a_folder_that_is_not_there_says_so(tmp_path: Path) -> None:
    config = _config(tmp_path, url="./nowhere", views="all")
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
    assert outcome.error is not None and outcome.error.endswith("nowhere: no such folder"), outcome.error


def test_a_view_index_of_only_unsupported_versions(mirrors: Path, tmp_path: Path) -> None:
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "v", fixture_listing(mirrors, 1))
    path = tmp_path / "m/v3/manifests/index/v/index.manifest.json"
    manifest = json.loads(path.read_text())
    manifest["data"][0]["mediaType"] = "application/vnd.spack.db.v12+json"
    path.write_text(json.dumps(manifest))
    config = _config(tmp_path, url="./m", views=["v"])
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
    assert outcome.error is not None and "only offered as application/vnd.spack.db.v12+json" in outcome.error


def _tail(mirrors: Path, skip: int) -> dict[str, object]:
    """The real index with its first ``skip`` records unlisted (the rest as they are)."""
    index = fixture_index(mirrors)
    for position, record in enumerate(index["database"]["installs"].values()):  # type: ignore[attr-defined]
        record["in_buildcache"] = record["in_buildcache"] and position >= skip
    return index


def test_a_view_dropped_from_a_mirror_of_views_only_leaves_the_root_too(mirrors: Path, tmp_path: Path) -> None:
    """With every view left unchanged, the root (the union of its views) was kept as it
    was: it went on listing the dropped view's specs, and 'stats' counted them."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    shutil.rmtree(tmp_path / "m/v3/manifests/index")
    one, two = fixture_listing(mirrors, 3), _tail(mirrors, 3)
    write_v3_view(tmp_path / "m", "one", one)
    write_v3_view(tmp_path / "m", "two", two)
    both = _config(tmp_path, url="./m", views=["one", "two"])
    with Catalog(both.catalog) as catalog:  # type: ignore[attr-defined]
        (first,) = sync(both, catalog)  # type: ignore[arg-type]
        assert first.ok and catalog.listed_hashes("t") == listed_in(one) | listed_in(two)
        (outcome,) = sync(_config(tmp_path, url="./m", views=["one"]), catalog)  # type: ignore[arg-type]
        assert outcome.ok and outcome.dropped_stacks == ("two",)
        assert catalog.listed_hashes("t") == listed_in(one)
        (stats,) = catalog.tag_stats(["t"])
        assert stats.specs == len(listed_in(one))
        shutil.rmtree(tmp_path / "m/v3/manifests/index/two")  # views: all finds it gone the same way
        (found,) = sync(_config(tmp_path, url="./m", views="all"), catalog)  # type: ignore[arg-type]
        assert found.ok and catalog.listed_hashes("t") == listed_in(one)


def test_a_root_index_removed_while_its_views_stay_makes_the_root_their_union(mirrors: Path, tmp_path: Path) -> None:
    """The root kept its own index's listing (and said it had one) when no view changed."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    small = fixture_listing(mirrors, 2)
    write_v3_view(tmp_path / "m", "small", small)
    config = _config(tmp_path, url="./m", views=["small"])
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (first,) = sync(config, catalog)  # type: ignore[arg-type]
        assert first.ok and catalog.listed_hashes("t") == listed_in(fixture_index(mirrors))
        (tmp_path / "m/v3/manifests/index/index.manifest.json").unlink()
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
        assert outcome.ok, outcome.error
        assert catalog.listed_hashes("t") == listed_in(small)
        root = catalog.mirror_state("t", "root")
        assert root is not None and not root.own_index


def test_views_all_of_a_mirror_with_no_view_yet_reads_its_root(mirrors: Path, tmp_path: Path) -> None:
    """A mirror read with views: all before its first view is made (as Spack's mirrors
    will be, moving to views): its root is read, and the sync says why it found no stack.
    Once a view comes, it is a stack."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    config = _config(tmp_path, url="./m", views="all")
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (first,) = sync(config, catalog)  # type: ignore[arg-type]
        assert first.ok and [m.stack for m in first.mirrors] == ["root"]
        assert catalog.listed_hashes("t") == listed_in(fixture_index(mirrors))
        index = f"{tmp_path / 'm/v3/manifests/index'}/"
        assert first.warnings == (f"root: views: all, but {index} holds no view: the root is read without views",)
        write_v3_view(tmp_path / "m", "e4s", fixture_listing(mirrors, 3))
        (second,) = sync(config, catalog)  # type: ignore[arg-type]
        assert [m.stack for m in second.mirrors] == ["root", "e4s"] and second.warnings == ()


def test_a_root_that_is_not_there_beside_a_view_of_another_mirror_fails(mirrors: Path, tmp_path: Path) -> None:
    """A stack that is a view of *another* mirror says nothing of the root: a root URL
    with a typo was read as a mirror of views only (a first sync of the view's specs,
    and `verify` said nothing of the root)."""
    from cachedex.ingest.verify import verify

    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "tut", fixture_listing(mirrors, 2))
    config = _config(tmp_path, url="./typo", stacks={"x": {"url": "./m", "view": "tut"}})
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
        assert not outcome.ok and "typo" in str(outcome.error), outcome.error
        assert catalog.tag_names() == []
        (tag,) = verify(config, catalog).tags  # type: ignore[arg-type]
    root = tag.mirrors[0]
    assert root.stack == "root" and [p.kind for p in root.problems] == ["index-missing"] and not tag.ok


def test_a_view_of_the_root_s_mirror_written_as_a_file_url_is_still_the_root_s(mirrors: Path, tmp_path: Path) -> None:
    """The root written file:///.../m, the view's mirror /.../m: one mirror (compared as
    written, the root of views only was refused as missing its index)."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    shutil.rmtree(tmp_path / "m/v3/manifests/index")  # views only
    write_v3_view(tmp_path / "m", "one", fixture_listing(mirrors, 2))
    config = _config(
        tmp_path, url=f"file://{tmp_path / 'm'}", stacks={"x": {"url": str(tmp_path / "m"), "view": "one"}}
    )
    with Catalog(config.catalog) as catalog:  # type: ignore[attr-defined]
        (outcome,) = sync(config, catalog)  # type: ignore[arg-type]
        assert outcome.ok, outcome.error
        assert catalog.listed_hashes("t") == listed_in(fixture_listing(mirrors, 2))
