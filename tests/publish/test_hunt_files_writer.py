"""Mutation-hunt tests for cachedex.publish.sitefiles, through a first build of a small
catalog: which gzipped copies every tag page has, and when a package page may be written
(its spec pages exist)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from msgspec.structs import replace

from cachedex.publish.package_pages import package_page
from cachedex.publish.render import COLUMNS_FILE
from cachedex.publish.sitefiles import spec_pages_exist
from tests.publish.test_site_builds_incremental import _first


def test_every_tag_page_has_gzipped_twin_and_columns_however_short(tmp_path: Path) -> None:
    catalog, site = _first(tmp_path)
    catalog.close()
    tag_pages = [folder for folder in (site / "tags").iterdir() if (folder / "index.html").is_file()]
    assert sorted(folder.name for folder in tag_pages) == ["t", "u"]
    for folder in tag_pages:
        for name in ("index.json", COLUMNS_FILE):
            assert gzip.decompress((folder / f"{name}.gz").read_bytes()) == (folder / name).read_bytes()
    # A short twin of another page has none.
    spec_twins = list((site / "specs").rglob("*.json"))
    assert spec_twins and not any(os.path.exists(f"{twin}.gz") for twin in spec_twins)


def test_a_package_page_waits_for_its_spec_pages_but_not_for_a_hash_that_never_has_one(tmp_path: Path) -> None:
    catalog, site = _first(tmp_path)
    with catalog:
        page = package_page(catalog, "t", "p1")
    assert spec_pages_exist(site, page)
    # A hash an old catalog may hold that is no DAG hash: no site has its page.
    odd = replace(page, specs=[*page.specs, replace(page.specs[0], hash="not/a/dag/hash")])
    assert spec_pages_exist(site, odd)
    missing = site / "specs" / page.specs[0].hash[:2] / f"{page.specs[0].hash}.html"
    missing.unlink()
    assert not spec_pages_exist(site, page)
