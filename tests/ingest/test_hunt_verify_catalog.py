"""What the catalog keeps of verifications and reads back: a verification begun the
instant its tag was forgotten, the problems kept for the latest verifications only, and
the rest of what ``cachedex verify`` records and shows. A real catalog (SQLite file)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.catalog.verifications import (
    KEEP_PROBLEMS,
    MirrorVerification,
    Problem,
    SignatureCounts,
    SpecSignature,
)
from tests.helpers import record, replace_mirror, write_tag

A, B = "a" * 32, "b" * 32
NOW = 2_000_000_000.0


def _verification(tag: str = "t", stack: str = "root", **fields: object) -> MirrorVerification:
    result = MirrorVerification(
        tag, stack, "/m", None, 3, NOW, NOW + 1, False, ("index",), (), 1, 1, 1, "unsigned",
        (), SignatureCounts(), (), 0,
    )  # fmt: skip
    return msgspec.structs.replace(result, **fields)


def _problem(n: int) -> Problem:
    return Problem("tarball-missing", f"/m/blobs/{n}", f"binary {n} is missing", A)


def test_a_verification_begun_the_instant_its_tag_was_forgotten_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forgetting may have removed its tag's rows after it began: its own would then
    outlive the tag. One begun later is kept."""
    monkeypatch.setattr(time, "time", lambda: NOW)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A)])
        catalog.forget_tags({"t": None})
        write_tag(catalog, "t", [record(B, "cmake")], checksum="2")
        assert catalog.store_verification(_verification(started_at=NOW), [], "") == 0
        assert catalog.tag_verification("t") is None
        assert catalog.store_verification(_verification(started_at=NOW + 1), [], "") > 0
        assert catalog.tag_verification("t") is not None


def test_the_problems_of_the_latest_verifications_of_a_mirror_are_kept_older_ones_counted(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record(A)])
        runs = [
            catalog.store_verification(_verification(problems=(_problem(n),), problem_count=1), [], "")
            for n in range(KEEP_PROBLEMS + 2)
        ]
        # another mirror of the tag, verified as often since, takes none of them away
        with catalog.writing_tag("t") as writer:
            replace_mirror(writer, "e4s", {A: True})
        for n in range(KEEP_PROBLEMS + 2):
            catalog.store_verification(_verification(stack="e4s", problems=(_problem(n),), problem_count=1), [], "")
    with sqlite3.connect(path) as db:
        kept = {
            run
            for (run,) in db.execute(
                "SELECT DISTINCT verification_id FROM verification_problems "
                "JOIN verifications v ON v.id = verification_id WHERE v.stack = 'root'"
            )
        }
        counted = dict(db.execute("SELECT id, problems FROM verifications WHERE stack = 'root'"))
    assert kept == set(runs[-KEEP_PROBLEMS:])
    assert all(counted[run] == 1 for run in runs)


def test_problems_read_with_a_limit_are_the_first_found_in_their_order(tmp_path: Path) -> None:
    # The command prints the first problems of a mirror and counts the rest.
    found = tuple(_problem(n) for n in range(3))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A)])
        catalog.store_verification(_verification(problems=found, problem_count=3), [], "")
        (latest,) = catalog.latest_verifications("t", problems=2)
        assert latest.problems == found[:2] and latest.problem_count == 3
        (whole,) = catalog.latest_verifications("t")
        assert whole.problems == found


def _three_stacks(catalog: Catalog) -> None:
    """Tag ``t`` with a root mirror and stacks sorting before and after ``root``."""
    write_tag(catalog, "t", [record(A), record(B, "cmake")])
    with catalog.writing_tag("t") as writer:
        for stack in ("cuda", "tutorial"):
            replace_mirror(writer, stack, {A: True})


