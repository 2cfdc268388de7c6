"""Spliced specs in lockfiles and spec files (ingest/splices.py): edges the other tests
left open (a build_spec that is not one, one with no hash, build specs' nodes set apart)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cachedex.errors import IndexFormatError
from cachedex.ingest.lockfile import read_lockfile
from cachedex.ingest.splices import without_build_specs
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import record
from tests.lockfiles import closure, demo_nodes, lockfile, roots_named, spliced, write_lockfile


def _zlib_lockfile() -> tuple[dict[str, Any], str]:
    """A lockfile of the demo's zlib-ng alone, and zlib-ng's hash."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    return lockfile(closure(nodes, roots), roots), roots[0]


def test_a_build_spec_that_is_not_a_name_and_hash_is_refused_by_its_spec(tmp_path: Path) -> None:
    """A node whose ``build_spec`` is not an object is a damaged file: refused, naming the
    node, not read as a spec that was not spliced."""
    document, key = _zlib_lockfile()
    document["concrete_specs"][key]["build_spec"] = "zlib-ng"
    path = write_lockfile(tmp_path / "spack.lock", document)
    with pytest.raises(IndexFormatError, match=rf"/{key[:7]}: its build_spec is not a spec's name and hash"):
        read_lockfile(path)


def test_a_build_spec_without_a_hash_is_no_splice(tmp_path: Path) -> None:
    """A ``build_spec`` that names no hash links to nothing: the spec is read as not
    spliced (not refused as spliced from a spec the file lacks)."""
    document, key = _zlib_lockfile()
    document["concrete_specs"][key]["build_spec"] = {"name": "zlib-ng", "hash": ""}
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", document))
    assert read.splices == {} and key in {spec.hash for spec in read.specs}


def test_a_build_spec_key_written_with_an_escape_is_still_a_splice(tmp_path: Path) -> None:
    """JSON lets a key be written with escapes; the decoder reads ``build\\u005fspec`` as
    ``build_spec``, so the spliced spec's link (and its build specs set apart) is too (the
    bytes looked for first missed it: the file was read with no splice)."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = spliced(nodes, roots, "zlib-ng")
    text = json.dumps(lockfile(specs, [renamed[r] for r in roots])).replace('"build_spec"', '"build\\u005fspec"')
    assert '"build_spec"' not in text
    (tmp_path / "spack.lock").write_text(text)
    read = read_lockfile(tmp_path / "spack.lock")
    expected = {new: old for old, new in renamed.items() if new != old and specs[new]["name"] != "zlib-ng"}
    assert expected and read.splices == expected


def test_a_node_both_the_environment_and_a_build_spec_reach_is_kept() -> None:
    """Only the nodes build specs alone reach are set apart: a dependency the environment
    shares with a build spec stays, as do the spliced spec and its own dependencies."""
    link = DEPTYPE_BITS["link"]
    shared = record("c" * 32, "libc")
    only_built = record("d" * 32, "zlib", version="1.0")
    new_zlib = record("e" * 32, "zlib", version="9.9")
    build = record(
        "b" * 32,
        "app",
        dependencies=(Dependency(only_built.hash, "zlib", link, ""), Dependency(shared.hash, "libc", link, "")),
    )
    app = record(
        "a" * 32,
        "app",
        dependencies=(Dependency(new_zlib.hash, "zlib", link, ""), Dependency(shared.hash, "libc", link, "")),
    )
    specs = [app, build, only_built, shared, new_zlib]
    kept = without_build_specs(specs, [app.hash], {app.hash: build.hash})
    assert kept == [app, shared, new_zlib]
    assert without_build_specs(specs, [app.hash], {}) is specs


def test_a_build_spec_or_root_not_among_the_specs_is_passed_over() -> None:
    """``without_build_specs`` walks only from hashes it holds: a build spec (or root) the
    specs lack reaches nothing and is no error."""
    zlib = record("a" * 32, "zlib")
    assert without_build_specs([zlib], [zlib.hash, "r" * 32], {zlib.hash: "b" * 32}) == [zlib]


def test_a_hostile_build_spec_hash_is_told_in_one_quoted_line(tmp_path: Path) -> None:
    """A build spec's hash that is no hash is refused, named with its control characters
    escaped, the message one line (as a hostile dependency's name is; it was told raw)."""
    document, key = _zlib_lockfile()
    document["concrete_specs"][key]["build_spec"] = {"name": "zlib-ng", "hash": "\n\x1b[31mab"}
    path = write_lockfile(tmp_path / "spack.lock", document)
    with pytest.raises(IndexFormatError, match="its build_spec's hash '\\\\n\\\\x1b\\[31mab' is not a hash") as caught:
        read_lockfile(path)
    assert "\n" not in str(caught.value) and "\x1b" not in str(caught.value)


def test_a_spliced_spec_file_s_build_specs_are_set_apart(tmp_path: Path) -> None:
    """A spec file (``spack spec --json``) of a spliced root: its splices are found and the
    nodes only its build specs reach are not the environment's, as in a lockfile."""
    nodes = demo_nodes()
    (hdf5,) = roots_named(nodes, "hdf5")
    specs, renamed = spliced(nodes, [hdf5], "zlib-ng")
    root = renamed[hdf5]
    ordered = [specs[root], *(node for key, node in specs.items() if key != root)]
    document = {"spec": {"_meta": {"version": 5}, "nodes": ordered}}
    read = read_lockfile(write_lockfile(tmp_path / "spec.json", document))
    expected = {new: old for old, new in renamed.items() if new != old and specs[new]["name"] != "zlib-ng"}
    assert [r.hash for r in read.roots] == [root] and expected and read.splices == expected
    assert {spec.hash for spec in read.specs} == set(closure(specs, [root])) < set(specs)
