"""``cachedex serve``: the website rendered on demand, and a JSON API, over the catalog.

An ASGI app (Starlette). The catalog is opened read-only, one connection per thread, so
it keeps answering while ``cachedex sync`` writes (WAL: readers see the last commit).
Every response is cached in memory under the catalog's state token, which changes
whenever a sync commits; the token also makes the ETag, so a client revalidating after
no sync gets 304. Bodies are gzipped for clients that accept it.

The HTML pages live at the same paths as in the static site (``/``, ``/tags/<tag>/``,
``/tags/<tag>/packages/<name>/``, ``/mirrors/``, each also as ``index.html`` and
``index.json``; ``/specs/<first two characters>/<hash>.html`` and ``.json``); the API
under ``/api`` is described by the OpenAPI document at ``/api/openapi.json``. Errors of
the API are JSON of one shape: ``{"error": {"status": <int>, "message": <str>}}``.
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import gzip
import hashlib
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import __version__
from ...catalog import Catalog
from ...diff import diff_since, diff_tags
from ...errors import CachedexError
from ...query import QueryError, parse
from ..pages import PageNotFound, SpecPage, home_page, mirrors_page, package_page, spec_page, tag_page
from ..render import ASSET_SOURCES, ASSETS, asset_text, render, render_all_packages, render_not_found, to_json

__all__ = ["CATALOG_ENV", "app_from_environment", "create_app"]

#: The catalog that :func:`app_from_environment` serves (set by ``cachedex serve``).
CATALOG_ENV = "CACHEDEX_SERVE_CATALOG"

_CACHE_ENTRIES = 4096
_GZIP_MIN = 800
_MAX_LIMIT = 1000


class ApiError(CachedexError):
    """A request the API answers with an error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


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
        catalog = getattr(self._local, "catalog", None)
        if catalog is None:
            catalog = self._local.catalog = Catalog(self.path, readonly=True)
        return catalog


Builder = Callable[[Catalog, Request], tuple[bytes, str]]


def _json(value: Any) -> tuple[bytes, str]:
    return msgspec.json.encode(value), "application/json"


def _error_body(status: int, message: str) -> bytes:
    return msgspec.json.encode({"error": {"status": status, "message": message}})


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be a whole number, got {raw!r}") from None
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be between {low} and {high}, got {value}")
    return value


def _only(request: Request, allowed: set[str]) -> None:
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        raise ApiError(400, f"unknown parameter {unknown[0]!r} (allowed: {', '.join(sorted(allowed)) or 'none'})")


# -- API builders ------------------------------------------------------------------------


def _api_tags(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, set())
    return _json(home_page(catalog).tags)


def _api_packages(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, {"stack", "os", "target", "compiler", "platform"})
    page = tag_page(catalog, request.path_params["tag"])
    wanted = {k: v for k, v in request.query_params.items() if v}
    fields = {"stack": "stacks", "os": "oses", "target": "targets", "compiler": "compilers", "platform": "platforms"}
    packages = [p for p in page.packages if all(v in getattr(p, fields[k]) for k, v in wanted.items())]
    return _json({"tag": page.tag, "total": len(packages), "packages": packages, "facets": page.facets})


def _api_package(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, set())
    return _json(package_page(catalog, request.path_params["tag"], request.path_params["name"]))


def _api_spec(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, set())
    return _json(spec_page(catalog, request.path_params["hash"]))


def _api_search(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, {"q", "tag", "stack", "limit", "offset"})
    limit = _int_param(request, "limit", 50, 1, _MAX_LIMIT)
    offset = _int_param(request, "offset", 0, 0, 10**9)
    text = request.query_params.get("q", "")
    try:
        query = parse(text)
    except QueryError as exc:
        raise ApiError(400, str(exc)) from None
    tag = request.query_params.get("tag") or None
    stack = request.query_params.get("stack") or None
    if tag is not None and tag not in catalog.tag_names():
        raise ApiError(404, f"no tag {tag!r} in the catalog")
    if stack is not None and tag is None:
        raise ApiError(400, "stack needs a tag")
    try:
        page = catalog.search(query, tag=tag, stack=stack, limit=limit, offset=offset)
    except CachedexError as exc:
        raise ApiError(404, str(exc)) from None
    return _json(page)


