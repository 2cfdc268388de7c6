"""Sync orchestration found unguarded by a mutation hunt: a mirror of views only whose
view changes, a tag whose root alone changes, and a first bulk sync's stack-only specs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cachedex.catalog import Catalog, bulk_load
from cachedex.ingest.sync import sync
from tests.helpers import (
    fixture_index,
    fixture_listing,
    listed_in,
    make_config,
    write_v2_mirror,
    write_v3_mirror,
    write_v3_view,
)

LIBELF_CORE2 = "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"


def test_a_view_that_grows_in_a_mirror_of_views_only_grows_the_root(mirrors: Path, tmp_path: Path) -> None:
    """The root of a mirror of views only is their union: when one view changes (with
    the same views as before), the root must list what it lists now, not keep its old
    listing."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    shutil.rmtree(tmp_path / "m/v3/manifests/index")  # no root index: views only
    write_v3_view(tmp_path / "m", "one", fixture_listing(mirrors, 2))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m"), "views": ["one"]}])
    with Catalog(config.catalog) as catalog:
        (first,) = sync(config, catalog)
        assert first.ok, first.error
        assert catalog.listed_hashes("t") == listed_in(fixture_listing(mirrors, 2))
        write_v3_view(tmp_path / "m", "one", fixture_listing(mirrors, 5))
        (again,) = sync(config, catalog)
        assert again.ok, again.error
        assert catalog.listed_hashes("t", "one") == listed_in(fixture_listing(mirrors, 5))
        assert catalog.listed_hashes("t") == listed_in(fixture_listing(mirrors, 5))
        assert again.added == len(listed_in(fixture_listing(mirrors, 5))) - len(listed_in(fixture_listing(mirrors, 2)))


def test_a_tag_whose_root_alone_changed_is_not_reported_unchanged(mirrors: Path, tmp_path: Path) -> None:
    """`cachedex sync` prints "(unchanged)" for a tag whose outcome is not changed: a
    tag with a changed root and an unchanged stack changed."""
    write_v2_mirror(tmp_path / "root", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    write_v2_mirror(tmp_path / "stack", fixture_index(mirrors))
    config = make_config(
        tmp_path, [{"name": "t", "url": str(tmp_path / "root"), "stacks": {"s": str(tmp_path / "stack")}}]
    )
    with Catalog(config.catalog) as catalog:
        assert sync(config, catalog)[0].ok
        (unchanged,) = sync(config, catalog)
        assert unchanged.ok and not unchanged.changed
        write_v2_mirror(tmp_path / "root", fixture_index(mirrors))
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    assert [(m.stack, m.changed) for m in outcome.mirrors] == [("root", True), ("s", False)]
    assert outcome.changed


def test_a_first_bulk_sync_counts_specs_only_a_stack_holds_as_new(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first sync from folders reads its stacks while SQLite indexes the root's specs:
    a spec only a stack holds is new too, and "new specs" must count it."""
    monkeypatch.setattr(bulk_load, "BULK_MIN", 1)  # (the fixture's few specs, loaded in bulk)
    config = make_config(
        tmp_path,
        [
            {
                "name": "develop",
                "url": str(mirrors / "v2_layout/unsigned"),
                "stacks": {"old": str(mirrors / "legacy_yaml")},
            }
        ],
    )
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert catalog.listed_hashes("develop", "old") == {"t5mczux3tfqpxwmg7egp7axy2jvyulqk"}
    assert outcome.new_specs == 8  # 7 from the root, 1 only in the 'old' stack


def test_a_stack_switched_to_another_view_with_the_same_index_records_its_new_view(
    mirrors: Path, tmp_path: Path
) -> None:
    """Its index is byte for byte the old view's (the same blob), so only the config
    says it moved: the row must name the view now read, not the one read before."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    write_v3_view(tmp_path / "m", "a", fixture_listing(mirrors, 3))
    write_v3_view(tmp_path / "m", "b", fixture_listing(mirrors, 3))
    url = str(tmp_path / "m")
    with Catalog(make_config(tmp_path, [{"name": "t", "url": url}]).catalog) as catalog:
        for view in ("a", "b"):
            config = make_config(tmp_path, [{"name": "t", "url": url, "stacks": {"s": {"view": view}}}])
            (outcome,) = sync(config, catalog)
            assert outcome.ok, outcome.error
        state = catalog.mirror_state("t", "s")
        assert state is not None and state.view == "b"
        assert catalog.listed_hashes("t", "s") == listed_in(fixture_listing(mirrors, 3))
