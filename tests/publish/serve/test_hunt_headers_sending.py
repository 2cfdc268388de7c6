"""What every answer's headers say and when a client's copy is confirmed: the security
policy names the error page's own inline code, Accept-Encoding is read as RFC 9110
writes it, If-Modified-Since in asctime's form is GMT whatever the server's zone, and a
304 carries the headers its 200 would have."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.requests import Request

from cachedex.catalog import Catalog
from cachedex.publish.render import ASSETS
from cachedex.publish.serve import create_app
from cachedex.publish.serve.cache import cached
from cachedex.publish.serve.headers import accepts_gzip
from cachedex.publish.serve.refusals import JSON
from cachedex.publish.serve.sending import send
from tests.publish.serve import get

#: A date long past (servable), as a state's Last-Modified.
DATE = 1_700_000_000


@pytest.fixture
def app(small_catalog: Catalog) -> Any:
    return create_app(small_catalog.path)


def _request(**headers: str) -> Request:
    """A GET request carrying ``headers`` (a real Starlette request, no app)."""
    raw = [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return Request({"type": "http", "method": "GET", "path": "/", "query_string": b"", "headers": raw})


@pytest.fixture
def local_zone() -> Iterator[Any]:
    """Sets the process's local time zone (``TZ``) for the test, then restores it."""
    before = os.environ.get("TZ")

    def use(zone: str) -> None:
        os.environ["TZ"] = zone
        time.tzset()

    yield use
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


def _sha256(text: str) -> str:
    return f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'"


def test_the_policy_allows_the_error_pages_own_script_and_style_each_in_its_directive(app: Any) -> None:
    """The inline script and style of the error page (any unknown URL) run under the
    policy: each is allowed by its own SHA-256 in its own directive, and only there."""
    page = get(app, "/no/such/page")
    assert page.status_code == 404
    directives = dict(d.strip().split(" ", 1) for d in page.headers["content-security-policy"].split(";"))
    (script,) = re.findall(r"<script>(.*?)</script>", page.text, re.S)
    (style,) = re.findall(r"<style>(.*?)</style>", page.text, re.S)
    assert directives["script-src"].split() == ["'self'", _sha256(script)]
    assert directives["style-src"].split() == ["'self'", _sha256(style)]


@pytest.mark.parametrize(
    ("header", "gzipped"),
    [
        ("GZIP", True),  # (coding names are case-insensitive)
        ("deflate, gzip ;q=0.5", True),  # (whitespace before ";" is allowed: OWS ";" OWS "q=")
        ("x-gzip;q=0, *", False),  # (x-gzip refused by name: "*" is for the codings not named)
        ("x-gzip;q=0.1, *;q=0", True),
    ],
)
def test_accept_encoding_is_read_as_rfc_9110_writes_it(header: str, gzipped: bool) -> None:
    """Names case-insensitive, optional whitespace before a weight, and a named coding's
    weight (x-gzip's, gzip's old name) over the wildcard's."""
    assert accepts_gzip(header) is gzipped


@pytest.mark.parametrize(
    ("zone", "since", "status"),
    [
        ("JST-9", DATE, 304),  # (the very date sent: the copy holds, east of Greenwich too)
        ("EST+5", DATE - 3600, 200),  # (an hour older: not the current copy, west of it too)
    ],
)
def test_if_modified_since_in_asctime_form_is_gmt_whatever_the_local_zone(
    local_zone: Any, zone: str, since: int, status: int
) -> None:
    """asctime's form names no zone; HTTP dates are GMT (RFC 9110), never the server's
    local time (read as local, it was hours off in any zone but UTC)."""
    local_zone(zone)
    asctime = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(since))
    hit = cached(b"{}", JSON, 200, '"tag"')
    assert send(_request(if_modified_since=asctime), hit, DATE).status_code == status


def test_an_answer_without_a_date_ignores_if_modified_since(app: Any) -> None:
    """The API's document and the assets have no Last-Modified: a client's
    If-Modified-Since is ignored (it was compared to no date), the answer sent whole."""
    since = {"if-modified-since": "Fri, 01 Jan 2100 00:00:00 GMT"}
    for path in ("/api/openapi.json", "/" + ASSETS["css"]):
        answer = get(app, path, **since)
        assert (answer.status_code, "last-modified" in answer.headers) == (200, False), path
        assert answer.content, path


def test_an_answer_without_an_etag_sends_no_etag_header(app: Any) -> None:
    """An asset (its version in its name) and the error page have no ETag: none is sent,
    not an empty one nor a bare ``-gzip"``, plain or gzipped."""
    for encoding in ("gzip", "identity"):
        for path in ("/" + ASSETS["css"], "/no/such/page"):
            answer = get(app, path, **{"accept-encoding": encoding})
            assert "etag" not in answer.headers, (path, encoding)
    hit = cached(b"x" * 2000, JSON, 200, "")
    assert hit.gzipped is not None
    assert "etag" not in send(_request(accept_encoding="gzip"), hit, None).headers


def test_a_304_carries_the_headers_its_200_would(app: Any) -> None:
    """RFC 9110 (15.4.5): a 304 sends the ETag, Cache-Control and Vary the 200 would,
    so that a cache updates its stored copy's; it has no body."""
    for encoding in ("gzip", "identity"):
        full = get(app, "/tags/t/", **{"accept-encoding": encoding})
        again = get(app, "/tags/t/", **{"accept-encoding": encoding, "if-none-match": full.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        for name in ("etag", "cache-control", "vary"):
            assert again.headers.get(name) == full.headers[name], (name, encoding)
