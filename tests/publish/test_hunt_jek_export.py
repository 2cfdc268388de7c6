"""``specs_data``'s text cut into parts and chunks, and values only old forms hold."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish import export_specs
from cachedex.publish.export import PACKAGES_FILE, export_spack_cache
from cachedex.publish.export_specs import Member, app_dependencies, json_parts
from cachedex.values import SpecRecord
from tests.helpers import record, write_tag
from tests.publish.test_export import exported_packages


def _members(count: int) -> list[Member]:
    hashes = [f"{n:032x}" for n in range(count)]
    return [(h, f'"{h}":{{"n":{n}}}'.encode(), "p", "1.0", ["t"], ["s"]) for n, h in enumerate(hashes)]


@pytest.mark.parametrize(("count", "size", "chunk"), [(7, 3, 2), (6, 6, 4), (5, 10, 1), (1, 1, 1)])
def test_parts_and_their_chunks_join_into_one_json_object(
    count: int, size: int, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A part joins its members a chunk at a time: with a chunk smaller than a part (as the
    # real 2,000 of 16,384 are), the chunks of a part need commas between them too.
    monkeypatch.setattr(export_specs, "_CHUNK", chunk)
    members = _members(count)
    parts = json_parts(members, size)
    assert len(parts) == -(-count // size)
    text = b"".join(piece for part in parts for piece in part)
    assert list(json.loads(text).items()) == [(m[0], {"n": n}) for n, m in enumerate(members)]


def test_no_members_make_an_empty_object() -> None:
    assert [b"".join(part) for part in json_parts([], 5)] == [b"{}"]


def test_of_versions_spack_orders_equal_the_latest_is_the_first_by_name(tmp_path: Path) -> None:
    # "1.0", "1.00", "01.0", "1-0" and "1_0" are one version to Spack; the export names the
    # first by name whatever order the catalog gives them in (a set's order is the hash
    # seed's). Several packages, so that a chance order cannot pass for the right one.
    spellings = ("{m}.0", "{m}.00", "{m}.000", "0{m}.0", "{m}-0", "{m}_0")
    versions = {f"p{m}": [s.format(m=m) for s in spellings] for m in range(1, 6)}
    records = [
        record(f"{m:02d}{n:030x}", name, version=version)
        for m, (name, listed) in enumerate(versions.items())
        for n, version in enumerate(listed)
    ]
    packages = exported_packages(tmp_path, records)
    assert {name: p["latest_version"] for name, p in packages.items()} == {
        name: min(listed) for name, listed in versions.items()
    }


def test_a_node_nested_too_deep_to_decode_is_refused_not_a_crash(tmp_path: Path) -> None:
    # A parameter of an edge nested deeper than msgspec decodes: the node's own decode
    # raised RecursionError, and the export crashed; that spec is refused, the others kept.
    depth = 200_000
    deep = b'[{"name":"x","parameters":{"a":' + b"[" * depth + b"]" * depth + b"}}]"
    odd = record("b" * 32, "cmake", node=b'{"name":"cmake","dependencies":' + deep + b"}")
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "zlib"), odd])
    with catalog:
        report = export_spack_cache(catalog, tmp_path / "out", include_root=True)
    assert report.specs == 1
    assert [(r.hash, r.field) for r in report.refused] == [("b" * 32, "node")]


def test_a_package_s_specs_are_listed_by_release_name_not_by_first_hash(tmp_path: Path) -> None:
    # The lowest hash is in release "u": its hashes come first, yet "t" is listed first.
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "u", [record("a" * 32, "zlib")])
    write_tag(catalog, "t", [record("b" * 32, "zlib", version="2.0")])
    with catalog:
        export_spack_cache(catalog, tmp_path / "out", include_root=True)
    packages = json.loads(gzip.decompress((tmp_path / "out" / PACKAGES_FILE).read_bytes()))
    assert packages["zlib"]["releases"] == ["t", "u"]
    assert list(packages["zlib"]["specs"].items()) == [("t", ["b" * 32]), ("u", ["a" * 32])]


def test_a_null_dependency_list_with_whitespace_is_no_dependencies() -> None:
    # (read_specs passes msgspec's exact token; a caller may pass the text as stored)
    assert bytes(app_dependencies(b" null\n")) == b"[]"


def _export_refusals(tmp_path: Path, *odd: SpecRecord) -> tuple[int, list[tuple[str, str, str]]]:
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "zlib"), *odd])
    with catalog:
        report = export_spack_cache(catalog, tmp_path / "out", include_root=True)
    return report.specs, [(r.hash, r.field, r.value) for r in report.refused]


def test_a_dependency_in_an_old_form_is_refused_by_its_values_too(tmp_path: Path) -> None:
    # Spack 0.19's dict of edges is rewritten in the app's form, then checked as any list.
    edges = b'{"<img src=x>":{"hash":"' + b"c" * 32 + b'","type":["build"]}}'
    odd = record("b" * 32, "cmake", node=b'{"name":"cmake","dependencies":' + edges + b"}")
    assert _export_refusals(tmp_path, odd) == (1, [("b" * 32, "dependency name", "<img src=x>")])


def test_a_hash_that_is_no_dag_hash_is_refused(tmp_path: Path) -> None:
    odd_hash = "b" * 31 + "<"
    assert _export_refusals(tmp_path, record(odd_hash, "cmake")) == (1, [(odd_hash, "hash", odd_hash)])
