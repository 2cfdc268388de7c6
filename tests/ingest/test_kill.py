"""kill -9 during a sync, at many points: the catalog stays sound, and a tag is either
absent or exactly one of its complete states, never half of one."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from tests.helpers import integrity_check, listed_specs
from tests.test_bench import _bench_module

pytestmark = pytest.mark.slow

RECORDS = 6_000
STACKS = 4


def _config(folder: Path, data: Path, catalog: str) -> Path:
    stacks = "".join(f"      stack-{n:02d}: {data / f'stack-{n:02d}'}\n" for n in range(STACKS))
    path = folder / f"{catalog}.yaml"
    path.write_text(f"catalog: {catalog}.sqlite\ntags:\n  - name: t\n    url: {data / 'root'}\n    stacks:\n{stacks}")
    return path


def _sync(config: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "cachedex", "-c", str(config), "sync"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _state(path: Path) -> tuple[str, object]:
    """(integrity, what the catalog says of tag t: None when absent)."""
    if not path.exists():  # killed before the first sync created the catalog (a slow machine)
        return "ok", None
    with contextlib.closing(sqlite3.connect(path)) as db:  # created, killed before its schema was committed
        if db.execute("PRAGMA user_version").fetchone()[0] == 0:
            assert db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0] == 0
            return "ok", None
    with Catalog(path, readonly=True) as catalog:
        sound = integrity_check(catalog)
        fk = catalog._db.execute("PRAGMA foreign_key_check").fetchall()
        assert fk == [], fk
        if "t" not in catalog.tag_names():
            return sound, None
        (stats,) = catalog.tag_stats(["t"])
        listing = sorted((s.hash, s.stacks) for s in listed_specs(catalog, "t"))
        # Totals must agree with the membership they summarise.
        assert stats.specs == len(listing)
        return sound, (stats.records, stats.specs, stats.packages, stats.stacks, listing)


def _timed_sync(folder: Path, data: Path, start: Path) -> float:
    """Seconds a sync of ``data`` takes, unkilled, from a copy of the catalog ``start``
    (a fresh catalog if there is none yet)."""
    for leftover in folder.glob("timing.sqlite*"):
        leftover.unlink()
    if start.exists():
        with (
            contextlib.closing(sqlite3.connect(start)) as source,
            contextlib.closing(sqlite3.connect(folder / "timing.sqlite")) as copy,
        ):
            source.backup(copy)
    config = _config(folder, data, "timing")
    started = time.monotonic()
    assert _sync(config).wait(120) == 0
    return time.monotonic() - started


@pytest.mark.long
def test_kill_9_during_syncs_never_leaves_a_half_tag(tmp_path: Path) -> None:
    generate = _bench_module("ingest").generate
    a, b = tmp_path / "a", tmp_path / "b"
    generate(a, RECORDS, STACKS, seed=7)
    generate(b, RECORDS, STACKS, seed=8)
    states = {}
    for name, data in (("a", a), ("b", b)):  # each complete state, synced without a fault
        reference = _config(tmp_path, data, f"ref-{name}")
        assert _sync(reference).wait(120) == 0
        states[name] = _state(tmp_path / f"ref-{name}.sqlite")[1]
    assert states["a"] != states["b"]

    kills = 0
    for phase, data, allowed in (("first sync", a, (None, states["a"])), ("a to b", b, (states["a"], states["b"]))):
        config = _config(tmp_path, data, "c")
        # Kill points spread over this phase's run, timed just before on a copy: a run
        # that ends before its kill point kills nothing (a faster moment of the machine).
        # No fixed offset: on a quick machine a whole run takes well under a second.
        seconds = _timed_sync(tmp_path, data, tmp_path / "c.sqlite")
        for step in range(7):
            delay = (step + 0.5) * 0.9 * seconds / 7
            process = _sync(config)
            time.sleep(delay)
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
                kills += 1
            process.wait(60)
            sound, state = _state(tmp_path / "c.sqlite")
            assert sound == "ok", (phase, step)
            assert state in allowed, (phase, step, "a half-written tag")
        assert _sync(config).wait(120) == 0  # and the next sync completes the job
        assert _state(tmp_path / "c.sqlite")[1] == allowed[1]
    assert kills >= 8
