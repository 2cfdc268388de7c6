"""Read files from a mirror: a local folder, a ``file://`` URL or ``http(s)://``.

A :class:`Source` hides where the mirror is, as httpx's transport hides the network:
callers ask for paths relative to the mirror's root and get bytes, or
:class:`~cachedex.errors.SourceNotFound`, or another :class:`~cachedex.errors.SourceError`
naming the full URL and the problem. Every read says how many bytes it may take
(``limit``): a file larger than that is refused, locally as over HTTP, before it is read
whole. :meth:`Source.read_many` reads many small files at once (over HTTP, concurrently)
and hands back each one decoded to the value the caller needs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit

import msgspec

from ..errors import CachedexError, SourceError, SourceNotFound, TooBig

if TYPE_CHECKING:  # a folder's reading process imports this module: not libcurl, nor the config's YAML
    from ..config import RegistryAuth
    from .http import HttpClient, ProgressCallback, Response

__all__ = [
    "NETWORK_SCHEMES",
    "Fetched",
    "HttpSource",
    "LocalSource",
    "Send",
    "Source",
    "conditional_get",
    "head_size",
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


def head_size(send: Send, url: str, headers: Sequence[str] = ()) -> int | None:
    """The Content-Length a HEAD of ``url`` answers; None if it is missing or not found."""
    try:
        response = send(url, method="HEAD", headers=headers, limit=0)
    except SourceNotFound:
        return None
    length = response.headers.get("content-length", "")
    return int(length) if length.isdigit() else None


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


#: Bytes asked by the first read of a file: more than a spec manifest, signed or not.
_FIRST_READ = 16 * 1024
#: Threads reading a folder's small files at once when the reads wait on the disk.
_LOCAL_READERS = 4
#: Files read per window, and per task of a reading thread.
_WINDOW, _RUN = 512, 64
#: A threaded read checks every this many windows whether the files are cached by now.
_RECHECK = 8


class _Waits:
    """Whether this thread waited for most of what it did since this was made.

    On Linux, by the voluntary context switches of the thread: one per read that waited
    on the disk; a thread that was only preempted (another process wanted the CPU)
    switches involuntarily, and its reads were no slower. Elsewhere, by the time that
    was not this thread's CPU time, which preemption inflates too."""

    def __init__(self) -> None:
        self._switches = _voluntary_switches()
        self._wall, self._cpu = time.perf_counter(), time.thread_time()

    def most(self, reads: int) -> bool:
        """Whether at least a quarter of ``reads`` waited (or, without the count, most of
        the time was spent waiting)."""
        switches = _voluntary_switches()
        if switches is not None and self._switches is not None:
            return switches - self._switches >= reads / 4
        wall, cpu = time.perf_counter() - self._wall, time.thread_time() - self._cpu
        return wall - cpu > wall / 2


def _voluntary_switches() -> int | None:
    """This thread's voluntary context switches so far (Linux), or None."""
    who = getattr(resource, "RUSAGE_THREAD", None)
    return None if who is None else resource.getrusage(who).ru_nvcsw


