"""The Starlette app: routes, per-thread read-only catalogs, a response cache, ETags, gzip.

The catalog is opened read-only, one connection per thread, so it keeps answering while
``cachedex sync`` writes (WAL: readers see the last commit). Every response is cached in
memory under the catalog's state token, which changes whenever a sync commits; the
token also makes the ETag, so a client revalidating after no sync gets 304. Bodies are
gzipped once, when cached, for clients that accept it.
"""

from __future__ import annotations

import contextlib
import email.utils
import gzip
import hashlib
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...catalog import Catalog
from ...errors import CachedexError, LookupFailed
from ..render import ASSET_SOURCES, ASSETS, asset_text, render_not_found
from .api import API, HTML, JSON, PAGES, Builder, error_body, is_cheap_search
from .openapi import openapi_document

__all__ = ["create_app"]

_CACHE_ENTRIES = 4096
_GZIP_MIN = 800


class _Cached(msgspec.Struct, frozen=True):
    body: bytes
    media_type: str
    status: int
    etag: str
    gzipped: bytes | None  # compressed once, when cached, not on every request


def _cached(body: bytes, media_type: str, status: int, etag: str) -> _Cached:
    zipped = gzip.compress(body, compresslevel=6) if len(body) >= _GZIP_MIN else None
    return _Cached(body, media_type, status, etag, zipped)


