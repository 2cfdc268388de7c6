"""``cachedex verify`` against a server that content-encodes what it was asked to send as
stored (``Accept-Encoding: identity``): a real nginx with ``gzip_static always`` and a
``.gz`` twin beside a file sends the twin, ``Content-Encoding: gzip``, whatever is asked.

Spack saves such a file as sent (neither its urllib nor its curl decodes), so its checksum
check fails on it: the problem is real, and each is worded with its cause, the server's
encoding, not as a cut binary or a corrupt file. A length given for encoded bytes is not
compared as the file's size. A file merely labelled ``Content-Encoding: gzip`` but sent
as stored (an S3 object uploaded with that metadata) is fine, as Spack finds it."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from cachedex.demo.mirrorgen import write_mirror
from cachedex.ingest.verify import MirrorVerification
from tests.ingest.test_verify import LISTED, SIZES, _records
from tests.ingest.test_verify_network import _blob, _cut, _found, _v2, _verify
from tests.servers import Nginx

#: nginx sending a file's ``.gz`` twin, when there is one, to every request.
GZIP_STATIC = "gzip_static always;"
#: What each problem's message names: the cause.
ENCODED = "the server sends it with Content-Encoding: gzip"


def _mirror(root: Path, layout: int) -> Path:
    write_mirror(root, _records(), layout=layout, sizes=SIZES, tarballs=True)
    return root


def _twin(root: Path, path: str, data: bytes | None = None) -> str:
    """A ``.gz`` twin beside ``path``: its bytes gzipped (or ``data``)."""
    file = root / path
    Path(f"{file}.gz").write_bytes(gzip.compress(file.read_bytes()) if data is None else data)
    return path


def _binary(root: Path, name: str, layout: int) -> str:
    return _blob(root, name, "tar") if layout == 3 else _v2(root, name, ".spack")


def _size(name: str) -> int:
    return SIZES[next(n for n in LISTED if n["name"] == name)["hash"]]


def _index_blob(root: Path) -> str:
    manifest = json.loads((root / "v3/manifests/index/index.manifest.json").read_text())
    checksum = manifest["data"][0]["checksum"]
    return f"blobs/sha256/{checksum[:2]}/{checksum}"


def _messages(result: MirrorVerification) -> dict[str, str]:
    return {p.url.rpartition("/")[2]: p.message for p in result.problems}


#: ... on a host refusing HEAD: sizes are asked by a GET of the first byte, which gets
#: the whole twin (gzip_static ignores Range), stopped at its headers.
GZIP_STATIC_NO_HEAD = f"location / {{ {GZIP_STATIC} if ($request_method = HEAD) {{ return 405; }} }}"


@pytest.mark.parametrize("extra", [GZIP_STATIC, GZIP_STATIC_NO_HEAD], ids=["head", "first-byte"])
def test_a_binary_sent_encoded_is_told_so(tmp_path: Path, extra: str) -> None:
    """Shallow: a binary sent gzipped (43-odd bytes for thousands) was "cut"; Spack saves
    the bytes as sent and fails on them, so it is a problem still, named by its cause; a
    binary really cut is still told as one."""
    root = _mirror(tmp_path / "m", 3)
    encoded = [_twin(root, _binary(root, name, 3)) for name in ("curl", "zlib")]
    cut = _cut(root, _binary(root, "openssl", 3))
    with Nginx(tmp_path / "m", extra=extra) as nginx:
        result = _verify(tmp_path, nginx.url)
    assert _found(result, nginx.url) == {("tarball-size", cut), *(("tarball-size", path) for path in encoded)}
    messages = _messages(result)
    for path in encoded:
        assert ENCODED in messages[path.rpartition("/")[2]] and "bytes as sent" in messages[path.rpartition("/")[2]]
    assert ENCODED not in messages[cut.rpartition("/")[2]]


@pytest.mark.parametrize("layout", [3, 2])
def test_deep_names_the_encoding_of_a_binary_not_a_corrupt_one(tmp_path: Path, layout: int) -> None:
    """--deep hashes the bytes as sent, as Spack does, and says they were sent encoded:
    gzipped smaller or larger than the file (v2, whose spec files give no size: checksum;
    v3: told by their length as sent before any is hashed)."""
    root = _mirror(tmp_path / "m", layout)
    smaller = _twin(root, _binary(root, "curl", layout))
    larger = _twin(root, _binary(root, "zlib", layout), gzip.compress(os.urandom(_size("zlib") + 4096)))
    with Nginx(tmp_path / "m", extra=GZIP_STATIC) as nginx:
        result = _verify(tmp_path, nginx.url, deep=True)
    kind = "tarball-size" if layout == 3 else "tarball-checksum"
    assert _found(result, nginx.url) == {(kind, smaller), (kind, larger)}
    for path, message in _messages(result).items():
        assert ENCODED in message and "as sent" in message, (path, message)


def test_a_file_labelled_gzip_but_sent_as_stored_is_fine(tmp_path: Path) -> None:
    """An S3 object uploaded with ``Content-Encoding: gzip`` metadata is sent as stored:
    its length and its bytes are the file's, as Spack saves it: no problem, no note."""
    root = _mirror(tmp_path / "m", 3)
    labelled = _binary(root, "curl", 3)
    extra = f"location = /{labelled} {{ add_header Content-Encoding gzip always; }}"
    with Nginx(tmp_path / "m", extra=extra) as nginx:
        shallow = _verify(tmp_path, nginx.url)
        deep = _verify(tmp_path, nginx.url, deep=True)
    for result in (shallow, deep):
        assert result.problems == () and result.binaries == 4, result.problems
        assert not any(s.startswith("binary sizes:") for s in result.skipped), result.skipped


def test_a_v3_index_blob_sent_encoded_is_not_called_corrupt(tmp_path: Path) -> None:
    """The index blob is checked as sent (as Spack's fetch checks it): its checksum
    fails, with the server's encoding as the cause, not "corrupt or replaced"."""
    root = _mirror(tmp_path / "m", 3)
    index = _twin(root, _index_blob(root))
    with Nginx(tmp_path / "m", extra=GZIP_STATIC) as nginx:
        result = _verify(tmp_path, nginx.url)
    assert _found(result, nginx.url) == {("index-checksum", index)}
    [message] = _messages(result).values()
    assert message.startswith("checksum mismatch (sha256 expected"), message
    assert ENCODED in message and "corrupt" not in message, message


def test_a_v2_index_is_read_decoded_so_its_encoding_is_no_cause(tmp_path: Path) -> None:
    """cachedex reads a v2 index.json decoded (unlike a v3 blob), so a mismatch with
    its index.json.hash is not blamed on the server's encoding."""
    root = _mirror(tmp_path / "m", 2)
    index = _twin(root, "build_cache/index.json")
    (root / "build_cache/index.json.hash").write_text("0" * 64)
    with Nginx(tmp_path / "m", extra=GZIP_STATIC) as nginx:
        result = _verify(tmp_path, nginx.url)
    assert _found(result, nginx.url) == {("index-checksum", index)}
    [message] = _messages(result).values()
    assert "Content-Encoding" not in message, message


def test_a_spec_blob_sent_encoded_is_not_called_corrupt(tmp_path: Path) -> None:
    root = _mirror(tmp_path / "m", 3)
    spec = _twin(root, _blob(root, "curl", "spec"))
    with Nginx(tmp_path / "m", extra=GZIP_STATIC) as nginx:
        result = _verify(tmp_path, nginx.url)
    assert _found(result, nginx.url) == {("spec-blob-checksum", spec)}
    [message] = _messages(result).values()
    assert ENCODED in message and "corrupt" not in message, message
