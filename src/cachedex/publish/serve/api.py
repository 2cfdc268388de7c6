"""The JSON API under ``/api`` and the pages' builders: request in, (body, media type) out.

Each route is an :class:`Endpoint`: the parameters it takes (the app refuses any other
with a :class:`~cachedex.errors.BadQuery`, 400, before looking at the cache) and a
builder, which reads them (a bad value: BadQuery) and calls one library function; a
lookup that fails raises a :class:`~cachedex.errors.LookupFailed` (404). The app turns
any :class:`~cachedex.errors.CachedexError` into the one error shape
``{"error": {"status": <int>, "message": <str>}}`` by its ``status``, or into an HTML
error page (:func:`~.refusals.error_page`) on the site's HTML routes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple
from urllib.parse import unquote_plus

import msgspec
from starlette.requests import Request

from ...catalog import Catalog
from ...errors import BadQuery, LookupFailed, UnknownPackage, UnknownSpec, UnknownStack
from ...query import Query, parse_remembered
from ...query_text import query_parts
from ..badges import SVG, package_badge
from ..changes import ChangesPage, ComparePage, changes_page, compare_page, previous_tags
from ..changes_site import compared_with
from ..coverage import coverage_page
from ..facets import FILTER_KEYS, PACKAGE_FILTER_KEYS, active_filters
from ..feeds import ATOM, PACKAGE_FEED_ENTRIES, all_tags_feed, package_feed, tag_feed
from ..pages import (
    PackageRow,
    SpecPage,
    TagData,
    TagPage,
    TagRow,
    full_hash,
    home_page,
    mirrors_page,
    package_page,
    spec_page,
    tag_data,
    tag_page_from,
)
from ..recent_changes import history_from
from ..render import columns_json, render, render_all_packages, to_json
from ..reuse_page import reuse_view
from ..search_page import SearchView, search_view
from ..urls import with_pages
from .catalogs import forget_when_replaced
from .diffs import DIFF_PARAMETERS, api_diff, diff_page
from .refusals import HTML, JSON, int_parameter

__all__ = [
    "API",
    "FACET_PARAMETERS",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "PAGES",
    "Builder",
    "Endpoint",
    "PackageList",
    "is_cheap_search",
]

#: Builds a response body and its media type for a request.
Builder = Callable[[Catalog, Request], tuple[bytes, str]]

#: The most search results one request may ask for.
MAX_LIMIT = 1000
#: The search results a request without ``limit`` gets.
DEFAULT_LIMIT = 50
#: The largest offset a search takes (past every catalog's matches; a bound for the number).
MAX_OFFSET = 10**9


class PackageList(msgspec.Struct, frozen=True):
    """The packages of a tag that have a spec matching every facet filter, each row
    summarizing only those specs, and the facet counts with the other filters applied."""

    tag: TagRow
    total: int  #: packages selected
    packages: tuple[PackageRow, ...]
    #: facet -> value -> packages having a spec with it that matches the other filters
    facets: dict[str, dict[str, int]]
    relax: dict[str, int] = {}  #: filter -> packages that would match with it alone dropped


def _json(value: Any) -> tuple[bytes, str]:
    return msgspec.json.encode(value), JSON


# -- /api -------------------------------------------------------------------------------------


def _api_tags(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return _json(home_page(catalog).tags)


#: Filter parameters of ``/api/tags/{tag}/packages`` (see ``publish/facets.py``).
FACET_PARAMETERS = FILTER_KEYS

#: Tags' data kept for filtering (a big tag's takes seconds to read): the last few.
_TAG_DATA: OrderedDict[tuple[str, str, str], TagData] = OrderedDict()
_TAG_DATA_KEPT = 4
_tag_data_lock = threading.Lock()


@forget_when_replaced
def _forget_tag_data(path: str) -> None:
    with _tag_data_lock:
        for key in [key for key in _TAG_DATA if key[0] == path]:
            del _TAG_DATA[key]


def _tag_data(catalog: Catalog, tag: str) -> TagData:
    """:func:`~..pages.tag_data` of the catalog's current state, kept for the next filters."""
    key = (str(catalog.path), catalog.state_token()[0], tag)
    with _tag_data_lock:
        found = _TAG_DATA.get(key)
        if found is not None:
            _TAG_DATA.move_to_end(key)
            return found
    found = tag_data(catalog, tag, folded=False)  # (each name has its page here)
    with _tag_data_lock:
        _TAG_DATA[key] = found
        while len(_TAG_DATA) > _TAG_DATA_KEPT:
            _TAG_DATA.popitem(last=False)
    return found


