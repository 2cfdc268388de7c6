"""The limits ``cachedex serve`` puts on connections (``serve/server.py``), under a real
uvicorn on 127.0.0.1 with :class:`BoundedHttpTools`: a request head's size limit at its
boundary and on each request of a kept-alive connection, the limit of connections at its
boundary; and the checks made before uvicorn starts (the bind, the free port, the limit
taken from the open-file limit)."""

from __future__ import annotations

import resource
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.errors import ConfigError
from cachedex.publish.serve import create_app
from cachedex.publish.serve.reuse_route import BODY_SECONDS
from cachedex.publish.serve.server import (
    HEAD_BYTES,
    KEEP_ALIVE_SECONDS,
    MESSAGE_SECONDS,
    BoundedHttpTools,
    check_listen,
    concurrency_limit,
    free_port,
)
from tests.servers import uvicorn_serving

_HEAD = b"GET /api/tags HTTP/1.1\r\nHost: x\r\n"


@contextmanager
def _bounded(catalog: Path, *, limit: int = 100) -> Iterator[int]:
    """The app over ``catalog`` under uvicorn with :class:`BoundedHttpTools` (as
    ``serve`` runs it, with a limit of ``limit`` connections), in a thread: its port."""
    with uvicorn_serving(
        create_app(catalog),
        log_level="error",
        http=BoundedHttpTools,
        limit_concurrency=limit,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    ) as url:
        yield int(url.rpartition(":")[2])


def _answer(client: socket.socket) -> tuple[int, bytes]:
    """One answer read from ``client``: its status and its body (by Content-Length)."""
    seen = b""
    while b"\r\n\r\n" not in seen:
        chunk = client.recv(65536)
        assert chunk, seen
        seen += chunk
    head, _, body = seen.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = client.recv(65536)
        assert chunk, body
        body += chunk
    return int(head.split()[1]), body


def _padded(size: int) -> bytes:
    """An unfinished head (no blank line, its last field unended) of exactly ``size`` bytes."""
    start = _HEAD + b"X-Pad: "
    return start + b"a" * (size - len(start))


def _settle() -> None:
    time.sleep(0.3)  # (the server has read what was sent)


def test_an_unfinished_head_of_exactly_the_limit_is_still_read(small_catalog: Catalog) -> None:
    """HEAD_BYTES is the longest head taken: one byte more is refused (400), but a head
    that has reached exactly that size unfinished, then ends, is answered."""
    with _bounded(small_catalog.path) as port:
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.settimeout(5)
            client.sendall(_padded(HEAD_BYTES))
            _settle()
            client.sendall(b"\r\n\r\n")
            assert _answer(client)[0] == 200
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.settimeout(5)
            client.sendall(_padded(HEAD_BYTES + 1))
            assert _answer(client) == (400, b"Request head too large.")


def test_each_request_of_a_kept_alive_connection_has_the_whole_head_limit(small_catalog: Catalog) -> None:
    """The head's bytes are counted per request: three heads of 40 KB on one kept-alive
    connection (120 KB in all) are each answered, none refused as too large."""
    with _bounded(small_catalog.path) as port, socket.create_connection(("127.0.0.1", port)) as client:
        client.settimeout(5)
        for _ in range(3):
            client.sendall(b"GET /api/tags HTTP/1.1\r\n")  # (a read of its own, as a slow client's)
            _settle()
            client.sendall(b"Host: x\r\nX-Pad: " + b"a" * 40_000)
            _settle()
            client.sendall(b"\r\n\r\n")
            assert _answer(client)[0] == 200


def test_the_next_request_of_a_kept_alive_connection_has_a_head_limit_too(small_catalog: Catalog) -> None:
    """After a first answer, the next request's head is bounded as the first was: 70 KB
    of it, sent in pieces, get a 400 rather than being read for ever."""
    with _bounded(small_catalog.path) as port, socket.create_connection(("127.0.0.1", port)) as client:
        client.settimeout(5)
        client.sendall(_HEAD + b"\r\n")
        assert _answer(client)[0] == 200
        client.sendall(b"GET /api/tags HTTP/1.1\r\n")
        _settle()
        for _ in range(7):
            client.sendall(b"X-Pad: " + b"a" * 10_000 + b"\r\n")
            time.sleep(0.05)
        assert _answer(client) == (400, b"Request head too large.")


def test_the_connection_that_reaches_the_limit_is_answered_503(small_catalog: Catalog) -> None:
    """uvicorn's rule, kept: a server that takes 2 connections answers 503 to a request
    on the second one while the first is open (the count includes the one asking)."""
    with _bounded(small_catalog.path, limit=2) as port, socket.create_connection(("127.0.0.1", port)) as idle:
        _settle()  # (taken by the server: it counts)
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.settimeout(5)
            client.sendall(_HEAD + b"\r\n")
            status, body = _answer(client)
        assert status == 503 and b'"status":503' in body
        idle.close()
        _settle()
        with socket.create_connection(("127.0.0.1", port)) as client:  # alone again: answered
            client.settimeout(5)
            client.sendall(_HEAD + b"\r\n")
            assert _answer(client)[0] == 200


@contextmanager
def _open_files(soft: int) -> Iterator[None]:
    before, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < soft:
        pytest.skip(f"the hard open-file limit ({hard}) is below {soft}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (before, hard))


@pytest.mark.parametrize(("soft", "limit"), [(66, 2), (65, 1), (1063, 999), (1064, 1000), (4096, 1000)])
def test_the_connection_limit_leaves_64_files_and_stops_at_a_thousand(soft: int, limit: int) -> None:
    """Connections taken: the open-file limit less 64 (for the catalog, templates and
    workers), at least 1, at most 1,000."""
    with _open_files(soft):
        assert concurrency_limit() == limit


def _in_time_wait() -> int:
    """A port of 127.0.0.1 that nothing listens on, held in TIME_WAIT by a connection
    its server side (a server that, as uvicorn's, set SO_REUSEADDR) closed first."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = int(listener.getsockname()[1])
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = listener.accept()
            accepted.close()  # (the server side closes first: its port goes to TIME_WAIT)
            client.recv(1)
    return port


def test_a_port_in_time_wait_can_be_listened_on(tmp_path: Path) -> None:
    """check_listen binds as uvicorn will (SO_REUSEADDR): a port a server just stopped
    using, still in TIME_WAIT, is free for it and must not be refused as in use."""
    check_listen("127.0.0.1", _in_time_wait())


def test_an_address_not_of_this_machine_is_said_as_such() -> None:
    """A host that resolves to an address no interface has: one line saying so."""
    with pytest.raises(ConfigError) as caught:
        check_listen("192.0.2.1", 8000)  # (TEST-NET-1: never a local address)
    assert str(caught.value) == "cannot listen on 192.0.2.1:8000 (no such address on this machine)"


def test_a_free_port_is_one_the_system_picked_and_can_be_bound() -> None:
    """``--port 0``: the port is the system's pick (an ephemeral one), free to bind."""
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    port = free_port("127.0.0.1")
    assert low <= port <= high
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))


def test_a_body_s_deadline_is_past_the_reuse_route_s_own() -> None:
    """A body gets longer than POST /api/reuse waits for it, so that the route's 408 is
    sent before the connection is closed unanswered."""
    assert MESSAGE_SECONDS > BODY_SECONDS > KEEP_ALIVE_SECONDS
