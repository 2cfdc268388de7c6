"""``cachedex verify`` against a server that content-encodes what it was asked to send as
stored (``Accept-Encoding: identity``): a real nginx with ``gzip_static always`` and a
``.gz`` twin beside a file sends the twin, ``Content-Encoding: gzip``, whatever is asked.

Spack saves such a file as sent (neither its urllib nor its curl decodes), so its checksum
check fails on it: the problem is real, and each binary's is worded with what the server
said, its encoding, as a condition (a label alone proves none). A file merely labelled
``Content-Encoding: gzip`` but sent as stored (an S3 object uploaded with that metadata)
is fine, as Spack finds it. ``sync --sizes`` keeps no length of encoded bytes."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.demo.mirrorgen import write_mirror
from cachedex.ingest.head_fallback import content_coding
from cachedex.ingest.http_requests import Response
from cachedex.ingest.sync import sync
from cachedex.ingest.verify import MirrorVerification
from cachedex.values import tarball_path_v2
from tests.helpers import fixture_index, listed_specs, make_config, write_v2_mirror
from tests.ingest.test_verify import LISTED, SIZES, _records
from tests.ingest.test_verify_network import _blob, _cut, _found, _v2, _verify
from tests.servers import Nginx

#: nginx sending a file's ``.gz`` twin, when there is one, to every request.
GZIP_STATIC = "gzip_static always;"
#: What each problem's message names: the cause.
ENCODED = "the server labels it Content-Encoding: gzip"


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


@pytest.mark.parametrize(
    ("said", "coding"),
    [
        ("gzip", "gzip"),
        (" GZip ", "gzip"),
        ("identity", None),
        ("none", None),
        ("identity, identity", None),
        (",", None),
        ("gzip, br", "gzip, br"),
        ("\x1b]0;title\x07" + "x" * 60_000, "another encoding"),
    ],
)
def test_a_content_coding_is_one_http_names(said: str, coding: str | None) -> None:
    """``none``, repeated or empty labels were codings, and a server's text of any length
    or content went into each problem (and the catalog) as one."""
    response = Response("http://h/f", 200, [b"HTTP/1.1 200 OK", b"Content-Encoding: " + said.encode()], b"")
    assert content_coding(response) == coding


def test_sync_keeps_no_length_of_encoded_bytes(mirrors: Path, tmp_path: Path) -> None:
    """``sync --sizes`` of a v2 mirror recorded the gzipped twin's length as the binary's
    size, and a size once known is never asked again."""
    root = tmp_path / "www/m"
    write_v2_mirror(root, fixture_index(mirrors))
    with Nginx(tmp_path / "www") as plain:
        config = make_config(tmp_path, [{"name": "t", "url": f"{plain.url}/m"}])
        with Catalog(config.catalog) as catalog:
            sync(config, catalog)
            specs = listed_specs(catalog, "t")
    for spec in specs:
        path = root / tarball_path_v2(
            hash=spec.hash, name=spec.name, version=spec.version, compiler=spec.compiler,
            platform=spec.platform, os=spec.os, target=spec.target,
        )  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(5_000))
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(bytes(5_000)))
    with Nginx(tmp_path / "www", extra=GZIP_STATIC) as nginx:
        config = make_config(tmp_path, [{"name": "t", "url": f"{nginx.url}/m"}])
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog, head_sizes=True)
            assert outcome.ok, outcome.error
            assert [s.size for s in listed_specs(catalog, "t")] == [None] * len(specs)
    assert any("labelled Content-Encoding: gzip" in warning for warning in outcome.warnings), outcome.warnings
