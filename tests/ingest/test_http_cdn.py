"""Mirrors behind real CDNs and web servers, as they behave, served by a real nginx (or
the scripted test server): a server free to pick any content coding when a request names
none, an https mirror that redirects to plain http, and an ``index.json.hash`` that does
not match the ``index.json`` read beside it (Spack's update-index writes the index first,
then its hash; a CDN may keep one cached longer than the other)."""

from __future__ import annotations

import hashlib
import subprocess
import threading
import time
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.config import HttpOptions
from cachedex.errors import SourceError
from cachedex.ingest.http import HttpClient, Request
from cachedex.ingest.outcomes import TagOutcome
from cachedex.ingest.sync import sync
from tests.helpers import MIRRORS, fixture_index, make_config, write_v2_mirror, write_v3_mirror
from tests.servers import Nginx, make_certificates

#: A CDN that, asked for a JSON file with no Accept-Encoding ("any coding will do", RFC
#: 9110 12.5.3), sends its zstd copy (under /zst/), labelled so.
ZSTD_WHEN_ANY = (
    'location ~ \\.json$ { if ($http_accept_encoding = "") { rewrite ^(.*)$ /zst$1 last; } '
    "add_header Vary Accept-Encoding; } "
    "location ^~ /zst/ { internal; add_header Content-Encoding zstd; add_header Vary Accept-Encoding; }"
)


def _sync(folder: Path, url: str, **http: object) -> TagOutcome:
    folder.mkdir()
    config = make_config(folder, [{"name": "t", "url": url}], **http)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    return outcome


def test_a_cdn_that_would_send_zstd_is_told_identity(tmp_path: Path) -> None:
    """Small reads sent no Accept-Encoding, which lets a server pick any coding: a CDN
    sent zstd, which nothing decodes, and the sync failed with "not a valid v3 manifest:
    'utf-8' codec can't decode byte 0xb5". They now ask for ``identity``, as Python's
    http.client (hence Spack) does."""
    www = tmp_path / "www"
    write_v3_mirror(www / "v3", fixture_index(MIRRORS))
    for plain in list((www / "v3").rglob("*.json")):
        packed = www / "zst" / plain.relative_to(www)
        packed.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["zstd", "-q", "-f", str(plain), "-o", str(packed)], check=True)
    with Nginx(www, extra=ZSTD_WHEN_ANY, log_requests=True) as nginx:
        outcome = _sync(tmp_path / "c", f"{nginx.url}/v3")
        served = nginx.requests()
    assert outcome.ok and outcome.warnings == (), outcome.error or outcome.warnings
    assert outcome.specs > 0 and outcome.sizes_fetched > 0
    assert not any(path.startswith("/zst/") for _, path, _ in served), served


def test_an_https_mirror_redirected_to_plain_http_is_refused(tmp_path: Path) -> None:
    """A redirect from https to http was followed in silence: the index (and its
    checksums) of a mirror asked for over TLS came in the clear. It is refused, saying
    so; https to https (a CDN moving hosts) and http to https are followed."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "file.json").write_text("{}")
    ca, cert, key = make_certificates(tmp_path / "tls")
    with Nginx(www) as plain:
        moves = f"location /down/ {{ return 301 {plain.url}/file.json; }} location /moved/ {{ return 308 /file.json; }}"
        with Nginx(www, tls=(cert, key), extra=moves) as secure, HttpClient(HttpOptions(ca_bundle=str(ca))) as client:
            moved = client.request(Request(f"{secure.url}/moved/x", limit=100))
            with pytest.raises(SourceError) as refused:
                client.request(Request(f"{secure.url}/down/x", limit=100))
            # the handle that refused reads an http:// URL redirected to https next
            with Nginx(www, extra=f"location /up/ {{ return 301 {secure.url}/file.json; }}") as upgrading:
                upgraded = client.request(Request(f"{upgrading.url}/up/x", limit=100))
    assert (moved.status, moved.url, bytes(moved.body)) == (200, f"{secure.url}/file.json", b"{}")
    assert "refused a redirect to plain http" in str(refused.value) and f"{secure.url}/down/x" in str(refused.value)
    assert (upgraded.status, upgraded.url) == (200, f"{secure.url}/file.json")


def test_an_index_hash_read_before_update_index_wrote_it_is_read_again(http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``spack buildcache update-index`` writes index.json, then index.json.hash: a sync
    that read the hash before the second write failed with a ChecksumError though the
    mirror was whole a moment later. The hash is read again once (Spack itself ignores
    a mismatch: binary_distribution.py's DefaultIndexFetcher)."""
    index = fixture_index(MIRRORS)
    root = http_server.state.root
    write_v2_mirror(root / "v2", index)
    hash_file = root / "v2/build_cache/index.json.hash"
    fresh = hash_file.read_text()
    assert fresh == hashlib.sha256((root / "v2/build_cache/index.json").read_bytes()).hexdigest()
    hash_file.write_text("0" * 64)  # the last index's
    http_server.state.stall_seconds = 0.5
    http_server.state.faults["/v2/build_cache/index.json"] = "slow-once"

    def update_index_writes_the_hash() -> None:
        deadline = time.monotonic() + 10
        while http_server.state.count("/v2/build_cache/index.json") == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        hash_file.write_text(fresh)

    writer = threading.Thread(target=update_index_writes_the_hash)
    writer.start()
    outcome = _sync(tmp_path / "c", f"{http_server.url}/v2")
    writer.join()
    assert outcome.ok, outcome.error
    assert outcome.specs > 0 and http_server.state.count("index.json.hash") == 2


def test_an_index_hash_a_cdn_keeps_stale_says_so(tmp_path: Path) -> None:
    """A hash that stays wrong (a CDN caching it longer than index.json) still fails the
    tag, but says what a user can do: the message said only "corrupt or replaced"."""
    www = tmp_path / "www"
    write_v2_mirror(www / "v2", fixture_index(MIRRORS))
    (www / "v2/build_cache/index.json.hash").write_text("1" * 64 + "\r\n")
    with Nginx(www) as nginx:
        outcome = _sync(tmp_path / "c", f"{nginx.url}/v2")
    assert not outcome.ok
    assert "does not match index.json.hash (expected 111111111111…" in str(outcome.error)
    assert "a cache in front of the mirror (a CDN) serves one of the two stale" in str(outcome.error)
