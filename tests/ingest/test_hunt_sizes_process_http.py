"""The reading process (ingest/reading_process.py) asks as this one would: over HTTP
with the sync's ``http:`` settings and a private mirror's credentials; and it reports
every result."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.config import HttpOptions, RegistryAuth
from cachedex.errors import SourceNotFound
from cachedex.ingest.http import HttpClient
from cachedex.ingest.local_source import LocalSource
from cachedex.ingest.reading_process import sizes_in_process
from cachedex.ingest.sources import HttpSource
from tests.helpers import fixture_index, index_nodes, manifest_path_of, write_v3_mirror


def _items(mirrors: Path, root: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    index = fixture_index(mirrors)
    expected = write_v3_mirror(root, index)
    nodes = index_nodes(index)
    return expected, [(h, manifest_path_of(nodes, h)) for h in expected]


def test_the_process_sends_a_private_mirrors_credentials(
    mirrors: Path,
    http_server,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (it is told the variable's name; it inherits the variable, never sent the secret)
    monkeypatch.setenv("HUNT_MIRROR_TOKEN", "s3cret")
    expected, items = _items(mirrors, http_server.state.root)
    auth = RegistryAuth(host="127.0.0.1", token_env="HUNT_MIRROR_TOKEN")
    with HttpClient(HttpOptions(retries=0)) as client:
        found = dict(sizes_in_process(HttpSource(http_server.url, client, auth), items, limit=65_536))
    assert found == expected
    sent = [headers.get("Authorization") for headers in http_server.state.headers]
    assert sent == ["Bearer s3cret"] * len(items)


def test_the_process_asks_no_more_at_once_than_the_settings_say(
    mirrors: Path,
    http_server,  # type: ignore[no-untyped-def]
) -> None:
    # Each answer takes a while: asked at once, they would overlap.
    expected, items = _items(mirrors, http_server.state.root)
    for _key, path in items:
        http_server.state.faults["/" + path] = "slow"
    http_server.state.stall_seconds = 0.1
    with HttpClient(HttpOptions(concurrency=1, retries=0)) as client:
        found = dict(sizes_in_process(HttpSource(http_server.url, client), items, limit=65_536))
    assert found == expected
    # (one at a time; the server counts a request done only once its thread has
    # returned, when the next may have come: 2; the default settings' reached all 6)
    assert http_server.state.most_in_flight <= 2 < len(items)


def test_the_process_reports_results_that_are_all_problems(mirrors: Path, tmp_path: Path) -> None:
    # Its last chunk (here its only one) holds problems alone: every spec of a mirror
    # whose manifests are gone is counted missing, none is left out.
    source_root = tmp_path / "m"
    _expected, items = _items(mirrors, source_root)
    for manifest in source_root.glob("v3/manifests/spec/**/*.spec.manifest.json"):
        manifest.unlink()
    found = dict(sizes_in_process(LocalSource(source_root, source_root.as_uri()), items, limit=65_536))
    assert set(found) == {key for key, _path in items}
    assert all(isinstance(result, SourceNotFound) for result in found.values())
