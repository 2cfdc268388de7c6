"""``cachedex export spack-cache``: cache.spack.io's two data files, made from the catalog.

The key proof reads the mirrors' index files directly, with a brute-force reader written
here (as spack/spack-cache's ``data.py`` reads them, corrected: only records
``in_buildcache``, each with the stacks whose own index lists it), and compares its
records with the export of the catalog synced from the same mirrors: the demo's four
tags (v2 and v3 mirrors, views) and a tag of Spack's own test mirrors (v3, a view, a v2
stack, a Database 6 stack). Then: records without a binary, the root of a mirror of
views only, the filters, old dependency forms, versions in Spack's order, byte-identical
reruns, a hostile catalog, and the command line.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.errors import LookupFailed, UnknownPackage, UnknownStack, UnknownTag
from cachedex.ingest.sync import sync
from cachedex.publish import export
from cachedex.publish.export import PACKAGES_FILE, SPECS_FILE, export_spack_cache
from cachedex.publish.export_specs import variant_strings
from cachedex.values import SpecRecord
from tests.helpers import (
    Demo,
    evil_catalog,
    fixture_index,
    make_config,
    record,
    write_tag,
    write_v2_mirror,
    write_v3_mirror,
    write_v3_view,
)

SPEC_KEYS = [
    "hash",
    "version",
    "variants",
    "platform",
    "os",
    "target",
    "dependencies",
    "stacks",
    "releases",
    "size",
    "compiler",
]
PACKAGE_KEYS = ["uid", "url", "releases", "specs", "latest_version"]
GCC_EXTERNAL = "vd7v4ssgnoqdplgxyig3orum67n4vmhq"  # in_buildcache false in the fixture index
LIBELF = "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"
OLD_ZLIB = "t5mczux3tfqpxwmg7egp7axy2jvyulqk"  # only in legacy_yaml (Database 6, pretty-printed)
LIBDWARF_ROOT_ONLY = "u5uz3dcch5if4eve4sef67o2rf2lbfgh"  # fixture_tag: listed by its root only


# -- a brute-force reader of the index files ---------------------------------------------


def _unsigned(text: str) -> str:
    """The body of a clearsigned file (or the text itself)."""
    if not text.startswith("-----BEGIN PGP SIGNED MESSAGE-----"):
        return text
    body = text.split("\n\n", 1)[1]
    return body.split("-----BEGIN PGP SIGNATURE-----", 1)[0]


def _index(mirror: Path, view: str | None) -> dict[str, Any] | None:
    """The index of a mirror (or of one of its views), or None if it has none."""
    manifest = mirror / "v3/manifests/index" / (view or "") / "index.manifest.json"
    if manifest.is_file():
        (entry,) = json.loads(_unsigned(manifest.read_text()))["data"]
        blob = (mirror / "blobs/sha256" / entry["checksum"][:2] / entry["checksum"]).read_bytes()
        return json.loads(gzip.decompress(blob) if entry["compression"] == "gzip" else blob)  # type: ignore[no-any-return]
    v2 = mirror / "build_cache/index.json"
    return json.loads(v2.read_bytes()) if v2.is_file() and view is None else None  # type: ignore[no-any-return]


def _mirrors(base: Path, tags: list[dict[str, Any]]) -> Iterable[tuple[str, str, Path, str | None]]:
    """(tag, stack, mirror folder, view) of every mirror a config's tags name."""
    for tag in tags:
        root = (base / tag["url"]).resolve()
        yield tag["name"], "root", root, None
        stacks = tag.get("stacks") or []
        for stack in stacks if isinstance(stacks, list) else []:
            yield tag["name"], stack, root / stack, None
        for stack, where in stacks.items() if isinstance(stacks, dict) else []:
            if isinstance(where, str):
                yield tag["name"], stack, (base / where).resolve(), None
            else:
                yield tag["name"], stack, (base / where["url"]).resolve() if "url" in where else root, where["view"]
        views = tag.get("views") or []
        if views == "all":
            views = sorted(p.name for p in (root / "v3/manifests/index").iterdir() if p.is_dir())
        for view in views:
            yield tag["name"], view, root, view


