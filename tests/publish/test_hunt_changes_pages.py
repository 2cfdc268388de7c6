"""Change pages, comparisons, a tag page's "recent changes" and coverage on tiny catalogs
made sync by sync: behaviour mutations of the code survived the other tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.changes import VersionChange, changes_page, compare_page, previous_tags, since_page
from cachedex.publish.coverage import bottle_table, coverage_page, pivot, target_family
from cachedex.publish.recent_changes import history_from, keep_for_tag_page, recent_syncs
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import record, write_tag


def _h(n: int, fill: str = "a") -> str:
    return f"{n}".ljust(32, fill)


def test_another_build_of_a_listed_version_adds_no_package_to_the_change_page(tmp_path: Path) -> None:
    """zlib@1.3.1 is listed, a sync adds a second build of it: zlib is no added
    package (a package counts its specs, not its versions, when the listing is undone)."""
    first, second = record(_h(1), "zlib"), record(_h(2), "zlib", target="aarch64")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [first])
        write_tag(catalog, "t", [second], members={first.hash: True, second.hash: True}, checksum="2")
        (sync,) = changes_page(catalog, "t").syncs
    (root,) = sync.stacks
    assert (root.added_count, root.removed_count) == (1, 0)
    assert root.added_packages == ()
    assert root.version_changes == () and root.rebuilt == ()


def test_another_build_of_a_listed_version_adds_no_package_to_a_comparison(tmp_path: Path) -> None:
    """Tag ``new`` lists zlib@1.3.1 twice (two archs), ``old`` once: the comparison adds
    a spec, not the package."""
    first, second = record(_h(1), "zlib"), record(_h(2), "zlib", target="aarch64")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "old", [first])
        write_tag(catalog, "new", [second], members={first.hash: True, second.hash: True})
        page = compare_page(catalog, "old", "new")
    (root,) = page.stacks
    assert [s.hash for s in root.added] == [second.hash]
    assert root.added_packages == () and root.removed_packages == ()


def test_new_versions_are_listed_newest_first(tmp_path: Path) -> None:
    """Two versions of each of several packages come in one sync, in place of an old
    one: each version change names them newest first by version (2.10 before 2.9)."""
    names = [f"p{n}" for n in range(8)]
    olds = [record(_h(n, "o"), name, version="1.0") for n, name in enumerate(names)]
    news = [record(_h(n, "b"), name, version=f"{n + 1}.9") for n, name in enumerate(names)]
    news += [record(_h(n, "c"), name, version=f"{n + 1}.10") for n, name in enumerate(names)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", olds)
        write_tag(catalog, "t", news, members={r.hash: True for r in news}, checksum="2")
        (sync,) = changes_page(catalog, "t").syncs
    (root,) = sync.stacks
    assert [(c.name, c.old, c.new) for c in root.version_changes] == [
        (name, ("1.0",), (f"{n + 1}.10", f"{n + 1}.9")) for n, name in enumerate(names)
    ]


def test_the_root_comes_first_before_a_stack_named_before_it(tmp_path: Path) -> None:
    """A sync changing the root and a stack named ``aaa``: the root's changes come first."""
    a, b = record(_h(1), "zlib"), record(_h(2), "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([a], {})
            for stack in ("root", "aaa"):
                writer.replace_mirror(
                    stack, "/m", layout=3, db_version=8, checksum="1", etag=None, last_modified=None,
                    fetched_at=0.0, members={a.hash: True},
                )  # fmt: skip
        with catalog.writing_tag("t") as writer:
            writer.add_specs([b], {})
            for stack in ("root", "aaa"):
                writer.replace_mirror(
                    stack, "/m", layout=3, db_version=8, checksum="2", etag=None, last_modified=None,
                    fetched_at=0.0, members={a.hash: True, b.hash: True},
                )  # fmt: skip
        (sync,) = changes_page(catalog, "t").syncs
        with history_from(catalog):
            (recent,) = recent_syncs("t")
    assert [s.stack for s in sync.stacks] == ["root", "aaa"]
    assert (recent.added, recent.removed, recent.packages_added, recent.stacks) == (1, 0, ("cmake",), ("aaa",))


def test_syncs_beyond_those_shown_are_counted_and_named(tmp_path: Path) -> None:
    """With ``shown`` syncs detailed, the older ones are counted and each named once
    (newest first); fewer syncs than ``shown`` leave no negative count."""
    specs = [record(_h(n), f"p{n}") for n in range(4)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs[:1])
        for n in range(1, 4):
            write_tag(catalog, "t", [specs[n]], members={s.hash: True for s in specs[: n + 1]}, checksum=str(n))
        full = changes_page(catalog, "t")
        one = changes_page(catalog, "t", shown=1)
        many = changes_page(catalog, "t", shown=10)
    assert len(full.syncs) == 3
    assert [s.id for s in one.syncs] == [full.syncs[0].id]
    assert one.older == 2
    assert [e.id for e in one.earlier] == [s.id for s in full.syncs[1:]]
    assert [(e.added, e.removed) for e in one.earlier] == [(1, 0), (1, 0)]
    assert many.older == 0 and many.earlier == ()


def test_a_sync_that_changed_only_a_stack_is_no_plus_nothing(tmp_path: Path) -> None:
    """A sync changing only the stack ``s`` (twice here) shows on the tag page as that stack's, with
    nothing added to the whole tag."""
    a, b = record(_h(1), "zlib"), record(_h(2), "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a])
        write_tag(catalog, "t", [], members={a.hash: True}, stack="s", checksum="1")
        write_tag(catalog, "t", [b], members={a.hash: True, b.hash: True}, stack="s", checksum="2")
        with history_from(catalog):
            recent = recent_syncs("t")
    assert [(r.added, r.removed, r.packages_added, r.stacks) for r in recent] == [(0, 0, (), ("s",))] * 2


def test_no_recent_changes_once_outside_history_from(tmp_path: Path) -> None:
    """Leaving :func:`history_from` ends its catalog's use: a tag page rendered after
    shows no recent changes."""
    a, b = record(_h(1), "zlib"), record(_h(2), "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a])
        write_tag(catalog, "t", [b], members={a.hash: True, b.hash: True}, checksum="2")
        with history_from(catalog):
            assert len(recent_syncs("t")) == 1
        assert recent_syncs("t") == ()


def test_families_with_as_many_specs_are_ordered_by_name(tmp_path: Path) -> None:
    """Target families are columns, the commonest first, and those with as many specs
    in name order, whatever order the specs come in."""
    specs = [
        record(_h(1), "a", platform="linux", target="power9le"),
        record(_h(2), "a", platform="linux", target="power9le", version="1.2"),
        record(_h(3), "b", platform="linux", target="zen4"),
        record(_h(4), "c", platform="linux", target="neoverse_v1"),
        record(_h(5), "c", platform="linux", target="power9le"),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        page = coverage_page(catalog, "t")
    assert page.families == ("ppc64le", "aarch64", "x86_64")
    assert [(p.name, p.counts, p.total) for p in page.packages] == [
        ("a", (2, 0, 0), 2),
        ("b", (0, 0, 1), 1),
        ("c", (1, 1, 0), 2),
    ]


def test_targets_archspec_does_not_know_take_the_family_their_name_suggests() -> None:
    """A newer x86_64 or arm target than archspec knows is counted in its family, not
    as a family of its own (nor as 32-bit x86 or arm)."""
    assert target_family("linux", "zen9") == "x86_64"
    assert target_family("linux", "x86_64_v5") == "x86_64"
    assert target_family("linux", "graviton9") == "aarch64"
    assert target_family("linux", "neoverse_x9") == "aarch64"
    assert target_family("freebsd", "zen9") == "freebsd x86_64"


def test_an_arch_label_is_platform_os_target() -> None:
    """A coverage column's label is the arch as Spack prints it."""
    from cachedex.publish.coverage import Arch

    assert Arch("linux", "ubuntu24.04", "zen4").label == "linux-ubuntu24.04-zen4"


def test_recent_changes_tell_what_the_whole_tag_gained_and_lost(tmp_path: Path) -> None:
    """zlib leaves, ninja comes (two builds), cmake 3.27.9 becomes 3.31.3: the tag
    page's block counts 3 added and 2 removed, and names each package once, right side."""
    zlib, cmake_old = record(_h(1), "zlib"), record(_h(2), "cmake", version="3.27.9")
    ninja = [record(_h(3), "ninja"), record(_h(4), "ninja", target="aarch64")]
    cmake_new = record(_h(5), "cmake", version="3.31.3")
    after = [*ninja, cmake_new]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [zlib, cmake_old])
        write_tag(catalog, "t", after, members={r.hash: True for r in after}, checksum="2")
        with history_from(catalog):
            (recent,) = recent_syncs("t")
    assert (recent.added, recent.removed) == (3, 2)
    assert (recent.packages_added, recent.packages_removed) == (("ninja",), ("zlib",))
    assert recent.versions == (VersionChange("cmake", ("3.27.9",), ("3.31.3",)),)
    assert recent.stacks == ()


def test_a_kept_change_page_serves_the_next_tag_page_only(tmp_path: Path) -> None:
    """A change page kept for the tag page is used by the next one rendered (not read
    again), and only by it: a later one reads the catalog."""
    a, b, c = record(_h(1), "zlib"), record(_h(2), "cmake"), record(_h(3), "ninja")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a])
        write_tag(catalog, "t", [b], members={a.hash: True, b.hash: True}, checksum="2")
        kept = changes_page(catalog, "t")
        write_tag(catalog, "t", [c], members={a.hash: True, b.hash: True, c.hash: True}, checksum="3")
        with history_from(catalog):
            keep_for_tag_page(kept)
            first = recent_syncs("t")
            second = recent_syncs("t")
    assert [r.packages_added for r in first] == [("cmake",)]
    assert [r.packages_added for r in second] == [("ninja",), ("cmake",)]


def test_coverage_rows_add_up_the_sizes_they_know(tmp_path: Path) -> None:
    """A stack listing sized specs on two archs and one of unknown size: its row adds
    both sizes (2 sized of 3); a package none of whose sizes is known has no size."""
    x86 = record(_h(1), "zlib")
    arm = record(_h(2), "zlib", target="aarch64", version="1.2")
    unsized = record(_h(3), "cmake")
    members = {x86.hash: True, arm.hash: True, unsized.hash: True}
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [x86, arm, unsized], sizes={x86.hash: 100, arm.hash: 50})
        write_tag(catalog, "t", [], members=members, stack="s", checksum="2")
        page = coverage_page(catalog, "t")
    rows = {row.name: (row.total, row.size, row.sized) for row in page.stacks}
    assert rows == {"root": (3, 150, 2), "s": (3, 150, 2)}
    assert [(p.name, p.total, p.size, p.sized) for p in page.packages] == [("cmake", 1, None, 0), ("zlib", 2, 150, 2)]


