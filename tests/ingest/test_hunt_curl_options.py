"""Which proxy, and which NO_PROXY list, each origin's requests are given on a curl
handle: per scheme and host, a host NO_PROXY names added by name, ``*`` kept alone."""

from __future__ import annotations

import pytest

from cachedex.ingest.curl_options import HandleOptions

PROXY = "http://proxy.invalid:3128"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("http_proxy", "https_proxy", "no_proxy", "all_proxy", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_no_proxy_in_the_environment_is_none(clean_env: pytest.MonkeyPatch) -> None:
    """Without a proxy variable every request goes straight, with no NO_PROXY list."""
    clean_env.setenv("no_proxy", "localhost")
    options = HandleOptions()
    assert options.proxy_for("http://localhost:8080/x") == ("", "")
    assert options.proxy_for("https://example.org/x") == ("", "")


def test_the_proxy_is_decided_per_scheme_and_host(clean_env: pytest.MonkeyPatch) -> None:
    """http_proxy is for http:// only: an https:// URL of the same host, asked after it,
    is not given it (nor NO_PROXY, which then means nothing)."""
    clean_env.setenv("http_proxy", PROXY)
    clean_env.setenv("no_proxy", "other.invalid")
    options = HandleOptions()
    assert options.proxy_for("http://example.org/a") == (PROXY, "other.invalid")
    assert options.proxy_for("https://example.org/a") == ("", "")
    assert options.proxy_for("http://example.org/b/c") == (PROXY, "other.invalid")


@pytest.mark.parametrize(
    ("no_proxy", "url", "bypassed"),
    [
        # a host NO_PROXY names is added by its name, the rest of the list kept
        ("example.org,localhost", "http://localhost:8080/x", "example.org,localhost,localhost"),
        # NO_PROXY's host:port form (urllib's), which libcurl does not read, said by name
        ("127.0.0.1:8080", "http://127.0.0.1:8080/x", "127.0.0.1:8080,127.0.0.1"),
        ("127.0.0.1:8080", "http://user@127.0.0.1:8080/x", "127.0.0.1:8080,127.0.0.1"),
        # another port of it is not bypassed: the list goes to libcurl as it is
        ("127.0.0.1:8080", "http://127.0.0.1:9090/x", "127.0.0.1:8080"),
        # "*" among others: libcurl's wildcard only alone
        ("localhost, *", "http://localhost/x", "*"),
        ("localhost,*", "http://localhost/x", "*"),
    ],
)
def test_no_proxy_as_libcurl_is_told_it(clean_env: pytest.MonkeyPatch, no_proxy: str, url: str, bypassed: str) -> None:
    """What urllib (and so Spack) bypasses, libcurl is told by a name it reads."""
    clean_env.setenv("http_proxy", PROXY)
    clean_env.setenv("no_proxy", no_proxy)
    assert HandleOptions().proxy_for(url) == (PROXY, bypassed)


@pytest.mark.parametrize(
    ("raw", "accepted"),
    [(True, "identity"), (False, "gzip")],
)
def test_a_watched_read_asks_for_the_coding_it_can_read(http_server, raw: bool, accepted: str) -> None:  # type: ignore[no-untyped-def]
    """A watched read of the bytes as stored asks for no coding (a CDN would otherwise pick
    zstd or br, which nothing here decodes); one decoded by libcurl asks for what it decodes."""
    from cachedex.config import HttpOptions
    from cachedex.ingest.http import HttpClient, Request

    (http_server.state.root / "a.bin").write_bytes(b"x" * 100)
    seen: list[int] = []
    with HttpClient(HttpOptions(retries=0)) as client:
        for _ in range(2):  # (the second on a handle set for the first)
            request = Request(
                f"{http_server.url}/a.bin", limit=10**6, raw=raw, progress=lambda got, total: seen.append(got)
            )
            assert client.request(request).body == b"x" * 100
    said = [h.get("Accept-Encoding", "") for h in http_server.state.headers]
    assert seen and len(said) == 2
    assert all(value == accepted if raw else accepted in value.split(", ") for value in said), said


def test_a_raw_watched_read_keeps_the_bytes_a_server_gzipped_unasked(http_server) -> None:  # type: ignore[no-untyped-def]
    """A read of the bytes as stored gets them as they came, even gzipped by a server that
    was not asked to: libcurl decodes nothing of it (its digest is of the stored bytes)."""
    import gzip

    from cachedex.config import HttpOptions
    from cachedex.ingest.http import HttpClient, Request

    (http_server.state.root / "a.json").write_bytes(b"{}" * 400)
    http_server.state.faults["/a.json"] = "gzip-unasked"
    with HttpClient(HttpOptions(retries=0)) as client:
        request = Request(f"{http_server.url}/a.json", limit=10**6, raw=True, progress=lambda got, total: None)
        body = client.request(request).body
    assert body == gzip.compress(b"{}" * 400, mtime=0)
