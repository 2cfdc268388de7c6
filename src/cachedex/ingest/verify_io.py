"""What ``cachedex verify`` asks of a mirror besides small reads: whether files exist (and
their sizes), and the checksums of whole binaries, streamed.

Existence is a ``stat`` in a local folder and an HTTP HEAD otherwise, many in flight at
once through the sync's :class:`~.http.HttpClient` (``http.concurrency``), answers
decoded to one number in the engine thread. A checksum is computed as the bytes arrive,
never holding a file whole: over HTTP in libcurl's write callback (a request that keeps
nothing), in a local folder by reading 1 MiB at a time, several files at once (hashlib
releases the GIL, so each core hashes).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..errors import CachedexError, SourceError, SourceNotFound
from .http_requests import Request, Response
from .local_source import LocalSource
from .sources import HttpSource, Source

__all__ = ["CHUNK", "DeepResult", "checksums", "sizes"]

K = TypeVar("K")

#: Bytes read at a time from a local file.
CHUNK = 1 << 20
#: Largest binary --deep downloads (bytes): past it the download stops (a gzip bomb, a lie).
MAX_BINARY = 2**40
#: Files of a local folder hashed at once.
LOCAL_WORKERS = max(2, os.cpu_count() or 2)
#: Requests in flight for sources whose own client this module cannot drive (an OCI registry).
_POOL = 16


def _content_length(response: Response) -> int | None:
    length = response.headers.get("content-length", "")
    return int(length) if length.isdigit() else None


def sizes(source: Source, items: Iterable[tuple[K, str]]) -> Iterator[tuple[K, int | None | CachedexError]]:
    """``(key, size)`` for each ``(key, path)``: the file's size in bytes (None when the
    server does not say), :class:`SourceNotFound` when it is missing, or the error that
    stopped the check; in any order."""
    if isinstance(source, LocalSource):
        root = str(source.root)
        for key, path in items:
            try:
                status = os.stat(os.path.join(root, path))
            except FileNotFoundError:
                yield key, SourceNotFound(source.join(path), "not found")
            except (OSError, ValueError) as exc:
                yield key, SourceError(source.join(path), f"cannot stat: {getattr(exc, 'strerror', None) or exc}")
            else:  # a folder is no binary, whatever its size (as LocalSource.read has it)
                is_folder = stat.S_ISDIR(status.st_mode)
                yield key, SourceNotFound(source.join(path), "is a folder, not a file") if is_folder else status.st_size
        return
    if isinstance(source, HttpSource):
        headers = source.headers()  # (a private mirror's credentials)
        requests = ((key, Request(source.join(path), method="HEAD", headers=headers, limit=0)) for key, path in items)
        yield from source.client.map(requests, _content_length)
        return
    yield from _pooled_sizes(source, items)


def _pooled_sizes(source: Source, items: Iterable[tuple[K, str]]) -> Iterator[tuple[K, int | None | CachedexError]]:
    """Sizes through :meth:`Source.size` (an OCI registry's HEAD with its authorization),
    a few dozen at once."""

    def one(item: tuple[K, str]) -> tuple[K, int | None | CachedexError]:
        key, path = item
        try:
            size = source.size(path)
        except CachedexError as exc:
            return key, exc
        return key, SourceNotFound(source.join(path), "not found") if size is None else size

    with ThreadPoolExecutor(_POOL) as pool:
        yield from pool.map(one, items)


class DeepResult:
    """A binary read whole: its digest and size, or the error that stopped the read."""

    __slots__ = ("digest", "error", "size")

    def __init__(self, digest: str = "", size: int = 0, error: CachedexError | None = None) -> None:
        self.digest = digest
        self.size = size
        self.error = error


class _HashingRequest(Request):
    """A GET that hashes its body as it arrives and keeps none of it."""

    def __init__(self, url: str, algorithm: str, limit: int, headers: list[str]) -> None:
        super().__init__(url, headers=headers, limit=limit, progress=self._ignore, raw=True)
        self.algorithm = algorithm
        self.hasher = hashlib.new(algorithm)
        self.count = 0
        self._attempt = 0

    def _ignore(self, received: int, total: int | None) -> None:
        pass

    def _write(self, data: bytes) -> int | None:
        if self.attempt != self._attempt:  # a retry starts over
            self._attempt = self.attempt
            self.hasher = hashlib.new(self.algorithm)
            self.count = 0
        self.hasher.update(data)
        self.count += len(data)
        if self.count > self.limit:
            self._reason = f"larger than {self.limit:,} bytes, the most --deep reads of a binary"
            return 0
        return None


def checksums(
    source: Source, items: Iterable[tuple[K, str, str]], *, limit: int = MAX_BINARY
) -> Iterator[tuple[K, DeepResult]]:
    """``(key, result)`` for each ``(key, path, algorithm)``: the digest and size of the
    whole file, read as a stream; in any order."""
    if isinstance(source, HttpSource):
        headers = source.headers()
        requests = (
            (key, _HashingRequest(source.join(path), algorithm, limit, headers)) for key, path, algorithm in items
        )
        pending: dict[int, _HashingRequest] = {}

        def tagged() -> Iterator[tuple[tuple[K, int], Request]]:
            for key, request in requests:
                pending[id(request)] = request
                yield (key, id(request)), request

        for (key, ident), outcome in source.client.map(tagged(), lambda response: None):
            request = pending.pop(ident)
            if isinstance(outcome, CachedexError):
                yield key, DeepResult(error=outcome)
            else:
                yield key, DeepResult(request.hasher.hexdigest(), request.count)
        return
    if isinstance(source, LocalSource):
        with ThreadPoolExecutor(LOCAL_WORKERS) as pool:
            yield from pool.map(lambda item: (item[0], _hash_local(source, item[1], item[2], limit)), items)
        return
    with ThreadPoolExecutor(_POOL) as pool:
        yield from pool.map(lambda item: (item[0], _hash_fetched(source, item[1], item[2], limit)), items)


def _hash_local(source: LocalSource, path: str, algorithm: str, limit: int) -> DeepResult:
    hasher = hashlib.new(algorithm)
    count = 0
    try:
        with open(os.path.join(str(source.root), path), "rb", buffering=0) as handle:
            buffer = bytearray(CHUNK)
            view = memoryview(buffer)
            while True:
                read = handle.readinto(buffer)
                if not read:
                    break
                hasher.update(view[:read])
                count += read
                if count > limit:
                    return DeepResult(error=SourceError(source.join(path), f"larger than {limit:,} bytes"))
    except FileNotFoundError:
        return DeepResult(error=SourceNotFound(source.join(path), "not found"))
    except OSError as exc:
        return DeepResult(error=SourceError(source.join(path), f"cannot read: {exc.strerror or exc}"))
    return DeepResult(hasher.hexdigest(), count)


def _hash_fetched(source: Source, path: str, algorithm: str, limit: int) -> DeepResult:
    """A source that can only read whole files (an OCI registry): fetched, then hashed."""
    try:
        data = source.read(path, limit=limit)
    except CachedexError as exc:
        return DeepResult(error=exc)
    return DeepResult(hashlib.new(algorithm, data).hexdigest(), len(data))
