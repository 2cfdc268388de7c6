"""Fetch files from a mirror: a local folder, a ``file://`` URL or ``http(s)://``.

A :class:`Source` hides where the mirror is. Callers ask for paths relative to the
mirror root and get bytes, or :class:`~cachedex.errors.SourceNotFound`, or another
:class:`~cachedex.errors.SourceError` naming the full URL and the problem.

HTTP reads use one shared ``httpx.Client`` (connection pooling, gzip transfer) with
timeouts, and retry with exponential backoff on connection errors, timeouts, bodies
cut short and 5xx answers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import msgspec

from .. import __version__
from ..config import HttpOptions
from ..errors import CachedexError, SourceError, SourceNotFound

if TYPE_CHECKING:  # httpx is imported only when a mirror is remote: it costs 0.1 s to load
    import httpx

__all__ = [
    "Fetched",
    "HttpOptions",
    "HttpSource",
    "LocalSource",
    "Source",
    "make_http_client",
    "open_source",
]


class Fetched(msgspec.Struct, frozen=True):
    """A file's bytes plus the HTTP validators the server sent with it."""

    data: bytes
    etag: str | None = None
    last_modified: str | None = None


#: Called with (bytes received so far, total bytes or None) while a big body downloads.
ProgressCallback = Callable[[int, int | None], None]


class Source:
    """Base class: a mirror root that files can be read from."""

    url: str
    #: Threads that read small files at once (None: the HTTP concurrency setting).
    readers: int | None = None

    def join(self, path: str) -> str:
        """The full URL of ``path`` under this mirror, for messages."""
        return f"{self.url.rstrip('/')}/{path}"

    def fetch(
        self,
        path: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        progress: ProgressCallback | None = None,
    ) -> Fetched | None:
        """Read ``path``; ``None`` when the validators show it has not changed."""
        raise NotImplementedError

    def read(self, path: str) -> bytes:
        """Read ``path`` whole. Raises SourceNotFound or SourceError."""
        fetched = self.fetch(path)
        assert fetched is not None  # no validators given, so never "unchanged"
        return fetched.data

    def size(self, path: str) -> int | None:
        """Size in bytes of ``path`` without reading it (HEAD for HTTP); None if unknown."""
        raise NotImplementedError

    def list_dir(self, path: str) -> list[str] | None:
        """File names in folder ``path``, or None where the source cannot list."""
        return None

    def close(self) -> None:
        """Release connections."""


class LocalSource(Source):
    """A mirror in a local folder (given as a path or a ``file://`` URL)."""

    #: Threads that read small files at once: enough to overlap a cold disk cache.
    readers = 1

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self._root_text = str(root)
        self.url = url

    def _path(self, path: str) -> Path:
        return self.root / path

    def fetch(self, path, *, etag=None, last_modified=None, progress=None):  # type: ignore[no-untyped-def]
        return Fetched(data=self.read(path))

    def read(self, path: str) -> bytes:
        # os-level calls: a sync reads one small manifest per spec, so this is hot.
        try:
            with open(os.path.join(self._root_text, path), "rb") as handle:
                return handle.read()
        except FileNotFoundError as exc:
            raise SourceNotFound(self.join(path), "not found") from exc
        except IsADirectoryError as exc:
            raise SourceNotFound(self.join(path), "is a folder, not a file") from exc
        except OSError as exc:
            raise SourceError(self.join(path), f"cannot read: {exc.strerror or exc}") from exc

    def size(self, path: str) -> int | None:
        try:
            return self._path(path).stat().st_size
        except OSError:
            return None

    def list_dir(self, path: str) -> list[str] | None:
        try:
            return sorted(entry.name for entry in os.scandir(self._path(path)) if entry.is_file())
        except OSError:
            return None


