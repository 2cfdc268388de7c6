"""A static site links a tag's folder or a package's page only if it wrote that page.

Of names that are one folder where case is ignored (``Zlib`` and ``zlib``, tags ``V``
and ``v``), only the lowercase one gets a page (:mod:`cachedex.publish.folder_names`).
The tag page and the search box named the others as text, but spec pages, package
pages, coverage pages and the home page still linked them: a 404, or, where case is
ignored, the other name's page."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from cachedex.catalog import Catalog
from cachedex.publish import site as site_module
from cachedex.publish.serve import create_app
from cachedex.publish.site import write_site
from cachedex.publish.urls import page_links
from tests.helpers import file_bytes, record, write_tag
from tests.publish.test_serve import get

ZLIB, BIG_ZLIB, ZSTD, BIG_ZLIB_IN_U, ONLY_BIG_V = ("a" * 31 + str(n) for n in range(1, 6))

#: The folders no page is written in: they must never be linked.
SKIPPED = ("tags/t/packages/Zlib/", "tags/V/")


def _catalog(path: Path) -> Catalog:
    """Tag ``t``: ``zlib``, ``Zlib`` (one folder with it: no page) and ``zstd``; tag
    ``u``: ``Zlib`` alone (its page there is written); tags ``v`` and ``V`` (one folder:
    ``V`` gets none), ``V`` holding ``zstd`` of ``t`` (and a spec of its own, until its
    second sync)."""
    catalog = Catalog(path)
    write_tag(catalog, "t", [record(ZLIB, "zlib"), record(BIG_ZLIB, "Zlib"), record(ZSTD, "zstd")])
    write_tag(catalog, "u", [record(BIG_ZLIB_IN_U, "Zlib", version="1.2.13")])
    write_tag(catalog, "v", [], members={ZLIB: True})
    write_tag(catalog, "V", [record(ONLY_BIG_V, "hdf5")], members={ZSTD: True, ONLY_BIG_V: True})
    write_tag(catalog, "V", [], members={ZSTD: True}, checksum="y")  # (a change: an entry of changes.atom)
    return catalog


def _written(site: Path) -> set[str]:
    """Every file and folder under ``site``, by its path from there (case kept: a file
    system that ignores case would find ``tags/V`` as ``tags/v``)."""
    found = set()
    for folder, folders, files in os.walk(site):
        top = os.path.relpath(folder, site)
        found.update(os.path.normpath(os.path.join(top, name)) for name in folders + files)
    return found


def _dead_links(site: Path, skipped: tuple[str, ...] = SKIPPED) -> list[str]:
    """Every link of every HTML page (but the 404 page's, which lead from the server's
    top) to a path the site does not hold, or into a folder a ``skipped`` name would have."""
    written = _written(site)
    dead = []
    for page in sorted(site.rglob("*.html")):
        here = page.relative_to(site)
        if str(here) == "404.html":
            continue
        for href in re.findall(r'href="([^"]*)"', page.read_text()):
            link = urlsplit(href.replace("&amp;", "&"))
            if link.scheme or link.netloc or not link.path:  # another site's, or within the page
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(here), unquote(link.path)))
            if target not in written or (target + "/").startswith(skipped):
                dead.append(f"{here} -> {href}")
    return dead


def test_the_names_that_get_no_page_are_found_once_per_build() -> None:
    links = page_links({"zlib": [("t", 1)], "Zlib": [("t", 1), ("u", 1)], "zstd": [("t", 1)]}, {"V"})
    assert links.package("t", "zlib") and links.package("u", "Zlib") and links.tag("v")
    assert not links.package("t", "Zlib") and not links.tag("V") and not links.package("V", "zstd")
    assert links.stamp != page_links({"zlib": [("t", 1)], "Zlib": [("u", 1)]}, {"V"}).stamp


@pytest.mark.parametrize("workers", [1, 2])
def test_no_page_links_a_page_the_site_did_not_write(
    tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zlib's spec page in t linked tags/t/packages/Zlib/, its page in u linked it as
    "the same package in other tags", t's coverage page listed it as a link; the home
    page and spec pages linked tags/V/. In worker processes too, which write shares of
    the spec and package pages."""
    monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)
    site = tmp_path / "site"
    with _catalog(tmp_path / "c.sqlite") as catalog:
        report = write_site(catalog, site, workers=workers)
    assert any(line.startswith("tag 'V': one folder with 'v'") for line in report.skipped), report.skipped
    assert any(line.startswith("t: package 'Zlib': one folder") for line in report.skipped), report.skipped
    assert (site / "tags/u/packages/Zlib/index.html").is_file() and not (site / "tags/V").exists()
    assert _dead_links(site) == []
    # The names are there, as text; and the pages that are there are still linked.
    big_zlib = (site / f"specs/aa/{BIG_ZLIB}.html").read_text()
    assert "<h1>Zlib@1.3.1" in big_zlib and 'href="../../tags/t/index.html"' in big_zlib
    home = (site / "index.html").read_text()
    assert '<td class="name">V</td>' in home and 'href="tags/v/index.html"' in home
    other_tags = (site / "tags/u/packages/Zlib/index.html").read_text()
    assert "The same package in other tags:\nt (1)" in other_tags
    coverage = (site / "tags/t/coverage/index.html").read_text()
    assert '<th scope="row">Zlib</th>' in coverage and 'href="../packages/zlib/index.html#coverage"' in coverage
    feed = (site / "changes.atom").read_text()  # (no page: its entry leads to the top)
    assert "tags/V/" not in feed and re.search(r"<title>V: [^<]*</title>\n<link [^>]*href=\"index.html\"", feed)


