"""``cachedex site`` records the catalog state it built from: a run over the same state
does nothing, a run after a sync rewrites what changed and ends equal to a full build,
file for file, and ``--full`` compares every page whatever the record says."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.publish.site import write_site
from tests.helpers import Demo, file_bytes, record, write_tag


def test_a_site_follows_the_catalog_and_equals_a_full_build(tmp_path: Path, demo_run: Demo) -> None:
    catalog_path = tmp_path / "c.sqlite"
    shutil.copy(demo_run.catalog, catalog_path)
    site, fresh = tmp_path / "site", tmp_path / "fresh"
    with Catalog(catalog_path) as catalog:
        first = write_site(catalog, site)
        assert first.complete and not first.current and first.written > 0
        again = write_site(catalog, site)
        assert again.current and again.written == again.pages == 0  # nothing read, nothing written
        assert file_bytes(site) == file_bytes(site)  # (the folder is untouched: compared below too)
        # A sync: a new spec in a new tag. The next build is not current, and ends
        # equal to a full build of the same state into an empty folder.
        write_tag(catalog, "v9.9.9", [record("z" * 32, "zlib")])
        after = write_site(catalog, site)
        assert after.complete and not after.current and 0 < after.written < first.written
        assert after.changed_only and after.pages < first.pages  # only what the new tag reaches
        full = write_site(catalog, fresh, full=True)
        assert full.complete and not full.current
    assert file_bytes(site) == file_bytes(fresh)
    # A file removed by hand comes back with --full, not from a run that trusts the record.
    package_page = next((site / "tags" / "v9.9.9" / "packages").rglob("index.html"))
    package_page.unlink()
    runner = CliRunner()
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"catalog: {catalog_path}\ntags: [{{name: develop, url: {tmp_path}/none}}]\n")
    trusting = runner.invoke(main, ["-c", str(config), "site", str(site)])
    assert trusting.exit_code == 0 and "is current" in trusting.output, trusting.output
    assert not package_page.exists()
    checking = runner.invoke(main, ["-c", str(config), "site", str(site), "--full"])
    assert checking.exit_code == 0 and "1 files written" in checking.output, checking.output
    assert file_bytes(site) == file_bytes(fresh)
    assert filecmp.cmp(package_page, fresh / package_page.relative_to(site), shallow=False)


def test_another_compressor_writes_the_gzipped_copies_again(tmp_path: Path, demo_run: Demo) -> None:
    # Another zlib-ng may gzip the same twin into other bytes: a build over a site made
    # with another compressor compares every page, even though the catalog is the same.
    from cachedex.publish import gzipped, render, sitefiles

    catalog_path = tmp_path / "c.sqlite"
    shutil.copy(demo_run.catalog, catalog_path)
    site = tmp_path / "site"
    with Catalog(catalog_path) as catalog:
        write_site(catalog, site)
        copies = sorted(site.rglob("*.json.gz"))
        assert copies
        before = {path: path.read_bytes() for path in copies}
        saved = sitefiles.gzip_bytes, render.COMPRESSOR
        sitefiles.gzip_bytes = lambda data, level=6: gzipped.gzip_bytes(data, 1)  # type: ignore[assignment]
        render.COMPRESSOR = "another zlib-ng"
        render.render_stamp.cache_clear()
        try:
            again = write_site(catalog, site)
        finally:
            sitefiles.gzip_bytes, render.COMPRESSOR = saved  # type: ignore[assignment]
            render.render_stamp.cache_clear()
    assert again.complete and not again.current
    for path in copies:
        assert path.read_bytes() == gzipped.gzip_bytes(path.with_suffix("").read_bytes(), 1) != before[path]


def test_the_render_stamp_follows_the_code_as_well_as_the_templates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages are made in Python too (their edge lists, cells, labels): an upgrade that
    changes only that code, under the same version number, must not leave a site's
    unchanged pages with the old HTML. The stamp of a copy of the package changes with
    one of its modules, and with one of its templates."""
    import importlib.resources

    from cachedex.publish import render

    package = Path(str(importlib.resources.files("cachedex")))
    copy = tmp_path / "cachedex"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    places = {"cachedex": copy, "cachedex.publish": copy / "publish"}
    monkeypatch.setattr(importlib.resources, "files", lambda name: places[name])

    def stamp() -> bytes:
        render.render_stamp.cache_clear()
        return render.render_stamp()

    try:
        first = stamp()
        assert stamp() == first
        module = copy / "publish" / "edge_lists.py"
        module.write_text(module.read_text() + "\n# another release\n")
        second = stamp()
        template = copy / "publish" / "templates" / "spec.html"
        template.write_text(template.read_text() + "\n")
        assert len({first, second, stamp()}) == 3
    finally:
        render.render_stamp.cache_clear()
