"""All of ingest's HTTP, in one place: libcurl (through pycurl), driven by one thread.

Why libcurl: a sync of a big tag over HTTP is one small GET per spec (its manifest
gives the binary's size), tens of thousands of them. Measured on 20,000 manifests from
nginx on 127.0.0.1 with 16 connections (``bench/README.md``, http): httpx 825 GETs/s at
1,269 us of CPU each, urllib3 2,117/s at 518 us, aiohttp 6,284/s at 158 us, pycurl's
multi interface 39,650/s at 25 us: the protocol runs in C, Python sees one call per
response.

:class:`HttpClient` owns one ``CurlMulti`` and a thread (the *engine*) that drives it:
any thread may :meth:`~HttpClient.request` one URL (blocking until it is done) or
:meth:`~HttpClient.map` many (results come back as they finish, each decoded to the small
value the caller needs in the engine thread, so no body outlives its request). In flight
at once: ``http.concurrency`` requests, over a keep-alive pool (HTTP/2 multiplexed where
the server offers it).

Every request is bounded: an idle timeout (no data for ``http.timeout`` seconds), an
overall deadline (``http.deadline``), and a size limit checked as the bytes arrive,
after decompression (a gzip bomb stops at the limit). Connection errors, timeouts,
bodies cut short, 429 and 5xx answers are retried with exponential backoff, honouring
``Retry-After`` (up to a bound). Redirects are followed to http(s) URLs only. Proxies
come from ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` (as pip reads them), the CA bundle
from ``http.ca_bundle``, else ``SSL_CERT_FILE``, else the system's.
"""

from __future__ import annotations

import contextlib
import email.utils
import heapq
import itertools
import os
import queue
import select
import socket
import ssl
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pycurl

from .. import __version__
from ..config import HttpOptions
from ..errors import CachedexError, SourceError, SourceNotFound

__all__ = ["HttpClient", "Request", "Response", "TooBig"]

K = TypeVar("K")
V = TypeVar("V")

#: Called with (bytes received so far, total bytes or None) while a body downloads.
ProgressCallback = Callable[[int, "int | None"], None]

#: libcurl errors worth another attempt: the network, not the request, failed.
_RETRYABLE = {
    pycurl.E_COULDNT_CONNECT,
    pycurl.E_COULDNT_RESOLVE_HOST,
    pycurl.E_OPERATION_TIMEDOUT,
    pycurl.E_RECV_ERROR,
    pycurl.E_SEND_ERROR,
    pycurl.E_PARTIAL_FILE,
    pycurl.E_GOT_NOTHING,
    pycurl.E_HTTP2,
    92,  # CURLE_HTTP2_STREAM
    pycurl.E_SSL_CONNECT_ERROR,
}
#: The longest pause a server's Retry-After may ask for before we give up on it.
MAX_RETRY_AFTER = 60.0


class TooBig(SourceError):
    """A response larger than its kind's limit (counted after decompression)."""


class Response:
    """A finished request: the final URL, the status, the headers (lower-case names; a
    repeated header's values joined by ``, ``) and the body."""

    __slots__ = ("body", "headers", "status", "url")

    def __init__(self, url: str, status: int, headers: dict[str, str], body: bytes) -> None:
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body


