"""A file's size from a server that refuses HEAD (405 or 501: Nexus, some CDNs, some
OCI registries; 403 from hosts that sign URLs for GET alone), or whose HEAD answers a
web page's label (a soft 404, or a binary labelled ``text/html``): a GET of its first
byte (``Range: bytes=0-0``), whose 206 says the whole size in ``Content-Range: bytes
0-0/SIZE``.

A server that ignores Range answers such a GET with the whole file, 200: a binary may
be gigabytes, so :class:`FirstByteRequest` stops it once its headers are in and takes
its Content-Length. What a server refused (HEAD) or ignored (Range) once is remembered
for its source for the rest of the run: a mirror of 250,000 binaries then pays one
request each, not two.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import CachedexError, SourceError, SourceNotFound, TooBig
from .http_requests import FORBIDDEN_MISSING, HTML_PAGE, Request, Response, html_page

if TYPE_CHECKING:
    from .http import HttpClient
    from .sources import Send

__all__ = [
    "HEAD_ANSWERS",
    "HEAD_REFUSED",
    "FirstByteRequest",
    "content_coding",
    "content_length",
    "first_byte_size",
    "note_head_refused",
    "probe_outcome",
    "refuses_head",
    "size_by_head_or_first_byte",
]

#: A HEAD's statuses that say the server does not take HEAD (not that the file is missing).
HEAD_REFUSED = (405, 501)
#: What a HEAD that may be refused accepts as answers (501 is then not retried as a 5xx).
HEAD_ANSWERS = (200, *HEAD_REFUSED)
#: A first-byte GET's answers: the byte (206), the whole file (200: Range ignored),
#: or none to give (416: an empty file has no first byte).
FIRST_BYTE_ANSWERS = (200, 206, 416)
_FIRST_BYTE = "Range: bytes=0-0"

# Sources (an HttpSource, an OciSource) whose server refused a HEAD, or ignored a Range, this run.
_head_refused: weakref.WeakSet[object] = weakref.WeakSet()
_range_ignored: weakref.WeakSet[object] = weakref.WeakSet()


def refuses_head(source: object) -> bool:
    """Whether ``source``'s server refused a HEAD before in this run."""
    return source in _head_refused


def note_head_refused(source: object) -> None:
    """Remember that ``source``'s server refuses HEAD: its next sizes are asked by GET."""
    _head_refused.add(source)


def content_length(response: Response) -> int | None:
    """The Content-Length ``response`` says (None when it says none)."""
    length = response.headers.get("content-length", "").strip()
    return int(length) if length.isdigit() else None


#: Content codings a server may name (RFC 9110's registry and their old aliases).
_CODINGS = frozenset({"gzip", "x-gzip", "deflate", "compress", "x-compress", "br", "zstd", "dcb", "dcz"})


def content_coding(response: Response) -> str | None:
    """The Content-Encoding ``response`` says its body is sent in (gzip, br, ...), None for
    none (or identity). Its Content-Length, its Content-Range, are then of the bytes as
    sent, not of the file: a server may encode though asked not to (nginx's ``gzip_static
    always`` beside a ``.gz`` twin)."""
    said = response.headers.get("content-encoding", "")[:200].lower()
    tokens = [token.strip() for token in said.split(",")]
    codings = [token for token in tokens if token not in ("", "identity", "none")]
    # (a server's text, stored in problems: the codings HTTP names, others told as such)
    named = [token if token in _CODINGS else "another encoding" for token in codings]
    return ", ".join(dict.fromkeys(named)) or None


class FirstByteRequest(Request):
    """A GET of a file's first byte. A 200 (the server ignores Range) is stopped at its
    first body bytes: ``headers_only`` keeps its headers, and the outcome is TooBig."""

    __slots__ = ("headers_only",)

    def __init__(
        self,
        url: str,
        *,
        headers: Sequence[str] = (),
        forbidden_is_missing: bool = False,
        page_is_missing: bool = False,
    ) -> None:
        super().__init__(
            url,
            headers=[*headers, _FIRST_BYTE],
            limit=1,
            ok=FIRST_BYTE_ANSWERS,
            progress=_ignore,  # (a watched request: its body passes through _write)
            raw=True,  # (the bytes as stored: a Content-Length of those)
            forbidden_is_missing=forbidden_is_missing,
            page_is_missing=page_is_missing,
        )
        self.headers_only: Response | None = None

    def _write(self, data: bytes) -> int | None:
        status = next((line.split()[1:2] for line in reversed(self._raw_headers) if line[:5] == b"HTTP/"), [])
        if status == [b"200"]:
            # (with its first bytes: a binary a server labels text/html is no web page)
            self.headers_only = Response(self.url, 200, list(self._raw_headers), bytes(data[:1024]))
            self._reason = "answered the whole file to a request of its first byte (stopped at its headers)"
            return 0  # libcurl stops the transfer: nothing past the headers is downloaded
        stopped = super()._write(data)
        if stopped is not None and status == [b"206"]:
            self._reason = "answered more than the first byte asked (Range: bytes=0-0)"
        return stopped


