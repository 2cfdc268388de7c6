"""The search page: ``search.html?q=&tag=&stack=&page=N``, a query's matches a page at a time.

On the live server the query is Spack's spec syntax (``hdf5+mpi %gcc@13``,
``py-keras ^py-jax@0.4``), answered by ``Catalog.search``: the total, every match
reachable page by page, and for a search that finds nothing, what each condition
dropped would find (the catalog's hints). A static site has no catalog to ask: its
``search.html`` says so, and its script searches package names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from ..catalog import Catalog, SpecSummary
from ..errors import BadQuery
from ..query import parse_remembered
from ..query_text import format_query
from ..values import ROOT_STACK
from .package_pages import differing_variants

__all__ = ["PER_PAGE", "SearchView", "search_view", "static_search_view"]

#: Matches on one page.
PER_PAGE = 50
#: The last page a request may ask for (50,000 matches in).
MAX_PAGE = 1000


class SearchView(msgspec.Struct, frozen=True, tag_field="page", tag="search"):
    """One page of a search's matches, in the catalog's order, and what to search next.

    ``error`` is set (and nothing searched) when the query cannot be parsed: the
    parser's message, the query shown with a caret under the problem; ``hints`` when
    nothing matches: each condition dropped in turn, and what the rest finds."""

    query: str  #: as typed
    normal: str  #: the query in Spack's syntax as parsed ("" for none)
    name: str  #: the package the query names, if any
    tag: str  #: the tag searched; "" for every tag
    stack: str  #: the stack searched (needs a tag); ""
    number: int  #: the page of results shown, 1 for the first
    per_page: int
    total: int  #: matches over all pages
    specs: tuple[SpecSummary, ...]
    differing: dict[str, tuple[str, ...]]  #: package -> variants that differ between its specs shown
    hints: tuple[str, ...] = ()
    suggestion: str = ""  #: when nothing matches: the search likely meant (see ``SearchPage``)
    error: str = ""
    #: a scope left out, and why: a stack without a tag, or one the tag lacks (a tag chosen after a stack of another)
    note: str = ""
    #: each tag's stacks, root left out: the stack choices the script gives a tag once chosen
    tag_stacks: dict[str, tuple[str, ...]] = {}
    tags: tuple[str, ...] = ()  #: every tag, for the scope selector
    stacks: tuple[str, ...] = ()  #: the stacks of ``tag``
    live: bool = True  #: False on a static site, which can search package names only
    reuse: bool = False  #: the server checks environments too (a link to ``reuse.html``)

    @property
    def pages(self) -> int:
        """How many pages the matches fill."""
        return min(MAX_PAGE, max(1, -(-self.total // self.per_page)))


def _whole(raw: str | None, name: str) -> int:
    if not raw:
        return 1
    digits = raw.lstrip("0")  # (leading zeros are no larger a number: 0010000000 is not 1,000)
    if not raw.isascii() or not raw.isdigit() or len(digits) > 6 or not 1 <= int(digits or "0") <= MAX_PAGE:
        raise BadQuery(f"{name} must be a whole number between 1 and {MAX_PAGE}, got {raw[:30]!r}")
    return int(digits)


def search_view(catalog: Catalog, params: Mapping[str, str], *, reuse: bool = False) -> SearchView:
    """The search page for ``params`` (``q``, ``tag``, ``stack``, ``page``). An unknown
    tag raises (404); a bad page number too (400); a query that does not parse, and a
    stack the tag lacks, are shown on the page with what is wrong."""
    with catalog.snapshot():  # one catalog state for the whole page (and one transaction)
        return msgspec.structs.replace(_search_view(catalog, params), reuse=reuse)


def _search_view(catalog: Catalog, params: Mapping[str, str]) -> SearchView:
    text = params.get("q", "").strip()
    tag, stack = params.get("tag", ""), params.get("stack", "")
    page = _whole(params.get("page"), "page")
    tags = tuple(catalog.tag_names())
    if tag:
        catalog.require_tag(tag)
    stacks = tuple(catalog.stack_names(tag)) if tag else ()
    view = SearchView(
        query=text,
        normal="",
        name="",
        tag=tag,
        stack=stack,
        number=page,
        per_page=PER_PAGE,
        total=0,
        specs=(),
        differing={},
        tags=tags,
        stacks=stacks,
    )
    view = msgspec.structs.replace(
        view, tag_stacks={name: tuple(s for s in catalog.stack_names(name) if s != ROOT_STACK) for name in tags}
    )
    # A stack the scope cannot have (a tag chosen after a stack of another) is left out,
    # and said: the search answers what it can rather than an error (the API refuses it).
    if stack and not tag:
        view = msgspec.structs.replace(view, stack="", note=f"Every tag: stack {stack} left out (a stack is a tag's).")
    elif stack and stack != ROOT_STACK and stack not in stacks:
        view = msgspec.structs.replace(view, stack="", note=f"Tag {tag} has no stack {stack}: searched the whole tag.")
    try:
        query = parse_remembered(text)
    except BadQuery as exc:
        return msgspec.structs.replace(view, error=str(exc))
    if query.is_empty:
        return view
    found = catalog.search(
        query,
        tag=tag or None,
        stack=view.stack or None,
        limit=PER_PAGE,
        offset=(page - 1) * PER_PAGE,
        hints=page == 1,
    )
    by_name: dict[str, list[SpecSummary]] = {}
    for spec in found.specs:
        by_name.setdefault(spec.name, []).append(spec)
    return msgspec.structs.replace(
        view,
        normal=format_query(query),
        name=query.name or "",
        total=found.total,
        specs=found.specs,
        differing={name: differing_variants(specs) for name, specs in by_name.items() if len(specs) > 1},
        hints=found.hints,
        suggestion=found.suggestion,
    )


def static_search_view(tags: Sequence[str]) -> SearchView:
    """A static site's search page: no query, and the tags (its script searches names)."""
    return SearchView(
        query="",
        normal="",
        name="",
        tag="",
        stack="",
        number=1,
        per_page=PER_PAGE,
        total=0,
        specs=(),
        differing={},
        tags=tuple(tags),
        live=False,
    )
