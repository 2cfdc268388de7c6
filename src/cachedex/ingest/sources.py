"""Read files from a mirror: a local folder, a ``file://`` URL or ``http(s)://``.

A :class:`Source` hides where the mirror is, as httpx's transport hides the network:
callers ask for paths relative to the mirror's root and get bytes, or
:class:`~cachedex.errors.SourceNotFound`, or another :class:`~cachedex.errors.SourceError`
naming the full URL and the problem. Every read says how many bytes it may take
(``limit``): a file larger than that is refused, locally as over HTTP, before it is read
whole. :meth:`Source.read_many` reads many small files at once (over HTTP, concurrently)
and hands back each one decoded to the value the caller needs. Here: the base, the
HTTP mirror and :func:`open_source`; a folder's source is :mod:`.local_source`'s.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit

import msgspec

from ..errors import CachedexError, SourceError

if TYPE_CHECKING:  # a folder's reading process imports this module: not libcurl, nor the config's YAML
    from ..config import RegistryAuth
    from .http import HttpClient, ProgressCallback, Request, Response

__all__ = [
    "NETWORK_SCHEMES",
    "Fetched",
    "HttpSource",
    "Send",
    "Source",
    "conditional_get",
    "open_source",
    "over_network",
    "read_at_most",
]

K = TypeVar("K")
V = TypeVar("V")

#: Turns a file's bytes (and its URL, for messages) into the value a caller keeps.
Decoder = Callable[[str, bytes | bytearray], V]


class Fetched(msgspec.Struct, frozen=True):
    """A file's bytes plus the HTTP validators the server sent with it."""

    data: bytes | bytearray
    etag: str | None = None
    last_modified: str | None = None


#: Sends one request: ``(url, *, method, headers, limit, ok, progress) -> Response``, as
#: :class:`Request` takes them (:meth:`HttpSource.send`, ``RegistrySession.request``).
Send = Callable[..., "Response"]


def conditional_get(
    send: Send,
    url: str,
    headers: Sequence[str] = (),
    *,
    limit: int,
    etag: str | None,
    last_modified: str | None,
    progress: ProgressCallback | None,
    raw: bool = False,
) -> Fetched | None:
    """GET ``url`` with ``headers``, unless the server says it still has ``etag`` or
    ``last_modified`` (a 304: None). A 304 to a request that named neither is an error.
    ``raw``: the bytes as stored (see :class:`.http_requests.Request`)."""
    conditional = [f"If-None-Match: {etag}"] if etag else []
    if last_modified:
        conditional.append(f"If-Modified-Since: {last_modified}")
    stored = {"raw": True} if raw else {}  # (an OCI registry's send takes no such option)
    response = send(url, headers=[*headers, *conditional], limit=limit, ok=(200, 304), progress=progress, **stored)
    if response.status == 304:
        if not conditional:
            raise SourceError(url, "unexpected 304 Not Modified to an unconditional request")
        return None
    return Fetched(response.body, response.headers.get("etag"), response.headers.get("last-modified"))


class Source(ABC):
    """A mirror's root, that files can be read from. The one seam between ingest and
    the world: every read of a mirror goes through one of these methods."""

    url: str
    #: A local folder reads small files one after the other; HTTP reads them at once.
    concurrent = False

    def join(self, path: str) -> str:
        """The full URL of ``path`` under this mirror, for messages."""
        return f"{self.url.rstrip('/')}/{path}"

    @abstractmethod
    def fetch(
        self,
        path: str,
        *,
        limit: int,
        etag: str | None = None,
        last_modified: str | None = None,
        progress: ProgressCallback | None = None,
    ) -> Fetched | None:
        """Read ``path`` (at most ``limit`` bytes); ``None`` when the validators given
        show it has not changed since."""

    def read(self, path: str, *, limit: int) -> bytes | bytearray:
        """Read ``path`` whole (at most ``limit`` bytes). SourceNotFound or SourceError."""
        fetched = self.fetch(path, limit=limit)
        if fetched is None:  # no validators were given: a server that says "unchanged" is wrong
            raise SourceError(self.join(path), "unexpected 304 Not Modified to an unconditional request")
        return fetched.data

    @abstractmethod
    def size(self, path: str) -> int | None:
        """Size in bytes of ``path`` without reading it (HEAD over HTTP); None if unknown."""

    @abstractmethod
    def read_many(
        self, items: Iterable[tuple[K, str]], decode: Decoder[V], *, limit: int
    ) -> Iterator[tuple[K, V | CachedexError]]:
        """Read each ``(key, path)`` and yield ``(key, decode(url, data))``, or the
        CachedexError that ended it, in any order."""

    def list_dir(self, path: str) -> list[str] | None:
        """File names in folder ``path``, or None where the source cannot list."""
        return None

    def list_folders(self, path: str) -> list[str] | None:
        """Names of the folders in folder ``path`` ([] if there is none), or None where the
        source cannot list."""
        return None


def read_at_most(read: Callable[[int], bytes], limit: int) -> bytes:
    """At most ``limit`` bytes from ``read`` (a file's, a stream's), to its end, taken a
    MiB at a time: one read of the whole limit reserves it all at once (a lockfile's
    256 MiB for 100 kB of text, which a memory limit refused)."""
    parts: list[bytes] = []
    total = 0
    while total < limit and (chunk := read(min(1 << 20, limit - total))):
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


