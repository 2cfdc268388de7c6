"""Syncing real Spack mirrors into the catalog: stacks, incremental re-syncs, history,
and failures that leave the catalog exactly as it was (local folders and HTTP)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

import pytest

from cachedex.catalog import Catalog, bulk_load, writer
from cachedex.diff import diff_since
from cachedex.ingest.sync import sync
from cachedex.ingest.tag_reads import MirrorRead, TagReader
from cachedex.values import MirrorRef, tarball_path_v2
from tests.helpers import (
    LIBDWARF_CORE2,
    LIBELF_CORE2,
    changes,
    dependencies,
    dump,
    fixture_index,
    history,
    integrity_check,
    listed_specs,
    make_config,
    spec_row,
    write_v2_mirror,
)


def test_sync_real_mirrors_with_stacks(mirrors: Path, tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        [
            {
                "name": "develop",
                "url": str(mirrors / "v2_layout/unsigned"),
                "stacks": {"signed": str(mirrors / "v2_layout/signed"), "old": str(mirrors / "legacy_yaml")},
            }
        ],
    )
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert (outcome.records, outcome.specs, outcome.packages, outcome.stacks) == (8, 6, 4, 2)
        assert outcome.new_specs == 8  # 7 from the root, 1 only in the 'old' stack
        stacks = {m.stack: m for m in catalog.mirrors("develop")}
        assert set(stacks) == {"root", "signed", "old"}
        assert (stacks["root"].layout, stacks["root"].db_version, stacks["root"].records) == (2, 8, 7)
        assert stacks["old"].db_version == 6
        assert catalog.listed_hashes("develop", "old") == {"t5mczux3tfqpxwmg7egp7axy2jvyulqk"}
        deps = {name for _h, name, _t, _v in dependencies(catalog, "u5uz3dcch5if4eve4sef67o2rf2lbfgh")}
        assert deps == {"compiler-wrapper", "gcc", "gcc-runtime", "libelf"}
        assert integrity_check(catalog) == "ok"


@pytest.mark.parametrize("stack_changes", [False, True], ids=["the root changed", "a stack changed too"])
def test_a_tag_s_records_count_every_mirror_s_specs_once(mirrors: Path, tmp_path: Path, stack_changes: bool) -> None:
    """Counted from the ids written when every mirror's listing was (the first sync),
    by SQLite when a mirror was kept as it was (the old stack, after): each spec once,
    whatever lists it."""
    write_v2_mirror(tmp_path / "root", fixture_index(mirrors))
    write_v2_mirror(tmp_path / "stack", fixture_index(mirrors, drop=(LIBDWARF_CORE2,)))
    config = make_config(
        tmp_path,
        [
            {
                "name": "t",
                "url": str(tmp_path / "root"),
                "stacks": {"s": str(tmp_path / "stack"), "old": str(mirrors / "legacy_yaml")},
            }
        ],
    )
    with Catalog(config.catalog) as catalog:
        (first,) = sync(config, catalog)
        write_v2_mirror(tmp_path / "root", fixture_index(mirrors, drop=(LIBELF_CORE2, LIBDWARF_CORE2)))
        if stack_changes:
            write_v2_mirror(tmp_path / "stack", fixture_index(mirrors, drop=(LIBDWARF_CORE2, LIBELF_CORE2)))
        (second,) = sync(config, catalog)
        assert first.ok and second.ok, (first.error, second.error)
        (counted,) = catalog._db.execute(
            "SELECT count(DISTINCT spec_id) FROM members JOIN mirrors ON mirrors.id = mirror_id "
            "JOIN tags ON tags.id = tag_id WHERE tags.name = 't'"
        ).fetchone()
        # The old stack's own spec, and LIBELF_CORE2 while the stack still lists it.
        assert (first.records, second.records) == (8, counted) == (8, 6 if stack_changes else 7)


def test_each_spec_is_stored_once_across_tags(mirrors: Path, tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        [
            {"name": "a", "url": str(mirrors / "v2_layout/unsigned")},
            {"name": "b", "url": str(mirrors / "v2_layout/signed")},
        ],
    )
    with Catalog(config.catalog) as catalog:
        first, second = sync(config, catalog)
        assert (first.new_specs, second.new_specs) == (7, 0)
        assert len([row for row in dump(catalog) if row[0] == "specs"]) == 7
        # a tag named twice is synced once, in the order first named
        assert [outcome.tag for outcome in sync(config, catalog, ["b", "a", "b"])] == ["b", "a"]


def test_resync_of_an_unchanged_mirror_reads_no_index(mirrors: Path, tmp_path: Path) -> None:
    config = make_config(tmp_path, [{"name": "t", "url": str(mirrors / "v2_layout/unsigned")}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        (again,) = sync(config, catalog)
        assert again.ok and not any(m.changed for m in again.mirrors)
        assert (again.added, again.removed, again.new_specs) == (0, 0, 0)
        assert history(catalog, "t")[-1][1:] == (0, 0)


def test_history_records_what_a_resync_added_and_removed(mirrors: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "m"
    write_v2_mirror(mirror, fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    config = make_config(tmp_path, [{"name": "develop", "url": str(mirror)}])
    with Catalog(config.catalog) as catalog:
        (first,) = sync(config, catalog)
        assert (first.specs, first.added, first.removed) == (5, 0, 0)
        write_v2_mirror(mirror, fixture_index(mirrors, drop=(LIBDWARF_CORE2,)))
        (second,) = sync(config, catalog)
        assert (second.specs, second.added, second.removed) == (5, 1, 1)
        recorded = {(h, change) for _when, h, _name, change in changes(catalog, "develop")}
        assert recorded == {(LIBELF_CORE2, 1), (LIBDWARF_CORE2, -1)}
        assert LIBDWARF_CORE2 not in catalog.listed_hashes("develop")
        # the dropped spec stays in the catalog (another tag, or the history, may need it)
        assert spec_row(catalog, LIBDWARF_CORE2) is not None


def test_data4_a_removed_stack_is_dropped_from_the_tag_and_said_so(mirrors: Path, tmp_path: Path) -> None:
    """Its specs are recorded as removed, and a stack put back as added: its history
    went with it, and a stack dropped for one sync and put back showed every spec as
    added in a diff since before (the listing then had them all)."""
    stacks = {"s": str(mirrors / "legacy_yaml")}
    tag: dict[str, object] = {"name": "t", "url": str(mirrors / "v2_layout/unsigned"), "stacks": stacks}
    with Catalog(tmp_path / "cat.sqlite") as catalog:
        sync(make_config(tmp_path, [tag]), catalog)
        listed = {h for h, is_listed in catalog.members_of("t", "s").items() if is_listed}
        before = time.time()
        time.sleep(0.01)
        del tag["stacks"]
        (outcome,) = sync(make_config(tmp_path, [tag]), catalog)
        assert [m.stack for m in catalog.mirrors("t")] == ["root"] and catalog.tag_stats(["t"])[0].stacks == 0
        assert listed and {(h, c) for _, h, _, c in changes(catalog, "t", "s")} == {(h, -1) for h in listed}
        between = time.time()
        time.sleep(0.01)
        dropped = diff_since(catalog, "t", before, "then")
        assert [(d.stack, len(d.removed), len(d.added)) for d in dropped.stacks if d.stack == "s"] == [
            ("s", len(listed), 0)
        ]
        (quiet,) = sync(make_config(tmp_path, [tag]), catalog)
        assert quiet.dropped_stacks == () and not quiet.changed  # said once
        tag["stacks"] = stacks
        (back,) = sync(make_config(tmp_path, [tag]), catalog)
        assert back.ok and [m.stack for m in catalog.mirrors("t")] == ["root", "s"]
        assert {h for h, is_listed in catalog.members_of("t", "s").items() if is_listed} == listed
        assert not [d for d in diff_since(catalog, "t", before, "then").stacks if d.stack == "s"]  # as it was
        returned = [d for d in diff_since(catalog, "t", between, "then").stacks if d.stack == "s"]
        assert [(len(d.removed), len(d.added)) for d in returned] == [(0, len(listed))]
    assert outcome.dropped_stacks == ("s",)
    assert outcome.changed  # not "unchanged", although no index changed
    gone = "stack s is gone from tag t (no longer configured, or its view no longer in the mirror)"
    assert f"{gone}: its specs are recorded as removed" in outcome.warnings


def test_a_v2_index_without_its_hash_file_is_read_and_said_unverified(mirrors: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "m"
    write_v2_mirror(mirror, fixture_index(mirrors))
    config = make_config(tmp_path, [{"name": "t", "url": str(mirror)}])
    with Catalog(config.catalog) as catalog:
        (verified,) = sync(config, catalog)
        (mirror / "build_cache/index.json.hash").unlink()
        (unverified,) = sync(config, catalog)
    assert verified.ok and not any("unverified" in w for w in verified.warnings)
    expected = f"root: {mirror}/build_cache/index.json has no index.json.hash beside it: read unverified"
    assert unverified.ok and expected in unverified.warnings
    # One that is there but holds no sha256 is read as Spack reads it (no check), and said
    # so: it was said to be missing.
    write_v2_mirror(mirror, fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    (mirror / "build_cache/index.json.hash").write_text("0000\n")
    with Catalog(config.catalog) as catalog:
        (malformed,) = sync(config, catalog)
    expected = (
        f"root: {mirror}/build_cache/index.json has an index.json.hash holding no sha256 ('0000\\n'): read unverified"
    )
    assert malformed.ok and expected in malformed.warnings, malformed.warnings


def test_a_dependency_no_index_holds_is_said_at_sync(mirrors: Path, tmp_path: Path) -> None:
    """Spack's index holds every dependency of its specs (those without a binary too);
    one that lacks some cannot show them, and the sync says so."""
    mirror = tmp_path / "m"
    index = fixture_index(mirrors, drop=(LIBELF_CORE2,))  # libdwarf's dependency
    write_v2_mirror(mirror, index)
    config = make_config(tmp_path, [{"name": "t", "url": str(mirror)}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    (warning,) = [w for w in outcome.warnings if "no index of the tag holds" in w]
    assert warning == (
        f"new specs have 1 dependency edge to specs no index of the tag holds (e.g. libdwarf /sk2gqqz needs "
        f"libelf /{LIBELF_CORE2[:7]}); pages and searches cannot show those dependencies"
    )
    with Catalog(tmp_path / "whole.sqlite") as whole:
        write_v2_mirror(tmp_path / "w", fixture_index(mirrors))
        (complete,) = sync(make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "w")}]), whole)
    assert not any("no index of the tag holds" in w for w in complete.warnings)


def test_a_dependency_only_a_stack_holds_is_linked_once_the_stack_is_read(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a bulk load the stacks are read after the root's new specs are written (while
    SQLite indexes them): an edge from one of those to a spec that only a stack holds
    waits for it, and is written then, as when the root index holds every spec."""
    monkeypatch.setattr(bulk_load, "BULK_MIN", 1)  # (the fixture's few specs, loaded in bulk)
    write_v2_mirror(tmp_path / "root", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    write_v2_mirror(tmp_path / "stack", fixture_index(mirrors))
    config = make_config(
        tmp_path, [{"name": "t", "url": str(tmp_path / "root"), "stacks": {"e4s": str(tmp_path / "stack")}}]
    )
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok and not any("no index of the tag holds" in w for w in outcome.warnings), outcome
        linked = dependencies(catalog, LIBDWARF_CORE2)
        assert [child for child, *_ in linked] == [LIBELF_CORE2] and integrity_check(catalog) == "ok"
    whole = make_config(tmp_path / "w", [{"name": "t", "url": str(tmp_path / "stack")}])
    with Catalog(whole.catalog) as catalog:
        sync(whole, catalog)
        assert dependencies(catalog, LIBDWARF_CORE2) == linked


def test_a_stack_that_fails_after_the_roots_specs_are_written_leaves_the_catalog_as_it_was(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The root's new specs are in the tag's transaction when a stack read later fails:
    the tag is rolled back whole, and the next sync writes it."""
    monkeypatch.setattr(bulk_load, "BULK_MIN", 1)
    write_v2_mirror(tmp_path / "root", fixture_index(mirrors))
    write_v2_mirror(tmp_path / "stack", fixture_index(mirrors))
    stacks = {"e4s": str(tmp_path / "stack")}
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "root"), "stacks": stacks}])
    index = tmp_path / "stack/build_cache/index.json"
    good = index.read_bytes()
    index.write_bytes(good[: len(good) // 2])
    (tmp_path / "stack/build_cache/index.json.hash").unlink()
    with Catalog(config.catalog) as catalog:
        before = dump(catalog)
        (outcome,) = sync(config, catalog)
        assert outcome.error is not None and outcome.error.startswith(f"{index}: not a valid Spack index")
        assert dump(catalog) == before
        index.write_bytes(good)
        (outcome,) = sync(config, catalog)
        assert outcome.ok and outcome.specs == 6 and integrity_check(catalog) == "ok"


@pytest.mark.parametrize("case", ["first sync in bulk", "not in bulk", "a re-sync", "a stack over HTTP"])
def test_stacks_are_read_under_the_write_lock_only_beside_a_bulk_loads_index_build(  # type: ignore[no-untyped-def]
    case: str, http_server, mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read under the write lock, a stack keeps other writers waiting as long as it takes:
    only a first sync's stacks from folders are, where the reads hide in the build of the
    new rows' indexes. A re-sync whose root changed, a load not in bulk, a stack over the
    network: read before the lock, as the root is."""
    if case != "not in bulk":
        monkeypatch.setattr(bulk_load, "BULK_MIN", 1)
    write_v2_mirror(tmp_path / "root", fixture_index(mirrors))
    write_v2_mirror(http_server.state.root / "stack", fixture_index(mirrors))
    stack = f"{http_server.url}/stack" if case == "a stack over HTTP" else str(http_server.state.root / "stack")
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "root"), "stacks": {"e4s": stack}}])
    locked: list[bool] = []
    read_index = TagReader._read_index

    def noting_the_lock(self: TagReader, ref: MirrorRef, *args: object, **options: bool) -> MirrorRead:
        if ref.stack != "root":
            locked.append(self.catalog._db.in_transaction)
        return read_index(self, ref, *args, **options)  # type: ignore[arg-type]

    with Catalog(config.catalog) as catalog:
        if case == "a re-sync":
            assert sync(config, catalog)[0].ok
            write_v2_mirror(tmp_path / "root", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
            write_v2_mirror(http_server.state.root / "stack", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
        monkeypatch.setattr(TagReader, "_read_index", noting_the_lock)
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    assert locked == [case == "first sync in bulk"]


def test_a_first_sync_finds_its_listings_ids_beside_the_index_build(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread that reads the stacks finds each listing's ids, the root's first; a
    stack holding a spec the root lacks gets its id from the write, after. Every mirror
    lists what its index does."""
    monkeypatch.setattr(bulk_load, "BULK_MIN", 1)
    write_v2_mirror(tmp_path / "root", fixture_index(mirrors))
    write_v2_mirror(tmp_path / "e4s", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    stacks = {"e4s": str(tmp_path / "e4s"), "old": str(mirrors / "legacy_yaml")}
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "root"), "stacks": stacks}])
    asked: list[str] = []
    ids_of = writer.TagWriter._ids_of
    known = writer.TagWriter.known_ids
    threads: set[str] = set()

    def asking(self: writer.TagWriter, members: dict[str, bool], stack: str) -> list[int]:
        asked.append(stack)
        return ids_of(self, members, stack)

    def noting(self: writer.TagWriter, members: dict[str, bool]) -> list[int] | None:
        threads.add(threading.current_thread().name)
        return known(self, members)

    monkeypatch.setattr(writer.TagWriter, "_ids_of", asking)
    monkeypatch.setattr(writer.TagWriter, "known_ids", noting)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert asked == ["old"] and threading.main_thread().name not in threads
        index = fixture_index(mirrors)["database"]["installs"]  # type: ignore[index]
        assert catalog.listed_hashes("t", "root") == {h for h, r in index.items() if r["in_buildcache"]}
        assert catalog.listed_hashes("t", "e4s") == {h for h, r in index.items() if r["in_buildcache"]} - {LIBELF_CORE2}
        assert catalog.listed_hashes("t", "old") == {"t5mczux3tfqpxwmg7egp7axy2jvyulqk"}
        assert integrity_check(catalog) == "ok"


BAD_INDEXES = {
    "truncated JSON": (lambda data: data[: len(data) // 2], "not a valid Spack index"),
    "invalid JSON": (lambda data: b"<html>oops</html>", "not a valid Spack index"),
    "unknown database version": (
        lambda data: data.replace(b'"version":"8"', b'"version":"12"'),
        "Database version 12 is newer",
    ),
    "malformed hash": (lambda data: data.replace(LIBELF_CORE2.encode(), b"NOT_A_HASH", 1), "malformed DAG hash"),
    "duplicate hash": (lambda data: data.replace(LIBDWARF_CORE2.encode(), LIBELF_CORE2.encode(), 1), "appears 2 times"),
}


@pytest.mark.parametrize("case", sorted(BAD_INDEXES))
def test_a_bad_index_leaves_the_catalog_exactly_as_it_was(mirrors: Path, tmp_path: Path, case: str) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    write_v2_mirror(good, fixture_index(mirrors))
    write_v2_mirror(bad, fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    config = make_config(tmp_path, [{"name": "bad", "url": str(bad)}, {"name": "good", "url": str(good)}])
    with Catalog(config.catalog) as catalog:
        assert all(o.ok for o in sync(config, catalog))
        before = dump(catalog)
        # Break the bad mirror (with a consistent hash file, so the parser must catch it)
        # and change the good one: the good tag must still update.
        corrupt, message = BAD_INDEXES[case]
        data = corrupt(json.dumps(fixture_index(mirrors), separators=(",", ":")).encode())
        (bad / "build_cache/index.json").write_bytes(data)
        (bad / "build_cache/index.json.hash").write_text(hashlib.sha256(data).hexdigest())
        write_v2_mirror(good, fixture_index(mirrors, drop=(LIBDWARF_CORE2,)))
        failed, updated = sync(config, catalog)
        assert not failed.ok and message in (failed.error or "")
        assert str(bad / "build_cache/index.json") in (failed.error or "")
        assert updated.ok and updated.removed == 1
        after = dump(catalog)
    # The good tag's change added no spec, so specs and edges must be untouched, and so
    # must every row of the bad tag (tag 1: its tags row, mirrors and members).
    assert _rows(after, "specs", "edges") == _rows(before, "specs", "edges")
    assert _tag_rows(after, tag_id=1) == _tag_rows(before, tag_id=1)


def _rows(rows: list[tuple[object, ...]], *tables: str) -> list[tuple[object, ...]]:
    return [r for r in rows if r[0] in tables]


def _tag_rows(rows: list[tuple[object, ...]], tag_id: int) -> list[tuple[object, ...]]:
    """Every row that belongs to the tag with id ``tag_id``."""
    mirror_ids = {r[1] for r in rows if r[0] == "mirrors" and r[2] == tag_id}
    return [
        r
        for r in rows
        if (r[0] == "mirrors" and r[2] == tag_id)
        or (r[0] == "members" and r[1] in mirror_ids)
        or (r[0] == "tags" and r[1] == tag_id)
    ]


def test_a_failed_sync_of_the_only_tag_changes_nothing(mirrors: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "m"
    write_v2_mirror(mirror, fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    config = make_config(tmp_path, [{"name": "t", "url": str(mirror)}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        before = dump(catalog)
        (mirror / "build_cache/index.json").write_bytes(json.dumps(fixture_index(mirrors)).encode())
        # a new hash file that does not describe the new index
        (mirror / "build_cache/index.json.hash").write_text(hashlib.sha256(b"other").hexdigest())
        (outcome,) = sync(config, catalog)
        assert not outcome.ok and "does not match index.json.hash" in (outcome.error or "")
        assert dump(catalog) == before


# -- over HTTP -------------------------------------------------------------------------


def serve_fixture(http_server, mirrors: Path, name: str = "m") -> str:  # type: ignore[no-untyped-def]
    """Serve a v2 mirror (written from the real test index) at <server>/<name>."""
    write_v2_mirror(http_server.state.root / name, fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    return f"{http_server.url}/{name}"


def test_http_sync_and_incremental_resync(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = serve_fixture(http_server, mirrors)
    config = make_config(tmp_path, [{"name": "t", "url": url}])
    with Catalog(config.catalog) as catalog:
        (first,) = sync(config, catalog)
        assert first.ok and first.specs == 5
        assert http_server.state.count("/m/build_cache/index.json") == 1
        (second,) = sync(config, catalog)
        assert second.ok and not second.mirrors[0].changed
        # the hash file is read again, the index is not
        assert http_server.state.count("/m/build_cache/index.json") == 1
        assert http_server.state.count("/m/build_cache/index.json.hash") == 2


def test_v2_sizes_are_asked_by_head_many_at_once(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`sync --sizes` on a v2 mirror: a HEAD per binary, at once (one at a time, a mirror
    of thousands of binaries took as many round trips)."""
    url = serve_fixture(http_server, mirrors)
    with Catalog(tmp_path / "plan.sqlite") as planned:
        sync(make_config(tmp_path, [{"name": "t", "url": url}]), planned)
        listed = listed_specs(planned, "t")
    expected = {}
    for n, spec in enumerate(listed):
        path = tarball_path_v2(hash=spec.hash, name=spec.name, version=spec.version, compiler=spec.compiler,
                               platform=spec.platform, os=spec.os, target=spec.target)  # fmt: skip
        (http_server.state.root / "m" / path).parent.mkdir(parents=True, exist_ok=True)
        (http_server.state.root / "m" / path).write_bytes(b"x" * (100 + n))
        http_server.state.faults[f"/m/{path}"] = "slow"
        expected[spec.hash] = 100 + n
    http_server.state.stall_seconds = 0.5
    config = make_config(tmp_path, [{"name": "t", "url": url}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog, head_sizes=True)
        assert outcome.ok and {s.hash: s.size for s in listed_specs(catalog, "t")} == expected
    assert len(expected) >= 3 and http_server.state.most_in_flight >= 3


HTTP_FAULTS = {
    "404": ("404", "not found (HTTP 404)"),
    "500": ("500", "server error (HTTP 500), after 2 attempts"),
    "stall": ("stall", "timed out (no data for 1 s), after 2 attempts"),
    "cut": ("cut", "connection closed before the whole answer arrived"),
}


@pytest.mark.parametrize("case", sorted(HTTP_FAULTS))
def test_http_failures_name_the_url_and_change_nothing(  # type: ignore[no-untyped-def]
    http_server, mirrors: Path, tmp_path: Path, case: str
) -> None:
    url = serve_fixture(http_server, mirrors)
    config = make_config(tmp_path, [{"name": "t", "url": url}], timeout=1)
    with Catalog(config.catalog) as catalog:
        assert sync(config, catalog)[0].ok
        before = dump(catalog)
        write_v2_mirror(http_server.state.root / "m", fixture_index(mirrors))  # a new index to fetch
        fault, message = HTTP_FAULTS[case]
        http_server.state.stall_seconds = 3.0
        http_server.state.faults["/m/build_cache/index.json"] = fault
        (outcome,) = sync(config, catalog)
        assert not outcome.ok
        assert outcome.error is not None and outcome.error.startswith(f"{url}/build_cache/index.json: ")
        assert message in outcome.error
        assert dump(catalog) == before


def test_a_mirror_url_whose_scheme_is_in_capitals_is_read_over_http(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The config takes "HTTP://" as http (a URL's scheme ignores case), and the sync
    reads it so: it made no HTTP client for it ("an HTTP mirror needs an HTTP client")."""
    url = serve_fixture(http_server, mirrors).replace("http://", "HTTP://", 1)
    config = make_config(tmp_path, [{"name": "t", "url": url}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok and outcome.specs > 0, outcome.error


def test_one_server_error_is_retried(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = serve_fixture(http_server, mirrors)
    http_server.state.faults["/m/build_cache/index.json"] = "500-once"
    config = make_config(tmp_path, [{"name": "t", "url": url}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    assert http_server.state.count("/m/build_cache/index.json") == 2


def test_a_missing_mirror_over_http(http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = make_config(tmp_path, [{"name": "t", "url": f"{http_server.url}/nothing"}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert not outcome.ok
    assert outcome.error == (
        f"{http_server.url}/nothing: no build cache index here (neither "
        "v3/manifests/index/index.manifest.json nor build_cache/index.json); "
        "is this the mirror's root URL?"
    )


def test_listed_specs_carry_their_stacks(mirrors: Path, tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        [
            {
                "name": "t",
                "url": str(mirrors / "v2_layout/unsigned"),
                "stacks": {"e4s": str(mirrors / "v2_layout/signed"), "old": str(mirrors / "legacy_yaml")},
            }
        ],
    )
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        listed = list(listed_specs(catalog, "t"))
    assert [s.name for s in listed] == sorted(s.name for s in listed)
    assert len(listed) == 6  # the root lists 6; the 'old' stack's zlib is not in the root
    assert {s.stacks for s in listed} == {("e4s", "root")}
    libdwarf = next(s for s in listed if s.hash == "u5uz3dcch5if4eve4sef67o2rf2lbfgh")
    assert (libdwarf.compiler, libdwarf.variants, libdwarf.size) == ("gcc@10.2.1", ("build_system=generic",), None)


def test_a_v2_head_length_no_file_has_is_no_size(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A Content-Length of 2**60 bytes (a broken or hostile server) is said, not kept as
    a binary's size (as an OCI registry's impossible size is not)."""
    url = serve_fixture(http_server, mirrors)
    with Catalog(tmp_path / "plan.sqlite") as planned:
        sync(make_config(tmp_path, [{"name": "t", "url": url}]), planned)
        listed = listed_specs(planned, "t")
    for spec in listed:
        path = tarball_path_v2(hash=spec.hash, name=spec.name, version=spec.version, compiler=spec.compiler,
                               platform=spec.platform, os=spec.os, target=spec.target)  # fmt: skip
        (http_server.state.root / "m" / path).parent.mkdir(parents=True, exist_ok=True)
        (http_server.state.root / "m" / path).write_bytes(b"x" * 100)
        http_server.state.faults[f"/m/{path}"] = "huge-length"
    config = make_config(tmp_path, [{"name": "t", "url": url}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog, head_sizes=True)
        assert outcome.ok and {s.size for s in listed_specs(catalog, "t")} == {None}
    assert any(f"Content-Length {2**60} is not a size a file can have" in w for w in outcome.warnings), outcome.warnings
