"""The catalog's history and coverage reads (``catalog/history.py`` and its facade,
``facade_history.py``), each pinned down on a small catalog written as syncs would:
which syncs, which changes, in which order, and what coverage counts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from tests.helpers import record, replace_mirror, write_tag


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """A clock that moves on by 10 s at each reading (a sync's start and end differ)."""
    now = [2_000_000_000.0]

    def tick() -> float:
        now[0] += 10.0
        return now[0]

    monkeypatch.setattr(time, "time", tick)
    return now


def test_tag_syncs_of_every_tag_changed_only_and_limited(tmp_path: Path) -> None:
    """``tag_syncs(None)`` is every tag's syncs newest first; ``changed_only`` leaves out
    the syncs that recorded no change; ``limit`` keeps the newest; the facade passes
    ``changed_only`` on and its default limit keeps more than a few."""
    a, b, c = record("a" * 32), record("b" * 32, "cmake"), record("c" * 32, "xz")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a])  # 1: first, no change
        write_tag(catalog, "u", [c])  # 2: another tag
        write_tag(catalog, "t", [b], members={a.hash: True, b.hash: True}, checksum="2")  # 3: b added
        write_tag(catalog, "t", [], members={a.hash: True, b.hash: True}, checksum="3")  # 4: nothing new
        write_tag(catalog, "t", [], members={b.hash: True}, checksum="4")  # 5: a removed
        every = catalog.tag_syncs()
        assert [(s.tag, s.changes) for s in every] == [("t", 1), ("t", 0), ("t", 1), ("u", 0), ("t", 0)]
        assert [s.id for s in every] == sorted((s.id for s in every), reverse=True)
        assert [s.tag for s in catalog.tag_syncs("t")] == ["t"] * 4
        changed = catalog.tag_syncs("t", changed_only=True)
        assert [(s.id, s.added, s.removed) for s in changed] == [(every[0].id, 0, 1), (every[2].id, 1, 0)]
        assert catalog.tag_syncs(changed_only=True) == changed
        assert [s.id for s in catalog.tag_syncs("t", limit=2)] == [every[0].id, every[1].id]
        assert catalog.tag_syncs("nope") == []


def test_sync_changes_by_stack_root_first_then_name_version_hash(tmp_path: Path) -> None:
    """A sync's changes: the root's first, then each stack's by name; within a mirror
    by package name, then version, then hash (not by hash, nor version first)."""
    old = record("0" * 32, "aaa")
    new = [
        record("z" * 32, "zlib", version="1.0"),
        record("a" * 32, "zlib", version="2.0"),
        record("m" * 32, "bzip2", version="9.0"),
        record("b" * 32, "bzip2", version="9.0"),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [old])
        with catalog.writing_tag("t") as writer:
            writer.add_specs(new, {})
            replace_mirror(writer, "root", {r.hash: True for r in new}, checksum="2")
        (newest, _) = catalog.tag_syncs("t")
        got = [(c.stack, c.change, c.name, c.version, c.hash[0]) for c in catalog.sync_changes(newest.id)]
        assert got == [
            ("root", -1, "aaa", "1.3.1", "0"),
            ("root", 1, "bzip2", "9.0", "b"),
            ("root", 1, "bzip2", "9.0", "m"),
            ("root", 1, "zlib", "1.0", "z"),
            ("root", 1, "zlib", "2.0", "a"),
        ]


def test_changed_packages_once_per_package_and_direction_of_one_stack(tmp_path: Path) -> None:
    """What a feed entry names: each (added, name) once however many specs, of the stack
    asked (the root by default through the facade), added True and removed False."""
    a = record("a" * 32, "zlib", version="1.0")
    gone = record("g" * 32, "cmake")
    b, c = record("b" * 32, "zlib", version="2.0"), record("c" * 32, "zlib", version="3.0")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([a, gone], {})
            replace_mirror(writer, "root", {a.hash: True, gone.hash: True})
            replace_mirror(writer, "e4s", {a.hash: True}, url="/e")
        with catalog.writing_tag("t") as writer:
            writer.add_specs([b, c], {})
            replace_mirror(writer, "root", {a.hash: True, b.hash: True, c.hash: True}, checksum="2")
            replace_mirror(writer, "e4s", {}, url="/e", checksum="2")
        newest = catalog.tag_syncs("t")[0]
        assert sorted(catalog.changed_packages(newest.id)) == [(False, "cmake"), (True, "zlib")]
        assert catalog.changed_packages(newest.id, "e4s") == [(False, "zlib")]
        assert catalog.changed_packages(newest.id, "nope") == []


