"""Mutation hunt of ``ingest/layouts.py``: how a mirror's index is found, re-used and checked."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cachedex.config import HttpOptions, Limits
from cachedex.errors import ChecksumError, IndexFormatError, SourceError, SourceNotFound
from cachedex.ingest.http import HttpClient
from cachedex.ingest.layouts import find_views, read_index
from cachedex.ingest.local_source import LocalSource
from cachedex.ingest.snapshots import IndexSnapshot, PreviousState
from cachedex.ingest.sources import HttpSource, open_source
from tests.helpers import write_v3_view

if TYPE_CHECKING:  # (imported at run time, pytest would collect it as a test class)
    from tests.conftest import TestServer

LIMITS = Limits()
EMPTY_V8 = b'{"database": {"version": "8", "installs": {}}}'
DB_V8 = "application/vnd.spack.db.v8+json"


def _local(path: Path) -> LocalSource:
    source = open_source(str(path), client=None)
    assert isinstance(source, LocalSource)
    return source


def _read(source: LocalSource | HttpSource, previous: PreviousState | None = None, **kw: object) -> IndexSnapshot:
    return read_index(source, previous, limits=LIMITS, **kw)  # type: ignore[arg-type]


@pytest.fixture
def client() -> Iterator[HttpClient]:
    with HttpClient(HttpOptions(retries=0, timeout=5)) as http:
        yield http


def _v3(root: Path, data: bytes = EMPTY_V8, media: str = DB_V8, compression: str = "none") -> str:
    """A v3 mirror at ``root`` whose one index blob is ``data``; its sha256."""
    digest = hashlib.sha256(data).hexdigest()
    blob = root / "blobs/sha256" / digest[:2] / digest
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    entry = {"contentLength": len(data), "mediaType": media, "compression": compression,
             "checksumAlgorithm": "sha256", "checksum": digest}  # fmt: skip
    manifest = root / "v3/manifests/index/index.manifest.json"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"version": 3, "data": [entry]}))
    return digest


def _v2(root: Path, data: bytes = EMPTY_V8, *, hash_file: bool = True) -> str:
    """A v2 mirror at ``root`` whose index.json is ``data``; its sha256."""
    (root / "build_cache").mkdir(parents=True, exist_ok=True)
    (root / "build_cache/index.json").write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    if hash_file:
        (root / "build_cache/index.json.hash").write_text(digest)
    return digest


# -- v3 -------------------------------------------------------------------------------------


def test_a_v3_index_read_last_time_as_another_layout_is_read_again(tmp_path: Path) -> None:
    """A mirror moved from v2 to v3 with the very same index bytes has a new layout (its
    binaries live elsewhere): the same checksum under another layout is no reason to skip it."""
    digest = _v3(tmp_path)
    snapshot = _read(_local(tmp_path), PreviousState(layout=2, checksum=digest))
    assert (snapshot.layout, snapshot.checksum, snapshot.data) == (3, digest, EMPTY_V8)


def test_an_unchanged_v3_index_is_not_read_again(tmp_path: Path) -> None:
    """The manifest's checksum equal to last time's: no blob is read, no data returned."""
    digest = _v3(tmp_path)
    snapshot = _read(_local(tmp_path), PreviousState(layout=3, checksum=digest))
    assert (snapshot.layout, snapshot.checksum, snapshot.data, snapshot.url) == (3, digest, None, "")


def test_an_unchanged_v3_manifest_is_asked_with_its_etag(
    tmp_path: Path, http_server: TestServer, client: HttpClient
) -> None:
    """The manifest is asked for with last time's ETag; the server's 304 ends the read."""
    digest = _v3(http_server.state.root)
    first = _read(HttpSource(http_server.url, client))
    assert first.etag and first.data == EMPTY_V8
    http_server.state.requests.clear()
    http_server.state.headers.clear()
    again = _read(HttpSource(http_server.url, client), PreviousState(layout=3, checksum=digest, etag=first.etag))
    assert (again.layout, again.checksum, again.data, again.etag) == (3, digest, None, first.etag)
    assert http_server.state.requests == [("GET", "/v3/manifests/index/index.manifest.json")]
    assert http_server.state.headers[0].get("If-None-Match") == first.etag


def test_a_v3_index_blob_that_is_missing_is_an_error_of_the_mirror(tmp_path: Path) -> None:
    """A manifest naming a blob that is not there is a broken v3 mirror, not a mirror
    without an index (which would go on to look for a v2 one)."""
    digest = _v3(tmp_path)
    (tmp_path / "blobs/sha256" / digest[:2] / digest).unlink()
    with pytest.raises(SourceError, match="index blob listed in .*index.manifest.json is missing") as caught:
        _read(_local(tmp_path))
    assert not isinstance(caught.value, SourceNotFound)


def test_a_v3_index_read_decoded_is_still_checked_against_its_checksum(tmp_path: Path) -> None:
    """Decoding while hashing must not skip the check: a blob changed after its manifest
    was written is refused, decoded or not."""
    digest = _v3(tmp_path)
    blob = tmp_path / "blobs/sha256" / digest[:2] / digest
    blob.write_bytes(EMPTY_V8.replace(b"8", b"9"))  # the same length, other bytes
    for decoded in (False, True):
        with pytest.raises(ChecksumError):
            _read(_local(tmp_path), decoded=decoded)


def test_a_blob_compressed_in_a_way_not_read_is_named_whatever_the_compression(tmp_path: Path) -> None:
    """A compression cachedex does not read is named, zstd as much as bzip2 (the bytes
    are no JSON): rather than a JSON error about bytes that were never meant as JSON."""
    data = b"\x28\xb5\x2f\xfd" + b"\x00" * 12  # zstd's magic number
    _v3(tmp_path, data, compression="zstd")
    with pytest.raises(IndexFormatError, match="compressed as 'zstd', which cachedex does not read"):
        _read(_local(tmp_path))


def test_a_manifest_offering_only_database_versions_not_read_names_them(tmp_path: Path) -> None:
    """An index offered only in a Database version this cachedex does not read says so
    (upgrade), rather than that there is no index blob at all."""
    _v3(tmp_path, media="application/vnd.spack.db.v99+json")
    with pytest.raises(IndexFormatError, match=re.escape("index is only offered as application/vnd.spack.db.v99+json")):
        _read(_local(tmp_path))


@pytest.mark.parametrize("media", ["application/vnd.spack.db.v8+json+gzip", "x-application/vnd.spack.db.v8+json"])
def test_a_media_type_that_only_holds_the_index_s_is_not_the_index(tmp_path: Path, media: str) -> None:
    """Only the whole media type names an index blob (a longer one is another kind of file)."""
    _v3(tmp_path, media=media)
    with pytest.raises(IndexFormatError, match="manifest lists no index blob"):
        _read(_local(tmp_path))


# -- v2 -------------------------------------------------------------------------------------


def test_a_v2_index_read_last_time_as_another_layout_is_read_again(tmp_path: Path) -> None:
    """The same checksum remembered of a v3 read does not make a v2 index unchanged."""
    for hash_file in (True, False):
        root = tmp_path / str(hash_file)
        digest = _v2(root, hash_file=hash_file)
        snapshot = _read(_local(root), PreviousState(layout=3, checksum=digest))
        assert (snapshot.layout, snapshot.data) == (2, EMPTY_V8)


def test_an_unchanged_v2_index_without_hash_file_gives_no_data(tmp_path: Path) -> None:
    """Without index.json.hash the index is read, and found unchanged by its own checksum."""
    digest = _v2(tmp_path, hash_file=False)
    snapshot = _read(_local(tmp_path), PreviousState(layout=2, checksum=digest))
    assert (snapshot.layout, snapshot.checksum, snapshot.data) == (2, digest, None)
    assert snapshot.unverified == "has no index.json.hash beside it"


def test_an_unchanged_v2_index_is_not_downloaded(http_server: TestServer, client: HttpClient) -> None:
    """Its index.json.hash equal to last time's checksum: index.json is not asked for."""
    digest = _v2(http_server.state.root)
    snapshot = _read(HttpSource(http_server.url, client), PreviousState(layout=2, checksum=digest))
    assert (snapshot.checksum, snapshot.data) == (digest, None)
    assert http_server.state.count("/build_cache/index.json") == 0


