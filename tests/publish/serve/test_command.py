"""``cachedex serve`` as a real process: its listening socket, its connection limits, its
help, and a damaged catalog at start-up."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.publish.serve.server import HEAD_SECONDS, KEEP_ALIVE_SECONDS
from cachedex.query import parse
from tests.publish.serve import corrupt_catalog
from tests.servers import CACHEDEX, cachedex_serving, free_port


def _config(tmp_path: Path, catalog: Path) -> Path:
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"catalog: {catalog}\ntags:\n  - name: t\n    url: ./m\n")
    return config


@pytest.mark.slow
def test_hang5_unfinished_request_heads_are_closed(small_catalog: Catalog, tmp_path: Path) -> None:
    port = free_port()
    with cachedex_serving(_config(tmp_path, small_catalog.path), port):
        started = time.monotonic()
        lorises = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        for loris in lorises:
            loris.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        silent = socket.create_connection(("127.0.0.1", port))  # sends nothing at all
        with socket.create_connection(("127.0.0.1", port)) as huge:
            huge.sendall(b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n")
            huge.settimeout(5)
            assert huge.recv(100).startswith(b"HTTP/1.1 400 ")
        for held in [*lorises, silent]:
            held.settimeout(HEAD_SECONDS + 4)
            assert held.recv(1024) == b""  # closed by the server, unanswered
            held.close()
        assert time.monotonic() - started < HEAD_SECONDS + 4
        assert httpx.get(f"http://127.0.0.1:{port}/api/tags", timeout=5).status_code == 200


def _answer_head(client: socket.socket) -> bytes:
    seen = b""
    while b"\r\n\r\n" not in seen:
        chunk = client.recv(65536)
        assert chunk, seen
        seen += chunk
    return seen


@pytest.mark.slow
def test_hang5_a_body_that_never_ends_does_not_hold_its_connection(small_catalog: Catalog, tmp_path: Path) -> None:
    """uvicorn's keep-alive timer ends at any byte: one byte of a body declared two long,
    or a chunk with no end, held the connection (and its place under the limit) for good."""
    port = free_port()
    heads = [
        b"GET /api/tags HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n",
        b"GET /api/tags HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
    ]
    with cachedex_serving(_config(tmp_path, small_catalog.path), port), contextlib.ExitStack() as sockets:
        held = []
        for head in heads:
            client = sockets.enter_context(socket.create_connection(("127.0.0.1", port)))
            client.sendall(head)
            client.settimeout(10)
            assert _answer_head(client).startswith(b"HTTP/1.1 200 ")
            held.append(client)
        started = time.monotonic()
        for client, rest in zip(held, (b"a", b"5\r\nab"), strict=True):
            client.sendall(rest)  # a byte more, then nothing
        for client in held:
            client.settimeout(KEEP_ALIVE_SECONDS + 10)
            while client.recv(65536):  # what is left of the answer, then the close
                pass
        assert time.monotonic() - started < KEEP_ALIVE_SECONDS + 4
        assert httpx.get(f"http://127.0.0.1:{port}/api/tags", timeout=5).status_code == 200


def test_a_post_whose_head_and_big_body_arrive_together_is_read(small_catalog: Catalog, tmp_path: Path) -> None:
    """The head's limit counts the head: a lockfile sent in the same write (curl does,
    below 1 MiB) is a body, not a head too large."""
    port = free_port()
    body = b"{" + b" " * 300_000 + b"}"
    head = f"POST /api/reuse?tag=t HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    with cachedex_serving(_config(tmp_path, small_catalog.path), port):
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", port)) as client:
                client.sendall(head.encode() + body)
                client.settimeout(30)
                answer = b""
                while chunk := client.recv(65536):
                    answer += chunk
            status, _, rest = answer.partition(b"\r\n")
            assert b"head too large" not in answer and b"content-type: application/json" in rest.lower(), answer[:300]
            assert status.split()[1] in (b"200", b"400"), status  # the app's answer: the lockfile read


def test_msg4_a_port_in_use_is_one_line(small_catalog: Catalog, tmp_path: Path) -> None:
    config = _config(tmp_path, small_catalog.path)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [*CACHEDEX, "--config", str(config), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [f"error: cannot listen on 127.0.0.1:{port} (address in use)"]


def test_msg4_an_unknown_host_is_one_line(small_catalog: Catalog, tmp_path: Path) -> None:
    config = _config(tmp_path, small_catalog.path)
    result = CliRunner().invoke(main, ["--config", str(config), "serve", "--host", "no-such-host.invalid"])
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert line.startswith("error: cannot listen on no-such-host.invalid:8000 (cannot resolve 'no-such-host.invalid'")


def test_an_ipv6_host_is_taken_as_a_url_writes_it(small_catalog: Catalog, tmp_path: Path) -> None:
    # ("[::1]" was handed to the resolver as it is, and refused as a name it cannot resolve)
    config = _config(tmp_path, small_catalog.path)
    with socket.socket(socket.AF_INET6) as holder:
        holder.bind(("::1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        for host in ("[::1]", "::1"):
            result = CliRunner().invoke(main, ["--config", str(config), "serve", "--host", host, "--port", str(port)])
            assert (result.exit_code, result.output) == (1, f"error: cannot listen on [::1]:{port} (address in use)\n")


def test_msg5_serve_help_shows_urls_that_work() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    urls = re.findall(r"/api/\S+?(?=\)|\s)", result.output)
    assert urls and "q=hdf5%2Bmpi" in result.output and "hdf5+mpi&" not in result.output
    for url in urls:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        if "q" in query:
            assert parse(query["q"][0]) == parse("hdf5+mpi")


def test_crash12_serve_starts_over_a_corrupt_catalog(tmp_path: Path) -> None:
    port = free_port()
    with cachedex_serving(_config(tmp_path, corrupt_catalog(tmp_path / "c.sqlite")), port) as server:
        answer = httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "target=x86_64_v3"}, timeout=5)
        assert answer.status_code == 500 and answer.json()["error"]["status"] == 500
        assert httpx.get(f"http://127.0.0.1:{port}/api/openapi.json", timeout=5).status_code == 200
        assert server.poll() is None