def test_a_stack_listing_what_the_root_does_not_gets_its_column(tmp_path: Path) -> None:
    """A stack's index lists an aarch64 spec the root's does not (yet): the matrix has
    that arch's column, counted in the stack's row only."""
    x86, arm = record(_h(1), "zlib"), record(_h(2), "zlib", target="aarch64")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [x86, arm], members={x86.hash: True})
        write_tag(catalog, "t", [], members={arm.hash: True}, stack="s", checksum="2")
        page = coverage_page(catalog, "t")
    assert [a.target for a in page.archs] == ["aarch64", "x86_64_v3"]
    assert [(row.name, row.counts) for row in page.stacks] == [("root", (0, 1)), ("s", (1, 0))]


def test_a_comparison_of_two_tags_names_both_and_details_each_spec(tmp_path: Path) -> None:
    """``new`` minus ``old``: the page names the tag compared with, is the static one
    unless asked, and each spec (the removed one listed by ``old`` only, too) has its
    compiler, arch, size and page."""
    gone = record(_h(1), "zlib", compiler="gcc@12.3.0")
    came = record(_h(2), "cmake", target="aarch64")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "old", [gone], sizes={gone.hash: 7})
        write_tag(catalog, "new", [came], sizes={came.hash: 9})
        page = compare_page(catalog, "old", "new")
        live = compare_page(catalog, "old", "new", live=True)
    assert (page.old, page.new, page.old_tag, page.since) == ("old", "new", "old", "")
    assert (page.live, live.live) == (False, True)
    (root,) = page.stacks
    details = lambda specs: [(s.name, s.compiler, s.arch, s.size, s.page) for s in specs]  # noqa: E731
    assert details(root.added) == [("cmake", "gcc@13.2.0", "linux-ubuntu24.04-aarch64", 9, True)]
    assert details(root.removed) == [("zlib", "gcc@12.3.0", "linux-ubuntu24.04-x86_64_v3", 7, True)]
    assert (root.size_change, root.sized) == (2, 2)


