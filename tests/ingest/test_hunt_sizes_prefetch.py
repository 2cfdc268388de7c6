"""The sizes a sync of a changed v3 mirror reads before it writes the listing
(ingest/sizes.py, Prefetch): each result is kept, a problem as much as a size; the
write waits for no size that will not come."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cachedex._perf import can_fork
from cachedex.config import HttpOptions, Limits
from cachedex.errors import SourceNotFound
from cachedex.ingest import sizes
from cachedex.ingest.http import HttpClient
from cachedex.ingest.sources import HttpSource
from cachedex.progress import SILENT
from tests.helpers import fixture_index, name_version_in, write_v3_mirror
from tests.ingest.test_hunt_sizes_forked_dies import held_reader_prefetch
from tests.servers import Nginx


def test_a_prefetch_whose_last_results_are_all_missing_keeps_them(mirrors: Path, tmp_path: Path) -> None:
    # Read in a thread of this process (a few manifests), in chunks: the last chunk, all
    # problems (here every manifest is missing), is kept as any other. Lost, the size
    # phase after the write asked each manifest again.
    index = fixture_index(mirrors)
    expected = write_v3_mirror(tmp_path / "m", index)
    for manifest in (tmp_path / "m").glob("v3/manifests/spec/**/*.spec.manifest.json"):
        manifest.unlink()
    with Nginx(tmp_path) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        prefetch = sizes.Prefetch(
            HttpSource(f"{nginx.url}/m", client),
            list(expected),
            name_version_in(index),
            limits=Limits(),
            line=SILENT.task("sizes"),
        )
        assert not prefetch.elsewhere
        results = prefetch.wait()
    assert set(results) == set(expected)
    assert all(isinstance(result, SourceNotFound) for result in results.values())
    assert prefetch.sizes == {}


@pytest.mark.skipif(not can_fork(), reason="a folder's manifests are read by a forked process on Linux only")
def test_a_batch_does_not_wait_for_a_spec_the_prefetch_was_not_given(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (a batch of the listing's write may hold specs whose sizes the prefetch does not
    # read: none comes, so none is waited for; the reader here is held, reporting nothing)
    prefetch = held_reader_prefetch(mirrors, tmp_path, monkeypatch)
    try:
        waiting = threading.Thread(target=prefetch.wait_for, args=(["n" * 32],), daemon=True)
        waiting.start()
        waiting.join(timeout=5)
        assert not waiting.is_alive() and prefetch.finished is None
    finally:
        prefetch.cancel()
