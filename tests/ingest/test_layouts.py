"""Finding and verifying a mirror's index: real v1/v2/legacy mirrors, checksums, signatures."""

from __future__ import annotations

import bz2
import hashlib
import json
import re
from pathlib import Path

import pytest

from cachedex.config import Limits
from cachedex.errors import ChecksumError, IndexFormatError, SourceNotFound
from cachedex.ingest.index import decode_index
from cachedex.ingest.layouts import read_index as _read_index
from cachedex.ingest.local_source import LocalSource
from cachedex.ingest.manifests import read_clearsigned, spec_manifest_path, tarball_path_v2
from cachedex.ingest.records import build_records
from cachedex.ingest.snapshots import PreviousState
from cachedex.ingest.sources import open_source

LIMITS = Limits()


def read_index(source: LocalSource, previous: PreviousState | None) -> object:
    return _read_index(source, previous, limits=LIMITS)


def _local(path: Path) -> LocalSource:
    source = open_source(str(path), client=None)
    assert isinstance(source, LocalSource)
    return source


def test_v2_index_is_verified_against_its_hash_file(mirrors: Path) -> None:
    root = mirrors / "v2_layout/unsigned"
    snapshot = read_index(_local(root), None)
    expected = (root / "build_cache/index.json.hash").read_text().strip()
    assert (snapshot.layout, snapshot.checksum) == (2, expected)
    assert snapshot.data == (root / "build_cache/index.json").read_bytes()


def test_unchanged_v2_index_is_not_downloaded_again(mirrors: Path) -> None:
    root = mirrors / "v2_layout/signed"
    first = read_index(_local(root), None)
    again = read_index(_local(root), PreviousState(layout=2, checksum=first.checksum))
    assert again.data is None and again.checksum == first.checksum


def test_hash_mismatch_is_an_error(mirrors: Path, tmp_path: Path) -> None:
    (tmp_path / "build_cache").mkdir()
    index = (mirrors / "v2_layout/unsigned/build_cache/index.json").read_bytes()
    (tmp_path / "build_cache/index.json").write_bytes(index.replace(b"libelf", b"libelX", 1))
    (tmp_path / "build_cache/index.json.hash").write_bytes(
        (mirrors / "v2_layout/unsigned/build_cache/index.json.hash").read_bytes()
    )
    with pytest.raises(ChecksumError, match=r"index\.json: does not match index\.json\.hash"):
        read_index(_local(tmp_path), None)


@pytest.mark.parametrize(
    ("hash_file", "checked"),
    [
        ("{digest}junk after it\n", True),  # (Spack reads the first 64 bytes)
        ("{upper}\n", False),  # not what Spack writes: no check at all, as Spack reads it
        ("not a digest", False),
        ("", False),
    ],
)
def test_a_hash_file_is_read_as_spack_reads_it(mirrors: Path, tmp_path: Path, hash_file: str, checked: bool) -> None:
    """A hash file that is no lowercase sha256 digest failed the whole tag, where Spack
    ignores it and reads the index; its first 64 bytes are the digest, as Spack reads it."""
    index = (mirrors / "v2_layout/unsigned/build_cache/index.json").read_bytes()
    digest = hashlib.sha256(index).hexdigest()
    (tmp_path / "build_cache").mkdir()
    (tmp_path / "build_cache/index.json").write_bytes(index)
    text = hash_file.format(digest=digest, upper=digest.upper())
    (tmp_path / "build_cache/index.json.hash").write_text(text)
    snapshot = read_index(_local(tmp_path), None)
    assert snapshot.data == index and snapshot.checksum == digest  # type: ignore[attr-defined]
    # a changed index is told by a hash that is read, and only by it
    (tmp_path / "build_cache/index.json").write_bytes(index.replace(b"libelf", b"libelX", 1))
    if checked:
        with pytest.raises(ChecksumError):
            read_index(_local(tmp_path), None)
    else:
        assert read_index(_local(tmp_path), None).data != index  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("compression", "data", "problem"),
    [
        (
            "bzip2",
            bz2.compress(b'{"database": {}}'),
            "compressed as 'bzip2', which cachedex does not read (gzip or none)",
        ),
        ("gzip", b'{"database": {}}', "the manifest says gzip, but the blob is not gzip data"),
        ("zstd", b'{"database": {"version": "8", "installs": {}}}', None),  # the bytes are JSON: read as they are
    ],
)
def test_an_index_blob_is_read_as_its_bytes_are_and_a_compression_not_read_is_named(
    tmp_path: Path, compression: str, data: bytes, problem: str | None
) -> None:
    digest = hashlib.sha256(data).hexdigest()
    blob = tmp_path / "blobs/sha256" / digest[:2] / digest
    blob.parent.mkdir(parents=True)
    blob.write_bytes(data)
    manifest = tmp_path / "v3/manifests/index/index.manifest.json"
    manifest.parent.mkdir(parents=True)
    entry = {"contentLength": len(data), "mediaType": "application/vnd.spack.db.v8+json", "compression": compression,
             "checksumAlgorithm": "sha256", "checksum": digest}  # fmt: skip
    manifest.write_text(json.dumps({"version": 3, "data": [entry]}))
    if problem is None:
        assert read_index(_local(tmp_path), None).data == data
        return
    with pytest.raises(IndexFormatError, match=re.escape(f"{blob}: {problem}")):
        read_index(_local(tmp_path), None)


