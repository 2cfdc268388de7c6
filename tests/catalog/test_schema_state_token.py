"""The state token moves with every commit that changes what pages show and never comes
back to a value an earlier state had (servers and site builds key what they keep on it);
reads in one snapshot see one state; writes leave foreign keys enforced."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.catalog.verifications import MirrorVerification, SignatureCounts
from tests.helpers import _db, record, write_tag


def _verification(tag: str) -> MirrorVerification:
    return MirrorVerification(
        tag, "root", "/m", None, 3, 1.0, 2.0, False, ("index",), (), 1, 1, 0, "unsigned",
        (), SignatureCounts(), (), 0,
    )  # fmt: skip


def test_a_verification_stored_moves_the_token_a_reader_sees(tmp_path: Path) -> None:
    """Verification pages change with no sync: a server must not answer from its cache."""
    path = tmp_path / "c.sqlite"
    with Catalog(path) as writer, Catalog(path, readonly=True) as reader:
        write_tag(writer, "t", [record("a" * 32)])
        before = (writer.state_token(), reader.state_token())
        assert before[0] == before[1]
        assert writer.store_verification(_verification("t"), [], "")
        assert writer.state_token() != before[0]
        assert reader.state_token() != before[1]
        assert reader.state_token() == writer.state_token()


def test_forgetting_a_tag_gives_a_token_no_earlier_state_had(tmp_path: Path) -> None:
    """Forgetting the last synced tag takes the highest sync id back to an earlier one: the
    token must still be new, or a cache keyed on it would serve the pages of back then."""
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        seen = [catalog.state_token()[0]]
        write_tag(catalog, "u", [record("b" * 32, "cmake")])
        seen.append(catalog.state_token()[0])
        assert catalog.forget_tags(["u"]) == {"u": 1}
        seen.append(catalog.state_token()[0])
        assert catalog.store_verification(_verification("t"), [], "")
        seen.append(catalog.state_token()[0])
        catalog.forget_tags(["t"])
        seen.append(catalog.state_token()[0])
        assert len(set(seen)) == len(seen), seen


def test_a_catalog_made_anew_at_the_same_path_has_a_token_of_its_own(tmp_path: Path) -> None:
    """``rm`` then the same first sync gives the same counts: only the catalog's own id
    tells a server that its cached pages are of another catalog."""
    path = tmp_path / "c.sqlite"
    tokens = []
    for _ in range(2):
        with Catalog(path) as catalog:
            write_tag(catalog, "t", [record("a" * 32)])
            tokens.append(catalog.state_token()[0])
        for leftover in tmp_path.glob("c.sqlite*"):
            leftover.unlink()
    assert tokens[0] != tokens[1]


def test_foreign_keys_are_enforced_again_after_a_tag_is_written(tmp_path: Path) -> None:
    """A tag's write turns enforcement off for speed; every later write (forget, gc,
    sizes) relies on it being back on, whether the tag's write committed or failed."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        assert _db(catalog).execute("PRAGMA foreign_keys").fetchone()[0] == 1
        with pytest.raises(RuntimeError), catalog.writing_tag("u"):
            raise RuntimeError("boom")
        assert _db(catalog).execute("PRAGMA foreign_keys").fetchone()[0] == 1
        with pytest.raises(sqlite3.IntegrityError):
            _db(catalog).execute("INSERT INTO nodes VALUES (999, 'x')")  # no spec 999


def test_reads_in_one_snapshot_see_one_state_while_a_sync_commits(tmp_path: Path) -> None:
    """A page built from several reads must not mix the states before and after a sync."""
    path = tmp_path / "c.sqlite"
    with Catalog(path) as writer, Catalog(path, readonly=True) as reader:
        write_tag(writer, "t", [record("a" * 32)])
        with reader.snapshot():
            first = (reader.tag_names(), reader.state_token())
            write_tag(writer, "u", [record("b" * 32, "cmake")])
            assert (reader.tag_names(), reader.state_token()) == first
        assert reader.tag_names() == ["t", "u"] and reader.state_token() != first[1]
