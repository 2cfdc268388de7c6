"""A tag page's columns (``facets.tag_specs``) against their plain definition: each
package's specs newest version first in Spack's order (equal versions by hash, the
greater first), every column an index into its sorted values, each spec's stacks one of
the distinct sets, numbered in the order they first come; each target's machines, those
whose target is it or descends from it, by Spack's rule (``runs_on``); each spec's
compilers (its own and the others that built it) one of the distinct sets, as stacks."""

from __future__ import annotations

import archspec.cpu
import msgspec
from hypothesis import given
from hypothesis import strategies as st

from cachedex.publish.tag_columns import newest_first, tag_specs
from cachedex.versions import version_key
from tests.helpers import spack_target_satisfies

_COLUMNS = ("version", "platform", "os", "target")


class ListedSpec(msgspec.Struct, frozen=True):
    """What ``tag_specs`` reads of a listed spec (the catalog's ``ListedRow`` has these
    fields, its stacks as their text joined by \x1f)."""

    hash: str
    version: str
    compiler: str
    platform: str
    os: str
    target: str
    size: int | None
    stacks: tuple[str, ...] | str


# Versions that Spack orders in every way it knows: numbers, words, pre-releases,
# branches, git versions, and spellings that compare equal (1.0, 1-0, 1_0).
_version = st.sampled_from(
    ["1.0", "1-0", "1_0", "1.0.0", "1.0a", "1.0rc1", "1.0rc2", "2.9.1", "2.11.1", "develop", "main", "abc=1.0", "0.1"]
)
_spec = st.builds(
    ListedSpec,
    hash=st.text("abcdefghijklmnopqrstuvwxyz234567", min_size=3, max_size=3),
    version=_version,
    compiler=st.sampled_from(["gcc@13", "gcc@12", "none"]),
    platform=st.sampled_from(["linux", "darwin"]),
    os=st.sampled_from(["ubuntu22.04", "rhel8"]),
    target=st.sampled_from(["x86_64", "zen4", "aarch64", "not-a-target"]),
    size=st.one_of(st.none(), st.integers(0, 10**12)),
    stacks=st.lists(st.sampled_from(["root", "e4s", "ml", "hpc"]), min_size=1, max_size=4).map(tuple),
)
_packages = st.dictionaries(
    st.sampled_from(["zlib", "hdf5", "py-numpy", "cmake"]), st.lists(_spec, min_size=1, max_size=8)
)
#: The compilers besides its own of the specs that several built (by hash).
_others = st.dictionaries(
    st.text("abcdefghijklmnopqrstuvwxyz234567", min_size=3, max_size=3),
    st.lists(st.sampled_from(["gcc@14", "gcc@13", "oneapi@2025"]), min_size=1, max_size=2, unique=True).map(tuple),
)


@given(packages=_packages, others=_others)
def test_tag_columns_follow_their_plain_definition(
    packages: dict[str, list[ListedSpec]], others: dict[str, tuple[str, ...]]
) -> None:
    by_name = sorted(packages.items())
    data = tag_specs(by_name, lambda name: name != "cmake", others)
    columns = data.columns

    ordered = [
        spec
        for _, specs in by_name
        # newest version first, a version's builds by hash (as searches and package pages)
        for spec in sorted(
            sorted(specs, key=lambda s: s.hash), key=lambda s: (version_key(s.version), s.version), reverse=True
        )
    ]
    values = {column: sorted({getattr(s, column) for s in ordered}) for column in _COLUMNS}
    values["version"] = newest_first(values["version"])
    compilers = [{s.compiler, *others.get(s.hash, ())} for s in ordered]
    values["compiler"] = sorted(set().union(*compilers))
    values["stack"] = sorted({stack for s in ordered for stack in s.stacks})
    known = [*archspec.cpu.TARGETS, *values["target"]]
    run_by = [sorted({m for m in known if spack_target_satisfies(t, f":{m}")}) for t in values["target"]]
    values["runs_on"] = sorted({machine for run in run_by for machine in run})
    assert columns.values == {column: tuple(found) for column, found in values.items()}
    assert [[values["runs_on"][n] for n in run] for run in columns.runs_on] == run_by
    assert columns.names == tuple(name for name, _ in by_name)
    assert columns.counts == tuple(len(specs) for _, specs in by_name)
    for column in _COLUMNS:
        assert [values[column][n] for n in getattr(columns, column)] == [getattr(s, column) for s in ordered]
    sets: list[tuple[int, ...]] = []
    for spec in ordered:
        held = tuple(sorted({values["stack"].index(stack) for stack in spec.stacks}))
        if held not in sets:
            sets.append(held)
    assert columns.stack_sets == tuple(sets)
    assert [columns.stack_sets[n] for n in columns.stacks] == [
        tuple(sorted({values["stack"].index(stack) for stack in spec.stacks})) for spec in ordered
    ]
    compiler_sets: list[tuple[int, ...]] = []
    for found in compilers:
        held = tuple(sorted(values["compiler"].index(compiler) for compiler in found))
        if held not in compiler_sets:
            compiler_sets.append(held)
    assert columns.compiler_sets == tuple(compiler_sets)
    assert [{values["compiler"][n] for n in columns.compiler_sets[at]} for at in columns.compiler] == compilers
    assert data.sizes == [s.size for s in ordered]
    assert columns.size == tuple(s.size for s in ordered)  # exact: a filtered row adds them up
    assert columns.unlinked == tuple(n for n, (name, _) in enumerate(by_name) if name == "cmake")
    assert data.starts[-1] == len(ordered)


@given(packages=_packages)
def test_stacks_given_as_the_catalogs_text_make_the_same_columns(packages: dict[str, list[ListedSpec]]) -> None:
    # The catalog's listing joins a spec's stacks by \x1f; the columns must not tell.
    by_name = sorted(packages.items())
    as_text = [
        (name, [msgspec.structs.replace(spec, stacks="\x1f".join(spec.stacks)) for spec in specs])
        for name, specs in by_name
    ]
    assert tag_specs(as_text, lambda name: True) == tag_specs(by_name, lambda name: True)


def test_a_variant_filter_typed_by_hand_reads_its_plus() -> None:
    """A package page's ``?variant=+cuda`` reaches the server as " cuda" (a query's "+" is a space)."""
    from cachedex.publish.facets import PACKAGE_FILTER_KEYS, active_filters

    given = {"variant": " cuda", "os": "", "target": "zen3"}
    assert active_filters(given, PACKAGE_FILTER_KEYS) == {"target": "zen3", "variant": "+cuda"}
    assert active_filters({"variant": "~cuda"}, PACKAGE_FILTER_KEYS) == {"variant": "~cuda"}


def test_a_spec_with_no_stacks_text_is_in_no_stack() -> None:
    """Empty stacks text (as the catalog's joined text of no stack) is no stack, as an
    empty tuple is: the tag page's stack filter offers no blank stack."""
    spec = ListedSpec("aaa", "1.0", "gcc@13", "linux", "rhel8", "x86_64", None, ("root",))
    bare = msgspec.structs.replace(spec, hash="bbb", stacks="")
    columns = tag_specs([("zlib", [spec, bare])], lambda name: True).columns
    assert columns.values["stack"] == ("root",)
    assert [columns.stack_sets[n] for n in columns.stacks] == [(0,), ()]
    as_tuple = msgspec.structs.replace(bare, stacks=())
    assert tag_specs([("zlib", [spec, as_tuple])], lambda name: True).columns == columns
