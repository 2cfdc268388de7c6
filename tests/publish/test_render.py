"""HTML rendering: our Jinja environment gives exactly the pages stock Jinja gives."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from jinja2 import Environment

from cachedex.catalog import Catalog, Edge
from cachedex.publish import edge_lists
from cachedex.publish import render as rendering
from cachedex.publish._jinja_fast import escape_output, escape_text
from cachedex.publish.pages import home_page, mirrors_page, package_pages, spec_page, tag_page
from cachedex.values import page_visible
from tests.helpers import Demo, evil_catalog


def _pages(catalog: Catalog) -> list[rendering.Page]:
    pages: list[rendering.Page] = [home_page(catalog), mirrors_page(catalog)]
    for tag in catalog.tag_names():
        pages.append(tag_page(catalog, tag))
        pages.extend(itertools.islice(package_pages(catalog, tag), 200))
    pages.extend(spec_page(catalog, dag_hash) for dag_hash in sorted(catalog.held_hashes())[:300])
    return pages


def _stock_environment() -> Environment:
    """Jinja as it comes (markupsafe's own escape, Jinja's own filters), with our
    settings and the filters Jinja does not have, and what would hide or reorder text
    written as escapes (``page_visible``) before it escapes a string."""
    ours = rendering._env
    stock = Environment(
        loader=ours.loader,
        autoescape=ours.autoescape,
        finalize=lambda value: page_visible(value) if type(value) is str else value,
        auto_reload=False,
        undefined=ours.undefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    stock.filters.update({name: ours.filters[name] for name in ours.filters.keys() - stock.filters.keys()})
    return stock


@pytest.mark.parametrize("source", ["demo", "hostile values"])
def test_pages_equal_what_stock_jinja_renders(
    source: str, demo_run: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = Catalog(demo_run.catalog, readonly=True) if source == "demo" else evil_catalog(tmp_path / "evil.sqlite")
    with catalog:
        pages = _pages(catalog)
    ours = [rendering.render(page) for page in pages]
    ours.append(rendering.render_not_found("no <such> page"))
    monkeypatch.setattr(rendering, "_env", _stock_environment())
    stock = [rendering.render(page) for page in pages]
    stock.append(rendering.render_not_found("no <such> page"))
    assert len(ours) > (500 if source == "demo" else 5)
    for mine, theirs in zip(ours, stock, strict=True):
        assert mine == theirs
    if source == "hostile values":
        assert any("note=&lt;script&gt;alert(1)&lt;/script&gt;" in page for page in ours)
        assert any("label=\\u202egnp.exe" in page for page in ours)
        assert not any("\u202e" in page for page in ours)  # (its dependency's virtuals too)


def test_output_expressions_skip_making_markup() -> None:
    # The speed of a 250,000-page site rests on this hook; a Jinja that renamed it
    # would render the same pages through markupsafe's escape, and this would say so.
    code = rendering._env.compile("{{ a }}{{ b.c }}", raw=True)
    assert code.count("environment.escape_output(") == 2 and "escape(" not in code.replace("escape_output(", "")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("<a href='x'>&\"", "&lt;a href=&#39;x&#39;&gt;&amp;&#34;"),
        (12, "12"),
        (None, "None"),
        (rendering.Markup("<b>kept</b>"), "<b>kept</b>"),
        ("café\n\t", "café\n\t"),
    ],
)
def test_escape_output_gives_markupsafes_text(value: object, expected: str) -> None:
    assert escape_output(value) == expected == str(rendering.escape(value))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("label=\u202egnp.exe <b>", "label=\\u202egnp.exe &lt;b&gt;"),  # a right-to-left override
        ("zero\u200bwidth\u2066", "zero\\u200bwidth\\u2066"),
        ("\x85next line\n", "\\x85next line\n"),  # (a page lays out its own line breaks)
    ],
)
def test_what_would_hide_or_reorder_text_is_written_as_escapes(value: str, expected: str) -> None:
    assert escape_output(value) == expected == escape_text(value)


def _edge_hashes(html: str) -> list[list[str]]:
    """The spec hashes each edge list of a spec page links to, list by list."""
    lists = re.findall(r'<ul class="edges(?: grouped)?">\n(.*?)\n</ul>', html, flags=re.S)
    return [re.findall(r'<a href="\.\./\.\./specs/../([a-z0-9]{32})\.html">', found) for found in lists]


def test_spec_pages_list_every_edge_in_order(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        pages = [spec_page(catalog, dag_hash) for dag_hash in sorted(catalog.held_hashes())]
    checked = 0
    for page in pages:
        html = rendering.render(page)
        expected = [
            [edge.hash for edge in edges[: edge_lists.EDGE_ROWS]]
            for edges in (page.dependencies, page.closure, page.dependents)
        ]
        assert _edge_hashes(html) == expected
        checked += sum(map(len, expected))
    assert checked > 1000


@pytest.mark.parametrize(
    ("template", "value"),
    [
        ("{{ v | join(', ') }}", ("a<b", "c&d")),
        ("{{ v | join(', ') }}", ["a<b", "c&d"]),  # a list: Jinja's own filter
        ("{{ v | join('<br>') }}", (rendering.Markup("<i>kept</i>"), "<b>")),
        ("{{ v | join }}", (1, "x<")),
        ("{{ v | join(', ', attribute='name') }}", (Edge("h" * 32, "a<b", "1", True, None),)),
        ("{{ v | join(', ') }}", ()),
    ],
)
def test_join_gives_jinjas_text(template: str, value: object) -> None:
    assert rendering._env.from_string(template).render(v=value) == _stock_environment().from_string(template).render(
        v=value
    )


def test_a_spec_page_tells_the_mirrors_with_its_binary_from_those_without(demo_run: Demo) -> None:
    """A mirror whose index names a spec without its binary (a dependency, an external)
    does not hold it: "Binary in" lists the mirrors with it, "No binary in" the others."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        pages = [spec_page(catalog, dag_hash) for dag_hash in sorted(catalog.held_hashes())]
    seen = set()
    for page in pages:
        html = rendering.render(page)
        rows = dict(re.findall(r'<dt>([^<]+)</dt><dd><ul class="holders[^"]*">(.*?)</ul></dd>', html))
        expected = {
            said: [f"{h.tag} / {h.stack}" for h in page.holders if h.listed == listed]
            for listed, said in ((True, "Binary in"), (False, "No binary in"))
        }
        expected = {said: found for said, found in expected.items() if found}
        assert "Held by" not in rows and rows.keys() == expected.keys(), page.spec.hash
        for said, found in expected.items():
            items = [re.sub(r"<[^>]+>", "", item) for item in re.findall(r"<li>(.*?)</li>", rows[said])]
            assert [item.split(" &middot; ")[0] for item in items] == found, (page.spec.hash, said)
        seen.add(tuple(expected))
    assert {("Binary in",), ("No binary in",)} <= seen  # both kinds of spec are in the demo


def test_an_asset_s_name_changes_with_its_text() -> None:
    """Browsers keep an asset for a year (immutable), and a version number is kept while
    its assets change until it is tagged: the name carries the text's digest."""
    import hashlib

    from cachedex import __version__
    from cachedex.publish.render import ASSETS, asset_text

    for kind, name in ASSETS.items():
        digest = hashlib.sha256(asset_text(kind)).hexdigest()[:10]
        assert name.startswith("static/cachedex") and name.endswith(
            f"-{__version__}-{digest}.{name.rpartition('.')[2]}"
        )
    assert len(set(ASSETS.values())) == 3
