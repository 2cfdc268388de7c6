"""Real servers for tests and benchmarks, started on 127.0.0.1 with configs of our own.

Debian's ``nginx`` (a static web server, as a CDN serves mirrors), ``tinyproxy`` (a
forward proxy) and ``docker-registry`` (an OCI registry); and cachedex's own server,
``cachedex serve`` in a process of its own or its app under uvicorn in a thread. ``scripts/test`` installs them
when missing. Each server listens on a free port of 127.0.0.1 only and is stopped when
its ``with`` block ends; a server that does not come up within a few seconds fails the
test with the server's own log.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Any

__all__ = [
    "CACHEDEX",
    "Nginx",
    "Tinyproxy",
    "cachedex_serving",
    "free_port",
    "make_certificates",
    "settled_log",
    "uvicorn_serving",
    "wait_for_port",
]

#: The ``cachedex`` command, run by this interpreter.
CACHEDEX = [sys.executable, "-c", "from cachedex.cli import main; main()"]


@contextmanager
def cachedex_serving(
    config: Path, port: int, *args: str, wrap: Sequence[str] = (), said: list[str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """``cachedex serve`` (with ``args``; run through ``wrap``, a command that execs the
    rest, e.g. a shell that lowers a limit first) on 127.0.0.1:``port``, once it answers;
    what it printed is appended to ``said`` once it is stopped."""
    import httpx

    server = subprocess.Popen(
        [*wrap, *CACHEDEX, "--config", str(config), "serve", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, server.communicate(timeout=5)
            assert time.monotonic() < deadline, "cachedex serve did not answer within 30 s"
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/openapi.json", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield server
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=15)
        if said is not None:
            said.append(out)


@contextmanager
def uvicorn_serving(app: Any, *, log_level: str = "warning", **options: Any) -> Iterator[str]:
    """``app`` under a real uvicorn in a thread on 127.0.0.1 (``options``: more of
    ``uvicorn.Config``'s): its URL, once it listens."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level, **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now. Under pytest-xdist (``-n``), one of this
    worker's share only: a port is free from this call until a server binds it, and
    another worker must not be given it meanwhile."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    for _ in range(1000):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        # Linux gives bind() odd ports (connect() the even ones): pairs are shared out.
        if port // 2 % workers == int(worker) % workers:
            return port
    raise RuntimeError(f"no free port of worker {worker}'s share in 1,000 tries")


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, seconds: float = 10.0) -> None:
    """Until something listens on ``port``; RuntimeError with ``log`` if the process died
    or nothing came within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    text = log.read_text(errors="replace") if log.exists() else "(no log)"
    process.kill()
    raise RuntimeError(f"server on 127.0.0.1:{port} did not start:\n{text}")


class _Server:
    process: subprocess.Popen[bytes]
    workdir: Path
    _log: IO[bytes] | None = None

    def _start(self, command: list[str], log: Path) -> None:
        self._log = open(log, "ab")  # noqa: SIM115 - the server writes to it as long as it runs
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self._log)

    def __enter__(self) -> _Server:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def outage_locations(outage: Path, *locations: str) -> str:
    """nginx ``location`` blocks (each match as nginx writes it: ``= /m/x``, ``~ a\\.json$``)
    that answer 503 while the file ``outage`` exists, made here: unlink it to end the
    outage. For :class:`Nginx`'s ``extra``."""
    outage.write_text("1")
    return "\n".join(f"location {where} {{ if (-f {outage}) {{ return 503; }} }}" for where in locations)


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A private CA and a certificate it signed for 127.0.0.1, made now with openssl:
    (CA certificate, server certificate, server key)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, request, cert = (
        folder / n for n in ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem")
    )
    extensions = folder / "san.ext"
    extensions.write_text("subjectAltName = IP:127.0.0.1\n")
    steps = [
        [
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            ca_key,
            "-out",
            ca,
            "-days",
            "2",
            "-subj",
            "/CN=cachedex test CA",
        ],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", request, "-subj", "/CN=127.0.0.1"],
        [
            "x509",
            "-req",
            "-in",
            request,
            "-CA",
            ca,
            "-CAkey",
            ca_key,
            "-CAcreateserial",
            "-out",
            cert,
            "-days",
            "2",
            "-extfile",
            extensions,
        ],
    ]
    for step in steps:
        subprocess.run(["openssl", *map(str, step)], check=True, capture_output=True)
    return ca, cert, key


