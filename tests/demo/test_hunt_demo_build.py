"""cachedex.demo.build: properties of the concretized demo nodes that the other demo tests
leave open (version pinning and lag, externals, compiler/runtime/libc edges, virtuals,
develop revision 1's dropped roots, how the tag folders and the config are written).

Records are built in memory once per module (about two seconds for every tag)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import archspec.cpu
import pytest
import yaml

from cachedex.demo import build
from cachedex.demo.build import build_demo_mirrors, bump_version, demo_records
from cachedex.demo.data import COMPILERS, PROVIDES, STACKS, TAGS, Tag
from cachedex.demo.packages import PACKAGES

Node = dict[str, Any]
Records = dict[str, dict[str, list[tuple[Node, bool]]]]  # tag -> stack -> records
V5_TAGS = tuple(tag.name for tag in TAGS if tag.spec_version >= 5)
SNAPSHOT = "develop-2026-11-08"  # a v5 tag without develop's own version bumps


def tag_named(name: str) -> Tag:
    return next(tag for tag in TAGS if tag.name == name)


@pytest.fixture(scope="module")
def records() -> Records:
    return {tag.name: demo_records(tag) for tag in TAGS}


def stack_nodes(records: Records, tag: str) -> Iterator[tuple[str, Node, bool]]:
    for stack, pairs in records[tag].items():
        for node, listed in pairs:
            yield stack, node, listed


def by_hash(records: Records, tag: str, stack: str) -> dict[str, Node]:
    return {node["hash"]: node for node, _ in records[tag][stack]}


def targets(node: Node, nodes: Mapping[str, Node]) -> list[tuple[dict[str, Any], Node]]:
    """(edge, node it leads to) for every dependency of ``node``."""
    return [(dep, nodes[dep["hash"]]) for dep in node.get("dependencies", ())]


def is_package(node: Node) -> bool:
    """A node of the package table built from source (not a compiler, runtime or external)."""
    compiler_names = {c.name for c in COMPILERS.values()} | {c.runtime for c in COMPILERS.values()}
    return node["name"] in PACKAGES and node["name"] not in compiler_names and "external" not in node


def test_old_stacks_pin_the_oldest_listed_version(records: Records) -> None:
    # The snapshot: develop itself bumps some versions past the table on purpose.
    for stack in build._OLD_STACKS:
        packages = [node for node, _ in records[SNAPSHOT][stack] if is_package(node)]
        assert packages, stack
        for node in packages:
            assert node["version"] == PACKAGES[node["name"]].versions[-1], (stack, node["name"])


@pytest.mark.parametrize("tag", ["develop-2026-11-01", "v1.0.2"])
def test_older_tags_lag_only_in_recently_changed_packages(records: Records, tag: str) -> None:
    """A tag of age n builds a recently changed package at its n-th older version (or its
    oldest), every other one at the newest; some packages did change."""
    age = tag_named(tag).age
    lagging: set[str] = set()
    for stack, node, _ in stack_nodes(records, tag):
        if stack in build._OLD_STACKS or not is_package(node):
            continue
        versions = PACKAGES[node["name"]].versions
        older = versions[min(age, len(versions) - 1)]
        assert node["version"] in (versions[0], older), (stack, node["name"])
        if node["version"] != versions[0]:
            lagging.add(node["name"])
    assert len(lagging) >= 10


@pytest.mark.parametrize("tag", V5_TAGS)
def test_unlisted_nodes_are_externals_and_compilers_name_their_languages(records: Records, tag: str) -> None:
    compilers = {(c.name, c.version): c for c in COMPILERS.values()}
    seen_compilers = 0
    for _stack, node, listed in stack_nodes(records, tag):
        if listed:
            continue
        assert node["external"]["path"] == "/usr", node["name"]
        if node["name"] != "glibc":
            compiler = compilers[(node["name"], node["version"])]
            paths = node["external"]["extra_attributes"]["compilers"]
            assert set(paths) == set(compiler.languages), node["name"]
            seen_compilers += 1
    assert seen_compilers


@pytest.mark.parametrize("tag", V5_TAGS)
def test_runtimes_and_libc_edges(records: Records, tag: str) -> None:
    """A runtime is built by its compiler (a build edge to the same version); glibc is
    always reached by a link edge providing libc."""
    runtimes = {c.runtime for c in COMPILERS.values()} - {None}
    checked_runtimes = 0
    for stack in records[tag]:
        nodes = by_hash(records, tag, stack)
        for node in nodes.values():
            for dep, target in targets(node, nodes):
                if target["name"] == "glibc":
                    assert dep["parameters"] == {"deptypes": ["link"], "virtuals": ["libc"]}, node["name"]
            if node["name"] in runtimes:
                builders = [t for d, t in targets(node, nodes) if d["parameters"]["deptypes"] == ["build"]]
                assert [t["version"] for t in builders] == [node["version"]], (stack, node["name"])
                checked_runtimes += 1
    assert checked_runtimes


@pytest.mark.parametrize("tag", V5_TAGS)
def test_compiler_edges_provide_only_languages_the_package_uses_and_the_compiler_has(
    records: Records, tag: str
) -> None:
    compilers = {(c.name, c.version): c for c in COMPILERS.values()}
    for stack in records[tag]:
        nodes = by_hash(records, tag, stack)
        for node in nodes.values():
            for dep, target in targets(node, nodes):
                languages = set(dep["parameters"]["virtuals"]) & {"c", "cxx", "fortran"}
                if not languages:
                    continue
                assert languages <= set(compilers[(target["name"], target["version"])].languages)
                if is_package(node):
                    assert languages <= set(PACKAGES[node["name"]].languages), node["name"]


def test_darwin_links_the_gcc_runtime_only_for_fortran(records: Records) -> None:
    """apple-clang has no Fortran: gfortran (and its runtime) come in only for packages
    that use Fortran."""
    darwin = [name for name, stack in STACKS.items() if stack.platform == "darwin"]
    assert darwin
    for tag in V5_TAGS:
        for stack in darwin:
            nodes = by_hash(records, tag, stack)
            for node in nodes.values():
                if not is_package(node):
                    continue
                names = {t["name"] for _, t in targets(node, nodes)}
                uses_fortran = "fortran" in PACKAGES[node["name"]].languages
                assert ("gcc-runtime" in names) == uses_fortran, node["name"]


@pytest.mark.parametrize("tag", [tag.name for tag in TAGS])
def test_edges_are_unique_and_carry_what_they_provide(records: Records, tag: str) -> None:
    for stack in records[tag]:
        nodes = by_hash(records, tag, stack)
        for node in nodes.values():
            edges = node.get("dependencies", ())
            assert len({dep["hash"] for dep in edges}) == len(edges), node["name"]
            for dep, target in targets(node, nodes):
                if target["name"] in PROVIDES:
                    assert dep["parameters"]["virtuals"] == sorted(PROVIDES[target["name"]])
                if target["name"] == "compiler-wrapper":
                    assert dep["parameters"]["deptypes"] == ["build"]


@pytest.mark.parametrize("tag", V5_TAGS)
def test_packages_without_languages_need_no_compiler(records: Records, tag: str) -> None:
    """Pure Python and data packages (languages ``-``) have no compiler, wrapper, runtime or libc."""
    toolchain = {"compiler-wrapper", "glibc"} | {c.name for c in COMPILERS.values()}
    toolchain |= {c.runtime for c in COMPILERS.values() if c.runtime}
    checked = 0
    for stack in records[tag]:
        nodes = by_hash(records, tag, stack)
        for node in nodes.values():
            if is_package(node) and not PACKAGES[node["name"]].languages:
                assert not {t["name"] for _, t in targets(node, nodes)} & toolchain, node["name"]
                checked += 1
    assert checked


def test_develop_revision_1_drops_its_removed_roots() -> None:
    develop = tag_named("develop")
    before, after = demo_records(develop), demo_records(develop, develop_revision=1)
    for stack, roots in build._REMOVED_1.items():
        for root in roots:
            assert root in {node["name"] for node, _ in before[stack]}, (stack, root)
            assert root not in {node["name"] for node, _ in after[stack]}, (stack, root)


def test_bump_version_increments_the_last_run_of_digits() -> None:
    assert bump_version("1.14.5") == "1.14.6"
    assert bump_version("2024.10.0") == "2024.10.1"
    assert bump_version("9.2.0.82-12") == "9.2.0.82-13"
    assert bump_version("0.9") == "0.10"


def test_unknown_tags_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown demo tags"):
        build_demo_mirrors(tmp_path, tags=["develop", "no-such-tag"])
    assert not any(tmp_path.iterdir())


def test_a_view_tag_replaces_its_folder_and_has_no_stack_mirrors(tmp_path: Path) -> None:
    folder = tmp_path / "mirrors" / SNAPSHOT
    stale = folder / "stale-stack" / "build_cache" / "index.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")  # left by an earlier run: the tag folder is replaced as a whole
    config = yaml.safe_load(build_demo_mirrors(tmp_path, tags=[SNAPSHOT]).read_text())
    (entry,) = config["tags"]
    assert entry == {"name": SNAPSHOT, "url": f"./mirrors/{SNAPSHOT}", "views": "all"}
    assert sorted(p.name for p in folder.iterdir()) == ["blobs", "v3"]


@pytest.mark.parametrize("tag", ["develop", "v1.0.2"])
def test_every_node_is_built_for_its_stack(records: Records, tag: str) -> None:
    """Generic targets (a family: x86_64, aarch64) are strings, others archspec objects;
    externals (compilers, glibc) are the family of the stack they were found on."""
    for stack_name, pairs in records[tag].items():
        stack = STACKS[stack_name]
        family = archspec.cpu.TARGETS[stack.target].family.name
        for node, _ in pairs:
            arch = node["arch"]
            assert (arch["platform"], arch["platform_os"]) == (stack.platform, stack.os), node["name"]
            if "external" in node:
                assert arch["target"] == family, (stack_name, node["name"])
            elif stack.target == family:
                assert arch["target"] == stack.target, (stack_name, node["name"])
            else:
                assert arch["target"]["name"] == stack.target, (stack_name, node["name"])


@pytest.mark.parametrize("tag", V5_TAGS)
def test_compiled_linux_packages_link_glibc(records: Records, tag: str) -> None:
    for stack_name in records[tag]:
        if STACKS[stack_name].platform != "linux":
            continue
        nodes = by_hash(records, tag, stack_name)
        for node in nodes.values():
            if is_package(node) and PACKAGES[node["name"]].languages:
                assert "glibc" in {t["name"] for _, t in targets(node, nodes)}, (stack_name, node["name"])


@pytest.mark.parametrize("tag", V5_TAGS)
def test_compilers_built_by_another_are_in_the_cache_at_their_version(records: Records, tag: str) -> None:
    built = [name for name, stack in STACKS.items() if COMPILERS[stack.compiler].built_with and name in records[tag]]
    assert built
    for stack_name in built:
        compiler = COMPILERS[STACKS[stack_name].compiler]
        listed = {node["hash"]: flag for node, flag in records[tag][stack_name]}
        nodes = by_hash(records, tag, stack_name)
        (built,) = (n for n in nodes.values() if (n["name"], n["version"]) == (compiler.name, compiler.version))
        assert listed[built["hash"]] and "external" not in built, stack_name
        # The stack's roots are compiled by it (a dependency of the compiler itself may
        # also be a root, compiled by the builder).
        compiled_by_it = [
            node["name"]
            for node in nodes.values()
            if node["name"] in STACKS[stack_name].roots
            for dep in node.get("dependencies", ())
            if dep["hash"] == built["hash"] and "c" in dep["parameters"]["virtuals"]
        ]
        assert compiled_by_it, stack_name


@pytest.mark.parametrize("tag", V5_TAGS)
def test_external_gcc_has_the_gcc_package_variants(records: Records, tag: str) -> None:
    externals = [n for _, n, _ in stack_nodes(records, tag) if n["name"] == "gcc" and "external" in n]
    assert externals
    for node in externals:
        variants = {k: v for k, v in node["parameters"].items() if k in PACKAGES["gcc"].variants}
        assert variants.keys() == PACKAGES["gcc"].variants.keys()


@pytest.mark.parametrize(("variant", "provider"), [("cuda", "cuda"), ("rocm", "hip")])
def test_gpu_variants_bring_their_toolkit(records: Records, variant: str, provider: str) -> None:
    """A package built +cuda depends on cuda, one built +rocm on hip (stack overrides)."""
    checked = 0
    for stack_name in records["develop"]:
        nodes = by_hash(records, "develop", stack_name)
        for node in nodes.values():
            if node["parameters"].get(variant) is True and node["name"] != provider:
                assert provider in {t["name"] for _, t in targets(node, nodes)}, (stack_name, node["name"])
                checked += 1
    assert checked