def _api_diff(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, {"from", "to", "tag", "since"})
    params = request.query_params
    if params.get("since") or params.get("tag"):
        tag, since = params.get("tag", ""), params.get("since", "")
        if not tag or not since:
            raise ApiError(400, "a diff over time needs tag and since (YYYY-MM-DD)")
        try:
            when = datetime.datetime.fromisoformat(since)
        except ValueError:
            raise ApiError(400, f"since must be a date like 2026-11-01, got {since!r}") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        if tag not in catalog.tag_names():
            raise ApiError(404, f"no tag {tag!r} in the catalog")
        return _json(diff_since(catalog, tag, when.timestamp(), since))
    old, new = params.get("from", ""), params.get("to", "")
    if not old or not new:
        raise ApiError(400, "a diff needs from and to (two tags), or tag and since")
    for tag in (old, new):
        if tag not in catalog.tag_names():
            raise ApiError(404, f"no tag {tag!r} in the catalog")
    return _json(diff_tags(catalog, old, new))


# -- HTML pages and their JSON twins ---------------------------------------------------------


def _page_builder(build: Callable[[Catalog, Request], Any]) -> Builder:
    def respond(catalog: Catalog, request: Request) -> tuple[bytes, str]:
        page = build(catalog, request)
        if request.url.path.endswith(".json"):
            return to_json(page), "application/json"
        return render(page).encode(), "text/html; charset=utf-8"

    return respond


_home = _page_builder(lambda c, r: home_page(c))
_mirrors = _page_builder(lambda c, r: mirrors_page(c))
_tag = _page_builder(lambda c, r: tag_page(c, r.path_params["tag"]))
_package = _page_builder(lambda c, r: package_page(c, r.path_params["tag"], r.path_params["name"]))


def _spec_at(catalog: Catalog, request: Request) -> SpecPage:
    dag_hash = request.path_params["hash"]
    if request.path_params["prefix"] != dag_hash[:2]:
        raise PageNotFound(f"no spec with hash {dag_hash!r} here: its page is under specs/{dag_hash[:2]}/")
    return spec_page(catalog, dag_hash)


_spec = _page_builder(_spec_at)


