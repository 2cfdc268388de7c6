"""A package's page: its other tags."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.package_pages import package_page
from tests.helpers import record, write_tag


def test_a_package_page_names_the_other_tags_with_the_package_not_its_own(tmp_path: Path) -> None:
    zlib = record("a" * 32)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "develop", [zlib])
        write_tag(catalog, "v1.0", [], members={zlib.hash: True})
        page = package_page(catalog, "develop", "zlib")
    assert [tag for tag, _ in page.other_tags] == ["v1.0"]
