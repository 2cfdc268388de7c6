"""Mutation hunt of ``ingest/layouts.py``: an index built from a mirror's spec files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cachedex.config import Limits
from cachedex.errors import IndexFormatError, SourceNotFound
from cachedex.ingest.index import decode_index
from cachedex.ingest.layouts import read_index
from cachedex.ingest.records import build_records
from cachedex.ingest.snapshots import IndexSnapshot
from cachedex.ingest.sources import open_source
from cachedex.values import SpecRecord

H = {c: c * 32 for c in "abcdefgh"}
_ARCH = {"platform": "linux", "platform_os": "debian12", "target": "x86_64"}


def _node(name: str, dag_hash: str, **fields: object) -> dict[str, Any]:
    return {"name": name, "version": "1.0", "arch": _ARCH, "parameters": {}, "hash": dag_hash, **fields}


def _spec_file(root: Path, nodes: list[dict[str, Any]], *, spec_version: int = 4, layout: object = 2,
               name: str | None = None, suffix: str = ".spec.json") -> Path:  # fmt: skip
    """``build_cache/<...>-<hash of the first node><suffix>`` holding ``nodes``."""
    folder = root / "build_cache"
    folder.mkdir(parents=True, exist_ok=True)
    document = {"spec": {"_meta": {"version": spec_version}, "nodes": nodes}, "buildcache_layout_version": layout}
    path = folder / (name or f"linux-debian12-x86_64-gcc-12.2.0-{nodes[0]['name']}-1.0-{nodes[0]['hash']}{suffix}")
    path.write_text(json.dumps(document))
    return path


def _snapshot(root: Path) -> IndexSnapshot:
    return read_index(open_source(str(root), client=None), None, limits=Limits())


def _records(root: Path) -> dict[str, SpecRecord]:
    index = decode_index(_snapshot(root).data or b"", url=str(root))
    return {record.hash: record for record in build_records(index)}


def _database_version(root: Path) -> str:
    return str(json.loads(_snapshot(root).data or b"")["database"]["version"])


@pytest.mark.parametrize(("spec_version", "db_version"), [(1, "6"), (2, "6"), (3, "6"), (4, "7"), (5, "8"), (6, "9")])
def test_each_spec_format_makes_the_database_version_of_its_nodes(
    tmp_path: Path, spec_version: int, db_version: str
) -> None:
    """Spec format -> Database version (format doc §1): v1 to v3 are Database 6, v4 is 7,
    v5 is 8, v6 is 9; a wrong one decodes the nodes with another shape."""
    if spec_version == 1:
        document = {
            "spec": [{"zlib": {"version": "1.0", "arch": _ARCH, "hash": H["a"]}}],
            "buildcache_layout_version": 1,
        }
        (tmp_path / "build_cache").mkdir()
        (tmp_path / "build_cache" / f"linux-debian12-x86_64-gcc-12.2.0-zlib-1.0-{H['a']}.spec.json").write_text(
            json.dumps(document)
        )
    else:
        _spec_file(tmp_path, [_node("zlib", H["a"])], spec_version=spec_version)
    assert _database_version(tmp_path) == db_version


def test_the_layout_of_spec_files_of_several_layouts_is_the_newest(tmp_path: Path) -> None:
    """A mirror whose spec files are of layouts 2 and 1 is read as layout 2, whichever
    file is read last (they are read in hash order)."""
    _spec_file(tmp_path, [_node("a", H["a"])], layout=2)
    _spec_file(tmp_path, [_node("b", H["b"])], layout=1)
    assert _snapshot(tmp_path).layout == 2
    for path in (tmp_path / "build_cache").iterdir():
        path.unlink()
    _spec_file(tmp_path, [_node("a", H["a"])], layout=0)
    assert _snapshot(tmp_path).layout == 1  # (layout 0: Spack's legacy mirrors, read as v1)


@pytest.mark.parametrize(("root", "dependency"), [(H["a"], H["b"]), (H["b"], H["a"])])
def test_a_dependency_with_its_own_spec_file_is_listed_whichever_file_is_read_first(
    tmp_path: Path, root: str, dependency: str
) -> None:
    """A node that is a dependency in one spec file and the root of its own is in the
    build cache, whether its own file is read before or after the other."""
    dep = _node("zlib", dependency, version="1.3")
    app = _node("app", root, dependencies=[{"name": "zlib", "hash": dependency, "parameters": {"deptypes": ["link"]}}])
    _spec_file(tmp_path, [app, dep])
    _spec_file(tmp_path, [dep])
    records = _records(tmp_path)
    assert {h: r.in_buildcache for h, r in records.items()} == {root: True, dependency: True}


def test_a_dependency_without_its_own_spec_file_is_not_listed(tmp_path: Path) -> None:
    """A node only found inside another's spec file has no binary here."""
    dep = _node("zlib", H["b"])
    app = _node("app", H["a"], dependencies=[{"name": "zlib", "hash": H["b"], "parameters": {"deptypes": ["link"]}}])
    _spec_file(tmp_path, [app, dep])
    assert {h: r.in_buildcache for h, r in _records(tmp_path).items()} == {H["a"]: True, H["b"]: False}