class LocalSource(Source):
    """A mirror in a local folder (given as a path or a ``file://`` URL)."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self._root_text = str(root)
        self.url = url

    def fetch(
        self,
        path: str,
        *,
        limit: int,
        etag: str | None = None,
        last_modified: str | None = None,
        progress: ProgressCallback | None = None,
    ) -> Fetched | None:
        return Fetched(data=self.read(path, limit=limit))

    def read(self, path: str, *, limit: int) -> bytes | bytearray:
        return self._read(path, limit, None)

    def _read(self, path: str, limit: int, root_fd: int | None) -> bytes | bytearray:
        """``path``'s bytes, opened under ``root_fd`` (the root, opened once for many
        reads: the kernel then walks only the path's own parts) or by its full path."""
        # os-level calls: a sync reads one small manifest per spec, so this is hot.
        try:
            # Non-blocking: a FIFO in a mirror would otherwise wait for a writer forever.
            if root_fd is None:
                fd = os.open(os.path.join(self._root_text, path), os.O_RDONLY | os.O_NONBLOCK)
            else:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK, dir_fd=root_fd)
            try:
                # A manifest fits in one small read, without asking for its size first (a
                # system call per spec saved). Only a file that fills it is asked: reading
                # up to the limit would allocate (and map) that much every time.
                data = os.read(fd, min(_FIRST_READ, limit + 1))
                if len(data) == _FIRST_READ:
                    size = os.fstat(fd).st_size
                    if size > limit:
                        raise TooBig(self.join(path), f"larger than {limit:,} bytes, the limit for this kind of file")
                    if size:  # a file (an index): read whole again, rather than copy the parts
                        os.lseek(fd, 0, os.SEEK_SET)
                        data = os.read(fd, size + 1)
                    else:  # a pipe or /proc: its size is unknown
                        data += read_at_most(functools.partial(os.read, fd), limit + 1 - len(data))
            finally:
                os.close(fd)
        except FileNotFoundError as exc:
            raise SourceNotFound(self.join(path), "not found") from exc
        except IsADirectoryError as exc:
            raise SourceNotFound(self.join(path), "is a folder, not a file") from exc
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            raise SourceError(self.join(path), f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
        if len(data) > limit:
            raise TooBig(self.join(path), f"larger than {limit:,} bytes, the limit for this kind of file")
        return data

    def size(self, path: str) -> int | None:
        try:
            return (self.root / path).stat().st_size
        except (OSError, ValueError):
            return None

    def read_many(
        self, items: Iterable[tuple[K, str]], decode: Decoder[V], *, limit: int
    ) -> Iterator[tuple[K, V | CachedexError]]:
        root_fd = self._open_root()
        base = self.join("")  # (each file's URL is the decoder's to name in a problem)

        def one(item: tuple[K, str]) -> tuple[K, V | CachedexError]:
            key, path = item
            try:
                return key, decode(base + path, self._read(path, limit, root_fd))
            except CachedexError as exc:
                return key, exc

        # Files in the page cache are read fastest by this thread alone: each read is a
        # few microseconds of system calls, and threads would only pass the GIL around
        # (4 threads took 4 x as long here). Files on a disk or a network file system wait
        # on it, one seek each: then several threads keep reads in flight (the reads
        # release the GIL). A window read here tells which: how often the thread had to
        # wait (see _Waits). A threaded run checks again every few windows, as the cache
        # warms.
        pending = iter(items)
        threaded, windows = False, 0
        with contextlib.ExitStack() as stack, ThreadPoolExecutor(max_workers=_LOCAL_READERS) as pool:
            if root_fd is not None:
                stack.callback(os.close, root_fd)
            while window := list(islice(pending, _WINDOW)):
                if threaded and windows % _RECHECK:
                    runs = [window[i : i + _RUN] for i in range(0, len(window), _RUN)]
                    for run in pool.map(lambda run: [one(item) for item in run], runs):
                        yield from run
                else:
                    waits = _Waits()
                    done = [one(item) for item in window]
                    threaded = waits.most(len(window))
                    yield from done
                windows += 1

    def _open_root(self) -> int | None:
        """The root folder opened, to read many files under it; None where that cannot
        be (each is then opened by its full path, which says what is wrong)."""
        if os.open not in os.supports_dir_fd:
            return None
        try:
            return os.open(self._root_text, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return None

    def list_dir(self, path: str) -> list[str] | None:
        try:
            return sorted(entry.name for entry in os.scandir(self.root / path) if entry.is_file())
        except OSError:
            return None

    def list_folders(self, path: str) -> list[str] | None:
        try:
            # A symlink is not followed: a view is a folder of the mirror itself.
            return sorted(e.name for e in os.scandir(self.root / path) if e.is_dir(follow_symlinks=False))
        except FileNotFoundError:
            return []
        except OSError:
            return None


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

    def send(self, url: str, **options: Any) -> Response:
        """One request through the client (see :data:`Send`)."""
        options["headers"] = self.headers(options.get("headers", ()))
        return self.client.request(self._request(url, **options))

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
        return head_size(self.send, self.join(path))

    def read_many(
        self, items: Iterable[tuple[K, str]], decode: Decoder[V], *, limit: int
    ) -> Iterator[tuple[K, V | CachedexError]]:
        def body(response: Response) -> V:
            return decode(response.url, response.body)

        request, headers = self._request, self.headers()
        return self.client.map(
            (
                (key, request(self.join(path), headers=headers, limit=limit, raw=_content_addressed(path)))
                for key, path in items
            ),
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

        auth = auth_for(url, registries)
        if parts.scheme.startswith("oci"):
            from .oci import OciSource  # the registry protocol is only loaded when used

            return OciSource(url, client, auth)
        return HttpSource(url, client, auth)
    if parts.scheme == "file":
        return LocalSource(Path(unquote(parts.path)), url)
    if parts.scheme == "" or (len(parts.scheme) == 1 and os.name == "nt"):
        return LocalSource(Path(url), url)
    raise SourceError(url, f"unsupported URL scheme {parts.scheme!r} (use a path, file://, http(s)://, oci://)")