def _data_py_variants(parameters: dict[str, Any]) -> list[str]:
    """``data.py``'s loop, written out again."""
    shown = []
    for key, value in parameters.items():
        if isinstance(value, bool):
            shown.append(f"+{key}" if value else f"~{key}")
        elif isinstance(value, list):
            shown += [f"{key}={v}" for v in value]
        else:
            shown.append(f"{key}={value}")
    return shown


def _app_edges(dependencies: Any) -> list[dict[str, Any]]:
    """A node's dependencies in the app's form."""
    if isinstance(dependencies, dict):
        dependencies = [{"name": name, **edge} for name, edge in dependencies.items()]
    edges = []
    for edge in dependencies or []:
        if "parameters" in edge:
            edges.append({"name": edge["name"], "hash": edge["hash"], "parameters": edge["parameters"]})
        else:
            kinds = edge.get("type") or []
            target = edge.get("hash") or edge.get("build_hash") or edge.get("full_hash")
            edges.append(
                {
                    "name": edge["name"],
                    "hash": target,
                    "parameters": {"deptypes": [kinds] if isinstance(kinds, str) else kinds, "virtuals": []},
                }
            )
    return edges


def _compiler(node: dict[str, Any], installs: dict[str, Any]) -> str:
    compiler = node.get("compiler")
    if compiler:
        return f"{compiler['name']}@{compiler['version']}"
    annotated = (node.get("annotations") or {}).get("compiler")
    if annotated:
        return str(annotated).replace("@=", "@", 1)
    edges = _app_edges(node.get("dependencies"))
    for language in ("c", "cxx", "fortran"):
        for edge in edges:
            if language in edge["parameters"].get("virtuals", []):
                provider = installs.get(edge["hash"])
                if provider is None:
                    return str(edge["name"])
                return f"{provider['spec']['name']}@{provider['spec']['version']}"
    return "none"


def _size(folders: Iterable[Path], node: dict[str, Any], dag_hash: str) -> int | None:
    """The binary's size from a v3 spec manifest of any of ``folders``, else None."""
    name, version = node["name"], node["version"]
    for folder in folders:
        manifest = folder / "v3/manifests/spec" / name / f"{name}-{version}-{dag_hash}.spec.manifest.json"
        if manifest.is_file():
            blobs = json.loads(_unsigned(manifest.read_text()))["data"]
            return next(int(b["contentLength"]) for b in blobs if "install" in b["mediaType"])
    return None


def _version_key(version: str) -> tuple[tuple[int, Any], ...]:
    """Spack's order, written out again: numbers after words, branch names last."""
    branches = ("stable", "trunk", "head", "master", "main", "develop")
    return tuple(
        (2, int(part)) if part.isdigit() else (3, branches.index(part)) if part in branches else (1, part)
        for part in re.findall(r"[0-9]+|[A-Za-z]+", version)
    )


