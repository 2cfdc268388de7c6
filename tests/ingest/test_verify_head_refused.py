"""``cachedex verify`` against servers that refuse HEAD (405, 501: Nexus, some CDNs,
some OCI registries): each binary's size is asked by a GET of its first byte instead,
and the result is the one a server that takes HEAD gives. Served by a real nginx (in
front of a real docker-registry for OCI); a server that ignores Range never sends a
whole binary."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from cachedex.config import HttpOptions
from cachedex.demo.mirrorgen import write_mirror
from cachedex.ingest.http import HttpClient
from cachedex.ingest.oci import OciSource
from cachedex.ingest.sources import HttpSource
from cachedex.ingest.verify_io import sizes
from tests.ingest.test_signatures import TestKey
from tests.ingest.test_verify import CURL, ZLIB, _last_layer, _records
from tests.ingest.test_verify_network import _blob, _cut, _found, _gone, _signed, _v2, _verify
from tests.registry import Registry, push_spack_cache
from tests.servers import Nginx

#: nginx answering HEAD under /refusing/ with ``{status}``, as Nexus or a CDN may.
REFUSE_HEAD = "location /refusing/ {{ if ($request_method = HEAD) {{ return {status}; }} }}"


def _tampered(root: Path, layout: int) -> set[tuple[str, str]]:
    """Removes curl's binary and cuts zlib's; the problems a verify finds."""
    if layout == 3:
        gone, cut = _blob(root, "curl", "tar"), _blob(root, "zlib", "tar")
    else:
        gone, cut = _v2(root, "curl", ".spack"), _v2(root, "zlib", ".spack")
    _gone(root, gone)
    _cut(root, cut)
    # (a v2 spec file gives no binary size: a cut binary is found by --deep alone)
    return {("tarball-missing", gone), ("tarball-size", cut)} if layout == 3 else {("tarball-missing", gone)}


@pytest.mark.parametrize("status", [405, 501])
@pytest.mark.parametrize("layout", [3, 2])
def test_a_server_refusing_head_verifies_as_one_that_takes_it(
    tmp_path: Path, key: TestKey, layout: int, status: int
) -> None:
    """Sizes right, a missing binary still missing, a cut one still the wrong size; the
    refusal is learnt once per mirror (one request at a time here: after the first
    refusal, no HEAD more) and 501 is not retried as a server error."""
    served = tmp_path / "served"
    mirror = _signed(served / "allowing", key, layout)
    shutil.copytree(mirror, served / "refusing")
    want = _tampered(served / "allowing", layout)
    assert _tampered(served / "refusing", layout) == want
    with Nginx(served, extra=REFUSE_HEAD.format(status=status), log_requests=True) as nginx:
        allowing = _verify(tmp_path, f"{nginx.url}/allowing")
        refusing = _verify(tmp_path, f"{nginx.url}/refusing", concurrency=1)
        served_requests = nginx.requests()
    assert _found(allowing, f"{nginx.url}/allowing") == want
    assert _found(refusing, f"{nginx.url}/refusing") == want
    assert refusing.binaries == allowing.binaries == (2 if layout == 3 else 3)
    heads = [r for r in served_requests if r[0] == "HEAD" and r[1].startswith("/refusing/")]
    assert [r[2] for r in heads] == [status], heads
    ranged = [r for r in served_requests if r[0] == "GET" and r[2] == 206 and r[1].startswith("/refusing/")]
    assert len(ranged) == 3 + (layout == 2), served_requests  # (v3: 2 found, 1 cut; v2: 3 found, its index hash)


#: Big enough that reading it whole shows (sparse: it takes no disk).
BIG = 256 << 20


def _bytes_sent(log: Path, path: str) -> list[tuple[int, int]]:
    """(status, body bytes sent) of each GET of ``path`` in nginx's ``combined`` log,
    once the log stops growing (nginx writes a request's line after answering it)."""
    pattern = re.compile(r'"GET (\S+) [^"]*" (\d+) (\d+)')
    last = None
    for _ in range(100):
        text = log.read_text() if log.exists() else ""
        if text and text == last:
            break
        last = text
        time.sleep(0.05)
    return [(int(m[2]), int(m[3])) for m in pattern.finditer(last or "") if m[1] == path]


@pytest.mark.parametrize("ranges", ["honoured", "ignored"])
def test_the_first_byte_get_never_downloads_a_whole_binary(tmp_path: Path, ranges: str) -> None:
    """Through verify's many-at-once sizes and through Source.size (a v2 index's hash,
    an OCI blob): a 206 of one byte, or a 200 (Range ignored) stopped at its headers."""
    root = tmp_path / "root"
    (root / "refusing").mkdir(parents=True)
    with open(root / "refusing" / "big.spack", "wb") as handle:
        handle.truncate(BIG)
    log = tmp_path / "bytes.log"
    no_ranges = "max_ranges 0;" if ranges == "ignored" else ""
    extra = (
        f"location /refusing/ {{ access_log {log} combined; {no_ranges}"
        " if ($request_method = HEAD) { return 405; } }"
    )
    with Nginx(root, extra=extra) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        source = HttpSource(f"{nginx.url}/refusing", client)
        found = dict(sizes(source, [("big", "big.spack"), ("gone", "gone.spack")]))
        assert found["big"] == BIG
        assert type(found["gone"]).__name__ == "SourceNotFound"
        assert HttpSource(f"{nginx.url}/refusing", client).size("big.spack") == BIG
        assert HttpSource(f"{nginx.url}/refusing", client).size("gone.spack") is None
        sent = _bytes_sent(log, "/refusing/big.spack")
    if ranges == "honoured":
        assert sent == [(206, 1), (206, 1)]
    else:  # (Source.size asks by its session first, stopped by libcurl's size limit, then as verify does)
        assert [status for status, _ in sent] == [200, 200, 200], sent
        assert all(count < BIG // 8 for _, count in sent), sent  # (what socket buffers took before the stop)


def test_oci_behind_a_proxy_refusing_head_verifies_as_the_registry_itself(tmp_path: Path) -> None:
    """nginx in front of a real registry answers every HEAD 405: each blob's size comes
    from a first-byte GET, and a cut layer and a deleted one are found as directly."""
    index = json.loads(write_mirror(tmp_path / "src", _records(), layout=2, spec_files=False).index_path.read_bytes())
    storage = tmp_path / "storage"
    with Registry(storage) as registry:
        pushed = push_spack_cache(registry.url, "cache/spack", index)
        layers = {data.parent.name: data for data in storage.rglob("blobs/sha256/*/*/data")}
        cut = _last_layer(registry, "cache/spack", pushed.tags[ZLIB["hash"]])
        gone = _last_layer(registry, "cache/spack", pushed.tags[CURL["hash"]])
        layers[cut].write_bytes(layers[cut].read_bytes()[:10])
        layers[gone].unlink()
        proxy = (
            "location / { if ($request_method = HEAD) { return 405; } "
            f"proxy_pass {registry.url}; proxy_set_header Host $http_host; proxy_buffering off; }}"
        )
        with Nginx(tmp_path, extra=proxy, log_requests=True) as nginx:
            direct = _verify(tmp_path, f"oci+http://{registry.host}/cache/spack")
            host = nginx.url.removeprefix("http://")
            behind = _verify(tmp_path, f"oci+http://{host}/cache/spack")
            served_requests = nginx.requests()
    base = "/v2/cache/spack"
    assert _found(direct, f"http://{registry.host}{base}") == _found(behind, f"http://{host}{base}")
    # (curl's layer is also a layer of the images that depend on it: told once, as a layer missing)
    assert _found(behind, f"http://{host}{base}") == {
        ("tarball-size", f"blobs/sha256:{cut}"),
        ("layer-missing", f"blobs/sha256:{gone}"),
    }
    assert behind.binaries == direct.binaries
    blob_heads = [r for r in served_requests if r[0] == "HEAD" and "/blobs/" in r[1]]
    assert len(blob_heads) <= 16, blob_heads  # (learnt on the first answers, not asked of every blob)
    assert any(r[0] == "GET" and "/blobs/" in r[1] and r[2] == 206 for r in served_requests), served_requests


def test_oci_source_size_falls_back_and_remembers(tmp_path: Path) -> None:
    """OciSource.size: a 405 to HEAD, then a first-byte GET (206), or, where the server
    ignores Range, a GET stopped at its headers; None for a blob missing."""
    root = tmp_path / "root"
    blobs = root / "v2" / "cache" / "spack" / "blobs"
    blobs.mkdir(parents=True)
    with open(blobs / "sha256:big", "wb") as handle:
        handle.truncate(BIG)
    log = tmp_path / "bytes.log"
    extra = (
        f"location /v2/ {{ access_log {log} combined; max_ranges 0; if ($request_method = HEAD) {{ return 405; }} }}"
    )
    with Nginx(root, extra=extra) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        source = OciSource(f"oci+http://{nginx.url.removeprefix('http://')}/cache/spack", client)
        assert source.size("blobs/sha256:big") == BIG
        assert source.size("blobs/sha256:big") == BIG
        assert source.size("blobs/sha256:gone") is None
        sent = _bytes_sent(log, "/v2/cache/spack/blobs/sha256:big")
    assert sent and all(status == 200 and count < BIG // 8 for status, count in sent), sent
    assert log.read_text().count('"HEAD ') == 1  # (refused once: the next sizes go by GET)
