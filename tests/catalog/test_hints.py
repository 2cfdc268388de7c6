"""What a search that finds nothing says of an OS, target, platform, compiler, version or
variant its scope has no spec of (catalog/hints.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.query import parse
from cachedex.values import Dependency, SpecRecord
from tests.helpers import Demo, record, replace_mirror, write_tag

#: (os, target, compiler) of the specs of tag t: 4 on ubuntu24.04, 3 on rhel8 (one built by
#: no compiler), 1 on each of six more OSes; in stack s, only those on rhel8.
_SPECS = [
    *[("ubuntu24.04", "zen4", "gcc@13.2.0")] * 3,
    ("ubuntu24.04", "zen3", "gcc@12.3.0"),
    *[("rhel8", "x86_64_v3", "clang@17.0.6")] * 2,
    ("rhel8", "x86_64_v3", "none"),
    *[(os, "aarch64", "gcc@13.2.0") for os in ("alma9", "amzn2", "centos7", "debian12", "rocky9", "sles15")],
]


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    records = [
        record(f"{n:032x}", f"p{n}", os=os, target=target, compiler=compiler)
        for n, (os, target, compiler) in enumerate(_SPECS)
    ]
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", records)
    with catalog.writing_tag("t") as writer:
        replace_mirror(writer, "s", {r.hash: True for r in records if r.os == "rhel8"})
    return catalog


@pytest.mark.parametrize(
    ("text", "stack", "hint"),
    [
        ("os=ubuntu22.04", None, "nothing in t matches os=ubuntu22.04; did you mean os=ubuntu24.04 (4 specs)?"),
        ("target=zen44", None, "nothing in t matches target=zen44; did you mean target=zen4 (3 specs), "
         "target=zen3 (1 spec)?"),
        ("%clagn", None, "nothing in t matches %clagn; did you mean %clang (2 specs)?"),
        # ("none": specs built by no compiler, which no one asks for by that name)
        ("%intel", None, "nothing in t matches %intel; the compilers in t: gcc (10 specs), clang (2 specs)"),
        ("platform=windows", None, "nothing in t matches platform=windows; the platforms in t: linux (13 specs)"),
        ("os=macos", None, "nothing in t matches os=macos; the OSes in t: ubuntu24.04 (4 specs), rhel8 (3 specs), "
         "alma9 (1 spec), amzn2 (1 spec), centos7 (1 spec), debian12 (1 spec), and 2 more"),
        # A stack's scope counts its own specs only; a value its tag has is no better there.
        ("os=ubuntu24.04", "s", "nothing in t/s matches os=ubuntu24.04; the OSes in t/s: rhel8 (3 specs)"),
    ],
)  # fmt: skip
def test_a_facet_value_the_scope_lacks_is_told_with_the_values_it_has(
    catalog: Catalog, text: str, stack: str | None, hint: str
) -> None:
    assert catalog.search(parse(text), tag="t", stack=stack, hints=True).hints == (hint,)


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("%gcc@99", "nothing in t matches %gcc@99; the versions of gcc in t: %gcc@13.2.0 (9 specs), "
         "%gcc@12.3.0 (1 spec)"),
        ("%gcc@:12.2", "nothing in t matches %gcc@:12.2; the versions of gcc in t: %gcc@13.2.0 (9 specs), "
         "%gcc@12.3.0 (1 spec)"),
    ],
)  # fmt: skip
def test_a_compiler_at_versions_the_scope_lacks_is_told_with_its_versions(
    catalog: Catalog, text: str, hint: str
) -> None:
    """Which versions there are, newest first, tells more than one spec of the compiler."""
    assert catalog.search(parse(text), tag="t", hints=True).hints == (hint,)
    assert catalog.search(parse(f"p0 {text}"), tag="t", hints=True).hints[1:] == (
        hint.replace("nothing in t matches", "no spec in t has"),
    )


def test_a_value_the_scope_has_is_not_offered_again(catalog: Catalog) -> None:
    """Nothing matches for another reason: no values listed."""
    assert catalog.search(parse("os=rhel8 %clang@17"), tag="t").total == 2
    assert catalog.search(parse("p0 os=rhel8 %clang@17"), tag="t", hints=True).hints == (
        "no p0 spec matches the rest; without the name, 2 specs in t match, e.g. p4@1.3.1 +shared "
        "arch=linux-rhel8-x86_64_v3 %clang@17.0.6",
    )


def test_with_more_conditions_a_line_names_each_value_the_scope_lacks(catalog: Catalog) -> None:
    zen = "no spec in t has target=zen44; did you mean target=zen4 (3 specs), target=zen3 (1 spec)?"
    assert catalog.search(parse("p0 target=zen44"), tag="t", hints=True).hints == (
        "nothing matches target=zen44; without it, 1 spec in t matches, e.g. p0@1.3.1 +shared "
        "arch=linux-ubuntu24.04-zen4 %gcc@13.2.0",
        zen,
    )
    assert catalog.search(parse("p0 target=zen44 %intel"), tag="t", hints=True).hints == (
        "no spec in t matches even with one condition dropped",
        zen,
        "no spec in t has %intel; the compilers in t: gcc (10 specs), clang (2 specs)",
    )


def test_a_target_family_the_scope_has_specs_of_is_not_said_to_be_missing(catalog: Catalog) -> None:
    """No spec's target is x86_64 itself, but zen4 is one of its family."""
    assert catalog.search(parse("p0 target=x86_64: %intel"), tag="t", hints=True).hints == (
        "nothing matches %intel; without it, 1 spec in t matches, e.g. p0@1.3.1 +shared "
        "arch=linux-ubuntu24.04-zen4 %gcc@13.2.0",
        "no spec in t has %intel; the compilers in t: gcc (10 specs), clang (2 specs)",
    )
    assert catalog.search(parse("target=sparc:"), tag="t", hints=True).hints == (
        "nothing in t matches target=sparc:; the targets in t: aarch64 (6 specs), zen4 (3 specs), "
        "x86_64_v3 (3 specs), zen3 (1 spec)",
    )


