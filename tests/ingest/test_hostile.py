"""Hostile mirror content (reliability review): each case ends its own tag with one line
naming the file, and the healthy tag listed after it still syncs."""

from __future__ import annotations

import hashlib
import json
import resource
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.config import parse_config
from cachedex.errors import IndexFormatError
from cachedex.ingest.index import decode_index
from cachedex.ingest.sync import sync
from tests.helpers import fixture_index, make_config, write_v2_mirror, write_v3_mirror

FIRST = "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"  # libelf in the real v2 test index


def _v2_bytes(root: Path, data: bytes) -> None:
    (root / "build_cache").mkdir(parents=True, exist_ok=True)
    (root / "build_cache/index.json").write_bytes(data)
    (root / "build_cache/index.json.hash").write_text(hashlib.sha256(data).hexdigest())


def _with_node(mirrors: Path, **node: object) -> dict[str, object]:
    index = fixture_index(mirrors)
    index["database"]["installs"][FIRST]["spec"].update(node)  # type: ignore[index]
    return index


def _placeholder(index: dict[str, object], placeholder: str, text: str) -> bytes:
    """The index as JSON with the string ``placeholder`` replaced by raw JSON ``text``."""
    return json.dumps(index).replace(json.dumps(placeholder), text).encode()


def _sync_next_to_a_healthy_tag(tmp_path: Path, mirrors: Path, make: Callable[[Path], None]) -> tuple[str, bool]:
    """Sync tag ``x`` (made by ``make``) then the healthy ``y``: x's error, and whether y synced."""
    make(tmp_path / "x")
    write_v2_mirror(tmp_path / "y", fixture_index(mirrors))
    config = make_config(
        tmp_path, [{"name": "x", "url": str(tmp_path / "x")}, {"name": "y", "url": str(tmp_path / "y")}]
    )
    with Catalog(config.catalog) as catalog:
        x, y = sync(config, catalog)
        assert catalog.tag_names() == ["y"]  # x never became visible
    assert x.error is not None
    assert "unexpected" not in x.error and "Traceback" not in x.error
    assert str(tmp_path / "x") in x.error  # names the file
    return x.error, y.ok


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


CASES: list[object] = [
    pytest.param(
        lambda root, m: _v2_bytes(root, _placeholder(_with_node(m, parameters={"x": "DEEP"}), "DEEP", _nested(5000))),
        "nested too deeply",
        id="CRASH-1-deep-json",
    ),
    pytest.param(
        lambda root, m: write_v2_mirror(root, _with_node(m, name="zl\x00ib")),
        "package name 'zl\\x00ib' must not contain control",
        id="CRASH-5-nul-in-name",
    ),
    pytest.param(
        lambda root, m: write_v2_mirror(root, _with_node(m, name="new\nline")),
        "must not contain control",
        id="CRASH-5-newline-in-name",
    ),
    pytest.param(
        lambda root, m: write_v2_mirror(root, _with_node(m, version="1.0\x07")),
        "version '1.0\\x07' holds spaces, control characters",
        id="CRASH-5-control-in-version",
    ),
    pytest.param(
        lambda root, m: write_v2_mirror(root, _with_node(m, name="../../etc")),
        "package name '../../etc' must not contain '/'",
        id="SEC-6-traversal-in-name",
    ),
    pytest.param(
        lambda root, m: write_v2_mirror(root, _with_node(m, name="gnp\u202eexe")),
        "invisible",
        id="COS-6-rtl-override",
    ),
    pytest.param(
        lambda root, m: write_v2_mirror(root, _with_node(m, name="a" * 3000)),
        "longer than 255 bytes",
        id="CRASH-11-long-name",
    ),
    pytest.param(
        lambda root, m: _v2_bytes(root, _placeholder(_with_node(m, version="V"), "V", "1.10")),
        "got `float` - at `$.version`",
        id="COS-10-float-version",
    ),
]


@pytest.mark.parametrize(("make", "message"), CASES)
def test_hostile_index_content_fails_its_tag_only(
    mirrors: Path, tmp_path: Path, make: Callable[[Path, Path], None], message: str
) -> None:
    error, healthy_synced = _sync_next_to_a_healthy_tag(tmp_path, mirrors, lambda root: make(root, mirrors))
    assert message in error
    assert "\n" not in error
    assert healthy_synced


def test_crash6_a_huge_integer_with_an_extra_ref_count_key_is_read(mirrors: Path) -> None:
    index = _with_node(mirrors, parameters={"ref_count": "BIG"})
    data = _placeholder(index, "BIG", "1" * 5000)
    assert data.count(b'"ref_count"') > 7
    assert len(decode_index(data, url="u").records) == 7