def brute_force(
    base: Path,
    tags: list[dict[str, Any]],
    *,
    include_root: bool = False,
    only_tags: Iterable[str] = (),
    only_stacks: Iterable[str] = (),
    only_packages: Iterable[str] = (),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(package_data, specs_data) read from the index files alone."""
    only_tags, only_stacks, only_packages = set(only_tags), set(only_stacks), set(only_packages)
    first: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}  # hash -> (node, its index's installs)
    places: dict[str, set[tuple[str, str]]] = defaultdict(set)
    folders = []
    for tag, stack, mirror, view in _mirrors(base, tags):
        index = _index(mirror, view)
        if index is None:
            continue
        folders.append(mirror)
        installs = index["database"]["installs"]
        for dag_hash, entry in installs.items():
            first.setdefault(dag_hash, (entry["spec"], installs))
            if not entry["in_buildcache"] or (stack == "root" and not include_root):
                continue
            if (only_tags and tag not in only_tags) or (only_stacks and stack not in only_stacks):
                continue
            if only_packages and entry["spec"]["name"] not in only_packages:
                continue
            places[dag_hash].add((tag, stack))
    specs, packages = {}, {}
    for dag_hash in sorted(places):
        node, installs = first[dag_hash]
        target = node["arch"]["target"]
        releases = sorted({tag for tag, _ in places[dag_hash]})
        specs[dag_hash] = {
            "hash": dag_hash,
            "version": str(node["version"]),
            "variants": _data_py_variants(node.get("parameters", {})),
            "platform": node["arch"]["platform"],
            "os": node["arch"]["platform_os"],
            "target": target["name"] if isinstance(target, dict) else target,
            "dependencies": _app_edges(node.get("dependencies")),
            "stacks": sorted({stack for _, stack in places[dag_hash]}),
            "releases": releases,
            "size": _size(folders, node, dag_hash),
            "compiler": _compiler(node, installs),
        }
        package = packages.setdefault(node["name"], {"specs": defaultdict(list), "versions": set()})
        for release in releases:
            package["specs"][release].append(dag_hash)
        package["versions"].add(str(node["version"]))
    package_data = {
        name: {
            "uid": name,
            "url": f"https://packages.spack.io/package.html?name={name}",
            "releases": sorted(p["specs"]),
            "specs": {release: sorted(p["specs"][release]) for release in sorted(p["specs"])},
            "latest_version": max(p["versions"], key=_version_key),
        }
        for name, p in sorted(packages.items())
    }
    return package_data, specs


# -- helpers -------------------------------------------------------------------------------


def _read(outdir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(package_data, specs_data) as the app reads them."""
    return tuple(json.loads(gzip.decompress((outdir / name).read_bytes())) for name in (PACKAGES_FILE, SPECS_FILE))  # type: ignore[return-value]


def exported_packages(tmp_path: Path, records: list[SpecRecord]) -> dict[str, Any]:
    """The package data ``export spack-cache`` writes of tag t, whose root and stack s
    both list ``records``."""
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", records)
    write_tag(catalog, "t", [], members={r.hash: True for r in records}, stack="s", checksum="s")
    with catalog:
        export_spack_cache(catalog, tmp_path / "out")
    return _read(tmp_path / "out")[0]


def _demo_tags(demo: Demo) -> list[dict[str, Any]]:
    return yaml.safe_load(demo.config.read_text())["tags"]  # type: ignore[no-any-return]


def _export(catalog_path: Path, outdir: Path, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    with Catalog(catalog_path, readonly=True) as catalog:
        export_spack_cache(catalog, outdir, **options)
    return _read(outdir)


@pytest.fixture(scope="module")
def fixture_tag(mirrors: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]], Path]:
    """(base, tags, catalog): one tag of Spack's test mirrors: a v3 root of the real
    index, a view listing only its first two records, a v2 stack where two records have
    no binary, and the Database 6 mirror (pretty-printed, a record of its own)."""
    base = tmp_path_factory.mktemp("fixture-tag")
    write_v3_mirror(base / "m", fixture_index(mirrors))
    small = fixture_index(mirrors)
    for position, entry in enumerate(small["database"]["installs"].values()):  # type: ignore[attr-defined]
        entry["in_buildcache"] = entry["in_buildcache"] and position < 2
    write_v3_view(base / "m", "small", small)
    partial = fixture_index(mirrors)
    installs = partial["database"]["installs"]  # type: ignore[index]
    for dag_hash in (LIBELF, LIBDWARF_ROOT_ONLY):
        installs[dag_hash]["in_buildcache"] = False
    write_v2_mirror(base / "partial", partial)
    tags = [
        {
            "name": "t",
            "url": "./m",
            "stacks": {"small": {"view": "small"}, "partial": "./partial", "old": str(mirrors / "legacy_yaml")},
        }
    ]
    config = make_config(base, tags)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    return base, tags, config.catalog


