"""``views: all`` and a root of views only, found unguarded by a mutation hunt of
``cachedex.ingest.views``: the order found views become stacks in, a view a configured
stack reads already, a mirror whose views cannot be listed, and the union of stacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.config import TagConfig
from cachedex.errors import SourceNotFound
from cachedex.ingest.sources import open_source
from cachedex.ingest.sync import sync
from cachedex.ingest.views import union_of_stacks, with_found_views
from tests.helpers import fixture_index, fixture_listing, listed_in, make_config, write_v3_mirror, write_v3_view


def _tag(tmp_path: Path, **tag: object) -> TagConfig:
    (config,) = make_config(tmp_path, [{"name": "t", **tag}]).tags
    return config


def _views_of(tag: TagConfig) -> list[tuple[str, str | None]]:
    return [(ref.stack, ref.view) for ref in tag.mirrors]


def test_the_union_of_stacks_lists_a_record_where_any_stack_lists_it() -> None:
    """A root of views only lists a record if any view lists it, whichever view comes
    first, and keeps a record no view lists as unlisted (not dropped, not listed)."""
    members = [
        {"a": True, "b": False, "c": False},
        {"a": False, "b": True, "d": False},
        {"e": True},
    ]
    assert union_of_stacks(members) == {"a": True, "b": True, "c": False, "d": False, "e": True}
    assert union_of_stacks([]) == {}


def test_found_views_become_stacks_after_the_configured_ones_in_name_order(mirrors: Path, tmp_path: Path) -> None:
    """views: all adds the views found after the configured stacks, in the order the
    mirror lists them (by name), whatever order they were made in."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    for view in ("zeta", "alpha", "mid"):
        write_v3_view(tmp_path / "m", view, fixture_listing(mirrors, 1))
    write_v3_view(tmp_path / "other", "x", fixture_listing(mirrors, 2))
    tag = _tag(
        tmp_path, url=str(tmp_path / "m"), views="all", stacks={"o": {"url": str(tmp_path / "other"), "view": "x"}}
    )
    found, skipped = with_found_views(tag, open_source(tag.mirrors[0].url, client=None))
    assert skipped == ()
    assert _views_of(found) == [("root", None), ("o", "x"), ("alpha", "alpha"), ("mid", "mid"), ("zeta", "zeta")]
    assert {ref.url for ref in found.mirrors if ref.stack != "o"} == {str(tmp_path / "m")}


def test_a_view_a_configured_stack_reads_does_not_end_the_search(mirrors: Path, tmp_path: Path) -> None:
    """A view read already by a configured stack (first in name order) is passed over,
    and the views after it are still found and read."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "aaa", fixture_listing(mirrors, 2))
    write_v3_view(tmp_path / "m", "bbb", fixture_listing(mirrors, 3))
    config = make_config(tmp_path, [{"name": "t", "url": "./m", "views": "all", "stacks": {"mine": {"view": "aaa"}}}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert [m.stack for m in outcome.mirrors] == ["root", "mine", "bbb"]
        assert outcome.warnings == ()
        assert catalog.listed_hashes("t", "bbb") == listed_in(fixture_listing(mirrors, 3))


def test_a_mirror_whose_views_cannot_be_listed_says_to_name_them(mirrors: Path, tmp_path: Path) -> None:
    """A mirror whose folder of views cannot be listed (here ``v3/manifests/index`` is a
    file) fails views: all with a message that says what to do, not a crash."""
    (tmp_path / "m/v3/manifests").mkdir(parents=True)
    (tmp_path / "m/v3/manifests/index").write_text("not a folder")
    tag = _tag(tmp_path, url=str(tmp_path / "m"), views="all")
    with pytest.raises(SourceNotFound, match=r"cannot list this mirror's views; name them with views: \[\.\.\.\]"):
        with_found_views(tag, open_source(tag.mirrors[0].url, client=None), none_ok=True)
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m"), "views": "all"}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.error is not None and "cannot list this mirror's views" in outcome.error, outcome.error


def test_a_mirror_with_no_view_is_not_found_unless_none_ok(mirrors: Path, tmp_path: Path) -> None:
    """With no view found and none_ok, the tag comes back as it is, nothing skipped;
    without it, SourceNotFound names the folder of views."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    tag = _tag(tmp_path, url=str(tmp_path / "m"), views="all")
    source = open_source(tag.mirrors[0].url, client=None)
    assert with_found_views(tag, source, none_ok=True) == (tag, ())
    with pytest.raises(SourceNotFound) as raised:
        with_found_views(tag, source)
    assert str(raised.value) == f"{tmp_path / 'm/v3/manifests/index'}/: views: all, but this mirror has no view"


def test_a_view_a_stack_reads_through_another_spelling_of_the_root_is_read_once(mirrors: Path, tmp_path: Path) -> None:
    """A configured stack reading the root's own view ``one`` (the root written
    file:///.../m, the stack's mirror /.../m: one mirror, as reads_root_views already
    says) reads it: views: all does not add it again as stack ``one`` (it did: one
    index read twice, its specs counted in two stacks)."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "one", fixture_listing(mirrors, 2))
    stacks = {"x": {"url": str(tmp_path / "m"), "view": "one"}}
    config = make_config(tmp_path, [{"name": "t", "url": f"file://{tmp_path / 'm'}", "views": "all", "stacks": stacks}])
    assert config.tags[0].reads_root_views  # the config knows it is the root's mirror
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    assert [m.stack for m in outcome.mirrors] == ["root", "x"]


def test_a_found_view_named_as_a_configured_mirror_stack_names_that_mirror(mirrors: Path, tmp_path: Path) -> None:
    """A found view named as a configured stack that reads a whole other mirror (no
    view) is skipped, and the reason names that mirror's URL (not "view None of ...")."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "gcc", fixture_listing(mirrors, 1))
    other = str(tmp_path / "other")
    tag = _tag(tmp_path, url=str(tmp_path / "m"), views="all", stacks={"gcc": other})
    found, skipped = with_found_views(tag, open_source(tag.mirrors[0].url, client=None))
    assert found == tag
    (view,) = skipped
    manifest = f"{tmp_path / 'm'}/v3/manifests/index/gcc/index.manifest.json"
    assert (view.view, view.url) == ("gcc", manifest)
    assert view.why == (
        f"stack 'gcc' of tag t is configured already, as {other}; "
        "to read it, give it a stack name of its own: stacks: {NAME: {view: gcc}}"
    )
    assert str(view) == f"{manifest}: view not read as a stack: {view.why}"


def test_a_mirror_whose_only_view_a_stack_reads_already_is_not_a_mirror_without_views(
    mirrors: Path, tmp_path: Path
) -> None:
    """views: all finding only the view a configured stack reads: nothing to add, but
    the mirror has a view, so even without none_ok (as ``verify`` calls it) the tag comes
    back as configured instead of "this mirror has no view"."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "one", fixture_listing(mirrors, 2))
    tag = _tag(tmp_path, url=str(tmp_path / "m"), views="all", stacks={"mine": {"view": "one"}})
    assert with_found_views(tag, open_source(tag.mirrors[0].url, client=None)) == (tag, ())
