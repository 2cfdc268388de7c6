"""cachedex.demo.build: the sample mirrors are realistic, complete, deterministic, and develop changes.

Two full builds (revision 0 and 1) are shared by the module; they are plain mirrors read
back here with json/gzip only, independent of cachedex's reader.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachedex.demo.build import build_demo_mirrors, demo_records
from cachedex.demo.data import NEW_IN_REVISION_1, TAGS
from cachedex.demo.mirrorgen import dag_hash, write_mirror
from cachedex.demo.packages import PACKAGES

OLD_TAGS = ("develop-2026-11-01", "v1.0.2")  # layout 2, DB 7, spec v4
NEW_TAGS = ("develop", "develop-2026-11-08")  # layout 3, DB 8, spec v5


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo0")
    assert build_demo_mirrors(root) == root / "cachedex.yaml"
    return root


@pytest.fixture(scope="module")
def demo1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo1")
    # One other tag per layout is enough on disk; all tags are compared in memory below.
    build_demo_mirrors(root, develop_revision=1, tags=["develop", "develop-2026-11-08", "v1.0.2"])
    return root


def read_index(mirror: Path, view: str | None = None) -> dict[str, Any]:
    """The ``database`` of a mirror's index (or of a view of it), v3 (manifest -> blob) or
    v2, checksum verified."""
    manifest = mirror / "v3/manifests/index" / (f"{view}/" if view else "") / "index.manifest.json"
    if manifest.is_file():
        (record,) = json.loads(manifest.read_text())["data"]
        data = (mirror / "blobs/sha256" / record["checksum"][:2] / record["checksum"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == record["checksum"]
        assert record["mediaType"] == f"application/vnd.spack.db.v{json.loads(data)['database']['version']}+json"
    else:
        data = (mirror / "build_cache/index.json").read_bytes()
        assert (mirror / "build_cache/index.json.hash").read_text() == hashlib.sha256(data).hexdigest()
    return json.loads(data)["database"]


def config(root: Path) -> list[dict[str, Any]]:
    loaded = yaml.safe_load((root / "cachedex.yaml").read_text())
    assert loaded["catalog"] == "cachedex.sqlite"
    return loaded["tags"]


def stack_indexes(demo: Path, entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each stack's index: a mirror of its own, or a view of the tag's mirror (views: all)."""
    mirror = demo / entry["url"]
    if entry.get("views") == "all":
        views = sorted(p.name for p in (mirror / "v3/manifests/index").iterdir() if p.is_dir())
        return {view: read_index(mirror, view) for view in views}
    return {stack: read_index(mirror / stack) for stack in entry["stacks"]}


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_package_table_is_a_dag_with_at_most_six_dependencies() -> None:
    assert len(PACKAGES) >= 150
    assert max(len(p.deps) for p in PACKAGES.values()) <= 6
    position = {name: i for i, name in enumerate(PACKAGES)}
    for package in PACKAGES.values():
        assert all(position[dep] < position[package.name] for dep, _ in package.deps)
    assert "py-pip" in PACKAGES and "intel-oneapi-compilers" in PACKAGES


def test_config_lists_every_tag_with_at_least_eight_stacks(demo: Path) -> None:
    tags = config(demo)
    assert [t["name"] for t in tags] == ["develop", "develop-2026-11-08", "develop-2026-11-01", "v1.0.2"]
    for tag in tags:
        assert tag["url"] == f"./mirrors/{tag['name']}" and (demo / tag["url"]).is_dir()
        assert len(stack_indexes(demo, tag)) >= 8
        for stack in tag.get("stacks", ()):
            assert (demo / tag["url"] / stack).is_dir()
    assert [t.get("views") for t in tags] == [None, "all", None, None]


