"""Real servers for tests and benchmarks, started on 127.0.0.1 with configs of our own.

Debian's ``nginx`` (a static web server, as a CDN serves mirrors), ``tinyproxy`` (a
forward proxy) and ``docker-registry`` (an OCI registry). ``scripts/test`` installs them
when missing. Each server listens on a free port of 127.0.0.1 only and is stopped when
its ``with`` block ends; a server that does not come up within a few seconds fails the
test with the server's own log.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

__all__ = ["Nginx", "Tinyproxy", "free_port", "wait_for_port"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
        shutil.rmtree(self.workdir, ignore_errors=True)


class Nginx(_Server):
    """Debian's nginx serving ``root`` as static files on 127.0.0.1 (ETag, keep-alive)."""

    def __init__(self, root: Path, *, workers: int = 1, extra: str = "") -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(binary):
            raise RuntimeError("nginx is not installed (Debian package nginx-light; scripts/test installs it)")
        self.workdir = Path(tempfile.mkdtemp(prefix="cachedex-nginx-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        log = self.workdir / "error.log"
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
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 75;
    types {{ application/json json; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{self.port};
        root {Path(root).resolve()};
        etag on;
        {extra}
    }}
}}
"""
        (self.workdir / "nginx.conf").write_text(config)
        temp.mkdir()
        self.process = subprocess.Popen(
            [binary, "-c", str(self.workdir / "nginx.conf"), "-p", str(self.workdir)],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "ab"),  # noqa: SIM115 - the server holds it as long as it runs
        )
        wait_for_port(self.port, self.process, log)


class Tinyproxy(_Server):
    """Debian's tinyproxy, a forward proxy on 127.0.0.1; ``log`` records what it relayed."""

    def __init__(self) -> None:
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
        (self.workdir / "tinyproxy.conf").write_text(config)
        self.process = subprocess.Popen(
            [binary, "-d", "-c", str(self.workdir / "tinyproxy.conf")],
            stdout=subprocess.DEVNULL,
            stderr=open(self.workdir / "stderr.log", "ab"),  # noqa: SIM115
        )
        wait_for_port(self.port, self.process, self.workdir / "stderr.log")

    def relayed(self) -> str:
        """What the proxy logged (requests it relayed)."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""