class _Catalogs:
    """A read-only catalog connection per thread (SQLite connections are not shared)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        Catalog(path, readonly=True).close()  # fail at start-up, with a clear message
        self._warmed: str | None = None
        self._warming = threading.Lock()
        #: True once the search indexes of the last catalog state seen are built.
        self.ready = False

    def warm(self, token: str, *, wait: bool = False) -> None:
        """Build the search indexes of catalog state ``token`` (see
        :meth:`Catalog.warm_search`) once: now if ``wait``, else in a thread, so that
        the first searches after a sync do not pay for it."""
        with self._warming:
            if self._warmed == token:
                return
            self._warmed = token
            self.ready = False
        if wait:
            self._warm(token)
        else:
            threading.Thread(target=self._warm, args=(token,), name="cachedex-warm", daemon=True).start()

    def _warm(self, token: str) -> None:
        with Catalog(self.path, readonly=True) as catalog:
            catalog.warm_search()
        with self._warming:
            self.ready = self._warmed == token

    def get(self) -> Catalog:
        catalog: Catalog | None = getattr(self._local, "catalog", None)
        if catalog is None:
            catalog = self._local.catalog = Catalog(self.path, readonly=True)
        return catalog


def _never(request: Request) -> bool:
    return False


def _always(request: Request) -> bool:
    return True


def create_app(catalog_path: Path) -> Starlette:
    """The ASGI app over the catalog at ``catalog_path`` (which must exist)."""
    catalogs = _Catalogs(Path(catalog_path))
    cache: OrderedDict[tuple[str, str, str], _Cached] = OrderedDict()
    lock = threading.Lock()

    def build(builder: Builder, request: Request, token: str, api: bool) -> _Cached:
        catalog = catalogs.get()
        etag = '"' + hashlib.sha1(f"{token} {request.url.path}?{request.url.query}".encode()).hexdigest()[:20] + '"'
        try:
            body, media_type = builder(catalog, request)
            return _cached(body, media_type, 200, etag)
        except CachedexError as exc:  # one place maps errors to answers: by their status
            if isinstance(exc, LookupFailed) and not api and not request.url.path.endswith(".json"):
                return _cached(render_not_found(str(exc)).encode(), HTML, exc.status, etag)
            return _cached(error_body(exc.status, str(exc)), JSON, exc.status, etag)

    def answer(
        builder: Builder, *, api: bool, cheap: Callable[[Request], bool] = _never
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            catalog = catalogs.get()
            token, synced = catalog.state_token()
            catalogs.warm(token)
            key = (token, request.url.path, request.url.query)
            with lock:
                hit = cache.get(key)
                if hit is not None:
                    cache.move_to_end(key)
            if hit is None:
                # A cheap answer (a few ms, from an index) is built right here: a hop to a
                # worker thread would cost as much as the work. Anything that may scan
                # many rows goes to a thread, so that it never holds up the others.
                if cheap(request):
                    hit = build(builder, request, token, api)
                else:
                    hit = await run_in_threadpool(build, builder, request, token, api)
                with lock:
                    cache[key] = hit
                    while len(cache) > _CACHE_ENTRIES:
                        cache.popitem(last=False)
            headers = {"ETag": hit.etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding"}
            if synced is not None:
                headers["Last-Modified"] = email.utils.formatdate(synced, usegmt=True)
            if hit.status == 200 and request.headers.get("if-none-match") == hit.etag:
                return Response(status_code=304, headers=headers)
            if hit.gzipped is not None and "gzip" in request.headers.get("accept-encoding", ""):
                headers["Content-Encoding"] = "gzip"
                return Response(hit.gzipped, status_code=hit.status, media_type=hit.media_type, headers=headers)
            return Response(hit.body, status_code=hit.status, media_type=hit.media_type, headers=headers)

        return endpoint

    def page_routes(prefix: str, builder: Builder, cheap: Callable[[Request], bool] = _never) -> list[Route]:
        endpoint = answer(builder, api=False, cheap=cheap)
        return [Route(prefix + suffix, endpoint, methods=["GET"]) for suffix in ("", "index.html", "index.json")]

    assets = {relative.split("/", 1)[1]: (asset_text(kind), kind) for kind, relative in ASSETS.items()}
    assert set(ASSET_SOURCES) == {kind for _, kind in assets.values()}

    async def static(request: Request) -> Response:
        found = assets.get(request.path_params["file"])
        if found is None:
            return Response(render_not_found(), status_code=404, media_type=HTML)
        body, kind = found
        media = "text/css" if kind == "css" else "text/javascript"
        # The version is in the file's name: it never changes under that name.
        return Response(body, media_type=media, headers={"Cache-Control": "public, max-age=31536000, immutable"})

    document = msgspec.json.encode(openapi_document())

    async def openapi(request: Request) -> Response:
        return Response(document, media_type=JSON)

    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return Response(error_body(404, f"no such endpoint: {request.url.path}"), status_code=404, media_type=JSON)
        return Response(render_not_found(), status_code=404, media_type=HTML)

    async def method_not_allowed(request: Request, exc: Exception) -> Response:
        return Response(
            error_body(405, f"{request.method} is not allowed here"),
            status_code=405,
            media_type=JSON,
            headers={"Allow": "GET, HEAD"},
        )

    async def server_error(request: Request, exc: Exception) -> Response:
        return Response(error_body(500, "internal error; see the server's log"), status_code=500, media_type=JSON)

    cheap_api = {
        "/api/tags/{tag}/packages/{name}": _always,
        "/api/search": lambda request: is_cheap_search(request, indexes_ready=catalogs.ready),
    }
    routes = [
        Route("/api/openapi.json", openapi, methods=["GET"]),
        *(
            Route(path, answer(builder, api=True, cheap=cheap_api.get(path, _never)), methods=["GET"])
            for path, builder in API.items()
        ),
        Route("/static/{file}", static, methods=["GET"]),
        Route("/packages.json", answer(PAGES["packages.json"], api=False), methods=["GET"]),
        *page_routes("/", PAGES["home"]),
        *page_routes("/mirrors/", PAGES["mirrors"]),
        *page_routes("/tags/{tag}/", PAGES["tag"]),
        Route("/tags/{tag}/all.html", answer(PAGES["all"], api=False), methods=["GET"]),
        *page_routes("/tags/{tag}/packages/{name}/", PAGES["package"], _always),
        Route("/specs/{prefix}/{hash}.html", answer(PAGES["spec"], api=False), methods=["GET"]),
        Route("/specs/{prefix}/{hash}.json", answer(PAGES["spec"], api=False), methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Before the first request: a search of facets alone on a big tag needs its
        # index, which takes a second or two to build (later syncs: in a thread).
        def warm() -> None:
            catalogs.warm(catalogs.get().state_token()[0], wait=True)

        await run_in_threadpool(warm)
        yield

    return Starlette(
        routes=routes,
        middleware=[Middleware(GZipMiddleware, minimum_size=_GZIP_MIN)],
        exception_handlers={404: not_found, 405: method_not_allowed, 500: server_error},
        lifespan=lifespan,
    )
