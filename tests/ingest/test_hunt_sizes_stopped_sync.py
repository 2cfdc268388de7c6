"""A sync stopped during its size phase (ingest/sizes.py, fetch_sizes) keeps every size
it fetched: they are committed a batch at a time, not at the phase's end."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import cachedex
from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.values import tarball_path_v2
from tests.helpers import fixture_index, listed_specs, make_config, write_v2_mirror

#: A sync --sizes in a process of its own, one size a batch (the default's 10,000 would
#: need a mirror that big; the time-based commit, 3 s, a slow test).
SCRIPT = """
import sys
from cachedex.ingest import sizes
from cachedex.catalog import Catalog
from cachedex.config import parse_config
from cachedex.ingest.sync import sync

sizes.BATCH = 1
url, base = sys.argv[1], sys.argv[2]
document = {"catalog": "cat.sqlite", "tags": [{"name": "t", "url": url}], "http": {"retries": 0}}
config = parse_config(document, base=__import__("pathlib").Path(base))
with Catalog(config.catalog) as catalog:
    sync(config, catalog, head_sizes=True)
"""


def test_a_sync_killed_while_it_asks_for_sizes_keeps_those_it_had(
    mirrors: Path,
    tmp_path: Path,
    http_server,  # type: ignore[no-untyped-def]
) -> None:
    root = http_server.state.root / "m"
    write_v2_mirror(root, fixture_index(mirrors))
    url = f"{http_server.url}/m"
    config = make_config(tmp_path, [{"name": "t", "url": url}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        specs = listed_specs(catalog, "t")
    held, *answered = specs
    for length, s in enumerate(specs, start=100):
        path = tarball_path_v2(
            hash=s.hash, name=s.name, version=s.version, compiler=s.compiler,
            platform=s.platform, os=s.os, target=s.target,
        )  # fmt: skip
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"x" * length)
        if s is held:  # (its HEAD is never answered: the sync waits on it, when it is killed)
            http_server.state.faults[f"/m/{path}"] = "never"
    http_server.state.stall_seconds = 30
    script = tmp_path / "sized.py"
    script.write_text(SCRIPT)
    package_root = str(Path(cachedex.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    expected = {s.hash: 100 + n for n, s in enumerate(specs) if s is not held}
    process = subprocess.Popen([sys.executable, str(script), url, str(tmp_path)], env=env)
    try:
        # Committed while the sync still waits on the held HEAD: another connection sees
        # them (a loaded machine answers the others in its own time, within the bound).
        deadline = time.monotonic() + 30
        while (recorded := _recorded(config.catalog)) != expected or not http_server.state.count(
            held.hash + ".spack", "HEAD"
        ):
            assert time.monotonic() < deadline and process.poll() is None, recorded
            time.sleep(0.05)
        assert process.poll() is None  # (still waiting: what it had is kept before it ends)
    finally:
        process.kill()
        process.wait()
    assert _recorded(config.catalog) == expected
    assert len(answered) >= 3


def _recorded(catalog: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(catalog)) as db:
        return dict(db.execute("SELECT hash, size FROM specs WHERE size IS NOT NULL").fetchall())
