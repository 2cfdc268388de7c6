"""What a client can make the server hold and do: parameters, the response cache's bound,
concurrent heavy builds; and the shape of its headers and error bodies."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import httpx
import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.publish.render import ASSETS
from cachedex.publish.serve import create_app
from cachedex.publish.serve.api import PAGES, Endpoint
from cachedex.publish.serve.app import HEAVY_BUILDS
from cachedex.publish.serve.cache import CACHE_BYTES
from cachedex.publish.serve.refusals import HTML
from tests.publish.serve import get


@pytest.fixture
def app(small_catalog: Catalog) -> Any:
    return create_app(small_catalog.path)


SPEC = "z" * 32


@pytest.mark.parametrize(
    ("params", "ready", "cheap"),
    [
        ({"q": "zlib"}, False, True),  # a name: a few rows from an index, or close names
        ({"q": "/abcd"}, False, True),
        ({"q": "zlib@1:", "tag": "t"}, True, True),  # finding nothing, its hints use the indexes
        ({"q": "zlib@1:", "tag": "t"}, False, False),  # ... once they are built
        ({"q": "zlib target=zen4"}, True, True),
        ({"q": "zlib@1:"}, True, False),  # its hint "@1:" across every tag: built on first use
        ({"q": "target=zen4", "tag": "t"}, True, True),  # facets: the facet index
        ({"q": "target=zen4", "tag": "t"}, False, False),  # ... once it is built
        ({"q": "+mpi @2: os=ubuntu24.04", "tag": "t"}, True, True),  # the tag's bit sets
        ({"q": "+mpi", "tag": "t", "stack": "s"}, True, True),
        ({"q": "+mpi"}, True, False),  # every tag: the catalog's index, built on first use
        ({"q": "^zlib"}, True, False),  # a dependency walks edges
        ({"q": "hdf5 ^zlib", "tag": "t"}, True, False),
        ({"q": "^walked"}, False, False),  # ... unless walked: once the indexes are built
        ({"q": "^walked", "tag": "t"}, True, True),
        ({"q": "hdf5 ^walked"}, True, True),
        ({"q": "target=zen4 ^walked ^zlib", "tag": "t"}, True, False),  # each of them
        ({"q": "+mpi ^walked"}, True, False),  # every tag's variant index, as above
        ({"q": "@@@"}, False, True),  # a 400 at once
        # many conditions, each with its check (and, finding nothing, its hint): a thread's
        ({"q": " ".join(f"~v{n}" for n in range(9)), "tag": "t"}, True, False),
        ({"q": " ".join(f"~v{n}" for n in range(8)), "tag": "t"}, True, True),
        ({"q": " ".join(f"^walked{n}" for n in range(9)), "tag": "t"}, True, False),
    ],
)
def test_cheap_searches_are_answered_from_indexes_and_the_rest_wait_their_turn(
    params: dict[str, str], ready: bool, cheap: bool
) -> None:
    from starlette.requests import Request

    from cachedex.publish.serve.api import is_cheap_search
    from cachedex.query import Query

    def walked(query: Query) -> bool:
        return all((dependency.name or "").startswith("walked") for dependency in query.dependencies)

    request = Request({"type": "http", "query_string": str(httpx.QueryParams(params)).encode(), "headers": []})
    assert is_cheap_search(request, indexes_ready=ready, walked=walked) is cheap


@pytest.mark.parametrize(
    ("path", "media"),
    [
        ("/?v=1", "text/html"),
        ("/index.html?v=1", "text/html"),
        ("/tags/t/?v=1", "text/html"),
        ("/tags/t/index.json?v=1", "application/json"),
        ("/tags/t/packages/zlib/?v=2&stack=s", "text/html"),
        ("/tags/t/all.html?v=1", "text/html"),
        ("/mirrors/index.json?v=1", "application/json"),
        ("/packages.json?v=1", "application/json"),
        (f"/specs/zz/{SPEC}.html?v=1", "text/html"),
        (f"/specs/zz/{SPEC}.json?v=1", "application/json"),
        ("/api/tags/t/packages?os=a&os=b", "application/json"),
    ],
)
def test_sec1_page_routes_refuse_unknown_parameters(app: Any, path: str, media: str) -> None:
    response = get(app, path)
    assert response.status_code == 400 and response.headers["content-type"].startswith(media), response.text
    if media == "application/json":
        error = response.json()["error"]
        assert error["status"] == 400
        assert "unknown parameter 'v'" in error["message"] or "'os' is given more than once" in error["message"]
    else:
        assert "400 Bad Request" in response.text and "unknown parameter &#39;v&#39;" in response.text
        assert '<nav aria-label="Site">' in response.text and 'role="search"' in response.text  # the site's ways on
    assert len(app.state.cachedex.cache) == 0  # refused before anything is built or kept


def test_sec1_the_cache_is_bounded_in_bytes_whatever_the_parameters(app: Any) -> None:
    cache = app.state.cachedex.cache
    assert cache.max_bytes == CACHE_BYTES == 64 * 1024 * 1024
    cache.max_bytes = 16 * 1024  # the same accounting, reached in a few hundred requests
    for n in range(150):
        assert get(app, f"/api/tags/t/packages?os=os-{n}").status_code == 200
        assert get(app, f"/api/search?q=zlib&offset={n}").status_code == 200
        assert 0 < cache.size <= cache.max_bytes
    assert 0 < len(cache) < 300
    assert cache.size == sum(entry.weight + len(repr(key)) for key, (entry, _) in cache._entries.items())
    # The order or emptiness of the parameters makes no new entry; the filters the server
    # applies (a tag page's, a package page's version filter) make one per distinct set.
    cache.max_bytes = CACHE_BYTES
    before = len(cache)
    for query in ("q=z&os=", "os=&q=z", "q=z&stack="):
        assert get(app, f"/tags/t/packages/zlib/?{query}").status_code == 200
    for query in ("stack=s&os=", "os=&stack=s", "stack=s"):
        assert get(app, f"/tags/t/?{query}").status_code == 200
    for query in ("offset=3&q=zlib", "q=zlib&offset=3", "q=zlib&offset=3&tag=&stack="):
        assert get(app, f"/api/search?{query}").status_code == 200
    assert len(cache) == before + 3


def test_an_answer_too_heavy_to_keep_is_kept_gzipped(app: Any) -> None:
    """Answers over a quarter of the cache were never kept: a diff of two big tags (70 MB
    of JSON, 8 MB gzipped) was rebuilt in 11 s at every request. Its gzipped copy is kept
    when that fits, and gives the plain body to a client that takes no gzip."""
    cache = app.state.cachedex.cache
    first = get(app, "/tags/t/index.json", **{"accept-encoding": "identity"})
    entry, _weight = next(iter(cache._entries.values()))
    assert entry.gzipped is not None and len(entry.gzipped) < len(entry.body)
    cache._entries.clear()
    cache.size = 0
    alone = msgspec.structs.replace(entry, body=b"", gzipped_only=True).weight
    cache.max_bytes = 4 * alone  # the gzipped copy fits a quarter; both do not
    assert entry.weight > cache.max_bytes // 4
    again = get(app, "/tags/t/index.json", **{"accept-encoding": "identity"})
    ((kept, _),) = cache._entries.values()
    assert kept.gzipped_only and kept.body == b"" and again.content == first.content
    plain = get(app, "/tags/t/index.json", **{"accept-encoding": "identity"})  # from the cache
    zipped = get(app, "/tags/t/index.json", **{"accept-encoding": "gzip"})
    assert plain.content == first.content and zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == first.content  # (httpx decompresses it)
    assert plain.headers["etag"] == first.headers["etag"] and len(cache) == 1


def test_sec1_heavy_builds_wait_their_turn(small_catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = threading.Lock()
    active, peak, builds = 0, 0, 0

    def slow(catalog: Catalog, request: Any) -> tuple[bytes, str]:
        nonlocal active, peak, builds
        with lock:
            active, builds = active + 1, builds + 1
            peak = max(peak, active)
        time.sleep(0.1)
        with lock:
            active -= 1
        return b"<p>built</p>", HTML

    monkeypatch.setitem(PAGES, "tag", Endpoint(slow, PAGES["tag"].allowed))
    app = create_app(small_catalog.path)

    async def many(paths: list[str]) -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await asyncio.gather(*(client.get(path) for path in paths))

    responses = asyncio.run(many([f"/tags/t{n}/" for n in range(8)]))
    assert [r.status_code for r in responses] == [200] * 8
    assert peak == HEAVY_BUILDS and builds == 8
    # The same page asked for many times at once: built by those that got a turn first only.
    builds = 0
    responses = asyncio.run(many(["/tags/same/"] * 8))
    assert [r.text for r in responses] == ["<p>built</p>"] * 8 and builds <= HEAVY_BUILDS


@pytest.mark.parametrize("small_walk", [0, 1])
def test_a_dependency_search_waits_its_turn_until_the_state_has_its_walk_or_it_is_small(
    small_catalog: Catalog, monkeypatch: pytest.MonkeyPatch, small_walk: int
) -> None:
    """The first ``^dep`` search of a dependency may walk many edges (a few tenths of a
    second up from a core library): built in a worker thread, in turn, unless the walk
    reaches at most SMALL_WALK specs (one here: cmake), when it is made at once. Once
    walked, its searches read bit sets kept, as a facet search does: answered at once,
    with the same rows."""
    import cachedex.publish.serve.app as serving

    built_in_threads: list[str] = []
    to_thread = serving.run_in_threadpool

    async def counted(build: Any, endpoint: Any, request: Any, key: Any) -> Any:
        built_in_threads.append(request.query_params["q"])
        return await to_thread(build, endpoint, request, key)

    monkeypatch.setattr(serving, "run_in_threadpool", counted)
    monkeypatch.setattr(serving, "SMALL_WALK", small_walk)
    app = create_app(small_catalog.path)
    assert get(app, "/api/search?q=zlib&tag=t").status_code == 200  # starts the warm-up
    deadline = time.monotonic() + 20
    while not app.state.cachedex.catalogs.ready and time.monotonic() < deadline:
        time.sleep(0.02)
    assert app.state.cachedex.catalogs.ready
    built_in_threads.clear()
    # (The warm-up walks up from zlib itself: a version of it is another walk.)
    for query in ("^zlib@1.3.1", "cmake ^zlib@1.3.1", "~doc ^zlib@1.3.1", "^zlib@1.3.1 ^zlib@1:"):
        answer = get(app, f"/api/search?{httpx.QueryParams(q=query, tag='t')}")
        assert answer.status_code == 200 and [s["name"] for s in answer.json()["specs"]] == ["cmake"], query
    # ^zlib@1: is another walk again
    assert built_in_threads == ([] if small_walk else ["^zlib@1.3.1", "^zlib@1.3.1 ^zlib@1:"])


@pytest.mark.parametrize("value", ["１", "1_0", "+5", " 5", "5 ", "٣", "0x10", "1e3"])
def test_cos3_whole_numbers_are_ascii_digits(app: Any, value: str) -> None:
    response = httpx.Request("GET", "http://test/api/search", params={"q": "zlib", "limit": value})
    answer = get(app, f"/api/search?{response.url.query.decode()}")
    assert answer.status_code == 400
    assert "limit must be a whole number" in answer.json()["error"]["message"]


def test_cos3_ordinary_numbers_still_work(app: Any) -> None:
    assert get(app, "/api/search?q=zlib&limit=10&offset=0").json()["total"] == 1
    # leading zeros are the same number: neither a way past a bound nor a refusal
    assert get(app, f"/api/search?q=zlib&limit={'0' * 18}50").status_code == 200
    assert "limit must be between" in get(app, f"/api/search?q=zlib&limit={'0' * 18}5000").json()["error"]["message"]
    assert get(app, "/search.json?q=zlib&page=0002").json()["number"] == 2
    refused = get(app, "/search.json?q=zlib&page=0010000000")
    assert refused.status_code == 400 and "between 1 and 1000" in refused.json()["error"]["message"]
    assert "offset must be between" in get(app, "/api/search?offset=-1").json()["error"]["message"]
    message = get(app, f"/api/search?limit={'9' * 5000}").json()["error"]["message"]
    assert message == f"limit must be between 1 and 1000, got '{'9' * 30}...'"


@pytest.mark.parametrize("path", ["/tags/t/", "/tags/t/packages/zlib/", "/api/openapi.json", "/" + ASSETS["css"]])
def test_cos1_vary_is_sent_once(app: Any, path: str) -> None:
    for encoding in ("gzip", "identity"):
        response = get(app, path, **{"accept-encoding": encoding})
        assert response.status_code == 200 and len(response.content) >= 800
        assert response.headers.get_list("vary") == ["Accept-Encoding"], (path, encoding)
        assert response.headers.get("content-encoding") == ("gzip" if encoding == "gzip" else None)


@pytest.mark.parametrize(
    ("path", "media"),
    [
        ("/tags/t/", "text/html"),
        ("/", "text/html"),
        (f"/specs/zz/{SPEC}.html", "text/html"),
        ("/tags/t/index.json", "application/json"),
        ("/api/tags", "application/json"),
        ("/api/search", "application/json"),
    ],
)
def test_cos2_a_405_is_html_on_pages_and_json_on_the_api(app: Any, path: str, media: str) -> None:
    for method in ("POST", "DELETE"):
        response = get(app, path, method=method)
        assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"
        assert response.headers["content-type"].startswith(media), (path, response.text)
        if media == "text/html":
            assert "405 Method Not Allowed" in response.text and f"{method} is not allowed here" in response.text
        else:
            assert response.json() == {"error": {"status": 405, "message": f"{method} is not allowed here"}}


def test_a_head_refused_is_answered_as_its_get_content_length_included(small_catalog: Catalog) -> None:
    """RFC 9110: HEAD gets the headers GET would; the 405's message named the method, so
    its Content-Length was one more than the GET's."""
    from cachedex.cli.serve_app import serve_app

    app = serve_app(small_catalog.path)  # (with the one POST route)
    got, head = get(app, "/api/reuse"), get(app, "/api/reuse", method="HEAD")
    assert got.status_code == head.status_code == 405 and head.content == b""
    assert head.headers["content-length"] == got.headers["content-length"]
    assert head.headers["allow"] == got.headers["allow"] == "POST"