def settled_log(path: Path, *, quiet: float = 0.05, at_most: float = 2.0) -> str:
    """``path``'s text once it has stopped growing for ``quiet`` seconds (waiting at most
    ``at_most``): nginx and the registry write a request's line after sending its
    response, so a client may hold the answer before the line exists, and a count taken
    just after a read would miss it."""
    text, stable_since, deadline = None, 0.0, time.monotonic() + at_most
    while time.monotonic() < deadline:
        now_text = path.read_text(errors="replace") if path.exists() else ""
        if now_text != text:
            text, stable_since = now_text, time.monotonic()
        elif time.monotonic() - stable_since >= quiet:
            break
        time.sleep(0.01)
    return text or ""


class Nginx(_Server):
    """Debian's nginx serving ``root`` as static files on 127.0.0.1 (ETag, keep-alive);
    over https with ``tls`` (certificate, key); with ``log_requests``, :meth:`requests`
    lists what it served."""

    def __init__(
        self,
        root: Path,
        *,
        workers: int = 1,
        extra: str = "",
        tls: tuple[Path, Path] | None = None,
        log_requests: bool = False,
    ) -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(binary):
            raise RuntimeError("nginx is not installed (Debian package nginx-light; scripts/test installs it)")
        self.workdir = Path(tempfile.mkdtemp(prefix="cachedex-nginx-"))
        self.port = free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        log = self.workdir / "error.log"
        self.access_log = self.workdir / "access.log"
        access = f'log_format paths "$request_method $uri $status"; access_log {self.access_log} paths;'
        listen = f"127.0.0.1:{self.port}" + (" ssl" if tls else "")
        certificates = f"ssl_certificate {tls[0]}; ssl_certificate_key {tls[1]};" if tls else ""
        # As root, nginx's workers would run as 'nobody', who may not read a test's files.
        user = "user root root;" if os.geteuid() == 0 else ""
        temp = self.workdir / "tmp"
        config = f"""
{user}
daemon off;
worker_processes {workers};
pid {self.workdir}/nginx.pid;
error_log {log} warn;
events {{ worker_connections 4096; }}
http {{
    {access if log_requests else "access_log off;"}
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 75;
    types {{ application/json json; }}
    default_type application/octet-stream;
    server {{
        listen {listen};
        {certificates}
        root {Path(root).resolve()};
        etag on;
        {extra}
    }}
}}
"""
        (self.workdir / "nginx.conf").write_text(config)
        temp.mkdir()
        self._start([binary, "-c", str(self.workdir / "nginx.conf"), "-p", str(self.workdir)], log)
        wait_for_port(self.port, self.process, log)

    def requests(self) -> list[tuple[str, str, int]]:
        """(method, path, status) of every request served so far (with ``log_requests``)."""
        text = settled_log(self.access_log)
        rows = [line.split() for line in text.splitlines()]
        return [(method, path, int(status)) for method, path, status in rows]


class Tinyproxy(_Server):
    """Debian's tinyproxy, a forward proxy on 127.0.0.1; ``log`` records what it relayed."""

    def __init__(self, auth: tuple[str, str] | None = None) -> None:
        binary = shutil.which("tinyproxy") or "/usr/bin/tinyproxy"
        if not os.path.exists(binary):
            raise RuntimeError("tinyproxy is not installed (Debian package tinyproxy; scripts/test installs it)")
        self.workdir = Path(tempfile.mkdtemp(prefix="cachedex-tinyproxy-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self.workdir / "tinyproxy.log"
        config = f"""
Port {self.port}
Listen 127.0.0.1
Timeout 30
LogFile "{self.log}"
LogLevel Info
MaxClients 64
Allow 127.0.0.1
DisableViaHeader Yes
"""
        if auth is not None:  # (it then asks every request for them: 407 to a CONNECT)
            config += f"BasicAuth {auth[0]} {auth[1]}\n"
        (self.workdir / "tinyproxy.conf").write_text(config)
        self._start([binary, "-d", "-c", str(self.workdir / "tinyproxy.conf")], self.workdir / "stderr.log")
        wait_for_port(self.port, self.process, self.workdir / "stderr.log")

    def relayed(self) -> str:
        """What the proxy logged (requests it relayed)."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""
