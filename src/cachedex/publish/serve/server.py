"""Running the app under uvicorn, with the limits a server open to a network needs.

uvicorn closes idle kept-alive connections, but not one that sends part of a request's
head and stops (slow loris): thousands of those hold a file descriptor each, for ever.
:class:`BoundedHttpTools` gives each request head a deadline and a size limit, and
:func:`serve` passes uvicorn a limit on concurrent connections (beyond it, requests get
cachedex's 503, :class:`.busy.OverLimit`, rather than the process running out of
descriptors). Before uvicorn starts,
:func:`check_listen` binds the address once, so that a port in use is one line of error.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import os
import resource
import socket
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from ...errors import CachedexError, ConfigError
from .busy import OverLimit
from .reuse_route import BODY_SECONDS

__all__ = [
    "HEAD_BYTES",
    "HEAD_SECONDS",
    "KEEP_ALIVE_SECONDS",
    "MESSAGE_SECONDS",
    "BoundedHttpTools",
    "check_listen",
    "concurrency_limit",
    "free_port",
    "serve",
]

#: Seconds from a connection's first byte (or a kept-alive connection's next request's
#: first byte) to the end of the request's head; then the connection is closed.
HEAD_SECONDS = 10.0
#: The longest request head (request line and header fields), in bytes; a longer one gets 400.
HEAD_BYTES = 64 * 1024
#: Seconds an idle kept-alive connection stays open.
KEEP_ALIVE_SECONDS = 5
#: Seconds from the end of a request's head to the end of its body; then the connection
#: is closed. Past ``POST /api/reuse``'s own limit, so that its 408 is sent first. A body
#: still coming once the request is answered (a GET that declared one, after a 413 or
#: 408) has the idle connection's seconds left, as nothing waits for it.
MESSAGE_SECONDS = BODY_SECONDS + 10


@functools.cache
def _over_limit() -> OverLimit:
    # Retry after an idle kept-alive connection, which holds a place, has been closed.
    return OverLimit(retry_seconds=KEEP_ALIVE_SECONDS)


class _Deadline:
    """A connection closed unless what it waits for (a request's head, its body) comes
    in time: started, stopped when it came, started again for the next."""

    __slots__ = ("_loop", "_timer", "_transport")

    def __init__(self, loop: asyncio.AbstractEventLoop, transport: asyncio.Transport) -> None:
        self._loop, self._transport = loop, transport
        self._timer: asyncio.TimerHandle | None = None

    @property
    def running(self) -> bool:
        return self._timer is not None

    def start(self, seconds: float) -> None:
        self.stop()
        self._timer = self._loop.call_later(seconds, self._expired)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if not self._transport.is_closing():
            self._transport.close()


class BoundedHttpTools(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol (httptools), with a deadline and a size limit on each
    request's head. A connection that never sends anything is closed at the deadline too.

    Past uvicorn's ``limit_concurrency`` a request is answered by :class:`.busy.OverLimit`
    (the headers of every answer, the error shape, ``Retry-After``), not by uvicorn's
    plain text: the check is uvicorn's own, made here (same setting, same counts of
    connections and of requests in progress), and uvicorn's is turned off."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._limit, self.limit_concurrency = self.limit_concurrency, None
        self._app, self._busy = self.app, _over_limit()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_bytes = 0
        self._head = _Deadline(self.loop, transport)
        # uvicorn's keep-alive timer ends at any byte and starts again only when an answer
        # is sent: a body that never ends (one byte of a declared two) held the
        # connection, and its place under the limit, for good.
        self._body = _Deadline(self.loop, transport)
        self._start_head()

    def _start_head(self) -> None:
        if not self._head.running:
            self._head_bytes = 0
            self._head.start(HEAD_SECONDS)

    def _end_head(self) -> None:
        self._head.stop()

    def data_received(self, data: bytes) -> None:
        if not self._head.running:  # reading a body, or between requests
            super().data_received(data)
            return
        self._head_bytes += len(data)
        # Parsed first: a read often holds the head and the start of the body (a POSTed
        # lockfile), and only a head that is still unfinished past the limit is refused.
        # One read is at most the transport's buffer, so a head is bounded all the same.
        super().data_received(data)
        if self._head.running and self._head_bytes > HEAD_BYTES and not self.transport.is_closing():
            self._end_head()
            self.send_400_response("Request head too large.")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._start_head()  # the next request of a kept-alive connection

    def on_headers_complete(self) -> None:
        self._end_head()
        # uvicorn's check, as cheap: two lengths (the counts of this process's event loop)
        limit = self._limit
        if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
            self.logger.warning("Exceeded concurrency limit.")
            self.app = self._busy  # what uvicorn's on_headers_complete hands this request to
        else:
            self.app = self._app
        super().on_headers_complete()
        self._body.start(MESSAGE_SECONDS)

    def on_message_complete(self) -> None:
        self._body.stop()
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._body.running and not self.transport.is_closing():
            self._body.start(KEEP_ALIVE_SECONDS)  # answered: nothing waits for the rest

    def connection_lost(self, exc: Exception | None) -> None:
        self._head.stop()
        self._body.stop()
        super().connection_lost(exc)


def concurrency_limit() -> int:
    """Connections (and requests in progress) one server process takes before it answers
    503: a thousand, or fewer if the process may not open that many files."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1000
    # Descriptors left for the catalog, templates and workers: at a limit of 32 files,
    # 32 connections made every other open fail (connections reset, 500s), not 503s.
    return max(1, min(1000, soft - 64))


def check_listen(host: str, port: int) -> None:
    """ConfigError ``cannot listen on HOST:PORT (why)`` unless the address can be bound
    now (as uvicorn will bind it: SO_REUSEADDR, every address the host resolves to)."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError([f"cannot listen on {where} (cannot resolve {host!r}: {exc.strerror})"]) from exc
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                reasons = {
                    errno.EADDRINUSE: "address in use",
                    errno.EADDRNOTAVAIL: "no such address on this machine",
                    errno.EACCES: "permission denied; ports below 1024 need privileges",
                }
                reason = reasons.get(exc.errno or 0, exc.strerror or str(exc))
                raise ConfigError([f"cannot listen on {where} ({reason})"]) from exc


def free_port(host: str) -> int:
    """A port free on ``host`` now, as the system picks one for port 0 (``--port 0``):
    the workers then all bind that one, and the command can say which it is."""
    family, kind, proto, _, address = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    with socket.socket(family, kind, proto) as probe:
        probe.bind(address)
        return int(probe.getsockname()[1])


def serve(catalog: Path, *, host: str, port: int, workers: int, environment_key: str, factory: str) -> None:
    """Run the server over ``catalog`` until interrupted. Worker processes import the
    app's ``factory`` by name (``module:function``) and find the catalog's path in
    ``$environment_key``."""
    os.environ[environment_key] = str(catalog)
    try:
        uvicorn.run(
            factory,
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level="warning",
            http=BoundedHttpTools,
            limit_concurrency=concurrency_limit(),
            timeout_keep_alive=KEEP_ALIVE_SECONDS,
            h11_max_incomplete_event_size=HEAD_BYTES,  # h11's own limit; BoundedHttpTools applies it itself
        )
    except SystemExit as exc:
        if exc.code in (None, 0):
            raise
        # uvicorn has logged why (a port taken since check_listen, say) and would exit 3.
        raise CachedexError("the server did not start (uvicorn's message above says why)") from exc
