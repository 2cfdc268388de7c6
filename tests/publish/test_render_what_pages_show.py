"""What rendered pages show a reader, on small real catalogs: the raw spec JSON, the
mirrors with and without a binary, the version × architecture table, the dependents
search, the home page's groups, the search pager, a static site's ``live.json`` and
links to tags whose names need quoting."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from cachedex.catalog import Catalog
from cachedex.publish.package_pages import package_page
from cachedex.publish.pages import home_page, spec_page
from cachedex.publish.render import render
from cachedex.publish.search_page import PER_PAGE, search_view
from cachedex.publish.site import write_site
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import record, replace_mirror, write_tag


def test_the_raw_spec_json_on_a_spec_page_reads_as_the_node_itself(tmp_path: Path) -> None:
    """The node's ``<``, ``>`` and ``&`` are escaped once: a reader (and a copy) sees the
    JSON the mirror holds, not ``&lt;`` where it says ``<``."""
    node = b'{"name": "zlib", "variants": {"note": "a<b && c>d &lt; x"}}'
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, node=node)])
        text = render(spec_page(catalog, "a" * 32))
    (shown,) = re.findall(r'<pre class="json" tabindex="0">(.*?)</pre>', text, flags=re.S)
    assert "<" not in shown and ">" not in shown  # nothing read as markup
    assert json.loads(html.unescape(shown)) == json.loads(node)


def _holder_lists(text: str) -> dict[str, list[str]]:
    """A spec page's "Binary in" / "No binary in" rows: each item's text, links and
    download links left out."""
    rows = dict(re.findall(r'<dt>([^<]+)</dt><dd><ul class="holders[^"]*">(.*?)</ul></dd>', text))
    return {
        said: [re.sub(r"<[^>]+>", "", item).split(" &middot; ")[0] for item in re.findall(r"<li>(.*?)</li>", items)]
        for said, items in rows.items()
    }


def test_a_spec_with_a_binary_in_one_mirror_and_an_entry_in_another_is_listed_once_each(tmp_path: Path) -> None:
    """ "No binary in" names only the mirrors whose index names the spec without its
    binary, not those that hold it too."""
    dag_hash = "a" * 32
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record(dag_hash)], {})
            replace_mirror(writer, "root", {dag_hash: True}, checksum="root")
            replace_mirror(writer, "s", {dag_hash: False}, url="/m/s", checksum="s")
        text = render(spec_page(catalog, dag_hash))
    assert _holder_lists(text) == {"Binary in": ["t / root"], "No binary in": ["t / s"]}


def _bottle_table(text: str) -> dict[str, dict[str, str]]:
    """A package page's version × architecture table: {version: {column header: mark}}, each mark
    as said to a screen reader ("yes", "none") or shown ("✓ 2")."""
    (table,) = re.findall(r'<table class="coverage">(.*?)</table>', text, flags=re.S)
    headers = re.findall(r'<th scope="col" class="num">(.*?)</th>', table)
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', table)
    table_cells: dict[str, dict[str, str]] = {}
    for version, cells in rows:
        found = re.findall(r'<td class="num">(.*?)</td>', cells)
        said = [
            next(
                (m for m in ("yes", "none") if f'aria-label="{m}"' in cell),
                html.unescape(re.sub(r"<[^>]+>", "", cell)).strip(),
            )
            for cell in found
        ]
        table_cells[version] = dict(zip(headers, said, strict=True))
    return table_cells


def test_a_package_page_marks_each_version_under_the_architecture_it_was_built_for(tmp_path: Path) -> None:
    specs = [
        record("a" * 32, version="1.3.1", target="x86_64_v3"),
        record("b" * 32, version="1.2.13", target="aarch64"),
        record("c" * 32, version="1.2.13", target="aarch64", variants=("~shared",)),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        text = render(package_page(catalog, "t", "zlib"))
    arm, x86 = "linux-ubuntu24.04-aarch64", "linux-ubuntu24.04-x86_64_v3"
    assert _bottle_table(text) == {"1.3.1": {arm: "none", x86: "yes"}, "1.2.13": {arm: "\u2713 2", x86: "none"}}


def test_a_spec_linked_by_one_dependent_and_built_with_by_another_offers_the_dependents_search(
    tmp_path: Path,
) -> None:
    """A ``^/hash`` search finds the dependents that link or run a spec: one such
    dependent among build-only ones is enough for the page to offer it."""
    zlib = record("z" * 32, "zlib")
    linking = record("c" * 32, "cmake", dependencies=(Dependency("z" * 32, "zlib", DEPTYPE_BITS["link"], ""),))
    building = record("n" * 32, "ninja", dependencies=(Dependency("z" * 32, "zlib", DEPTYPE_BITS["build"], ""),))
    only_building = record("p" * 32, "pigz", dependencies=(Dependency("y" * 32, "bzip2", DEPTYPE_BITS["build"], ""),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [zlib, linking, building, record("y" * 32, "bzip2"), only_building])
        mixed = render(spec_page(catalog, "z" * 32))
        build_only = render(spec_page(catalog, "y" * 32))

    def offered(text: str) -> tuple[str, str]:
        (found,) = re.findall(r'<h2 id="dependents" data-count="(\d+)" data-link-run="(\d)">', text)
        return found

    assert offered(mixed) == ("2", "1")
    assert offered(build_only) == ("1", "0")  # the one dependent only builds with it


def test_the_home_page_groups_tags_under_branches_releases_and_snapshots(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        for n, tag in enumerate(["develop", "v1.0.2", "develop-2026-11-08"]):
            write_tag(catalog, tag, [record(str(n) * 32)], checksum=tag)
        text = render(home_page(catalog))
    groups = re.findall(r'<tr class="group"><th scope="rowgroup" colspan="6">(.*?)</th></tr>', text)
    assert groups == ["Branches", "Releases", "Snapshots"]


def _pager(text: str) -> list[str]:
    """The search pager's items: page numbers, "…", and the current page as ``[n]``."""
    (nav,) = re.findall(r'<a rel="prev"[^>]*>&larr; previous</a>(.*?)<a rel="next"', text, flags=re.S)
    items = re.findall(
        r'<span aria-current="page">(\d+)</span>|<a href="([^"]*)">(\d+)</a>|<span>(&hellip;)</span>', nav
    )
    shown = []
    for current, href, number, gap in items:
        if current:
            shown.append(f"[{current}]")
        elif gap:
            shown.append("…")
        else:
            assert html.unescape(href) == f"search.html?q=zlib&page={number}"  # no empty tag= or stack=
            shown.append(number)
    return shown