def _ignore(received: int, total: int | None) -> None:
    pass


def first_byte_size(response: Response, *, page_is_missing: bool = False) -> int | None:
    """The size of the whole file a first-byte GET's ``response`` tells (a HEAD's 200 too:
    its Content-Length); None when it does not say. SourceError for a range it did not ask
    for; with ``page_is_missing``, SourceNotFound for an HTML page (a host's soft 404)."""
    if page_is_missing and response.status in (200, 206) and html_page(response):
        raise SourceNotFound(response.url, HTML_PAGE)
    if response.status == 200:
        return content_length(response)
    given = response.headers.get("content-range", "").strip()
    unit, _, rest = given.partition(" ")
    span, _, total = rest.partition("/")
    expected = "*" if response.status == 416 else "0-0"
    if unit.lower() != "bytes" or span.strip() != expected or not (total.strip().isdigit() or total.strip() == "*"):
        raise SourceError(
            response.url, f"answered the range {given or '(none)'!r} (HTTP {response.status}), not the one asked (0-0)"
        )
    return int(total) if total.strip().isdigit() else None


def probe_outcome(probe: FirstByteRequest, outcome: int | None | CachedexError) -> int | None | CachedexError:
    """What a :class:`FirstByteRequest` done through :meth:`HttpClient.map` (its answers
    decoded by :func:`first_byte_size`) says: a 200 it stopped gives its Content-Length."""
    answer = probe.headers_only
    if not isinstance(outcome, TooBig) or answer is None:
        return outcome
    if probe.page_is_missing and html_page(answer):
        return SourceNotFound(probe.url, HTML_PAGE)
    return content_length(answer)


def size_by_head_or_first_byte(
    source: object,
    url: str,
    headers: Sequence[str],
    *,
    send: Send,
    client: HttpClient,
    probe: Callable[[str], FirstByteRequest],
    pages_are_missing: bool = False,
) -> int | None:
    """The size of ``url`` (None when it is missing or the server does not say): a HEAD
    through ``send``; where ``source``'s server refuses HEAD, a first-byte GET through
    ``send`` (a registry's session: its tokens); where it ignores Range, ``probe(url)``
    through ``client``, stopped at its headers."""
    # (whether a page in answer is a soft 404: a mirror's host, or a HEAD said one)
    pages = pages_are_missing
    try:
        if not refuses_head(source):
            try:
                response = send(url, method="HEAD", headers=headers, limit=0, ok=HEAD_ANSWERS)
            except SourceNotFound as exc:
                # An HTTP mirror's 403 or page to a HEAD says nothing sure: hosts that sign
                # URLs for GET alone forbid HEAD; a server may label a binary text/html.
                if exc.problem not in (FORBIDDEN_MISSING, HTML_PAGE):
                    raise
                pages = True
            else:
                if response.status not in HEAD_REFUSED:
                    return content_length(response)
            note_head_refused(source)
        if source not in _range_ignored:
            try:
                # (limit 1: libcurl stops a 200 whose Content-Length is more, before its body)
                response = send(url, headers=[*headers, _FIRST_BYTE], limit=1, ok=FIRST_BYTE_ANSWERS)
                return first_byte_size(response, page_is_missing=pages)
            except TooBig:
                _range_ignored.add(source)
        asked = probe(url)
        try:
            return first_byte_size(client.request(asked), page_is_missing=asked.page_is_missing)
        except TooBig as exc:
            size = probe_outcome(asked, exc)
            if isinstance(size, CachedexError):
                raise size from None
            return size
    except SourceNotFound:
        return None
