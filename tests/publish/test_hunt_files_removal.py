"""Mutation-hunt tests for cachedex.publish.sitefiles: what removing pages, staging
folders and leftovers takes, and what it must leave (anything not the writer's, and
anything reached through a symlink)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cachedex.publish.sitefiles import (
    PACKAGES_STAGING,
    STAGING,
    first_build,
    place_staged_packages,
    remove_others,
    remove_pages_of,
    remove_spec_pages,
    remove_stale_files,
    spec_folder,
    staging,
)
from tests.helpers import dead_pid
from tests.publish.test_site_builds_incremental import _hash


def _spec_page(specs: Path, dag_hash: str, suffixes: tuple[str, ...] = (".html", ".json", ".json.gz")) -> list[Path]:
    shard = specs / dag_hash[:2]
    shard.mkdir(parents=True, exist_ok=True)
    made = [shard / f"{dag_hash}{suffix}" for suffix in suffixes]
    for path in made:
        path.write_bytes(b"page")
    return made


def _hashes(count: int) -> list[str]:
    """DAG hashes of distinct first two characters (each its own ``<ab>`` folder)."""
    found: dict[str, str] = {}
    n = 0
    while len(found) < count:
        dag_hash = _hash(f"hunt-{n}")
        found.setdefault(dag_hash[:2], dag_hash)
        n += 1
    return list(found.values())


def test_remove_spec_pages_counts_pages_and_spares_what_is_not_a_page_it_wrote(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    gone, kept, third = _hashes(3)
    gone_files = _spec_page(specs, gone)
    kept_files = _spec_page(specs, kept)
    # A page in the wrong <ab> folder, one in a folder of another name, a note, a folder
    # named like a page: none of them a page this writer made there.
    misplaced = specs / kept[:2] / f"{gone}.html"
    long_shard = specs / f"{gone[:2]}x"
    long_shard.mkdir()
    in_long_shard = long_shard / f"{gone}.html"
    note = specs / kept[:2] / "README.txt"
    # A page of the shard's name that is no spec's (a hand-made notes page beside them).
    not_a_hash = specs / kept[:2] / f"{kept[:2]}notes.html"
    for path in (misplaced, in_long_shard, note, not_a_hash):
        path.write_bytes(b"mine")
    folder_named_like_a_page = specs / third[:2] / f"{third}.html"
    folder_named_like_a_page.mkdir(parents=True)
    assert remove_spec_pages(specs, {kept}) == 1  # pages, not files
    assert not any(path.exists() for path in gone_files)
    assert not (specs / gone[:2]).exists()  # left empty: removed
    assert all(path.is_file() for path in [*kept_files, misplaced, note, in_long_shard, not_a_hash])
    assert folder_named_like_a_page.is_dir()


def test_spec_pages_are_not_removed_through_a_symlink(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    dag_hash = _hashes(1)[0]
    pages = _spec_page(elsewhere, dag_hash)
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / dag_hash[:2]).symlink_to(elsewhere / dag_hash[:2])
    linked_specs = tmp_path / "linked"
    linked_specs.symlink_to(elsewhere)
    assert remove_spec_pages(specs, set()) == 0
    assert remove_spec_pages(linked_specs, set()) == 0
    assert remove_pages_of(specs, [dag_hash]) == 0
    assert remove_pages_of(linked_specs, [dag_hash]) == 0
    # A page symlinked into a real <ab> folder: not a page of ours either.
    own = tmp_path / "own"
    (own / dag_hash[:2]).mkdir(parents=True)
    (own / dag_hash[:2] / f"{dag_hash}.html").symlink_to(pages[0])
    assert remove_spec_pages(own, set()) == 0
    assert all(path.is_file() for path in pages)


def test_remove_pages_of_removes_every_file_of_a_page_and_counts_pages(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    gone, kept = _hashes(2)
    gone_files = _spec_page(specs, gone)
    kept_files = _spec_page(specs, kept)
    # A "hash" whose first two characters are "..": its <ab> folder is the site's own.
    outside = tmp_path / "..x.html"
    outside.write_bytes(b"not a spec page")
    assert remove_pages_of(specs, [gone, "..x", "not a hash"]) == 1
    assert outside.is_file()
    assert not any(path.exists() for path in gone_files)
    assert not (specs / gone[:2]).exists()
    assert all(path.is_file() for path in kept_files)


def test_remove_others_removes_only_page_folders_not_kept(tmp_path: Path) -> None:
    packages = tmp_path / "packages"
    for name in ("gone", "kept", "half", "mine"):
        (packages / name).mkdir(parents=True)
    for name in ("gone", "kept"):
        (packages / name / "index.html").write_text("page")
        (packages / name / "index.json").write_text("{}")
    (packages / "half" / "index.html").write_text("page")  # no twin: not a page folder of ours
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "index.html").write_text("page")
    (elsewhere / "index.json").write_text("{}")
    (packages / "linked").symlink_to(elsewhere)
    assert remove_others(packages, {"kept"}) == 1
    assert sorted(p.name for p in packages.iterdir()) == ["half", "kept", "linked", "mine"]
    assert (elsewhere / "index.html").is_file()
    linked_packages = tmp_path / "linked-packages"
    linked_packages.symlink_to(packages)
    assert remove_others(linked_packages, set()) == 0
    assert (packages / "kept" / "index.html").is_file()


def test_a_dangling_specs_symlink_is_no_first_build(tmp_path: Path) -> None:
    assert first_build(tmp_path)
    (tmp_path / "specs").symlink_to(tmp_path / "nowhere")
    assert not first_build(tmp_path)


def test_spec_folder_clears_a_stopped_staging_folder_but_not_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / STAGING / "ab").mkdir(parents=True)
    (tmp_path / STAGING / "ab" / "old.html").write_text("stale")
    dag_hash = _hashes(1)[0]
    folder = spec_folder(tmp_path, True, [dag_hash])
    assert folder == str(tmp_path / STAGING)
    assert sorted(p.name for p in (tmp_path / STAGING).iterdir()) == [dag_hash[:2]]
    # A worker (clear=False) leaves the build's own staging folder alone.
    (tmp_path / STAGING / dag_hash[:2] / "mine.html").write_text("being written")
    spec_folder(tmp_path, True, [dag_hash], clear=False)
    assert (tmp_path / STAGING / dag_hash[:2] / "mine.html").is_file()


def test_staging_removes_a_staging_folder_on_failure_and_nothing_else(tmp_path: Path) -> None:
    staged, specs = tmp_path / "staged", tmp_path / "specs"
    for folder in (staged, specs):
        folder.mkdir()
        (folder / "page.html").write_text("page")
    with pytest.raises(RuntimeError), staging(str(staged), True):
        raise RuntimeError("stopped")
    assert not staged.exists()
    with pytest.raises(RuntimeError), staging(str(specs), False):  # the live site's pages
        raise RuntimeError("stopped")
    assert (specs / "page.html").is_file()


def test_remove_stale_files_looks_into_every_folder_a_build_writes(tmp_path: Path) -> None:
    dead = dead_pid()
    dag_hash = _hashes(1)[0]
    folders = [
        tmp_path,
        tmp_path / "static",
        tmp_path / "mirrors",
        tmp_path / "tags" / "t",
        tmp_path / "tags" / "t" / "packages",
        tmp_path / "tags" / "t" / "packages" / "zlib",
        tmp_path / "specs" / dag_hash[:2],
    ]
    names = ["index.html", "index.json", "index.json.gz", "style.css", "app.js", "logo.svg", "feed.atom"]
    names += [".cachedex-site", ".cachedex-site-inputs", ".cachedex-site-building"]
    stale = []
    for n, folder in enumerate(folders):
        folder.mkdir(parents=True, exist_ok=True)
        for name in names if n == 0 else names[:7]:
            stale.append(folder / f".{name}.{dead}.tmp")
            stale[-1].write_bytes(b"part")
    too_deep = tmp_path / "tags" / "t" / "packages" / "zlib" / "deeper"
    too_deep.mkdir()
    (too_deep / f".index.html.{dead}.tmp").write_bytes(b"not ours")
    for name in (STAGING, PACKAGES_STAGING):
        (tmp_path / name / "x").mkdir(parents=True)
    old = tmp_path / f".cachedex-old-{dead}"
    old.mkdir()
    assert remove_stale_files(tmp_path) == len(stale) + 1  # (and one folder of old files)
    assert not any(os.path.lexists(path) for path in stale)
    assert (too_deep / f".index.html.{dead}.tmp").is_file()
    assert not any((tmp_path / name).exists() for name in (STAGING, PACKAGES_STAGING, old.name))


def test_remove_stale_files_does_not_follow_a_symlinked_staging_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "keep").mkdir(parents=True)
    site = tmp_path / "site"
    site.mkdir()
    for name in (STAGING, PACKAGES_STAGING):
        (site / name).symlink_to(elsewhere)
    remove_stale_files(site)
    assert (elsewhere / "keep").is_dir()


def test_staged_package_pages_replace_those_in_place_one_folder_at_a_time(tmp_path: Path) -> None:
    staged = tmp_path / PACKAGES_STAGING / "tags"
    for tag, package in (("t", "zlib"), ("t", "curl"), ("u", "zlib")):
        (staged / tag / "packages" / package).mkdir(parents=True)
        (staged / tag / "packages" / package / "index.html").write_text(f"new {tag} {package}")
    placed = tmp_path / "tags" / "t" / "packages" / "zlib"
    placed.mkdir(parents=True)
    (placed / "index.html").write_text("old t zlib")
    (placed / "stale.json").write_text("old")
    place_staged_packages(tmp_path, ["t", "u", "v"])  # v: nothing staged for it
    for tag, package in (("t", "zlib"), ("t", "curl"), ("u", "zlib")):
        page = tmp_path / "tags" / tag / "packages" / package / "index.html"
        assert page.read_text() == f"new {tag} {package}"
    assert not (placed / "stale.json").exists()
    assert not (tmp_path / PACKAGES_STAGING).exists()
    assert not (tmp_path / "tags" / "v").exists()


def test_a_symlinked_staging_folder_is_neither_cleared_nor_in_a_later_build_s_way(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "keep").mkdir(parents=True)
    site = tmp_path / "site"
    site.mkdir()
    (site / STAGING).symlink_to(elsewhere)
    dag_hash = _hashes(1)[0]
    assert spec_folder(site, False, [dag_hash]) == str(site / "specs")
    assert (site / "specs" / dag_hash[:2]).is_dir() and (elsewhere / "keep").is_dir()