def test_a_target_nothing_is_built_for_is_told_what_runs_on_it(catalog: Catalog) -> None:
    """A zen5 machine runs binaries built for zen4, zen3 and x86_64_v3 (archspec's
    ancestors of zen5), not aarch64's: ``target=:zen5`` finds them, and that is the hint,
    the search as asked with the range. A target archspec does not know (``zen44``, a
    typo) or one below which nothing is built gets the other hints (above)."""
    assert catalog.search(parse("target=zen5"), tag="t", hints=True).hints == (
        "no spec in t built for zen5 itself matches, but binaries built for a target zen5 descends from run "
        "on it: target=:zen5 finds 7 specs",
    )
    assert catalog.search(parse("p3 target=zen5 %gcc"), tag="t", hints=True).hints == (
        "no spec in t built for zen5 itself matches, but binaries built for a target zen5 descends from run "
        "on it: p3 target=:zen5 %gcc finds 1 spec",
    )
    assert catalog.search(parse("target=:zen5"), tag="t").total == 7
    # The search to run is given apart too (the search page links it; the API returns it).
    assert catalog.search(parse("p3 target=zen5 %gcc"), tag="t", hints=True).suggestion == "p3 target=:zen5 %gcc"
    assert catalog.search(parse("p0 target=zen44"), tag="t", hints=True).suggestion == ""
    hints = catalog.search(parse("p0 target=zen2"), tag="t", hints=True).hints  # zen4 is not below zen2
    assert not any("descends" in hint for hint in hints) and "target=zen2" in hints[0]
    # several targets asked: no range of them is what runs on one machine
    several = catalog.search(parse("target=zen5,zen44"), tag="t", hints=True)
    assert several.suggestion == "" and not any("descends" in hint for hint in several.hints)