def test_the_unsigned_spec_file_is_read_when_both_are_there(tmp_path: Path) -> None:
    """Of ``x.spec.json`` and ``x.spec.json.sig`` the unsigned one is read (the same
    content, cheaper): a signed copy that is unreadable does not matter."""
    _spec_file(tmp_path, [_node("zlib", H["a"])])
    signed = _spec_file(tmp_path, [_node("zlib", H["a"])], suffix=".spec.json.sig")
    signed.write_text("-----BEGIN PGP SIGNED MESSAGE-----\nnot json at all\n")
    assert list(_records(tmp_path)) == [H["a"]]


def test_a_file_named_only_by_a_hash_is_no_spec_file(tmp_path: Path) -> None:
    """Spack names spec files ``<arch>-<compiler>-<name>-<version>-<hash>.spec.json``:
    one that has nothing before ``-<hash>`` is not one of them."""
    _spec_file(tmp_path, [_node("zlib", H["a"])], name=f"-{H['a']}.spec.json")
    with pytest.raises(SourceNotFound, match="no spec files under build_cache/"):
        _snapshot(tmp_path)


def test_a_spec_file_without_a_spec_key_is_refused(tmp_path: Path) -> None:
    """A JSON object that is no spec file (no ``spec``) is named as such, not a KeyError."""
    (tmp_path / "build_cache").mkdir()
    (tmp_path / "build_cache" / f"linux-x-zlib-1.0-{H['a']}.spec.json").write_text('{"nodes": []}')
    with pytest.raises(IndexFormatError, match="not a valid spec file: no 'spec' key"):
        _snapshot(tmp_path)


def test_a_yaml_spec_file_is_read_as_yaml(mirrors: Path, tmp_path: Path) -> None:
    """Spack 0.16's ``.spec.yaml`` files (here the legacy_yaml fixture's, without its
    index.json) are YAML, not JSON."""
    legacy = mirrors / "legacy_yaml/build_cache"
    (tmp_path / "build_cache").mkdir()
    for spec_file in legacy.glob("*.spec.yaml"):
        (tmp_path / "build_cache" / spec_file.name).symlink_to(spec_file)
    records = _records(tmp_path)
    assert records["t5mczux3tfqpxwmg7egp7axy2jvyulqk"].name == "zlib"
    assert records["t5mczux3tfqpxwmg7egp7axy2jvyulqk"].in_buildcache


def test_a_spec_file_nested_too_deeply_is_refused_as_invalid(tmp_path: Path) -> None:
    """A hostile spec file nested past Python's stack is a format error naming the file,
    not a RecursionError escaping the sync."""
    (tmp_path / "build_cache").mkdir()
    path = tmp_path / "build_cache" / f"linux-x-zlib-1.0-{H['a']}.spec.json"
    path.write_text('{"spec": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(IndexFormatError, match="not a valid spec file: nested too deeply"):
        _snapshot(tmp_path)


def test_a_spec_file_node_with_a_malformed_hash_is_refused(tmp_path: Path) -> None:
    """A node whose hash is no DAG hash is refused where it is read, naming it."""
    _spec_file(tmp_path, [_node("zlib", H["a"]), _node("evil", "../../etc/passwd")])
    with pytest.raises(IndexFormatError, match="node with malformed hash '../../etc/passwd'"):
        _snapshot(tmp_path)


def test_a_spec_format_version_that_is_no_number_is_read_as_the_oldest(tmp_path: Path) -> None:
    """A ``_meta.version`` that is not an integer is no known format: its nodes are read
    as the oldest Database (6), not as the newest."""
    _spec_file(tmp_path, [_node("zlib", H["a"])], spec_version="5")  # type: ignore[arg-type]
    assert _database_version(tmp_path) == "6"


def test_an_edge_naming_both_its_dag_hash_and_a_build_hash_follows_the_dag_hash(tmp_path: Path) -> None:
    """Spack tries an edge's hashes in its order (``hash`` first, ``build_hash`` last):
    an edge giving both leads to the node of its ``hash``."""
    one = _node("zlib", H["b"], build_hash=H["d"])
    two = _node("zlib", H["c"], version="2.0", build_hash=H["e"])
    app = _node("app", H["a"], dependencies=[{"name": "zlib", "hash": H["b"], "build_hash": H["e"], "type": ["link"]}])
    _spec_file(tmp_path, [app, one, two], spec_version=2)
    (edge,) = _records(tmp_path)[H["a"]].dependencies
    assert edge.hash == H["b"]
