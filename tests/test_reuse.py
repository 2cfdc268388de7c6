"""``reuse_report``: an environment's specs against the demo's tags, checked spec by spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.demo.nodes import target_object
from cachedex.errors import LookupFailed, UnknownStack, UnknownTag
from cachedex.ingest.lockfile import Lockfile, read_lockfile
from cachedex.reuse import Developed, ReuseReport, reuse_report
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import Demo, record, write_tag
from tests.lockfiles import (
    above,
    changed,
    closure,
    demo_nodes,
    developed,
    lockfile,
    roots_named,
    spliced,
    write_lockfile,
)


def _report(demo_run: Demo, tmp_path: Path, specs: dict[str, Any], roots: list[str], **scope: Any) -> ReuseReport:
    lock = _lock(tmp_path, specs, roots)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        return reuse_report(catalog, lock.path, lock.specs, [r.hash for r in lock.roots], **scope)


def _lock(tmp_path: Path, specs: dict[str, Any], roots: list[str]) -> Lockfile:
    return read_lockfile(write_lockfile(tmp_path / "spack.lock", lockfile(specs, roots)))


def test_each_tag_counts_the_binaries_it_lists_of_the_environment(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5", "py-numpy")
    specs = closure(nodes, roots)
    report = _report(demo_run, tmp_path, specs, roots)
    external = {key for key, node in specs.items() if "external" in node}
    assert (report.specs, report.roots, report.external) == (len(specs), 2, len(external))
    assert report.tags[0].tag == "develop" and report.tags[0].missing == ()
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        assert {row.tag for row in report.tags} == set(catalog.tag_names())
        for row in report.tags:
            # one spec at a time: the tags whose root mirror lists it, as a spec page says
            have = [
                key
                for key in set(specs) - external
                if any(
                    tag == row.tag and stack == "root" and listed for tag, stack, listed, _, _ in catalog.holders(key)
                )
            ]
            summaries = [catalog.spec_summary(key) for key in have]
            sizes = [s.size for s in summaries if s is not None and s.size is not None]
            assert (row.cached, row.needed, row.size, row.sized) == (
                len(have),
                len(specs) - len(external),
                sum(sizes) if sizes else None,  # (unknown, not 0)
                len(sizes),
            )
    counts = [row.cached for row in report.tags]
    assert counts == sorted(counts, reverse=True) and 0 < report.tags[1].cached < report.tags[0].cached


def test_a_changed_dependency_is_the_cause_and_what_builds_on_it_follows(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5", "py-numpy")
    (zlib,) = roots_named(nodes, "zlib-ng")
    specs, renamed = changed(closure(nodes, roots), "zlib-ng", lambda node: node.update(version="9.9.9"))
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    (develop,) = report.tags
    missing = {m.hash: m for m in develop.missing}
    assert set(missing) == above(specs, {renamed[zlib]})  # zlib-ng and all that reach it
    assert develop.cached == develop.needed - len(missing)
    cause = missing.pop(renamed[zlib])
    assert not cause.follows and cause.nearest is not None and cause.nearest.hash == zlib
    assert [(d.what, d.cached, d.wanted) for d in cause.nearest.differences] == [
        ("version", nodes[zlib]["version"], "9.9.9")
    ]
    for m in missing.values():
        assert m.follows and m.nearest is not None, m.name
        # each names the dependencies that differ, every one of them to build too
        assert m.nearest.differences and all(d.what.startswith("^") for d in m.nearest.differences)
        assert m.root == (m.hash in {renamed[r] for r in roots})
        wanted = {e["name"]: e["hash"] for e in specs[m.hash]["dependencies"]}
        assert all(wanted[d.what[1:]] in missing or wanted[d.what[1:]] == cause.hash for d in m.nearest.differences)


def test_a_variant_of_its_own_is_the_cause(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = changed(closure(nodes, roots), "hdf5", lambda node: node["parameters"].update(debug=True))
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    (only,) = report.tags[0].missing
    assert only.name == "hdf5" and only.root and not only.follows and only.nearest is not None
    assert [(d.what, d.cached, d.wanted) for d in only.nearest.differences] == [("variants", "", "+debug")]


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda node: node["parameters"].update(cflags=["-O3"]), ("cflags", "", "-O3")),
        (lambda node: node.update(package_hash="a" * 32), ("package_hash", None, "aaaaaaa")),
        (lambda node: node.update(namespace="myrepo"), ("namespace", "builtin", "myrepo")),
    ],
    ids=["flags", "recipe", "namespace"],
)
def test_what_only_the_nodes_say_is_the_cause(demo_run: Demo, tmp_path: Path, change: Any, what: Any) -> None:
    """A nearest build that differs in its flags, its recipe (package_hash: the most common
    reason a develop binary is not reused) or its namespace was said to differ in nothing
    ("differences": [], which says "the same build")."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = changed(closure(nodes, roots), "hdf5", change)
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    (only,) = report.tags[0].missing
    assert only.nearest is not None and not only.follows
    cached = nodes[roots[0]]["package_hash"][:7] if what[1] is None else what[1]
    assert [(d.what, d.cached, d.wanted) for d in only.nearest.differences] == [(what[0], cached, what[2])]