class Request:
    """One HTTP request and what it is allowed: at most ``limit`` body bytes (decoded).

    ``ok`` lists the statuses that are answers (others are errors: 404 is
    :class:`SourceNotFound`); ``progress`` sees the body arrive."""

    __slots__ = (
        "_body",
        "_deliver",
        "_headers",
        "_reason",
        "attempt",
        "headers",
        "limit",
        "method",
        "ok",
        "progress",
        "url",
    )

    def __init__(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Iterable[str] = (),
        limit: int,
        ok: tuple[int, ...] = (200,),
        progress: ProgressCallback | None = None,
    ) -> None:
        self.url = url
        self.method = method
        self.headers = list(headers)
        self.limit = limit
        self.ok = ok
        self.progress = progress
        self.attempt = 0
        self._body = bytearray()
        self._headers: dict[str, str] = {}
        self._reason: str | None = None
        self._deliver: Callable[[Response | CachedexError], None] = _nowhere

    # -- libcurl's callbacks (engine thread) --------------------------------------------------

    def _write(self, data: bytes) -> int | None:
        body = self._body
        body += data
        if len(body) > self.limit:
            self._reason = f"larger than {self.limit:,} bytes, the limit for this kind of file"
            return 0  # libcurl stops the transfer: CURLE_WRITE_ERROR
        if self.progress is not None:
            length = self._headers.get("content-length")
            total = int(length) if length and length.isdigit() and "content-encoding" not in self._headers else None
            self.progress(len(body), total)
        return None

    def _header(self, line: bytes) -> None:
        if line[:5] == b"HTTP/":  # a new response (after a redirect or a 100): forget the last one's
            self._headers = {}
            return
        name, sep, value = line.partition(b":")
        if sep:
            key = name.strip().lower().decode("latin-1")
            text = value.strip().decode("latin-1")
            known = self._headers.get(key)
            self._headers[key] = text if known is None else f"{known}, {text}"


def _nowhere(result: Response | CachedexError) -> None:
    pass


