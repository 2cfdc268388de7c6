"""The HTTP engine against real servers on 127.0.0.1: how many requests it has in flight,
when a retry goes, how long a Retry-After it waits for, and which status an answer cut
at its limit keeps."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cachedex.config import HttpOptions
from cachedex.errors import SourceError, TooBig
from cachedex.ingest.http import HttpClient, Request
from tests.servers import Nginx


def _files(http_server, count: int, fault: str) -> list[str]:  # type: ignore[no-untyped-def]
    urls = []
    for n in range(count):
        (http_server.state.root / f"{n}.json").write_text("{}")
        http_server.state.faults[f"/{n}.json"] = fault
        urls.append(f"{http_server.url}/{n}.json")
    return urls


class _Counting(BaseHTTPRequestHandler):
    """Answers each path's first GET with a 503 at once when ``fail_first``, every other
    after ``SLOW`` seconds; counts the requests being answered, each uncounted before its
    answer is written (so the client's next request cannot overlap it in the count)."""

    SLOW = 0.3
    lock = threading.Lock()
    in_flight = 0
    most = 0
    fail_first = False
    seen: set[str] = set()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - silence
        pass

    def do_GET(self) -> None:  # noqa: N802
        cls = type(self)
        with cls.lock:
            cls.in_flight += 1
            cls.most = max(cls.most, cls.in_flight)
            first = self.path not in cls.seen
            cls.seen.add(self.path)
        if not (cls.fail_first and first):
            time.sleep(cls.SLOW)
        with cls.lock:
            cls.in_flight -= 1
        self.send_response(503 if cls.fail_first and first else 200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


@pytest.fixture
def counting() -> Iterator[tuple[str, type[_Counting]]]:
    """A server on 127.0.0.1 that counts how many requests it answers at once."""
    handler = type("Handler", (_Counting,), {"seen": set()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_a_map_never_has_more_than_the_concurrency_in_flight(counting: tuple[str, type[_Counting]]) -> None:
    """http.concurrency is the most requests in flight at once, for a map's own requests
    and for retries that fall due together (six here, all due after the same backoff)."""
    base, handler = counting
    handler.fail_first = True
    urls = [f"{base}/{n}.json" for n in range(6)]
    with HttpClient(HttpOptions(concurrency=2, retries=1, backoff=0.2)) as client:
        got = dict(client.map(((url, Request(url, limit=100)) for url in urls), lambda r: r.status))
    assert got == dict.fromkeys(urls, 200)
    assert handler.most == 2


def test_single_requests_from_many_threads_share_the_concurrency(counting: tuple[str, type[_Counting]]) -> None:
    """Requests submitted by many threads at once start ``concurrency`` at a time."""
    base, handler = counting
    urls = [f"{base}/{n}.json" for n in range(6)]
    with HttpClient(HttpOptions(concurrency=2, retries=0)) as client, ThreadPoolExecutor(6) as pool:
        statuses = list(pool.map(lambda url: client.request(Request(url, limit=100)).status, urls))
    assert statuses == [200] * 6
    assert handler.most == 2


def test_a_retry_goes_when_its_backoff_is_over_not_a_second_later(http_server) -> None:  # type: ignore[no-untyped-def]
    """With nothing else to do, the engine wakes for a retry when it falls due."""
    (url,) = _files(http_server, 1, "500-once")
    with HttpClient(HttpOptions(retries=1, backoff=0.05)) as client:
        client.request(Request(url, limit=100))  # (engine started, idle)
        http_server.state.faults["/0.json"] = "500-once"
        time.sleep(0.1)
        started = time.monotonic()
        assert client.request(Request(url, limit=100)).status == 200
        took = time.monotonic() - started
    assert http_server.state.count("/0.json") == 4
    assert took < 0.6, took


def test_an_attempt_count_says_one_attempt_in_the_singular(http_server) -> None:  # type: ignore[no-untyped-def]
    """retries=0 is one attempt ("after 1 attempt"); retries=2 is three."""
    (url,) = _files(http_server, 1, "500")
    with HttpClient(HttpOptions(retries=0)) as client, pytest.raises(SourceError) as caught:
        client.request(Request(url, limit=100))
    assert str(caught.value).endswith("server error (HTTP 500), after 1 attempt"), caught.value
    with HttpClient(HttpOptions(retries=2, backoff=0.01)) as client, pytest.raises(SourceError) as caught:
        client.request(Request(url, limit=100))
    assert str(caught.value).endswith("after 3 attempts"), caught.value
    assert http_server.state.count("/0.json") == 4


def test_backoff_doubles_from_its_setting(http_server) -> None:  # type: ignore[no-untyped-def]
    """Two retries wait backoff, then twice backoff: 0.3 + 0.6 s in all (not 0.6 + 1.2)."""
    (url,) = _files(http_server, 1, "500")
    with HttpClient(HttpOptions(retries=2, backoff=0.3)) as client:
        started = time.monotonic()
        with pytest.raises(SourceError, match="after 3 attempts"):
            client.request(Request(url, limit=100))
        took = time.monotonic() - started
    assert 0.85 <= took < 1.6, took


def test_a_retry_after_of_a_minute_is_waited_for_one_past_it_is_not(http_server) -> None:  # type: ignore[no-untyped-def]
    """MAX_RETRY_AFTER (60 s) is the longest a server may ask for: 61 s gives up at once
    ("retry in 61 s, too long");
    60 s is waited for (the request is still pending when the client closes)."""
    (url,) = _files(http_server, 1, "429")
    http_server.state.retry_after = 61
    with (
        HttpClient(HttpOptions(retries=1, backoff=0.01)) as client,
        pytest.raises(SourceError, match="in 61 s, too long"),
    ):
        client.request(Request(url, limit=100))
    http_server.state.retry_after = 60
    client = HttpClient(HttpOptions(retries=1, backoff=0.01))
    told: list[BaseException] = []

    def ask() -> None:
        try:
            client.request(Request(url, limit=100))
        except SourceError as exc:
            told.append(exc)

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    time.sleep(0.5)
    assert not told and asking.is_alive()  # waiting the server's minute
    client.close()
    asking.join(timeout=5)
    assert len(told) == 1 and "the HTTP client was closed" in str(told[0]), told


def test_a_raw_small_read_sent_compressed_stays_as_stored(http_server) -> None:  # type: ignore[no-untyped-def]
    """``raw`` asks for the bytes as stored (a blob whose checksum is of its gzip bytes):
    a small read sent compressed unasked is not decoded then."""
    text = '{"a": "' + "x" * 300 + '"}'
    (http_server.state.root / "blob").write_text(text)
    http_server.state.faults["/blob"] = "gzip-unasked"
    with HttpClient(HttpOptions(retries=0)) as client:
        raw = bytes(client.request(Request(f"{http_server.url}/blob", limit=10_000, raw=True)).body)
        decoded = bytes(client.request(Request(f"{http_server.url}/blob", limit=10_000)).body)
    assert raw == gzip.compress(text.encode(), mtime=0) and decoded == text.encode()


def test_a_watcher_that_fails_is_no_file_too_big(http_server) -> None:  # type: ignore[no-untyped-def]
    """A write stopped by something other than the limit (the progress callback raised)
    is a failed read, not "larger than the limit"."""
    (http_server.state.root / "f").write_bytes(b"x" * 1000)

    def progress(got: int, total: int | None) -> None:
        raise RuntimeError("watcher broke")

    with HttpClient(HttpOptions(retries=0)) as client, pytest.raises(SourceError) as caught:
        client.request(Request(f"{http_server.url}/f", limit=10_000, progress=progress))
    assert not isinstance(caught.value, TooBig) and "larger than" not in str(caught.value), caught.value


def test_a_400_page_over_the_limit_is_a_400_not_too_big(tmp_path: Path) -> None:
    """An error answer whose page is over a small read's limit keeps its status, 400
    included (the first error status): it is refused, not a file too big."""
    (tmp_path / "www").mkdir()
    with (
        Nginx(tmp_path / "www", extra="location = /bad { return 400; }") as nginx,
        HttpClient(HttpOptions(retries=0)) as client,
        pytest.raises(SourceError) as caught,
    ):
        client.request(Request(f"{nginx.url}/bad", limit=10))
    assert "request refused (HTTP 400)" in str(caught.value) and not isinstance(caught.value, TooBig)


def test_a_watched_read_is_decoded_once_only(http_server) -> None:  # type: ignore[no-untyped-def]
    """A watched read is decoded by libcurl as it arrives: a file that is itself gzip
    (a tarball) sent with Content-Encoding: gzip comes back as the file, not unpacked too."""
    stored = gzip.compress(b"tarball " * 100, mtime=0)
    (http_server.state.root / "t.tar.gz").write_bytes(stored)
    http_server.state.faults["/t.tar.gz"] = "gzip-unasked"
    with HttpClient(HttpOptions(retries=0)) as client:
        watched = Request(f"{http_server.url}/t.tar.gz", limit=10_000, progress=lambda got, total: None)
        assert bytes(client.request(watched).body) == stored


def test_404_is_missing_and_403_is_refused_unless_asked_otherwise(http_server) -> None:  # type: ignore[no-untyped-def]
    """A 404 is SourceNotFound ("not found (HTTP 404)"); a 403 is a refusal, a missing
    file only for a request that takes it so (S3 without listing)."""
    from cachedex.errors import SourceNotFound
    from cachedex.ingest.http_requests import FORBIDDEN_MISSING

    (http_server.state.root / "d.json").write_text("{}")
    http_server.state.faults["/d.json"] = "403-s3"
    with HttpClient(HttpOptions(retries=0)) as client:
        with pytest.raises(SourceNotFound, match=r"not found \(HTTP 404\)"):
            client.request(Request(f"{http_server.url}/absent.json", limit=100))
        with pytest.raises(SourceError) as caught:
            client.request(Request(f"{http_server.url}/d.json", limit=1000))
        assert not isinstance(caught.value, SourceNotFound) and "request refused (HTTP 403)" in str(caught.value)
        with pytest.raises(SourceNotFound, match=r"missing \(or not readable: HTTP 403\)") as missing:
            client.request(Request(f"{http_server.url}/d.json", limit=1000, forbidden_is_missing=True))
        assert FORBIDDEN_MISSING in str(missing.value)


def test_a_map_whose_engine_fails_is_told_and_a_later_one_refused(  # type: ignore[no-untyped-def]
    http_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the engine fail (a bug: here, reading a Retry-After raises) while a map
    waits for its results, the map raises the failure instead of waiting for good;
    a map asked of the failed client afterwards is refused at once, naming it."""
    from cachedex.ingest import http

    urls = _files(http_server, 3, "429")
    http_server.state.retry_after = 1
    monkeypatch.setattr(http, "retry_after_seconds", lambda value: 1 / 0)

    def mapped(client: HttpClient) -> str:
        said: list[str] = []

        def run() -> None:
            try:
                list(client.map(((url, Request(url, limit=1000)) for url in urls), lambda response: response.body))
                said.append("answered")
            except SourceError as exc:
                said.append(str(exc))

        waiting = threading.Thread(target=run, daemon=True)  # (one left waiting must not hold the tests)
        waiting.start()
        waiting.join(timeout=30)
        return said[0] if said else "still waiting"

    with HttpClient(HttpOptions(retries=2, backoff=0.01)) as client:
        said = mapped(client)
        assert said.endswith("the HTTP engine failed (ZeroDivisionError: division by zero)"), said
        again = mapped(client)
        assert again.endswith("the HTTP engine failed (ZeroDivisionError: division by zero)"), again
