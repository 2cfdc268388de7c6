"""What ``cachedex verify`` asks of a mirror besides small reads: whether files exist (and
their sizes), and the checksums of whole binaries, streamed.

Existence is a ``stat`` in a local folder and an HTTP HEAD otherwise, many in flight at
once through the sync's :class:`~.http.HttpClient` (``http.concurrency``), answers
decoded to one number in the engine thread; where a HEAD cannot tell (refused: 405,
501; forbidden: 403; labelled a web page), a GET of the file's first byte
(:mod:`.head_fallback`). A checksum is computed as the bytes arrive, never holding a
file whole and never past the size a manifest gives: over HTTP (an OCI
registry too) in libcurl's write callback (a request that keeps nothing), in a local
folder by reading 1 MiB at a time, several files at once (hashlib releases the GIL, so
each core hashes).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple, TypeVar

from ..errors import CachedexError, SourceError, SourceNotFound, TooBig
from .head_fallback import (
    HEAD_ANSWERS,
    HEAD_REFUSED,
    FirstByteRequest,
    content_coding,
    first_byte_size,
    note_head_refused,
    probe_outcome,
    refuses_head,
)
from .http_requests import HTML_PAGE, Request, Response, html_page, parse_headers
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


def sizes(
    source: Source, items: Iterable[tuple[K, str]], *, encoded: dict[K, str] | None = None
) -> Iterator[tuple[K, int | None | CachedexError]]:
    """``(key, size)`` for each ``(key, path)``: the file's size in bytes (None when the
    server does not say), :class:`SourceNotFound` when it is missing, or the error that
    stopped the check; in any order. Where an HTTP answer says a Content-Encoding, its
    size is of the bytes as sent, not of the file: its coding is put in ``encoded[key]``
    (when given) before the size is yielded."""
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
        yield from _http_sizes(source, items, {} if encoded is None else encoded)
        return
    yield from _pooled_sizes(source, items)


class _Answer(NamedTuple):
    """What a HEAD's or a first-byte GET's answer says, decoded in the engine thread."""

    status: int
    page: bool  #: labelled a web page (a HEAD's), or one (a GET's): see html_page
    size: int | None | CachedexError
    coding: str | None  #: the Content-Encoding it says (its size is then of the bytes as sent)


def _http_sizes(
    source: HttpSource, items: Iterable[tuple[K, str]], encoded: dict[K, str]
) -> Iterator[tuple[K, int | None | CachedexError]]:
    """Sizes by HEAD, many at once. A HEAD that cannot tell is asked again by a GET of
    the file's first byte (:mod:`.head_fallback`), after the others: one refused (405,
    501), one forbidden (403: hosts that sign each URL for GET alone, as S3 presigned
    URLs and GitLab's package registry do, while a missing file is 403 too on S3
    without listing), and one labelled a web page (a host's soft 404, or a server that
    labels every file ``text/html``: the first byte tells them apart). Once a HEAD could
    not tell, the source's next sizes are asked by GET from the start."""
    fixed = source.headers()  # (a private mirror's credentials)

    def head(url: str) -> Request:
        # (not source.request: a 403 and a page are answers here, that a GET then decides)
        return Request(
            url, method="HEAD", headers=fixed, limit=0, ok=_HEAD_TELLS, forbidden_is_missing=source.forbidden_is_missing
        )

    def probe(url: str) -> FirstByteRequest:
        return FirstByteRequest(
            url, headers=fixed, forbidden_is_missing=source.forbidden_is_missing, page_is_missing=True
        )

    def asked(pending: Iterable[tuple[K, str]], by_get: bool) -> Iterator[tuple[tuple[K, str, Request], Request]]:
        for key, path in pending:
            url = source.join(path)
            # (read as each request is drawn: a HEAD that could not tell turns the rest to GETs)
            sent = head(url) if not by_get and not refuses_head(source) else probe(url)
            yield (key, path, sent), sent

    def decode(response: Response) -> _Answer:  # (the engine thread)
        status = response.status
        if status in _HEAD_CANNOT_TELL:
            note_head_refused(source)
            return _Answer(status, False, None, None)
        page = status in (200, 206) and html_page(response)  # (a 416's page is its error's, not a soft 404)
        if page and not response.body:  # (a HEAD's label: the first byte, by GET, tells)
            note_head_refused(source)
        try:
            return _Answer(status, page, first_byte_size(response), content_coding(response))
        except CachedexError as exc:
            return _Answer(status, page, exc, None)

    unsure: list[tuple[K, str]] = []
    for by_get, pending in ((False, items), (True, unsure)):  # (what HEAD could not tell: by GET, after)
        for (key, path, sent), outcome in source.client.map(asked(pending, by_get), decode):
            if isinstance(sent, FirstByteRequest):
                if isinstance(outcome, CachedexError):
                    # (a 200 stopped at its headers: its Content-Length, maybe of bytes encoded)
                    stopped = sent.headers_only if isinstance(outcome, TooBig) else None
                    coding = content_coding(stopped) if stopped is not None else None
                    if coding is not None:
                        encoded[key] = coding
                    yield key, probe_outcome(sent, outcome)
                    continue
                if outcome.coding is not None:
                    encoded[key] = outcome.coding
                yield key, SourceNotFound(sent.url, HTML_PAGE) if outcome.page else outcome.size
            elif isinstance(outcome, CachedexError):
                yield key, outcome
            elif outcome.status in _HEAD_CANNOT_TELL or outcome.page:
                unsure.append((key, path))
            else:
                if outcome.coding is not None:
                    encoded[key] = outcome.coding
                yield key, outcome.size


