"""A path written with its trailing "/" toggled is answered as the path itself would be,
whatever the method: redirected to it (307) where the path takes the method, refused
(405, the same Allow) where it does not; never a 404 for a path that is there."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from cachedex.catalog import Catalog
from cachedex.cli.serve_app import serve_app

#: A path of each kind: the API's (GET; the one POST), pages with and without a "/", a redirect.
_PATHS = ["/api/tags", "/api/search", "/api/reuse", "/reuse.html", "/tags/t/", "/tags/t/index.html", "/spec/zz"]
_METHODS = ["GET", "HEAD", "POST", "DELETE"]


def _toggled(path: str) -> str:
    return path[:-1] if path.endswith("/") else path + "/"


@pytest.mark.parametrize("path", _PATHS)
def test_a_toggled_slash_is_answered_as_its_path(small_catalog: Catalog, path: str) -> None:
    app = serve_app(small_catalog.path)  # (with POST /api/reuse)

    async def go() -> list[tuple[httpx.Response, httpx.Response]]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return [
                (await client.request(method, path), await client.request(method, _toggled(path)))
                for method in _METHODS
            ]

    for method, (there, toggled) in zip(_METHODS, asyncio.run(go()), strict=True):
        if there.status_code == 405:
            assert toggled.status_code == 405, (method, path, toggled.status_code)
            assert toggled.headers["allow"] == there.headers["allow"], (method, path)
            assert toggled.headers["content-type"] == there.headers["content-type"], (method, path)
            assert toggled.content == there.content and toggled.headers["cache-control"] == "no-cache"
        else:
            assert toggled.status_code == 307, (method, path, toggled.status_code)
            assert toggled.url.join(toggled.headers["location"]).path == path, (method, path)


def test_a_refused_toggled_path_names_the_methods_its_path_takes(small_catalog: Catalog) -> None:
    """Allow names the methods the path's routes take, read from the routes."""
    app = serve_app(small_catalog.path)

    async def go() -> dict[str, str]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return {
                path: (await client.request(method, path)).headers["allow"]
                for method, path in [("GET", "/api/reuse/"), ("PUT", "/api/tags/"), ("POST", "/tags/t")]
            }

    assert asyncio.run(go()) == {"/api/reuse/": "POST", "/api/tags/": "GET, HEAD", "/tags/t": "GET, HEAD"}


def test_a_doubled_trailing_slash_leads_to_the_path_with_one(small_catalog: Catalog) -> None:
    """/tags/t// was sent to "../t", which a browser resolves below the empty segment
    (/tags/t/t); "../" leads to /tags/t/ as browsers and RFC 3986 resolve it."""
    app = serve_app(small_catalog.path)

    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return [await client.get(path) for path in ("/tags/t//", "/tags/t//?x=1", "/tags/t///", "/api/tags//")]

    page, query, tripled, api = asyncio.run(go())
    assert (page.status_code, page.headers["location"]) == (307, "../")
    # (a browser resolves "../" against /tags/t// to /tags/t/, as RFC 3986 does; httpx's
    # and urllib's joins collapse the empty segment first, and would hide the bug)
    assert (query.status_code, query.headers["location"]) == (307, "../?x=1")
    assert tripled.status_code == api.status_code == 404  # (/tags/t// and /api/tags/ are no page either)
