"""Shared fixtures: the real Spack test mirrors, a real HTTP server, small and demo catalogs.

The fixtures under ``../shared/fixtures/`` are read in place, never copied into the
repository. The HTTP server listens on 127.0.0.1 only, serves a folder, and can be
told to misbehave per path (404, 500, stall, close mid-body) to test error handling.
Helpers that tests import live in ``tests/helpers.py``.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import settings

from cachedex.catalog import Catalog
from tests.helpers import MIRRORS, Demo, one_worker_at_a_time, record, write_tag

# Property tests run the same examples on every run, so a CI verdict can be reproduced;
# HYPOTHESIS_PROFILE=explore draws new ones on each run to hunt for new failures. No
# deadline: four workers keep two cores busy, and an example of ~1 ms once took 546 ms
# (a clean clone's run failed on it); what they check is the answer, not its time.
settings.register_profile("repeatable", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

# pytest-xdist's workers (``-n``) start with COLUMNS=80, which a plain pytest run has not:
# the CLI reads its output width once, at import, and tests that ask for another width
# (``env={"COLUMNS": ...}``) or none would see every table folded at 80 columns.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)


#: Free memory a RAM-backed /dev/shm must offer to hold the tests' temporary folders
#: (a passing run's peak at once: ~0.9 GB, the last site-delta tests side by side).
MEMORY_FOR_TEMPORARY_FILES = 4 * 2**30


def _mounted_tmpfs(folder: str) -> bool:
    """Whether ``folder`` is a tmpfs's mount point (a folder of the disk would gain
    nothing). ``noexec`` (Docker's /dev/shm) is fine: no test runs a file it writes."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(
        fields[1] == folder and fields[2] == "tmpfs" for fields in (line.split() for line in mounts) if len(fields) >= 3
    )


def _temporary_files_in_memory() -> None:
    """The tests write some 4 GB of short-lived files (sites, catalogs, mirrors): on a
    disk, the kernel's journal and writeback took a fifth of the run's CPU (a site built
    and compared three times: 17.7-39.6 s on ext4, 11-12 s on tmpfs). They go to
    /dev/shm when it is a tmpfs with room, unless TMPDIR chooses; subprocesses inherit
    it, and /dev/shm lets other users in (the read-only tests' ``nobody``)."""
    shm = "/dev/shm"
    if "TMPDIR" in os.environ or not _mounted_tmpfs(shm) or not os.access(shm, os.W_OK | os.X_OK):
        return
    free = os.statvfs(shm)
    if free.f_bavail * free.f_frsize < MEMORY_FOR_TEMPORARY_FILES:
        return
    os.environ["TMPDIR"] = shm
    tempfile.tempdir = None  # (read again from TMPDIR)


_temporary_files_in_memory()


#: Workers for a run of the suite or of folders (``-n auto`` in pyproject.toml, which says
#: why four; ``-n N`` chooses).
WORKERS = 4


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Four workers for the suite or folders of it; none when the run names test files or
    tests (``tests/test_values.py``, ``path::test``), whose few tests would wait ~10 s
    for workers to start."""
    named = [arg.split("::")[0] for arg in config.args]
    return 0 if named and all(Path(path).is_file() for path in named) else WORKERS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that run the whole demo (the session's ``demo_run``) are ``slow``: the fast
    loop (``-m 'not slow'``) leaves them out. The ``long`` ones go first."""
    for item in items:
        if "demo_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    # The ``long`` tests first (a stable sort keeps the others' order): started last, one
    # of them would keep the run going minutes after the other workers ran out of tests.
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session")
def mirrors() -> Path:
    """Spack's own test mirrors (v2 signed/unsigned, legacy, v1, future layouts)."""
    if not MIRRORS.is_dir():
        pytest.fail(
            f"Spack fixtures not found at {MIRRORS}: ../shared must sit beside the checkout, or CACHEDEX_SHARED name it"
        )
    return MIRRORS