#: A HEAD's statuses that say nothing of the file: refused (405, 501) or forbidden (403).
_HEAD_CANNOT_TELL = (*HEAD_REFUSED, 403)
#: What a HEAD accepts as answers (501 and 403 are then neither retried nor errors).
_HEAD_TELLS = (*HEAD_ANSWERS, 403)


def _pooled_sizes(source: Source, items: Iterable[tuple[K, str]]) -> Iterator[tuple[K, int | None | CachedexError]]:
    """Sizes through :meth:`Source.size` (an OCI registry's HEAD with its authorization, or
    its first-byte GET),
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
    """A binary read whole: its digest and size, or the error that stopped the read
    (``over``: it holds more bytes than its manifest gives); ``coding``: the
    Content-Encoding the server sent it in (the digest is then of the bytes as sent, as
    Spack saves and checks them: neither its urllib nor its curl decodes)."""

    __slots__ = ("coding", "digest", "error", "over", "size")

    def __init__(
        self,
        digest: str = "",
        size: int = 0,
        error: CachedexError | None = None,
        *,
        over: bool = False,
        coding: str | None = None,
    ) -> None:
        self.digest = digest
        self.size = size
        self.error = error
        self.over = over
        self.coding = coding


class _HashingRequest(Request):
    """A GET that hashes its body as it arrives and keeps none of it. A retry (a
    timeout, a connection dropped) asks for the rest only (``Range``): a big binary is
    not downloaded again from its start, nor again past ``http.deadline`` each time;
    a server that answers with the whole file is hashed anew."""

    resumes = True

    def __init__(
        self, url: str, algorithm: str, limit: int, headers: list[str], *, size: int | None, forbidden_is_missing: bool
    ) -> None:
        self._given: list[str] = []
        super().__init__(
            url,
            headers=headers,
            limit=limit,
            ok=(200, 206),
            progress=self._ignore,
            raw=True,
            forbidden_is_missing=forbidden_is_missing,
        )
        self.algorithm = algorithm
        self.hasher = hashlib.new(algorithm)
        self.count = 0
        self.size = size
        self.over = False
        self.coding: str | None = None  # the Content-Encoding of the answer hashed
        self._attempt = 0
        self._hashing = False  # this attempt's body is the binary's (not an error page)

    @property
    def headers(self) -> list[str]:
        # (read by the engine as each attempt starts)
        return [*self._given, f"Range: bytes={self.count}-"] if self.count else self._given

    @headers.setter
    def headers(self, value: list[str]) -> None:
        self._given = list(value)

    def _ignore(self, received: int, total: int | None) -> None:
        pass

    def _write(self, data: bytes) -> int | None:
        if self.attempt != self._attempt:
            self._attempt = self.attempt
            stopped = self._begin()
            if stopped is not None:
                return stopped
        if not self._hashing:
            return None
        self.hasher.update(data)
        self.count += len(data)
        if self.count > self.limit:
            self.over = self.size is not None
            most = "the size its manifest gives" if self.over else "the most --deep reads of a binary"
            self._reason = f"more than {self.limit:,} bytes, {most}"
            return 0
        return None

    def _begin(self) -> int | None:
        """The first bytes of an attempt: go on from where the last one stopped (206 of
        the range asked), start over (200), or ignore an error page (a retry follows)."""
        status = next((line.split()[1:2] for line in reversed(self._raw_headers) if line[:5] == b"HTTP/"), [])
        code = status[0] if status else b""
        self._hashing = code in (b"200", b"206")
        if self._hashing:  # (a 206 that goes on: its bytes follow those of an earlier label)
            coding = content_coding(Response(self.url, 200, self._raw_headers, b""))
            self.coding = coding if code == b"200" else coding or self.coding
        if code == b"206":
            given = parse_headers(self._raw_headers).get("content-range", "")
            if not self.count or not given.startswith(f"bytes {self.count}-"):
                self._hashing = False
                self._reason = f"answered the range {given or '(none)'!r}, not the one asked"
                return 0
        elif code == b"200":
            self.hasher = hashlib.new(self.algorithm)
            self.count = 0
        return None


def checksums(
    source: Source, items: Iterable[tuple[K, str, str, int | None]], *, limit: int = MAX_BINARY
) -> Iterator[tuple[K, DeepResult]]:
    """``(key, result)`` for each ``(key, path, algorithm, size)``: the digest and size of
    the whole file, read as a stream, never past ``size`` (when known) nor ``limit``; in
    any order."""
    if isinstance(source, LocalSource):
        with ThreadPoolExecutor(LOCAL_WORKERS) as pool:
            yield from pool.map(lambda item: (item[0], _hash_local(source, item[1], item[2], item[3], limit)), items)
        return
    from .oci import OciSource

    headers: Callable[[str], list[str]]  # (those of a request to a URL)
    if isinstance(source, HttpSource):
        fixed = source.headers()
        client, headers = source.client, (lambda url: fixed)
        forbidden_is_missing = source.forbidden_is_missing
    elif isinstance(source, OciSource):
        # (the registry's token, as it is when each request is made: a long --deep run
        # outlives tokens, which auth_headers renews)
        client, headers = source.client, source.auth_headers
        forbidden_is_missing = False  # (a registry's 403 is its refusal)
    else:
        raise TypeError(f"no --deep reads from {type(source).__name__}")

    def request(path: str, algorithm: str, size: int | None) -> _HashingRequest:
        url = source.join(path)
        most = _most(size, limit)
        return _HashingRequest(url, algorithm, most, headers(url), size=size, forbidden_is_missing=forbidden_is_missing)

    pending: dict[int, _HashingRequest] = {}

    def tagged() -> Iterator[tuple[tuple[K, int], Request]]:
        for key, path, algorithm, size in items:
            hashing = request(path, algorithm, size)
            pending[id(hashing)] = hashing
            yield (key, id(hashing)), hashing

    for (key, ident), outcome in client.map(tagged(), lambda response: None):
        done = pending.pop(ident)
        if isinstance(outcome, CachedexError):
            yield key, DeepResult(size=done.count, error=outcome, over=done.over, coding=done.coding)
        else:
            yield key, DeepResult(done.hasher.hexdigest(), done.count, coding=done.coding)


def _most(size: int | None, limit: int) -> int:
    """The bytes a --deep read takes at most: the size a manifest gives, if any, and never
    past ``limit``."""
    return min(size, limit) if size is not None else limit


def _hash_local(source: LocalSource, path: str, algorithm: str, size: int | None, limit: int) -> DeepResult:
    hasher = hashlib.new(algorithm)
    most = _most(size, limit)
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
                if count > most:
                    if size is not None:
                        error = SourceError(source.join(path), f"more than {most:,} bytes, the size its manifest gives")
                        return DeepResult(size=count, error=error, over=True)
                    return DeepResult(error=SourceError(source.join(path), f"larger than {limit:,} bytes"))
    except FileNotFoundError:
        return DeepResult(error=SourceNotFound(source.join(path), "not found"))
    except OSError as exc:
        return DeepResult(error=SourceError(source.join(path), f"cannot read: {exc.strerror or exc}"))
    return DeepResult(hasher.hexdigest(), count)
