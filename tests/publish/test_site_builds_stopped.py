"""A site build that a sync overtakes, or one stopped without its record, must leave the
next build a site equal to a full build; and a package page is written only after the
spec pages it links to (a build stopped between the two leaves no broken link). Small
catalogs of ``test_site_builds_incremental``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish import site_delta
from cachedex.publish.site import write_site
from cachedex.publish.site_delta import BUILDING
from cachedex.publish.site_tasks import Task, write_task
from cachedex.publish.sitefiles import SiteWriter
from cachedex.values import Dependency
from tests.helpers import file_bytes, record, write_tag
from tests.publish.test_site_builds_incremental import _a_dependency_is_held_alone, _first, _hash, _specs, _sync


def test_a_sync_committed_during_a_build_has_the_build_made_again(tmp_path: Path) -> None:
    """The build reads one snapshot; a sync committing meanwhile (another process) makes
    its pages one state behind: it is not complete, and the next attempt catches up."""
    catalog, site = _first(tmp_path)
    synced: list[str] = []

    def another_process_syncs(message: str) -> None:
        if message.startswith("reading what the pages are made from") and not synced:
            synced.append(message)
            with Catalog(tmp_path / "c.sqlite") as other:
                _sync(other, "t", _specs(range(7)))  # package 6 comes

    with catalog:
        _sync(catalog, "t", [r for r in _specs(range(6)) if r.name != "p5"])
        after = write_site(catalog, site, workers=1, on_progress=another_process_syncs)
        assert synced and after.complete
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert (site / "tags/t/packages/p6/index.html").is_file()
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")


def test_a_build_stopped_without_naming_its_pages_trusts_no_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no record to say which specs' pages came or went (:func:`.site_delta.relinked`),
    a page linking one is rendered again though its twin is unchanged: here package 1's
    second spec, whose dependency (held alone, unlisted) lost its page."""
    monkeypatch.setattr(site_delta, "MOST", 1.0)
    catalog, site = _first(tmp_path)
    with catalog:
        _a_dependency_is_held_alone(catalog)
        assert write_site(catalog, site).changed_only
        _sync(catalog, "t", [r for r in _specs(range(6)) if r.hash != _hash("s-p1-1")])
        (site / BUILDING).write_bytes(b"")  # as a build killed while writing leaves it
        after = write_site(catalog, site)
        assert after.complete and not after.changed_only
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")


def test_a_package_page_waits_for_the_spec_pages_it_links_to(tmp_path: Path) -> None:
    """A worker writing package pages while the spec pages are still being written
    (``linked_only``) leaves for later one linking a spec whose page is not there yet,
    even when its other specs' pages are."""
    catalog, site = _first(tmp_path)
    new = record(_hash("p3-new"), "p3", version="3.0", dependencies=(Dependency(_hash("s-p0-1"), "p0", 2, ""),))
    package = site / "tags/t/packages/p3/index.json"
    before = package.read_bytes()
    with catalog:
        _sync(catalog, "t", [*_specs(range(6)), new])
        task = Task(catalog.path, site, tags=["t"], only={"t": ["p3"]}, linked_only=True)
        writer = SiteWriter(site)
        try:
            deferred = write_task(catalog, writer, task)
        finally:
            writer.close()
    assert deferred == {"t": ["p3"]}
    assert package.read_bytes() == before


def test_pages_a_build_a_sync_overtook_wrote_are_written_again(tmp_path: Path) -> None:
    """A stack of ``t`` lists package 3's first spec; the build of that is overtaken by a
    sync that empties the stack again: the next attempt's own changes (none since the
    record, and no sync of the tag's root named package 3) do not reach the package
    pages the overtaken one wrote, which ``BUILDING`` names."""
    catalog, site = _first(tmp_path)
    spec = _hash("s-p3-1")
    synced: list[str] = []

    def another_process_syncs(message: str) -> None:
        if message.startswith("reading what the pages are made from") and not synced:
            synced.append(message)
            with Catalog(tmp_path / "c.sqlite") as other:
                write_tag(other, "t", [], members={}, stack="e4s", checksum="empty")

    with catalog:
        write_tag(catalog, "t", [], members={spec: True}, stack="e4s", checksum="p3")
        after = write_site(catalog, site, workers=1, on_progress=another_process_syncs)
        assert synced and after.complete
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")
