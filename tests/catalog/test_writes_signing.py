"""Whether a mirror signs, as syncs record it (``catalog/mirror_rows.py``): what a sync
keeps, forgets, and whether the next sync samples the mirror's manifests again."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog, TagWriter
from tests.helpers import _db, record, replace_mirror

A, B, C, D = "a" * 32, "b" * 32, "c" * 32, "d" * 32


def _replace(
    writer: TagWriter,
    members: dict[str, bool],
    *,
    layout: int = 3,
    checksum: str = "x",
    signed: bool | None = None,
    moved: bool = False,
    looked: bool = True,
    fetched_at: float = 1.0,
) -> None:
    replace_mirror(
        writer,
        "root",
        members,
        layout=layout,
        checksum=checksum,
        fetched_at=fetched_at,
        signed=signed,
        moved=moved,
        looked=looked,
    )


def _first_sync(catalog: Catalog, **kwargs: object) -> None:
    with catalog.writing_tag("dev") as writer:
        writer.add_specs([record(A), record(B, "hdf5"), record(C, "tmux")], {})
        _replace(writer, {A: True, B: True, C: True}, **kwargs)  # type: ignore[arg-type]


def test_a_v3_mirror_looked_at_and_not_told_is_not_sampled_again(tmp_path: Path) -> None:
    """Each sync of the same index would read the same unreadable manifests again."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _first_sync(catalog)
        assert catalog.signing_samples("dev", "root", 3) == []


def test_a_v3_mirror_a_passing_failure_kept_from_telling_is_sampled_again(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _first_sync(catalog, looked=False)
        assert len(catalog.signing_samples("dev", "root", 3)) == 3


def test_a_v2_mirror_not_told_is_sampled_next_time(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _first_sync(catalog, layout=2)
        assert len(catalog.signing_samples("dev", "root", 3)) == 3


def test_samples_are_the_first_middle_and_last_listed_specs(tmp_path: Path) -> None:
    """Spread over the listing, and never a spec without a binary (it has no manifest to read)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(A), record(D, "cmake"), record(B, "hdf5"), record(C, "tmux")], {})
            _replace(writer, {A: True, D: False, B: True, C: True}, layout=2)
        samples = catalog.signing_samples("dev", "root", 3)
        assert [s[0] for s in samples] == [A, B, C]
        assert [s[0] for s in catalog.signing_samples("dev", "root", 1)] == [A]


def test_a_mirror_that_moved_forgets_whether_it_signed(tmp_path: Path) -> None:
    """Another server now: what the old one did says nothing of it."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _first_sync(catalog, signed=True)
        with catalog.writing_tag("dev") as writer:
            _replace(writer, {A: True}, checksum="y")
        state = catalog.mirror_state("dev", "root")
        assert state is not None and state.signed is True
        with catalog.writing_tag("dev") as writer:
            _replace(writer, {A: True, B: True}, checksum="z", moved=True)
        state = catalog.mirror_state("dev", "root")
        assert state is not None and state.signed is None


def test_a_sync_not_told_keeps_when_the_signing_was_found(tmp_path: Path) -> None:
    """A verification newer than that finding overrides it: a later sync that read nothing must not
    make the old finding look newer."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _first_sync(catalog, signed=True, fetched_at=1.0)
        with catalog.writing_tag("dev") as writer:
            _replace(writer, {A: True}, checksum="y", fetched_at=2.0)
        with catalog.writing_tag("dev") as writer:
            writer.keep_mirror("root", "/m", fetched_at=3.0, etag=None, last_modified=None)
        assert _db(catalog).execute("SELECT signed, signed_at FROM mirrors").fetchall() == [(1, 1.0)]


def test_a_changed_index_a_passing_failure_kept_from_telling_is_sampled_again(tmp_path: Path) -> None:
    """Looked at before, not told this time for a passing reason (a timeout): the next sync asks again."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _first_sync(catalog)
        with catalog.writing_tag("dev") as writer:
            _replace(writer, {A: True, B: True, C: True}, checksum="y", looked=False)
        assert len(catalog.signing_samples("dev", "root", 3)) == 3
