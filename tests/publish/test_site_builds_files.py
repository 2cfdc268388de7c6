"""What a site build leaves on disk besides the pages an incremental build is compared
on: gzipped copies that are gzip files of their twins (and go with them), package feeds
that name their syncs, a full build that restores what it finds missing and leaves no
empty folder behind. Small catalogs of ``test_site_builds_incremental``."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.catalog.history import ChangedSpec, PackageChange
from cachedex.publish import site_delta, sitefiles
from cachedex.publish.feeds import PACKAGE_FEED_ENTRIES, package_feed
from cachedex.publish.site import write_site
from tests.helpers import file_bytes
from tests.publish.test_site_builds_incremental import _first, _hash, _specs, _sync


def _folders(site: Path) -> set[str]:
    return {str(p.relative_to(site)) for p in site.rglob("*") if p.is_dir()}


def _package_2_leaves(catalog: Catalog) -> None:
    _sync(catalog, "t", [r for r in _specs(range(6)) if r.name != "p2"])
    _sync(catalog, "u", [r for r in _specs(range(3)) if r.name != "p2"])


def _package_2_leaves_and_the_site_follows(catalog: Catalog, site: Path, fresh: Path) -> None:
    """Package 2 leaves every tag; the site built since (changed pages only) equals a
    full build into ``fresh``."""
    with catalog:
        _package_2_leaves(catalog)
        after = write_site(catalog, site)
        assert after.complete and after.changed_only
        write_site(catalog, fresh, workers=1)
    assert file_bytes(site) == file_bytes(fresh)


def _spec_twin(site: Path, seed: str) -> Path:
    dag_hash = _hash(seed)
    return site / "specs" / dag_hash[:2] / f"{dag_hash}.json"


def test_every_gzipped_copy_is_a_gzip_file_of_the_file_beside_it(tmp_path: Path) -> None:
    """A client (or a static host's ``gzip_static``) reads ``x.gz`` as gzip of ``x``: a
    zlib or raw deflate stream is a broken page for it."""
    _, site = _first(tmp_path)
    copies = sorted(site.rglob("*.gz"))
    assert copies  # (every tag page's twin and columns have one)
    for copy in copies:
        data = copy.read_bytes()
        assert data[:2] == b"\x1f\x8b", copy
        assert gzip.decompress(data) == copy.with_suffix("").read_bytes(), copy


def test_the_gzipped_copies_of_a_spec_that_leaves_go_with_its_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every twin long enough to have a copy: a build after package 2 leaves every tag
    removes its spec pages' ``.json.gz`` too, as a full build never wrote them."""
    monkeypatch.setattr(site_delta, "MOST", 1.0)  # (a small catalog's change reaches most of it)
    monkeypatch.setattr(sitefiles, "GZIP_TWIN", 1)
    catalog, site = _first(tmp_path)
    gone = _spec_twin(site, "s-p2-2")
    assert gone.with_suffix(".json.gz").is_file()
    _package_2_leaves_and_the_site_follows(catalog, site, tmp_path / "fresh")
    assert not gone.with_suffix(".json.gz").exists()


def test_a_twin_that_shrinks_below_the_gzip_size_loses_its_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hub's twin lists its dependents: long enough for a copy, then, with package 2
    gone, not; a stale copy would serve the old list to clients asking for gzip."""
    monkeypatch.setattr(site_delta, "MOST", 1.0)
    measured = tmp_path / "measured"
    measured.mkdir()
    probe_catalog, probe = _first(measured)
    with probe_catalog:
        longer = len(_spec_twin(probe, "s-p0-1").read_bytes())
        _package_2_leaves(probe_catalog)
        write_site(probe_catalog, probe)
        shorter = len(_spec_twin(probe, "s-p0-1").read_bytes())
    assert longer - shorter > 50  # (times in the twin may differ by a digit)
    monkeypatch.setattr(sitefiles, "GZIP_TWIN", (longer + shorter) // 2)
    catalog, site = _first(tmp_path)
    hub = _spec_twin(site, "s-p0-1")
    assert hub.with_suffix(".json.gz").is_file()
    _package_2_leaves_and_the_site_follows(catalog, site, tmp_path / "fresh")
    assert not hub.with_suffix(".json.gz").exists()


def test_a_package_feed_on_the_site_names_the_sync_that_added_its_specs(tmp_path: Path) -> None:
    catalog, site = _first(tmp_path)
    with catalog:
        _sync(catalog, "t", _specs(range(7)))  # package 6 comes
        assert write_site(catalog, site).changed_only
    feed = (site / "tags/t/packages/p6/changes.atom").read_text()
    assert feed.count("<entry>") == 1
    assert "p6 in t: +2 \u22120 specs" in feed


def test_a_package_feed_holds_its_newest_syncs_up_to_the_limit() -> None:
    """One entry per sync, newest first, as many as :data:`PACKAGE_FEED_ENTRIES`."""
    spec = ChangedSpec("root", 1, "a" * 32, "zlib", "1.0", "gcc@13", "linux", "ubuntu24.04", "x86_64", (), None)
    syncs = range(PACKAGE_FEED_ENTRIES + 5, 0, -1)
    changes = [PackageChange(n, 1_700_000_000.0 + n, spec) for n in syncs]
    feed = package_feed("t", "zlib", changes, None, "o", {}).decode()
    assert feed.count("<entry>") == PACKAGE_FEED_ENTRIES
    assert f"#sync-{PACKAGE_FEED_ENTRIES + 5}" in feed and '#sync-6"' in feed and '#sync-5"' not in feed


def test_a_full_build_puts_back_a_page_deleted_by_hand(tmp_path: Path) -> None:
    """``full`` compares every page even when the site says it shows this very state."""
    catalog, site = _first(tmp_path)
    page = site / "tags/t/packages/p3/index.html"
    kept = page.read_bytes()
    page.unlink()
    with catalog:
        again = write_site(catalog, site, full=True)
    assert again.complete and not again.current
    assert page.read_bytes() == kept


def test_a_full_build_after_specs_leave_leaves_no_empty_folder(tmp_path: Path) -> None:
    """It finds the spec pages to remove by listing ``specs/<ab>``: a folder whose last
    page went goes too, as a build into an empty folder never made it."""
    catalog, site = _first(tmp_path)
    with catalog:
        _package_2_leaves(catalog)
        after = write_site(catalog, site, full=True)
        assert after.complete and not after.changed_only
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")
    assert _folders(site) == _folders(tmp_path / "fresh")
