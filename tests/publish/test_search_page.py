"""The search page's view: its pages and the variants that tell a package's results apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.errors import BadQuery
from cachedex.publish.search_page import MAX_PAGE, search_view
from tests.helpers import record, write_tag


def test_two_results_of_a_package_show_the_variants_that_differ(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, variants=("+shared",)), record("b" * 32, variants=("~shared",))])
        view = search_view(catalog, {"q": "zlib"})
    assert view.total == 2 and dict(view.differing) == {"zlib": ("shared",)}


def test_the_last_page_number_is_taken_and_the_next_refused(small_catalog: Catalog) -> None:
    assert search_view(small_catalog, {"q": "zlib", "page": str(MAX_PAGE)}).total == 1
    with pytest.raises(BadQuery, match=f"between 1 and {MAX_PAGE}, got"):
        search_view(small_catalog, {"q": "zlib", "page": str(MAX_PAGE + 1)})