def test_a_comparison_over_time_is_labelled_with_its_date(tmp_path: Path) -> None:
    """``since_page``: the tag compared with itself, labelled with the date asked, live;
    the spec added has its page and details, a removed one another tag holds too, the
    one no mirror holds any more none."""
    gone, came = record(_h(1), "zlib"), record(_h(2), "cmake", target="aarch64")
    kept = record(_h(3), "ninja")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [gone, kept])
        write_tag(catalog, "t", [came], members={came.hash: True}, sizes={came.hash: 5}, checksum="2")
        write_tag(catalog, "u", [], members={kept.hash: True})
        (sync,) = changes_page(catalog, "t").syncs
        page = since_page(catalog, "t", sync.started_at - 0.001, "2026-01-15")
    assert (page.new, page.old_tag, page.since, page.live) == ("t", "t", "2026-01-15", True)
    (root,) = page.stacks
    assert [(s.name, s.arch, s.size, s.page) for s in root.added] == [("cmake", "linux-ubuntu24.04-aarch64", 5, True)]
    assert [(s.name, s.page) for s in root.removed] == [("ninja", True), ("zlib", False)]


def test_a_change_page_links_only_the_specs_a_mirror_holds(tmp_path: Path) -> None:
    """A spec a sync removed that no mirror holds any more has no page to link; the one
    it added and one another tag still holds have."""
    gone, kept, came = record(_h(1), "zlib"), record(_h(2), "ninja"), record(_h(3), "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [gone, kept])
        write_tag(catalog, "t", [came], members={came.hash: True}, checksum="2")
        write_tag(catalog, "u", [], members={kept.hash: True})
        (sync,) = changes_page(catalog, "t").syncs
    (root,) = sync.stacks
    assert [(s.name, s.page) for s in root.added] == [("cmake", True)]
    assert [(s.name, s.page) for s in root.removed] == [("ninja", True), ("zlib", False)]


def test_a_pivot_refuses_an_unknown_column_axis(tmp_path: Path) -> None:
    """An unknown axis is refused by name, as columns as well as rows."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(_h(1))])
        with pytest.raises(ValueError, match="unknown axis 'bogus'"):
            pivot(catalog, "t", "stack", "bogus")
        with pytest.raises(ValueError, match="unknown axis 'bogus'"):
            pivot(catalog, "t", "bogus", "stack")


def test_a_bottle_table_puts_the_newest_version_first_by_version_not_by_text() -> None:
    """1.10 is newer than 1.9 (which sorts after it as text): the bottle table's first
    row; each cell counts that version's specs on that arch."""
    specs = [
        record(_h(1), version="1.9"),
        record(_h(2), version="1.10"),
        record(_h(3), version="1.10", target="aarch64"),
        record(_h(4), version="1.10", target="aarch64", compiler="clang@18.1.0"),
    ]
    table = bottle_table(specs)
    assert table.archs == ("linux-ubuntu24.04-aarch64", "linux-ubuntu24.04-x86_64_v3")
    assert table.versions == ("1.10", "1.9")
    assert table.counts == ((2, 1), (0, 1))


def test_each_sync_is_told_against_the_listing_just_before_it(tmp_path: Path) -> None:
    """zlib 2.0 comes in one sync, a second build of it in the next: the older sync
    shows the version change, the newer one a build of a version already there."""
    old = record(_h(1), "zlib", version="1.0")
    new = record(_h(2), "zlib", version="2.0")
    again = record(_h(3), "zlib", version="2.0", target="aarch64")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [old])
        write_tag(catalog, "t", [new], members={old.hash: True, new.hash: True}, checksum="2")
        write_tag(catalog, "t", [again], members={old.hash: True, new.hash: True, again.hash: True}, checksum="3")
        newer, older = changes_page(catalog, "t").syncs
    (root,) = newer.stacks
    assert (root.version_changes, root.added_packages, root.rebuilt) == ((), (), ())
    (root,) = older.stacks
    assert root.version_changes == (VersionChange("zlib", (), ("2.0",)),)


