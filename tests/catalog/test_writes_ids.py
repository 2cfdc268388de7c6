"""Ids a write gives after something was forgotten: a spec's and a sync's are never
given twice (``catalog/bulk_load.py``'s max id, ``catalog/writer.py``'s sync id)."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from tests.helpers import _db, record, write_tag

A, B, C = "a" * 32, "b" * 32, "c" * 32


def test_a_sync_after_gc_removed_an_early_spec_gets_new_ids(tmp_path: Path) -> None:
    """Fewer specs than the largest id: counting them would give an id in use, and the sync would fail."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "gone", [record(A)])
        write_tag(catalog, "keep", [record(B, "hdf5")])
        catalog.forget_tags({"gone": None})
        assert catalog.collect_garbage(vacuum=False)[0] == 1
        write_tag(catalog, "new", [record(C, "tmux")])
        assert set(catalog.spec_ids([A, B, C])) == {B, C}
        assert catalog.listed_hashes("new") == {C}


def test_a_sync_after_the_newest_sync_s_tag_was_forgotten_is_a_new_sync(tmp_path: Path) -> None:
    """Feeds name their entries by sync: an id given again would show the forgotten tag's entry as this one."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "keep", [record(A)])
        write_tag(catalog, "gone", [record(B, "hdf5")])
        (gone_sync,) = _db(catalog).execute("SELECT max(id) FROM syncs").fetchone()
        catalog.forget_tags({"gone": None})
        with catalog.writing_tag("keep") as writer:
            writer.keep_mirror("root", "/m", fetched_at=1.0, etag=None, last_modified=None)
        (new_sync,) = _db(catalog).execute("SELECT max(id) FROM syncs").fetchone()
        assert new_sync > gone_sync
