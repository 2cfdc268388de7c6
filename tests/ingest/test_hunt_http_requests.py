"""What the HTTP engine's plain values do, checked without a server: the headers of the
last response, what is taken for an HTML page, the decoding of a small read sent
compressed, a map's bookkeeping, a Retry-After date, and what an error body says."""

from __future__ import annotations

import gzip
import zlib

import pytest

from cachedex.errors import SourceError, TooBig
from cachedex.ingest.http_requests import (
    MapJob,
    Request,
    Response,
    ascii_url,
    html_page,
    parse_headers,
    retry_after_seconds,
    server_said,
    undo_content_encoding,
)
from cachedex.ingest.manifests import gunzip_bounded


def _page(body: bytes, *headers: bytes) -> Response:
    return Response("http://127.0.0.1/x", 200, [b"HTTP/1.1 200 OK", *headers], body)


def test_headers_are_the_last_response_s_by_lower_case_name_repeats_joined() -> None:
    """A redirect's headers are forgotten at the next status line; names are lower case
    and a repeated header's values are joined by ", "."""
    lines = [
        b"HTTP/1.1 302 Found\r\n",
        b"Location: /elsewhere\r\n",
        b"HTTP/1.1 200 OK\r\n",
        b"X-Thing: one\r\n",
        b"x-thing:  two \r\n",
        b"Content-Type: application/json\r\n",
        b"\r\n",
    ]
    assert parse_headers(lines) == {"x-thing": "one, two", "content-type": "application/json"}


@pytest.mark.parametrize(
    ("body", "headers", "expected"),
    [
        (b"  \n<html><body>gone</body></html>", (), True),  # markup after blank space, no label
        (b"<HTML><BODY>gone</BODY></HTML>", (), True),  # upper case, no label
        (b"<p>gone</p>", (b"Content-Type:  Text/HTML; charset=utf-8",), True),  # label in any case
        (b"<p>gone</p>", (b"Content-Type: application/xhtml+xml",), True),
        (b"", (b"Content-Type: text/html",), True),  # a HEAD's answer: its label says it
        (b"", (b"Content-Type: application/json",), False),
        (b'{"a": 1}', (b"Content-Type: text/html",), False),  # JSON, whatever its label
        (b"<p>gone</p>", (b"Content-Type: application/octet-stream",), False),
    ],
)
def test_what_is_taken_for_an_html_page(body: bytes, headers: tuple[bytes, ...], expected: bool) -> None:
    """A soft 404 is told by its markup (after any blank space, in any case) or its label
    (text/html or XHTML, in any case; a HEAD's empty body by its label alone)."""
    assert html_page(_page(body, *headers)) is expected


def test_a_url_keeps_its_printable_ascii_and_encodes_the_rest() -> None:
    """Only characters past ASCII are percent-encoded (their UTF-8 bytes): the scheme's
    colon, slashes, a query's ? & = and a space are left as they are."""
    assert ascii_url("http://h:8/a b/\u00e9?q=1&r=~%41") == "http://h:8/a b/%C3%A9?q=1&r=~%41"
    assert ascii_url("http://h/plain") == "http://h/plain"


def test_x_gzip_and_both_kinds_of_deflate_are_decoded() -> None:
    """x-gzip is gzip; deflate comes with its zlib header or without (servers send both);
    the label's name is matched in any case."""
    data = b"spack " * 50
    assert undo_content_encoding([b"Content-Encoding: x-gzip"], gzip.compress(data), 10_000) == data
    assert undo_content_encoding([b"CONTENT-ENCODING: GZIP"], gzip.compress(data), 10_000) == data
    assert undo_content_encoding([b"Content-Encoding: deflate"], zlib.compress(data), 10_000) == data
    raw = zlib.compressobj(wbits=-15)
    bare = raw.compress(data) + raw.flush()
    assert undo_content_encoding([b"Content-Encoding: deflate"], bare, 10_000) == data


def test_a_decoded_body_of_exactly_the_limit_is_taken_one_more_byte_is_not() -> None:
    """The limit is the most bytes a read may hold once decoded: that many pass, one more
    fails (never cut silently to the limit)."""
    limit = 5_000
    assert undo_content_encoding([b"Content-Encoding: gzip"], gzip.compress(b"a" * limit), limit) == b"a" * limit
    with pytest.raises(ValueError, match="larger than 5,000 bytes once decoded"):
        undo_content_encoding([b"Content-Encoding: gzip"], gzip.compress(b"a" * (limit + 1)), limit)


def test_bytes_that_are_not_what_their_label_says_are_kept_as_stored() -> None:
    """A gzip label on bytes that are not gzip (or are broken gzip) leaves them as they are."""
    broken = b"\x1f\x8b\x08\x00not really gzip"
    assert undo_content_encoding([b"Content-Encoding: gzip"], broken, 1000) == broken
    assert undo_content_encoding([b"Content-Encoding: gzip"], b"{}", 1000) == b"{}"
    assert undo_content_encoding([b"Content-Encoding: br"], b"\x1f\x8b", 1000) == b"\x1f\x8b"