def test_releases_are_compared_with_the_previous_release() -> None:
    """Releases pair with the one before them in version order (v1.0.10 after v1.0.9);
    a tag of neither kind pairs with nothing."""
    tags = ["v1.0.9", "v1.0.10", "v0.23.1", "develop", "2026.06.0"]
    assert previous_tags(tags) == {
        "2026.06.0": ["v1.0.10"],
        "v1.0.10": ["v1.0.9"],
        "v1.0.9": ["v0.23.1"],
    }


def test_a_package_is_removed_by_the_sync_that_removed_its_last_spec_only(tmp_path: Path) -> None:
    """zlib's x86_64 build leaves in one sync, its aarch64 one in the next: only the
    newer sync removed the package."""
    x86, arm = record(_h(1), "zlib"), record(_h(2), "zlib", target="aarch64")
    other = record(_h(3), "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [x86, arm, other])
        write_tag(catalog, "t", [], members={arm.hash: True, other.hash: True}, checksum="2")
        write_tag(catalog, "t", [], members={other.hash: True}, checksum="3")
        newer, older = changes_page(catalog, "t").syncs
    assert [(s.removed_count, s.removed_packages) for s in newer.stacks] == [(1, ("zlib",))]
    assert [(s.removed_count, s.removed_packages) for s in older.stacks] == [(1, ())]


def test_a_change_page_details_fifty_syncs_and_a_tag_page_five(tmp_path: Path) -> None:
    """The numbers the pages promise: a change page details the newest 50 syncs and
    counts the rest; a tag page's "recent changes" shows the newest 5."""
    specs = [record(_h(n), f"p{n}") for n in range(53)]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs[:1])
        for n in range(1, 53):  # 52 syncs that change the tag
            write_tag(catalog, "t", [specs[n]], members={s.hash: True for s in specs[: n + 1]}, checksum=str(n))
        page = changes_page(catalog, "t")
        with history_from(catalog):
            recent = recent_syncs("t")
    assert (len(page.syncs), page.older, len(page.earlier)) == (50, 2, 2)
    assert [r.packages_added for r in recent] == [(f"p{n}",) for n in range(52, 47, -1)]


