"""The parts of a site build a worker runs (``publish/site_tasks``), on the small
catalog: which package pages a task writes (``only``, ``linked_only``), the badge it
gives them, which tag and change pages it writes, and a task of another catalog state."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.badges import package_badge
from cachedex.publish.site_tasks import Task, run_task, write_task
from cachedex.publish.sitefiles import SiteWriter


def _written(catalog: Catalog, outdir: Path, task: Task) -> tuple[dict[str, list[str]], set[str]]:
    """What ``task`` leaves for later, and the files (no gzipped copies) it writes."""
    outdir.mkdir(exist_ok=True)
    writer = SiteWriter(outdir)
    try:
        deferred = write_task(catalog, writer, task)
    finally:
        writer.close()
    files = {p.relative_to(outdir).as_posix() for p in outdir.rglob("*") if p.is_file() and p.suffix != ".gz"}
    return deferred, files


def test_only_the_named_package_pages_are_written_with_their_badge(tmp_path: Path, small_catalog: Catalog) -> None:
    """``only`` {t: [zlib]}: zlib's page, feed and badge (counting its one spec), no
    other package's, and no tag page."""
    deferred, files = _written(
        small_catalog, tmp_path, Task(small_catalog.path, tmp_path, tags=["t"], only={"t": ["zlib"]})
    )
    assert deferred == {}
    folder = "tags/t/packages/zlib"
    assert {f"{folder}/index.html", f"{folder}/badge.svg", f"{folder}/changes.atom"} <= files
    assert not any(f.startswith("tags/t/packages/cmake") for f in files)
    assert "tags/t/index.html" not in files
    assert (tmp_path / folder / "badge.svg").read_bytes() == package_badge(1)


def test_a_tag_with_no_name_wanted_writes_no_package_page(tmp_path: Path, small_catalog: Catalog) -> None:
    """``only`` naming no package of a tag: none of its package pages."""
    _, files = _written(small_catalog, tmp_path, Task(small_catalog.path, tmp_path, tags=["t"], only={"t": []}))
    assert not any("/packages/" in f for f in files)


def test_linked_only_leaves_packages_whose_spec_pages_are_missing(tmp_path: Path, small_catalog: Catalog) -> None:
    """With no spec page written yet, ``linked_only`` writes no package page and leaves
    each for later, by tag."""
    task = Task(small_catalog.path, tmp_path, tags=["t"], only={"t": ["zlib", "cmake"]}, linked_only=True)
    deferred, files = _written(small_catalog, tmp_path, task)
    assert {tag: sorted(names) for tag, names in deferred.items()} == {"t": ["cmake", "zlib"]}
    assert not any("/packages/" in f for f in files)


def test_change_pages_are_those_asked_for(tmp_path: Path, small_catalog: Catalog) -> None:
    """``change_pages`` []: t's tag page without its change pages; None: those of the
    tag pages too."""
    _, files = _written(
        small_catalog, tmp_path / "a", Task(small_catalog.path, tmp_path / "a", tag_pages=["t"], change_pages=[])
    )
    assert {"tags/t/index.html", "tags/t/all.html"} <= files
    assert "tags/t/changes/index.html" not in files
    _, files = _written(small_catalog, tmp_path / "b", Task(small_catalog.path, tmp_path / "b", tag_pages=["t"]))
    assert {"tags/t/index.html", "tags/t/changes/index.html", "tags/t/coverage/index.html"} <= files


def test_a_task_of_another_state_writes_nothing(tmp_path: Path, small_catalog: Catalog) -> None:
    """A worker whose token is not the catalog's state writes nothing and says so; one of
    the catalog's state writes the tag's pages."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    done = run_task(Task(small_catalog.path, tmp_path / "a", token="another", tag_pages=["t"]))
    assert done.stale and done.written == 0
    assert not (tmp_path / "a" / "tags").exists()
    token = small_catalog.state_token()[0]
    done = run_task(Task(small_catalog.path, tmp_path / "b", token=token, tag_pages=["t"]))
    assert not done.stale and done.written > 0 and done.specs == 0
    assert (tmp_path / "b/tags/t/index.html").is_file()


def test_a_task_of_spec_pages_counts_them(tmp_path: Path, small_catalog: Catalog) -> None:
    """A task reading its own graph (``graph_of``) writes the spec pages of those a
    mirror of the tag holds and reports how many specs it was given."""
    ids = small_catalog.page_inputs().ids_of(["z" * 32, "c" * 32])
    token, folder = small_catalog.state_token()[0], tmp_path / "specs"
    done = run_task(
        Task(
            small_catalog.path,
            tmp_path,
            token=token,
            spec_ids=sorted(ids.values()),
            graph_of=["t"],
            spec_folder=str(folder),
        )
    )
    assert not done.stale and done.specs == 2 and done.written > 0
    assert (folder / "zz" / f"{'z' * 32}.html").is_file()