def test_the_root_mirror_comes_first_then_stacks_by_name(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _three_stacks(catalog)
        for stack in ("tutorial", "root", "cuda"):
            problem = Problem("unsigned", f"/m/{stack}/a.spec.manifest.json", "no signature", A)
            catalog.store_verification(_verification(stack=stack, problems=(problem,), problem_count=1), [], "")
        order = ["root", "cuda", "tutorial"]
        assert [m.stack for m in catalog.latest_verifications("t")] == order
        assert [v.stack for v in catalog.spec_verifications(A)] == order


def test_a_dropped_stack_s_verification_is_not_shown(tmp_path: Path) -> None:
    """A stack taken out of the config keeps its row (for a stack put back), not its
    place in the tag's verification: its problems no longer count."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _three_stacks(catalog)
        problem = Problem("tarball-missing", "/m/cuda/blob", "binary missing", A)
        catalog.store_verification(_verification(stack="cuda", problems=(problem,), problem_count=1), [], "")
        catalog.store_verification(_verification(stack="root"), [], "")
        tag = catalog.tag_verification("t")
        assert tag is not None and (tag.ok, tag.problems) == (False, 1)
        with catalog.writing_tag("t") as writer:
            replace_mirror(writer, "root", {A: True, B: True}, checksum="2")
            replace_mirror(writer, "tutorial", {A: True})
            assert writer.drop_other_stacks() == ["cuda"]
        tag = catalog.tag_verification("t")
        assert tag is not None and (tag.ok, tag.problems) == (True, 0)
        assert [m.stack for m in tag.mirrors] == ["root"]
        assert catalog.spec_verifications(A) == []


def test_a_spec_s_verification_holds_its_problems_not_the_mirror_s(tmp_path: Path) -> None:
    mirror_problem = Problem("index-checksum", "/m/index.json", "checksum differs")  # (no spec)
    a_problem = Problem("tarball-size", "/m/a.spack", "size differs", A)
    b_problem = Problem("tarball-missing", "/m/b.spack", "binary missing", B)
    a_later = Problem("unsigned", "/m/a.spec.manifest.json", "no signature", A)
    found = (mirror_problem, a_problem, b_problem, a_later)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A), record(B, "cmake")])
        catalog.store_verification(_verification(problems=found, problem_count=4), [], "")
        (a,) = catalog.spec_verifications(A)
        assert a.problems == (a_problem, a_later)  # (in the order found)
        (b,) = catalog.spec_verifications(B)
        assert b.problems == (b_problem,)
        assert set(catalog.all_spec_verifications()) == {A, B}


def test_signatures_are_reused_only_with_the_same_keys_and_a_digest(tmp_path: Path) -> None:
    """A later verification skips a file whose digest did not change, verified with the
    same keys: a status without a digest (no file read) is none to reuse."""
    signed = SpecSignature(A, "signed", "F" * 40, "d" * 64)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A), record(B, "cmake")])
        catalog.store_verification(_verification(), [signed, SpecSignature(B, "unsigned")], "keys-1")
        assert catalog.previous_signatures("t", "root", "keys-1") == {A: signed}
        assert catalog.previous_signatures("t", "root", "keys-2") == {}
        assert catalog.previous_signatures("t", "e4s", "keys-1") == {}
        # the mirror now publishes other keys: what the older keys found is not reused
        catalog.store_verification(_verification(), [signed], "keys-2")
        assert catalog.previous_signatures("t", "root", "keys-1") == {}
        assert catalog.previous_signatures("t", "root", "keys-2") == {A: signed}


def test_a_verification_that_read_keys_alone_says_the_mirror_signs(tmp_path: Path) -> None:
    """Its spec manifests all missing, a mirror publishing keys signs: a verification
    no older than the sync that found it plain says so (at the same instant too: it read
    more than the sync's sample), and Spack is not told --unsigned."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record(A)], {})
            replace_mirror(writer, "root", {A: True}, signed=False, fetched_at=NOW)
        assert catalog.unsigned_mirrors() == {("t", "root")}
        keys_only = _verification(found=0, signing="signed", keys=("F" * 40,), finished_at=NOW)
        catalog.store_verification(keys_only, [], "")
        assert catalog.unsigned_mirrors() == frozenset()


def test_a_verification_of_a_mirror_s_former_url_says_nothing_of_it(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A)])  # (at /m, its signing not known)
        catalog.store_verification(_verification(url="/old", signing="unsigned"), [], "")
        assert catalog.unsigned_mirrors() == frozenset()
        catalog.store_verification(_verification(url="/m", signing="unsigned"), [], "")
        assert catalog.unsigned_mirrors() == {("t", "root")}


def test_a_sync_that_could_not_tell_leaves_an_older_verification_s_word(tmp_path: Path) -> None:
    """A sync after the verification that looked and could not tell whether the mirror
    signs (``signed`` unknown) does not undo what the verification found."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        catalog.store_verification(_verification(signing="unsigned", finished_at=NOW - 10), [], "")
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record(A)], {})
            replace_mirror(writer, "root", {A: True}, signed=None, fetched_at=NOW)
        assert catalog.mirror_state("t", "root").signed is None  # type: ignore[union-attr]
        assert catalog.unsigned_mirrors() == {("t", "root")}
