"""What ``http.py``'s engine moves around: a request and what it is allowed, its
response, a :meth:`~.http.HttpClient.map` in progress. No pycurl here (libcurl's errors
are :mod:`.curl_errors`): sources, OCI and verify build requests and read responses
without loading the engine, which a sync of folders alone never does."""

from __future__ import annotations

import datetime
import itertools
import json
import queue
import re
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import CachedexError
from ..values import visible
from .manifests import inflate_bounded

__all__ = [
    "FORBIDDEN_MISSING",
    "HTML_PAGE",
    "MAX_RETRY_AFTER",
    "MapJob",
    "ProgressCallback",
    "Request",
    "Response",
    "ascii_url",
    "header_bytes",
    "html_page",
    "parse_headers",
    "retry_after_seconds",
    "server_said",
    "undo_content_encoding",
]

#: Called with (bytes received so far, total bytes or None) while a body downloads.
ProgressCallback = Callable[[int, "int | None"], None]

#: The longest pause a server's Retry-After may ask for before we give up on it.
MAX_RETRY_AFTER = 60.0


class Response:
    """A finished request: the final URL, the status, the headers (lower-case names; a
    repeated header's values joined by ``, ``) and the body."""

    __slots__ = ("_headers", "_raw", "body", "status", "url")

    def __init__(self, url: str, status: int, raw_headers: list[bytes], body: bytes | bytearray) -> None:
        self.url = url
        self.status = status
        self.body = body
        self._raw = raw_headers
        self._headers: dict[str, str] | None = None

    @property
    def headers(self) -> dict[str, str]:
        """The headers of the final response (parsed when first asked: most reads never ask)."""
        if self._headers is None:
            self._headers = parse_headers(self._raw)
        return self._headers


class Request:
    """One HTTP request and what it is allowed: at most ``limit`` body bytes (decoded).

    ``ok`` lists the statuses that are answers (others are errors: 404 is
    :class:`SourceNotFound`, and so is 403 with ``forbidden_is_missing``: S3 answers a key
    it lacks so to a reader without ``s3:ListBucket``, as public buckets without listing
    are read; with ``page_is_missing`` a 200 that is an HTML page, :func:`html_page`, is
    too: a mirror's file never is one); ``progress`` sees the body arrive, decoded (gzip, deflate) unless ``raw``:
    the bytes as stored, whose checksum a manifest names, even when the server says they
    are Content-Encoding gzip (as S3 objects uploaded so do)."""

    __slots__ = (
        "_body",
        "_deliver",
        "_job",
        "_key",
        "_raw_headers",
        "_reason",
        "attempt",
        "forbidden_is_missing",
        "headers",
        "limit",
        "method",
        "ok",
        "page_is_missing",
        "progress",
        "raw",
        "url",
    )

    #: Whether an attempt goes on where the last stopped (a ``Range`` read): then one cut
    #: by ``http.deadline`` is tried again, and the whole read takes retries × the deadline.
    resumes = False

    def __init__(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Iterable[str] = (),
        limit: int,
        ok: tuple[int, ...] = (200,),
        progress: ProgressCallback | None = None,
        raw: bool = False,
        forbidden_is_missing: bool = False,
        page_is_missing: bool = False,
    ) -> None:
        self.url = url
        self.raw = raw
        self.forbidden_is_missing = forbidden_is_missing
        self.page_is_missing = page_is_missing
        self.method = method
        self.headers = list(headers)
        self.limit = limit
        self.ok = ok
        self.progress = progress
        self.attempt = 0
        self._body = bytearray()
        self._raw_headers: list[bytes] = []
        self._reason: str | None = None
        self._deliver: Callable[[Response | CachedexError], None] | None = None
        self._job: MapJob | None = None
        self._key: Any = None

    def _write(self, data: bytes) -> int | None:
        """libcurl's write callback for a watched download (engine thread): counts the
        decoded bytes against the limit and reports progress."""
        body = self._body
        body += data
        if len(body) > self.limit:
            self._reason = f"larger than {self.limit:,} bytes, the limit for this kind of file"
            return 0  # libcurl stops the transfer: CURLE_WRITE_ERROR
        if self.progress is not None:
            headers = parse_headers(self._raw_headers)
            length = headers.get("content-length", "")
            total = int(length) if length.isdigit() and "content-encoding" not in headers else None
            self.progress(len(body), total)
        return None


