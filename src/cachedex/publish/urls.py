"""Every path and link of the site, in one place.

A page's file inside the site and its URL are the same path (names percent-encoded in
the URL); every link is relative, so the same HTML works from any folder, any static file
server and ``cachedex serve``. A page at depth N reaches the site's top with ``../``
N times (:func:`root_of`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from urllib.parse import quote, urlencode

from ..values import is_dag_hash
from .changes import ChangesPage, ComparePage
from .coverage import CoveragePage
from .files import name_problem
from .folder_names import folder_clashes, folder_key, package_clashes
from .pages import HomePage, MirrorsPage, PackagePage, SpecPage, TagPage
from .reuse_page import ReuseView
from .search_page import SearchView

__all__ = [
    "EVERY_PAGE",
    "SITE_PAGES",
    "Page",
    "PageLinks",
    "has_page",
    "json_path",
    "page_links",
    "page_path",
    "query_string",
    "root_of",
    "segment",
    "spec_path",
    "spec_url",
    "with_pages",
]

#: Every kind of page.
Page = (
    HomePage
    | TagPage
    | PackagePage
    | SpecPage
    | MirrorsPage
    | SearchView
    | ChangesPage
    | ComparePage
    | CoveragePage
    | ReuseView
)


def segment(value: str) -> str:
    """A name as one URL path segment."""
    return quote(value, safe="")


def query_string(filters: Mapping[str, str]) -> str:
    """``?key=value&...`` of the filters a link carries, or "" for none."""
    return "?" + urlencode(filters) if filters else ""


def spec_path(dag_hash: str, *, url: bool = False) -> str:
    """A spec page's file, ``specs/<first two characters>/<hash>.html``: a file, not a
    folder, since a site holds hundreds of thousands of them (a folder each would double
    the cost of writing them; one folder for all would triple the cost of creating a
    file). With ``url``, as a URL."""
    if not url or is_dag_hash(dag_hash):  # a DAG hash has nothing to quote
        return f"specs/{dag_hash[:2]}/{dag_hash}.html"
    return f"specs/{segment(dag_hash[:2])}/{segment(dag_hash)}.html"


def spec_url(dag_hash: str) -> str:
    """A spec page's path from the site's top, as a URL."""
    return spec_path(dag_hash, url=True)


def json_path(html_path: str) -> str:
    """The JSON twin of an HTML page: ``index.json`` beside ``index.html``,
    ``<hash>.json`` beside ``<hash>.html``."""
    return html_path.removesuffix(".html") + ".json"


def root_of(path: str) -> str:
    """The relative link from the page at ``path`` back to the site's top."""
    return "../" * path.count("/")


def page_path(page: Page, *, url: bool = False) -> str:
    """The page's HTML file inside the site (its JSON twin: :func:`json_path`); with
    ``url``, the same path as a URL (names percent-encoded)."""
    name = segment if url else str
    if isinstance(page, HomePage):
        return "index.html"
    if isinstance(page, TagPage):
        return f"tags/{name(page.tag.name)}/index.html"
    if isinstance(page, PackagePage):
        return f"tags/{name(page.tag)}/packages/{name(page.name)}/index.html"
    if isinstance(page, SpecPage):
        return spec_path(page.spec.hash, url=url)
    if isinstance(page, SearchView):
        return "search.html"
    if isinstance(page, ReuseView):
        return "reuse.html"
    if isinstance(page, ChangesPage):
        return f"tags/{name(page.tag)}/changes/index.html"
    if isinstance(page, CoveragePage):
        return f"tags/{name(page.tag)}/coverage/index.html"
    if isinstance(page, ComparePage):
        return "diff.html" if page.live else f"tags/{name(page.new)}/compare/{name(page.old_tag)}/index.html"
    return "mirrors/index.html"


@lru_cache(maxsize=65536)
def has_page(name: str) -> bool:
    """Whether a tag or package of this name has a page: a name that cannot be a folder
    name has none, and is shown as text, not as a link that leads nowhere."""
    return name_problem(name) is None