def _all_packages(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return render_all_packages(tag_page(catalog, request.path_params["tag"])).encode(), "text/html; charset=utf-8"


def _packages_index(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return _json(catalog.package_names())


def _always(request: Request) -> bool:
    return True


def _cheap_search(request: Request, *, indexes_ready: bool) -> bool:
    """A search that names a package or a hash reads a few rows from an index; one of
    facets alone reads a facet index, once :meth:`Catalog.warm_search` built them."""
    try:
        query = parse(request.query_params.get("q", ""))
    except QueryError:
        return True  # answered at once with a 400
    if query.name is not None or query.hash_prefix is not None:
        return True
    return indexes_ready and not query.versions and not query.variants


def _page_routes(prefix: str, builder: Builder, handler: Callable[[Builder], Any]) -> list[Route]:
    endpoint = handler(builder)
    return [Route(prefix + suffix, endpoint, methods=["GET"]) for suffix in ("", "index.html", "index.json")]


def app_from_environment() -> Starlette:
    """The app over the catalog named by ``$CACHEDEX_SERVE_CATALOG``: what each of
    several uvicorn worker processes builds."""
    import os

    return create_app(Path(os.environ[CATALOG_ENV]))


def create_app(catalog_path: Path) -> Starlette:
    """The ASGI app over the catalog at ``catalog_path`` (which must exist)."""
    catalogs = _Catalogs(Path(catalog_path))
    cache: OrderedDict[tuple[str, str, str], _Cached] = OrderedDict()
    lock = threading.Lock()

    def answer(
        builder: Builder,
        *,
        api: bool,
        cheap: Callable[[Request], bool] = lambda request: False,
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
                    hit = _build(builder, request, token, api)
                else:
                    hit = await run_in_threadpool(_build, builder, request, token, api)
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

    def _build(builder: Builder, request: Request, token: str, api: bool) -> _Cached:
        catalog = catalogs.get()
        etag = '"' + hashlib.sha1(f"{token} {request.url.path}?{request.url.query}".encode()).hexdigest()[:20] + '"'
        try:
            body, media_type = builder(catalog, request)
            return _cached(body, media_type, 200, etag)
        except ApiError as exc:
            return _cached(_error_body(exc.status, str(exc)), "application/json", exc.status, etag)
        except PageNotFound as exc:
            if api or request.url.path.endswith(".json"):
                return _cached(_error_body(404, str(exc)), "application/json", 404, etag)
            return _cached(render_not_found(str(exc)).encode(), "text/html; charset=utf-8", 404, etag)

    def api(
        builder: Builder, cheap: Callable[[Request], bool] = lambda request: False
    ) -> Callable[[Request], Awaitable[Response]]:
        return answer(builder, api=True, cheap=cheap)

    def html(
        builder: Builder, cheap: Callable[[Request], bool] = lambda request: False
    ) -> Callable[[Request], Awaitable[Response]]:
        return answer(builder, api=False, cheap=cheap)

    assets = {relative.split("/", 1)[1]: (asset_text(kind), kind) for kind, relative in ASSETS.items()}
    assert set(ASSET_SOURCES) == {kind for _, kind in assets.values()}

    async def static(request: Request) -> Response:
        found = assets.get(request.path_params["file"])
        if found is None:
            return Response(render_not_found(), status_code=404, media_type="text/html; charset=utf-8")
        body, kind = found
        media = "text/css" if kind == "css" else "text/javascript"
        # The version is in the file's name: it never changes under that name.
        return Response(body, media_type=media, headers={"Cache-Control": "public, max-age=31536000, immutable"})

    async def openapi(request: Request) -> Response:
        return Response(msgspec.json.encode(OPENAPI), media_type="application/json")

    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return Response(
                _error_body(404, f"no such endpoint: {request.url.path}"),
                status_code=404,
                media_type="application/json",
            )
        return Response(render_not_found(), status_code=404, media_type="text/html; charset=utf-8")

    async def method_not_allowed(request: Request, exc: Exception) -> Response:
        return Response(
            _error_body(405, f"{request.method} is not allowed here"),
            status_code=405,
            media_type="application/json",
            headers={"Allow": "GET, HEAD"},
        )

    async def server_error(request: Request, exc: Exception) -> Response:
        return Response(
            _error_body(500, "internal error; see the server's log"), status_code=500, media_type="application/json"
        )

    routes = [
        Route("/api/openapi.json", openapi, methods=["GET"]),
        Route("/api/tags", api(_api_tags), methods=["GET"]),
        Route("/api/tags/{tag}/packages", api(_api_packages), methods=["GET"]),
        Route("/api/tags/{tag}/packages/{name}", api(_api_package, _always), methods=["GET"]),
        Route("/api/specs/{hash}", api(_api_spec), methods=["GET"]),
        Route(
            "/api/search", api(_api_search, lambda r: _cheap_search(r, indexes_ready=catalogs.ready)), methods=["GET"]
        ),
        Route("/api/diff", api(_api_diff), methods=["GET"]),
        Route("/static/{file}", static, methods=["GET"]),
        Route("/packages.json", html(_packages_index), methods=["GET"]),
        *_page_routes("/", _home, html),
        *_page_routes("/mirrors/", _mirrors, html),
        *_page_routes("/tags/{tag}/", _tag, html),
        Route("/tags/{tag}/all.html", html(_all_packages), methods=["GET"]),
        *_page_routes("/tags/{tag}/packages/{name}/", _package, lambda b: html(b, _always)),
        Route("/specs/{prefix}/{hash}.html", html(_spec), methods=["GET"]),
        Route("/specs/{prefix}/{hash}.json", html(_spec), methods=["GET"]),
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


# -- the OpenAPI document --------------------------------------------------------------------

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["status", "message"],
            "properties": {"status": {"type": "integer"}, "message": {"type": "string"}},
        }
    },
}


def _responses(ok: dict[str, Any], *errors: int) -> dict[str, Any]:
    result: dict[str, Any] = {"200": {"description": "OK", "content": {"application/json": {"schema": ok}}}}
    reasons = {400: "A bad parameter", 404: "No such tag, package or spec"}
    for status in errors:
        result[str(status)] = {
            "description": reasons[status],
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    return result


def _param(
    name: str,
    where: str = "query",
    *,
    required: bool = False,
    schema: dict[str, Any] | None = None,
    description: str = "",
) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": required or where == "path",
        "schema": schema or {"type": "string"},
        "description": description,
    }


_SPEC_SUMMARY = {
    "type": "object",
    "required": [
        "hash",
        "name",
        "version",
        "compiler",
        "platform",
        "os",
        "target",
        "variants",
        "size",
        "tags",
        "stacks",
    ],
    "properties": {
        "hash": {"type": "string"},
        "name": {"type": "string"},
        "version": {"type": "string"},
        "compiler": {"type": "string"},
        "platform": {"type": "string"},
        "os": {"type": "string"},
        "target": {"type": "string"},
        "variants": {"type": "array", "items": {"type": "string"}},
        "size": {"type": "integer", "nullable": True},
        "tags": {"type": "array", "items": {"type": "string"}},
        "stacks": {"type": "array", "items": {"type": "string"}},
    },
}
_FACET_PARAMS = [
    _param(k, description=f"only packages with this {k}") for k in ("stack", "os", "target", "compiler", "platform")
]

OPENAPI: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {
        "title": "cachedex",
        "version": __version__,
        "description": "What is in the Spack build cache? Tags, packages and specs of the synced "
        "mirrors; search with Spack's spec syntax; diffs. Errors: "
        '{"error": {"status": ..., "message": ...}}.',
    },
    "paths": {
        "/api/tags": {
            "get": {
                "summary": "Every tag with its totals",
                "operationId": "tags",
                "responses": _responses({"type": "array", "items": {"type": "object"}}),
            }
        },
        "/api/tags/{tag}/packages": {
            "get": {
                "summary": "Packages of a tag, with facet counts",
                "operationId": "packages",
                "parameters": [_param("tag", "path"), *_FACET_PARAMS],
                "responses": _responses(
                    {"type": "object", "required": ["tag", "total", "packages", "facets"]}, 400, 404
                ),
            }
        },
        "/api/tags/{tag}/packages/{name}": {
            "get": {
                "summary": "A package's specs in a tag",
                "operationId": "package",
                "parameters": [_param("tag", "path"), _param("name", "path")],
                "responses": _responses({"type": "object", "required": ["tag", "name", "specs", "facets"]}, 400, 404),
            }
        },
        "/api/specs/{hash}": {
            "get": {
                "summary": "One spec with its dependencies and dependents",
                "operationId": "spec",
                "parameters": [_param("hash", "path")],
                "responses": _responses(
                    {"type": "object", "required": ["spec", "dependencies", "dependents"]}, 400, 404
                ),
            }
        },
        "/api/search": {
            "get": {
                "summary": "Specs matching a query in Spack's spec syntax",
                "operationId": "search",
                "parameters": [
                    _param("q", description="e.g. 'hdf5+mpi %gcc@13 target=x86_64:'"),
                    _param("tag"),
                    _param("stack", description="needs tag"),
                    _param("limit", schema={"type": "integer", "minimum": 1, "maximum": _MAX_LIMIT, "default": 50}),
                    _param("offset", schema={"type": "integer", "minimum": 0, "default": 0}),
                ],
                "responses": _responses(
                    {
                        "type": "object",
                        "required": ["total", "offset", "limit", "specs"],
                        "properties": {
                            "total": {"type": "integer"},
                            "offset": {"type": "integer"},
                            "limit": {"type": "integer"},
                            "specs": {"type": "array", "items": _SPEC_SUMMARY},
                        },
                    },
                    400,
                    404,
                ),
            }
        },
        "/api/diff": {
            "get": {
                "summary": "What changed between two tags (from, to) or in a tag since a date (tag, since)",
                "operationId": "diff",
                "parameters": [
                    _param("from"),
                    _param("to"),
                    _param("tag"),
                    _param("since", schema={"type": "string"}, description="YYYY-MM-DD"),
                ],
                "responses": _responses({"type": "object", "required": ["old", "new", "stacks"]}, 400, 404),
            }
        },
    },
    "components": {"schemas": {"Error": _ERROR}},
}
