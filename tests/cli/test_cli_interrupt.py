"""Ctrl-C: a command stops at once, says so, exits 130, and a sync's unfinished tag keeps
what it had (a real process, a real signal, a real HTTP mirror that never answers)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from cachedex.catalog import Catalog
from tests.helpers import dump, fixture_index, write_v3_mirror


def _wait_for(predicate: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_ctrl_c_stops_a_sync_and_its_tag_keeps_its_previous_content(mirrors: Path, tmp_path: Path, http_server) -> None:  # type: ignore[no-untyped-def]
    write_v3_mirror(http_server.state.root, fixture_index(mirrors))
    config = tmp_path / "cachedex.yaml"
    config.write_text(json.dumps({"catalog": "cat.sqlite", "tags": [{"name": "t", "url": http_server.url}]}))
    command = [sys.executable, "-c", "from cachedex.cli import main; main()", "--config", str(config), "sync"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert first.returncode == 0, first.stderr
    with Catalog(tmp_path / "cat.sqlite", readonly=True) as catalog:
        before = dump(catalog)
    # The mirror changes, and its index never comes: the second sync waits on it.
    write_v3_mirror(http_server.state.root, fixture_index(mirrors, drop=(next(iter(_hashes(mirrors))),)))
    manifest = "/v3/manifests/index/index.manifest.json"
    http_server.state.stall_seconds = 30
    http_server.state.faults[manifest] = "never"
    asked = http_server.state.count(manifest)
    second = _interruptible(command)
    try:
        assert _wait_for(lambda: http_server.state.count(manifest) > asked, 20)
        time.sleep(0.2)  # (inside the fetch: the request is out, no answer yet)
        sent = time.monotonic()
        second.send_signal(signal.SIGINT)
        out, err = second.communicate(timeout=15)
    finally:
        second.kill()
    assert second.returncode == 130, (out, err)
    assert time.monotonic() - sent < 5  # at once, not after the request's timeout
    assert err.strip().splitlines()[-1] == (
        "interrupted; a tag whose new listing was not written keeps its previous content; one whose listing "
        "was written keeps it, and the next sync reads the sizes it lacks"
    )
    assert "Traceback" not in err and "Aborted" not in err
    with Catalog(tmp_path / "cat.sqlite", readonly=True) as catalog:
        assert dump(catalog) == before


def _interruptible(command: list[str]) -> subprocess.Popen[str]:
    """``command`` started as a terminal's foreground job would be, its output read."""
    # (SIGINT as the default action: a shell's background job would inherit it ignored)
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _hashes(mirrors: Path) -> list[str]:
    installs = fixture_index(mirrors)["database"]["installs"]  # type: ignore[index]
    return sorted(installs)  # type: ignore[arg-type]


def test_ctrl_c_while_the_command_loads_says_interrupted(tmp_path: Path) -> None:
    """Ctrl-C in the tenth of a second of imports printed Python's traceback (the
    command's own handler was not there yet): a real SIGINT, sent as click is imported."""
    script = (
        "import builtins, os, signal\n"
        "real = builtins.__import__\n"
        "def hook(name, *args, **kwargs):\n"
        "    if name == 'click':\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = hook\n"
        "from cachedex.__main__ import run\n"
        "run()\n"
    )
    # As from a terminal: a shell's background job (a CI runner's, say) starts with SIGINT
    # ignored, which Python then leaves ignored, and the signal would do nothing.
    done = subprocess.run(
        [sys.executable, "-c", script, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert done.returncode == 130 and done.stderr == "interrupted\n", done.stderr


def test_ctrl_c_while_the_root_s_sizes_are_read_does_not_wait_for_them(
    mirrors: Path, tmp_path: Path, http_server
) -> None:  # type: ignore[no-untyped-def]
    """A Ctrl-C while the stacks were read waited for every spec manifest of the root
    still to come (the stacks' requests queue behind them in the HTTP engine, and the
    root's reads were stopped only once the stacks were done): half a minute for a big
    mirror behind a slow link. Now the root's reads stop first."""
    index = fixture_index(mirrors)
    root = http_server.state.root
    write_v3_mirror(root, index)
    write_v3_mirror(root / "e4s", index)
    manifests = sorted(root.glob("v3/manifests/spec/**/*.spec.manifest.json"))
    for manifest in manifests:  # the root's, two seconds each; the stack's come at once
        http_server.state.faults["/" + manifest.relative_to(root).as_posix()] = "slow"
    http_server.state.stall_seconds = 2.0
    config = tmp_path / "cachedex.yaml"
    config.write_text(
        json.dumps(
            {
                "catalog": "cat.sqlite",
                "http": {"concurrency": 1},
                "tags": [{"name": "t", "url": http_server.url, "stacks": ["e4s"]}],
            }
        )
    )
    command = [sys.executable, "-c", "from cachedex.cli import main; main()", "--config", str(config), "sync"]
    sync = _interruptible(command)
    try:
        # The stacks' reads under way (the root's index and signing read, its sizes asked)
        assert _wait_for(lambda: http_server.state.count("/e4s/blobs/sha256/" + index_blob(root)) >= 1, 30)
        time.sleep(0.3)
        sent = time.monotonic()
        sync.send_signal(signal.SIGINT)
        out, err = sync.communicate(timeout=60)
    finally:
        sync.kill()
    took = time.monotonic() - sent
    assert sync.returncode == 130, (out, err)
    # The one asked (up to two seconds) and the exit, not the rest, two seconds each, one at
    # a time (~10 s for them all): 4.57 s was seen on a loaded machine for a bound of 4.5 s,
    # and a wait for two more would pass a bound of two manifests' time left (found by a review).
    assert len(manifests) >= 5 and took < 6.0, took
    assert http_server.state.count(".spec.manifest.json") < 2 * len(manifests)  # (the root's, then the stack's)


def index_blob(root: Path) -> str:
    """The path, under blobs/sha256/, of the index blob of the v3 mirror at ``root``."""
    manifest = json.loads((root / "v3/manifests/index/index.manifest.json").read_text())
    checksum = manifest["data"][0]["checksum"]
    return f"{checksum[:2]}/{checksum}"