class HttpClient:
    """One pool of connections and one engine thread for every HTTP request of a sync."""

    def __init__(self, options: HttpOptions) -> None:
        self.options = options
        self._multi = pycurl.CurlMulti()
        self._multi.setopt(pycurl.M_MAXCONNECTS, max(options.concurrency, 4))
        self._multi.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX)
        self._idle: list[pycurl.Curl] = []
        self._active: dict[pycurl.Curl, Request] = {}
        self._submitted: deque[Request] = deque()
        self._delayed: list[tuple[float, int, Request]] = []  # (when, order, request): retries waiting
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        self._closed = False
        self._cainfo = _ca_bundle(options)
        self._proxies = urllib.request.getproxies()
        self._engine = threading.Thread(target=self._run, name="cachedex-http", daemon=True)
        self._engine.start()

    # -- the public face -----------------------------------------------------------------------

    def request(self, request: Request) -> Response:
        """Do ``request`` (retrying what is worth it); raises the SourceError that ended it."""
        done: Future[Response | CachedexError] = Future()
        request._deliver = done.set_result
        self._submit([request])
        result = done.result()
        if isinstance(result, CachedexError):
            raise result
        return result

    def map(
        self, requests: Iterable[tuple[K, Request]], decode: Callable[[Response], V]
    ) -> Iterator[tuple[K, V | CachedexError]]:
        """Do every request, ``http.concurrency`` at a time, and yield ``(key, value)`` as
        each finishes: ``decode(response)`` (run as the response arrives, so that only
        its value is kept), or the CachedexError that ended it (a decode's own
        CachedexError too)."""
        results: queue.SimpleQueue[tuple[K, V | CachedexError]] = queue.SimpleQueue()
        pending = 0
        for key, request in requests:
            request._deliver = _delivery(results, key, decode)
            pending += 1
            self._submit([request])
            # Keep a window of work queued, not every request at once: their bodies and
            # handles come and go, so memory stays flat however many there are.
            while pending > 4 * self.options.concurrency:
                yield results.get()
                pending -= 1
        for _ in range(pending):
            yield results.get()

    def close(self) -> None:
        """Stop the engine and release every connection."""
        with self._lock:
            self._closed = True
        self._wake()
        self._engine.join(timeout=10)
        for handle in [*self._idle, *self._active]:
            handle.close()
        self._multi.close()
        self._wake_read.close()
        self._wake_write.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the engine ----------------------------------------------------------------------------

    def _submit(self, requests: list[Request]) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the HTTP client is closed")
            self._submitted.extend(requests)
        self._wake()

    def _wake(self) -> None:
        # A full socket means a wake-up is pending already (a closed one: the client is closing).
        with contextlib.suppress(OSError):
            self._wake_write.send(b"\0")

    def _run(self) -> None:
        multi = self._multi
        limit = self.options.concurrency
        while True:
            with self._lock:
                if self._closed:
                    return
                now = time.monotonic()
                while self._delayed and self._delayed[0][0] <= now:
                    self._submitted.appendleft(heapq.heappop(self._delayed)[2])
                while self._submitted and len(self._active) < limit:
                    self._start(self._submitted.popleft())
            while True:
                status, _running = multi.perform()
                if status != pycurl.E_CALL_MULTI_PERFORM:
                    break
            while True:
                queued, succeeded, failed = multi.info_read()
                for handle in succeeded:
                    self._finish(handle, 0, "")
                for handle, code, message in failed:
                    self._finish(handle, code, message)
                if not queued:
                    break
            self._wait()

    def _wait(self) -> None:
        """Until a socket of a transfer is ready, a request is submitted, a retry is due,
        or libcurl's own timer fires."""
        timeout = self._multi.timeout() / 1000.0
        if timeout < 0:
            timeout = 1.0
        if self._delayed:
            timeout = min(timeout, max(0.0, self._delayed[0][0] - time.monotonic()))
        with self._lock:
            if self._submitted and len(self._active) < self.options.concurrency:
                timeout = 0.0
        reading, writing, failing = self._multi.fdset()
        waiting: list[Any] = [*reading, self._wake_read]
        try:
            ready, _, _ = select.select(waiting, writing, failing, min(timeout, 1.0))
        except ValueError:  # pragma: no cover - a descriptor past FD_SETSIZE
            ready = []
            time.sleep(0.001)
        if self._wake_read in ready:
            try:
                while self._wake_read.recv(4096):
                    pass
            except BlockingIOError:
                pass

    def _start(self, request: Request) -> None:
        handle = self._idle.pop() if self._idle else pycurl.Curl()
        options = self.options
        request.attempt += 1
        request._body = bytearray()
        request._headers = {}
        request._reason = None
        handle.setopt(pycurl.URL, request.url)
        handle.setopt(pycurl.NOSIGNAL, 1)
        handle.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        handle.setopt(pycurl.REDIR_PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        handle.setopt(pycurl.FOLLOWLOCATION, 1)
        handle.setopt(pycurl.MAXREDIRS, 10)
        handle.setopt(pycurl.USERAGENT, f"cachedex/{__version__}")
        handle.setopt(pycurl.ACCEPT_ENCODING, "")  # gzip and deflate, decoded as they arrive
        handle.setopt(pycurl.HTTPHEADER, request.headers)
        handle.setopt(pycurl.CONNECTTIMEOUT_MS, int(options.timeout * 1000))
        # Idle timeout: fewer than 1 byte a second, on average over 'timeout' seconds.
        handle.setopt(pycurl.LOW_SPEED_LIMIT, 1)
        handle.setopt(pycurl.LOW_SPEED_TIME, max(1, int(options.timeout)))
        handle.setopt(pycurl.TIMEOUT_MS, int(options.deadline * 1000))
        handle.setopt(pycurl.WRITEFUNCTION, request._write)
        handle.setopt(pycurl.HEADERFUNCTION, request._header)
        handle.setopt(pycurl.NOBODY, 1 if request.method == "HEAD" else 0)
        handle.setopt(pycurl.PIPEWAIT, 1)
        if self._cainfo is not None:
            handle.setopt(pycurl.CAINFO, self._cainfo)
        handle.setopt(pycurl.PROXY, self._proxy_for(request.url))
        self._active[handle] = request
        self._multi.add_handle(handle)

    def _proxy_for(self, url: str) -> str:
        """The proxy for ``url`` as pip and urllib find it (HTTPS_PROXY, HTTP_PROXY,
        NO_PROXY, upper or lower case); '' for none."""
        parts = urlsplit(url)
        proxy = self._proxies.get(parts.scheme, "")
        if proxy and urllib.request.proxy_bypass(parts.hostname or ""):
            return ""
        return proxy

    def _finish(self, handle: pycurl.Curl, code: int, message: str) -> None:
        request = self._active.pop(handle)
        self._multi.remove_handle(handle)
        status = int(handle.getinfo(pycurl.RESPONSE_CODE) or 0)
        final_url = str(handle.getinfo(pycurl.EFFECTIVE_URL) or request.url)
        handle.reset()
        self._idle.append(handle)
        url = request.url
        result: Response | CachedexError
        if code == pycurl.E_WRITE_ERROR and request._reason is not None:
            result = TooBig(url, request._reason)
        elif code:
            result = self._transport_error(request, code, message)
        elif status in request.ok:
            result = Response(final_url, status, request._headers, bytes(request._body))
        elif status == 404:
            result = SourceNotFound(url, "not found (HTTP 404)")
        elif status == 429 or status >= 500:
            problem = "too many requests (HTTP 429)" if status == 429 else f"server error (HTTP {status})"
            result = self._retry_or(request, problem, request._headers.get("retry-after"))
        else:
            result = SourceError(url, f"request refused (HTTP {status})")
        if result is not _RETRIED:
            request._body = bytearray()
            request._deliver(result)

    def _transport_error(self, request: Request, code: int, message: str) -> CachedexError:
        if code in (pycurl.E_UNSUPPORTED_PROTOCOL, pycurl.E_TOO_MANY_REDIRECTS):
            return SourceError(request.url, f"refused a redirect ({message}); only http(s) URLs are followed")
        if code == pycurl.E_OPERATION_TIMEDOUT:
            what = (
                f"no data for {self.options.timeout:g} s"
                if "Operation too slow" in message
                or "Connection timed out" in message
                or "Connection timeout" in message
                else f"not done within the {self.options.deadline:g} s deadline"
            )
            return self._retry_or(request, f"timed out ({what})", None)
        if code in _RETRYABLE:
            return self._retry_or(request, _describe(code, message), None)
        return SourceError(request.url, _describe(code, message))

    def _retry_or(self, request: Request, problem: str, retry_after: str | None) -> CachedexError:
        tries = self.options.retries + 1
        if request.attempt >= tries:
            return SourceError(request.url, f"{problem}, after {tries} attempt{'s' if tries > 1 else ''}")
        pause = self.options.backoff * (2 ** (request.attempt - 1))
        asked = _retry_after_seconds(retry_after)
        if asked is not None:
            if asked > MAX_RETRY_AFTER:
                return SourceError(request.url, f"{problem}; the server asks to retry in {asked:.0f} s, too long")
            pause = max(pause, asked)
        heapq.heappush(self._delayed, (time.monotonic() + pause, next(self._order), request))
        return _RETRIED


class _Retried(CachedexError):
    """Marks a request that was scheduled again (never raised)."""


_RETRIED = _Retried("retried")


def _delivery(
    results: queue.SimpleQueue[tuple[Any, Any]], key: Any, decode: Callable[[Response], Any]
) -> Callable[[Response | CachedexError], None]:
    def deliver(result: Response | CachedexError) -> None:
        if isinstance(result, Response):
            try:
                value: Any = decode(result)
            except CachedexError as exc:
                value = exc
            results.put((key, value))
        else:
            results.put((key, result))

    return deliver


def _describe(code: int, message: str) -> str:
    if code in (pycurl.E_COULDNT_CONNECT, pycurl.E_COULDNT_RESOLVE_HOST, pycurl.E_COULDNT_RESOLVE_PROXY):
        return f"cannot connect ({message})"
    if code in (pycurl.E_RECV_ERROR, pycurl.E_PARTIAL_FILE, pycurl.E_GOT_NOTHING, pycurl.E_SEND_ERROR):
        return f"connection closed before the whole answer arrived ({message})"
    if code == pycurl.E_BAD_CONTENT_ENCODING:
        return f"the server's compressed answer is corrupt ({message})"
    if code in (pycurl.E_SSL_CACERT, pycurl.E_SSL_CONNECT_ERROR):
        return f"TLS failed ({message}); set http.ca_bundle or SSL_CERT_FILE for a private CA"
    return f"HTTP transfer failed ({message or f'libcurl error {code}'})"


def _retry_after_seconds(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (a number or an HTTP date), or None."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _ca_bundle(options: HttpOptions) -> str | None:
    """The CA certificates to trust: ``http.ca_bundle``, else ``$SSL_CERT_FILE``, else
    the system's (what Python's own ssl module uses), else libcurl's default."""
    for candidate in (options.ca_bundle, os.environ.get("SSL_CERT_FILE"), ssl.get_default_verify_paths().cafile):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None