@pytest.mark.parametrize(
    ("path", "method", "status"),
    [
        ("/nothing", "GET", 404),
        ("/api/nothing", "GET", 404),
        ("/static/cachedex-99.0.css", "GET", 404),  # a newer version's asset, during an upgrade
        ("/tags/t/", "POST", 405),
        ("/api/tags", "DELETE", 405),
    ],
)
def test_an_error_no_route_makes_is_not_kept_by_caches(app: Any, path: str, method: str, status: int) -> None:
    """A 404 and a 405 are cacheable by default (RFC 9111, heuristically): without a
    Cache-Control, a proxy or CDN could keep a missing page, as the routes' own errors
    (no-cache) are not kept."""
    answer = get(app, path, method=method)
    assert answer.status_code == status and answer.headers.get("cache-control") == "no-cache", path
    assert get(app, "/tags/nope/").headers["cache-control"] == "no-cache"  # (as a route's own 404)


def test_an_internal_error_is_not_kept_by_caches(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from cachedex.publish.serve.catalogs import Catalogs

    def broken(self: Catalogs) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Catalogs, "get", broken)

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get("/api/tags")

    answer = asyncio.run(go())
    assert answer.status_code == 500 and answer.headers.get("cache-control") == "no-cache"
    assert answer.json() == {"error": {"status": 500, "message": "internal error; see the server's log"}}
    # ... with the headers every answer carries (Starlette answers it outside the middleware)
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["content-security-policy"].startswith("default-src 'self'")
    assert answer.headers["referrer-policy"] == "same-origin"