def test_a_dependency_of_other_types_is_the_cause(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    edge = nodes[roots[0]]["dependencies"][0]
    kinds = edge["parameters"]["deptypes"]
    other = ["build"] if kinds != ["build"] else ["build", "link"]

    def retyped(node: dict[str, Any]) -> None:
        node["dependencies"][0]["parameters"]["deptypes"] = other

    specs, renamed = changed(closure(nodes, roots), "hdf5", retyped)
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    (only,) = report.tags[0].missing
    assert only.nearest is not None
    expected = (f"^{edge['name']} type", ",".join(sorted(kinds)), ",".join(other))
    assert [(d.what, d.cached, d.wanted) for d in only.nearest.differences] == [expected]


def test_a_build_of_the_same_version_is_found_among_many_newer(
    demo_run: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nearest build was chosen from the first 500 of the package, newest first: a
    build of the spec's own version past them was missed, and the version said to
    differ. Builds of the spec's version are looked at first."""
    import cachedex.reuse

    monkeypatch.setattr(cachedex.reuse, "CANDIDATES", 1)  # (develop lists openmpi 5.0.8 and 4.1.6)
    nodes = demo_nodes("develop", "aws-pcluster-neoverse_v1")
    roots = roots_named(nodes, "openmpi")
    assert nodes[roots[0]]["version"] == "4.1.6"
    specs, renamed = changed(closure(nodes, roots), "openmpi", lambda node: node["parameters"].update(debug=True))
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    (only,) = report.tags[0].missing
    assert only.nearest is not None and only.nearest.version == "4.1.6"
    assert [d.what for d in only.nearest.differences] == ["variants"]


def test_a_package_the_tag_does_not_have_and_unknown_scopes(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    specs, renamed = changed(closure(nodes, roots), "zlib-ng", lambda node: node.update(name="zlib-nowhere"))
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    (only,) = report.tags[0].missing
    assert only.name == "zlib-nowhere" and only.nearest is None
    with pytest.raises(UnknownTag):
        _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["nope"])
    with pytest.raises(UnknownStack):
        _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"], stack="nope")


def test_a_stack_counts_what_it_holds(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs = closure(nodes, roots)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for stack in ("e4s", "developer-tools-darwin"):
            (row,) = _report(demo_run, tmp_path, specs, roots, tags=["develop"], stack=stack).tags
            assert row.stack == stack
            assert row.cached == len(catalog.listed_hashes("develop", stack, among=list(specs)))
        assert row.cached < row.needed  # no hdf5 for macOS
        # every tag, in a stack some lack: those that have it, and those left out named
        report = _report(demo_run, tmp_path, specs, roots, stack="ml-linux-x86_64-rocm")
        having = [tag for tag in catalog.tag_names() if "ml-linux-x86_64-rocm" in catalog.stack_names(tag)]
        assert 0 < len(having) < len(catalog.tag_names())
        assert sorted(row.tag for row in report.tags) == sorted(having)
        assert sorted(report.without_stack) == sorted(set(catalog.tag_names()) - set(having))
    with pytest.raises(LookupFailed, match="no tag has a stack 'nope'"):
        _report(demo_run, tmp_path, specs, roots, stack="nope")


def test_spacks_own_nodes_as_a_lockfile(mirrors: Path, tmp_path: Path) -> None:
    """The real test index's nodes (spec v4 with a compiler key, v5 with compilers as
    dependencies), as a lockfile of Spack 1.x would hold them, against that mirror synced:
    every spec the mirror lists is found, the external compiler set apart; without one
    record, it and what depends on it are to build."""
    from cachedex.ingest.sync import sync
    from tests.helpers import LIBDWARF_CORE2, LIBELF_CORE2, fixture_index, make_config, write_v2_mirror

    installs = fixture_index(mirrors)["database"]["installs"]  # type: ignore[index]
    specs = {key: record["spec"] for key, record in installs.items()}
    listed = {key for key, record in installs.items() if record.get("in_buildcache")}
    mirror = tmp_path / "m"
    write_v2_mirror(mirror, fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    config = make_config(tmp_path, [{"name": "t", "url": str(mirror)}])
    lock = _lock(tmp_path, specs, [LIBDWARF_CORE2])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        report = reuse_report(catalog, lock.path, lock.specs, [LIBDWARF_CORE2])
    (row,) = report.tags
    external = {key for key, node in specs.items() if "external" in node}
    assert external and report.external == len(external) and row.needed == len(specs) - len(external)
    missing = {m.hash: m for m in row.missing}
    # libelf (core2) is not in the mirror any more; libdwarf (core2) was built with it
    assert LIBELF_CORE2 in missing and not missing[LIBELF_CORE2].follows
    assert set(missing) <= {LIBELF_CORE2, LIBDWARF_CORE2} | (set(specs) - listed)
    assert row.cached == len(listed - {LIBELF_CORE2} - set(missing))
    assert row.sized == 0 and row.size is None  # no size known: unknown, not 0 (as everywhere)


def test_a_tag_asked_for_twice_is_one_row(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    report = _report(demo_run, tmp_path, closure(nodes, roots), roots, tags=["v1.0.2", "develop", "v1.0.2"])
    assert [row.tag for row in report.tags] == ["develop", "v1.0.2"]


@pytest.mark.parametrize(("target", "runs"), [("zen4", True), ("x86_64_v2", False)])
def test_a_target_says_whether_the_cached_build_runs_there(
    demo_run: Demo, tmp_path: Path, target: str, runs: bool
) -> None:
    """e4s builds hdf5 for x86_64_v3, which a zen4 machine runs and an x86_64_v2 one does not."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    assert nodes[roots[0]]["arch"]["target"]["name"] == "x86_64_v3"
    moved = target_object(target)
    specs, renamed = changed(closure(nodes, roots), "hdf5", lambda node: node["arch"].update(target=moved))
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    (only,) = report.tags[0].missing
    assert only.nearest is not None and only.nearest.hash == roots[0]
    assert [(d.what, d.cached, d.wanted, d.runs) for d in only.nearest.differences] == [
        ("target", "x86_64_v3", target, runs)
    ]


def test_a_spliced_spec_comes_from_its_build_specs_binary(demo_run: Demo, tmp_path: Path) -> None:
    """Spack installs a spliced spec from its build spec's binary, rewired: the tag that
    lists that binary gives it; the build specs' own nodes are not the environment's."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    (zlib,) = roots_named(nodes, "zlib-ng")
    specs, renamed = spliced(nodes, roots, "zlib-ng")
    lock = _lock(tmp_path, specs, [renamed[r] for r in roots])
    environment = closure(specs, [renamed[r] for r in roots])
    splices = {new: old for old, new in renamed.items() if new != old and specs[new]["name"] != "zlib-ng"}
    assert splices and lock.splices == splices
    assert {spec.hash for spec in lock.specs} == set(environment) < set(specs)  # the build specs' apart
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        report = reuse_report(
            catalog, lock.path, lock.specs, [renamed[r] for r in roots], tags=["develop"], splices=lock.splices
        )
        sizes = catalog.spec_sizes([splices.get(key, key) for key in environment])
    (develop,) = report.tags
    external = {key for key, node in environment.items() if "external" in node}
    assert develop.needed == len(environment) - len(external)
    # only the new zlib-ng is to build; each spec spliced onto it comes from its build spec
    assert [m.hash for m in develop.missing] == [renamed[zlib]]
    assert develop.rewired == len(splices) and develop.cached == develop.needed - 1
    known = [size for key, size in sizes.items() if size is not None and key != zlib]
    assert develop.sized == len(known) and develop.size == sum(known)


@pytest.mark.parametrize("path", ["/home/me/src/zlib-ng", "/home/me/my sources/zlib-ng"])
def test_a_spec_developed_in_place_is_built_from_its_source_with_no_nearest_build(
    demo_run: Demo, tmp_path: Path, path: str
) -> None:
    """Spack never takes a spec with ``dev_path`` from a build cache (its concretizer
    reuses none, ``solver/reuse.py``): it is listed apart, in no tag's count and with no
    nearest build; what builds on it has new hashes and follows from it."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5", "py-numpy")
    (zlib,) = roots_named(nodes, "zlib-ng")
    specs, renamed = developed(nodes, roots, "zlib-ng", path)
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    assert report.developed == (Developed(renamed[zlib], "zlib-ng", nodes[zlib]["version"], False),)
    external = sum("external" in node for node in specs.values())
    assert report.external == external
    (row,) = report.tags
    assert row.needed == len(specs) - external - 1
    missing = {m.hash: m for m in row.missing}
    assert set(missing) == above(specs, {renamed[zlib]}) - {renamed[zlib]}
    assert row.cached == row.needed - len(missing)
    for m in missing.values():  # each is built because zlib-ng is, not for a cause of its own
        assert m.follows and m.nearest is not None, m.name
        assert all(d.what.startswith("^") for d in m.nearest.differences)


def test_a_root_developed_in_place_is_no_spec_to_build(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = developed(nodes, roots, "hdf5")
    report = _report(demo_run, tmp_path, specs, [renamed[r] for r in roots], tags=["develop"])
    ((hdf5,), (row,)) = report.developed, report.tags
    assert (hdf5.hash, hdf5.root) == (renamed[roots[0]], True)
    assert row.missing == () and row.cached == row.needed == len(specs) - report.external - 1


def _synthetic(tmp_path: Path, cached: list[Any], lock: list[Any], roots: list[str], **scope: Any) -> ReuseReport:
    """``lock`` against a catalog whose tag ``t`` lists ``cached`` (records)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", cached)
        return reuse_report(catalog, "spack.lock", lock, roots, tags=["t"], **scope)


@pytest.mark.parametrize("farther_first", [True, False])
def test_the_nearest_build_differs_in_the_fewest_variants(tmp_path: Path, farther_first: bool) -> None:
    near, far = ("b" * 32, "a" * 32) if farther_first else ("a" * 32, "b" * 32)
    cached = [
        record(near, "hdf5", variants=("+cxx", "+fortran", "+mpi", "+shared")),
        record(far, "hdf5", variants=("+cxx", "~fortran", "~mpi", "+shared")),
    ]
    wanted = record("w" * 32, "hdf5", variants=("+cxx", "+fortran", "+mpi", "~shared"))
    (row,) = _synthetic(tmp_path, cached, [wanted], [wanted.hash]).tags
    (missing,) = row.missing
    assert missing.nearest is not None and missing.nearest.hash == near
    assert [(d.what, d.cached, d.wanted) for d in missing.nearest.differences] == [("variants", "+shared", "~shared")]


def test_a_spec_follows_only_when_every_dependency_it_differs_in_is_missing_too(tmp_path: Path) -> None:
    """The cached app links libA and libB; the one wanted, libA of another build the
    tag lacks, and libB of another build the tag lists: libA is why, but the app does
    not merely follow from what is missing (libB's build differs too)."""
    lib_a, lib_b, other_b = record("a" * 32, "liba"), record("b" * 32, "libb"), record("c" * 32, "libb", version="2.0")
    link = DEPTYPE_BITS["link"]
    app = record(
        "d" * 32,
        "app",
        dependencies=(Dependency(lib_a.hash, "liba", link, ""), Dependency(lib_b.hash, "libb", link, "")),
    )
    new_a = record("e" * 32, "liba", version="9.9")
    wanted = record(
        "f" * 32,
        "app",
        dependencies=(Dependency(new_a.hash, "liba", link, ""), Dependency(other_b.hash, "libb", link, "")),
    )
    (row,) = _synthetic(tmp_path, [lib_a, lib_b, other_b, app], [wanted, new_a, other_b], [wanted.hash]).tags
    missing = {m.name: m for m in row.missing}
    assert set(missing) == {"app", "liba"} and not missing["liba"].follows
    found = missing["app"]
    assert found.nearest is not None and found.nearest.hash == app.hash and not found.follows
    assert [(d.what, d.cached, d.wanted) for d in found.nearest.differences] == [
        ("^liba", "1.3.1 /aaaaaaa", "9.9 /eeeeeee"),  # (each side's version: the wanted one's from the lockfile)
        ("^libb", "1.3.1 /bbbbbbb", "2.0 /ccccccc"),
    ]


def _app(dag_hash: str, *deps: Any, **fields: Any) -> Any:
    link = DEPTYPE_BITS["link"]
    return record(dag_hash, "app", dependencies=tuple(Dependency(d.hash, d.name, link, "") for d in deps), **fields)


def test_a_spec_with_a_difference_of_its_own_does_not_follow_from_its_dependencies(tmp_path: Path) -> None:
    """Its only dependency is missing too, but it differs in a variant: that is its own."""
    lib, new_lib = record("a" * 32, "liba"), record("e" * 32, "liba", version="9.9")
    app = _app("d" * 32, lib)
    wanted = _app("f" * 32, new_lib, variants=("+shared", "+debug"))
    (row,) = _synthetic(tmp_path, [lib, app], [wanted, new_lib], [wanted.hash]).tags
    found = {m.name: m for m in row.missing}["app"]
    assert found.nearest is not None and not found.follows
    assert [d.what for d in found.nearest.differences] == ["variants"]


def test_a_spec_follows_not_from_a_dependency_only_the_cached_build_has(tmp_path: Path) -> None:
    """The cached app links liba and libb, the one wanted another liba (missing) alone:
    libb, which it does not have, is not missing; it differs by more than follows."""
    lib_a, lib_b, new_a = record("a" * 32, "liba"), record("b" * 32, "libb"), record("e" * 32, "liba", version="9.9")
    wanted = _app("f" * 32, new_a)
    (row,) = _synthetic(tmp_path, [lib_a, lib_b, _app("d" * 32, lib_a, lib_b)], [wanted, new_a], [wanted.hash]).tags
    found = {m.name: m for m in row.missing}["app"]
    assert found.nearest is not None and not found.follows
    assert [(d.what, d.wanted) for d in found.nearest.differences] == [("^liba", "9.9 /eeeeeee"), ("^libb", "")]


def test_a_build_that_differs_in_nothing_said_does_not_follow(tmp_path: Path) -> None:
    """The same fields, node and dependencies under another hash (a change no listing
    holds): no difference to name, and nothing it follows from."""
    lib = record("a" * 32, "liba")
    wanted = _app("f" * 32, lib)
    (row,) = _synthetic(tmp_path, [lib, _app("d" * 32, lib)], [wanted, lib], [wanted.hash]).tags
    (found,) = row.missing
    assert found.nearest is not None and found.nearest.hash == "d" * 32
    assert found.nearest.differences == () and not found.follows


@pytest.mark.parametrize(
    ("near", "far"),
    [
        ({"target": "zen4"}, {"compiler": "clang@19.1.0"}),  # another compiler is farther than another target
        ({"os": "rhel9"}, {"platform": "darwin"}),
        ({"target": "zen4"}, {"os": "rhel9"}),
        ({"variants": ("+shared", "+a", "+b", "+c")}, {"target": "zen4"}),  # any field outweighs variants
        ({"variants": ("+shared", "+a")}, {"variants": ()}),  # one variant more, against one fewer
    ],
)
def test_the_nearest_build_weighs_the_fields_in_order(
    tmp_path: Path, near: dict[str, Any], far: dict[str, Any]
) -> None:
    wanted = record("w" * 32, "zlib", variants=("+shared", "+a"))
    for names in (("a", "b"), ("b", "a")):  # (whichever the search finds first)
        cached = [record(names[0] * 32, "zlib", **near), record(names[1] * 32, "zlib", **far)]
        (row,) = _synthetic(tmp_path / names[0], cached, [wanted], [wanted.hash]).tags
        (missing,) = row.missing
        assert missing.nearest is not None and missing.nearest.hash == names[0] * 32, (near, far)


def test_variants_the_cached_build_lacks_count_as_far_as_those_it_adds(tmp_path: Path) -> None:
    wanted = record("w" * 32, "zlib", variants=("+a", "+b", "+c"))
    for names in (("a", "b"), ("b", "a")):
        lacking_all = record(names[1] * 32, "zlib", variants=())  # (three it lacks)
        one_more = record(names[0] * 32, "zlib", variants=("+a", "+b", "+c", "+d"))  # (one it adds)
        (row,) = _synthetic(tmp_path / names[0], [lacking_all, one_more], [wanted], [wanted.hash]).tags
        (missing,) = row.missing
        assert missing.nearest is not None and missing.nearest.hash == one_more.hash


def test_a_stack_a_named_tag_lacks_is_refused(tmp_path: Path) -> None:
    zlib = record("a" * 32, "zlib")
    with pytest.raises(UnknownStack):
        _synthetic(tmp_path, [zlib], [zlib], [zlib.hash], stack="e4s")


def test_only_the_tag_that_gives_the_most_names_what_it_lacks(tmp_path: Path) -> None:
    zlib, cmake = record("a" * 32, "zlib"), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "most", [zlib, cmake])
        write_tag(catalog, "less", [], members={zlib.hash: True})
        report = reuse_report(catalog, "spack.lock", [zlib, cmake], [cmake.hash], tags=["less", "most"])
    assert [(row.tag, row.cached, len(row.missing)) for row in report.tags] == [("most", 2, 0), ("less", 1, 0)]


def test_a_spliced_spec_a_tag_lists_by_its_own_hash_is_not_rewired(tmp_path: Path) -> None:
    spliced, build = record("s" * 32, "zlib", version="9.9"), record("b" * 32, "zlib")
    (row,) = _synthetic(tmp_path, [spliced, build], [spliced], [spliced.hash], splices={spliced.hash: build.hash}).tags
    assert (row.cached, row.needed, row.rewired) == (1, 1, 0)


def test_a_spliced_spec_neither_of_whose_binaries_a_tag_lists_is_missing(tmp_path: Path) -> None:
    listed = record("a" * 32, "zlib")
    spliced, build = record("s" * 32, "zlib", version="9.9"), "b" * 32  # (its build spec: in no tag)
    (row,) = _synthetic(tmp_path, [listed], [spliced], [spliced.hash], splices={spliced.hash: build}).tags
    assert (row.cached, row.needed, row.rewired) == (0, 1, 0)
    assert [m.hash for m in row.missing] == [spliced.hash]


def test_of_builds_as_near_the_one_whose_node_differs_least_is_named(tmp_path: Path) -> None:
    """Two builds of the same configuration: one built with ``cflags=-O3`` against the same
    dependencies, one with the same flags against other builds of both: what only the
    node says counts first (said of the build itself, not of its DAG)."""
    link = DEPTYPE_BITS["link"]
    lib_a, lib_b = record("a" * 32, "liba"), record("b" * 32, "libb")
    other_a, other_b = record("c" * 32, "liba", version="2"), record("d" * 32, "libb", version="2")
    mine = (Dependency(lib_a.hash, "liba", link, ""), Dependency(lib_b.hash, "libb", link, ""))
    theirs = (Dependency(other_a.hash, "liba", link, ""), Dependency(other_b.hash, "libb", link, ""))
    flagged = record("e" * 32, "app", dependencies=mine, node=b'{"name": "app", "parameters": {"cflags": ["-O3"]}}')
    unflagged = record("f" * 32, "app", dependencies=theirs)
    wanted = record("w" * 32, "app", dependencies=mine)
    cached = [lib_a, lib_b, other_a, other_b, flagged, unflagged]
    (row,) = _synthetic(tmp_path, cached, [wanted, lib_a, lib_b], [wanted.hash]).tags
    (missing,) = row.missing
    assert missing.nearest is not None and missing.nearest.hash == unflagged.hash
    assert [d.what for d in missing.nearest.differences] == ["^liba", "^libb"]
