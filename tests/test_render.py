"""HTML rendering: our Jinja environment gives exactly the pages stock Jinja gives."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from jinja2 import Environment

from cachedex import render as rendering
from cachedex.catalog import Catalog
from cachedex.pages import home_page, mirrors_page, package_pages, spec_page, tag_page

from .conftest import Demo
from .test_site import evil_catalog


def _pages(catalog: Catalog) -> list[rendering.Page]:
    pages: list[rendering.Page] = [home_page(catalog), mirrors_page(catalog)]
    for tag in catalog.tag_names():
        pages.append(tag_page(catalog, tag))
        pages.extend(itertools.islice(package_pages(catalog, tag), 200))
    pages.extend(spec_page(catalog, dag_hash) for dag_hash in sorted(catalog.held_hashes())[:300])
    return pages


def _stock_environment() -> Environment:
    """Jinja as it comes, with our settings and filters: markupsafe's own escape."""
    ours = rendering._env
    stock = Environment(loader=ours.loader, autoescape=ours.autoescape, auto_reload=False,
                        undefined=ours.undefined, trim_blocks=True, lstrip_blocks=True)
    stock.filters.update(ours.filters)
    return stock


@pytest.mark.parametrize("source", ["demo", "hostile values"])
def test_pages_equal_what_stock_jinja_renders(source: str, demo_run: Demo, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = (Catalog(demo_run.catalog, readonly=True) if source == "demo"
               else evil_catalog(tmp_path / "evil.sqlite"))
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


def test_output_expressions_skip_making_markup() -> None:
    # The speed of a 250,000-page site rests on this hook; a Jinja that renamed it
    # would render the same pages through markupsafe's escape, and this would say so.
    code = rendering._env.compile("{{ a }}{{ b.c }}", raw=True)
    assert code.count("environment.escape_output(") == 2 and "escape(" not in code.replace("escape_output(", "")


@pytest.mark.parametrize(("value", "expected"), [
    ("<a href='x'>&\"", "&lt;a href=&#39;x&#39;&gt;&amp;&#34;"),
    (12, "12"),
    (None, "None"),
    (rendering.Markup("<b>kept</b>"), "<b>kept</b>"),
])
def test_escape_output_gives_markupsafes_text(value: object, expected: str) -> None:
    assert rendering._escape_output(value) == expected == str(rendering.escape(value))