def test_a_target_range_that_finds_nothing_is_told_with_the_targets_there(catalog: Catalog) -> None:
    """``:zen3`` (what runs on zen3) holds x86_64_v3 and zen3, not zen4 nor aarch64; a
    range is no misspelt name, so the targets are listed rather than close ones offered;
    with the range dropped, what the rest finds has its own targets, which are listed."""
    assert catalog.search(parse("target=:zen3"), tag="t").total == 4  # x86_64_v3 and zen3
    assert catalog.search(parse("target=:zen3 %gcc@13"), tag="t", hints=True).hints == (
        "nothing matches target=:zen3; without it, 9 specs in t match: target=aarch64 (6 specs), target=zen4 (3 specs)",
        "nothing matches %gcc@13; without it, 4 specs in t match: %clang@17.0.6 (2 specs), "
        "%gcc@12.3.0 (1 spec), no compiler (1 spec)",
    )
    assert catalog.search(parse("target=aarch64:zen3"), tag="t", hints=True).hints == (
        "nothing in t matches target=aarch64:zen3; the targets in t: aarch64 (6 specs), zen4 (3 specs), "
        "x86_64_v3 (3 specs), zen3 (1 spec)",
    )


@pytest.mark.parametrize(
    ("text", "stack", "hint"),
    [
        ("+sharde", None, "nothing in t matches +sharde; did you mean +shared (13 specs)?"),
        ("+sharde", "s", "nothing in t/s matches +sharde; did you mean +shared (3 specs)?"),
        # A close name offered only as asked, and only if that finds specs: no spec is ~shared.
        ("~sharde", None, "nothing in t matches ~sharde"),
        ("+nosuch", None, "nothing in t matches +nosuch"),
    ],
)  # fmt: skip
def test_a_variant_name_no_spec_has_is_told_with_the_close_ones_that_find_specs(
    catalog: Catalog, text: str, stack: str | None, hint: str
) -> None:
    assert catalog.search(parse(text), tag="t", stack=stack, hints=True).hints == (hint,)


def test_with_more_conditions_a_line_names_each_variant_no_spec_has(catalog: Catalog) -> None:
    assert catalog.search(parse("p0 +sharde"), tag="t", hints=True).hints == (
        "nothing matches +sharde; without it, 1 spec in t matches, e.g. p0@1.3.1 +shared "
        "arch=linux-ubuntu24.04-zen4 %gcc@13.2.0",
        "no spec in t has a variant named sharde; did you mean +shared (13 specs)?",
    )


@pytest.fixture
def versions(tmp_path: Path) -> Catalog:
    """Package lib at three versions (1.10 newer than 1.2), with +mpi or ~mpi and a build type."""
    specs = [
        ("2.0", "+mpi", "Release"),
        ("2.0", "+mpi", "Release"),
        ("1.10", "+mpi", "Release"),
        ("1.10", "~mpi", "Debug"),
        ("1.2", "+mpi", "RelWithDebInfo"),
    ]
    records = [
        record(f"{n:032x}", "lib", version=version, variants=(mpi, f"build_type={build}"))
        for n, (version, mpi, build) in enumerate(specs)
    ]
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", records)
    return catalog


@pytest.mark.parametrize(
    ("text", "hints"),
    [
        ("lib@3:", ("nothing matches @3:; without it, 5 specs in t match: lib@2.0 (2 specs), lib@1.10 (2 specs), "
                    "lib@1.2 (1 spec)",)),
        ("lib build_type=MinSizeRel", ("nothing matches build_type=MinSizeRel; without it, 5 specs in t match: "
                                       "build_type=Release (3 specs), build_type=Debug (1 spec), "
                                       "build_type=RelWithDebInfo (1 spec)",)),
        # Of one spec, the spec itself; a variant none of them has: an example.
        ("lib@2 ~mpi", ("nothing matches @2; without it, 1 spec in t matches, e.g. lib@1.10 ~mpi build_type=Debug "
                        "arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0",
                        "nothing matches ~mpi; without it, 2 specs in t match: +mpi (2 specs)")),
        ("lib +cuda", ("nothing matches +cuda; without it, 5 specs in t match, e.g. lib@2.0 +mpi build_type=Release "
                       "arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0",)),
    ],
)  # fmt: skip
def test_a_version_or_variant_value_that_finds_nothing_is_told_with_those_the_rest_has(
    versions: Catalog, text: str, hints: tuple[str, ...]
) -> None:
    """A package's versions newest first (in Spack's order), a variant's values the most common first."""
    assert versions.search(parse(text), tag="t", hints=True).hints == hints


