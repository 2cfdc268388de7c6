"""What a previous index read is kept as (``cachedex.ingest.snapshots``), found
unguarded by a mutation hunt: the validators an HTTP mirror gave are sent back as they
were given, each as its own header."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.ingest.snapshots import OCI_LAYOUT, IndexSnapshot, PreviousState
from cachedex.ingest.sync import sync
from tests.helpers import fixture_index, make_config, write_v3_mirror

MANIFEST = "/m/v3/manifests/index/index.manifest.json"


def test_a_mirror_s_etag_is_sent_back_as_if_none_match(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The second read of an unchanged v3 mirror over HTTP asks for its index manifest
    with the ETag the server gave (If-None-Match, not If-Modified-Since), and the server's
    304 leaves the catalog's state as it was."""
    root = http_server.state.root / "m"
    write_v3_mirror(root, fixture_index(mirrors))
    etag = '"' + hashlib.sha256((root / MANIFEST.removeprefix("/m/")).read_bytes()).hexdigest()[:16] + '"'
    config = make_config(tmp_path, [{"name": "t", "url": f"{http_server.url}/m"}])
    with Catalog(config.catalog) as catalog:
        (first,) = sync(config, catalog)
        assert first.ok, first.error
        state = catalog.mirror_state("t", "root")
        assert state is not None and (state.etag, state.last_modified) == (etag, None)
        http_server.state.requests.clear()
        http_server.state.headers.clear()
        (again,) = sync(config, catalog)
        assert again.ok and not again.changed, again.error
        kept = catalog.mirror_state("t", "root")
    sent = [
        h
        for (_, path), h in zip(http_server.state.requests, http_server.state.headers, strict=True)
        if path == MANIFEST
    ]
    (headers,) = sent
    assert headers.get("If-None-Match") == etag
    assert "If-Modified-Since" not in headers
    assert kept is not None and (kept.etag, kept.checksum) == (etag, state.checksum)


def test_the_kept_state_and_a_snapshot_say_what_they_were_given() -> None:
    """PreviousState and IndexSnapshot, built as their callers build them (positionally),
    keep each value in its own field; an OCI registry's layout is not one of Spack's."""
    previous = PreviousState(3, "sum", "etag", "date")
    assert (previous.layout, previous.checksum, previous.etag, previous.last_modified) == (3, "sum", "etag", "date")
    assert PreviousState(2, "sum") == PreviousState(2, "sum", None, None)
    snapshot = IndexSnapshot(3, "sum", None, "etag", "date", "url")
    assert (snapshot.etag, snapshot.last_modified, snapshot.url) == ("etag", "date", "url")
    bare = IndexSnapshot(2, "sum", b"{}")
    assert (bare.etag, bare.last_modified, bare.url, bare.index, bare.unverified) == (None, None, "", None, "")
    assert OCI_LAYOUT not in (1, 2, 3)