class PageLinks:
    """Which tags and packages have a page to link to: every name that can be a folder
    name (:func:`has_page`) but those a static site gives no folder, as they are one
    folder with another where case is ignored (:mod:`.folder_names`). Made once per
    build (:func:`page_links`) and handed to every page it renders; the server, which
    answers every name, links them all (:data:`EVERY_PAGE`)."""

    __slots__ = ("_packages", "_tags", "folded", "stamp")

    def __init__(
        self, tags: Iterable[str] = (), packages: Mapping[str, Iterable[str]] | None = None, *, folded: bool = True
    ) -> None:
        #: whether names that are one folder where case is ignored lose their page (a
        #: static site's); the server answers each
        self.folded = folded
        self._tags = frozenset(tags)
        self._packages = {tag: frozenset(names) for tag, names in (packages or {}).items() if names}
        listed = sorted([tag, sorted(names)] for tag, names in self._packages.items())
        digest = hashlib.sha256(repr([sorted(self._tags), listed]).encode()).hexdigest()
        #: A line for the site's record of what made its pages: a page's links follow
        #: from its data and these names, so another line means every page rendered again.
        self.stamp = f"no page: {digest}\n".encode()

    def tag(self, name: str) -> bool:
        """Whether the tag ``name`` has its folder (``tags/<name>/``)."""
        return has_page(name) and name not in self._tags

    def package(self, tag: str, name: str) -> bool:
        """Whether the package ``name`` has its page in ``tag``."""
        return self.tag(tag) and has_page(name) and name not in self._packages.get(tag, ())

    def without_page(self, names: Iterable[str]) -> set[str]:
        """Of every package name of one tag (a page that lists them all: its coverage
        page), those with no page there, told from the names alone (as
        :func:`.folder_names.package_clashes`): what a site's worker that was handed no
        build's :class:`PageLinks` (:data:`SITE_PAGES`) can tell too."""
        listed = set(names)
        paged = {name for name in listed if has_page(name)}
        return (listed - paged).union(folder_clashes(paged) if self.folded else ())


#: Every name that can be a folder name linked: what the server answers.
EVERY_PAGE = PageLinks(folded=False)
#: A static site's links where its build's are not at hand (a worker forked before them,
#: which writes no page that links a package but the coverage page's, told from its names).
SITE_PAGES = PageLinks()


def page_links(package_tags: Mapping[str, Sequence[tuple[str, int]]], clashing_tags: Iterable[str]) -> PageLinks:
    """The :class:`PageLinks` of a site build, from :meth:`Catalog.all_package_tags` and
    the tags that get no folder (``Plan.clashing``). A name can clash only if it is not
    its own folder key: the tags asked are only those listing such a name (nearly always
    none, found in one pass of ``str.lower`` over the names)."""
    odd = {tag for name, tags in package_tags.items() if folder_key(name) != name for tag, _ in tags}
    return PageLinks(clashing_tags, {tag: package_clashes(package_tags, tag) for tag in odd})


def with_pages(packages: dict[str, list[str]]) -> dict[str, list[str]]:
    """``{package: [tags]}`` for the search box, which links each package in each tag:
    only the names that have a page."""
    tags_clashing = folder_clashes({tag for tags in packages.values() for tag in tags})
    linked = {
        name: [tag for tag in tags if has_page(tag) and tag not in tags_clashing]
        for name, tags in packages.items()
        if has_page(name)
    }
    # Of names that are one folder where case is ignored, only one has a page in a tag.
    in_tag: dict[str, list[str]] = {}
    for name, tags in linked.items():
        for tag in tags:
            in_tag.setdefault(tag, []).append(name)
    for tag, names in in_tag.items():
        for name in folder_clashes(names):
            linked[name].remove(tag)
    return {name: tags for name, tags in linked.items() if tags}