@pytest.mark.parametrize("control", ["%0a", "%09", "%0d", "%0A"])
@pytest.mark.parametrize(
    ("path", "status"), [("/api/tags/t{}/packages/zlib", 200), ("/tags/t{}/", 200), ("/api/specs/{}" + SPEC, 200)]
)
def test_a_path_with_a_line_break_or_tab_is_answered_as_itself(
    small_catalog: Catalog, control: str, path: str, status: int
) -> None:
    """Starlette's URL drops tabs and line breaks, which the routes keep: the answer to
    ``/api/tags/t%0a/...`` (a 404: no tag "t\\n") was kept under the real path's key and
    given to every client of that path, until the next sync, and the other way round."""
    real, hostile = path.format(""), path.format(control)
    app = create_app(small_catalog.path)
    assert get(app, hostile).status_code == 404
    assert get(app, real).status_code == status
    app = create_app(small_catalog.path)  # the real one asked first
    assert get(app, real).status_code == status
    assert get(app, hostile).status_code == 404


@pytest.mark.parametrize("path", ["/api/tags/t/packages/zlib%2F", "/api/tags/t/packages/zlib%2f", "/tags/t%2F"])
def test_a_slash_sent_within_a_name_finds_no_page(app: Any, path: str) -> None:
    """``zlib%2F`` was redirected to ``zlib%2F/``, a 404, and ``/tags/t%2F`` answered the
    tag's page at a URL its relative links do not resolve from."""
    answer = get(app, path)
    assert answer.status_code == 404 and "location" not in answer.headers