# -- the records ---------------------------------------------------------------------------


def test_the_demo_export_is_what_the_index_files_say(demo_run: Demo, tmp_path: Path) -> None:
    packages, specs = _export(demo_run.catalog, tmp_path)
    want_packages, want_specs = brute_force(demo_run.folder, _demo_tags(demo_run))
    assert len(specs) > 1000 and len(packages) > 200
    assert specs == want_specs
    assert packages == want_packages
    assert {r for s in specs.values() for r in s["releases"]} == {t["name"] for t in _demo_tags(demo_run)}
    assert all(s["size"] is not None for s in specs.values() if "develop" in s["releases"])  # v3: sized
    # Key order: sorted entries, data.py's keys in its order, then ours.
    assert list(specs) == sorted(specs) and list(packages) == sorted(packages)
    assert all(list(s) == SPEC_KEYS for s in specs.values())
    assert all(list(p) == PACKAGE_KEYS for p in packages.values())


def test_include_root_makes_the_root_one_more_stack(demo_run: Demo, tmp_path: Path) -> None:
    packages, specs = _export(demo_run.catalog, tmp_path, include_root=True)
    want_packages, want_specs = brute_force(demo_run.folder, _demo_tags(demo_run), include_root=True)
    assert specs == want_specs and packages == want_packages
    default = _export(demo_run.catalog, tmp_path / "default")[1]
    assert sum("root" in s["stacks"] for s in specs.values()) > 1000
    assert all(
        [st for st in s["stacks"] if st != "root"] == default[h]["stacks"] for h, s in specs.items() if h in default
    )


def test_the_spack_fixture_mirrors_export_as_their_indexes_say(fixture_tag: tuple[Path, Any, Path]) -> None:
    base, tags, catalog = fixture_tag
    packages, specs = _export(catalog, base / "out")
    assert (specs, packages) == brute_force(base, tags)[::-1]
    assert specs[OLD_ZLIB]["compiler"] == "gcc@4.5.0" and specs[OLD_ZLIB]["stacks"] == ["old"]
    assert specs[OLD_ZLIB]["variants"][:3] == ["+optimize", "+pic", "+shared"]
    assert all(s["size"] is not None for h, s in specs.items() if h != OLD_ZLIB)  # the v3 root's manifests
    # Listed by the root alone: left out, unless the root counts as a stack.
    assert LIBDWARF_ROOT_ONLY not in specs
    assert _export(catalog, base / "with-root", include_root=True)[1][LIBDWARF_ROOT_ONLY]["stacks"] == ["root"]


def test_records_without_a_binary_are_left_out(fixture_tag: tuple[Path, Any, Path]) -> None:
    base, _, catalog = fixture_tag
    _, specs = _export(catalog, base / "out", include_root=True)
    assert GCC_EXTERNAL not in specs  # an external compiler: no binary in any index
    # Listed by the root and the view, not by the 'partial' stack, which holds it too.
    assert specs[LIBELF]["stacks"] == ["root", "small"]
    with Catalog(catalog, readonly=True) as opened:
        assert opened.members_of("t", "partial")[LIBELF] is False


def test_the_root_of_a_mirror_of_views_only_is_no_stack(mirrors: Path, tmp_path: Path) -> None:
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    shutil.rmtree(tmp_path / "m/v3/manifests/index")  # no root index
    write_v3_view(tmp_path / "m", "one", fixture_index(mirrors, drop=(LIBELF,)))
    tags = [{"name": "t", "url": "./m", "views": "all"}]
    config = make_config(tmp_path, tags)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
    _, specs = _export(config.catalog, tmp_path / "out", include_root=True)
    assert specs and all(s["stacks"] == ["one"] for s in specs.values())
    assert LIBELF not in specs  # the root lists what its views list, nothing of its own
    assert specs == brute_force(tmp_path, tags, include_root=True)[1]