class HttpSource(Source):
    """A mirror behind ``http://`` or ``https://``, read through the sync's :class:`HttpClient`;
    a private one with the credentials ``auth`` names (each request carries them)."""

    concurrent = True

    def __init__(self, url: str, client: HttpClient, auth: RegistryAuth | None = None) -> None:
        from .http import Request  # loaded by the client's maker already (see the imports)

        self.url = url.rstrip("/")
        self.client = client
        self.auth = auth
        self._request = Request
        self._auth_headers: tuple[str, ...] | None = None

    def headers(self, headers: Sequence[str] = ()) -> list[str]:
        """``headers`` and the credentials' ``Authorization``, read from the environment
        at the first request (SourceError naming the mirror when one is not set)."""
        if self._auth_headers is None:
            from .credentials import authorization

            self._auth_headers = (authorization(self.url, self.auth),) if self.auth is not None else ()
        return [*headers, *self._auth_headers]

    @property
    def forbidden_is_missing(self) -> bool:
        """Whether a 403 of this mirror is a missing file's: read without credentials (a
        public S3 bucket without listing answers so for a key it lacks); one refused to
        the credentials given stays a refusal."""
        return self.auth is None

    def request(self, url: str, **options: Any) -> Request:
        """A request of ``url`` as this mirror's are made (:class:`Request`'s options):
        with the credentials; a 403 read without them, or an HTML page in answer (a host's
        soft 404), is SourceNotFound."""
        headers = self.headers(options.pop("headers", ()))
        return self._request(
            url, headers=headers, forbidden_is_missing=self.forbidden_is_missing, page_is_missing=True, **options
        )

    def send(self, url: str, **options: Any) -> Response:
        """One request through the client (see :data:`Send`)."""
        return self.client.request(self.request(url, **options))

    def fetch(
        self,
        path: str,
        *,
        limit: int,
        etag: str | None = None,
        last_modified: str | None = None,
        progress: ProgressCallback | None = None,
    ) -> Fetched | None:
        return conditional_get(
            self.send,
            self.join(path),
            limit=limit,
            etag=etag,
            last_modified=last_modified,
            progress=progress,
            raw=progress is None and _content_addressed(path),
        )

    def size(self, path: str) -> int | None:
        from .head_fallback import FirstByteRequest, size_by_head_or_first_byte  # (loads no libcurl)

        def probe(url: str) -> FirstByteRequest:
            return FirstByteRequest(
                url, headers=self.headers(), forbidden_is_missing=self.forbidden_is_missing, page_is_missing=True
            )

        return size_by_head_or_first_byte(
            self, self.join(path), (), send=self.send, client=self.client, probe=probe, pages_are_missing=True
        )

    def read_many(
        self, items: Iterable[tuple[K, str]], decode: Decoder[V], *, limit: int
    ) -> Iterator[tuple[K, V | CachedexError]]:
        def body(response: Response) -> V:
            return decode(response.url, response.body)

        request = self.request
        return self.client.map(
            ((key, request(self.join(path), limit=limit, raw=_content_addressed(path))) for key, path in items),
            body,
        )


def _content_addressed(path: str) -> bool:
    """Whether ``path`` is a v3 blob, named by the checksum of its bytes as stored: a
    small read of it is never decoded, whatever its label (a spec's blob is stored
    gzipped, and an S3 object may be labelled ``Content-Encoding: gzip``)."""
    return path.startswith("blobs/") or "/blobs/" in path


#: The schemes of mirrors read over the network (HTTP, and OCI registries over it).
NETWORK_SCHEMES = ("http", "https", "oci", "oci+http")


def over_network(url: str) -> bool:
    """Whether the mirror at ``url`` is read over the network (else from a folder)."""
    return urlsplit(url).scheme in NETWORK_SCHEMES


def open_source(url: str, *, client: HttpClient | None, registries: Sequence[RegistryAuth] = ()) -> Source:
    """The :class:`Source` for ``url``: a local path, ``file://``, ``http(s)://``, or an OCI
    registry (``oci://``, ``oci+http://``). ``registries`` say where the credentials of a
    registry or a private http(s) mirror are. HTTP and OCI need the sync's ``client``."""
    parts = urlsplit(url)
    if parts.scheme in NETWORK_SCHEMES:
        if client is None:
            raise RuntimeError("an HTTP mirror needs an HTTP client")
        from .credentials import auth_for

        if parts.scheme.startswith("oci"):
            from .oci import OciSource, registry_url  # the registry protocol is only loaded when used

            # (by the registry it reaches: oci://user/cache is Docker Hub's, not a host "user"'s)
            return OciSource(url, client, auth_for(registry_url(url), registries))
        return HttpSource(url, client, auth_for(url, registries))
    from .local_source import LocalSource  # (it imports this module: its Source, read_at_most)

    if parts.scheme == "file":
        return LocalSource(Path(unquote(parts.path)), url)
    if parts.scheme == "" or (len(parts.scheme) == 1 and os.name == "nt"):
        return LocalSource(Path(url), url)
    raise SourceError(url, f"unsupported URL scheme {parts.scheme!r} (use a path, file://, http(s)://, oci://)")
