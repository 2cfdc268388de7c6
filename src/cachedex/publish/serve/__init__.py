"""``cachedex serve``: the website rendered on demand, and a JSON API, over the catalog.

The HTML pages live at the same paths as in the static site (``/``, ``/tags/<tag>/``,
``/tags/<tag>/packages/<name>/``, ``/mirrors/``, each also as ``index.html`` and
``index.json``; ``/specs/<first two characters>/<hash>.html`` and ``.json``); the API
under ``/api`` is described by the OpenAPI document at ``/api/openapi.json``. Errors of
the API are JSON of one shape: ``{"error": {"status": <int>, "message": <str>}}``.

    app       the Starlette app: routes, errors, a path's trailing "/", a bound on heavy builds at once
    api       the API's and the pages' endpoints: builders, parameters
    busy      the 503 past the limit of connections, with every answer's headers
    cache     the response cache, bounded in bytes
    catalogs  per-thread read-only connections, reopened when the file is replaced
    diffs     the diffs' endpoints: of two tags, or of one over time
    headers   what every answer carries: security headers, the dates of catalog states
    openapi   the OpenAPI document, its schemas generated from the page structs
    paths     a request's path as routed (an answer's key) and as sent; a "/" toggled
    refusals  the parameters checked, the error shapes (JSON, or the site's error page)
    reuse_route  POST /api/reuse: a lockfile in, the reuse report out (given a reader)
    sending   a cached answer sent: ETag, Last-Modified, 304, gzip
    server    uvicorn with limits: request head deadline and size, connections, the bind check
"""

from __future__ import annotations

from .app import create_app

__all__ = ["CATALOG_ENV", "create_app"]

#: The catalog that each uvicorn worker process of ``cachedex serve`` serves (see
#: ``cachedex.cli.serve_app``, which makes its app).
CATALOG_ENV = "CACHEDEX_SERVE_CATALOG"
