"""What a first-byte GET's Content-Range says, from a server that refuses HEAD: the unit
in any case, a size the server does not know, a range it was not asked for; and a host
that forbids HEAD (URLs signed for GET) or labels a binary ``text/html``. A real nginx,
through an HTTP mirror's own ``size``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.config import HttpOptions
from cachedex.errors import SourceError
from cachedex.ingest.head_fallback import content_coding, content_length, first_byte_size
from cachedex.ingest.http import HttpClient
from cachedex.ingest.http_requests import HTML_PAGE, Response
from cachedex.ingest.sources import HttpSource
from tests.servers import Nginx

SIZE = 4096

#: Under /r/ HEAD is refused (405) and each file answers its first byte with the
#: Content-Range its name says (as a proxy in front of the store may rewrite it).
RANGES = {
    "upper-unit.spack": f"Bytes 0-0/{SIZE}",
    "unknown-total.spack": "bytes 0-0/*",
    "other-span.spack": f"bytes 0-1/{SIZE}",
}
#: Under /long/ HEAD is refused and Range ignored (the whole file, 200); so is the range's
#: end by one.spack, which answers the first byte "asked" with many.
LONG = "x" * 64
SERVER = "".join(
    f"location = /r/{name} {{ if ($request_method = HEAD) {{ return 405; }}\n"
    f'  add_header Content-Range "{given}" always; return 206 "x"; }}\n'
    for name, given in RANGES.items()
) + (
    "location /long/ { max_ranges 0; if ($request_method = HEAD) { return 405; } }\n"
    "location = /long/one.spack { if ($request_method = HEAD) { return 405; }\n"
    f'  add_header Content-Range "bytes 0-0/{SIZE}" always; return 206 "{LONG}"; }}\n'
    # an empty file there, answered as S3 answers a range of an empty object (416, a body)
    "location = /long/empty.spack { if ($request_method = HEAD) { return 405; }\n"
    f'  add_header Content-Range "bytes */0" always; return 416 "{LONG}"; }}\n'
    # a host refusing HEAD, ignoring Range, and answering a missing path with its page
    "location /soft/ { max_ranges 0; types { text/html html; } if ($request_method = HEAD) { return 405; }\n"
    "  try_files $uri /soft/404.html; }\n"
    # a host signing URLs for GET alone: HEAD is forbidden, GET is not
    "location /signed/ { if ($request_method = HEAD) { return 403; } }\n"
    # a binary the server labels text/html
    "location /labelled/ { types { text/html spack; } }\n"
)


def _served(tmp_path: Path) -> Path:
    www = tmp_path / "www"
    for folder in ("r", "signed", "labelled", "long", "soft"):
        (www / folder).mkdir(parents=True)
        (www / folder / "one.spack").write_bytes(b"\x1f" + bytes(SIZE - 1))
    (www / "soft/404.html").write_text("<!DOCTYPE html><html><body>Not found</body></html>\n" * 10)
    return www


def _size(nginx: Nginx, client: HttpClient, folder: str, name: str) -> int | None:
    return HttpSource(f"{nginx.url}/{folder}", client).size(name)


def test_a_content_range_unit_is_read_in_any_case(tmp_path: Path) -> None:
    # HTTP range units are case-insensitive (RFC 9110, 14.1).
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        assert _size(nginx, client, "r", "upper-unit.spack") == SIZE


def test_a_content_range_of_unknown_total_is_no_size_not_an_error(tmp_path: Path) -> None:
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        assert _size(nginx, client, "r", "unknown-total.spack") is None


def test_a_range_other_than_the_first_byte_is_an_error_naming_it(tmp_path: Path) -> None:
    """Its total might be of another representation: the size is not taken, the answer
    is said with the URL."""
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        with pytest.raises(SourceError) as raised:
            _size(nginx, client, "r", "other-span.spack")
        assert raised.value.url == f"{nginx.url}/r/other-span.spack"
        assert f"'bytes 0-1/{SIZE}' (HTTP 206)" in str(raised.value)


def test_a_host_forbidding_head_gives_sizes_by_get(tmp_path: Path) -> None:
    # A 403 to HEAD says nothing sure: the file is there, its GET says so.
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        assert _size(nginx, client, "signed", "one.spack") == SIZE
        assert _size(nginx, client, "signed", "gone.spack") is None


def test_a_binary_labelled_as_a_web_page_has_its_size(tmp_path: Path) -> None:
    # A HEAD cannot show its bytes; the first byte a GET shows is no markup.
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        assert _size(nginx, client, "labelled", "one.spack") == SIZE


def test_a_whole_web_page_in_answer_is_a_missing_file_where_pages_are() -> None:
    """A 200 answer (Range ignored) that is an HTML page is a soft 404 where pages say
    missing, and its Content-Length elsewhere."""
    page = b"<!DOCTYPE html><html><body>Not found</body></html>"
    headers = [b"HTTP/1.1 200 OK", b"Content-Type: text/html", f"Content-Length: {len(page)}".encode()]
    response = Response("http://h/m/one.spack", 200, headers, page)
    assert first_byte_size(response) == len(page)
    with pytest.raises(SourceError) as raised:
        first_byte_size(response, page_is_missing=True)
    assert raised.value.problem == HTML_PAGE


def test_a_first_byte_answered_with_many_is_said_so(tmp_path: Path) -> None:
    """Once a server is known to ignore Range, a 206 that carries more than the byte asked
    is stopped and said as such, with its URL (not taken for a whole file)."""
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        source = HttpSource(f"{nginx.url}/long", client)
        (tmp_path / "www/long/big.spack").write_bytes(bytes(SIZE))
        assert source.size("big.spack") == SIZE  # (a 200 for a range: Range ignored, remembered)
        with pytest.raises(SourceError) as raised:
            source.size("one.spack")
        assert raised.value.url == f"{nginx.url}/long/one.spack"
        assert "answered more than the first byte asked (Range: bytes=0-0)" in str(raised.value)
        # a 416 carries its body, not the file: the size its Content-Range says
        assert source.size("empty.spack") == 0


def test_a_soft_404_from_a_host_ignoring_range_is_a_missing_file(tmp_path: Path) -> None:
    """The whole page comes back for a first byte: stopped at its headers, its start shows
    a page, not the file; the page's length is not taken for the file's size."""
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        source = HttpSource(f"{nginx.url}/soft", client)
        assert source.size("one.spack") == SIZE
        assert source.size("gone.spack") is None


@pytest.mark.parametrize(("said", "length"), [("4096", 4096), ("4096, 4096", None), ("-1", None), ("", None)])
def test_a_content_length_that_is_no_number_is_no_size(said: str, length: int | None) -> None:
    # (proxies have joined duplicate headers into one; a broken server sends anything)
    response = Response("http://h/m/one.spack", 200, [b"HTTP/1.1 200 OK", b"Content-Length: " + said.encode()], b"")
    assert content_length(response) == length


@pytest.mark.parametrize(("said", "coding"), [("gzip, gzip", "gzip"), ("x-a, gzip, x-b", "another encoding, gzip")])
def test_a_coding_said_twice_is_named_once(said: str, coding: str) -> None:
    response = Response("http://h/m/one.spack", 200, [b"HTTP/1.1 200 OK", b"Content-Encoding: " + said.encode()], b"")
    assert content_coding(response) == coding