def test_additions_are_first_changes_that_added_of_the_ids_asked(tmp_path: Path, clock: list[float]) -> None:
    """A spec's "first seen" addition is its first change in a mirror when that added
    it (a later re-addition is not), none when its first change removed it, and
    ``ids`` keeps those specs only."""
    a, b, c = record("a" * 32), record("b" * 32, "cmake"), record("c" * 32, "xz")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a, c])  # 1: a, c there from the start
        write_tag(catalog, "t", [b], members={a.hash: True, b.hash: True, c.hash: True}, checksum="2")  # 2: +b
        write_tag(catalog, "t", [], members={c.hash: True}, checksum="3")  # 3: -a -b
        write_tag(catalog, "t", [], members={a.hash: True, b.hash: True, c.hash: True}, checksum="4")  # 4: +a +b
        syncs = sorted(catalog.tag_syncs("t"), key=lambda s: s.id)
        assert catalog.additions() == [(b.hash, "t", "root", syncs[1].finished_at)]
        ids = dict(catalog._db.execute("SELECT hash, id FROM specs"))
        assert catalog.additions([ids[a.hash]]) == []
        assert catalog.additions([ids[c.hash]]) == []
        assert catalog.additions([ids[b.hash]]) == [(b.hash, "t", "root", syncs[1].finished_at)]