def test_the_search_pager_shows_the_ends_and_two_pages_either_side_of_the_current_one(tmp_path: Path) -> None:
    specs = [record(f"{n:032d}", variants=(f"n={n}",)) for n in range(9 * PER_PAGE + 1)]  # 10 pages
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        shown = {n: _pager(render(search_view(catalog, {"q": "zlib", "page": str(n)}))) for n in (2, 5, 9)}
    assert shown == {
        2: ["1", "[2]", "3", "4", "…", "10"],
        5: ["1", "…", "3", "4", "[5]", "6", "7", "…", "10"],
        9: ["1", "…", "7", "8", "[9]", "10"],
    }


def test_a_static_site_says_it_is_not_live(tmp_path: Path) -> None:
    """The pages' script reads ``live.json`` to offer what only the server answers: a
    static copy that said otherwise would offer links that 404."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        site = write_site(catalog, tmp_path / "site")
    assert json.loads((site.outdir / "live.json").read_bytes()) == {"live": False}


def test_a_spec_page_links_a_tag_whose_name_has_a_hash_sign_to_its_folder(tmp_path: Path) -> None:
    """A tag written before labels were checked (``t#1``): its link on a spec page is
    percent-encoded, or it would stop at the ``#`` and lead to ``tags/t``."""
    tag = "t#1?x"
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, tag, [record("a" * 32)])
        text = render(spec_page(catalog, "a" * 32))
        site = write_site(catalog, tmp_path / "site")
    (href,) = re.findall(r'<dd><ul class="holders"><li><a href="([^"]*)">', text)
    link = urlsplit(html.unescape(href))
    assert not link.fragment and not link.query
    assert link.path == "../../tags/t%231%3Fx/index.html"
    spec_folder = site.outdir / "specs" / "aa"
    assert (spec_folder / unquote(link.path)).resolve() == (site.outdir / "tags" / tag / "index.html").resolve()
    assert (site.outdir / "tags" / tag / "index.html").is_file()


def test_a_search_finding_nothing_links_its_package_alone_without_an_empty_scope(tmp_path: Path) -> None:
    """ "search zlib alone" keeps the scope chosen, and names none when none was: no
    ``tag=`` with nothing after it."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        unscoped = render(search_view(catalog, {"q": "zlib@9.9"}))
        scoped = render(search_view(catalog, {"q": "zlib@9.9", "tag": "t"}))

    def alone(text: str) -> str:
        (href,) = re.findall(r'<a class="name-only" href="([^"]*)">', text)
        return html.unescape(href)

    assert alone(unscoped) == "search.html?q=zlib"
    assert alone(scoped) == "search.html?q=zlib&tag=t"