@pytest.mark.parametrize("tag", [t.name for t in TAGS])
def test_each_tag_is_realistic_and_consistent(demo: Path, tag: str) -> None:
    entry = next(t for t in config(demo) if t["name"] == tag)
    root = read_index(demo / "mirrors" / tag)
    installs = root["installs"]
    listed = {k for k, r in installs.items() if r["in_buildcache"]}
    names = {installs[k]["spec"]["name"] for k in listed}
    assert len(names) >= 150
    nodes = [r["spec"] for r in installs.values()]
    assert {n["arch"]["platform"] for n in nodes} == {"linux", "darwin"}
    assert {"ubuntu22.04", "ubuntu24.04", "rhel8", "amzn2", "sequoia"} >= {n["arch"]["platform_os"] for n in nodes}
    assert len({n["arch"]["platform_os"] for n in nodes}) >= 3
    targets = {t if isinstance(t, str) else t["name"] for t in (n["arch"]["target"] for n in nodes)}
    assert {"x86_64", "aarch64", "x86_64_v3", "neoverse_v1", "m1"} <= targets
    assert any(isinstance(n["arch"]["target"], dict) for n in nodes)
    variant_kinds = {
        type(v) for n in nodes for k, v in n["parameters"].items() if not k.endswith("flags") and k != "ldlibs"
    }
    assert variant_kinds == {bool, str, list}
    assert any(n["parameters"].get("cuda_arch") == ["80", "90"] for n in nodes)
    dependents = Counter(dep["hash"] for n in nodes for dep in n.get("dependencies", ()))
    for key, record in installs.items():
        node = record["spec"]
        assert dag_hash(node) == key == node["hash"]
        for dep in node.get("dependencies", ()):
            assert dep["hash"] in installs, (node["name"], dep["name"])
        assert record["ref_count"] == dependents[key]
    if tag in OLD_TAGS:
        assert root["version"] == "7" and (demo / "mirrors" / tag / "build_cache").is_dir()
        assert all("compiler" in n and "annotations" not in n for n in nodes)
        assert listed == set(installs)
    else:
        assert root["version"] == "8" and not (demo / "mirrors" / tag / "build_cache").exists()
        assert all("compiler" not in n and n["annotations"] == {"original_specfile_version": 5} for n in nodes)
        unlisted = {installs[k]["spec"]["name"] for k in set(installs) - listed}
        assert unlisted == {"gcc", "apple-clang", "glibc"}
        assert any(
            set(d["parameters"]["virtuals"]) >= {"c", "cxx", "fortran"}
            for n in nodes
            for d in n.get("dependencies", ())
        )
    in_stacks: set[str] = set()
    for stack, stack_index in stack_indexes(demo, entry).items():
        assert not (demo / "mirrors" / tag / stack / "v3/manifests/spec").exists()  # index only
        stack_installs = stack_index["installs"]
        assert set(stack_installs) <= set(installs)
        for key, record in stack_installs.items():
            assert record["in_buildcache"] == installs[key]["in_buildcache"]
            for dep in record["spec"].get("dependencies", ()):
                assert dep["hash"] in stack_installs
        in_stacks |= set(stack_installs)
    assert in_stacks == set(installs)


@pytest.mark.parametrize("tag", NEW_TAGS)
def test_v3_tags_have_signed_spec_manifests_with_sizes(demo: Path, tag: str) -> None:
    mirror = demo / "mirrors" / tag
    installs = read_index(mirror)["installs"]
    assert json.loads((mirror / "v3/layout.json").read_text()) == {"signing": "gpg"}
    for key, record in list(installs.items())[::25]:
        node = record["spec"]
        path = mirror / f"v3/manifests/spec/{node['name']}/{node['name']}-{node['version']}-{key}.spec.manifest.json"
        assert path.is_file() == record["in_buildcache"], node["name"]
        if not record["in_buildcache"]:
            continue
        text = path.read_text()
        body = text[text.index("\n\n") + 2 : text.index("\n-----BEGIN PGP SIGNATURE-----")]
        tarball, spec = json.loads(body)["data"]
        assert tarball["mediaType"] == "application/vnd.spack.install.v2.tar+gzip"
        assert 10_000 <= tarball["contentLength"] <= 500_000_000
        blob = (mirror / "blobs/sha256" / spec["checksum"][:2] / spec["checksum"]).read_bytes()
        assert json.loads(gzip.decompress(blob))["spec"]["nodes"][0] == node


