"""A tag's totals as syncs and recorded sizes leave them (``catalog/totals.py``):
records over all mirrors, the root's listed specs, packages, size and sized."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from tests.helpers import record, replace_mirror, write_tag

A, B, C, D = "a" * 32, "b" * 32, "c" * 32, "d" * 32


def _totals(catalog: Catalog, tag: str = "dev") -> tuple[int, int, int, int, int]:
    (stats,) = catalog.tag_stats([tag])
    return stats.records, stats.specs, stats.packages, stats.size, stats.sized


def test_a_first_sync_counts_a_record_two_mirrors_hold_once(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5"), record(C, "tmux")], {})
            replace_mirror(writer, "root", {A: True, B: True})
            replace_mirror(writer, "s1", {A: True, C: False})
        assert _totals(catalog)[0] == 3


def test_a_sync_of_one_mirror_counts_a_record_two_mirrors_hold_once(tmp_path: Path) -> None:
    """The root changed and the stack was kept: the records are counted over both again."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5")], {})
            replace_mirror(writer, "root", {A: True})
            replace_mirror(writer, "s1", {A: True, B: True})
        with catalog.writing_tag("dev") as writer:
            replace_mirror(writer, "root", {A: True, B: True}, checksum="y")
            writer.keep_mirror("s1", "/m", fetched_at=1.0, etag=None, last_modified=None)
        assert _totals(catalog)[:2] == (2, 2)


def test_packages_count_names_and_sized_counts_only_specs_of_a_known_size(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        zlibs = [record(A), record(B, version="1.2.13"), record(C, "hdf5")]
        write_tag(catalog, "dev", zlibs, sizes={A: 100})
        assert _totals(catalog) == (3, 3, 2, 100, 1)


def test_the_totals_count_only_what_the_root_lists(tmp_path: Path) -> None:
    """Held but not listed (a dependency without a binary) is a record, not a listed spec."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", [record(A), record(B, "hdf5")], members={A: True, B: False}, sizes={A: 10, B: 20})
        assert _totals(catalog) == (2, 1, 1, 10, 1)


def test_a_size_recorded_later_is_added_once_and_only_where_the_root_lists_it(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5"), record(C, "tmux"), record(D, "cmake")], {A: 100})
            replace_mirror(writer, "root", {A: True, B: True, C: False})
            replace_mirror(writer, "s1", {B: True, D: True})
        ids = catalog.spec_ids([A, B, C, D])
        # a's size is known already; b is listed by the root (and a stack); c only held; d only a stack's
        assert catalog.record_sizes({ids[A]: 100, ids[B]: 7, ids[C]: 30, ids[D]: 40}) == 3
        assert _totals(catalog)[3:] == (107, 2)


def test_sizes_recorded_one_after_the_other_are_each_added_once(tmp_path: Path) -> None:
    """Two recordings on one connection (a sync, then a verification): the first's sizes are not added again."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", [record(A), record(B, "hdf5")])
        ids = catalog.spec_ids([A, B])
        assert catalog.record_sizes({ids[A]: 100}) == 1
        assert catalog.record_sizes({ids[B]: 50}) == 1
        assert _totals(catalog)[3:] == (150, 2)