def _drop_zlib_from_t(catalog: Catalog) -> None:
    """A sync of ``t`` that finds ``zlib`` gone: ``Zlib`` clashes no more, and has its
    page in ``t``; none of its specs changed."""
    write_tag(catalog, "t", [], members={BIG_ZLIB: True, ZSTD: True}, checksum="y")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_name_that_stops_clashing_is_linked_as_a_full_build_links_it(
    tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages are rendered again only when their data changed: Zlib's spec page and its
    page in u, unchanged, kept their text where a full build links Zlib's page in t, and
    that page was not written (no spec of Zlib changed)."""
    monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)
    with _catalog(tmp_path / "c.sqlite") as catalog:
        write_site(catalog, tmp_path / "site", workers=workers)
        _drop_zlib_from_t(catalog)
        after = write_site(catalog, tmp_path / "site", workers=workers)
        write_site(catalog, tmp_path / "fresh", workers=workers)
    assert after.complete
    built, fresh = _pages(tmp_path / "site"), _pages(tmp_path / "fresh")
    assert [path for path in sorted(built.keys() | fresh.keys()) if built.get(path) != fresh.get(path)] == []
    assert 'href="../../tags/t/packages/Zlib/index.html"' in (tmp_path / f"site/specs/aa/{BIG_ZLIB}.html").read_text()
    assert _dead_links(tmp_path / "site", skipped=("tags/V/",)) == []


def _pages(site: Path) -> dict[str, bytes]:
    """The site's files but its records of what made them."""
    return {path: data for path, data in file_bytes(site).items() if not Path(path).name.startswith(".cachedex-site")}


def test_the_server_links_every_name_it_answers(tmp_path: Path) -> None:
    """The live server answers ``Zlib``'s page beside ``zlib``'s (no folder to share):
    its coverage page links both, as it did before static sites skipped clashing names."""
    _catalog(tmp_path / "c.sqlite").close()
    app = create_app(tmp_path / "c.sqlite")
    page = get(app, "/tags/t/coverage/index.html")
    assert page.status_code == 200
    assert 'href="../packages/Zlib/index.html#coverage"' in page.text
    assert 'href="../packages/zlib/index.html#coverage"' in page.text
    assert get(app, "/tags/t/packages/Zlib/index.html").status_code == 200