@dataclass
class ServerState:
    """What the test server serves and how it misbehaves."""

    root: Path
    #: path -> 404, 500, 503, 429, stall, slow, never, cut, drip, gzip-bomb, not-http,
    #: 206, redirect-file, redirect-loop, redirect:URL, huge-length (a HEAD's Content-Length of
    #: 2**60), gzip-unasked (gzipped whatever the request
    #: accepts), etag-latin1 (an ETag holding byte 0xe9), and the answers of
    #: ``_SAYING``; "-once" to misbehave on the first request only, "-first-get" on the
    #: first GET only (a HEAD before it answered as usual); "A>B" misbehaves as B once
    #: A (of "-once" or "-first-get") is spent
    faults: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    headers: list[dict[str, str]] = field(default_factory=list)  # each request's, in the same order
    in_flight: int = 0  # requests being answered now
    most_in_flight: int = 0  # the most answered at once
    lock: threading.Lock = field(default_factory=threading.Lock)
    stall_seconds: float = 3.0
    drip_seconds: float = 0.3
    retry_after: int = 1

    def count(self, suffix: str, method: str = "GET") -> int:
        """How many requests for paths ending with ``suffix`` arrived."""
        return sum(1 for m, p in self.requests if m == method and p.endswith(suffix))


#: Error answers whose bodies say why: Docker Hub's pull rate limit (the OCI
#: distribution spec's error shape, with an escape sequence in it), S3's refusal.
_SAYING = {
    "429-pull-limit": (
        429,
        b'{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your unauthenticated pull rate'
        b' limit.\\u001b[31m https://www.docker.com/increase-rate-limit"}]}',
    ),
    "403-s3": (
        403,
        b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied'
        b"</Message><RequestId>X</RequestId></Error>",
    ),
}