class HttpSource(Source):
    """A mirror behind ``http://`` or ``https://``; thread-safe."""

    def __init__(self, url: str, client: httpx.Client, options: HttpOptions) -> None:
        self.url = url.rstrip("/")
        self.client = client
        self.options = options

    def fetch(self, path, *, etag=None, last_modified=None, progress=None):  # type: ignore[no-untyped-def]
        url = self.join(path)
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        response_status, data, response_headers = self._with_retries(url, lambda: self._get(url, headers, progress))
        if response_status == 304:
            return None
        return Fetched(
            data=data,
            etag=response_headers.get("etag"),
            last_modified=response_headers.get("last-modified"),
        )

    def size(self, path: str) -> int | None:
        url = self.join(path)

        def head() -> tuple[int, bytes, httpx.Headers]:
            response = self.client.head(url)
            self._check_status(url, response.status_code)
            return response.status_code, b"", response.headers

        try:
            _, _, headers = self._with_retries(url, head)
        except SourceNotFound:
            return None
        length = headers.get("content-length")
        return int(length) if length and length.isdigit() else None

    def _get(
        self, url: str, headers: dict[str, str], progress: ProgressCallback | None
    ) -> tuple[int, bytes, httpx.Headers]:
        with self.client.stream("GET", url, headers=headers) as response:
            if response.status_code == 304:
                return 304, b"", response.headers
            self._check_status(url, response.status_code)
            total_header = response.headers.get("content-length")
            total = int(total_header) if total_header and total_header.isdigit() else None
            if response.headers.get("content-encoding"):
                total = None  # Content-Length counts compressed bytes; we count decoded ones
            chunks = bytearray()
            for chunk in response.iter_bytes(chunk_size=1 << 20):
                chunks += chunk
                if progress is not None:
                    progress(len(chunks), total)
            return response.status_code, bytes(chunks), response.headers

    @staticmethod
    def _check_status(url: str, status: int) -> None:
        if status == 404:
            raise SourceNotFound(url, "not found (HTTP 404)")
        if status >= 500:
            raise _ServerError(url, f"server error (HTTP {status})")
        if status >= 400:
            raise SourceError(url, f"request refused (HTTP {status})")

    def _with_retries(
        self, url: str, attempt: Callable[[], tuple[int, bytes, httpx.Headers]]
    ) -> tuple[int, bytes, httpx.Headers]:
        import httpx

        pause = self.options.backoff
        tries = self.options.retries + 1
        for number in range(1, tries + 1):
            try:
                return attempt()
            except _ServerError as exc:
                if number == tries:
                    raise SourceError(url, f"{exc.problem}, after {tries} attempts") from exc
            except httpx.TimeoutException as exc:
                if number == tries:
                    raise SourceError(
                        url,
                        f"timed out (no data for {self.options.timeout:g} s), after {tries} attempts",
                    ) from exc
            except httpx.RemoteProtocolError as exc:
                if number == tries:
                    raise SourceError(
                        url,
                        f"connection closed before the whole answer arrived ({exc}), after {tries} attempts",
                    ) from exc
            except httpx.TransportError as exc:  # connection refused, reset, DNS
                if number == tries:
                    raise SourceError(
                        url, f"cannot connect ({exc or type(exc).__name__}), after {tries} attempts"
                    ) from exc
            except httpx.HTTPError as exc:
                raise SourceError(url, f"HTTP error: {exc}") from exc
            time.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")


class _ServerError(SourceError):
    """A 5xx answer: worth retrying."""


def make_http_client(options: HttpOptions) -> httpx.Client:
    """One pooled client for all HTTP mirrors of a sync."""
    import httpx

    limits = httpx.Limits(max_connections=options.concurrency, max_keepalive_connections=options.concurrency)
    return httpx.Client(
        timeout=httpx.Timeout(options.timeout),
        limits=limits,
        follow_redirects=True,
        headers={"User-Agent": f"cachedex/{__version__}"},
    )


def open_source(url: str, *, client: httpx.Client | None, options: HttpOptions) -> Source:
    """Return the :class:`Source` for ``url`` (a local path, ``file://`` or ``http(s)://``)."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        if client is None:
            raise CachedexError("internal: an HTTP mirror needs an HTTP client")
        return HttpSource(url, client, options)
    if parts.scheme == "file":
        return LocalSource(Path(unquote(parts.path)), url)
    if parts.scheme == "" or (len(parts.scheme) == 1 and os.name == "nt"):
        return LocalSource(Path(url), url)
    raise SourceError(url, f"unsupported URL scheme {parts.scheme!r} (use a path, file:// or http(s)://)")
