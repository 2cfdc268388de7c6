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
``Retry-After`` (up to a bound). Redirects are followed to http(s) URLs only (from an
https URL to https only). Proxies
come from ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` (as pip reads them), the CA bundle
from ``http.ca_bundle``, else ``SSL_CERT_FILE``, else the system's. A URL goes
percent-encoded where it is not ASCII, a validator a server sent as the bytes it sent,
and a request libcurl cannot take anyway fails alone (the engine goes on); a small read
sent compressed though nothing asked for it is decoded, within its limit.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import TypeVar

import pycurl

from ..config import HttpOptions
from ..errors import CachedexError, SourceError, SourceNotFound, TooBig
from .curl_errors import RETRYABLE, describe_failure, refused_tunnel
from .curl_handles import ca_bundle, fitting_concurrency, new_handle, unauthorized
from .curl_options import HandleOptions
from .http_requests import (
    FORBIDDEN_MISSING,
    HTML_PAGE,
    MAX_RETRY_AFTER,
    MapJob,
    ProgressCallback,
    Request,
    Response,
    html_page,
    parse_headers,
    retry_after_seconds,
    server_said,
    undo_content_encoding,
)

__all__ = ["HttpClient", "ProgressCallback", "Request", "Response", "TooBig"]

#: The longest the engine waits on its transfers before it looks for new requests (seconds).
_POLL = 0.005

K = TypeVar("K")
V = TypeVar("V")


class HttpClient:
    """One pool of connections and one engine thread for every HTTP request of a sync."""

    def __init__(self, options: HttpOptions) -> None:
        self.options = options
        self._cainfo = ca_bundle(options)  # (first: a ConfigError leaves nothing to close)
        #: Requests in flight at once: ``http.concurrency``, or fewer when the process may
        #: not open that many files (each is a socket, and a name being resolved two more):
        #: past the limit, connections failed as "cannot connect", then anything else did.
        self.concurrency = fitting_concurrency(options.concurrency)
        self._multi = pycurl.CurlMulti()
        self._multi.setopt(pycurl.M_MAXCONNECTS, max(self.concurrency, 4))
        self._multi.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX)
        self._idle: list[pycurl.Curl] = []
        self._active: dict[pycurl.Curl, Request] = {}
        self._submitted: deque[Request] = deque()
        self._jobs: deque[MapJob] = deque()
        self._delayed: list[tuple[float, int, Request]] = []  # (when, order, request): retries waiting
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._work = threading.Event()  # set when a request or a map arrives
        self._closed = False
        self._failed: BaseException | None = None  # what ended the engine, if it failed
        self._handle_options = HandleOptions()  # (reads the proxies from the environment)
        self._engine = threading.Thread(target=self._run, name="cachedex-http", daemon=True)
        self._engine.start()

    # -- the public face -----------------------------------------------------------------------

    def request(self, request: Request) -> Response:
        """Do ``request`` (retrying what is worth it); raises the SourceError that ended it."""
        done: Future[Response | CachedexError] = Future()
        request._deliver = done.set_result
        with self._lock:
            if self._failed is not None:  # (the next tag's requests: said as what it is, not a bug of its own)
                raise _engine_failed(request.url, self._failed)
            if self._closed:
                raise RuntimeError("the HTTP client is closed")
            self._submitted.append(request)
        self._wake()
        result = done.result()
        if isinstance(result, CachedexError):
            raise result
        return result

    def map(
        self, requests: Iterable[tuple[K, Request]], decode: Callable[[Response], V]
    ) -> Iterator[tuple[K, V | CachedexError]]:
        """Do every request, ``http.concurrency`` at a time, and yield ``(key, value)`` as
        each finishes: ``decode(response)`` (run as the response arrives, in the engine
        thread, so that only its value is kept), or the CachedexError that ended it (a
        decode's own CachedexError too). The engine draws requests from ``requests`` as
        it has room for them."""
        job = MapJob(iter(requests), decode)
        with self._lock:
            if self._failed is not None:
                raise _engine_failed("HTTP", self._failed)
            if self._closed:
                raise RuntimeError("the HTTP client is closed")
            self._jobs.append(job)
        self._wake()
        try:
            while True:
                batch = job.results.get()
                if batch is None:
                    return
                if isinstance(batch, BaseException):
                    raise batch
                yield from batch
        finally:
            job.cancelled = True  # the caller stopped early (or is done): the engine lets it go

    def close(self) -> None:
        """Stop the engine and release every connection."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs)
        self._wake()
        self._engine.join(timeout=10)
        for job in jobs:  # whoever still waits for a map's results is told it is over
            job.results.put(RuntimeError("the HTTP client was closed"))
        if not self._engine.is_alive():  # (its structures are this thread's now)
            # A single request still waiting is told too: it waited for good, and the
            # interpreter's exit joined its thread.
            for request in self._waiting_requests():
                self._deliver(request, SourceError(request.url, "not answered: the HTTP client was closed"))
        for handle in [*self._idle, *self._active]:
            handle.close()
        self._multi.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the engine ----------------------------------------------------------------------------

    def _wake(self) -> None:
        self._work.set()

    def _next_requests(self, room: int) -> list[Request]:
        """Up to ``room`` requests to start: retries that are due, single requests, then
        the requests of maps (each map in turn fills what is left)."""
        now = time.monotonic()
        starting: list[Request] = []
        while self._delayed and self._delayed[0][0] <= now and len(starting) < room:
            starting.append(heapq.heappop(self._delayed)[2])
        with self._lock:
            while self._submitted and len(starting) < room:
                starting.append(self._submitted.popleft())
            jobs = [job for job in self._jobs if not job.exhausted]
        for job in jobs:
            if len(starting) >= room:
                break
            starting.extend(job.draw(room - len(starting)))
        return starting

    def _run(self) -> None:
        """The engine's loop; should it fail (a bug, nothing a server sends should do
        it), every request waiting is given the error, which would otherwise wait for good."""
        try:
            self._loop()
        except BaseException as exc:  # (said in each request's error: no traceback from a thread)
            self._fail_everything(exc)

    def _waiting_requests(self) -> list[Request]:
        """Every single request not answered yet (in flight, queued, or due for a retry),
        taken off the queues: the engine has stopped, and each is to be told why."""
        with self._lock:
            waiting = [*self._active.values(), *self._submitted, *(entry[2] for entry in self._delayed)]
            self._submitted.clear()
        self._delayed.clear()
        return waiting

    def _fail_everything(self, exc: BaseException) -> None:
        with self._lock:
            self._closed = True
            self._failed = exc
            jobs = list(self._jobs)
        waiting = self._waiting_requests()
        self._active.clear()
        for request in waiting:
            self._deliver(request, _engine_failed(request.url, exc))
        for job in jobs:
            job.results.put(_engine_failed("HTTP", exc))

    def _finish_guarded(self, handle: pycurl.Curl, code: int, message: str) -> None:
        """:meth:`_finish`, whose request, should it raise, is told (it is no longer
        among those in flight that :meth:`_fail_everything` tells)."""
        request = self._active.get(handle)
        try:
            self._finish(handle, code, message)
        except BaseException as exc:
            if request is not None:
                self._deliver(request, _engine_failed(request.url, exc))
            raise

    def _loop(self) -> None:
        multi = self._multi
        limit = self.concurrency
        while True:
            with self._lock:
                if self._closed:
                    return
            room = limit - len(self._active)
            if room > 0:
                for request in self._next_requests(room):
                    try:
                        self._start(request)
                    except Exception as exc:  # noqa: BLE001 - said to its request, whatever it is
                        # (an exception here would end the engine, and this request, no
                        # longer among those waiting, would wait for good: the URL or a
                        # header libcurl cannot take)
                        self._deliver(request, SourceError(request.url, f"cannot be requested ({exc})"))
            while True:
                status, _running = multi.perform()
                if status != pycurl.E_CALL_MULTI_PERFORM:
                    break
            while True:
                queued, succeeded, failed = multi.info_read()
                for handle in succeeded:
                    self._finish_guarded(handle, 0, "")
                for handle, code, message in failed:
                    self._finish_guarded(handle, code, message)
                if not queued:
                    break
            self._flush_jobs()
            self._wait()

    def _flush_jobs(self) -> None:
        with self._lock:
            jobs = list(self._jobs)
        for job in jobs:
            if job.flush():
                with self._lock:
                    self._jobs.remove(job)

    def _has_work(self) -> bool:
        """Whether requests wait to start: submitted, or a job's yet to be drawn (a job
        drawn whole waits only for its answers, as the transfers in flight do)."""
        with self._lock:
            return bool(self._submitted) or any(not job.exhausted for job in self._jobs)

    def _wait(self) -> None:
        """Until a transfer's socket is ready or libcurl's timer fires, at most a few
        milliseconds (new work is then picked up); with nothing in flight, until new work
        arrives or a retry is due."""
        due = max(0.0, self._delayed[0][0] - time.monotonic()) if self._delayed else 1.0
        if not self._active:
            if not self._has_work():
                self._work.wait(min(due, 1.0))
                self._work.clear()
            return
        timeout = self._multi.timeout() / 1000.0
        if timeout < 0 or timeout > _POLL:
            timeout = _POLL
        if len(self._active) < self.concurrency and self._has_work():
            timeout = 0.0  # (more to start: back at once)
        self._multi.select(min(timeout, due))

    def _start(self, request: Request) -> None:
        handle = self._idle.pop() if self._idle else new_handle(self.options, self._cainfo)
        try:
            self._handle_options.prepare(handle, request)
        except BaseException:
            self._handle_options.forget(handle)  # its options half set: all of them again next time
            self._idle.append(handle)
            raise
        self._active[handle] = request
        self._multi.add_handle(handle)

    def _finish(self, handle: pycurl.Curl, code: int, message: str) -> None:
        request = self._active.pop(handle)
        self._multi.remove_handle(handle)
        status = int(handle.getinfo(pycurl.RESPONSE_CODE) or 0)
        self._idle.append(handle)
        url = request.url
        result: Response | CachedexError
        too_big = f"larger than {request.limit:,} bytes, the limit for this kind of file"
        stopped = (code == pycurl.E_WRITE_ERROR and request._reason is not None) or code == pycurl.E_FILESIZE_EXCEEDED
        cut = stopped and status >= 400
        if cut:
            # An error page over the limit (GitHub Pages' 404 is 9 kB; S3's 416 to a range,
            # a registry's 401 in JSON, both a request may take as answers): its status is
            # the answer, its body cut short.
            stopped, code = False, 0
        if stopped:
            result = TooBig(url, request._reason or too_big)
        elif code:
            result = self._transport_error(request, code, message)
        elif status in request.ok:
            if len(request._body) > request.limit and not cut:  # a body libcurl could not stop in time
                result = TooBig(url, too_big)
            else:
                final_url = str(handle.getinfo(pycurl.EFFECTIVE_URL) or url)
                body: bytes | bytearray = request._body  # no copy: it may be big
                try:
                    if request.progress is None and not request.raw and not cut:  # a small read (HandleOptions.prepare)
                        body = undo_content_encoding(request._raw_headers, body, request.limit)
                    result = Response(final_url, status, request._raw_headers, body)
                    if status == 200 and request.page_is_missing and html_page(result):  # (a soft 404)
                        result = SourceNotFound(url, HTML_PAGE)
                except ValueError as exc:
                    result = SourceError(url, str(exc))
        elif status == 404:
            result = SourceNotFound(url, "not found (HTTP 404)")
        elif status == 403 and request.forbidden_is_missing:
            # (S3 without s3:ListBucket, public buckets so read, cannot say which it is)
            result = SourceNotFound(url, FORBIDDEN_MISSING)
        elif status == 429 or status >= 500:
            problem = "too many requests (HTTP 429)" if status == 429 else f"server error (HTTP {status})"
            retry_after = parse_headers(request._raw_headers).get("retry-after")
            result = self._retry_or(request, problem + server_said(request._body), retry_after)
        elif status == 206:  # (no request here asks for a range)
            result = SourceError(
                url,
                "a part of the file (HTTP 206) where the whole was asked: a cache or proxy in front of it "
                "answered another request's range",
            )
        elif status == 401:  # (an OCI registry's first 401 is its session's to answer)
            result = SourceError(url, f"request refused (HTTP 401: {unauthorized(request, handle, url)})")
        else:  # (a 403's AccessDenied, a registry's DENIED: the server's words say which)
            result = SourceError(url, f"request refused (HTTP {status}){server_said(request._body)}")
        if result is not _RETRIED:
            self._deliver(request, result)

    def _deliver(self, request: Request, result: Response | CachedexError) -> None:
        request._body = bytearray()
        if request._job is not None:
            request._job.deliver(request._key, result)
        elif request._deliver is not None:
            request._deliver(result)

    def _transport_error(self, request: Request, code: int, message: str) -> CachedexError:
        if code == pycurl.E_TOO_MANY_REDIRECTS:
            return SourceError(request.url, f"redirected too many times, in a loop or a chain ({message})")
        if code == pycurl.E_UNSUPPORTED_PROTOCOL:
            if "HTTP/0.9" in message:  # (libcurl's code for an answer without a status line too)
                return SourceError(request.url, f"the server's answer is not HTTP ({message})")
            if '"http"' in message and request.url[:6].lower() == "https:":
                return SourceError(
                    request.url,
                    f"refused a redirect to plain http ({message}): what is asked over https is not read "
                    "unencrypted; write the mirror's http:// URL if that is meant",
                )
            return SourceError(request.url, f"refused a redirect ({message}); only http(s) URLs are followed")
        if code == pycurl.E_SSL_CONNECT_ERROR and "wrong version number" in message:
            # A plain-HTTP server asked for TLS: no retry, nor a CA bundle, will change that.
            return SourceError(request.url, describe_failure(code, message))
        if code == pycurl.E_OPERATION_TIMEDOUT:
            idle = "too slow" in message or "Connection timed out" in message or "Connection timeout" in message
            if idle:
                return self._retry_or(request, f"timed out (no data for {self.options.timeout:g} s)", None)
            # http.deadline is a request's time in all: retried, it took that again and
            # again; a read that resumes where it stopped goes on
            problem = f"timed out (not done within {self.options.deadline:g} s)"
            return self._retry_or(request, problem, None) if request.resumes else SourceError(request.url, problem)
        refused = refused_tunnel(message)
        if refused is not None:  # (said as the proxy's, and not tried again: "cannot connect", 4 times)
            return SourceError(request.url, refused)
        if code in RETRYABLE:
            return self._retry_or(request, describe_failure(code, message), None)
        return SourceError(request.url, describe_failure(code, message))

    def _retry_or(self, request: Request, problem: str, retry_after: str | None) -> CachedexError:
        tries = self.options.retries + 1
        if request.attempt >= tries:
            return SourceError(request.url, f"{problem}, after {tries} attempt{'s' if tries > 1 else ''}")
        pause = self.options.backoff * (2 ** (request.attempt - 1))
        asked = retry_after_seconds(retry_after)
        if asked is not None:
            if asked > MAX_RETRY_AFTER:
                return SourceError(request.url, f"{problem}; the server asks to retry in {asked:.0f} s, too long")
            pause = max(pause, asked)
        heapq.heappush(self._delayed, (time.monotonic() + pause, next(self._order), request))
        return _RETRIED


def _engine_failed(url: str, exc: BaseException) -> SourceError:
    return SourceError(url, f"the HTTP engine failed ({type(exc).__name__}: {exc})")


class _Retried(CachedexError):
    """Marks a request that was scheduled again (never raised)."""


_RETRIED = _Retried("retried")
