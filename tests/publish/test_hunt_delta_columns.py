"""A tag page's columns (``publish/tag_columns``) on a few hand-made specs: value order,
the order of a package's specs, empty and several stacks, other compilers, names with no
link, where each package starts, and the machines a target runs on."""

from __future__ import annotations

from cachedex.publish.tag_columns import machines, newest_first, tag_specs
from tests.publish.test_facets import ListedSpec


def _spec(
    dag_hash: str, version: str = "1.0", *, platform: str = "linux", stacks: str = "root", target: str = "x86_64"
) -> ListedSpec:
    return ListedSpec(dag_hash * 32, version, "gcc", platform, "ubuntu24.04", target, 10, stacks)


def test_equal_versions_keep_the_greater_text_first() -> None:
    """Versions Spack orders equal (1.0, 1-0) both stay, the greater text first, after newer ones."""
    assert newest_first(["1-0", "2.0", "1.0", "2.0"]) == ["2.0", "1.0", "1-0"]


def test_a_package_s_specs_newest_first_then_by_hash() -> None:
    """Within a package: newest version first, equal versions by hash (as package pages)."""
    specs = [_spec("b", "1.0", platform="darwin"), _spec("c", "2.0"), _spec("a", "1.0", platform="linux")]
    found = tag_specs([("p", specs)], lambda _: True)
    platforms = found.columns.values["platform"]
    assert [platforms[n] for n in found.columns.platform] == ["linux", "linux", "darwin"]  # c, a, b
    versions = found.columns.values["version"]
    assert [versions[n] for n in found.columns.version] == ["2.0", "1.0", "1.0"]
    assert found.columns.values["version"] == ("2.0", "1.0")
    assert found.starts == [0, 3]


def test_values_are_sorted_not_in_the_order_they_come() -> None:
    """``values`` of a column are sorted; each cell is the index of its value."""
    found = tag_specs([("p", [_spec("a", platform="linux"), _spec("b", "0.9", platform="darwin")])], lambda _: True)
    assert found.columns.values["platform"] == ("darwin", "linux")
    assert found.columns.platform == (1, 0)


def test_stacks_as_text_empty_and_several() -> None:
    """Stacks joined by \\x1f are split and each set sorted; a spec held by no stack
    (empty text) has the empty set, and no empty stack name is made."""
    specs = [_spec("a", "2.0", stacks="e4s\x1fdata"), _spec("b", "1.0", stacks="")]
    found = tag_specs([("p", specs)], lambda _: True)
    assert found.columns.values["stack"] == ("data", "e4s")
    assert found.columns.stack_sets == ((0, 1), ())
    assert found.columns.stacks == (0, 1)


def test_a_spec_several_compilers_built_has_them_all() -> None:
    """``others`` adds the compilers besides a spec's own; a spec without keeps its own."""
    found = tag_specs([("p", [_spec("a", "2.0"), _spec("b", "1.0")])], lambda _: True, {"a" * 32: ("apple-clang",)})
    columns = found.columns
    assert columns.values["compiler"] == ("apple-clang", "gcc")
    assert [columns.compiler_sets[n] for n in columns.compiler] == [(0, 1), (1,)]


def test_names_with_no_page_or_one_folder_are_unlinked() -> None:
    """A name without a page is unlinked; of two names one folder apart by case, the one
    not written as its folder (Foo) is unlinked on a static site (``folded``), not for
    the server."""
    packages = [("Foo", [_spec("a")]), ("foo", [_spec("b")]), ("bar", [_spec("c")]), ("nopage", [_spec("d")])]
    has_page = lambda name: name != "nopage"  # noqa: E731
    assert tag_specs(packages, has_page).columns.unlinked == (0, 3)
    assert tag_specs(packages, has_page, folded=False).columns.unlinked == (3,)
    assert tag_specs(packages, has_page).starts == [0, 1, 2, 3, 4]


def test_a_target_runs_on_its_descendants() -> None:
    """A binary for x86_64 runs on x86_64 and on haswell (which descends from it); the
    machines are numbered into a sorted ``runs_on`` list."""
    assert {"x86_64", "haswell"} <= set(machines("x86_64"))
    found = tag_specs([("p", [_spec("a", target="x86_64")])], lambda _: True)
    runs_on = found.columns.values["runs_on"]
    assert list(runs_on) == sorted(runs_on) and "haswell" in runs_on
    assert [runs_on[n] for n in found.columns.runs_on[0]] == list(machines("x86_64"))


def test_the_machines_of_several_targets_are_one_sorted_list() -> None:
    """With targets of two families, ``values["runs_on"]`` is sorted as a whole, not
    target after target."""
    specs = [_spec("a", "2.0", target="x86_64_v3"), _spec("b", "1.0", target="aarch64")]
    runs_on = tag_specs([("p", specs)], lambda _: True).columns.values["runs_on"]
    assert {"haswell", "neoverse_v1"} <= set(runs_on)
    assert list(runs_on) == sorted(runs_on)
