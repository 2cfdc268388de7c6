"""What a sync writes of a tag's mirrors: a kept mirror's row, a dropped stack's, and
when the tag was synced (mutations of ``catalog/writer.py`` that passed)."""

from __future__ import annotations

import time
from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.values import Dependency
from tests.helpers import _db, changes, history, record, replace_mirror, write_tag

A, B, C = "a" * 32, "b" * 32, "c" * 32


def test_keeping_a_mirror_changes_only_the_mirror_of_its_own_tag(tmp_path: Path) -> None:
    """Two tags' root mirrors share the stack name 'root': a sync of one must not move the other."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", [record(A)])
        write_tag(catalog, "prod", [record(B, "hdf5")])
        prod_before = catalog.mirror_state("prod", "root")
        with catalog.writing_tag("dev") as writer:
            writer.keep_mirror("root", "/moved", fetched_at=99.0, etag='"e"', last_modified="Mon")
        assert catalog.mirror_state("prod", "root") == prod_before
        dev = catalog.mirror_state("dev", "root")
        assert dev is not None
        assert (dev.url, dev.fetched_at, dev.etag, dev.last_modified) == ("/moved", 99.0, '"e"', "Mon")


def test_a_kept_mirror_read_without_validators_keeps_the_ones_it_had(tmp_path: Path) -> None:
    """A server that answered without an ETag this time: the next sync may still ask with the old one."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A)], {})
            replace_mirror(writer, "root", {A: True}, etag='"e1"', last_modified="Mon", fetched_at=1.0)
        with catalog.writing_tag("dev") as writer:
            writer.keep_mirror("root", "/m", fetched_at=2.0, etag=None, last_modified=None)
        state = catalog.mirror_state("dev", "root")
        assert state is not None
        assert (state.etag, state.last_modified, state.fetched_at) == ('"e1"', "Mon", 2.0)


def test_a_dropped_stack_lists_nothing_and_forgets_its_index(tmp_path: Path) -> None:
    """Its checksum gone, a stack put back later is read whole even if its index did not change."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5")], {})
            replace_mirror(writer, "root", {A: True})
            replace_mirror(writer, "s1", {A: True})
            replace_mirror(writer, "s2", {B: True, A: False})
        with catalog.writing_tag("dev") as writer:
            writer.keep_mirror("root", "/m", fetched_at=1.0, etag=None, last_modified=None)
            writer.keep_mirror("s1", "/m", fetched_at=1.0, etag=None, last_modified=None)
            assert writer.drop_other_stacks() == ["s2"]
        # (its row stays, marked dropped, with its history; the reads leave it out)
        assert _db(catalog).execute(
            "SELECT dropped, checksum, etag, records, listed FROM mirrors WHERE stack = 's2'"
        ).fetchall() == [(1, None, None, 0, 0)]
        assert catalog.members_of("dev", "s2") == {}
        assert catalog.tag_stats(["dev"])[0].records == 1  # only a, which the root and s1 hold


def test_a_stack_dropped_before_is_not_dropped_again(tmp_path: Path) -> None:
    """The sync says which stacks it dropped: one dropped by an earlier sync is not news."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5")], {})
            replace_mirror(writer, "root", {A: True})
            replace_mirror(writer, "s2", {B: True})
        for _ in range(2):
            with catalog.writing_tag("dev") as writer:
                writer.keep_mirror("root", "/m", fetched_at=1.0, etag=None, last_modified=None)
                dropped = writer.drop_other_stacks()
        assert dropped == []
        assert [change for *_, change in changes(catalog, "dev", "s2")] == [-1]


def test_a_sync_that_changed_nothing_still_says_when_the_tag_was_synced(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", [record(A)])
        time.sleep(0.01)
        with catalog.writing_tag("dev") as writer:
            writer.keep_mirror("root", "/m", fetched_at=1.0, etag=None, last_modified=None)
        (stats,) = catalog.tag_stats(["dev"])
        assert stats.synced_at == history(catalog, "dev")[-1][0]
        assert stats.synced_at > history(catalog, "dev")[0][0]


def test_a_stack_put_back_lists_again(tmp_path: Path) -> None:
    """A stack dropped, then configured again: it is a live mirror of the tag once more."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(C, "tmux")], {})
            replace_mirror(writer, "root", {A: True})
            replace_mirror(writer, "s2", {C: True})
        with catalog.writing_tag("dev") as writer:
            writer.keep_mirror("root", "/m", fetched_at=1.0, etag=None, last_modified=None)
            writer.drop_other_stacks()
        assert catalog.tag_stats(["dev"])[0].stacks == 0
        with catalog.writing_tag("dev") as writer:
            writer.keep_mirror("root", "/m", fetched_at=1.0, etag=None, last_modified=None)
            replace_mirror(writer, "s2", {C: True}, checksum="y")
            assert writer.drop_other_stacks() == []
        assert catalog.tag_stats(["dev"])[0].stacks == 1
        assert catalog.members_of("dev", "s2") == {C: True}


def test_every_dangling_edge_is_counted_and_the_first_is_named(tmp_path: Path) -> None:
    """The sync's warning says how many edges of an incomplete index it skipped."""
    missing = (Dependency(name="gone", hash=C, deptypes=2, virtuals=""),)
    other = (Dependency(name="lost", hash="d" * 32, deptypes=2, virtuals=""),)
    with Catalog(tmp_path / "c.sqlite") as catalog, catalog.writing_tag("dev") as writer:
        writer.add_specs([record(A, "app", dependencies=missing), record(B, "tool", dependencies=other)], {})
        replace_mirror(writer, "root", {A: True, B: True})
        assert (writer.dangling, writer.dangling_example) == (2, f"app /{A[:7]} needs gone /{C[:7]}")


def test_the_writer_says_whether_it_wrote_the_root_s_first_listing(tmp_path: Path) -> None:
    """A first sync has nothing to compare with: its +/- counts (0) must not be shown as news."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(B, "hdf5")], {})
            replace_mirror(writer, "root", {A: True})
            assert (writer.root_first, writer.root_added, writer.root_removed) == (True, 0, 0)
        with catalog.writing_tag("dev") as writer:
            replace_mirror(writer, "root", {B: True}, checksum="y")
            assert (writer.root_first, writer.root_added, writer.root_removed) == (False, 1, 1)