# -- filters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"tags": ["develop"]},
        {"tags": ["develop", "v1.0.2"], "stacks": ["e4s", "radiuss"]},
        {"stacks": ["e4s"]},
        {"packages": ["zlib", "hdf5", "py-numpy"]},
        {"tags": ["develop-2026-11-08"], "stacks": ["root"]},
    ],
    ids=["tag", "tags-stacks", "stack", "packages", "stack-root"],
)
def test_filters_narrow_the_export(demo_run: Demo, tmp_path: Path, options: dict[str, list[str]]) -> None:
    packages, specs = _export(demo_run.catalog, tmp_path, **options)
    want = brute_force(
        demo_run.folder,
        _demo_tags(demo_run),
        include_root="root" in options.get("stacks", []),
        only_tags=options.get("tags", ()),
        only_stacks=options.get("stacks", ()),
        only_packages=options.get("packages", ()),
    )
    assert specs and (packages, specs) == want
    everything = _export(demo_run.catalog, tmp_path / "all")[1]
    assert len(specs) < len(everything)


def test_unknown_tags_and_stacks_are_refused_and_write_nothing(demo_run: Demo, tmp_path: Path) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        with pytest.raises(UnknownTag, match="no tag 'nope'"):
            export_spack_cache(catalog, tmp_path / "a", tags=["nope"])
        with pytest.raises(UnknownStack, match="tag 'v1.0.2' has no stack 'ml-linux-x86_64-rocm'"):
            export_spack_cache(catalog, tmp_path / "b", tags=["v1.0.2"], stacks=["ml-linux-x86_64-rocm"])
        with pytest.raises(UnknownPackage, match="no tag lists a package 'no-such-package'"):  # a typo
            export_spack_cache(catalog, tmp_path / "c", packages=["zlib", "no-such-package"])
        # a package the chosen stack does not list is left out and said so ...
        report = export_spack_cache(
            catalog, tmp_path / "d", tags=["develop"], stacks=["e4s"], packages=["boost", "zlib"]
        )
        assert report.missing_packages == ["zlib"] and report.packages == 1
        # ... but with nothing left, the export before stays as it was
        before = {path.name: path.read_bytes() for path in (tmp_path / "d").iterdir()}
        with pytest.raises(LookupFailed, match="no chosen stack lists a binary of zlib; nothing written"):
            export_spack_cache(catalog, tmp_path / "d", tags=["develop"], stacks=["e4s"], packages=["zlib"])
        assert {path.name: path.read_bytes() for path in (tmp_path / "d").iterdir()} == before
        # ... and into a new folder, makes none (it was left there, empty)
        with pytest.raises(LookupFailed, match="no chosen stack lists a binary of zlib; nothing written"):
            export_spack_cache(catalog, tmp_path / "e", tags=["develop"], stacks=["e4s"], packages=["zlib"])
    assert not (tmp_path / "e").exists()
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_an_export_of_nothing_leaves_the_export_before(tmp_path: Path) -> None:
    """A tag whose specs are all its root's lists no binary in a stack: exported without
    --include-root, both files became "{}" over a good export, and it said it was done."""
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "zlib")])
    with catalog:
        assert export_spack_cache(catalog, tmp_path / "out", include_root=True).specs == 1
        before = {path.name: path.read_bytes() for path in (tmp_path / "out").iterdir()}
        with pytest.raises(
            LookupFailed,
            match=r"^no chosen stack lists a binary; nothing written to .*out \(a tag's root counts as a stack with",
        ):
            export_spack_cache(catalog, tmp_path / "out")
    assert {path.name: path.read_bytes() for path in (tmp_path / "out").iterdir()} == before


# -- values --------------------------------------------------------------------------------