def test_a_mirror_without_index_or_spec_files(tmp_path: Path) -> None:
    with pytest.raises(SourceNotFound, match="no build cache index here"):
        read_index(_local(tmp_path), None)


def test_v1_mirror_without_index_is_read_from_its_spec_files(mirrors: Path) -> None:
    snapshot = read_index(_local(mirrors / "v1_layout"), None)
    assert snapshot.layout == 1
    index = decode_index(snapshot.data or b"", url="v1")
    (record,) = build_records(index)
    assert (record.hash, record.name, record.compiler, record.target) == (
        "haahnjwjngowrsx4b7hh2zxzoqcmfjfd",
        "libelf",
        "gcc@9.4.0",
        "core2",
    )
    assert record.in_buildcache


def test_legacy_layout_without_layout_version_is_read(mirrors: Path) -> None:
    snapshot = read_index(_local(mirrors / "legacy_layout"), None)
    (record,) = build_records(decode_index(snapshot.data or b"", url="legacy"))
    assert (record.name, record.version, record.compiler) == ("archive-files", "2.0", "gcc@4.5.0")


def test_future_layout_is_rejected(mirrors: Path) -> None:
    with pytest.raises(IndexFormatError, match="layout version 10 is newer than this cachedex reads"):
        read_index(_local(mirrors / "future_layout"), None)


def test_signed_mirror_is_read_through_its_clearsigned_spec_files(mirrors: Path, tmp_path: Path) -> None:
    """Without index.json, the signed mirror's records come from its .spec.json.sig files."""
    signed = mirrors / "v2_layout/signed/build_cache"
    (tmp_path / "build_cache").mkdir()
    for sig in signed.glob("*.spec.json.sig"):
        (tmp_path / "build_cache" / sig.name).symlink_to(sig)  # read in place
    snapshot = read_index(_local(tmp_path), None)
    records = {r.hash: r for r in build_records(decode_index(snapshot.data or b"", url="s"))}
    listed = {h for h, r in records.items() if r.in_buildcache}
    assert listed == {
        "sk2gqqz4n5njmvktycnd25wq25jxiqkr",
        "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez",
        "u5uz3dcch5if4eve4sef67o2rf2lbfgh",
        "jr3yipyxyjulcdvckwwwjrrumis7glpa",
        "qeehcxyvluwnihsc2qxstmpomtxo3lrc",
        "izgzpzeljwairalfjm3k6fntbb64nt6n",
    }
    assert records["u5uz3dcch5if4eve4sef67o2rf2lbfgh"].compiler == "gcc@10.2.1"
    assert not records["vd7v4ssgnoqdplgxyig3orum67n4vmhq"].in_buildcache  # the external gcc


def test_read_clearsigned_undoes_the_armor(mirrors: Path) -> None:
    sig = (
        mirrors
        / "signed_json/linux-ubuntu18.04-haswell-gcc-8.4.0-zlib-1.2.12-g7otk5dra3hifqxej36m5qzm7uyghqgb.spec.json.sig"
    )
    text = read_clearsigned(sig.read_text())
    assert text.lstrip().startswith("{") and '"zlib"' in text
    plain = '{"a": 1}'
    assert read_clearsigned(plain) == plain
    armored = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n- -dash\nbody\n"
        "-----BEGIN PGP SIGNATURE-----\nx\n-----END PGP SIGNATURE-----\n"
    )
    assert read_clearsigned(armored) == "-dash\nbody"


def test_paths_of_manifests_and_tarballs() -> None:
    h = "u5uz3dcch5if4eve4sef67o2rf2lbfgh"
    assert spec_manifest_path("libdwarf", "20130729", h) == (
        f"v3/manifests/spec/libdwarf/libdwarf-20130729-{h}.spec.manifest.json"
    )
    assert tarball_path_v2(
        platform="test", os="debian6", target="m1", compiler="gcc@10.2.1", name="libdwarf", version="20130729", hash=h
    ) == (
        "build_cache/test-debian6-m1/gcc-10.2.1/libdwarf-20130729/"
        f"test-debian6-m1-gcc-10.2.1-libdwarf-20130729-{h}.spack"
    )
    assert "/none-none/" in tarball_path_v2(
        platform="linux", os="rhel8", target="x86_64", compiler="none", name="a", version="1", hash=h
    )
    # A git branch's version holds "/": Spack writes it "_" in both the folder and the
    # file (the site's link and a sync's size request kept the "/", and found nothing).
    assert tarball_path_v2(
        platform="linux", os="rhel8", target="x86_64", compiler="gcc@13", name="a", version="git.f/x=1.0", hash=h
    ) == (f"build_cache/linux-rhel8-x86_64/gcc-13/a-git.f_x=1.0/linux-rhel8-x86_64-gcc-13-a-git.f_x=1.0-{h}.spack")


