"""What the reuse form offers (its tags in the order people look for them), and what
forked page writers inherit (nothing from a build before theirs)."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.parallel import ForkShared
from cachedex.publish.reuse_page import reuse_view
from tests.helpers import record, write_tag


def test_the_reuse_form_offers_branches_and_their_snapshots_then_releases_newest_first(tmp_path: Path) -> None:
    names = ["aaa-fork", "v0.23.1", "main", "develop-2026-11-08", "v1.0.0", "develop"]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        for n, name in enumerate(names):
            write_tag(catalog, name, [record(f"{n:032x}")])
        view = reuse_view(catalog)
    assert view.tags == ("develop", "develop-2026-11-08", "main", "v1.0.0", "v0.23.1", "aaa-fork")


def test_values_held_for_one_build_are_gone_after_it() -> None:
    """A second site build in the same process must not write with the first one's graph or links."""
    shared = ForkShared()
    with shared.holding(links="first"):
        shared.set("graph", "first graph")
        assert (shared.get("links"), shared.get("graph")) == ("first", "first graph")
    assert shared.get("links", "default") == "default"
    assert shared.get("graph") is None
