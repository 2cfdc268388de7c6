"""History and coverage reads, against the demo (develop synced twice) by brute force."""

from __future__ import annotations

import time
from collections import Counter

from cachedex.catalog import Catalog
from tests.helpers import Demo, listed_specs


def test_sync_changes_add_up_to_the_syncs_totals(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        syncs = catalog.tag_syncs("develop")
        changed = [s for s in syncs if s.changes]
        assert changed and syncs == sorted(syncs, key=lambda s: s.finished_at, reverse=True)
        for sync in changed:
            changes = catalog.sync_changes(sync.id)
            assert len(changes) == sync.changes
            root = Counter(c.change for c in changes if c.stack == "root")
            assert (root[1], root[-1]) == (sync.added, sync.removed)
        listed = {s.hash for s in listed_specs(catalog, "develop")}
        added = [c for c in catalog.sync_changes(changed[0].id) if c.change > 0 and c.stack == "root"]
        assert added and all(c.hash in listed for c in added)
        seen = catalog.first_seen(added[0].hash)
        assert ("develop", "root", changed[0].finished_at, False) in [
            (f.tag, f.stack, f.at, f.first_sync) for f in seen
        ]
        untouched = next(iter(listed - {c.hash for s in changed for c in catalog.sync_changes(s.id)}))
        first = min(s.finished_at for s in syncs)
        assert ("develop", "root", first, True) in [
            (f.tag, f.stack, f.at, f.first_sync) for f in catalog.first_seen(untouched)
        ]


def test_coverage_counts_every_listed_spec_once_per_mirror(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        specs = listed_specs(catalog, "develop")
        cells = catalog.coverage_cells("develop")
        by_arch = Counter((s.platform, s.os, s.target) for s in specs)
        assert {(c.platform, c.os, c.target): c.specs for c in cells if c.stack == "root"} == by_arch
        per_stack = Counter(stack for s in specs for stack in s.stacks if stack != "root")
        assert {st: sum(c.specs for c in cells if c.stack == st) for st in per_stack} == per_stack
        cmake = catalog.package_coverage("develop", "cmake")
        assert sum(c.specs for c in cmake) == sum(1 for s in specs if s.name == "cmake")
        assert sum(c.specs for c in catalog.package_coverage("develop")) == len(specs)
        by_package_arch = Counter((s.name, s.platform, s.os, s.target) for s in specs)
        together = catalog.package_coverage("develop", versions=False)
        assert {(c.name, c.platform, c.os, c.target): c.specs for c in together} == by_package_arch
        assert {c.version for c in together} == {""}
        assert {c.stack for c in catalog.coverage_cells("develop", root=False)} == set(per_stack)


def test_package_changes_keep_each_packages_newest_syncs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A feed shows a package's newest syncs: the read keeps those per package, however
    long the history. Four syncs each add a build of zlib; the third also one of bzip2."""
    from tests.helpers import record, replace_mirror, write_tag

    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "zlib")])
    members = {"a" * 32: True}
    for n, new in enumerate("bcde"):
        added = [record(new * 32, "zlib", version=f"1.{n}")]
        if new == "d":
            added.append(record("x" * 32, "bzip2"))
        with catalog.writing_tag("t") as writer:
            writer.add_specs(added, {})
            members.update({r.hash: True for r in added})
            replace_mirror(writer, "root", members, checksum=new)
    syncs = [s.id for s in catalog.tag_syncs("t")]  # newest first
    every = catalog.package_changes("t")
    assert [c.sync_id for c in every["zlib"]] == syncs[:4] and [c.spec.hash[0] for c in every["zlib"]] == list("edcb")
    assert [c.sync_id for c in every["bzip2"]] == [syncs[1]]
    newest = catalog.package_changes("t", syncs=2)
    assert [c.sync_id for c in newest["zlib"]] == syncs[:2]
    assert [c.sync_id for c in newest["bzip2"]] == [syncs[1]]  # (its own newest, not the tag's)
    assert catalog.package_changes("t", ["bzip2"], syncs=1) == {"bzip2": every["bzip2"]}
    assert all(c.spec.change == 1 and c.spec.stack == "root" for c in every["zlib"])
    catalog.close()


def test_a_stack_new_to_a_synced_tag_brings_its_specs_as_added(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A mirror's first read records no change (a tag's first sync would record every
    spec): a stack added to the config later was dated by the tag's first sync, and a
    diff since then said nothing of the specs it brought."""
    from tests.helpers import record, replace_mirror, write_tag

    a, b = record("a" * 32, "zlib"), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a])
        (first,) = catalog.tag_syncs("t")
        with catalog.writing_tag("t") as writer:
            writer.add_specs([b], {})
            replace_mirror(writer, "e4s", {a.hash: True, b.hash: True})
        newest = catalog.tag_syncs("t")[0]
        seen = {f.stack: f for f in catalog.first_seen(b.hash)}
        assert seen["e4s"].at == newest.finished_at > first.finished_at and not seen["e4s"].first_sync
        assert sorted(c[:2] for c in catalog.changes_since("t", first.finished_at)) == [
            ("e4s", a.hash),
            ("e4s", b.hash),
        ]
        assert newest.changes == 2 and (newest.added, newest.removed) == (0, 0)  # (the root's, which kept its specs)