def test_hash_file_is_sha256_of_the_exact_bytes(mirrors: Path) -> None:
    for name in ("v2_layout/unsigned", "v2_layout/signed", "legacy_yaml"):
        data = (mirrors / name / "build_cache/index.json").read_bytes()
        expected = (mirrors / name / "build_cache/index.json.hash").read_text().strip()
        assert hashlib.sha256(data).hexdigest() == expected


def _index_entry(
    root: Path, data: bytes, media: str, compression: str = "none", length_off: int = 0
) -> dict[str, object]:
    """A blob of ``data`` under ``root`` and the manifest entry naming it."""
    digest = hashlib.sha256(data).hexdigest()
    blob = root / "blobs/sha256" / digest[:2] / digest
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    return {"contentLength": len(data) + length_off, "mediaType": media, "compression": compression,
            "checksumAlgorithm": "sha256", "checksum": digest}  # fmt: skip


def _index_manifest(root: Path, *entries: dict[str, object]) -> None:
    manifest = root / "v3/manifests/index/index.manifest.json"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"version": 3, "data": list(entries)}))


def test_of_several_index_blobs_the_newest_database_version_read_is_taken(tmp_path: Path) -> None:
    """Spack 1.3 may list an index in several Database versions: the newest this
    cachedex reads is taken, whatever the manifest's order (one past them is passed by)."""
    blobs = {
        version: json.dumps({"database": {"version": str(version), "installs": {}}}).encode() for version in (7, 9, 99)
    }
    entries = [_index_entry(tmp_path, data, f"application/vnd.spack.db.v{v}+json") for v, data in blobs.items()]
    for order in (entries, entries[::-1]):
        _index_manifest(tmp_path, *order)
        assert read_index(_local(tmp_path), None).data == blobs[9]


def test_an_index_blob_of_another_length_than_its_manifest_says_is_refused(tmp_path: Path) -> None:
    data = b'{"database": {"version": "8", "installs": {}}}'
    _index_manifest(tmp_path, _index_entry(tmp_path, data, "application/vnd.spack.db.v8+json", length_off=1))
    with pytest.raises(
        ChecksumError, match=f"size mismatch \\(manifest says {len(data) + 1} bytes, got {len(data)}\\)"
    ):
        read_index(_local(tmp_path), None)


def test_a_gzip_index_blob_cut_short_is_refused(tmp_path: Path) -> None:
    """An upload cut off in its gzip trailer decompresses to the whole JSON, but is not
    the blob Spack wrote (its checksum is of the bytes as stored: the manifest's own)."""
    import gzip

    cut = gzip.compress(b'{"database": {"version": "8", "installs": {}}}')[:-8]
    _index_manifest(tmp_path, _index_entry(tmp_path, cut, "application/vnd.spack.db.v8+json", "gzip"))
    with pytest.raises(IndexFormatError, match="the stream ends early"):
        read_index(_local(tmp_path), None)


@pytest.mark.parametrize("layout", [3, 4])
def test_a_spec_file_of_a_layout_past_2_is_refused(tmp_path: Path, layout: int) -> None:
    """Spec files under ``build_cache/`` are layouts 0 to 2 (v3 has manifests)."""
    (tmp_path / "build_cache").mkdir()
    spec = {"spec": {"_meta": {"version": 4}, "nodes": []}, "buildcache_layout_version": layout}
    name = "linux-ubuntu22.04-x86_64-gcc-12.3.0-zlib-1.3-" + "a" * 32 + ".spec.json"
    (tmp_path / "build_cache" / name).write_text(json.dumps(spec))
    with pytest.raises(IndexFormatError, match=f"layout version {layout} is newer than this cachedex reads"):
        read_index(_local(tmp_path), None)


def test_spec_files_of_several_ages_make_an_index_of_the_newest_database_version(tmp_path: Path) -> None:
    """A mirror that grew over Spack releases holds spec files of several formats: the
    index made of them has the newest one's Database version, whichever file is read last."""
    (tmp_path / "build_cache").mkdir()
    for dag_hash, spec_version in (("a" * 32, 4), ("b" * 32, 3)):
        node = {"name": "zlib", "version": "1.3", "hash": dag_hash, "parameters": {},
                "arch": {"platform": "linux", "platform_os": "debian12", "target": "x86_64"}}  # fmt: skip
        spec = {"spec": {"_meta": {"version": spec_version}, "nodes": [node]}, "buildcache_layout_version": 2}
        name = f"linux-debian12-x86_64-gcc-12.2.0-zlib-1.3-{dag_hash}.spec.json"
        (tmp_path / "build_cache" / name).write_text(json.dumps(spec))
    snapshot = read_index(_local(tmp_path), None)
    assert json.loads(snapshot.data or b"")["database"]["version"] == "7"