def parse_headers(lines: list[bytes]) -> dict[str, str]:
    """The headers of the last response among ``lines`` (after redirects), by lower-case
    name; a repeated header's values joined by ``, ``."""
    headers: dict[str, str] = {}
    for line in lines:
        if line[:5] == b"HTTP/":  # a new response (after a redirect or a 100): forget the last one's
            headers = {}
            continue
        name, sep, value = line.partition(b":")
        if sep:
            key = name.strip().lower().decode("latin-1")
            text = value.strip().decode("latin-1")
            known = headers.get(key)
            headers[key] = text if known is None else f"{known}, {text}"
    return headers


def html_page(response: Response) -> bool:
    """Whether ``response`` is a web page, not a mirror's file: a host that answers any
    path it lacks with its "not found" page and status 200 (a soft 404). Labelled
    ``text/html`` and, unless a HEAD's, markup; or, whatever its label, a document that
    opens as HTML does. No file of a mirror is (JSON, clearsigned text, hashes,
    tarballs): most answers are told by their first byte."""
    body = response.body
    if body[:1] not in (b"", b"<", b" ", b"\t", b"\r", b"\n"):
        return False
    start = bytes(body[:1024]).lstrip()[:14].lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return True
    if body and start[:1] != b"<":
        return False
    label = response.headers.get("content-type", "").strip().lower()
    return label.startswith(("text/html", "application/xhtml+xml"))


#: What a 403 of a request with ``forbidden_is_missing`` says.
FORBIDDEN_MISSING = "missing (or not readable: HTTP 403)"

#: What an answer that :func:`html_page` tells says instead of the file.
HTML_PAGE = "answered with an HTML page, not the file (the server's 'not found' page, sent as HTTP 200?)"


def ascii_url(url: str) -> str:
    """``url`` as libcurl takes it: ASCII, each other character as its UTF-8 bytes
    percent-encoded (as browsers send an IRI). A package name may hold them."""
    return url if url.isascii() else urllib.parse.quote(url, safe=_URL_ASCII)


def header_bytes(header: str) -> str | bytes:
    """A request header as libcurl takes it: a validator a server sent (an ETag may hold
    bytes 0x80-0xff, kept as Latin-1 text) goes back as those bytes. UnicodeEncodeError
    for anything else."""
    return header if header.isascii() else header.encode("latin-1")


#: What :func:`ascii_url` leaves as it is: every printable ASCII character.
_URL_ASCII = "".join(map(chr, range(0x20, 0x7F)))


def undo_content_encoding(lines: list[bytes], body: bytes | bytearray, limit: int) -> bytes | bytearray:
    """A small read's body as the file holds it: libcurl asked for no compression and so
    decodes none, but a server may send it compressed anyway. Decoded (up to ``limit``
    bytes; ValueError past it) only when the bytes are what the label says: an S3
    object's label may name the encoding of bytes stored as they are, whose checksum a
    mirror gives (a blob is read as stored then)."""
    if not any(line[:17].lower() == b"content-encoding:" for line in lines):  # (most answers: ~1 us)
        return body
    coding = parse_headers(lines).get("content-encoding", "").strip().lower()
    if coding in ("gzip", "x-gzip"):
        if body[:2] != b"\x1f\x8b":
            return body
        wbits = 31
    elif coding == "deflate":  # with or without its zlib header (servers send both)
        wbits = 15 if body[:1] == b"\x78" else -15
    else:
        return body
    try:
        decoded, ended = inflate_bounded(body, wbits, limit)
    except zlib.error:
        return body  # not what its label says: as stored
    if len(decoded) > limit:
        raise ValueError(f"larger than {limit:,} bytes once decoded ({coding}), the limit for this kind of file")
    if not ended:  # (what had come was taken as the whole file)
        raise ValueError(f"its {coding} stream ends early: the body was cut short")
    return decoded