@pytest.mark.parametrize("tag", OLD_TAGS)
def test_v2_tags_have_spec_files(demo: Path, tag: str) -> None:
    mirror = demo / "mirrors" / tag / "build_cache"
    installs = read_index(mirror.parent)["installs"]
    signed = tag == "v1.0.2"
    files = sorted(mirror.glob("*.spec.json.sig" if signed else "*.spec.json"))
    assert len(files) == len(installs)
    text = files[0].read_text()
    if signed:
        text = text[text.index("\n\n") + 2 : text.index("\n-----BEGIN PGP SIGNATURE-----")]
    spec = json.loads(text)
    assert spec["spec"]["_meta"] == {"version": 4} and spec["buildcache_layout_version"] == 2
    root = spec["spec"]["nodes"][0]
    compiler = f"{root['compiler']['name']}-{root['compiler']['version']}"
    target = root["arch"]["target"] if isinstance(root["arch"]["target"], str) else root["arch"]["target"]["name"]
    assert files[0].name.startswith(f"{root['arch']['platform']}-{root['arch']['platform_os']}-{target}-{compiler}-")
    assert {n["compiler"]["name"] for n in (r["spec"] for r in installs.values())} >= {"gcc", "apple-clang", "oneapi"}


def test_the_weekly_snapshot_shares_most_specs_with_develop() -> None:
    """As Spack's weekly snapshots do: a week's version bumps rebuild what depends on
    them, not the whole DAG (which a bump of cmake or openssl would)."""
    develop, snapshot = (next(t for t in TAGS if t.name == name) for name in ("develop", "develop-2026-11-08"))
    hashes = [{node["hash"] for s in demo_records(tag).values() for node, _ in s} for tag in (develop, snapshot)]
    shared = len(hashes[0] & hashes[1])
    assert 0.6 * len(hashes[1]) < shared < len(hashes[1])


def test_builds_are_deterministic_and_revision_1_changes_only_develop(demo: Path, demo1: Path, tmp_path: Path) -> None:
    for tag in ("develop-2026-11-08", "v1.0.2"):
        assert tree(demo / "mirrors" / tag) == tree(demo1 / "mirrors" / tag), tag
    assert TAGS[0].name == "develop"
    for tag in TAGS[1:]:
        assert demo_records(tag, develop_revision=1) == demo_records(tag), tag.name
    assert [t["name"] for t in config(demo1)] == ["develop", "develop-2026-11-08", "v1.0.2"]
    before = read_index(demo / "mirrors/develop")["installs"]
    after = read_index(demo1 / "mirrors/develop")["installs"]
    added, removed = set(after) - set(before), set(before) - set(after)
    assert added and removed and len(added) < len(after) / 2
    new_names = {after[k]["spec"]["name"] for k in added}
    assert set(NEW_IN_REVISION_1) <= new_names
    assert not set(NEW_IN_REVISION_1) & {r["spec"]["name"] for r in before.values()}
    # develop's own records are deterministic too (its files are written like the others').
    develop = next(t for t in TAGS if t.name == "develop")
    records = {k: r for stack in demo_records(develop).values() for k, r in ((n["hash"], (n, b)) for n, b in stack)}
    info = write_mirror(tmp_path / "again", records.values(), layout=3, spec_files=False)
    manifest = json.loads((demo / "mirrors/develop/v3/manifests/index/index.manifest.json").read_text())
    assert info.index_checksum == manifest["data"][0]["checksum"]
    with pytest.raises(ValueError):
        build_demo_mirrors(tmp_path, develop_revision=2)
