"""The HTTP layer with real servers: nginx (as a CDN serves mirrors), a forward proxy
(tinyproxy), TLS with a private CA, and a scripted server for faults. Every failure names
the URL and leaves the catalog exactly as it was."""

from __future__ import annotations

import base64
import contextlib
import json
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.config import HttpOptions, load_config, parse_config
from cachedex.demo.build import build_demo_mirrors
from cachedex.errors import ConfigError, SourceError, SourceNotFound
from cachedex.ingest import sizes
from cachedex.ingest.http import HttpClient, Request, TooBig
from cachedex.ingest.http_requests import retry_after_seconds, server_said
from cachedex.ingest.manifests import spec_manifest_path
from cachedex.ingest.outcomes import TagOutcome
from cachedex.ingest.sync import sync
from tests.helpers import (
    LIBDWARF_CORE2,
    MIRRORS,
    dump,
    fixture_index,
    listed_specs,
    make_config,
    write_v2_mirror,
    write_v3_mirror,
)
from tests.servers import Nginx, Tinyproxy, make_certificates

DEMO_TAG = "develop-2026-11-08"  # layout 3, spec manifests with sizes, twelve stacks as views


@pytest.fixture(scope="module")
def demo_mirrors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One v3 demo tag written as real mirrors (and its config, with relative paths)."""
    folder = tmp_path_factory.mktemp("mirrors")
    build_demo_mirrors(folder, tags=[DEMO_TAG])
    return folder


def _http_config(folder: Path, base_url: str, **http: object) -> Path:
    """The demo config with its mirrors at ``base_url`` instead of the folder (and its
    views named: HTTP cannot list them)."""
    views = sorted(p.name for p in (folder / "mirrors" / DEMO_TAG / "v3/manifests/index").iterdir() if p.is_dir())
    text = (folder / "cachedex.yaml").read_text().replace("./mirrors", f"{base_url}/mirrors")
    text = text.replace("views: all", f"views: [{', '.join(views)}]")
    settings = json.dumps({"concurrency": 8, "retries": 1, "backoff": 0.05, **http})
    path = folder / f"http-{abs(hash(base_url))}.yaml"
    path.write_text(text.replace("catalog: cachedex.sqlite", f"catalog: {path.stem}.sqlite") + f"http: {settings}\n")
    return path


def _sync(config_path: Path) -> tuple[list[object], list[object]]:
    config = load_config(config_path)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        return listed_specs(catalog, DEMO_TAG), [outcome]


@pytest.fixture(params=["this process", "a second process"])
def manifests_read_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Where a sync reads the demo tag's spec manifests: here, or (the threshold lowered
    to their number) in the second process, over its own HTTP client, which must take the
    same settings and environment."""
    if request.param == "a second process":
        monkeypatch.setattr(sizes, "IN_PROCESS_MIN", 1)
    return str(request.param)


def test_a_sync_from_nginx_equals_the_sync_from_the_folder(demo_mirrors: Path, manifests_read_by: str) -> None:
    local, _ = _sync(demo_mirrors / "cachedex.yaml")
    with Nginx(demo_mirrors, log_requests=True) as nginx:
        config = _http_config(demo_mirrors, nginx.url)
        remote, (outcome,) = _sync(config)
        assert remote == local and any(spec.size for spec in remote)  # sizes came over HTTP too
        assert outcome.sizes_fetched == sum(1 for spec in remote if spec.size is not None)  # type: ignore[attr-defined]
        served = len(nginx.requests())
        again, (second,) = _sync(config)
        assert again == local and second.sizes_fetched == 0  # type: ignore[attr-defined]
        new = nginx.requests()[served:]
        # unchanged: one index manifest per mirror (ETag: 304), no blob, no spec manifest
        assert {path.rsplit("/", 1)[-1] for _, path, _ in new} == {"index.manifest.json"}
        assert all(status == 304 for _, _, status in new)


def test_a_proxy_from_the_environment_carries_every_request(
    demo_mirrors: Path, monkeypatch: pytest.MonkeyPatch, manifests_read_by: str
) -> None:
    with Nginx(demo_mirrors) as nginx, Tinyproxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        remote, _ = _sync(_http_config(demo_mirrors, nginx.url))
        relayed = proxy.relayed()
        assert remote and f"127.0.0.1:{nginx.port}/mirrors/{DEMO_TAG}/v3/manifests/index" in relayed
        assert f"127.0.0.1:{nginx.port}/mirrors/{DEMO_TAG}/v3/manifests/spec/" in relayed  # the sizes' reads too
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        before = relayed.count("GET")
        with HttpClient(HttpOptions()) as client:
            client.request(
                Request(f"{nginx.url}/mirrors/{DEMO_TAG}/v3/manifests/index/index.manifest.json", limit=10**6)
            )
        assert proxy.relayed().count("GET") == before  # NO_PROXY: straight to the server