def test_data2_a_repeated_hash_is_found_without_ref_count(mirrors: Path) -> None:
    index = fixture_index(mirrors)
    for record in index["database"]["installs"].values():  # type: ignore[attr-defined]
        del record["ref_count"]
    text = json.dumps(index)
    first = json.dumps({FIRST: index["database"]["installs"][FIRST]})[1:-1]  # type: ignore[index]
    doubled = text.replace('"installs": {', '"installs": {' + first + ", ", 1)
    with pytest.raises(IndexFormatError, match=f"DAG hash {FIRST} appears 2 times"):
        decode_index(doubled.encode(), url="u")


def test_data2_a_repeated_hash_hidden_behind_an_escape_is_found(mirrors: Path) -> None:
    index = fixture_index(mirrors)
    text = json.dumps(index)
    escaped = "\\u00" + format(ord(FIRST[0]), "x") + FIRST[1:]
    first = json.dumps({FIRST: index["database"]["installs"][FIRST]})[1:-1].replace(FIRST, escaped, 1)  # type: ignore[index]
    doubled = text.replace('"installs": {', '"installs": {' + first + ", ", 1)
    with pytest.raises(IndexFormatError, match="appears 2 times"):
        decode_index(doubled.encode(), url="u")


def test_a_record_without_its_node_is_rejected(mirrors: Path) -> None:
    index = fixture_index(mirrors)
    del index["database"]["installs"][FIRST]["spec"]  # type: ignore[index]
    with pytest.raises(IndexFormatError, match="missing required field `spec`"):
        decode_index(json.dumps(index).encode(), url="u")


# -- v3 mirrors: manifests ---------------------------------------------------------------------


def _v3_with_manifest(root: Path, mirrors: Path, **entry: object) -> None:
    write_v3_mirror(root, fixture_index(mirrors))
    _v3_with_manifest_entry(root, **entry)


