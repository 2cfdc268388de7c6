"""A reading process that dies mid-stream (ingest/reading_process.py): what it reported
is kept, the rest is read here, and nothing (a size, a missing manifest) comes twice."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

from cachedex.config import HttpOptions
from cachedex.errors import SourceNotFound
from cachedex.ingest.http import HttpClient
from cachedex.ingest.reading_process import sizes_in_process
from cachedex.ingest.sources import HttpSource
from tests.helpers import fixture_index, index_nodes, manifest_path_of, write_v3_mirror


def _reading_children() -> list[int]:
    """The pids of this process's reading processes."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # (ended meanwhile)
            continue
        if int(stat.rsplit(b")", 1)[1].split()[1]) == os.getpid() and b"reading_process" in cmdline:
            found.append(int(entry.name))
    return found


def test_a_missing_manifest_reported_before_the_process_died_is_not_read_again(
    mirrors: Path,
    http_server,  # type: ignore[no-untyped-def]
) -> None:
    index = fixture_index(mirrors)
    expected = write_v3_mirror(http_server.state.root, index)
    nodes = index_nodes(index)
    items = [(h, manifest_path_of(nodes, h)) for h in expected]
    gone = ("m" * 32, "v3/manifests/spec/gone/gone-1.0-" + "m" * 32 + ".spec.manifest.json")
    # Asked one at a time, in this order: the 404 and a first size come at once; the
    # first slow answer comes after the process's send interval (0.5 s), so that it sends
    # what it has; it then waits on the second slow answer, when it is killed.
    first, *rest = items
    (*quick, slow_1, slow_2) = rest
    ordered = [gone, first, *quick, slow_1, slow_2]
    for _key, path in (slow_1, slow_2):
        http_server.state.faults["/" + path] = "slow"
    http_server.state.stall_seconds = 0.8
    with HttpClient(HttpOptions(concurrency=1, retries=0)) as client:
        results = sizes_in_process(HttpSource(http_server.url, client), ordered, limit=65_536)
        got = [next(results)]  # (a chunk has come: the process is alive, waiting on slow_2)
        deadline = time.monotonic() + 10
        while http_server.state.count(slow_2[1]) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        (child,) = _reading_children()
        os.kill(child, signal.SIGKILL)
        got += list(results)
    counted = Counter(key for key, _result in got)
    assert counted == Counter(key for key, _path in ordered)  # each once
    found = dict(got)
    assert isinstance(found[gone[0]], SourceNotFound)
    assert {h: found[h] for h in expected} == expected
    # The 404 was asked by the process alone; the one it never answered, here too.
    assert http_server.state.count(gone[1]) == 1
    assert http_server.state.count(slow_2[1]) == 2


def test_a_read_let_go_early_ends_the_reading_process_at_once(
    mirrors: Path,
    http_server,  # type: ignore[no-untyped-def]
) -> None:
    # A cancelled sync lets the sizes go: the process, waiting on a mirror that does
    # not answer, is killed, not waited for until its next answer.
    index = fixture_index(mirrors)
    expected = write_v3_mirror(http_server.state.root, index)
    nodes = index_nodes(index)
    first, *others = [(h, manifest_path_of(nodes, h)) for h in expected]
    # The second answer is sent a byte at a time over ~0.8 s: past the process's send
    # interval (0.5 s), it sends the first two results; the others are never answered.
    dripped = others[0][1]
    http_server.state.faults["/" + dripped] = "drip"
    http_server.state.drip_seconds = 0.8 / (http_server.state.root / dripped).stat().st_size
    for _key, path in others[1:]:
        http_server.state.faults["/" + path] = "never"
    http_server.state.stall_seconds = 30
    held = others[-1][1]
    with HttpClient(HttpOptions(concurrency=1, retries=0)) as client:
        results = sizes_in_process(HttpSource(http_server.url, client), [first, *others], limit=65_536)
        assert next(results)[0] == first[0]
        (child,) = _reading_children()
        began = time.monotonic()
        results.close()
        took = time.monotonic() - began
    assert took < 5 and http_server.state.count(held) == 0
    assert child not in _reading_children()
