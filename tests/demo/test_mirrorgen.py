"""cachedex.demo.mirrorgen: node dicts, DAG hashes, clearsigning, and mirrors of layout 2 and 3.

The DAG hash and the spec-file encoding are checked against Spack's real test mirror
(read in place from ``../shared/fixtures``), the written mirrors against the format doc.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from cachedex.demo.mirrorgen import (
    _indent0,
    clearsign,
    dag_hash,
    edge,
    fake_size,
    make_node,
    node_compiler,
    target_object,
    write_mirror,
)
from cachedex.values import FLAG_NAMES
from tests.helpers import MIRRORS

UNSIGNED = MIRRORS / "v2_layout/unsigned/build_cache"
TARBALL = "application/vnd.spack.install.v2.tar+gzip"


@pytest.fixture(scope="module")
def fixture_installs() -> dict[str, Any]:
    path = UNSIGNED / "index.json"
    if not path.is_file():
        pytest.fail(f"Spack fixtures not found at {path}")
    return json.loads(path.read_text())["database"]["installs"]


def strip_clearsigned(text: str) -> str:
    """Lines between the first empty line and the signature marker, dash-escaping undone."""
    lines = text.split("\n")
    start = lines.index("") + 1
    end = lines.index("-----BEGIN PGP SIGNATURE-----", start)
    return "\n".join(line[2:] if line.startswith("- ") else line for line in lines[start:end])


# -- nodes ---------------------------------------------------------------------------


def test_dag_hash_reproduces_spec_v5_nodes_of_the_real_fixture(fixture_installs: dict[str, Any]) -> None:
    v5 = {
        key: record["spec"]
        for key, record in fixture_installs.items()
        if record["spec"].get("annotations", {}).get("original_specfile_version") == 5
    }
    assert {
        "qeehcxyvluwnihsc2qxstmpomtxo3lrc",
        "izgzpzeljwairalfjm3k6fntbb64nt6n",
        "u5uz3dcch5if4eve4sef67o2rf2lbfgh",
    } <= set(v5)
    for key, node in v5.items():
        assert node["hash"] == key
        assert dag_hash(node) == key, node["name"]
    # Nodes re-serialised from spec v4 do not reproduce (format doc §3.2).
    assert dag_hash(fixture_installs["rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"]["spec"]) != "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"


def test_dag_hash_ignores_the_hash_key_and_falls_back_to_json_for_escapes() -> None:
    node = {"name": "x", "version": "1", "hash": "whatever"}
    assert dag_hash(node) == dag_hash({"name": "x", "version": "1"})
    odd = {"name": "caf\u00e9", "version": 'a"b\\c\x7f'}
    import base64

    expected = base64.b32encode(hashlib.sha1(json.dumps(odd, separators=(",", ":")).encode()).digest())
    assert dag_hash(odd) == expected.decode().lower()[:32]


def test_target_object_matches_the_fixture_m1(fixture_installs: dict[str, Any]) -> None:
    stored = fixture_installs["qeehcxyvluwnihsc2qxstmpomtxo3lrc"]["spec"]["arch"]["target"]
    assert target_object("m1") == stored
    zen4 = target_object("zen4")
    assert list(zen4) == ["name", "vendor", "features", "generation", "parents", "cpupart"]
    assert zen4["features"] == sorted(zen4["features"]) and zen4["cpupart"] == ""
    with pytest.raises(ValueError, match="unknown microarchitecture"):
        target_object("no-such-cpu")


def test_make_node_key_order_matches_the_fixture(fixture_installs: dict[str, Any]) -> None:
    libdwarf = fixture_installs["u5uz3dcch5if4eve4sef67o2rf2lbfgh"]["spec"]
    gcc_stored = fixture_installs["vd7v4ssgnoqdplgxyig3orum67n4vmhq"]["spec"]
    gcc = make_node(
        "gcc",
        "10.2.1",
        target="aarch64",
        variants={"languages": ["c", "c++", "fortran"]},
        external_path="/path",
        extra_attributes=gcc_stored["external"]["extra_attributes"],
    )
    wrapper = make_node("compiler-wrapper", "1.0", variants={"build_system": "generic"})
    node = make_node(
        "libdwarf",
        "20130729",
        target=target_object("m1"),
        variants={"build_system": "generic"},
        dependencies=[edge(wrapper, ["build"]), edge(gcc, ["build"], ["cxx", "c"])],
    )
    assert list(node) == list(libdwarf)
    assert list(gcc) == list(gcc_stored)
    assert list(node["parameters"]) == ["build_system", *FLAG_NAMES]
    assert [d["name"] for d in node["dependencies"]] == ["compiler-wrapper", "gcc"]
    assert node["dependencies"][1]["parameters"] == {"deptypes": ["build"], "virtuals": ["c", "cxx"]}
    assert node["annotations"] == {"original_specfile_version": 5}
    assert node["package_hash"].endswith("====") and len(node["package_hash"]) == 56
    assert node["hash"] == dag_hash(node) and len(node["hash"]) == 32
    assert node_compiler(node, {gcc["hash"]: gcc}) == ("gcc", "10.2.1")
    assert node_compiler(wrapper, {}) is None


def test_make_node_spec_v4_and_variants() -> None:
    node = make_node(
        "zlib",
        "1.3.1",
        compiler=("gcc", "11.4.0"),
        spec_version=4,
        variants={"shared": True, "build_system": "makefile", "cuda_arch": ["90", "80"]},
    )
    assert list(node)[:5] == ["name", "version", "arch", "compiler", "namespace"]
    assert "annotations" not in node
    assert node["compiler"] == {"name": "gcc", "version": "11.4.0"}
    assert list(node["parameters"])[:3] == ["build_system", "cuda_arch", "shared"]
    assert node["parameters"]["cuda_arch"] == ["80", "90"]
    assert node_compiler(node, {}) == ("gcc", "11.4.0")
    assert (
        make_node("zlib", "1.3.1", variants={"shared": True})["hash"]
        == make_node("zlib", "1.3.1", variants={"shared": True})["hash"]
    )
    with pytest.raises(ValueError, match="spec v5"):
        make_node("zlib", "1.3.1", compiler=("gcc", "11.4.0"))
    with pytest.raises(ValueError, match="compiler flag"):
        make_node("zlib", "1.3.1", variants={"cflags": "-O2"})


def test_edge_orders_deptypes_like_spack() -> None:
    node = make_node("python", "3.13.0")
    assert edge(node, ("run", "link", "build"))["parameters"]["deptypes"] == ["build", "link", "run"]
    with pytest.raises(ValueError):
        edge(node, ("compile",))


def test_indent0_reproduces_the_fixture_spec_files_byte_for_byte() -> None:
    for path in sorted(UNSIGNED.glob("*.spec.json")):
        raw = path.read_bytes()
        assert _indent0(json.loads(raw)) == raw, path.name


# -- clearsigning --------------------------------------------------------------------


@pytest.mark.parametrize("text", ['{\n"a":1\n}', "-dash\n--double\n plain\n-", "a\n\nb\n", "- x"])
def test_clearsign_round_trip(text: str) -> None:
    signed = clearsign(text)
    assert signed.startswith("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n")
    assert signed.endswith("-----END PGP SIGNATURE-----\n")
    assert strip_clearsigned(signed) == text
    assert clearsign(text) == signed
    assert "Hash: SHA256\n" in clearsign(text, hash_algo="SHA256")


# -- mirrors -------------------------------------------------------------------------


def small_dag(spec_version: int) -> list[tuple[dict[str, Any], bool]]:
    """gcc (external, not in the cache) <- zlib <- libpng, plus a compiler-less py-pip."""
    if spec_version == 4:
        compiler = {"compiler": ("gcc", "11.4.0"), "spec_version": 4}
        zlib = make_node("zlib", "1.3.1", **compiler)  # type: ignore[arg-type]
        png = make_node("libpng", "1.6.44", dependencies=[zlib], **compiler)  # type: ignore[arg-type]
        return [(zlib, True), (png, True)]
    gcc = make_node("gcc", "11.4.0", target="x86_64", external_path="/usr")
    zlib = make_node("zlib", "1.3.1", dependencies=[edge(gcc, ["build"], ["c"])])
    png = make_node("libpng", "1.6.44", dependencies=[zlib, edge(gcc, ["build"], ["c"])])
    pip = make_node("py-pip", "25.1.1", target="x86_64")
    return [(gcc, False), (zlib, True), (png, True), (pip, True)]


def test_layout2_index_hash_spec_files_and_tarballs(tmp_path: Path) -> None:
    records = small_dag(5)
    gcc, zlib, png, pip = (node for node, _ in records)
    sizes = {zlib["hash"]: 1234, png["hash"]: 70_000, pip["hash"]: 10}
    info = write_mirror(tmp_path, records, layout=2, db_version="8", sizes=sizes, tarballs=True)
    index = tmp_path / "build_cache" / "index.json"
    assert info.index_path == index and (info.layout, info.records, info.listed) == (2, 4, 3)
    data = index.read_bytes()
    assert (tmp_path / "build_cache/index.json.hash").read_text() == hashlib.sha256(data).hexdigest()
    assert info.index_checksum == hashlib.sha256(data).hexdigest() and info.sizes == sizes
    installs = json.loads(data)["database"]["installs"]
    assert json.loads(data)["database"]["version"] == "8"
    assert {k: (r["ref_count"], r["in_buildcache"]) for k, r in installs.items()} == {
        gcc["hash"]: (2, False),
        zlib["hash"]: (1, True),
        png["hash"]: (0, True),
        pip["hash"]: (0, True),
    }
    assert installs[png["hash"]]["spec"] == png
    spec_path = tmp_path / f"build_cache/linux-ubuntu22.04-x86_64_v3-gcc-11.4.0-libpng-1.6.44-{png['hash']}.spec.json"
    spec = json.loads(spec_path.read_text())
    assert [n["name"] for n in spec["spec"]["nodes"]] == ["libpng", "gcc", "zlib"]
    assert spec["spec"]["_meta"] == {"version": 5} and spec["buildcache_layout_version"] == 2
    tarball = (
        tmp_path
        / "build_cache/linux-ubuntu22.04-x86_64_v3/gcc-11.4.0/libpng-1.6.44"
        / f"linux-ubuntu22.04-x86_64_v3-gcc-11.4.0-libpng-1.6.44-{png['hash']}.spack"
    )
    assert tarball.stat().st_size == 70_000
    assert spec["binary_cache_checksum"] == {
        "hash_algorithm": "sha256",
        "hash": hashlib.sha256(tarball.read_bytes()).hexdigest(),
    }
    assert (
        tmp_path / f"build_cache/linux-ubuntu22.04-x86_64-none-none-py-pip-25.1.1-{pip['hash']}.spec.json"
    ).is_file()
    assert not list(tmp_path.glob(f"build_cache/*{gcc['hash']}*"))  # not in the cache: no spec file


def test_layout2_signed_spec_v4(tmp_path: Path) -> None:
    records = small_dag(4)
    info = write_mirror(tmp_path / "s", records, layout=2, db_version="7", signed=True)
    write_mirror(tmp_path / "u", records, layout=2, db_version="7")
    png = records[1][0]
    name = f"linux-ubuntu22.04-x86_64_v3-gcc-11.4.0-libpng-1.6.44-{png['hash']}.spec.json"
    signed = (tmp_path / "s/build_cache" / (name + ".sig")).read_text()
    assert strip_clearsigned(signed) == (tmp_path / "u/build_cache" / name).read_text()
    assert json.loads(strip_clearsigned(signed))["spec"]["_meta"] == {"version": 4}
    assert not (tmp_path / "s/build_cache" / name).exists()
    assert info.sizes == {} and json.loads(info.index_path.read_bytes())["database"]["version"] == "7"


@pytest.mark.parametrize("signed", [False, True])
def test_layout3_manifests_blobs_and_sizes(tmp_path: Path, signed: bool) -> None:
    records = small_dag(5)
    gcc, zlib, png, pip = (node for node, _ in records)
    info = write_mirror(tmp_path, records, layout=3, sizes={png["hash"]: 123_456}, signed=signed)
    manifest = json.loads((tmp_path / "v3/manifests/index/index.manifest.json").read_text())
    (record,) = manifest["data"]
    assert manifest["version"] == 3
    assert record["mediaType"] == "application/vnd.spack.db.v8+json" and record["compression"] == "none"
    blob = (tmp_path / "blobs/sha256" / record["checksum"][:2] / record["checksum"]).read_bytes()
    assert hashlib.sha256(blob).hexdigest() == record["checksum"] == info.index_checksum
    assert len(blob) == record["contentLength"]
    assert json.loads((tmp_path / "v3/layout.json").read_text()) == ({"signing": "gpg"} if signed else {})
    assert set(info.sizes) == {zlib["hash"], png["hash"], pip["hash"]}
    assert info.sizes[png["hash"]] == 123_456
    assert all(10_000 <= info.sizes[k] <= 500_000_000 for k in (zlib["hash"], pip["hash"]))
    text = (tmp_path / f"v3/manifests/spec/libpng/libpng-1.6.44-{png['hash']}.spec.manifest.json").read_text()
    assert text.startswith("-----BEGIN PGP SIGNED MESSAGE-----") == signed
    body = strip_clearsigned(text) if signed else text
    spec_manifest = json.loads(body)
    assert body == json.dumps(spec_manifest, indent=0)
    tarball, spec_record = spec_manifest["data"]
    assert tarball["mediaType"] == TARBALL and tarball["contentLength"] == 123_456
    assert tarball["compression"] == "gzip" and tarball["checksumAlgorithm"] == "sha256"
    assert spec_record["mediaType"] == "application/vnd.spack.spec.v5+json"
    raw = (tmp_path / "blobs/sha256" / spec_record["checksum"][:2] / spec_record["checksum"]).read_bytes()
    assert raw[:2] == b"\x1f\x8b" and len(raw) == spec_record["contentLength"]
    assert hashlib.sha256(raw).hexdigest() == spec_record["checksum"]
    spec = json.loads(gzip.decompress(raw))
    assert spec["buildcache_layout_version"] == 2 and "binary_cache_checksum" not in spec
    assert [n["hash"] for n in spec["spec"]["nodes"]] == [png["hash"], gcc["hash"], zlib["hash"]]
    assert not (tmp_path / "v3/manifests/spec/gcc").exists()


def test_layout3_tarballs_and_index_only(tmp_path: Path) -> None:
    records = small_dag(5)
    sizes = {node["hash"]: 100_000 + i for i, (node, listed) in enumerate(records) if listed}
    write_mirror(tmp_path / "t", records, layout=3, sizes=sizes, tarballs=True)
    for node, _listed in records[1:]:
        path = (
            tmp_path
            / "t/v3/manifests/spec"
            / node["name"]
            / f"{node['name']}-{node['version']}-{node['hash']}.spec.manifest.json"
        )
        tarball = json.loads(path.read_text())["data"][0]
        blob = tmp_path / "t/blobs/sha256" / tarball["checksum"][:2] / tarball["checksum"]
        assert blob.stat().st_size == tarball["contentLength"] == sizes[node["hash"]]
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == tarball["checksum"]
    with pytest.raises(ValueError, match="sizes"):
        write_mirror(tmp_path / "x", records, layout=3, tarballs=True)
    info = write_mirror(tmp_path / "i", records, layout=3, spec_files=False)
    assert info.sizes == {} and not (tmp_path / "i/v3/manifests/spec").exists()
    assert sorted(p.name for p in (tmp_path / "i").rglob("*") if p.is_file()) == sorted(
        ["index.manifest.json", "layout.json", info.index_checksum]
    )
    with pytest.raises(ValueError, match="layout"):
        write_mirror(tmp_path / "y", records, layout=1)


def test_write_mirror_is_deterministic(tmp_path: Path) -> None:
    for layout in (2, 3):
        for run in ("a", "b"):
            write_mirror(tmp_path / f"{run}{layout}", small_dag(5), layout=layout, signed=True)
        files_a = {
            p.relative_to(tmp_path / f"a{layout}"): p.read_bytes()
            for p in (tmp_path / f"a{layout}").rglob("*")
            if p.is_file()
        }
        files_b = {
            p.relative_to(tmp_path / f"b{layout}"): p.read_bytes()
            for p in (tmp_path / f"b{layout}").rglob("*")
            if p.is_file()
        }
        assert files_a == files_b and len(files_a) > 3


def test_fake_size_range() -> None:
    sizes = [fake_size(f"{i:032d}") for i in range(2000)]
    assert min(sizes) >= 10_000 and max(sizes) <= 500_000_000
    assert min(sizes) < 100_000 and max(sizes) > 50_000_000