def test_variants_are_formatted_as_data_py_formats_them() -> None:
    parameters = {
        "build_system": "cmake",
        "shared": True,
        "debug": False,
        "cuda_arch": ["90", "80"],
        "patches": ["abc", "def"],
        "jobs": 3,
        "level": 1.5,
        "nothing": None,
        "cflags": ["-O2", "-g"],
        "ldflags": [],
    }
    assert variant_strings(parameters) == _data_py_variants(parameters)
    assert variant_strings(parameters) == [
        "build_system=cmake",
        "+shared",
        "~debug",
        "cuda_arch=90",
        "cuda_arch=80",
        "patches=abc",
        "patches=def",
        "jobs=3",
        "level=1.5",
        "nothing=None",
        "cflags=-O2",
        "cflags=-g",
    ]


def test_old_dependency_forms_are_given_in_the_apps_form(mirrors: Path, tmp_path: Path) -> None:
    index = fixture_index(mirrors)
    installs = index["database"]["installs"]  # type: ignore[index]
    modern = installs["u5uz3dcch5if4eve4sef67o2rf2lbfgh"]["spec"]
    as_dict = json.loads(json.dumps(modern)) | {"hash": "d" * 32}
    as_dict["dependencies"] = {
        e["name"]: {"hash": e["hash"], "type": e["parameters"]["deptypes"]} for e in modern["dependencies"]
    }
    as_list = json.loads(json.dumps(modern)) | {"hash": "e" * 32}
    as_list["dependencies"] = [
        {"name": e["name"], "build_hash": e["hash"], "type": e["parameters"]["deptypes"][0]}
        for e in modern["dependencies"]
    ]
    for node in (as_dict, as_list):
        installs[node["hash"]] = {"spec": node, "ref_count": 0, "in_buildcache": True}
    write_v2_mirror(tmp_path / "m", index)
    tags = [{"name": "t", "url": "./m"}]
    config = make_config(tmp_path, tags)
    with Catalog(config.catalog) as catalog:
        assert sync(config, catalog)[0].ok
    _, specs = _export(config.catalog, tmp_path / "out", include_root=True)
    assert specs == brute_force(tmp_path, tags, include_root=True)[1]
    deps = {(e["name"], e["hash"]) for e in specs["u5uz3dcch5if4eve4sef67o2rf2lbfgh"]["dependencies"]}
    for old in ("d" * 32, "e" * 32):
        edges = specs[old]["dependencies"]
        assert {(e["name"], e["hash"]) for e in edges} == deps
        assert all(set(e) == {"name", "hash", "parameters"} and e["parameters"]["deptypes"] for e in edges)


def test_a_node_whose_dependencies_are_null_exports_with_none(mirrors: Path, tmp_path: Path) -> None:
    """A sync reads ``"dependencies": null`` as none; the export was a traceback."""
    index = fixture_index(mirrors)
    installs = index["database"]["installs"]  # type: ignore[index]
    node = json.loads(json.dumps(installs["u5uz3dcch5if4eve4sef67o2rf2lbfgh"]["spec"])) | {"hash": "n" * 32}
    node["dependencies"] = None
    installs[node["hash"]] = {"spec": node, "ref_count": 0, "in_buildcache": True}
    write_v2_mirror(tmp_path / "m", index)
    config = make_config(tmp_path, [{"name": "t", "url": "./m"}])
    with Catalog(config.catalog) as catalog:
        assert sync(config, catalog)[0].ok
    _, specs = _export(config.catalog, tmp_path / "out", include_root=True)
    assert specs["n" * 32]["dependencies"] == []


def test_latest_version_follows_spacks_order(tmp_path: Path) -> None:
    versions = {"a": ["1.9", "1.10", "1.2"], "b": ["2.0", "develop", "10.1"], "c": ["2.4.0", "2.4"]}
    records = [
        record(f"{name}{n}".ljust(32, "0"), name, version=version)
        for name, listed in versions.items()
        for n, version in enumerate(listed)
    ]
    packages = exported_packages(tmp_path, records)
    latest = {"a": "1.10", "b": "develop", "c": "2.4.0"}
    assert {name: p["latest_version"] for name, p in packages.items()} == latest
    assert {name: max(v, key=_version_key) for name, v in versions.items()} == latest  # the test's own order agrees