def test_a_stack_put_back_is_not_new_there(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A stack dropped for a sync and put back: its specs were there from the tag's first
    sync, not since it came back (the put-back's additions were their first seen, in a
    page a build after the change left as it was, and a whole build wrote anew). A spec
    that came later, left and came back was first seen when it first came."""
    from cachedex.publish.first_seen import FirstSeenIndex
    from cachedex.publish.pages import spec_page
    from tests.helpers import record, replace_mirror

    a, b = record("a" * 32, "zlib"), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:  # the first sync: a in the stack from the start
            writer.add_specs([a, b], {})
            replace_mirror(writer, "root", {a.hash: True, b.hash: True})
            replace_mirror(writer, "e4s", {a.hash: True})
        with catalog.writing_tag("t") as writer:  # b comes to the stack
            replace_mirror(writer, "root", {a.hash: True, b.hash: True}, checksum="2")
            replace_mirror(writer, "e4s", {a.hash: True, b.hash: True}, checksum="2")
        first, came = sorted(catalog.tag_syncs("t"), key=lambda y: y.id)
        with catalog.writing_tag("t") as writer:  # dropped
            writer.keep_mirror("root", "u", fetched_at=1.0, etag=None, last_modified=None)
            assert writer.drop_other_stacks() == ["e4s"]
        with catalog.writing_tag("t") as writer:  # put back
            replace_mirror(writer, "e4s", {a.hash: True, b.hash: True})
        index = FirstSeenIndex(catalog)
        for spec, when, from_the_start in ((a, first, True), (b, came, False)):
            seen = {f.stack: (f.at, f.first_sync) for f in catalog.first_seen(spec.hash)}
            assert seen["e4s"] == (when.finished_at, from_the_start), spec.name
            assert index.of(spec.hash, spec_page(catalog, spec.hash).holders) == tuple(catalog.first_seen(spec.hash))
        assert {f.stack: f.first_sync for f in catalog.first_seen(a.hash)}["root"] is True
    assert first.id < came.id


def test_syncs_keep_their_order_and_ids_whatever_the_clock_says(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A clock set back between syncs reordered the history pages (by time) against
    stats and feeds (by id); a tag forgotten gave its syncs' ids again, and so Atom
    entry ids and change-page anchors named two syncs."""
    import time

    from tests.helpers import record, write_tag

    clock = [2_000_000_000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "keep", [record("a" * 32, "zlib")])
        for n, hash_char in enumerate("bc"):
            clock[0] -= 3600 * (n + 1)  # set back
            write_tag(catalog, "gone", [record(hash_char * 32, "cmake", version=f"3.{n}")], checksum=hash_char)
        ids = [s.id for s in catalog.tag_syncs("gone")]
        assert ids == sorted(ids, reverse=True) and len(ids) == 2  # newest first, by id
        assert catalog.first_syncs()["gone"] == catalog.tag_syncs("gone")[-1].finished_at  # the first by order
        catalog.forget_tags({"gone": None})
        write_tag(catalog, "gone", [record("d" * 32, "cmake", version="3.9")], checksum="d")
        assert catalog.tag_syncs("gone")[0].id > max(ids)


def test_a_clock_set_back_between_syncs_changes_no_first_sync_nor_past_state(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Syncs 1 and 2 on a clock two hours fast, sync 3 after it was corrected: "first
    seen" and the first sync were the earliest time (sync 3's) on the server and the
    change page, and ``diff --since`` between syncs 2 and 1's times rebuilt a state the
    tag never had (sync 2's change undone, sync 3's kept)."""
    from cachedex.diff import diff_since
    from cachedex.publish.first_seen import FirstSeenIndex
    from cachedex.publish.pages import spec_page
    from tests.helpers import record, replace_mirror, write_tag

    clock = [2_000_007_200.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    a, b, c = (record(ch * 32, name) for ch, name in (("a", "zlib"), ("b", "tmux"), ("c", "cp2k")))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a, b, c], checksum="1")
        clock[0] += 1800
        with catalog.writing_tag("t") as writer:  # tmux leaves
            replace_mirror(writer, "root", {a.hash: True, c.hash: True}, checksum="2")
        clock[0] -= 9000  # corrected: earlier than both
        with catalog.writing_tag("t") as writer:  # cp2k leaves
            replace_mirror(writer, "root", {a.hash: True}, checksum="3")
        first = min(catalog.tag_syncs("t"), key=lambda y: y.id)
        assert catalog.first_synced_at("t") == first.finished_at == 2_000_007_200.0
        seen = catalog.first_seen(a.hash)
        assert [(f.at, f.first_sync) for f in seen] == [(first.finished_at, True)]
        assert FirstSeenIndex(catalog).of(a.hash, spec_page(catalog, a.hash).holders) == tuple(seen)
        # since a time between syncs 1 and 2: the state then was sync 1's (all three),
        # though sync 3 is dated earlier still
        diff = diff_since(catalog, "t", 2_000_008_000.0, "then")
        assert [(d.stack, set(d.removed_packages), d.added_packages) for d in diff.stacks] == [
            ("root", {"tmux", "cp2k"}, ())
        ], diff


def test_first_seen_names_the_earliest_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A spec page names the first few; ordered by tag name, the earliest could have been
    among those it counts as "and N more". The page's index answers the same."""
    from cachedex.publish.first_seen import FirstSeenIndex
    from cachedex.publish.pages import spec_page
    from tests.helpers import record, write_tag

    spec = record("a" * 32, "zlib")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "zz-first", [spec])
        time.sleep(0.01)  # (a later sync, a later time)
        write_tag(catalog, "aa-later", [], members={spec.hash: True})
        seen = catalog.first_seen(spec.hash)
        assert [f.tag for f in seen] == ["zz-first", "aa-later"] and seen[0].at < seen[1].at
        index = FirstSeenIndex(catalog)
        assert index.of(spec.hash, spec_page(catalog, spec.hash).holders) == tuple(seen)


def test_first_seen_at_one_time_names_a_tag_s_root_before_its_stacks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Mirrors that listed the spec from one sync are ordered by tag, the root first,
    then by stack (a stack named before "root" came first); the page's index agrees."""
    from cachedex.publish.first_seen import FirstSeenIndex
    from cachedex.publish.pages import spec_page
    from tests.helpers import record, replace_mirror

    spec = record("a" * 32, "zlib")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([spec], {})
            for stack in ("a-stack", "root", "z-stack"):
                replace_mirror(writer, stack, {spec.hash: True}, url=f"/{stack}", checksum=stack)
        seen = catalog.first_seen(spec.hash)
        assert [f.stack for f in seen] == ["root", "a-stack", "z-stack"] and len({f.at for f in seen}) == 1
        index = FirstSeenIndex(catalog)
        assert index.of(spec.hash, spec_page(catalog, spec.hash).holders) == tuple(seen)


def test_changes_since_a_sync_s_time_are_those_of_the_syncs_after_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``diff --since`` the very time a sync finished: the state then is the one that
    sync left, so its own changes are not among those since."""
    from tests.helpers import record, write_tag

    a, b, c = record("a" * 32, "zlib"), record("b" * 32, "cmake"), record("c" * 32, "xz")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a])
        write_tag(catalog, "t", [b], members={a.hash: True, b.hash: True}, checksum="2")
        second = catalog.tag_syncs("t")[0]
        write_tag(catalog, "t", [c], members={a.hash: True, c.hash: True}, checksum="3")
        assert sorted(x[1:] for x in catalog.changes_since("t", second.finished_at)) == [
            (b.hash, "cmake", "1.3.1", -1),
            (c.hash, "xz", "1.3.1", 1),
        ]
        assert len(catalog.changes_since("t", second.finished_at - 0.001)) == 3  # (b's addition too)


def test_a_package_s_changes_newest_first_added_first_and_a_sync_s_root_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A package's changes: newest sync first, then what was added before what was
    removed, then by version and hash; the newest ``syncs`` only. A sync's changes: the
    root's first, then each stack's by name (a stack named before "root" came first)."""
    from tests.helpers import record, replace_mirror, write_tag

    old = [record(c * 32, "zlib", version="1.0") for c in "ab"]
    new = [record(c * 32, "zlib", version=v) for c, v in (("d", "2.0"), ("c", "2.0"), ("e", "1.5"))]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", old)
        write_tag(
            catalog, "t", new[:2], members={old[1].hash: True, new[0].hash: True, new[1].hash: True}, checksum="2"
        )
        with catalog.writing_tag("t") as writer:
            writer.add_specs([new[2]], {})
            everything = {r.hash: True for r in (old[1], *new)}
            replace_mirror(writer, "root", everything, checksum="3")
            replace_mirror(writer, "a-stack", {new[2].hash: True}, url="/a", checksum="a")
        newest, second, _ = catalog.tag_syncs("t")
        changes = catalog.package_changes("t")["zlib"]
        assert [(c.sync_id, c.spec.change, c.spec.version, c.spec.hash[0]) for c in changes] == [
            (newest.id, 1, "1.5", "e"),
            (second.id, 1, "2.0", "c"),
            (second.id, 1, "2.0", "d"),
            (second.id, -1, "1.0", "a"),
        ]
        assert [c.sync_id for c in catalog.package_changes("t", syncs=1)["zlib"]] == [newest.id]
        assert [(c.stack, c.hash[0]) for c in catalog.sync_changes(newest.id)] == [("root", "e"), ("a-stack", "e")]


def test_listing_counts_count_listed_specs_alone_read_by_name_or_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A mirror that holds a spec without its binary does not list it: the change
    page's counts around a sync are of listed specs, read either way."""
    from tests.helpers import record, replace_mirror

    a, b, c = record("a" * 32), record("b" * 32, version="1.2"), record("c" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([a, b, c], {})
            replace_mirror(writer, "root", {a.hash: True, b.hash: False, c.hash: True})
            replace_mirror(writer, "e4s", {a.hash: False, c.hash: True})
        expected = [("e4s", "cmake", "1.3.1", 1), ("root", "cmake", "1.3.1", 1), ("root", "zlib", "1.3.1", 1)]
        assert sorted(catalog.listing_counts("t")) == expected
        assert sorted(catalog.listing_counts("t", names=["zlib", "cmake"])) == expected
        assert catalog.listing_counts("t", names=["zlib"], stacks=["e4s"]) == []