def test_an_asset_refuses_parameters_as_every_page_does(app: Any) -> None:
    asset = "/" + ASSETS["css"]
    assert get(app, asset).status_code == 200
    for query in ("?x=1", "?x=1&x=2"):
        assert get(app, asset + query).status_code == 400, query


def test_an_error_page_keeps_the_sites_ways_and_a_bad_querys_caret() -> None:
    from cachedex.errors import BadQuery
    from cachedex.publish.serve.refusals import error_page

    page = error_page(400, str(BadQuery("zlib@@1", 5, "a version expected"))).decode()
    assert "<title>400 Bad Request &middot; cachedex</title>" in page and "<h1>400 Bad Request</h1>" in page
    assert '<pre class="error" tabindex="0">bad query: a version expected\n  zlib@@1\n       ^</pre>' in page
    assert '<nav aria-label="Site">' in page and "<style>" in page  # self-contained, as the 404 page


def test_a_searchs_query_is_parsed_once_though_read_twice(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a search is cheap, then its answer (the API's or the search page's), both
    read the query: one parse."""
    from cachedex import query

    parsed: list[str] = []
    parse = query.parse
    monkeypatch.setattr(query, "parse", lambda text: parsed.append(text) or parse(text))
    text = "zlib +parsed-once"  # a query no other test asks, so not remembered from one
    answer = get(app, "/api/search?" + str(httpx.QueryParams({"q": text, "tag": "t"})))
    assert answer.status_code == 200 and parsed == [text]
    again = get(app, "/search.html?" + str(httpx.QueryParams({"q": text, "tag": "t", "page": 2})))
    assert again.status_code == 200 and parsed == [text]  # another page of it: still remembered
    assert get(app, "/api/search?q=%40%40%40").status_code == 400  # (a refusal is raised each time)


def test_every_answer_s_policy_runs_nothing_a_mirror_brings_and_is_framed_by_no_other_site(app: Any) -> None:
    answer = get(app, "/tags/t/")
    directives = dict(d.strip().split(" ", 1) for d in answer.headers["content-security-policy"].split(";"))
    assert directives.pop("script-src").startswith("'self' 'sha256-")  # (the error page's own script)
    assert directives.pop("style-src").startswith("'self' 'sha256-")
    assert directives == {
        "default-src": "'self'",
        "img-src": "'self' data:",
        "object-src": "'none'",
        "base-uri": "'none'",
        "form-action": "'self'",
        "frame-ancestors": "'self'",
    }
    assert (answer.headers["x-content-type-options"], answer.headers["referrer-policy"]) == ("nosniff", "same-origin")


def test_an_asset_is_kept_by_browsers_for_a_year(app: Any) -> None:
    """Its version is in its name: the pages name another file when it changes."""
    from cachedex.publish.render import ASSETS

    for name in ASSETS.values():
        answer = get(app, f"/{name}")
        assert answer.status_code == 200, name
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable", name


def test_a_tag_never_verified_and_a_tag_that_is_not_there_are_told_apart(app: Any) -> None:
    assert "was never verified; run 'cachedex verify t'" in get(app, "/api/tags/t/verify").json()["error"]["message"]
    missing = get(app, "/api/tags/nope/verify")
    assert missing.status_code == 404 and "verify" not in missing.json()["error"]["message"]