# -- files -----------------------------------------------------------------------------------


def test_a_second_export_is_byte_identical_and_rewrites_nothing(demo_run: Demo, tmp_path: Path) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        first = export_spack_cache(catalog, tmp_path)
        before = {
            name: ((tmp_path / name).read_bytes(), (tmp_path / name).stat().st_mtime_ns) for name in first.written
        }
        second = export_spack_cache(catalog, tmp_path)
        export_spack_cache(catalog, tmp_path / "again")
    assert first.written == [SPECS_FILE, PACKAGES_FILE] and second.written == []
    assert second.unchanged == [SPECS_FILE, PACKAGES_FILE]
    for name, (data, mtime) in before.items():
        assert (tmp_path / name).stat().st_mtime_ns == mtime  # not rewritten
        assert (tmp_path / "again" / name).read_bytes() == data  # the same bytes into a new folder
        assert data[:2] == b"\x1f\x8b" and data[4:8] == b"\0\0\0\0"  # gzip, no time in the header
        assert gzip.decompress(data)  # one valid gzip stream (parts compressed in parallel)
    assert sorted(os.listdir(tmp_path)) == sorted([PACKAGES_FILE, SPECS_FILE, "again"])


def test_parts_compressed_in_parallel_make_one_gzip_stream_whatever_the_threads(
    demo_run: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _export(demo_run.catalog, tmp_path / "whole")  # one part
    monkeypatch.setattr(export, "PART_SPECS", 100)  # the demo's 1,500 specs in 16 parts
    outputs = []
    for threads in (1, 3):
        monkeypatch.setattr(export, "cpu_workers", lambda threads=threads: threads)
        assert _export(demo_run.catalog, tmp_path / str(threads)) == whole  # the same JSON
        outputs.append((tmp_path / str(threads) / SPECS_FILE).read_bytes())
    assert outputs[0] == outputs[1]  # the same bytes: parts do not depend on the threads
    assert outputs[0] != (tmp_path / "whole" / SPECS_FILE).read_bytes()  # there were parts


def test_a_killed_exports_temporary_files_are_removed(demo_run: Demo, tmp_path: Path) -> None:
    stale = tmp_path / f".{SPECS_FILE}.4194304999.tmp"  # no process has that id
    stale.write_bytes(b"half")
    other = tmp_path / ".notes.txt.4194304999.tmp"
    other.write_bytes(b"not ours")
    _export(demo_run.catalog, tmp_path, tags=["v1.0.2"])
    assert not stale.exists() and other.exists()


def test_a_hostile_catalog_s_specs_are_refused_and_no_name_is_a_path(tmp_path: Path) -> None:
    """The app writes names into its page as markup: such specs are refused (named in
    the report), not exported; and no name becomes a path."""
    catalog = evil_catalog(tmp_path / "evil.sqlite")
    fine = record("d" * 32, "zlib")
    write_tag(catalog, "fine", [fine])
    with catalog:
        report = export_spack_cache(catalog, tmp_path / "out", include_root=True)
        # Each refused, nothing is left: files of nothing would replace the export before.
        with pytest.raises(
            LookupFailed, match=r"no chosen stack lists a binary; 3 specs refused \(.*; nothing written"
        ):
            export_spack_cache(catalog, tmp_path / "out", tags=["t<i>x"], include_root=True)
    packages, specs = _read(tmp_path / "out")
    refused = {(r.hash, r.field, r.value) for r in report.refused}
    assert refused == {
        ("a" * 32, "package name", "we\"ird'<b>name"),
        ("b" * 32, "release", "../up"),  # its tags (a catalog written without the config's check)
        ("c" * 32, "package name", "../escape"),
    }
    assert list(packages) == ["zlib"] and list(specs) == ["d" * 32] and report.specs == report.packages == 1
    assert sorted(os.listdir(tmp_path / "out")) == [PACKAGES_FILE, SPECS_FILE]  # a name is no path
    assert not (tmp_path / "escape").exists()


def test_a_dependency_list_is_refused_by_its_values_whatever_came_before(tmp_path: Path) -> None:
    """A bad dependency type or hash was exported when a list of the same punctuation had
    passed before it: which specs were refused depended on the others."""

    def node(name: str, deptype: str, dep_hash: str) -> bytes:
        edge = {"name": "cmake", "hash": dep_hash, "parameters": {"deptypes": [deptype], "virtuals": []}}
        return json.dumps({"name": name, "dependencies": [edge]}, separators=(",", ":")).encode()

    good = record("a" * 32, "zlib", node=node("zlib", "build", "c" * 32))
    kinds = record("b" * 32, "zstd", node=node("zstd", "bogus", "c" * 32))
    upper = record("d" * 32, "xz", node=node("xz", "build", "C" * 32))
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [good, kinds, upper])
    with catalog:
        report = export_spack_cache(catalog, tmp_path / "out", include_root=True)
    refused = {(r.hash, r.field, r.value) for r in report.refused}
    assert refused == {("b" * 32, "dependency type", "bogus"), ("d" * 32, "dependency hash", "C" * 32)}
    assert list(_read(tmp_path / "out")[1]) == ["a" * 32]