class MapJob:
    """A :meth:`~.http.HttpClient.map` in progress: where its requests come from and where its
    results go. Results are handed over in batches: one wake-up of the consumer per turn
    of the engine, not one per response."""

    def __init__(self, requests: Iterator[tuple[Any, Request]], decode: Callable[[Response], Any]) -> None:
        self.requests = requests
        self.decode = decode
        self.results: queue.SimpleQueue[list[tuple[Any, Any]] | BaseException | None] = queue.SimpleQueue()
        self.batch: list[tuple[Any, Any]] = []
        self.pending = 0
        self.exhausted = False
        self.cancelled = False  # the caller stopped reading: draw no more, decode nothing

    def deliver(self, key: Any, result: Response | CachedexError) -> None:
        """Keep the value of one finished request (engine thread)."""
        self.pending -= 1
        if self.cancelled:
            return
        if isinstance(result, Response):
            try:
                value: Any = self.decode(result)
            except CachedexError as exc:
                value = exc
            except Exception as exc:  # a bug in the decoder: to the caller, the engine goes on
                self.cancelled = True
                self.results.put(exc)
                return
            self.batch.append((key, value))
        else:
            self.batch.append((key, result))

    def draw(self, room: int) -> list[Request]:
        """Up to ``room`` more requests (engine thread)."""
        drawn: list[Request] = []
        if self.cancelled:
            self.exhausted = True
            return drawn
        try:
            for key, request in itertools.islice(self.requests, room):
                request._job = self
                request._key = key
                drawn.append(request)
        except Exception as exc:  # a bug in the caller's generator: give it back to the caller
            self.exhausted = True
            self.results.put(exc)
        if len(drawn) < room:
            self.exhausted = True
        self.pending += len(drawn)
        return drawn

    def flush(self) -> bool:
        """Hand over the results gathered; True when the job is done."""
        if self.batch:
            self.results.put(self.batch)
            self.batch = []
        if self.exhausted and self.pending == 0:
            self.results.put(None)
            return True
        return False


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (a number or an HTTP date), or None."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        # (str.isdigit takes "²" and other digits float() refuses: its ValueError ended
        # the HTTP engine, and every request waited for good)
        return float(text) if text.isascii() else None
    import email.utils  # (rare: loaded when a server sends a date; not on every command's start)

    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # asctime's form names no zone: HTTP dates are all GMT (RFC 9110)
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - time.time())


#: The most characters of a server's own words an error quotes.
SAID_MOST = 200
_XML_WORDS = re.compile(rb"<(Code|Message)>([^<]{1,500})</\1>")


def server_said(body: bytes | bytearray) -> str:
    """What an error answer's body says, as ``"; the server says: …"`` for its error's
    message, or "": an OCI registry's ``{"errors": [{"code", "message"}]}`` (Docker
    Hub's pull rate limit, a registry's DENIED), a JSON ``message`` or ``error``, S3's
    XML ``<Code>`` and ``<Message>``, or plain text's first line. An HTML page, or a
    compressed or binary body, says nothing here (its markup is no message). Its
    characters come from the server: made visible, and cut short."""
    head = bytes(body[:4096]).removeprefix(b"\xef\xbb\xbf").strip()  # (a UTF-8 mark before a page's markup)
    if not head or head[:1] == b"<" and not head.startswith(b"<?xml") or head[:2] == b"\x1f\x8b":
        return ""
    words = ""
    if head[:1] == b"{":
        words = _json_words(head)
    elif head.startswith(b"<?xml"):
        words = ": ".join(value.decode("utf-8", "replace") for _, value in _XML_WORDS.findall(head))
    else:
        words = head.split(b"\n", 1)[0].decode("utf-8", "replace")  # (the cut may split a character)
    words = " ".join(words.split())
    if not words:
        return ""
    if len(words) > SAID_MOST:
        words = words[: SAID_MOST - 1] + "…"
    return f"; the server says: {visible(words)}"


def _json_words(head: bytes) -> str:
    """The message of a JSON error body (see :func:`server_said`), or ""."""
    try:
        document = json.loads(head)
    except (ValueError, RecursionError):
        return ""
    if not isinstance(document, dict):
        return ""
    errors = document.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        parts = [errors[0].get("code"), errors[0].get("message")]
        return ": ".join(str(part) for part in parts if isinstance(part, str) and part)
    for key in ("message", "error", "detail"):
        if isinstance(document.get(key), str):
            return str(document[key])
    return ""
