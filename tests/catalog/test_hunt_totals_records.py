"""Mutation-hunt tests for ``catalog/totals.py`` and ``Catalog.record_sizes``: the
records a re-sync counts over every mirror, the count of new sizes, and a read-only
catalog refusing to record sizes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.errors import CatalogError
from tests.helpers import record, replace_mirror, write_tag

A, B, C = "a" * 32, "b" * 32, "c" * 32


def _totals(catalog: Catalog, tag: str = "dev") -> tuple[int, int, int, int, int]:
    (stats,) = catalog.tag_stats([tag])
    return stats.records, stats.specs, stats.packages, stats.size, stats.sized


def test_a_resync_of_the_root_still_counts_the_records_only_a_kept_stack_holds(tmp_path: Path) -> None:
    """A record only a stack holds stays a record when a later sync rewrites just the root."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5"), record(C, "tmux")], {})
            replace_mirror(writer, "root", {A: True})
            replace_mirror(writer, "s1", {A: True, B: True, C: False})
        assert _totals(catalog)[:2] == (3, 1)
        with catalog.writing_tag("dev") as writer:
            replace_mirror(writer, "root", {A: True, B: True}, checksum="y")
            writer.keep_mirror("s1", "/m", fetched_at=1.0, etag=None, last_modified=None)
        assert _totals(catalog)[:3] == (3, 2, 2)


def test_recording_only_sizes_already_known_counts_none_new(tmp_path: Path) -> None:
    """``record_sizes`` returns 0 (not 1) when every size given was known, and the totals stay."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", [record(A)], sizes={A: 100})
        ids = catalog.spec_ids([A])
        assert catalog.record_sizes({ids[A]: 999}) == 0
        assert _totals(catalog)[3:] == (100, 1)


def test_recording_sizes_of_unknown_ids_counts_none_new(tmp_path: Path) -> None:
    """A spec id the catalog does not hold is no new size (and adds nothing to a tag)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", [record(A)])
        ids = catalog.spec_ids([A])
        assert catalog.record_sizes({ids[A] + 1000: 5}) == 0
        assert _totals(catalog)[3:] == (0, 0)


def test_a_read_only_catalog_refuses_to_record_even_no_sizes(tmp_path: Path) -> None:
    """Read-only, ``record_sizes`` says so even when given nothing to record."""
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "dev", [record(A)])
    reader = Catalog(path, readonly=True)
    try:
        with pytest.raises(CatalogError, match="read-only"):
            reader.record_sizes({})
    finally:
        reader.close()


def test_recording_no_sizes_takes_no_write_lock(tmp_path: Path) -> None:
    """Nothing to record returns 0 at once, even while another connection is writing."""
    path = tmp_path / "c.sqlite"
    with Catalog(path, write_wait=0.05) as catalog:
        write_tag(catalog, "dev", [record(A)])
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            assert catalog.record_sizes({}) == 0
        finally:
            other.execute("ROLLBACK")
            other.close()