class _Handler(BaseHTTPRequestHandler):
    state: ServerState

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - silence
        pass

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._serve(body=True)

    def _serve(self, *, body: bool) -> None:
        state = self.state
        with state.lock:
            state.in_flight += 1
            state.most_in_flight = max(state.most_in_flight, state.in_flight)
        try:
            self._answer(body=body)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _answer(self, *, body: bool) -> None:
        state = self.state
        path = self.path.split("?", 1)[0]
        state.requests.append((self.command, path))
        state.headers.append(dict(self.headers.items()))
        fault = state.faults.get(path)
        fault, _, then = fault.partition(">") if fault is not None else (None, "", "")
        if fault is not None and fault.endswith("-once"):
            _spent(state.faults, path, then)
            fault = fault.removesuffix("-once")
        if fault is not None and fault.endswith("-first-get"):  # (a HEAD before it answered as usual)
            fault = fault.removesuffix("-first-get") if self.command == "GET" else None
            if fault is not None:
                _spent(state.faults, path, then)
        if fault in ("404", "500", "503"):
            self.send_error(int(fault))
            return
        if fault == "429":
            self.send_response(429)
            self.send_header("Retry-After", str(state.retry_after))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault in _SAYING:  # an error answer whose body says why, as registries and S3 write it
            status, words = _SAYING[fault]
            self.send_response(status)
            self.send_header("Retry-After", str(state.retry_after))
            self.send_header("Content-Length", str(len(words)))
            self.end_headers()
            if body:
                self.wfile.write(words)
            return
        if fault == "stall":
            time.sleep(state.stall_seconds)
            self.send_error(503)
            return
        if fault == "slow":  # the answer, after stall_seconds
            time.sleep(state.stall_seconds)
        if fault == "never":  # read the request, then say nothing until the client gives up
            time.sleep(state.stall_seconds)
            self.close_connection = True
            return
        if fault == "206":  # a part, though no range was asked (a cache answering another request's)
            self.send_response(206)
            self.send_header("Content-Range", "bytes 0-1/100")
            self.send_header("Content-Length", "2")
            self.end_headers()
            if body:
                self.wfile.write(b"{}")
            return
        if fault == "304":  # "not modified", though the request named no version
            self.send_response(304)
            self.end_headers()
            return
        if fault == "huge-length" and not body:  # HEAD: a length no file has (2**60 bytes)
            self.send_response(200)
            self.send_header("Content-Length", str(2**60))
            self.end_headers()
            return
        if fault == "not-http":  # a line that is no status line, as a server of another protocol sends
            self.wfile.write(b"THIS IS NOT HTTP\r\n\r\n")
            self.close_connection = True
            return
        if fault == "redirect-loop":  # to itself, for ever
            self.send_response(302)
            self.send_header("Location", path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault is not None and fault.startswith("redirect:"):  # to that URL
            self.send_response(302)
            self.send_header("Location", fault.removeprefix("redirect:"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault == "redirect-file":
            self.send_response(302)
            self.send_header("Location", "file:///etc/passwd")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault == "gzip-bomb":  # 1 MB on the wire, far more once decoded
            bomb = gzip.compress(b"{" + b" " * 200_000_000, compresslevel=9)
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(bomb)))
            self.end_headers()
            if body:
                self.wfile.write(bomb)
            return
        relative = Path(path.lstrip("/"))
        target = state.root / relative  # symlinks allowed: tests link fixtures in place
        if ".." in relative.parts or not target.is_file():
            self.send_error(404)
            return
        data = target.read_bytes()
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        if fault == "etag-latin1":
            etag = '"caf\xe9' + etag[1:]
        if self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        encoded = data
        use_gzip = fault == "gzip-unasked" or (
            "gzip" in (self.headers.get("Accept-Encoding") or "") and len(data) > 512
        )
        if use_gzip:
            encoded = gzip.compress(data, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("ETag", etag)
        if use_gzip:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(encoded) if body or use_gzip else len(data)))
        self.end_headers()
        if not body:
            return
        if fault == "cut":
            self.wfile.write(encoded[: max(1, len(encoded) // 2)])
            self.wfile.flush()
            self.close_connection = True
            return
        if fault == "drip":  # a byte at a time: never idle for long, never done
            for byte in encoded:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(state.drip_seconds)
            return
        self.wfile.write(encoded)


def _spent(faults: dict[str, str], path: str, then: str) -> None:
    """A fault of ``path`` used up: the next one (``then``) follows, or none."""
    if then:
        faults[path] = then
    else:
        del faults[path]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (timeout tests) breaks the pipe: expected here


@dataclass
class TestServer:
    """A running server: its base URL and its state."""

    url: str
    state: ServerState


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[TestServer]:
    """Serve ``tmp_path / "www"`` on 127.0.0.1 (a random free port) for one test."""
    root = tmp_path / "www"
    root.mkdir()
    state = ServerState(root=root)
    handler = type("Handler", (_Handler,), {"state": state})
    server = _QuietServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield TestServer(url=f"http://127.0.0.1:{server.server_port}", state=state)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Demo:
    """``cachedex demo``, run once for the whole run: pytest-xdist's workers share it (the
    first to ask runs it while the others wait). Tests must not change it (copy what you
    modify): another worker may be reading it."""
    from click.testing import CliRunner

    from cachedex.cli import main

    # The folder all workers' temporary folders are in (without workers: this run's own).
    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    folder, said = shared / "demo" / "cachedex-demo", shared / "demo" / "output.txt"
    said.parent.mkdir(exist_ok=True)
    with one_worker_at_a_time(shared / "demo" / ".lock"):
        if not said.exists():  # (written last: a demo that failed is run again, and fails again)
            result = CliRunner().invoke(main, ["demo", str(folder)])
            assert result.exit_code == 0, result.output
            said.write_text(result.output)
        return Demo(folder, said.read_text())


@pytest.fixture(scope="module")
def uvicorn_server(demo_run: Demo) -> Iterator[str]:
    """``cachedex serve``'s app over the demo catalog, in a real uvicorn on 127.0.0.1."""
    from cachedex.cli.serve_app import serve_app
    from tests.servers import uvicorn_serving

    with uvicorn_serving(serve_app(demo_run.catalog)) as url:
        yield url


@pytest.fixture
def small_catalog(tmp_path: Path) -> Iterator[Catalog]:
    """A catalog of one tag ``t`` (root and stack ``s``): zlib (in both, sized), cmake
    depending on zlib (root only), and an external gcc without a binary."""
    from cachedex.values import Dependency

    zlib = record("z" * 32, "zlib", version="1.3.1")
    gcc = record("g" * 32, "gcc", version="13.2.0", external=True, in_buildcache=False, compiler="none")
    cmake = record(
        "c" * 32,
        "cmake",
        version="3.31.2",
        variants=("build_type=Release", "~doc"),
        dependencies=(Dependency("z" * 32, "zlib", 2, ""), Dependency("g" * 32, "gcc", 1, "c,cxx")),
    )
    catalog = Catalog(tmp_path / "small.sqlite")
    write_tag(
        catalog,
        "t",
        [zlib, gcc, cmake],
        members={zlib.hash: True, cmake.hash: True, gcc.hash: False},
        sizes={zlib.hash: 100_000},
    )
    with catalog.writing_tag("t") as writer:
        writer.keep_mirror("root", "/m", fetched_at=0.0, etag=None, last_modified=None)
        writer.replace_mirror(
            "s",
            "/m/s",
            layout=3,
            db_version=8,
            checksum="s",
            etag=None,
            last_modified=None,
            fetched_at=0.0,
            members={zlib.hash: True},
        )
    try:
        yield catalog
    finally:
        catalog.close()
