"""What a command loads before it works: every module is paid for at each start (a no-op
re-sync is mostly its imports), so a sync of folders loads neither the HTTP engine
(pycurl, ssl, urllib.request) nor GnuPG, nor rich's bars when stderr is no terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (imported at run time, pytest would collect it as a test class)
    from tests.conftest import TestServer

_SCRIPT = """
import os, sys
from cachedex.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
with open(os.environ["LOADED_MODULES"], "w") as out:
    out.write("\\n".join(sorted(sys.modules)))
sys.exit(code)
"""

#: Modules a sync of local folders has no use for, and what each costs a start.
_NOT_FOR_FOLDERS = {
    "pycurl",  # the HTTP engine's libcurl (~14 ms on a slow machine)
    "ssl",  # (~10 ms)
    "urllib.request",  # proxies from the environment (~13 ms)
    "cachedex.ingest.http",
    "cachedex.ingest.curl_handles",
    "cachedex.ingest.curl_options",
    "gnupg",  # signatures: verify and signed lockfiles only (~17 ms)
    "cachedex.reuse",
    "rich.progress",  # bars: only on a terminal (~9 ms)
    "cachedex.catalog.search",  # searches load it, with their scopes, hints and indexes
    "cachedex.catalog.hints",
    "cachedex.catalog.name_hints",
    "cachedex.catalog.search_where",
    "cachedex.catalog.scopes",
}


def _loaded_by(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    listing = tmp_path / "loaded.txt"
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "LOADED_MODULES": str(listing)},
        stdin=subprocess.DEVNULL,
    )
    return done, set(listing.read_text().split())


def test_a_sync_of_folders_loads_no_http_gnupg_bars_or_search(mirrors: Path, tmp_path: Path) -> None:
    config = tmp_path / "cachedex.yaml"
    config.write_text(
        f"tags:\n  - name: develop\n    url: {mirrors / 'v2_layout/unsigned'}\n"
        f"    stacks:\n      e4s: {mirrors / 'v2_layout/signed'}\n"
    )
    for attempt in ("first sync", "no-op re-sync"):
        done, loaded = _loaded_by(tmp_path, "--config", str(config), "sync")
        assert done.returncode == 0 and "develop" in done.stdout, (attempt, done.stderr[-800:])
        assert "cachedex.ingest.sync" in loaded and "cachedex.catalog.writer" in loaded  # the listing is the sync's
        assert not loaded & _NOT_FOR_FOLDERS, (attempt, sorted(loaded & _NOT_FOR_FOLDERS))


def test_an_http_mirror_still_loads_the_engine(http_server: TestServer, mirrors: Path, tmp_path: Path) -> None:
    """The other side of the lazy imports: a remote mirror loads them where it needs them."""
    (http_server.state.root / "develop").symlink_to(mirrors / "v2_layout/unsigned")
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"tags:\n  - name: develop\n    url: {http_server.url}/develop\n")
    done, loaded = _loaded_by(tmp_path, "--config", str(config), "sync")
    assert done.returncode == 0 and "develop" in done.stdout, done.stderr[-800:]
    assert {"pycurl", "cachedex.ingest.http"} <= loaded


def test_a_search_still_loads_the_search_modules(mirrors: Path, tmp_path: Path) -> None:
    """The other side of the search modules' lazy load: a search loads them, and answers."""
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"tags:\n  - name: develop\n    url: {mirrors / 'v2_layout/unsigned'}\n")
    done, _ = _loaded_by(tmp_path, "--config", str(config), "sync")
    assert done.returncode == 0, done.stderr[-800:]
    done, loaded = _loaded_by(tmp_path, "--config", str(config), "search", "zlib")
    assert done.returncode == 0 and "zlib" in done.stdout, done.stderr[-800:]
    assert {"cachedex.catalog.search", "cachedex.catalog.hints", "cachedex.catalog.scopes"} <= loaded
