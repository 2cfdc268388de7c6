"""cachedex.demo.mirrorgen and .nodes: partial record sets, repeated hashes, JSON text that
needs escapes, and the validation of dependency edges."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from cachedex.demo.mirrorgen import edge, make_node, node_compiler, write_mirror

Node = dict[str, Any]


def zlib_and_libpng() -> tuple[Node, Node, Node]:
    """gcc (external) <- zlib <- libpng, spec v5."""
    gcc = make_node("gcc", "11.4.0", target="x86_64", external_path="/usr")
    zlib = make_node("zlib", "1.3.1", dependencies=[edge(gcc, ["build"], ["c"])])
    png = make_node("libpng", "1.6.44", dependencies=[zlib, edge(gcc, ["build"], ["c"])])
    return gcc, zlib, png


def index_installs(info_path: Path) -> dict[str, Any]:
    return json.loads(info_path.read_bytes())["database"]["installs"]


@pytest.mark.parametrize("layout", [2, 3])
def test_a_mirror_may_leave_out_dependencies(tmp_path: Path, layout: int) -> None:
    """Records need not be closed under dependencies (gcc, an external, is left out):
    ref counts count the records present, spec files hold the closure among them."""
    _gcc, zlib, png = zlib_and_libpng()
    info = write_mirror(tmp_path, [(png, True), (zlib, True)], layout=layout)
    installs = index_installs(info.index_path)
    assert {k: r["ref_count"] for k, r in installs.items()} == {png["hash"]: 0, zlib["hash"]: 1}
    if layout == 2:
        (path,) = tmp_path.glob(f"build_cache/*-{png['hash']}.spec.json")
        spec = json.loads(path.read_text())
    else:
        text = (tmp_path / f"v3/manifests/spec/libpng/libpng-1.6.44-{png['hash']}.spec.manifest.json").read_text()
        checksum = json.loads(text)["data"][1]["checksum"]
        spec = json.loads(gzip.decompress((tmp_path / "blobs/sha256" / checksum[:2] / checksum).read_bytes()))
    assert [n["name"] for n in spec["spec"]["nodes"]] == ["libpng", "zlib"]


@pytest.mark.parametrize("layout", [2, 3])
def test_the_first_of_a_repeated_hash_wins(tmp_path: Path, layout: int) -> None:
    _gcc, zlib, _png = zlib_and_libpng()
    info = write_mirror(tmp_path, [(zlib, True), (zlib, False)], layout=layout)
    assert (info.records, info.listed) == (1, 1)
    assert index_installs(info.index_path)[zlib["hash"]]["in_buildcache"] is True


def test_spec_files_keep_text_that_json_must_escape(tmp_path: Path) -> None:
    """Spack writes spec files with json.dumps(indent=0); a value holding a quote and a
    colon (escaped in JSON) must come back unchanged."""
    tricky = 'say "a": b'
    node = make_node("zlib", "1.3.1", variants={"build_system": "makefile", "note": tricky})
    write_mirror(tmp_path, [(node, True)], layout=2)
    (path,) = tmp_path.glob("build_cache/*.spec.json")
    raw = path.read_text()
    spec = json.loads(raw)
    assert spec["spec"]["nodes"][0]["parameters"]["note"] == tricky
    assert raw == json.dumps(spec, indent=0, separators=(",", ":"))


def test_edges_need_a_dependency_type_and_list_each_once() -> None:
    node = make_node("python", "3.13.0")
    with pytest.raises(ValueError, match="dependency types"):
        edge(node, ())
    repeated = edge(node, ("link", "build", "link"), ("c", "cxx", "c"))
    assert repeated["parameters"] == {"deptypes": ["build", "link"], "virtuals": ["c", "cxx"]}


def test_node_compiler_reads_annotations_and_edges_in_language_order() -> None:
    """Format doc §4.2: the ``annotations.compiler`` string (``=`` dropped), else the
    provider of c, then cxx, then fortran; an absent provider is named, version unknown."""
    noted = make_node("zlib", "1.3.1", annotations={"compiler": "gcc@=10.2.1"})
    assert node_compiler(noted, {}) == ("gcc", "10.2.1")
    gfortran = make_node("gcc", "14.2.0", platform="darwin", external_path="/usr")
    clang = make_node("apple-clang", "16.0.0", platform="darwin", external_path="/usr")
    mixed = make_node(
        "hdf5",
        "1.14.5",
        platform="darwin",
        dependencies=[edge(gfortran, ["build"], ["fortran"]), edge(clang, ["build"], ["c", "cxx"])],
    )
    providers = {gfortran["hash"]: gfortran, clang["hash"]: clang}
    assert node_compiler(mixed, providers) == ("apple-clang", "16.0.0")
    assert node_compiler(mixed, {gfortran["hash"]: gfortran}) == ("apple-clang", "unknown")


def test_spec_blobs_false_writes_manifests_without_spec_blobs(tmp_path: Path) -> None:
    _gcc, zlib, png = zlib_and_libpng()
    info = write_mirror(tmp_path, [(zlib, True), (png, True)], layout=3, spec_blobs=False)
    blobs = sorted(p.name for p in (tmp_path / "blobs").rglob("*") if p.is_file())
    assert blobs == [info.index_checksum]  # the index is the only blob
    for node in (zlib, png):
        name = f"{node['name']}-{node['version']}-{node['hash']}.spec.manifest.json"
        _tarball, spec = json.loads((tmp_path / "v3/manifests/spec" / node["name"] / name).read_text())["data"]
        assert not (tmp_path / "blobs/sha256" / spec["checksum"][:2] / spec["checksum"]).exists()


@pytest.mark.parametrize("spec_version", [3, 6])
def test_make_node_writes_only_spec_v4_and_v5(spec_version: int) -> None:
    with pytest.raises(ValueError, match="spec_version"):
        make_node("zlib", "1.3.1", spec_version=spec_version)
