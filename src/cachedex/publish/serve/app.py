"""The Starlette app: routes, per-thread read-only catalogs, a response cache, ETags, gzip
(sent by :mod:`.sending`), and what a path with its trailing "/" toggled is answered.

The catalog is opened read-only, one connection per thread (:mod:`.catalogs`), so it
keeps answering while ``cachedex sync`` writes (WAL: readers see the last commit). Every
answer is cached in memory (:mod:`.cache`) under the catalog file and its state token,
which changes whenever a sync commits; they also make the ETag, so a client
revalidating after no sync gets 304. Bodies are gzipped once, when cached, for clients
that accept it.

What a client can make the server do is bounded: parameters a route does not take are
refused before anything is built, the cache is bounded in bytes, and at most
:data:`HEAVY_BUILDS` answers that may scan many rows are built at once per process (the
others wait for their turn, then usually find the answer cached). Errors are JSON under
``/api`` and for a page's JSON twin, HTML pages elsewhere; a damaged catalog gets a 500
and the server keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence, Set
from pathlib import Path
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Scope

from ...errors import BadQuery, CachedexError
from ...query import Query
from ..changes_site import pairs_by_new
from ..pages import full_hash
from ..render import (
    ASSET_SOURCES,
    ASSETS,
    COLUMNS_FILE,
    LIVE_FILE,
    asset_text,
    live_marker,
    render_not_found,
    render_stamp,
)
from ..urls import spec_url
from .api import API, PAGES, Endpoint, is_cheap_search
from .cache import Cached, ResponseCache, cached
from .catalogs import Catalogs
from .headers import SecurityHeaders, StateDates, code_modified, security_headers
from .openapi import openapi_document
from .paths import relative_to, routed_path, sent_path, slash_toggled, slash_within_name
from .refusals import HTML, JSON, check_parameters, error_body, in_api, refusal
from .reuse_route import ReadEnvironment, reuse_endpoint
from .sending import NOT_KEPT, etag, send
from .twins import gzipped_twin

#: An answer's cache key: (catalog state, path, what the endpoint reads of the request).
Key = tuple[Any, ...]

__all__ = ["HEAVY_BUILDS", "SMALL_WALK", "ServeState", "create_app"]

#: Answers that may scan many rows (a tag's page, a search by version) built at once, per
#: process. The work is Python holding the GIL: more threads would only share one CPU.
HEAVY_BUILDS = 2
#: A ``^dep`` search whose walk is not made yet is answered at once, walk and all, if
#: the walk reaches at most this many specs (a few milliseconds, given up as soon as it
#: reaches more); a walk up from a bigger library is made in a thread, in turn.
SMALL_WALK = 5_000

_log = logging.getLogger("cachedex.serve")


def _error(request: Request, status: int, message: str, tag: str = "") -> Cached:
    body, media_type = refusal(routed_path(request), status, message)
    return cached(body, media_type, status, tag)


def _failed(request: Request, catalogs: Catalogs, exc: CachedexError | sqlite3.DatabaseError, tag: str = "") -> Cached:
    """The answer to a request that failed: a cachedex error by its status (with ETag
    ``tag``: it holds for the catalog's state), a catalog that cannot be read as a 500,
    logged (no ETag: the catalog may be replaced)."""
    if isinstance(exc, CachedexError):  # one place maps errors to answers: by their status
        return _error(request, exc.status, str(exc), tag)
    _log.error("%s: cannot read the catalog: %s", catalogs.path, exc)
    return _error(request, 500, f"the catalog cannot be read ({exc}); see the server's log")


class _Gate:
    """At most ``limit`` heavy builds at once; the others wait without holding a thread.
    One semaphore per event loop: an asyncio semaphore belongs to the loop it first
    waits on, and tests drive one app from several loops."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.limit)
        return semaphore


class ServeState(msgspec.Struct):
    """What the app keeps, at ``app.state.cachedex``: its catalogs and its response cache,
    and whether it reads lockfiles (``POST /api/reuse``)."""

    catalogs: Catalogs
    cache: ResponseCache
    reads_lockfiles: bool = False
    #: The config's ``compare:`` pairs, by new tag: its comparison pages, as the site's
    compare: dict[str, list[str]] = {}


def _never(request: Request) -> bool:
    return False


def _always(request: Request) -> bool:
    return True


def create_app(
    catalog_path: Path,
    *,
    read_environment: ReadEnvironment | None = None,
    compare: Sequence[tuple[str, str]] = (),
) -> Starlette:
    """The ASGI app over the catalog at ``catalog_path`` (which must exist); with
    ``read_environment``, which reads a lockfile or a spec file, ``POST /api/reuse`` too.
    ``compare``: the config's (old, new) pairs of tags with comparison pages, besides
    each snapshot's and release's with the previous of its series (as ``cachedex site``)."""
    catalogs = Catalogs(Path(catalog_path))
    cache = ResponseCache()
    heavy = _Gate(HEAVY_BUILDS)
    # A page depends on the code that makes it too: after an upgrade (or new templates),
    # a browser's cached page must not be confirmed by its old ETag, nor by a date (it
    # would load assets the new version no longer serves). Validators name the code's
    # stamp, and no date is earlier than the code's files (the same in every worker).
    stamp = render_stamp()
    dates = StateDates(code_modified())

    def build(endpoint: Endpoint, request: Request, key: Key) -> tuple[Cached, Key]:
        """The answer, and the key of the state it was built from: a sync may have
        committed since ``key``'s state was read, and an answer is tagged and kept under
        the state it shows (one ETag, one body)."""
        try:
            # In this thread's connection: a thread's first may fail (the file deleted)
            catalog, file = catalogs.get()
            with catalog.snapshot():
                key = ((file, catalog.state_token()[0]), *key[1:])
                body, media_type = endpoint.build(catalog, request)
            return cached(body, media_type, 200, etag(stamp, repr(key).encode())), key
        except (CachedexError, sqlite3.DatabaseError) as exc:
            return _failed(request, catalogs, exc, etag(stamp, repr(key).encode())), key

    def answer(
        endpoint: Endpoint, *, cheap: Callable[[Request], bool] = _never
    ) -> Callable[[Request], Awaitable[Response]]:
        async def respond(request: Request) -> Response:
            if slash_within_name(request):
                return send(
                    request, _error(request, 404, f"no page has a '/' within a name: {sent_path(request)}"), None
                )
            try:
                check_parameters(request, endpoint.allowed)
            except BadQuery as exc:
                return send(request, _error(request, exc.status, str(exc)), None)
            try:
                catalog, file = catalogs.get()
                token = catalog.state_token()[0]
            except (CachedexError, sqlite3.DatabaseError) as exc:
                return send(request, _failed(request, catalogs, exc), None)
            state = (file, token)
            catalogs.warm(state)
            key: Key = (state, routed_path(request), endpoint.key(request))
            kept = cache.get(key)
            if kept is not None:
                return send(request, kept, dates.of(state))
            # A cheap answer (a few ms, from an index) is built right here: a hop to a
            # worker thread would cost as much as the work. Anything that may scan many
            # rows goes to a thread, so that it never holds up the others, and waits for
            # its turn among the heavy builds.
            if cheap(request):
                hit, key = build(endpoint, request, key)
            else:
                async with heavy():
                    kept = cache.get(key)  # built meanwhile by a request it waited behind
                    if kept is not None:
                        return send(request, kept, dates.of(state))
                    hit, key = await run_in_threadpool(build, endpoint, request, key)
            state = key[0]
            if hit.status < 500:  # a damaged catalog may be replaced: ask again next time
                cache.put(state, key, hit)
            return send(request, hit, dates.of(state))

        return respond

    def page_routes(prefix: str, endpoint: Endpoint, cheap: Callable[[Request], bool] = _never) -> list[Route]:
        respond = answer(endpoint, cheap=cheap)
        routes = [Route(prefix + suffix, respond, methods=["GET"]) for suffix in ("", "index.html", "index.json")]
        return [*routes, Route(prefix + "index.json.gz", answer(gzipped_twin(endpoint)), methods=["GET"])]

    media = {"css": "text/css", "core": "text/javascript", "js": "text/javascript"}
    assets = {
        relative.split("/", 1)[1]: cached(asset_text(kind), media[kind], 200, "") for kind, relative in ASSETS.items()
    }
    assert set(ASSET_SOURCES) == set(media)
    # The site's error page (~12 kB), gzipped once as every answer of its size is.
    not_found_page = cached(render_not_found().encode(), HTML, 404, "")

    async def static(request: Request) -> Response:
        try:
            check_parameters(request, frozenset())
        except BadQuery as exc:
            return send(request, _error(request, exc.status, str(exc)), None)
        found = assets.get(request.path_params["file"])
        if found is None:
            return send(request, not_found_page, None)
        # The version is in the file's name: it never changes under that name.
        return send(request, found, None, "public, max-age=31536000, immutable")

    def fixed(body: bytes) -> Callable[[Request], Awaitable[Response]]:
        """A body of the code alone: tagged (a client revalidates), taking no parameter."""
        hit = cached(body, JSON, 200, etag(stamp, body))

        async def respond(request: Request) -> Response:
            try:
                check_parameters(request, frozenset())
            except BadQuery as exc:
                return send(request, _error(request, exc.status, str(exc)), None)
            return send(request, hit, None)

        return respond

    openapi = fixed(msgspec.json.encode(openapi_document(reuse=read_environment is not None)))
    live = fixed(live_marker(True))

    async def short_spec(request: Request) -> Response:
        """``/spec/<hash or prefix>``, as ``spack find`` prints a hash: redirected to the
        spec's page (temporarily: a prefix unique today may not be after a sync). A
        lookup in the hash index, answered here as cheap answers are."""
        try:
            check_parameters(request, frozenset())
            catalog, _ = catalogs.get()
            dag_hash = full_hash(catalog, request.path_params["prefix"])
        except (CachedexError, sqlite3.DatabaseError) as exc:
            return send(request, _failed(request, catalogs, exc), None)
        # Relative, so that a server behind a path prefix sends its own: /x/spec/ab -> /x/specs/...
        return RedirectResponse("../" + spec_url(dag_hash), status_code=302)

    async def not_found(request: Request, exc: Exception) -> Response:
        # A path written with its trailing "/" toggled is answered as the path itself:
        # redirected to it where it takes the method, else refused as there (405, Allow),
        # not redirected to that 405 (a POST would send its body twice to reach it).
        path = routed_path(request)
        other = slash_toggled(path)
        allowed = _methods_at({**request.scope, "path": other}, app.router.routes) if other else frozenset()
        if request.method in allowed:
            moved = relative_to(request)
            if moved is not None:
                return RedirectResponse(moved, status_code=307)
        elif allowed:
            return _refused(request, allowed)
        if in_api(path):
            message = error_body(404, f"no such endpoint: {path}; the API's are in /api/openapi.json")
            return Response(message, status_code=404, media_type=JSON, headers=NOT_KEPT)
        return send(request, not_found_page, None)

    async def method_not_allowed(request: Request, exc: Exception) -> Response:
        return _refused(request, _methods_at(request.scope, app.router.routes))

    # Starlette answers an uncaught exception from outside every middleware: this answer
    # carries the headers every other one gets from SecurityHeaders itself.
    failed_headers = {**NOT_KEPT, **{name.decode(): value.decode() for name, value in security_headers()}}

    async def server_error(request: Request, exc: Exception) -> Response:
        hit = _error(request, 500, "internal error; see the server's log")
        return Response(hit.body, status_code=500, media_type=hit.media_type, headers=failed_headers)

    def walked(query: Query) -> bool:
        try:
            return catalogs.get()[0].walks_made(query, walk_up_to=SMALL_WALK)
        except (CachedexError, sqlite3.DatabaseError):
            return False  # the search, built in a thread, answers the error

    def cheap_search(request: Request) -> bool:
        return is_cheap_search(request, indexes_ready=catalogs.ready, walked=walked)

    cheap_api = {"/api/tags/{tag}/packages/{name}": _always, "/api/search": cheap_search}
    routes = [
        Route("/api/openapi.json", openapi, methods=["GET"]),
        *(
            Route(path, answer(endpoint, cheap=cheap_api.get(path, _never)), methods=["GET"])
            for path, endpoint in API.items()
        ),
        Route("/static/{file}", static, methods=["GET"]),
        Route("/packages.json", answer(PAGES["packages.json"]), methods=["GET"]),
        Route(f"/{LIVE_FILE}", live, methods=["GET"]),
        *page_routes("/", PAGES["home"]),
        *page_routes("/mirrors/", PAGES["mirrors"]),
        *page_routes("/tags/{tag}/", PAGES["tag"]),
        Route("/tags/{tag}/all.html", answer(PAGES["all"]), methods=["GET"]),
        Route(f"/tags/{{tag}}/{COLUMNS_FILE}", answer(PAGES["tag columns"]), methods=["GET"]),
        Route(f"/tags/{{tag}}/{COLUMNS_FILE}.gz", answer(gzipped_twin(PAGES["tag columns"])), methods=["GET"]),
        *page_routes("/tags/{tag}/packages/{name}/", PAGES["package"], _always),
        *page_routes("/tags/{tag}/changes/", PAGES["changes"]),
        *page_routes("/tags/{tag}/coverage/", PAGES["coverage"]),
        *page_routes("/tags/{tag}/compare/{old}/", PAGES["compare"]),
        Route("/diff", answer(PAGES["diff"]), methods=["GET"]),
        Route("/diff.html", answer(PAGES["diff"]), methods=["GET"]),
        Route("/diff.json", answer(PAGES["diff"]), methods=["GET"]),
        Route("/changes.atom", answer(PAGES["feed"]), methods=["GET"]),
        Route("/tags/{tag}/changes.atom", answer(PAGES["tag feed"]), methods=["GET"]),
        Route("/tags/{tag}/badge.svg", answer(PAGES["badge"]), methods=["GET"]),
        Route("/tags/{tag}/packages/{name}/badge.svg", answer(PAGES["badge"]), methods=["GET"]),
        Route("/tags/{tag}/packages/{name}/changes.atom", answer(PAGES["package feed"]), methods=["GET"]),
        Route("/specs/{prefix}/{hash}.html", answer(PAGES["spec"]), methods=["GET"]),
        Route("/spec/{prefix}", short_spec, methods=["GET"]),
        Route("/search.html", answer(PAGES["search"], cheap=cheap_search), methods=["GET"]),
        Route("/search.json", answer(PAGES["search"], cheap=cheap_search), methods=["GET"]),
        Route("/specs/{prefix}/{hash}.json", answer(PAGES["spec"]), methods=["GET"]),
        Route("/specs/{prefix}/{hash}.json.gz", answer(gzipped_twin(PAGES["spec"])), methods=["GET"]),
    ]
    if read_environment is not None:
        routes.append(Route("/api/reuse", reuse_endpoint(catalogs, heavy, read_environment), methods=["POST"]))
        routes += [Route(path, answer(PAGES["reuse"]), methods=["GET"]) for path in ("/reuse.html", "/reuse.json")]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Before the first request: a search of facets alone on a big tag needs its
        # index, which takes a second or two to build (later syncs: in a thread). A
        # catalog that cannot be read does not stop the server: requests answer the error.
        def warm() -> None:
            try:
                catalog, file = catalogs.get()
                state = (file, catalog.state_token()[0])
            except (sqlite3.DatabaseError, CachedexError) as exc:
                _log.warning("%s: cannot read the catalog's state (%s)", catalogs.path, exc)
                return
            catalogs.warm(state, wait=True)

        await run_in_threadpool(warm)
        yield

    app = Starlette(
        routes=routes,
        exception_handlers={404: not_found, 405: method_not_allowed, 500: server_error},
        lifespan=lifespan,
        middleware=[Middleware(SecurityHeaders)],
    )
    # Starlette's own redirect of /tags/develop to /tags/develop/ is absolute, built from
    # the Host header: behind a proxy that strips a prefix and passes Host on, it led
    # out of the prefix. The 404 handler redirects by a relative URL instead.
    app.router.redirect_slashes = False
    app.state.cachedex = ServeState(catalogs, cache, read_environment is not None, pairs_by_new(compare))
    return app


def _methods_at(scope: Scope, routes: Sequence[BaseRoute]) -> frozenset[str]:
    """The methods the routes take at the scope's path (none: no route has that path)."""
    methods: set[str] = set()
    for route in routes:
        if isinstance(route, Route) and route.methods and route.matches(scope)[0] != Match.NONE:
            methods |= route.methods
    return frozenset(methods)


def _refused(request: Request, allowed: Set[str]) -> Response:
    """405, naming the methods the path takes."""
    # HEAD is answered as GET would be, Content-Length included: the same message.
    method = "GET" if request.method == "HEAD" else request.method
    body, media_type = refusal(routed_path(request), 405, f"{method} is not allowed here")
    headers = {"Allow": ", ".join(sorted(allowed)), **NOT_KEPT}
    return Response(body, status_code=405, media_type=media_type, headers=headers)
