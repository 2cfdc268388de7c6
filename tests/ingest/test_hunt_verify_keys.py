"""Which names in a mirror's key index (or key folder) ``load_keys`` takes for keys: a
fingerprint in either case, a 16-digit key id, a name too short to be either, and one
key named twice in different cases. Real v2 and v3 mirrors in a folder, a real gpg key."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cachedex.config import Limits
from cachedex.demo.mirror_files import publish_keys
from cachedex.ingest.signatures import Keyring
from cachedex.ingest.sources import open_source
from cachedex.ingest.verify_keys import KEY_BYTES, KEY_DIR_V2, KEY_DIR_V3, load_keys
from tests.ingest.test_signatures import TestKey


def _load(root: Path, layout: int) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(kind, url, message) of each problem, and the fingerprints imported."""
    with Keyring() as keyring:
        problems = load_keys(open_source(str(root), client=None), layout, keyring, Limits())
        return [(p.kind, p.url, p.message) for p in problems], keyring.fingerprints


def test_a_key_published_under_its_fingerprint_in_lower_case_is_imported(tmp_path: Path, key: TestKey) -> None:
    # gpg prints fingerprints in upper case; a mirror may well name them in lower case.
    for layout in (2, 3):
        root = tmp_path / f"v{layout}"
        publish_keys(root, {key.fingerprint.lower(): key.public}, layout=layout)
        assert _load(root, layout) == ([], [key.fingerprint.upper()])


def test_a_key_published_under_its_long_key_id_is_imported(tmp_path: Path, key: TestKey) -> None:
    """A 16-digit key id is no full fingerprint: the key it holds is not checked against
    it (that check is for 40-digit fingerprints), and it is imported without a problem."""
    key_id = key.fingerprint[-16:]
    publish_keys(tmp_path, {key_id: key.public}, layout=2)
    assert _load(tmp_path, 2) == ([], [key.fingerprint.upper()])


def test_a_name_too_short_for_a_key_id_is_reported_not_fetched(tmp_path: Path, key: TestKey) -> None:
    # An 8-digit short key id is hex but no key id Spack writes: the index is wrong, said
    # at the key folder, and no file is looked up under that name.
    short = key.fingerprint[-8:]
    publish_keys(tmp_path, {key.fingerprint: key.public}, layout=2)
    (tmp_path / KEY_DIR_V2 / "index.json").write_text(json.dumps({"keys": {key.fingerprint: {}, short: {}}}))
    problems, imported = _load(tmp_path, 2)
    folder = open_source(str(tmp_path), client=None).join(KEY_DIR_V2)
    assert problems == [("key-unreadable", folder, f"{short!r} is not a key fingerprint")]
    assert imported == [key.fingerprint.upper()]


def test_a_key_named_twice_in_different_cases_is_read_once(tmp_path: Path, key: TestKey) -> None:
    """A fingerprint is hex: the same key named in upper and in lower case is one key,
    read once, not reported missing under its second spelling."""
    publish_keys(tmp_path, {key.fingerprint.upper(): key.public}, layout=3)
    # the key index names it twice; only the upper-case key manifest exists
    index = tmp_path / KEY_DIR_V3 / "keys.manifest.json"
    manifest = json.loads(index.read_text())
    twice = json.dumps({"keys": {key.fingerprint.upper(): {}, key.fingerprint.lower(): {}}}).encode()
    _rewrite_blob(tmp_path, manifest, twice)
    index.write_text(json.dumps(manifest))
    assert _load(tmp_path, 3) == ([], [key.fingerprint.upper()])


def _rewrite_blob(root: Path, manifest: dict[str, object], data: bytes) -> None:
    """Store ``data`` as the one blob ``manifest`` lists, and make the manifest name it."""
    (record,) = manifest["data"]  # type: ignore[misc]
    checksum = hashlib.sha256(data).hexdigest()
    blob = root / f"blobs/sha256/{checksum[:2]}/{checksum}"
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    record.update(checksum=checksum, contentLength=len(data))


def test_a_key_index_naming_hundreds_of_keys_is_read(tmp_path: Path, key: TestKey) -> None:
    """A mirror many people push to may name hundreds of keys: its index (tens of KB)
    is read whole; each named key that is not there is said missing."""
    publish_keys(tmp_path, {key.fingerprint: key.public}, layout=2)
    others = [f"{n:040X}" for n in range(1, 400)]
    index = {"keys": {key.fingerprint: {}, **dict.fromkeys(others, {})}}
    (tmp_path / KEY_DIR_V2 / "index.json").write_text(json.dumps(index))
    problems, imported = _load(tmp_path, 2)
    assert imported == [key.fingerprint.upper()]
    assert [kind for kind, _, _ in problems] == ["key-missing"] * len(others)


def test_a_key_index_past_key_bytes_is_unreadable_and_the_folder_still_counts(tmp_path: Path, key: TestKey) -> None:
    publish_keys(tmp_path, {key.fingerprint: key.public}, layout=2)
    index = tmp_path / KEY_DIR_V2 / "index.json"
    index.write_text(json.dumps({"keys": {key.fingerprint: {}}}) + " " * KEY_BYTES)
    problems, imported = _load(tmp_path, 2)
    url = open_source(str(tmp_path), client=None).join(f"{KEY_DIR_V2}/index.json")
    assert [(kind, at) for kind, at, _ in problems] == [("key-unreadable", url)]
    assert problems[0][2].startswith("key index cannot be read")
    assert imported == [key.fingerprint.upper()]  # (its .pub file, found by listing the folder)


def _key_manifest(root: Path, fingerprint: str) -> tuple[Path, dict[str, Any]]:
    path = root / KEY_DIR_V3 / f"{fingerprint}.key.manifest.json"
    return path, json.loads(path.read_text())


def test_a_key_manifest_listing_no_key_blob_is_a_missing_key(tmp_path: Path, key: TestKey) -> None:
    """The blob is taken by its media type: a key manifest whose one record is of
    another type names no key, though the bytes it points to would import."""
    publish_keys(tmp_path, {key.fingerprint: key.public}, layout=3)
    path, manifest = _key_manifest(tmp_path, key.fingerprint)
    manifest["data"][0]["mediaType"] = "application/vnd.spack.install.v2.tar+gzip"
    path.write_text(json.dumps(manifest))
    problems, imported = _load(tmp_path, 3)
    url = open_source(str(tmp_path), client=None).join(f"{KEY_DIR_V3}/{key.fingerprint}.key.manifest.json")
    assert problems == [("key-missing", url, f"public key {key.fingerprint}: lists no application/pgp-keys blob")]
    assert imported == []


def test_a_key_blob_that_differs_from_its_manifest_is_not_imported(tmp_path: Path, key: TestKey) -> None:
    # Another key's bytes put in place of the blob: the checksum the manifest gives is
    # what stops it, before gpg sees it.
    publish_keys(tmp_path, {key.fingerprint: key.public}, layout=3)
    _, manifest = _key_manifest(tmp_path, key.fingerprint)
    checksum = manifest["data"][0]["checksum"]
    blob = tmp_path / f"blobs/sha256/{checksum[:2]}/{checksum}"
    blob.write_text(key.public.replace("\n\n", "\n\n\n", 1))  # (the same key, other bytes)
    problems, imported = _load(tmp_path, 3)
    manifest_url = open_source(str(tmp_path), client=None).join(f"{KEY_DIR_V3}/{key.fingerprint}.key.manifest.json")
    assert [(kind, url) for kind, url, _ in problems] == [("key-unreadable", manifest_url)]
    assert imported == []
