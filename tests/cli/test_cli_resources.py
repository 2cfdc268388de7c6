"""What ran out, said in one line: memory, threads, processes, file descriptors (a
limit a CI runner or a container sets), never "a bug in cachedex" nor a traceback."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.cli import main
from cachedex.config import HttpOptions
from cachedex.errors import CatalogError
from cachedex.ingest.curl_handles import fitting_concurrency
from cachedex.ingest.http import HttpClient
from cachedex.publish.serve.server import concurrency_limit
from tests.helpers import Demo, fixture_index, write_v2_mirror


@pytest.fixture
def few_files() -> Iterator[None]:
    """This process may open 64 files (restored after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_http_requests_and_connections_fit_the_open_file_limit(few_files: None) -> None:
    """96 requests in flight under a limit of 64 files: sockets failed as "cannot
    connect", then the next tag's imports as "a bug"; a server took 32 connections with
    32 files and reset them."""
    assert fitting_concurrency(96) == 5 and fitting_concurrency(2) == 2
    with HttpClient(HttpOptions(concurrency=96)) as client:
        assert client.concurrency == 5
    assert concurrency_limit() == 1


def _config(tmp_path: Path, mirrors: Path) -> Path:
    write_v2_mirror(tmp_path / "m", fixture_index(mirrors))
    config = tmp_path / "cachedex.yaml"
    config.write_text(json.dumps({"catalog": "c.sqlite", "tags": [{"name": "t", "url": str(tmp_path / "m")}]}))
    return config


def test_memory_that_ran_out_is_said_not_called_a_bug(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cachedex.ingest import sync as sync_module

    config = _config(tmp_path, mirrors)

    def exhausted(*_: object) -> None:
        raise MemoryError

    monkeypatch.setattr(sync_module._TagSync, "_sync", exhausted)
    result = CliRunner().invoke(main, ["--config", str(config), "sync"])
    assert result.exit_code == 1 and "error: t: out of memory" in result.stderr and "bug" not in result.stderr
    monkeypatch.undo()
    assert CliRunner().invoke(main, ["--config", str(config), "sync"]).exit_code == 0
    monkeypatch.setattr("cachedex.catalog.Catalog.tag_stats", exhausted)
    result = CliRunner().invoke(main, ["--config", str(config), "stats"])
    assert (
        result.exit_code == 1 and result.stderr.startswith("error: out of memory") and "Traceback" not in result.output
    )


def test_a_failed_tag_is_said_when_the_catalog_cannot_be_read_after_it(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check for tags the config no longer names reads the catalog after the syncs:
    its error (a catalog folder made read-only meanwhile) replaced the tags' own."""
    config = _config(tmp_path, mirrors)
    (tmp_path / "m" / "build_cache" / "index.json").write_text("{")

    def unreadable(*_: object, **__: object) -> None:
        raise CatalogError("c.sqlite: cannot read the catalog (unable to open database file)")

    monkeypatch.setattr("cachedex.cli.warn_unconfigured", unreadable)
    result = CliRunner().invoke(main, ["--config", str(config), "sync"])
    assert result.exit_code == 1 and "error: t: " in result.stderr and "1 of 1 tags failed" in result.stderr


def test_a_small_lockfile_is_read_under_a_memory_limit(demo_run: Demo) -> None:
    """Its read reserved the whole 256 MiB limit at once: a memory limit refused it."""
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (220 * 2**20, resource.RLIM_INFINITY))\n"
        "from cachedex.ingest.lockfile import read_lockfile\n"
        "print(len(read_lockfile(sys.argv[1]).specs))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(demo_run.folder / "spack.lock")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and int(done.stdout) > 10, done.stderr[-500:]