def test_no_proxy_names_hosts_as_urllib_does_and_a_redirect_leaves_it(  # type: ignore[no-untyped-def]
    http_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A redirect from a host NO_PROXY names to one it does not name went around the
    proxy (the proxy was dropped for the request, every hop); NO_PROXY's host:port and
    bracketed IPv6 forms, which urllib (and so Spack) reads, were not read."""
    port = http_server.url.rsplit(":", 1)[1]
    (http_server.state.root / "b.json").write_text("{}")
    http_server.state.faults["/a.json"] = f"redirect:http://127.0.0.1:{port}/b.json"
    monkeypatch.delenv("NO_PROXY", raising=False)
    with Tinyproxy() as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.setenv("no_proxy", "localhost")
        with HttpClient(HttpOptions(retries=0)) as client:
            assert client.request(Request(f"http://localhost:{port}/a.json", limit=100)).body == b"{}"
        relayed = proxy.relayed()
        assert f"127.0.0.1:{port}/b.json" in relayed and "a.json" not in relayed, relayed
        for bypassed in (f"127.0.0.1:{port}", f"localhost:{port}"):
            monkeypatch.setenv("no_proxy", bypassed)
            monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # (nothing listens: used, it fails)
            host = bypassed.split(":")[0]
            with HttpClient(HttpOptions(retries=0)) as client:
                assert client.request(Request(f"http://{host}:{port}/b.json", limit=100)).body == b"{}"
        # NO_PROXY=* (an inherited proxy switched off) holds for a redirect's next hop too
        monkeypatch.setenv("no_proxy", "*")
        with HttpClient(HttpOptions(retries=0)) as client:
            assert client.request(Request(f"http://localhost:{port}/a.json", limit=100)).body == b"{}"


def test_a_tag_after_a_big_one_through_a_proxy(
    demo_mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The big tag's hundreds of reads leave kept-alive connections to the proxy that it
    closes meanwhile: the next tag's first request met only dead ones, and its retry
    the same (libcurl tries five); a retry now takes a connection of its own."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "mirrors").symlink_to(demo_mirrors / "mirrors")
    shutil.copytree(MIRRORS / "v2_layout/unsigned", tmp_path / "www" / "small")
    with Nginx(tmp_path / "www") as nginx, Tinyproxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        tags = [
            {"name": "big", "url": f"{nginx.url}/mirrors/{DEMO_TAG}"},
            {"name": "small", "url": f"{nginx.url}/small"},
        ]
        config = make_config(tmp_path, tags, timeout=3, retries=1, backoff=0.1)
        with Catalog(config.catalog) as catalog:
            outcomes = sync(config, catalog)
    assert [(o.tag, o.ok, o.error) for o in outcomes] == [("big", True, None), ("small", True, None)]


def test_https_with_a_private_ca(
    demo_mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, manifests_read_by: str
) -> None:
    ca, cert, key = make_certificates(tmp_path / "tls")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with Nginx(demo_mirrors, tls=(cert, key)) as nginx:
        url = f"{nginx.url}/mirrors/{DEMO_TAG}/v3/manifests/index/index.manifest.json"
        with HttpClient(HttpOptions(retries=0)) as client, pytest.raises(SourceError, match="TLS failed") as info:
            client.request(Request(url, limit=10**6))
        assert "http.ca_bundle" in str(info.value) and url in str(info.value)
        remote, _ = _sync(_http_config(demo_mirrors, nginx.url, ca_bundle=str(ca)))
        assert remote == _sync(demo_mirrors / "cachedex.yaml")[0]  # sizes included
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        with HttpClient(HttpOptions(retries=0)) as client:
            assert client.request(Request(url, limit=10**6)).status == 200
            # A certificate for another name: said so, not the CA's hint (no bundle helps)
            other = url.replace("127.0.0.1", "localhost")
            with pytest.raises(SourceError, match="TLS failed") as info:
                client.request(Request(other, limit=10**6))
        assert "certificate is for another host name" in str(info.value) and "ca_bundle" not in str(info.value)


class _TlsFront:
    """A TLS front for a plain proxy (as an HTTPS proxy is reached): each connection's
    TLS ended here with ``cert``, its bytes relayed to ``port`` and back."""

    def __init__(self, cert: Path, key: Path, port: int) -> None:
        import socket
        import ssl

        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(cert, key)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.url = f"https://127.0.0.1:{self._listener.getsockname()[1]}"
        self._port, self._closed = port, threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        import socket

        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:  # (the timeout: look at _closed again)
                continue
            try:
                secure = self._context.wrap_socket(client, server_side=True)
            except OSError:  # (a client that refused the certificate)
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self._port), timeout=30)
            for source, target in ((secure, upstream), (upstream, secure)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: Any, target: Any) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                with contextlib.suppress(OSError):
                    end.close()

    def __enter__(self) -> _TlsFront:
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        self._thread.join(timeout=5)
        self._listener.close()


def test_an_https_proxy_behind_a_private_ca_is_trusted_as_the_mirrors_are(  # type: ignore[no-untyped-def]
    http_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """http.ca_bundle (or SSL_CERT_FILE) was set for mirrors only: an HTTPS proxy with a
    private CA's certificate failed, with the advice to set what was set."""
    ca, cert, key = make_certificates(tmp_path / "tls")
    (http_server.state.root / "a.json").write_text("{}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with Tinyproxy() as proxy, _TlsFront(cert, key, proxy.port) as front:
        monkeypatch.setenv("http_proxy", front.url)
        with HttpClient(HttpOptions(retries=0, ca_bundle=str(ca))) as client:
            assert client.request(Request(f"{http_server.url}/a.json", limit=100)).body == b"{}"
        assert "a.json" in proxy.relayed()
        with HttpClient(HttpOptions(retries=0)) as client, pytest.raises(SourceError, match="TLS failed"):
            client.request(Request(f"{http_server.url}/a.json", limit=100))  # (its CA not given: refused)


def test_a_proxy_that_asks_for_credentials_says_where_they_go(
    demo_mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its 407 to a CONNECT was "cannot connect (CONNECT tunnel failed, response 407)",
    tried four times, naming neither the proxy nor where its credentials are written."""
    ca, cert, key = make_certificates(tmp_path / "tls")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with Nginx(demo_mirrors, tls=(cert, key)) as nginx, Tinyproxy(auth=("reader", "s3cret")) as proxy:
        url = f"{nginx.url}/mirrors/{DEMO_TAG}/v3/manifests/index/index.manifest.json"
        monkeypatch.setenv("https_proxy", proxy.url)
        options = HttpOptions(retries=3, backoff=0.01, ca_bundle=str(ca))
        with HttpClient(options) as client, pytest.raises(SourceError) as caught:
            client.request(Request(url, limit=10**6))
        said = str(caught.value)
        assert "the proxy asks for credentials" in said and "https_proxy=http://USER:PASSWORD@HOST:PORT" in said
        assert "attempt" not in said, said
        monkeypatch.setenv("https_proxy", proxy.url.replace("http://", "http://reader:s3cret@"))
        with HttpClient(HttpOptions(retries=0, ca_bundle=str(ca))) as client:
            assert client.request(Request(url, limit=10**6)).status == 200


# -- faults, from a scripted server --------------------------------------------------------------


@pytest.fixture
def v3_mirror(http_server, mirrors: Path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A v3 mirror of the real test index on the scripted server; yields its URL."""
    write_v3_mirror(http_server.state.root / "m", fixture_index(mirrors))
    yield f"{http_server.url}/m"


def _blob(http_server) -> str:  # type: ignore[no-untyped-def]
    (blob,) = (http_server.state.root / "m/blobs/sha256").glob("*/*")
    return "/" + str(blob.relative_to(http_server.state.root))


@pytest.mark.parametrize("fault", ["503-once", "cut-once", "never-once"])
def test_transient_faults_are_retried(http_server, v3_mirror: str, tmp_path: Path, fault: str) -> None:  # type: ignore[no-untyped-def]
    http_server.state.stall_seconds = 3.0
    http_server.state.faults[_blob(http_server)] = fault
    config = make_config(tmp_path, [{"name": "t", "url": v3_mirror}], timeout=1)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    assert http_server.state.count(_blob(http_server)) == 2


def test_https_to_a_plain_http_server_says_so_at_once(http_server) -> None:  # type: ignore[no-untyped-def]
    (http_server.state.root / "a.json").write_text("{}")
    secure = http_server.url.replace("http://", "https://")
    with HttpClient(HttpOptions(retries=2, backoff=0.01)) as client, pytest.raises(SourceError) as caught:
        client.request(Request(f"{secure}/a.json", limit=100))
    assert "the server speaks plain HTTP here; write http:// (oci+http:// for a registry)" in str(caught.value)
    assert "attempts" not in str(caught.value) and "ca_bundle" not in str(caught.value)  # not retried, no CA


def test_429_waits_as_long_as_retry_after_asks(http_server, v3_mirror: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    http_server.state.faults[_blob(http_server)] = "429-once"
    http_server.state.retry_after = 1
    config = make_config(tmp_path, [{"name": "t", "url": v3_mirror}], backoff=0.01)
    started = time.monotonic()
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    assert time.monotonic() - started >= 1.0  # not the 0.01 s backoff: the server's 1 s
    http_server.state.faults[_blob(http_server)] = "429"
    http_server.state.retry_after = 3600
    with HttpClient(HttpOptions(retries=2)) as client, pytest.raises(SourceError, match="retry in 3600 s, too long"):
        client.request(Request(f"{http_server.url}{_blob(http_server)}", limit=10**9))


def test_a_retry_after_of_other_digits_is_passed_over_and_the_engine_never_stops(  # type: ignore[no-untyped-def]
    http_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Retry-After: ²" (a digit to str.isdigit, not to float) raised in the engine
    thread, which ended, and every request waited for good; should anything else raise
    there, the requests waiting are told, not left waiting."""
    from concurrent.futures import ThreadPoolExecutor

    from cachedex.ingest import http

    (http_server.state.root / "busy.json").write_text("{}")
    http_server.state.faults["/busy.json"] = "429"
    http_server.state.retry_after = "\u00b2"
    assert retry_after_seconds("\u00b2") is None and retry_after_seconds(" 2 ") == 2.0

    def asked(url: str) -> str:
        with HttpClient(HttpOptions(retries=1, backoff=0.01)) as client:
            try:
                client.request(Request(url, limit=1000))
            except SourceError as exc:
                return str(exc)
        return "answered"

    with ThreadPoolExecutor(1) as pool:
        said = pool.submit(asked, f"{http_server.url}/busy.json").result(timeout=60)
        assert said.endswith("too many requests (HTTP 429), after 2 attempts"), said
        assert http_server.state.count("/busy.json") == 2  # (one retry: two asked, not said)
        monkeypatch.setattr(http, "retry_after_seconds", lambda value: 1 / 0)  # (a bug in the engine)
        said = pool.submit(asked, f"{http_server.url}/busy.json").result(timeout=60)
        assert said.endswith(": the HTTP engine failed (ZeroDivisionError: division by zero)"), said
        # One that cannot even be started is told so, and the engine goes on for the others
        (http_server.state.root / "fine.json").write_text("{}")
        prepare = http.HandleOptions.prepare

        def refused(self, handle, request):  # type: ignore[no-untyped-def]
            if request.url.endswith("/busy.json"):
                raise KeyError("no such option")
            return prepare(self, handle, request)

        monkeypatch.setattr(http.HandleOptions, "prepare", refused)
        said = pool.submit(asked, f"{http_server.url}/busy.json").result(timeout=60)
        assert said.endswith("cannot be requested ('no such option')"), said
        assert pool.submit(asked, f"{http_server.url}/fine.json").result(timeout=60) == "answered"


def test_an_error_says_what_the_server_said(http_server) -> None:  # type: ignore[no-untyped-def]
    """A registry's pull rate limit (429) and S3's refusal (403) came as their status
    alone, where their bodies say why (and how to lift it); the server's words are
    quoted, cut short, their escape sequences shown as escapes. An HTML error page
    says nothing (its markup is no message)."""
    for name in ("limited.json", "denied.json", "page.json"):
        (http_server.state.root / name).write_text("{}")
    http_server.state.faults.update({"/limited.json": "429-pull-limit", "/denied.json": "403-s3", "/page.json": "500"})
    said = {}
    with HttpClient(HttpOptions(retries=1, backoff=0.01)) as client:
        http_server.state.retry_after = 0
        for name in ("limited.json", "denied.json", "page.json"):
            with pytest.raises(SourceError) as caught:
                client.request(Request(f"{http_server.url}/{name}", limit=1000))
            said[name] = str(caught.value)
    assert (
        "too many requests (HTTP 429); the server says: TOOMANYREQUESTS: You have reached your unauthenticated pull "
        "rate limit.\\x1b[31m https://www.docker.com/increase-rate-limit, after 2 attempts"
    ) in said["limited.json"]
    assert said["denied.json"].endswith("request refused (HTTP 403); the server says: AccessDenied: Access Denied")
    assert "server error (HTTP 500), after 2 attempts" in said["page.json"] and "says" not in said["page.json"]


def test_a_hash_file_a_server_fails_to_give_is_no_check(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Spack reads a v2 mirror whose index.json.hash answers a server error ("failure to
    fetch index.json.hash is not fatal"); cachedex failed the sync."""
    write_v2_mirror(http_server.state.root / "m", fixture_index(mirrors))
    http_server.state.faults["/m/build_cache/index.json.hash"] = "500"
    config = make_config(tmp_path, [{"name": "t", "url": f"{http_server.url}/m"}], backoff=0.01)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error


def test_an_html_page_with_a_byte_order_mark_says_nothing() -> None:
    """A page's markup is no message, with a UTF-8 mark before it too; a first line is
    read though the 4 kB looked at end inside a character."""
    assert server_said(b"\xef\xbb\xbf<!DOCTYPE html><html><script>x</script>") == ""
    assert server_said(b"backend down\n" + "é".encode() * 3000) == "; the server says: backend down"


def test_what_a_server_says_is_cut_at_its_bound_and_no_sooner() -> None:
    """SAID_MOST characters are said whole; one more, cut to that many with an ellipsis."""
    from cachedex.ingest.http_requests import SAID_MOST

    assert server_said(b"x" * SAID_MOST) == "; the server says: " + "x" * SAID_MOST
    assert server_said(b"x" * (SAID_MOST + 1)) == "; the server says: " + "x" * (SAID_MOST - 1) + "\u2026"


def test_a_part_where_the_whole_was_asked_says_so(http_server) -> None:  # type: ignore[no-untyped-def]
    """A 206 to a plain GET (a cache answering another request's range) was "request
    refused (HTTP 206)", which names no cause; it is never taken for the file."""
    (http_server.state.root / "index.json").write_text("{}")
    http_server.state.faults["/index.json"] = "206"
    with HttpClient(HttpOptions(retries=0)) as client, pytest.raises(SourceError) as caught:
        client.request(Request(f"{http_server.url}/index.json", limit=1000))
    assert "a part of the file (HTTP 206) where the whole was asked" in str(caught.value)


def test_a_request_waiting_when_the_client_closes_is_told(http_server) -> None:  # type: ignore[no-untyped-def]
    """A single request in flight when the client closed was never answered: its thread
    waited for good (and the interpreter's exit waited for that thread)."""
    (http_server.state.root / "x.json").write_text("{}")
    http_server.state.faults["/x.json"] = "never"
    http_server.state.stall_seconds = 20
    client = HttpClient(HttpOptions(retries=0, timeout=60))
    outcome: queue.Queue[object] = queue.Queue()

    def ask() -> None:
        try:
            outcome.put(client.request(Request(f"{http_server.url}/x.json", limit=100)))
        except SourceError as exc:
            outcome.put(exc)

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    deadline = time.monotonic() + 10
    while http_server.state.count("/x.json") < 1:  # (in flight: asked, not answered)
        assert time.monotonic() < deadline
        time.sleep(0.02)
    began = time.monotonic()
    client.close()
    told = outcome.get(timeout=5)
    assert isinstance(told, SourceError) and "the HTTP client was closed" in str(told), told
    assert time.monotonic() - began < 5


def test_the_engine_waits_for_slow_answers_without_spinning(http_server) -> None:  # type: ignore[no-untyped-def]
    """Every request of a map started, fewer than the concurrency, their answers slow:
    the engine waits on the sockets. (It went round without waiting, a core busy for as
    long as a slow server took: a minute's sync of a static server's 650 manifests.)"""
    for name in "abc":
        (http_server.state.root / f"{name}.json").write_text("{}")
        http_server.state.faults[f"/{name}.json"] = "slow"
    http_server.state.stall_seconds = 1.0
    with HttpClient(HttpOptions(concurrency=8, retries=0)) as client:
        started_cpu, started = time.process_time(), time.monotonic()
        requests = ((n, Request(f"{http_server.url}/{n}.json", limit=100)) for n in "abc")
        answers = dict(client.map(requests, lambda response: len(response.body)))
        cpu, wall = time.process_time() - started_cpu, time.monotonic() - started
    assert answers == {"a": 2, "b": 2, "c": 2} and wall >= 1.0
    assert cpu < wall / 4, f"{cpu:.2f} s of CPU in {wall:.2f} s"


def test_a_decoder_s_bug_reaches_the_caller_and_the_engine_goes_on(http_server) -> None:  # type: ignore[no-untyped-def]
    """An exception that is not the decoder's verdict (a bug) is raised by ``map``; the
    engine, whose thread ran the decoder, still answers the next request (it ended, and
    every request after it waited for good)."""
    (http_server.state.root / "a.json").write_text("{}")
    request = Request(f"{http_server.url}/a.json", limit=100)

    def broken(response: object) -> int:
        raise TypeError("a bug")

    def in_a_thread(work: Callable[[], object]) -> object:  # (a daemon: a hung map fails the test, not the run)
        outcome: queue.Queue[object] = queue.Queue()
        threading.Thread(target=lambda: outcome.put(_outcome_of(work)), daemon=True).start()
        return outcome.get(timeout=20)

    client = HttpClient(HttpOptions(retries=0))
    failed = in_a_thread(lambda: list(client.map([("a", request)], broken)))
    assert isinstance(failed, TypeError) and str(failed) == "a bug"
    assert in_a_thread(lambda: list(client.map([("a", request)], lambda r: r.status))) == [("a", 200)]
    client.close()


def _outcome_of(work: Callable[[], object]) -> object:
    try:
        return work()
    except Exception as exc:
        return exc


def test_a_request_sends_its_own_headers_and_none_of_the_one_before(http_server) -> None:  # type: ignore[no-untyped-def]
    """One handle serves request after request: a registry's token or an index's
    validators must not go with the next request, to whatever host it goes."""
    (http_server.state.root / "a.json").write_text("{}")
    (http_server.state.root / "b.json").write_text("[]")
    secret = ["Authorization: Bearer SECRET", 'If-None-Match: "x"', "Accept: application/vnd.oci.image.index.v1+json"]
    with HttpClient(HttpOptions(concurrency=1, retries=0)) as client:
        client.request(Request(f"{http_server.url}/a.json", headers=secret, limit=100))
        client.request(Request(f"{http_server.url}/b.json", limit=100))
        client.request(Request(f"{http_server.url}/a.json", headers=secret[:1], limit=100))
        # A watched read sends no header of its own (libcurl then asks for a coding itself).
        client.request(Request(f"{http_server.url}/b.json", limit=100, progress=lambda done, total: None))
    first, second, third, fourth = http_server.state.headers
    assert first["Authorization"] == "Bearer SECRET" and first["If-None-Match"] == '"x"'
    assert "Authorization" not in second and "If-None-Match" not in second
    assert second.get("Accept") == "*/*"
    assert third["Authorization"] == "Bearer SECRET" and "If-None-Match" not in third
    assert "Authorization" not in fourth and fourth.get("Accept") == "*/*"


def test_a_head_through_a_redirect_has_the_headers_of_the_last_answer(http_server) -> None:  # type: ignore[no-untyped-def]
    """libcurl hands over the headers of every response it followed: the redirect's
    Content-Length (0) joined to the file's was no size at all."""
    (http_server.state.root / "b.json").write_bytes(b"x" * 1234)
    http_server.state.faults["/a.json"] = f"redirect:{http_server.url}/b.json"
    with HttpClient(HttpOptions(concurrency=1, retries=0)) as client:
        response = client.request(Request(f"{http_server.url}/a.json", method="HEAD", limit=0))
    assert response.headers["content-length"] == "1234" and "location" not in response.headers


@pytest.mark.parametrize(
    ("fault", "settings", "message"),
    [
        ("503", {}, "server error (HTTP 503), after 2 attempts"),
        ("never", {"timeout": 1}, "timed out (no data for 1 s), after 2 attempts"),
        # http.deadline is a request's time in all: not retried (it was, 4 × with 3 retries)
        pytest.param("drip", {"deadline": 2}, "timed out (not done within 2 s)", id="HANG-1-drip"),
        ("cut", {}, "connection closed before the whole answer arrived"),
        # not retried, and not "cannot connect"
        pytest.param("redirect-file", {}, "refused a redirect", id="MSG-3-redirect-to-file"),
        ("redirect-loop", {}, "redirected too many times, in a loop or a chain"),  # not "only http(s)"
        ("not-http", {}, "the server's answer is not HTTP"),  # not "refused a redirect"
        pytest.param("304", {}, "unexpected 304 Not Modified to an unconditional request", id="CRASH-2-304"),
    ],
)
def test_a_fault_that_lasts_fails_the_tag_and_changes_nothing(  # type: ignore[no-untyped-def]
    http_server, mirrors: Path, v3_mirror: str, tmp_path: Path, fault: str, settings: dict[str, object], message: str
) -> None:
    config = make_config(tmp_path, [{"name": "t", "url": v3_mirror}], **settings)
    with Catalog(config.catalog) as catalog:
        assert sync(config, catalog)[0].ok
        before = dump(catalog)
        index = fixture_index(mirrors, drop=(LIBDWARF_CORE2,))  # a new index: a new blob to fetch
        write_v3_mirror(http_server.state.root / "m", index)
        http_server.state.stall_seconds = 4.0
        http_server.state.drip_seconds = 0.3
        http_server.state.faults[_blob_for(http_server, index)] = fault
        started = time.monotonic()
        (outcome,) = sync(config, catalog)
        assert not outcome.ok and outcome.error is not None
        assert outcome.error.startswith(f"{http_server.url}/m/blobs/sha256/"), outcome.error
        assert message in outcome.error
        assert fault != "drip" or "attempt" not in outcome.error, outcome.error
        assert dump(catalog) == before
        assert time.monotonic() - started < 20
        if fault in ("redirect-file", "304"):
            assert http_server.state.count(_blob_for(http_server, index)) == 1


def _blob_for(http_server, index: dict[str, object]) -> str:  # type: ignore[no-untyped-def]
    import hashlib

    digest = hashlib.sha256(json.dumps(index, separators=(",", ":")).encode()).hexdigest()
    return f"/m/blobs/sha256/{digest[:2]}/{digest}"


def test_sec2_downloads_are_bounded_after_decompression(http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A 1 MB gzip answer took a sync to 2 GB."""
    (http_server.state.root / "bomb").write_bytes(b"x")
    http_server.state.faults["/bomb"] = "gzip-bomb"
    with HttpClient(HttpOptions(retries=0)) as client:
        seen: list[int] = []
        watched = Request(f"{http_server.url}/bomb", limit=10_000_000, progress=lambda got, total: seen.append(got))
        with pytest.raises(TooBig, match="larger than 10,000,000 bytes"):
            client.request(watched)
        assert max(seen) < 11_000_000
        with pytest.raises(SourceError):  # not decompressed at all: the limit counts what arrives
            client.request(Request(f"{http_server.url}/bomb", limit=10_000))


def test_a_stopped_size_phase_keeps_its_sizes(http_server, mirrors: Path, v3_mirror: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Sizes are fetched once ever: what a failed size phase fetched is kept, and the next
    sync, with the index unchanged, fetches only the rest."""
    index = fixture_index(mirrors)
    listed = [h for h, r in index["database"]["installs"].items() if r["in_buildcache"]]  # type: ignore[index]
    broken = []
    for dag_hash in listed[:2]:
        node = index["database"]["installs"][dag_hash]["spec"]  # type: ignore[index]
        path = "/m/" + spec_manifest_path(node["name"], node["version"], dag_hash)
        http_server.state.faults[path] = "500"
        broken.append(path)
    config = make_config(tmp_path, [{"name": "t", "url": v3_mirror}], retries=0)
    with Catalog(config.catalog) as catalog:
        (first,) = sync(config, catalog)
        assert first.ok and first.sizes_fetched == len(listed) - 2
        assert any("2 sizes unknown" in w for w in first.warnings)
        (stats,) = catalog.tag_stats(["t"])
        assert (stats.specs, stats.sized) == (len(listed), len(listed) - 2)  # outputs can say "n of m"
        for path in broken:
            del http_server.state.faults[path]
        asked = len(http_server.state.requests)
        (second,) = sync(config, catalog)
        assert second.ok and second.sizes_fetched == 2
        manifests = [p for _, p in http_server.state.requests[asked:] if p.endswith(".spec.manifest.json")]
        assert sorted(manifests) == sorted(broken)
        (stats,) = catalog.tag_stats(["t"])
        assert stats.sized == stats.specs


def test_progress_is_silent_on_a_pipe(demo_mirrors: Path) -> None:
    from click.testing import CliRunner

    from cachedex.cli import main

    result = CliRunner().invoke(main, ["--config", str(demo_mirrors / "cachedex.yaml"), "sync"])
    assert result.exit_code == 0, result.output
    assert "sizes" not in result.output and "eta" not in result.output  # no progress lines, just the table


def test_progress_on_a_terminal_shows_count_rate_and_eta() -> None:
    import io

    from rich.console import Console

    from cachedex.cli.progress import Reporter

    buffer = io.StringIO()
    reporter = Reporter(enabled=True, console=Console(file=buffer, force_terminal=True, width=120))
    assert reporter._progress is not None
    with reporter:
        line = reporter.task("develop/root: sizes", total=1000)
        for _ in range(4):
            line.advance(100)
            time.sleep(0.1)
        reporter._progress.refresh()
        shown = buffer.getvalue()
    assert "400/1000" in shown and "/s" in shown and "eta" in shown


@pytest.mark.parametrize("zone", ["America/St_Johns", "Pacific/Kiritimati", "UTC"])
def test_retry_after_in_asctime_form_is_read_as_gmt_in_any_local_zone(monkeypatch, zone: str) -> None:  # type: ignore[no-untyped-def]
    """RFC 9110 has recipients accept asctime's form, which names no zone: it is GMT, as
    every HTTP date is; read as local time it asked 3.5 h more (or nothing) elsewhere."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        when = time.gmtime(time.time() + 60)
        asctime = time.strftime("%a %b ", when) + f"{when.tm_mday:2d}" + time.strftime(" %H:%M:%S %Y", when)
        waited = retry_after_seconds(asctime)
        assert waited is not None and 55 <= waited <= 61, asctime
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_url_or_header_libcurl_cannot_take_fails_its_request_and_the_engine_goes_on(http_server) -> None:  # type: ignore[no-untyped-def]
    """A URL or a header that is not ASCII raised in the engine thread, which ended: the
    request, and every one after it, waited for good (a mirror's ETag with byte 0xe9,
    stored, hung every later sync). URLs go percent-encoded, validators as their bytes."""
    from concurrent.futures import ThreadPoolExecutor

    (http_server.state.root / "a.json").write_text("{}")
    with HttpClient(HttpOptions(concurrency=2, retries=0)) as client, ThreadPoolExecutor(1) as pool:
        ask = lambda request: pool.submit(client.request, request).result(timeout=20)  # noqa: E731
        with pytest.raises(SourceNotFound):  # asked for as /%C3%BCn%C3%AF.json, which the server lacks
            ask(Request(f"{http_server.url}/\u00fcn\u00ef.json", limit=10_000))
        assert http_server.state.requests[-1] == ("GET", "/%C3%BCn%C3%AF.json")
        assert (
            ask(Request(f"{http_server.url}/a.json", headers=['If-None-Match: "caf\u00e9"'], limit=100)).status == 200
        )
        assert http_server.state.headers[-1]["If-None-Match"] == '"caf\u00e9"'  # the byte 0xe9, read back as Latin-1
        with pytest.raises(SourceError, match="cannot be requested"):
            ask(Request(f"{http_server.url}/a.json", headers=["X-Name: \u2603"], limit=100))
        assert bytes(ask(Request(f"{http_server.url}/a.json", limit=100)).body) == b"{}"  # the engine runs on


def test_a_mirror_whose_etag_holds_a_latin1_byte_syncs_again(http_server, v3_mirror: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    index = next(path for path in http_server.state.root.rglob("index.manifest.json"))
    http_server.state.faults["/" + str(index.relative_to(http_server.state.root))] = "etag-latin1"
    config = make_config(tmp_path, [{"name": "t", "url": v3_mirror}], backoff=0.01)
    for _ in range(2):  # the second sends the stored ETag back
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error


def test_a_small_read_sent_compressed_unasked_is_decoded_and_bounded(http_server) -> None:  # type: ignore[no-untyped-def]
    """A server (an S3 object stored with Content-Encoding: gzip) may compress a file
    that was asked for without Accept-Encoding: a v3 index manifest then failed its tag
    ("'utf-8' codec can't decode byte 0x8b"), and every spec manifest its size."""
    text = '{"data": [' + ", ".join(['{"mediaType": "x"}'] * 200) + "]}"
    (http_server.state.root / "m.json").write_text(text)
    http_server.state.faults["/m.json"] = "gzip-unasked"
    with HttpClient(HttpOptions(retries=0)) as client:
        assert bytes(client.request(Request(f"{http_server.url}/m.json", limit=10_000)).body) == text.encode()
        with pytest.raises(SourceError, match="larger than 1,000 bytes once decoded"):
            client.request(Request(f"{http_server.url}/m.json", limit=1_000))


def _outcome(config_path: Path) -> TagOutcome:
    config = load_config(config_path)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        return outcome


def _private(workdir: Path) -> str:
    """nginx's directives asking every request for Basic credentials (reader / its password)."""
    users = workdir / "htpasswd"
    users.write_text("reader:{PLAIN}pa55-w0rd\n")
    return f'auth_basic "private mirror"; auth_basic_user_file {users};'


def test_a_private_mirror_is_read_with_the_credentials_the_config_names(
    demo_mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, manifests_read_by: str
) -> None:
    """A mirror behind Basic authentication (as Artifactory or nginx serve one): the
    config names the environment variables of its user name and password under
    ``registries`` (an http(s) URL may hold none); each request carries them, the second
    process's too, and no file cachedex writes holds them."""
    local, _ = _sync(demo_mirrors / "cachedex.yaml")
    with Nginx(demo_mirrors, extra=_private(tmp_path), log_requests=True) as nginx:
        config = _http_config(demo_mirrors, nginx.url)
        plain = config.read_text()
        # Without credentials: refused, with what to do; the catalog keeps nothing of it.
        outcome = _outcome(config)
        assert not outcome.ok and "HTTP 401" in str(outcome.error) and "'registries'" in str(outcome.error)
        named = "registries:\n  127.0.0.1:%d: {username_env: T_MIRROR_USER, password_env: T_MIRROR_PASS}\n"
        config.write_text(plain + named % nginx.port)
        # Named, but not set: the variable is named, never a value.
        monkeypatch.delenv("T_MIRROR_USER", raising=False)
        outcome = _outcome(config)
        assert not outcome.ok and "T_MIRROR_USER (registries.127.0.0.1:" in str(outcome.error)
        monkeypatch.setenv("T_MIRROR_USER", "reader")
        monkeypatch.setenv("T_MIRROR_PASS", "wrong")
        outcome = _outcome(config)
        assert not outcome.ok and "the credentials were refused" in str(outcome.error)
        assert "wrong" not in str(outcome.error)
        served = len(nginx.requests())
        monkeypatch.setenv("T_MIRROR_PASS", "pa55-w0rd")
        remote, _ = _sync(config)
        assert remote == local and any(spec.size for spec in remote)  # the sizes' reads were let in too
        new = nginx.requests()[served:]
        assert any("/v3/manifests/spec/" in path and status == 200 for _, path, status in new)
        # A host named with another port is not this one: its credentials stay home.
        config.write_text(plain + named % (nginx.port + 1))
        outcome = _outcome(config)
        assert not outcome.ok and "it asks for credentials" in str(outcome.error)
    secret = base64.b64encode(b"reader:pa55-w0rd")
    for written in config.parent.glob(f"{config.stem}.sqlite*"):
        data = written.read_bytes()
        assert b"pa55-w0rd" not in data and secret not in data, written


def test_a_ca_bundle_that_is_not_there_is_said_when_http_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo in http.ca_bundle was passed over for $SSL_CERT_FILE or the system's CAs,
    and the TLS error that followed said to set it. Commands that read no mirror (a web
    host's `site` or `serve`, whose machine may lack the file) still take the config."""
    config_path = tmp_path / "cachedex.yaml"
    config_path.write_text("http: {ca_bundle: certs/ca.pem}\ntags: [{name: t, url: 'https://127.0.0.1:9/m'}]\n")
    config = load_config(config_path)
    with pytest.raises(ConfigError, match=r"'http.ca_bundle': no such file: '.*certs/ca.pem'"):
        HttpClient(config.http)
    (tmp_path / "certs/ca.pem").mkdir(parents=True)  # (a folder was said to be no such file)
    with pytest.raises(ConfigError, match=r"'http.ca_bundle': a folder, not a file of certificates: '.*certs/ca.pem'"):
        HttpClient(config.http)
    (tmp_path / "certs/ca.pem").rmdir()
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "nowhere.pem"))  # (passed over, as a typo in ca_bundle was)
    with pytest.raises(ConfigError, match=r"\$SSL_CERT_FILE names no file: '.*nowhere.pem'"):
        HttpClient(HttpOptions())
    from click.testing import CliRunner

    from cachedex.cli import main

    result = CliRunner().invoke(main, ["--config", str(config_path), "sync"])
    assert result.exit_code == 1 and f"{config_path}: 'http.ca_bundle': no such file" in result.output, result.output


def test_a_401_after_a_redirect_to_another_host_says_no_credentials_went_there(
    demo_mirrors: Path, tmp_path: Path
) -> None:
    """libcurl keeps an Authorization header to the host and port it was set for: a 401
    from the host a mirror redirected to said "the credentials were refused" (and sent
    an admin to change a password that was never refused)."""
    path = f"/mirrors/{DEMO_TAG}/v3/manifests/index/index.manifest.json"
    header = "Authorization: Basic " + base64.b64encode(b"reader:pa55-w0rd").decode()
    with Nginx(demo_mirrors, extra=_private(tmp_path)) as private:
        redirect = f"location / {{ return 302 {private.url}$request_uri; }}"
        with Nginx(demo_mirrors, extra=redirect) as redirecting, HttpClient(HttpOptions(retries=0)) as client:
            with pytest.raises(SourceError) as caught:
                client.request(Request(redirecting.url + path, headers=[header], limit=10**6))
            assert f"at {private.url}{path}, a redirect to another host" in str(caught.value)
            assert client.request(Request(private.url + path, headers=[header], limit=10**6)).status == 200
            wrong = "Authorization: Basic " + base64.b64encode(b"reader:wrong").decode()
            with pytest.raises(SourceError, match="the credentials were refused"):
                client.request(Request(private.url + path, headers=[wrong], limit=10**6))


def test_a_private_mirror_s_token_is_sent_as_a_bearer(
    http_server, mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """``token_env``: every request to the mirror's host carries the token as a bearer
    (as Artifactory's and Nexus's access tokens are sent)."""
    write_v2_mirror(http_server.state.root / "m", fixture_index(mirrors))
    monkeypatch.setenv("T_MIRROR_TOKEN", "tok-3n")
    port = http_server.url.rsplit(":", 1)[1]
    document = {
        "catalog": str(tmp_path / "c.sqlite"),
        "tags": [{"name": "t", "url": f"{http_server.url}/m"}],
        "http": {"retries": 0},
        "registries": {f"127.0.0.1:{port}": {"token_env": "T_MIRROR_TOKEN"}},
    }
    config = parse_config(document, base=tmp_path)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok and outcome.specs > 0, outcome.error
    assert http_server.state.headers and all(
        h.get("Authorization") == "Bearer tok-3n" for h in http_server.state.headers
    ), http_server.state.headers