def test_first_syncs_is_each_tag_s_first_sync_end(tmp_path: Path, clock: list[float]) -> None:
    """Each tag's first sync's end (not a later one's, nor its start)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        write_tag(catalog, "u", [record("b" * 32, "cmake")])
        write_tag(catalog, "t", [record("c" * 32, "xz")], checksum="2")
        firsts = {s.tag: s for s in sorted(catalog.tag_syncs(), key=lambda s: -s.id)}  # the first of each, last
        assert catalog.first_syncs() == {"t": firsts["t"].finished_at, "u": firsts["u"].finished_at}
        assert catalog.first_synced_at("t") == firsts["t"].finished_at
        assert catalog.first_synced_at("nope") is None


def test_first_seen_lists_listing_mirrors_with_their_own_index_only(tmp_path: Path, clock: list[float]) -> None:
    """``first_seen`` names the mirrors that list the spec now (not one holding it
    unlisted, nor a root without an index of its own), at the end (not the start) of
    the sync that added it, or at the tag's first sync's end when its first change
    removed it."""
    a, b = record("a" * 32), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([a], {})
            replace_mirror(writer, "root", {a.hash: True})
            replace_mirror(writer, "e4s", {a.hash: False}, url="/e")
        write_tag(catalog, "t", [], members={}, checksum="2")  # a leaves the root
        write_tag(catalog, "t", [], members={a.hash: True}, checksum="3")  # and comes back
        with catalog.writing_tag("v") as writer:
            replace_mirror(writer, "root", {a.hash: True}, own_index=False)
        write_tag(catalog, "t", [b], members={a.hash: True, b.hash: True}, checksum="4")  # b comes
        first, _, _, came = sorted(catalog.tag_syncs("t"), key=lambda s: s.id)
        assert [(f.tag, f.stack, f.at, f.first_sync) for f in catalog.first_seen(a.hash)] == [
            ("t", "root", first.finished_at, True)
        ]
        assert came.started_at < came.finished_at
        assert [(f.tag, f.stack, f.at, f.first_sync) for f in catalog.first_seen(b.hash)] == [
            ("t", "root", came.finished_at, False)
        ]
        assert catalog.first_seen("f" * 32) == []


def test_first_seen_ordered_by_time_then_tag_then_root_then_stack(tmp_path: Path, clock: list[float]) -> None:
    """The earliest first; at one time by tag, the root before the stacks, then the
    stacks by name."""
    a = record("a" * 32)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("b-tag") as writer:
            writer.add_specs([a], {})
            for stack in ("z-stack", "root", "a-stack", "m-stack"):
                replace_mirror(writer, stack, {a.hash: True}, url=f"/{stack}")
        write_tag(catalog, "a-tag", [], members={a.hash: True})
        seen = [(f.tag, f.stack) for f in catalog.first_seen(a.hash)]
        assert seen == [
            ("b-tag", "root"),
            ("b-tag", "a-stack"),
            ("b-tag", "m-stack"),
            ("b-tag", "z-stack"),
            ("a-tag", "root"),
        ]


def test_coverage_cells_count_listed_specs_and_known_sizes(tmp_path: Path) -> None:
    """Per stack (root first) and platform-os-target: listed specs only, the sum of the
    known sizes (0 when none is known) and how many are known; ``root=False`` leaves
    the root out."""
    x86 = [record(h * 32, "zlib", version=v) for h, v in (("a", "1"), ("b", "2"), ("c", "3"))]
    arm = record("d" * 32, "cmake", target="aarch64")
    mac = record("f" * 32, "cmake", platform="darwin", os="sonoma", target="x86_64_v3")
    hidden = record("e" * 32, "xz")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([*x86, arm, mac, hidden], {x86[0].hash: 100, x86[1].hash: 20})
            replace_mirror(writer, "root", {**{r.hash: True for r in (*x86, arm, mac)}, hidden.hash: False})
            replace_mirror(writer, "a-stack", {arm.hash: True}, url="/a")
        cells = [(c.stack, c.platform, c.target, c.specs, c.size, c.sized) for c in catalog.coverage_cells("t")]
        assert cells == [
            ("root", "darwin", "x86_64_v3", 1, 0, 0),
            ("root", "linux", "aarch64", 1, 0, 0),
            ("root", "linux", "x86_64_v3", 3, 120, 2),
            ("a-stack", "linux", "aarch64", 1, 0, 0),
        ]
        assert [c.stack for c in catalog.coverage_cells("t", root=False)] == ["a-stack"]


def test_package_coverage_of_the_root_per_version_and_known_sizes(tmp_path: Path) -> None:
    """A tag's listing (its root, not its stacks) per package, version and arch, in
    name and version order, with known sizes counted; one package if named; versions
    counted together when asked."""
    z2, z1 = record("a" * 32, "zlib", version="2"), record("b" * 32, "zlib", version="1")
    z1b = record("c" * 32, "zlib", version="1")
    cm = record("d" * 32, "cmake")
    stack_only = record("e" * 32, "xz")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([z2, z1, z1b, cm, stack_only], {z1.hash: 7})
            replace_mirror(writer, "root", {z2.hash: True, z1.hash: True, z1b.hash: True, cm.hash: True})
            replace_mirror(writer, "e4s", {stack_only.hash: True, z2.hash: True}, url="/e")
        got = [(c.name, c.version, c.specs, c.size, c.sized) for c in catalog.package_coverage("t")]
        assert got == [("cmake", "1.3.1", 1, 0, 0), ("zlib", "1", 2, 7, 1), ("zlib", "2", 1, 0, 0)]
        assert [(c.name, c.version) for c in catalog.package_coverage("t", "zlib")] == [("zlib", "1"), ("zlib", "2")]
        together = catalog.package_coverage("t", "zlib", versions=False)
        assert [(c.name, c.version, c.specs, c.size, c.sized) for c in together] == [("zlib", "", 3, 7, 1)]


def test_listing_counts_per_version_of_the_packages_and_stacks_asked(tmp_path: Path) -> None:
    """(stack, name, version, listed) of each version apart, of listed members only
    (read by name or whole); ``names`` and ``stacks`` keep those only."""
    z1, z2 = record("a" * 32, "zlib", version="1"), record("b" * 32, "zlib", version="2")
    cm = record("c" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([z1, z2, cm], {})
            replace_mirror(writer, "root", {z1.hash: True, z2.hash: True, cm.hash: True})
            replace_mirror(writer, "e4s", {z1.hash: True, z2.hash: False}, url="/e")
        zlib = [("e4s", "zlib", "1", 1), ("root", "zlib", "1", 1), ("root", "zlib", "2", 1)]
        assert sorted(catalog.listing_counts("t")) == sorted([*zlib, ("root", "cmake", "1.3.1", 1)])
        assert sorted(catalog.listing_counts("t", names=["zlib"])) == zlib
        assert catalog.listing_counts("t", stacks=["e4s"]) == [("e4s", "zlib", "1", 1)]
        assert catalog.listing_counts("t", names=["zlib"], stacks=["e4s"]) == [("e4s", "zlib", "1", 1)]


def test_listing_difference_signs_and_stacks_of_one_tag_only(tmp_path: Path) -> None:
    """+1 for what ``new`` lists alone, -1 for what ``old`` lists alone, a stack of one
    tag whole, unlisted members not listed, stacks in name order."""
    a, b, c, d = (record(h * 32, n) for h, n in (("a", "zlib"), ("b", "cmake"), ("c", "xz"), ("d", "tmux")))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("old") as writer:
            writer.add_specs([a, b, c, d], {})
            replace_mirror(writer, "root", {a.hash: True, b.hash: True, d.hash: False})
            replace_mirror(writer, "gone", {c.hash: True}, url="/g")
        with catalog.writing_tag("new") as writer:
            replace_mirror(writer, "root", {a.hash: True, c.hash: True, b.hash: False})
            replace_mirror(writer, "added", {d.hash: True, a.hash: False}, url="/n")
        got = catalog.listing_difference("old", "new")
        assert got == [
            ("added", d.hash, "tmux", "1.3.1", 1),
            ("gone", c.hash, "xz", "1.3.1", -1),
            ("root", c.hash, "xz", "1.3.1", 1),
            ("root", b.hash, "cmake", "1.3.1", -1),
        ]
        assert catalog.listing_difference("old", "old") == []


def test_changes_since_of_one_tag_oldest_first_and_none_after_the_last(tmp_path: Path, clock: list[float]) -> None:
    """The changes of the tag asked (not another's) from the first sync that finished
    after ``since``, oldest first; none since the last sync's end; the first sync after
    a time is strictly after it."""
    a, b, c = record("a" * 32), record("b" * 32, "cmake"), record("c" * 32, "xz")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a])
        write_tag(catalog, "u", [b])
        write_tag(catalog, "u", [], members={}, checksum="2")  # u: -b
        write_tag(catalog, "t", [c], members={c.hash: True}, checksum="2")  # t: -a +c
        write_tag(catalog, "t", [], members={a.hash: True}, checksum="3")  # t: -c +a
        first = min(catalog.tag_syncs("t"), key=lambda s: s.id)
        last = catalog.tag_syncs("t")[0]
        got = [(x[1][0], x[4]) for x in catalog.changes_since("t", first.finished_at)]
        assert sorted(got[:2]) == [("a", -1), ("c", 1)] and sorted(got[2:]) == [("a", 1), ("c", -1)]
        assert catalog.changes_since("t", last.finished_at) == []
        assert catalog.first_sync_after("t", last.finished_at) is None
        assert catalog.first_sync_after("t", first.finished_at) == catalog.tag_syncs("t")[1].id
        assert catalog.first_sync_after("t", first.finished_at - 1) == first.id


def test_first_synced_at_is_the_first_by_order_not_by_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock set back: the first sync (and so the "first seen" of a spec there from
    the start) is the first recorded, not the earliest dated, nor the newest."""
    now = [2_000_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    with Catalog(tmp_path / "c.sqlite") as catalog:
        a = record("a" * 32)
        write_tag(catalog, "t", [a])
        now[0] -= 3600
        write_tag(catalog, "t", [record("b" * 32, "cmake")], members={a.hash: True, "b" * 32: True}, checksum="2")
        now[0] += 7200
        write_tag(catalog, "t", [record("c" * 32, "xz")], members={a.hash: True}, checksum="3")
        assert catalog.first_synced_at("t") == 2_000_000_000.0
        assert [(f.at, f.first_sync) for f in catalog.first_seen(a.hash)] == [(2_000_000_000.0, True)]
        assert catalog.first_syncs() == {"t": 2_000_000_000.0}


def test_package_changes_counts_syncs_not_changes_of_the_root_only(tmp_path: Path) -> None:
    """``syncs=n`` keeps a package's changes of its own n newest syncs that changed it
    (two specs changed in one sync count once; another package's later sync does not
    count), of the root's listing only, added before removed, then by version and
    hash, with each spec's size."""
    z = [record(h * 32, "zlib", version=v) for h, v in (("a", "1"), ("y", "2"), ("c", "3"), ("d", "3"))]
    more = [record(h * 32, "zlib", version="4") for h in "ef"]
    side = record("s" * 32, "zlib", version="9")
    cm = record("m" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [z[0]])
        with catalog.writing_tag("t") as writer:  # 2: three added, one removed, and a stack's change
            writer.add_specs([z[3], z[2], z[1], side], {z[2].hash: 5})
            replace_mirror(writer, "root", {z[1].hash: True, z[2].hash: True, z[3].hash: True}, checksum="2")
            replace_mirror(writer, "e4s", {side.hash: True}, url="/e")
        listed = {r.hash: True for r in z[1:]}
        write_tag(catalog, "t", more, members={**listed, **{r.hash: True for r in more}}, checksum="3")  # 3: two
        write_tag(catalog, "t", [cm], members={**listed, **{r.hash: True for r in (*more, cm)}}, checksum="4")
        newest, third, second, _ = (s.id for s in catalog.tag_syncs("t"))
        got = catalog.package_changes("t", syncs=2)["zlib"]
        assert [(c.sync_id, c.spec.change, c.spec.version, c.spec.hash[0], c.spec.size) for c in got] == [
            (third, 1, "4", "e", None),
            (third, 1, "4", "f", None),
            (second, 1, "2", "y", None),
            (second, 1, "3", "c", 5),
            (second, 1, "3", "d", None),
            (second, -1, "1", "a", None),
        ]
        assert {c.spec.stack for c in got} == {"root"}
        assert [c.sync_id for c in catalog.package_changes("t", syncs=1)["zlib"]] == [third, third]
        assert [c.sync_id for c in catalog.package_changes("t", ["cmake"], syncs=1)["cmake"]] == [newest]
        assert catalog.package_changes("t", ["xz"]) == {}
