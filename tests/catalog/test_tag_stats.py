"""A tag's totals (``tag_stats``) and its mirrors' stored state, as ``stats``, the home
page and the mirrors page read them."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from tests.helpers import record, replace_mirror

A, B, C = "a" * 32, "b" * 32, "c" * 32


def test_the_last_sync_is_the_newest_and_only_the_first_is_called_first(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5"), record(C, "mpich")], {})
            replace_mirror(writer, "root", {A: True, B: True})
        (first,) = catalog.tag_stats(["dev"])
        assert first.last_was_first is True
        with catalog.writing_tag("dev") as writer:
            replace_mirror(writer, "root", {A: True, B: True, C: True}, checksum="y")
        (second,) = catalog.tag_stats(["dev"])
        assert (second.added, second.removed, second.last_was_first) == (1, 0, False)
        with catalog.writing_tag("dev") as writer:
            replace_mirror(writer, "root", {A: True}, checksum="z")
        (third,) = catalog.tag_stats(["dev"])
        assert (third.added, third.removed, third.last_was_first) == (0, 2, False)


def test_stacks_are_counted_without_the_root_and_without_dropped_ones(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5")], {})
            replace_mirror(writer, "root", {A: True})
            replace_mirror(writer, "s1", {A: True})
            replace_mirror(writer, "s2", {B: True})
        assert catalog.tag_stats(["dev"])[0].stacks == 2
        with catalog.writing_tag("dev") as writer:
            replace_mirror(writer, "root", {A: True})
            replace_mirror(writer, "s1", {A: True})
            assert writer.drop_other_stacks() == ["s2"]
        assert catalog.tag_stats(["dev"])[0].stacks == 1


def test_a_tag_the_catalog_does_not_hold_is_left_out_of_the_stats(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A)], {})
            replace_mirror(writer, "root", {A: True})
        assert [s.tag for s in catalog.tag_stats(["nope", "dev"])] == ["dev"]


def test_a_mirror_whose_signing_is_unknown_says_so(tmp_path: Path) -> None:
    """None (never read) is not False ("not signed"): the mirrors page hides the line."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A)], {})
            replace_mirror(writer, "root", {A: True})
            replace_mirror(writer, "signed", {A: True}, url="/s", signed=True)
            replace_mirror(writer, "unsigned", {A: True}, url="/u", signed=False)
        assert {m.stack: m.signed for m in catalog.mirrors("dev")} == {"root": None, "signed": True, "unsigned": False}


def test_sizes_recorded_later_count_once_per_tag_whatever_its_stacks_list(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5")], {})
            replace_mirror(writer, "root", {A: True, B: True})
            replace_mirror(writer, "s1", {A: True})
            replace_mirror(writer, "s2", {A: True, B: True})
        ids = catalog.spec_ids([A, B])
        assert catalog.record_sizes({ids[A]: 100, ids[B]: 20}) == 2
        (stats,) = catalog.tag_stats(["dev"])
        assert (stats.size, stats.sized) == (120, 2)