def test_a_hash_file_read_stale_once_is_read_again_before_failing(http_server: TestServer, client: HttpClient) -> None:
    """A hash file read between 'update-index' writing index.json and its hash (or a
    stale cached copy) is read a second time; the index then matches and is taken."""
    root = http_server.state.root
    digest = _v2(root)
    (root / "old.hash").write_text(hashlib.sha256(b"the index before").hexdigest())
    http_server.state.faults["/build_cache/index.json.hash"] = f"redirect:{http_server.url}/old.hash-once"
    snapshot = _read(HttpSource(http_server.url, client))
    assert (snapshot.checksum, snapshot.data, snapshot.unverified) == (digest, EMPTY_V8, "")
    assert http_server.state.count("/build_cache/index.json.hash") == 2


def test_a_hash_file_the_server_fails_to_give_is_no_check_not_a_failure(
    http_server: TestServer, client: HttpClient
) -> None:
    """Spack: "failure to fetch index.json.hash is not fatal". A 500 for it leaves the
    index read unverified, with the reason."""
    digest = _v2(http_server.state.root)
    http_server.state.faults["/build_cache/index.json.hash"] = "500"
    snapshot = _read(HttpSource(http_server.url, client))
    assert (snapshot.checksum, snapshot.data) == (digest, EMPTY_V8)
    assert snapshot.unverified.startswith("has an index.json.hash that cannot be read (")