def test_past_so_many_specs_a_hint_gives_an_example_instead(versions: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """The values are counted from the specs' rows: of a looser query that finds too many, one example."""
    monkeypatch.setattr("cachedex.catalog.hints._COUNTED", 4)
    assert versions.search(parse("lib@3:"), tag="t", hints=True).hints == (
        "nothing matches @3:; without it, 5 specs in t match, e.g. lib@2.0 +mpi build_type=Release "
        "arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0",
    )


@pytest.fixture
def depending(tmp_path: Path) -> Catalog:
    """app@1 -> lib@1 (link) -> base@1.10 (link); app@2 -> lib@2 (build only) -> base@1.2;
    app@3 -> base@1.2 (run)."""

    def on(name: str, version: str, mask: int) -> Dependency:
        return Dependency(f"{name}{version}".ljust(32, "0").replace(".", "d"), name, mask, "")

    def spec(name: str, version: str, *dependencies: Dependency) -> SpecRecord:
        return record(on(name, version, 0).hash, name, version=version, dependencies=dependencies)

    records = [
        spec("base", "1.10"),
        spec("base", "1.2"),
        spec("lib", "1", on("base", "1.10", 2)),
        spec("lib", "2", on("base", "1.2", 2)),
        spec("app", "1", on("lib", "1", 2)),
        spec("app", "2", on("lib", "2", 1)),
        spec("app", "3", on("base", "1.2", 4)),
    ]
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", records)
    return catalog


def test_a_dependency_at_versions_none_has_is_told_with_the_versions_the_rest_depend_on(depending: Catalog) -> None:
    """Through link and run edges at any depth, as ``^`` follows them (app@2 needs lib
    only to build it), newest first in Spack's order."""
    assert depending.search(parse("app ^base@9"), tag="t", hints=True).hints == (
        "nothing matches ^base@9; without it, 3 specs in t match: ^base@1.10 (1 spec), ^base@1.2 (1 spec)",
    )
    assert depending.search(parse("app@3 ^base@:1.1"), tag="t", hints=True).hints[-1] == (
        "nothing matches ^base@:1.1; without it, 1 spec in t matches: ^base@1.2 (1 spec)"
    )
    # Alone: the versions that the specs depending on it at all depend on.
    assert depending.search(parse("^base@9"), tag="t", hints=True).hints == (
        "nothing in t matches ^base@9; ^base alone: 4 specs in t match: ^base@1.10 (2 specs), ^base@1.2 (2 specs)",
    )


def test_the_versions_a_hint_lists_are_those_the_search_finds(demo_run: Demo) -> None:
    """In the demo: each version listed for ``hdf5 ^openmpi@9`` finds as many specs as said."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        (hint,) = catalog.search(parse("hdf5 ^openmpi@9"), tag="develop", hints=True).hints
        listed = re.findall(r"\^openmpi@(\S+) \((\d+) specs?\)", hint)
        assert len(listed) >= 2, hint
        for version, count in listed:
            assert catalog.search(parse(f"hdf5 ^openmpi@={version}"), tag="develop").total == int(count)


def test_a_dependency_cycle_from_a_hostile_index_ends_the_count(tmp_path: Path) -> None:
    a, b = "a" * 32, "b" * 32
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(
        catalog,
        "t",
        [
            record(a, "pa", version="1", dependencies=(Dependency(b, "pb", 2, ""),)),
            record(b, "pb", version="2", dependencies=(Dependency(a, "pa", 2, ""),)),
        ],
    )
    assert catalog.search(parse("pa ^pb@9"), tag="t", hints=True).hints == (
        "nothing matches ^pb@9; without it, 1 spec in t matches: ^pb@2 (1 spec)",
    )


def test_a_dependency_at_versions_that_none_of_the_rest_depends_on_is_said_so(depending: Catalog) -> None:
    """base depends on nothing; app@2 needs lib only to build it."""
    assert depending.search(parse("base ^lib@9"), tag="t", hints=True).hints[-1] == (
        "nothing matches ^lib@9; without it, 2 specs in t match: none of them depends on lib through link or run"
    )
    assert depending.search(parse("app@2 ^lib@9"), tag="t", hints=True).hints[-1] == (
        "nothing matches ^lib@9; without it, 1 spec in t matches: it does not depend on lib through link or run"
    )


def test_a_version_another_listed_one_starts_with_is_written_exact(tmp_path: Path) -> None:
    """gmake@4.4 (2 specs) beside gmake@4.4.1 (9 specs): ``@4.4`` holds both, so the hint
    writes ``@=4.4``, the search its count is of (a user searched @4.4 and found 11)."""
    catalog = Catalog(tmp_path / "c.sqlite")
    versions = ["4.4.1"] * 3 + ["4.4"] * 2 + ["4.3"]
    write_tag(catalog, "t", [record(f"{n:032x}", "gmake", version=v) for n, v in enumerate(versions)])
    (hint,) = catalog.search(parse("gmake@:0.1"), tag="t", hints=True).hints
    assert hint.endswith("gmake@4.4.1 (3 specs), gmake@=4.4 (2 specs), gmake@4.3 (1 spec)")
    assert catalog.search(parse("gmake@=4.4"), tag="t").total == 2 < catalog.search(parse("gmake@4.4"), tag="t").total


def test_a_legacy_compiler_name_and_its_package_s_are_listed_once(tmp_path: Path) -> None:
    """Builds by oneapi (old specs) and by intel-oneapi-compilers (new ones) are one
    compiler, found by either name: the hints listed them as two."""
    compilers = ["gcc@11.4.0"] * 3 + ["oneapi@2025.1.0"] * 2 + ["intel-oneapi-compilers@2025.1.0"]
    records = [record(f"{n:032x}", "hdf5", compiler=c) for n, c in enumerate(compilers)]
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", records)
    hints = catalog.search(parse("hdf5 %gcc@13"), tag="t", hints=True).hints
    assert any("%gcc@11.4.0 (3 specs), %oneapi@2025.1.0 (3 specs)" in hint for hint in hints), hints
    assert not any("intel-oneapi-compilers" in hint for hint in hints)
    versions = catalog.search(parse("hdf5 %intel-oneapi-compilers@2024"), tag="t", hints=True).hints
    assert any("%intel-oneapi-compilers@2025.1.0 (3 specs)" in hint for hint in versions), versions


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("builtin.p3", "no package 'builtin.p3' in t; builtin. is a repository's namespace, which cachedex does "
         "not search: search p3"),
        ("^builtin.p3", "nothing in t matches ^builtin.p3: no package 'builtin.p3' in the catalog; builtin. is a "
         "repository's namespace, which cachedex does not search: search ^p3"),
        ("builtin.nothing", "no package 'builtin.nothing' in t"),
    ],
)  # fmt: skip
def test_a_name_written_with_its_namespace_is_told_the_name(catalog: Catalog, text: str, hint: str) -> None:
    """``spack spec -N`` writes ``builtin.hdf5``; cachedex keys packages by name alone."""
    assert catalog.search(parse(text), tag="t", hints=True).hints == (hint,)


def test_a_hash_the_scope_lacks_says_where_the_spec_is(catalog: Catalog) -> None:
    """``/hash`` (as ``spack find`` prints it) of a spec the catalog has, not in the
    scope: the tags that list it, or that no mirror has its binary (its page still shows
    it, where /spec/<hash> leads); "nothing matches" alone read as "no such spec"."""
    elsewhere, unlisted = record("x" * 32, "zlib", version="1.3"), record("y" * 32, "cmake", version="3.31")
    write_tag(catalog, "u", [elsewhere])
    write_tag(catalog, "v", [unlisted], members={unlisted.hash: False})
    hints = {text: catalog.search(parse(text), tag="t", hints=True).hints for text in ("/xxxxxxx", "/yyyyyyy", "/z")}
    assert hints == {
        "/xxxxxxx": ("nothing in t matches /xxxxxxx; zlib@1.3 /xxxxxxx is listed in u",),
        "/yyyyyyy": (
            "nothing in t matches /yyyyyyy; cmake@3.31 /yyyyyyy: mirrors hold it only as a record, without a binary "
            "(its page: /spec/yyyyyyy)",
        ),
        "/z": ("nothing in t matches /z",),
    }
    # a spec the tag's root lists, not its stack s: listed in t, not "without a binary"
    (root_only,) = [r for r in catalog.listed_hashes("t") if r not in catalog.listed_hashes("t", "s")][:1]
    found = catalog.search(parse("/" + root_only), tag="t", stack="s", hints=True).hints
    assert found[0].endswith(f"/{root_only[:7]} is listed in t"), found


def test_a_package_a_stack_lacks_says_its_tag_lists_it(catalog: Catalog) -> None:
    """Searched in one stack of a tag whose root lists it: "in t", not "only as a
    dependency, without a binary" (the hash's hint said so already)."""
    root_only = {s.name for s in catalog.search(parse(""), tag="t", limit=1000).specs} - {
        s.name for s in catalog.search(parse(""), tag="t", stack="s", limit=1000).specs
    }
    name = sorted(root_only)[0]
    count = catalog.search(parse(name), tag="t").total
    hints = catalog.search(parse(name), tag="t", stack="s", hints=True).hints
    assert hints == (f"no package {name!r} in t/s; it is in t ({count} spec{'s' if count > 1 else ''})",)
    assert catalog.search(parse(name), tag="t", hints=True).total == count  # (and no hint there)


def test_what_a_stack_lists_and_its_tag_s_root_does_not_is_said_so(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A tag's searches read its root's listing; a spec only a stack lists (its copy to
    the root not done yet) was said to be held "only as a dependency, without one"
    (by name) or "only as a record, without a binary" (by hash), though the stack has
    its binary: the stack is named, and the search that finds it."""
    from tests.helpers import record, replace_mirror

    a, b, c = "a" * 32, "b" * 32, "c" * 32
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("dev") as writer:
            writer.add_specs([record(a), record(b, "hdf5"), record(c, "hdf5", version="1.14")], {})
            replace_mirror(writer, "root", {a: True})
            replace_mirror(writer, "s1", {a: True, b: True, c: True})
        with catalog.writing_tag("old") as writer:
            replace_mirror(writer, "root", {b: True})
        alone = "stack s1 of dev lists 2 specs of it that dev's root does not (a search of every tag finds it)"

        def hint(text: str, tag: str, stack: str | None = None) -> str:
            (said,) = catalog.search(parse(text), tag=tag, stack=stack, hints=True).hints
            return said

        assert hint("hdf5", "dev") == f"no package 'hdf5' in dev; it is in old (1 spec); {alone}"
        assert hint("hdf5@2", "dev", "s1") == f"no package 'hdf5' in dev/s1; it is in old (1 spec); {alone}"
        assert hint("/ccccccc", "dev") == (
            "nothing in dev matches /ccccccc; hdf5@1.14 /ccccccc: "
            "stack s1 of dev lists it, not dev's root (a search of every tag finds it)"
        )
        assert hint("/bbbbbbb", "dev") == (
            "nothing in dev matches /bbbbbbb; hdf5@1.3.1 /bbbbbbb is listed in old; "
            "stack s1 of dev lists it, not dev's root (a search of every tag finds it)"
        )
        assert {s.hash for s in catalog.search(parse("hdf5")).specs} == {b, c}
