"""The JSON API under ``/api`` and the pages' builders: request in, (body, media type) out.

Each builder reads its parameters, checks them (unknown parameters and bad values raise
:class:`~cachedex.errors.BadQuery`, status 400), and calls one library function; a
lookup that fails raises a :class:`~cachedex.errors.LookupFailed` (404). The app turns
any :class:`~cachedex.errors.CachedexError` into the one error shape
``{"error": {"status": <int>, "message": <str>}}`` by its ``status``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from starlette.requests import Request

from ...catalog import Catalog
from ...diff import diff_since, diff_tags, parse_since
from ...errors import BadQuery, UnknownSpec
from ...query import parse
from ..pages import PackageRow, SpecPage, TagRow, home_page, mirrors_page, package_page, spec_page, tag_page
from ..render import render, render_all_packages, to_json

__all__ = [
    "API",
    "FACET_PARAMETERS",
    "MAX_LIMIT",
    "PAGES",
    "Builder",
    "ErrorBody",
    "ErrorDetail",
    "PackageList",
    "error_body",
    "is_cheap_search",
]

#: Builds a response body and its media type for a request.
Builder = Callable[[Catalog, Request], tuple[bytes, str]]

#: The most search results one request may ask for.
MAX_LIMIT = 1000

JSON = "application/json"
HTML = "text/html; charset=utf-8"


class ErrorDetail(msgspec.Struct, frozen=True):
    """What went wrong."""

    status: int  #: the HTTP status: 400 a bad parameter or query, 404 nothing of that name
    message: str  #: one line (a bad query: the query shown with a caret under the problem)


class ErrorBody(msgspec.Struct, frozen=True):
    """Every error answer of the API."""

    error: ErrorDetail


class PackageList(msgspec.Struct, frozen=True):
    """The packages of a tag that the facet filters select, and the tag's facet counts."""

    tag: TagRow
    total: int  #: packages selected
    packages: tuple[PackageRow, ...]
    facets: dict[str, dict[str, int]]  #: facet -> value -> packages having it, over the whole tag


def _json(value: Any) -> tuple[bytes, str]:
    return msgspec.json.encode(value), JSON


def error_body(status: int, message: str) -> bytes:
    """The JSON of an error: ``{"error": {"status": ..., "message": ...}}``."""
    return msgspec.json.encode(ErrorBody(ErrorDetail(status, message)))


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise BadQuery(f"{name} must be a whole number, got {raw!r}") from exc
    if not low <= value <= high:
        raise BadQuery(f"{name} must be between {low} and {high}, got {value}")
    return value


def _only(request: Request, allowed: set[str]) -> None:
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        raise BadQuery(f"unknown parameter {unknown[0]!r} (allowed: {', '.join(sorted(allowed)) or 'none'})")


# -- /api -------------------------------------------------------------------------------------


def _api_tags(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, set())
    return _json(home_page(catalog).tags)


#: Facet parameters of ``/api/tags/{tag}/packages`` and the package row field each tests.
FACET_PARAMETERS = {
    "stack": "stacks",
    "os": "oses",
    "target": "targets",
    "compiler": "compilers",
    "platform": "platforms",
}


def _api_packages(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, set(FACET_PARAMETERS))
    page = tag_page(catalog, request.path_params["tag"])
    wanted = {k: v for k, v in request.query_params.items() if v}
    packages = tuple(p for p in page.packages if all(v in getattr(p, FACET_PARAMETERS[k]) for k, v in wanted.items()))
    return _json(PackageList(page.tag, len(packages), packages, page.facets))


def _api_package(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, set())
    return _json(package_page(catalog, request.path_params["tag"], request.path_params["name"]))


def _api_spec(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, set())
    return _json(spec_page(catalog, request.path_params["hash"]))


def _api_search(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, {"q", "tag", "stack", "limit", "offset"})
    limit = _int_param(request, "limit", 50, 1, MAX_LIMIT)
    offset = _int_param(request, "offset", 0, 0, 10**9)
    query = parse(request.query_params.get("q", ""))
    tag = request.query_params.get("tag") or None
    stack = request.query_params.get("stack") or None
    return _json(catalog.search(query, tag=tag, stack=stack, limit=limit, offset=offset))


def _api_diff(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    _only(request, {"from", "to", "tag", "since"})
    params = request.query_params
    if params.get("since") or params.get("tag"):
        tag, since = params.get("tag", ""), params.get("since", "")
        if not tag or not since:
            raise BadQuery("a diff over time needs tag and since (YYYY-MM-DD)")
        when = parse_since(since)
        return _json(diff_since(catalog, tag, when, since))
    old, new = params.get("from", ""), params.get("to", "")
    if not old or not new:
        raise BadQuery("a diff needs from and to (two tags), or tag and since")
    return _json(diff_tags(catalog, old, new))


#: The API's paths and their builders.
API: dict[str, Builder] = {
    "/api/tags": _api_tags,
    "/api/tags/{tag}/packages": _api_packages,
    "/api/tags/{tag}/packages/{name}": _api_package,
    "/api/specs/{hash}": _api_spec,
    "/api/search": _api_search,
    "/api/diff": _api_diff,
}


def is_cheap_search(request: Request, *, indexes_ready: bool) -> bool:
    """A search that names a package or a hash reads a few rows from an index; one of
    facets alone reads a facet index, once ``Catalog.warm_search`` built them."""
    try:
        query = parse(request.query_params.get("q", ""))
    except BadQuery:
        return True  # answered at once with a 400
    if query.name is not None or query.hash_prefix is not None:
        return True
    return indexes_ready and not query.versions and not query.variants


# -- HTML pages and their JSON twins ----------------------------------------------------------


def _page_builder(build: Callable[[Catalog, Request], Any]) -> Builder:
    def respond(catalog: Catalog, request: Request) -> tuple[bytes, str]:
        page = build(catalog, request)
        if request.url.path.endswith(".json"):
            return to_json(page), JSON
        return render(page).encode(), HTML

    return respond


def _spec_at(catalog: Catalog, request: Request) -> SpecPage:
    dag_hash = request.path_params["hash"]
    if request.path_params["prefix"] != dag_hash[:2]:
        raise UnknownSpec(dag_hash, f"no spec with hash {dag_hash!r} here: its page is under specs/{dag_hash[:2]}/")
    return spec_page(catalog, dag_hash)


def _all_packages(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return render_all_packages(tag_page(catalog, request.path_params["tag"])).encode(), HTML


def _packages_index(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return _json(catalog.package_names())


#: The site's pages by kind: each is served at the same path as in the static site.
PAGES: dict[str, Builder] = {
    "home": _page_builder(lambda c, r: home_page(c)),
    "mirrors": _page_builder(lambda c, r: mirrors_page(c)),
    "tag": _page_builder(lambda c, r: tag_page(c, r.path_params["tag"])),
    "package": _page_builder(lambda c, r: package_page(c, r.path_params["tag"], r.path_params["name"])),
    "spec": _page_builder(_spec_at),
    "all": _all_packages,
    "packages.json": _packages_index,
}