def test_views_of_a_mirror_that_cannot_be_listed_are_unknown(http_server: TestServer, client: HttpClient) -> None:
    """Over HTTP no folder can be listed: the views are unknown (None), not "none" ([])."""
    _v3(http_server.state.root)
    assert find_views(HttpSource(http_server.url, client)) is None


def test_a_view_is_read_from_its_own_manifest(tmp_path: Path) -> None:
    """With ``view``, the view's index is read, not the mirror's; a view that is not
    there is named in the error."""
    _v3(tmp_path)
    view_index: dict[str, object] = {"database": {"version": "8", "installs": {}}}
    write_v3_view(tmp_path, "dev", view_index)
    view_data = json.dumps(view_index, separators=(",", ":")).encode()
    digest = hashlib.sha256(view_data).hexdigest()
    snapshot = _read(_local(tmp_path), view="dev")
    assert (snapshot.checksum, snapshot.data) == (digest, view_data)
    with pytest.raises(SourceNotFound, match="no view 'nope' in this mirror"):
        _read(_local(tmp_path), view="nope")


def test_a_mirror_answering_403_for_both_indexes_is_said_to_maybe_be_private(
    http_server: TestServer, client: HttpClient
) -> None:
    """S3 answers 403 for a key it lacks when read without credentials: the error says
    so, and that a private mirror needs credentials."""
    for path in ("/v3/manifests/index/index.manifest.json", "/build_cache/index.json"):
        http_server.state.faults[path] = "403-s3"
    with pytest.raises(SourceNotFound, match="a private mirror needs credentials"):
        _read(HttpSource(http_server.url, client))


def test_a_media_type_with_a_huge_database_version_is_a_format_error(tmp_path: Path) -> None:
    """A hostile manifest whose media type holds a 5000-digit Database version: a format
    error naming the manifest, not Python's ValueError (int's 4300-digit limit), which
    escaped the sync's handling of a mirror's problems."""
    _v3(tmp_path, media="application/vnd.spack.db.v" + "9" * 5000 + "+json")
    with pytest.raises(IndexFormatError):
        _read(_local(tmp_path))


def test_a_media_type_with_a_non_ascii_digit_is_no_index_blob(tmp_path: Path) -> None:
    """Spack writes ASCII digits; decode_index refuses a Database version "\\u0668", and
    the manifest's media type is read the same way (it was read as Database v8)."""
    _v3(tmp_path, media="application/vnd.spack.db.v\u0668+json")
    with pytest.raises(IndexFormatError, match="manifest lists no index blob"):
        _read(_local(tmp_path))