def _v3_with_manifest_entry(root: Path, **entry: object) -> None:
    path = root / "v3/manifests/index/index.manifest.json"
    manifest = json.loads(path.read_text())
    manifest["data"][0].update(entry)
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param({"checksumAlgorithm": "shake_128"}, "checksum algorithm 'shake_128'", id="CRASH-3-shake"),
        pytest.param(
            {"checksumAlgorithm": "../../../../../../etc", "checksum": "passwd"},
            "checksum algorithm '../../../../../../etc'",
            id="SEC-6-algorithm-traversal",
        ),
        pytest.param({"checksum": "../../passwd"}, "checksum '../../passwd'", id="SEC-6-checksum-traversal"),
    ],
)
def test_sec6_index_manifests_are_checked_before_use(
    mirrors: Path, tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    error, healthy_synced = _sync_next_to_a_healthy_tag(
        tmp_path, mirrors, lambda root: _v3_with_manifest(root, mirrors, **entry)
    )
    assert message in error
    assert healthy_synced


@pytest.mark.parametrize(
    "size", [pytest.param(2**64 - 1, id="CRASH-4-size-2^64"), pytest.param(-5, id="COS-7-negative-size")]
)
def test_crash4_impossible_sizes_count_as_unknown(mirrors: Path, tmp_path: Path, size: int) -> None:
    sizes = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    (victim,) = (tmp_path / "m/v3/manifests/spec").glob(f"*/*{FIRST}*")
    manifest = json.loads(victim.read_text())
    manifest["data"][0]["contentLength"] = size
    victim.write_text(json.dumps(manifest))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert any(FIRST in w and "contentLength" in w for w in outcome.warnings), outcome.warnings
        (stats,) = catalog.tag_stats(["t"])
    assert stats.sized == len(sizes) - 1
    assert stats.size == sum(s for h, s in sizes.items() if h != FIRST)


def _gzip_bomb(expanded: int) -> bytes:
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: a gzip header
    chunk = b"A" * 1_000_000
    parts = [packer.compress(b'{"database":{"version":"8","installs":{}, "pad":"')]
    parts += [packer.compress(chunk) for _ in range(expanded // len(chunk))]
    parts.append(packer.compress(b'"}}') + packer.flush())
    return b"".join(parts)


def test_sec2_a_gzip_bomb_index_blob_is_bounded(mirrors: Path, tmp_path: Path) -> None:
    """A 1 MB gzip blob that expands to 1 GB took a sync to 2.1 GB of memory."""
    bomb = _gzip_bomb(300_000_000)
    assert len(bomb) < 1_500_000

    def make(root: Path) -> None:
        write_v3_mirror(root, fixture_index(mirrors))
        digest = hashlib.sha256(bomb).hexdigest()
        blob = root / "blobs/sha256" / digest[:2] / digest
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(bomb)
        _v3_with_manifest_entry(root, checksum=digest, contentLength=len(bomb), compression="gzip")

    make(tmp_path / "x")
    write_v2_mirror(tmp_path / "y", fixture_index(mirrors))
    tags = [{"name": "x", "url": str(tmp_path / "x")}, {"name": "y", "url": str(tmp_path / "y")}]
    config = parse_config({"catalog": "c.sqlite", "tags": tags, "limits": {"index_bytes": 50_000_000}}, base=tmp_path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with Catalog(config.catalog) as catalog:
        x, y = sync(config, catalog)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert x.error is not None and "50,000,000" in x.error, x.error
    assert y.ok
    assert grown_mb < 150


# -- v1/v2 spec files scanned from a folder ----------------------------------------------------

_SPEC_NAME = "build_cache/test-debian6-core2-gcc-4.5.0-zlib-1.2.11-{}.spec.yaml"
_HASH = "a" * 32


def _spec_yaml(root: Path, text: str) -> None:
    path = root / _SPEC_NAME.format(_HASH)
    path.parent.mkdir(parents=True)
    path.write_text(text)


def test_hang3_a_billion_laughs_spec_file_is_refused(mirrors: Path, tmp_path: Path) -> None:
    levels = [f"    a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    text = "\n".join(
        ["spec:", "- zlib:", "    version: 1.2.11", f"    hash: {_HASH}", "    parameters:"]
        + ['      a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        + ["  " + line for line in levels]
    )
    assert len(text) < 1200
    error, healthy_synced = _sync_next_to_a_healthy_tag(tmp_path, mirrors, lambda root: _spec_yaml(root, text))
    assert "aliases (*name) are not allowed" in error
    assert healthy_synced


def test_crash14_a_spec_file_nested_too_deep_is_one_line(mirrors: Path, tmp_path: Path) -> None:
    text = f"spec:\n- zlib:\n    version: 1.2.11\n    hash: {_HASH}\n    parameters: {{x: {_nested(5000)}}}\n"
    error, healthy_synced = _sync_next_to_a_healthy_tag(tmp_path, mirrors, lambda root: _spec_yaml(root, text))
    assert "nested too deeply" in error
    assert healthy_synced


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("spec: 7\n", id="spec-a-number"),
        pytest.param("spec: [1, 2]\n", id="spec-list-of-numbers"),
        pytest.param("spec: {nodes: [1]}\n", id="nodes-of-numbers"),
        pytest.param("spec: {_meta: {version: [1]}, nodes: []}\n", id="meta-version-a-list"),
    ],
)
def test_spec_files_of_the_wrong_shape_are_one_line(mirrors: Path, tmp_path: Path, text: str) -> None:
    error, healthy_synced = _sync_next_to_a_healthy_tag(tmp_path, mirrors, lambda root: _spec_yaml(root, text))
    assert "not a valid spec file" in error
    assert healthy_synced


def test_msg6_index_errors_name_the_blob_and_every_failing_stack(mirrors: Path, tmp_path: Path) -> None:
    write_v2_mirror(tmp_path / "root", fixture_index(mirrors))
    for stack in ("s1", "s2", "s3"):
        bad = fixture_index(mirrors)
        installs = bad["database"]["installs"]  # type: ignore[index]
        installs[f"not-a-hash-{stack}"] = installs.pop(FIRST)
        write_v3_mirror(tmp_path / stack, bad)
    write_v2_mirror(tmp_path / "fine", fixture_index(mirrors))
    stacks = {s: str(tmp_path / s) for s in ("s1", "fine", "s2", "s3")}
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "root"), "stacks": stacks}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.error is not None
    lines = outcome.error.splitlines()
    assert len(lines) == 3, lines
    for stack, line in zip(("s1", "s2", "s3"), lines, strict=True):
        assert line.startswith(f"{tmp_path / stack}/blobs/sha256/"), line
        assert f"malformed DAG hash 'not-a-hash-{stack}'" in line


def test_msg6_a_bad_node_names_the_blob(mirrors: Path, tmp_path: Path) -> None:
    bad = fixture_index(mirrors)
    bad["database"]["installs"][FIRST]["spec"]["name"] = 12345  # type: ignore[index]
    write_v3_mirror(tmp_path / "m", bad)
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.error is not None
    assert outcome.error.startswith(f"{tmp_path / 'm'}/blobs/sha256/")
    assert f"record {FIRST}: invalid node" in outcome.error
