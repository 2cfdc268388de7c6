"""A prefetch over HTTP whose read fails as a whole midway (ingest/sizes.py, Prefetch):
the sizes read before stay, and every other hash has its problem (none is lost)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.config import HttpOptions, Limits
from cachedex.errors import CachedexError
from cachedex.ingest.http import HttpClient
from cachedex.ingest.sizes import Prefetch, fetch_sizes
from cachedex.ingest.sources import HttpSource
from cachedex.ingest.sync import sync
from cachedex.progress import SILENT
from tests.helpers import fixture_index, index_nodes, make_config, manifest_path_of, name_version_in, write_v3_mirror


def test_a_read_that_fails_midway_keeps_the_sizes_read_before_it(
    mirrors: Path,
    http_server,  # type: ignore[no-untyped-def]
) -> None:
    index = fixture_index(mirrors)
    expected = write_v3_mirror(http_server.state.root, index)
    nodes = index_nodes(index)
    *quick, slow_1, slow_2 = list(expected)
    # Results come to the prefetch in chunks (of 64 in this process): enough missing
    # manifests, answered at once, make a first chunk come before the read fails.
    ghosts = [f"{n:032d}" for n in range(64)]
    names = {h: (nodes[h]["name"], nodes[h]["version"]) for h in expected} | dict.fromkeys(ghosts, ("ghost", "1.0"))
    for h in (slow_1, slow_2):
        path = manifest_path_of(nodes, h)
        http_server.state.faults["/" + path] = "slow"
    http_server.state.stall_seconds = 5
    # (the client closed under the read ends it as the HTTP engine's failure would)
    client = HttpClient(HttpOptions(concurrency=8, retries=0))
    try:
        prefetch = _prefetch(http_server.url, client, [*expected, *ghosts], names.get)
        deadline = time.monotonic() + 4
        while not prefetch.sizes:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        client.close()
    results = prefetch.wait()
    assert set(results) == {*expected, *ghosts}  # each has its result
    assert prefetch.sizes and {h: results[h] for h in prefetch.sizes} == {h: expected[h] for h in prefetch.sizes}
    assert isinstance(results[slow_1], CachedexError) and isinstance(results[slow_2], CachedexError)
    assert "closed" in str(results[slow_1])


def test_a_spec_refused_a_path_is_not_also_failed_when_the_read_fails(
    mirrors: Path,
    tmp_path: Path,
    http_server,  # type: ignore[no-untyped-def]
) -> None:
    """A version that cannot be part of a path is refused (counted once, as refused): the
    read's failure gave it its problem too, and the size phase said "7 sizes unknown" of
    6 specs."""
    index = fixture_index(mirrors)
    installs = index["database"]["installs"]  # type: ignore[index]
    refused = next(iter(installs))
    installs[refused]["spec"]["version"] = "1..2"
    expected = write_v3_mirror(http_server.state.root, index)
    config = make_config(tmp_path, [{"name": "t", "url": http_server.url}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        with catalog._db:
            catalog._db.execute("UPDATE specs SET size = NULL")
        for manifest in http_server.state.root.glob("v3/manifests/spec/**/*.spec.manifest.json"):
            http_server.state.faults["/" + manifest.relative_to(http_server.state.root).as_posix()] = "slow"
        http_server.state.stall_seconds = 5
        client = HttpClient(HttpOptions(concurrency=8, retries=0))
        try:
            prefetch = _prefetch(http_server.url, client, list(expected), name_version_in(index))
            deadline = time.monotonic() + 4
            while not prefetch.refused:  # (the paths are made as the reads go)
                assert time.monotonic() < deadline
                time.sleep(0.02)
        finally:
            client.close()
        assert refused not in prefetch.wait()
        http_server.state.faults.clear()
        with HttpClient(HttpOptions()) as again:
            report = fetch_sizes(
                catalog,
                HttpSource(http_server.url, again),
                catalog.size_keys(expected),
                layout=3,
                limits=Limits(),
                line=SILENT.task("sizes"),
                prefetched=prefetch,
            )
    assert report.failed == len(expected)  # each once: the others' read failed, one refused


def test_sizes_read_before_a_whole_read_fails_are_kept_though_no_chunk_was_full(
    mirrors: Path,
    http_server,  # type: ignore[no-untyped-def]
) -> None:
    """Results wait in chunks of 64 over HTTP: those of a chunk not yet full when the read
    failed were lost, their sizes read and then said unknown."""
    index = fixture_index(mirrors)
    expected = write_v3_mirror(http_server.state.root, index)
    nodes = index_nodes(index)
    quick, *slow = list(expected)
    for h in slow:
        path = manifest_path_of(nodes, h)
        http_server.state.faults["/" + path] = "slow"
    http_server.state.stall_seconds = 5
    client = HttpClient(HttpOptions(concurrency=8, retries=0))
    quick_path = f"{nodes[quick]['name']}-{nodes[quick]['version']}-{quick}.spec.manifest.json"
    try:
        prefetch = _prefetch(http_server.url, client, list(expected), name_version_in(index))
        deadline = time.monotonic() + 4
        while not http_server.state.count(quick_path, "GET"):  # (answered at once)
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(1.0)  # (its answer read, on a loaded machine too: the others wait 5 s)
    finally:
        client.close()
    results = prefetch.wait()
    assert results[quick] == expected[quick] and prefetch.sizes == {quick: expected[quick]}
    assert all(isinstance(results[h], CachedexError) for h in slow)


def _prefetch(
    url: str, client: HttpClient, hashes: list[str], names: Callable[[str], tuple[str, str] | None]
) -> Prefetch:
    """The sizes of ``hashes``' manifests, read over HTTP as a sync reads them first."""
    return Prefetch(HttpSource(url, client), hashes, names, limits=Limits(), line=SILENT.task("sizes"))
