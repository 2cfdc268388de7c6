"""A sync, a site build and the live server at once, as on a busy mirror host: no
traceback, no 5xx, no page linking to a page that is not there, a sound catalog."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from tests.helpers import integrity_check
from tests.publish.test_site_consistency import broken_links
from tests.servers import free_port
from tests.test_bench import _bench_module

pytestmark = pytest.mark.slow

RECORDS = 3000
STACKS = 4
#: Seconds between two requests of the load (some 40 a second).
PAUSE = 0.025


def _config(folder: Path, data: Path, name: str) -> Path:
    stacks = "".join(f"      stack-{n:02d}: {data / f'stack-{n:02d}'}\n" for n in range(STACKS))
    path = folder / f"{name}.yaml"
    path.write_text(f"catalog: c.sqlite\ntags:\n  - name: t\n    url: {data / 'root'}\n    stacks:\n{stacks}")
    return path


def _cachedex(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "cachedex", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


class _Load:
    """Requests to the server from a thread until stopped, one at a time, counted by status."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.statuses: Counter[int] = Counter()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        paths = ["/", "/tags/t/", "/api/tags", "/api/search?q=pkg-00001&tag=t", "/api/search?q=target%3Dzen4&tag=t"]
        deadline = time.monotonic() + 300
        n = 0
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + paths[n % len(paths)], timeout=30) as response:
                    self.statuses[response.status] += 1
            except urllib.error.HTTPError as exc:
                self.statuses[exc.code] += 1
            n += 1
            # A steady load, not a flood: as fast as it could go, client and server would
            # take a core from the syncs and builds they are meant to meet (and from the
            # tests that other workers run meanwhile).
            self.stop.wait(PAUSE)

    def finish(self) -> Counter[int]:
        self.stop.set()
        self.thread.join(60)
        return self.statuses


@pytest.mark.long
def test_sync_site_and_serve_at_once(tmp_path: Path) -> None:
    generate = _bench_module("ingest").generate
    configs = []
    for seed, name in ((7, "a"), (8, "b")):
        generate(tmp_path / name, RECORDS, STACKS, seed=seed)
        configs.append(_config(tmp_path, tmp_path / name, name))
    first = _cachedex("-c", str(configs[0]), "sync")
    first.communicate(timeout=120)
    assert first.returncode == 0
    port = free_port()
    server = _cachedex("-c", str(configs[0]), "serve", "--port", str(port))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tags", timeout=5).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "the server did not start"
                time.sleep(0.2)
        load = _Load(f"http://127.0.0.1:{port}")
        site = tmp_path / "site"
        outputs = []
        for round_ in range(4):  # syncs swap the tag between two states while the site is built
            sync = _cachedex("-c", str(configs[(round_ + 1) % 2]), "sync")
            build = _cachedex("-c", str(configs[0]), "site", str(site))
            for process in (sync, build):
                out, err = process.communicate(timeout=300)
                outputs.append((process.args, process.returncode, err))
            assert sync.returncode == 0, outputs[-2]
            assert build.returncode == 0, outputs[-1]
            assert broken_links(site) == [], f"round {round_}"
        statuses = load.finish()
    finally:
        server.terminate()
        _, server_err = server.communicate(timeout=30)
    assert not any("Traceback" in err for _, _, err in outputs), outputs
    assert "Traceback" not in server_err
    assert sum(statuses.values()) > 20 and set(statuses) <= {200}, statuses
    final = _cachedex("-c", str(configs[0]), "site", str(site))
    final.communicate(timeout=300)
    assert final.returncode == 0
    assert broken_links(site) == []
    with Catalog(tmp_path / "c.sqlite", readonly=True) as catalog:
        assert integrity_check(catalog) == "ok"