def test_a_body_of_gzip_members_is_decoded_whole_and_one_cut_short_is_refused() -> None:
    """A body of two gzip members (files concatenated, as ``gunzip`` reads them) was
    decoded to its first member's bytes alone, without a word; one whose stream ends
    early was taken for the whole file. Both members now, over the limit counted
    across them; and a stream cut short is an error."""
    two = gzip.compress(b'{"a": ') + gzip.compress(b"1}")
    assert undo_content_encoding([b"Content-Encoding: gzip"], two, 1000) == b'{"a": 1}'
    with pytest.raises(ValueError, match="larger than 7 bytes once decoded"):
        undo_content_encoding([b"Content-Encoding: gzip"], two, 7)
    with pytest.raises(ValueError, match="its gzip stream ends early"):
        undo_content_encoding([b"Content-Encoding: gzip"], gzip.compress(b"x" * 5000)[:-12], 10_000)
    assert gunzip_bounded(two, 8, "http://127.0.0.1/index.json.gz") == b'{"a": 1}'
    with pytest.raises(TooBig):
        gunzip_bounded(two, 7, "http://127.0.0.1/index.json.gz")
    # (what follows a member and is no gzip stays as it was: ignored)
    assert gunzip_bounded(gzip.compress(b"{}") + b"\0\0", 2, "http://127.0.0.1/x.gz") == b"{}"


def test_a_watched_read_stops_one_byte_past_its_limit_not_at_it() -> None:
    """A watched download may hold exactly ``limit`` bytes; the next byte stops it with
    the limit said; progress has the total only when the length is of decoded bytes."""
    seen: list[tuple[int, int | None]] = []
    request = Request("http://127.0.0.1/x", limit=4, progress=lambda got, total: seen.append((got, total)))
    request._raw_headers = [b"HTTP/1.1 200 OK", b"Content-Length: 4"]
    assert request._write(b"abcd") is None and request._reason is None
    assert seen == [(4, 4)]
    assert request._write(b"e") == 0
    assert request._reason == "larger than 4 bytes, the limit for this kind of file"
    encoded = Request("http://127.0.0.1/x", limit=100, progress=lambda got, total: seen.append((got, total)))
    encoded._raw_headers = [b"HTTP/1.1 200 OK", b"Content-Length: 2", b"Content-Encoding: gzip"]
    encoded._write(b"xyz")
    assert seen[-1] == (3, None)  # (2 bytes on the wire, more once decoded: no total)


def _requests(count: int) -> list[tuple[int, Request]]:
    return [(n, Request(f"http://127.0.0.1/{n}", limit=10)) for n in range(count)]


def test_a_map_drawn_to_exactly_its_room_is_not_yet_exhausted() -> None:
    """A map whose requests fill the room exactly may have more: it is exhausted only when
    a draw comes back short, and done only once every drawn request is answered."""
    job = MapJob(iter(_requests(3)), decode=lambda response: response.status)
    assert len(job.draw(3)) == 3 and not job.exhausted
    assert job.draw(3) == [] and job.exhausted
    assert job.flush() is False  # three answers still to come
    for key in range(3):
        job.deliver(key, Response("u", 200, [], b""))
    assert job.flush() is True
    assert job.results.get_nowait() == [(0, 200), (1, 200), (2, 200)]
    assert job.results.get_nowait() is None


def test_a_map_s_decoder_error_of_ours_is_its_value_and_a_cancelled_map_keeps_nothing() -> None:
    """A decoder's CachedexError is that request's value (the map goes on); once the caller
    stops reading, answers are dropped and nothing more is drawn from its requests."""

    def decode(response: Response) -> int:
        if response.status != 200:
            raise SourceError(response.url, "bad")
        return response.status

    drawn: list[int] = []

    def requests() -> object:
        for key, request in _requests(5):
            drawn.append(key)
            yield key, request

    job = MapJob(requests(), decode)  # type: ignore[arg-type]
    job.draw(2)
    job.deliver(0, Response("u", 500, [], b""))
    ((key, value),) = job.batch
    assert key == 0 and isinstance(value, SourceError) and "bad" in str(value)
    job.cancelled = True
    job.deliver(1, Response("u", 200, [], b""))
    assert len(job.batch) == 1 and job.pending == 0
    assert job.draw(2) == [] and job.exhausted and drawn == [0, 1]


def test_a_retry_after_date_already_past_asks_no_wait() -> None:
    """An HTTP date in the past is "now", never a negative pause; words are no date."""
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("") is None
    assert retry_after_seconds("\u0663") is None  # (an Arabic-Indic 3: a digit to str.isdigit)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"detail": "Not Found"}', "; the server says: Not Found"),
        (b'{"error": "quota\\texceeded   now"}', "; the server says: quota exceeded now"),
        (b'{"errors": [{"code": "DENIED", "message": "no"}]}', "; the server says: DENIED: no"),
        (b"[1, 2]", "; the server says: [1, 2]"),  # (not an object: its first line, as text)
        (b'{"errors": "x", "message": 7}', ""),
        (b'{"a": ' + b"[" * 5000, ""),  # nested past the parser's depth (and cut at 4 kB)
        (b"\xef\xbb\xbfbackend\t down", "; the server says: backend down"),
        (b"\x1f\x8b\x08\x00\x00", ""),  # gzip: no words
        (
            b'<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>gone</Message></Error>',
            "; the server says: NoSuchKey: gone",
        ),
        (b"oops \x1b[31mred", "; the server says: oops \\x1b[31mred"),
    ],
)
def test_what_an_error_body_says(body: bytes, said: str) -> None:
    """The server's own words: an OCI error's code and message, JSON's message, error or
    detail, S3's XML, or plain text's first line; white space collapsed, escapes shown;
    nothing for gzip or a JSON that names no message."""
    assert server_said(body) == said


def test_bare_deflate_one_byte_over_the_limit_is_refused_not_cut() -> None:
    """Bare deflate (no trailer) decoding to one byte more than the limit: zlib may take
    all its input and still hold output back, so only reading past the limit tells."""
    limit = 65_536
    packer = zlib.compressobj(wbits=-15)
    bare = packer.compress(b"a" * (limit + 1)) + packer.flush()
    with pytest.raises(ValueError, match="larger than 65,536 bytes once decoded"):
        undo_content_encoding([b"Content-Encoding: deflate"], bare, limit)