def _tag_page(catalog: Catalog, request: Request) -> TagPage:
    params = request.query_params
    filters = active_filters(params, FILTER_KEYS)
    return tag_page_from(_tag_data(catalog, request.path_params["tag"]), filters, params.get("q", ""))


def _api_packages(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    tag, stack = request.path_params["tag"], request.query_params.get("stack")
    if stack and stack not in {mirror.stack for mirror in catalog.mirrors(tag)}:
        catalog.require_tag(tag)  # (an unknown tag is said as such)
        raise UnknownStack(tag, stack)  # 404, as /api/search says it (the page lists nothing, a filter)
    page = _tag_page(catalog, request)
    return _json(PackageList(page.tag, len(page.packages), page.packages, page.facets, page.relax))


def _api_package(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return _json(package_page(catalog, request.path_params["tag"], request.path_params["name"]))


def _api_spec(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    # A unique prefix too (`spack find` shows seven characters): the page says the full hash.
    return _json(spec_page(catalog, full_hash(catalog, request.path_params["hash"])))


def _api_search(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    limit = int_parameter(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    offset = int_parameter(request, "offset", 0, 0, MAX_OFFSET)
    query = parse_remembered(request.query_params.get("q", ""))
    tag = request.query_params.get("tag") or None
    stack = request.query_params.get("stack") or None
    return _json(catalog.search(query, tag=tag, stack=stack, limit=limit, offset=offset, hints=True))


#: Problems of each mirror the verify answer lists (``problem_count`` counts them all): a
#: mirror with one fault repeats it per spec, and 950,000 made an answer of 238 MB.
VERIFY_PROBLEMS = 1000


def _api_verify(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    tag = request.path_params["tag"]
    found = catalog.tag_verification(tag, problems=VERIFY_PROBLEMS)
    if found is None:
        catalog.require_tag(tag)  # UnknownTag (404) when there is no such tag at all
        raise LookupFailed(f"tag {tag!r} was never verified; run 'cachedex verify {tag}'")
    return _json(found)


def _api_coverage(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return _json(coverage_page(catalog, request.path_params["tag"]))


class Endpoint(NamedTuple):
    """A route's builder and the query parameters it takes."""

    build: Builder
    #: The parameters it accepts: any other is refused (400) before anything is built.
    allowed: frozenset[str] = frozenset()
    #: Those of ``allowed`` its answer depends on (the others are read by the page's
    #: script, in the browser): only these are part of the cached answer's key.
    keyed: frozenset[str] = frozenset()

    def key(self, request: Request) -> tuple[tuple[str, str], ...]:
        """The request's parameters that matter, normalized: sorted, empty ones left
        out (every builder reads an empty value as a missing one)."""
        params = request.query_params
        return tuple((name, params[name]) for name in sorted(self.keyed) if params.get(name))


def _api(build: Builder, *parameters: str) -> Endpoint:
    return Endpoint(build, frozenset(parameters), frozenset(parameters))


#: The API's paths and their endpoints.
API: dict[str, Endpoint] = {
    "/api/tags": _api(_api_tags),
    "/api/tags/{tag}/packages": _api(_api_packages, *FACET_PARAMETERS),
    "/api/tags/{tag}/packages/{name}": _api(_api_package),
    "/api/specs/{hash}": _api(_api_spec),
    "/api/search": _api(_api_search, "q", "tag", "stack", "limit", "offset"),
    "/api/diff": _api(api_diff, "from", "to", "tag", "since"),
    "/api/tags/{tag}/verify": _api(_api_verify),
    "/api/tags/{tag}/coverage": _api(_api_coverage),
}


#: The most conditions a search answered on the event loop may have: more go to a thread.
CHEAP_CONDITIONS = 8


def is_cheap_search(request: Request, *, indexes_ready: bool, walked: Callable[[Query], bool]) -> bool:
    """Whether a search is answered in a few milliseconds from indexes already built: one
    naming a package or a hash reads a few rows; one of facets, versions or variants reads
    the indexes ``Catalog.warm_search`` builds. A search that finds nothing runs again
    with each condition dropped (its hints), so what those need must be built too: with
    versions or variants and no tag, the catalog's own variant index, built on first
    use. A ``^dependency`` walks edges (a few tenths of a second up from a core
    library): cheap once ``walked`` (``Catalog.walks_made``) says that the catalog's
    state has its walk, made by the warm-up, a search before, or just now if it was
    small; asked last, when the rest of the search is cheap."""
    try:
        query = parse_remembered(request.query_params.get("q", ""))
    except BadQuery:
        return True  # answered at once with a 400
    conditions = len(query_parts(query))
    if (query.name is not None or query.hash_prefix is not None) and conditions == 1:
        return True  # a few rows; finding none, its hint looks for close names
    if not indexes_ready or conditions > CHEAP_CONDITIONS:
        return False  # (each condition costs its check, and a search that finds nothing each's hint)
    if (query.versions or query.variants) and not request.query_params.get("tag"):
        return False
    return not query.dependencies or walked(query)


# -- HTML pages and their JSON twins ----------------------------------------------------------


def _page_builder(build: Callable[[Catalog, Request], Any]) -> Builder:
    def respond(catalog: Catalog, request: Request) -> tuple[bytes, str]:
        page = build(catalog, request)
        if request.url.path.endswith((".json", ".json.gz")):  # (gzipped by .twins)
            return to_json(page), JSON
        with history_from(catalog):  # a tag page's recent changes, a spec page's "first seen"
            return render(page, configs=catalog.spec_configs, query=_server_query(request)).encode(), HTML

    return respond


def _server_query(request: Request) -> str:
    """The request's query string as written, without what the script alone reads
    (:data:`_SORT`): the page is cached without it, and another visitor's ``sort`` (any
    text) went into the "as JSON" link of the page everyone was then served."""
    parts = request.url.query.split("&")
    return "&".join(part for part in parts if unquote_plus(part.partition("=")[0]) not in _SORT)


def _search_page(catalog: Catalog, request: Request) -> SearchView:
    """The search page, linking to the environment check where this server has one."""
    return search_view(catalog, request.query_params, reuse=request.app.state.cachedex.reads_lockfiles)


def _spec_at(catalog: Catalog, request: Request) -> SpecPage:
    dag_hash = request.path_params["hash"]
    if request.path_params["prefix"] == dag_hash[:2]:
        return spec_page(catalog, dag_hash)
    if catalog.spec_summary(dag_hash) is None:  # (no page at all: pointing to one would mislead)
        raise UnknownSpec(dag_hash, f"no spec with hash {dag_hash!r} in the catalog")
    raise UnknownSpec(dag_hash, f"no spec with hash {dag_hash!r} here: its page is under specs/{dag_hash[:2]}/")


def _whole_tag_page(catalog: Catalog, request: Request) -> TagPage:
    """The tag's page without filters, as the static site writes it."""
    return tag_page_from(_tag_data(catalog, request.path_params["tag"]))


def _all_packages(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return render_all_packages(_whole_tag_page(catalog, request)).encode(), HTML


def _tag_columns(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return columns_json(_whole_tag_page(catalog, request)), JSON


def _packages_index(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    # As the static site's: names that cannot have a page (a '/' in them) are left out,
    # so that the search box never links to a 404.
    return _json(with_pages(catalog.package_names()))


#: What the filters of a tag's page keep in its URL (``?stack=e4s&q=zl``): the server
#: applies them (a page reads without JavaScript), the script too.
_TAG_FILTERS = frozenset({*FILTER_KEYS, "q"})
#: A package page's filters (``q``: part of a version), applied by the server as by the script.
_PACKAGE_FILTERS = frozenset({*PACKAGE_FILTER_KEYS, "q"})
#: The rows' order the script keeps in those pages' URLs (``?sort=-size``): read in the
#: browser alone, so taken but not part of the answer's key.
_SORT = frozenset({"sort"})


def _package_at(catalog: Catalog, request: Request) -> Any:
    params = request.query_params
    return package_page(
        catalog,
        request.path_params["tag"],
        request.path_params["name"],
        active_filters(params, PACKAGE_FILTER_KEYS),
        params.get("q", ""),
    )


#: The search page's parameters.
_SEARCH = frozenset({"q", "tag", "stack", "page"})


def _compared_with(catalog: Catalog, request: Request, tag: str) -> list[str]:
    """The tags ``tag`` has comparison pages with, as in the static site: the previous
    of its series, then those the config pairs it with (``compare:``) that are tags."""
    names = catalog.tag_names()
    olds = compared_with(previous_tags(names), request.app.state.cachedex.compare, tag)
    return [old for old in olds if old in names]


def _changes_at(catalog: Catalog, request: Request) -> ChangesPage:
    tag = request.path_params["tag"]  # (changes_page says if the catalog has no such tag)
    return changes_page(catalog, tag, compare=_compared_with(catalog, request, tag))


def _compare_at(catalog: Catalog, request: Request) -> ComparePage:
    """A comparison page of the static site: with the previous tag of its series, or one
    the config pairs it with."""
    new, old = request.path_params["tag"], request.path_params["old"]
    catalog.require_tag(new)
    if old not in _compared_with(catalog, request, new):
        raise LookupFailed(f"no comparison page of {new!r} with {old!r}; /diff?old=...&new=... compares any two tags")
    return compare_page(catalog, old, new)


def _badge(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    """A package's badge in a tag (``name`` given), or a tag's."""
    tag, name = request.path_params["tag"], request.path_params.get("name")
    if name is not None:
        return package_badge(_listed(catalog, tag, name)), SVG
    catalog.require_tag(tag)
    (stats,) = catalog.tag_stats([tag])
    return package_badge(stats.specs), SVG


def _listed(catalog: Catalog, tag: str, name: str) -> int:
    """The specs of package ``name`` that ``tag`` lists; UnknownPackage (naming the tags
    that list it) when none, as its page says."""
    catalog.require_tag(tag)
    found = dict(catalog.package_tags(name))
    if tag not in found:
        raise UnknownPackage(name, tag, list(found.items()))
    return found[tag]


def _tag_feed(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    return tag_feed(changes_page(catalog, request.path_params["tag"], held=set()), catalog.identity()), ATOM


def _package_feed(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    """A package's feed in a tag: while the tag lists it, as its page is."""
    tag, name = request.path_params["tag"], request.path_params["name"]
    _listed(catalog, tag, name)
    changes = catalog.package_changes(tag, [name], syncs=PACKAGE_FEED_ENTRIES).get(name, [])
    feed = package_feed(tag, name, changes, catalog.first_synced_at(tag), catalog.identity(), catalog.other_compilers())
    return feed, ATOM


#: The site's pages by kind: each is served at the same path as in the static site.
PAGES: dict[str, Endpoint] = {
    "home": Endpoint(_page_builder(lambda c, r: home_page(c))),
    "mirrors": Endpoint(_page_builder(lambda c, r: mirrors_page(c))),
    "tag": Endpoint(_page_builder(_tag_page), _TAG_FILTERS | _SORT, _TAG_FILTERS),
    "package": Endpoint(_page_builder(_package_at), _PACKAGE_FILTERS | _SORT, _PACKAGE_FILTERS),
    "spec": Endpoint(_page_builder(_spec_at)),
    "search": Endpoint(_page_builder(_search_page), _SEARCH, _SEARCH),
    "all": Endpoint(_all_packages),
    "tag columns": Endpoint(_tag_columns),
    "packages.json": Endpoint(_packages_index),
    "changes": Endpoint(_page_builder(_changes_at)),
    "compare": Endpoint(_page_builder(_compare_at)),
    "diff": Endpoint(_page_builder(diff_page), DIFF_PARAMETERS, DIFF_PARAMETERS),
    "feed": Endpoint(lambda c, r: (all_tags_feed(c), ATOM)),
    "tag feed": Endpoint(_tag_feed),
    "package feed": Endpoint(_package_feed),
    "badge": Endpoint(_badge),
    "coverage": Endpoint(_page_builder(lambda c, r: coverage_page(c, r.path_params["tag"]))),
    "reuse": Endpoint(_page_builder(lambda c, r: reuse_view(c))),
}