def test_a_change_page_names_the_other_compilers_of_a_spec_built_by_two(tmp_path: Path) -> None:
    """A spec whose C apple-clang built and whose Fortran gcc did, added by a sync: the
    change page lists it with gcc beside apple-clang, as every other list does (kept to
    its C compiler, the change page said apple-clang alone)."""
    darwin = {"platform": "darwin", "os": "sequoia", "target": "m1"}
    gcc, clang = (
        record(h, name, version=version, compiler="none", external=True, in_buildcache=False, **darwin)
        for h, name, version in (("g" * 32, "gcc", "13.3.0"), ("c" * 32, "apple-clang", "16.0.0"))
    )
    build = DEPTYPE_BITS["build"]
    lapack = record(
        "l" * 32,
        "netlib-lapack",
        compiler="apple-clang@16.0.0",
        dependencies=(Dependency(clang.hash, "apple-clang", build, "c"), Dependency(gcc.hash, "gcc", build, "fortran")),
        **darwin,
    )
    before = {gcc.hash: False, clang.hash: False}
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [gcc, clang], members=before)
        write_tag(catalog, "t", [lapack], members={**before, lapack.hash: True}, checksum="2")
        (sync,) = changes_page(catalog, "t").syncs
    (root,) = sync.stacks
    (added,) = root.added
    assert (added.name, added.compiler, added.other_compilers) == (
        "netlib-lapack",
        "apple-clang@16.0.0",
        ("gcc@13.3.0",),
    )