def test_an_old_edge_s_full_hash_is_taken_before_its_build_hash(tmp_path: Path) -> None:
    """As Spack reads them, and as the sync stored the edge; the export took the build hash."""
    edge = {"name": "cmake", "full_hash": "f" * 32, "build_hash": "b" * 32, "type": ["build"]}
    node = json.dumps({"name": "zlib", "dependencies": [edge]}).encode()
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "zlib", node=node)])
    with catalog:
        export_spack_cache(catalog, tmp_path / "out", include_root=True)
    [exported] = _read(tmp_path / "out")[1]["a" * 32]["dependencies"]
    assert exported == {"name": "cmake", "hash": "f" * 32, "parameters": {"deptypes": ["build"], "virtuals": []}}


# -- the command line ------------------------------------------------------------------------


def test_the_command_exports_and_says_what_it_wrote(demo_run: Demo, tmp_path: Path) -> None:
    outdir = tmp_path / "spack-cache" / "_data"
    args = ["--config", str(demo_run.config), "export", "spack-cache", str(outdir), "-t", "develop", "-s", "e4s"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    packages, specs = _read(outdir)
    assert (packages, specs) == brute_force(
        demo_run.folder, _demo_tags(demo_run), only_tags=["develop"], only_stacks=["e4s"]
    )
    line = result.output.strip()
    assert line.startswith(f"{len(specs):,} specs, {len(packages):,} packages, 1 tag, 1 stack: ")
    assert f"{SPECS_FILE} " in line and "(written)" in line and str(outdir) in line
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "(written)" not in again.output and "(unchanged)" in again.output
    wrong = CliRunner().invoke(main, [*args[:4], str(outdir), "-t", "x"])
    assert wrong.exit_code == 1 and "error: no tag 'x' in the catalog" in wrong.output
    missing = CliRunner().invoke(main, [*args, "-p", "boost", "-p", "zlib"])
    assert missing.exit_code == 0 and "warning: not exported" in missing.output and "zlib" in missing.output
    typo = CliRunner().invoke(main, [*args, "-p", "nope"])
    assert typo.exit_code == 1 and "error: no tag lists a package 'nope'" in typo.output


def test_include_root_with_stacks_adds_the_root_to_them(demo_run: Demo, tmp_path: Path) -> None:
    """``-s e4s --include-root`` exported e4s alone: the stacks filter dropped the root."""
    with_root = _export(demo_run.catalog, tmp_path / "a", stacks=["e4s"], include_root=True)
    assert with_root == _export(demo_run.catalog, tmp_path / "b", stacks=["e4s", "root"])
    assert with_root != _export(demo_run.catalog, tmp_path / "c", stacks=["e4s"])
