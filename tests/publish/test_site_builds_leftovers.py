"""What a site build finds in its folder besides its own pages, and what it does with
it: comparisons no longer asked for and temporary files of killed builds go, a page
replaced by a symlink is written back, a ``specs`` folder deleted by hand is rebuilt,
and folders and symlinks it did not make stay. Small catalogs of
``test_site_builds_incremental``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachedex.publish import site as site_module
from cachedex.publish import site_delta
from cachedex.publish.site import write_site
from tests.helpers import file_bytes, record
from tests.publish.test_site_builds_incremental import _first, _hash, _specs, _sync

#: A process id no process has (as a killed build's temporary file names it).
_GONE_PID = 4194304999


def test_the_search_box_lists_every_package_and_its_tags(tmp_path: Path) -> None:
    _, site = _first(tmp_path)
    listed = json.loads((site / "packages.json").read_bytes())
    assert listed == {f"p{n}": ["t", "u"] if n < 3 else ["t"] for n in range(6)}


def test_a_comparison_no_longer_asked_for_goes(tmp_path: Path) -> None:
    catalog, site = _first(tmp_path)
    with catalog:
        asked = write_site(catalog, site, compare=[("u", "t")])
        assert asked.complete and (site / "tags/t/compare/u/index.html").is_file()
        again = write_site(catalog, site)
        assert again.complete
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert not (site / "tags/t/compare").exists()
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")


def test_temporary_files_a_killed_build_left_in_package_folders_go(tmp_path: Path) -> None:
    """``tags/<tag>/packages/<name>`` is three folders down, and a package's folder holds
    its feed (``changes.atom``) too."""
    catalog, site = _first(tmp_path)
    folder = site / "tags/t/packages/p3"
    left = [folder / f".index.html.{_GONE_PID}.tmp", folder / f".changes.atom.{_GONE_PID}.tmp"]
    for path in left:
        path.write_bytes(b"half a file")
    with catalog:
        assert write_site(catalog, site, full=True).complete
    assert [path for path in left if path.exists()] == []


def test_a_page_replaced_by_a_symlink_is_written_back_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Package 4's page is reached by a change that leaves its twin as it was (a spec
    comes and leaves between two builds): its twin vouches for a file, not a link to
    whatever the link names; that stays as it was."""
    monkeypatch.setattr(site_delta, "MOST", 1.0)
    catalog, site = _first(tmp_path)
    elsewhere = tmp_path / "elsewhere.html"
    elsewhere.write_bytes(b"not a page")
    page = site / "tags/t/packages/p4/index.html"
    page.unlink()
    page.symlink_to(elsewhere)
    with catalog:
        _sync(catalog, "t", [*_specs(range(6)), record(_hash("extra"), "p4", version="9.9")])
        _sync(catalog, "t", _specs(range(6)))
        after = write_site(catalog, site)
        assert after.complete and after.changed_only
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert not page.is_symlink() and elsewhere.read_bytes() == b"not a page"
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")


def test_a_specs_folder_deleted_by_hand_is_built_again_by_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its spec pages are staged as a first build's, and so are the package pages
    (workers): they replace the package folders there, one by one. (``full``: the
    site says it shows this very state, and would be left as it is.)"""
    monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)
    catalog, site = _first(tmp_path)
    for path in sorted((site / "specs").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (site / "specs").rmdir()
    with catalog:
        assert write_site(catalog, site, workers=2, full=True).complete
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")


def test_folders_in_tags_that_are_no_tag_s_pages_are_left_alone(tmp_path: Path) -> None:
    """A symlink to a tag's folder, and a folder of someone else's (no JSON twin beside
    its ``index.html``): neither is a page of a tag that left."""
    catalog, site = _first(tmp_path)
    (site / "tags/alias").symlink_to(site / "tags/t")
    notes = site / "tags/notes"
    notes.mkdir()
    (notes / "index.html").write_bytes(b"<p>ours")
    with catalog:
        assert write_site(catalog, site, full=True).complete
    assert (site / "tags/alias").is_symlink() and (site / "tags/t/index.json").is_file()
    assert (notes / "index.html").read_bytes() == b"<p>ours"


def test_a_package_that_comes_to_clash_gives_up_its_folder(tmp_path: Path) -> None:
    """``Pz`` has a page; ``pz`` comes: one folder on a case-insensitive disk, which
    ``pz`` keeps (as a full build says), and the page ``Pz`` had goes."""
    catalog, site = _first(tmp_path)
    upper, lower = record(_hash("upper"), "Pz", version="1.0"), record(_hash("lower"), "pz", version="1.0")
    with catalog:
        _sync(catalog, "t", [*_specs(range(6)), upper])
        assert write_site(catalog, site).complete
        assert (site / "tags/t/packages/Pz/index.html").is_file()
        _sync(catalog, "t", [*_specs(range(6)), upper, lower])
        after = write_site(catalog, site)
        assert after.complete and any("'Pz'" in note for note in after.skipped), after
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert not (site / "tags/t/packages/Pz").exists()
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")
