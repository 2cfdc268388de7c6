"""The site stays whole: built while a sync commits, killed half way, and with names
that cannot be file names (findings DATA-1, DATA-3, CRASH-11 and COS-4 of the
reliability review)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path
from urllib.parse import unquote

import pytest

import cachedex.publish.files
import cachedex.publish.jekyll
import cachedex.publish.site
import cachedex.publish.site_build
from cachedex.catalog import Catalog
from cachedex.errors import OutputError
from cachedex.publish.files import safe_folder
from cachedex.publish.graph import SpecGraph
from cachedex.publish.jekyll import write_jekyll
from cachedex.publish.site import write_site
from cachedex.publish.sitefiles import remove_pages_of, remove_stale_files
from cachedex.values import Dependency, SpecRecord, check_name
from tests.helpers import dead_pid, file_bytes, record, write_tag


def dag_hash(seed: str) -> str:
    return base64.b32encode(hashlib.sha256(seed.encode()).digest()).decode().lower()[:32]


#: Three states of tag ``t``: packages come and go, and specs change hashes, except
#: p3's, which every state keeps.
STATES = {"A": range(0, 6), "B": range(1, 7), "C": range(2, 8)}


def specs_of(state: str) -> list[SpecRecord]:
    """Two specs per package, the second linking to the first."""
    records = []
    for n in STATES[state]:
        name = f"p{n}"
        seed = "kept" if n == 3 else state
        first = dag_hash(f"{seed}-{name}-1")
        records.append(record(first, name, version="1.0"))
        link = (Dependency(first, name, 2, ""),)
        records.append(record(dag_hash(f"{seed}-{name}-2"), name, version="2.0", dependencies=link))
    return records


def swap_to(catalog: Catalog, state: str) -> None:
    """Commit tag ``t`` as ``state``, as a sync would."""
    records = specs_of(state)
    known = catalog.spec_ids([r.hash for r in records])
    new = [r for r in records if r.hash not in known]
    write_tag(catalog, "t", new, members={r.hash: True for r in records}, checksum=state)


def broken_links(site: Path) -> list[str]:
    """Links that lead to no page: package pages to spec pages, tag pages (their HTML,
    and the rows their script makes from the JSON twin) to package pages, and the home
    page to tag pages. (Links up, to the pages a page belongs to, are not counted: a
    first build writes those last.)"""
    broken = []
    pages = [
        *((page, r"specs/") for page in site.glob("tags/*/packages/*/index.html")),
        *((page, r"packages/") for page in site.glob("tags/*/index.html")),
        *((page, r"packages/") for page in site.glob("tags/*/all.html")),
        *((page, r"tags/") for page in [site / "index.html"] if page.exists()),
    ]
    for page, kind in pages:
        for href in re.findall(r'href="((?:\.\./)*' + kind + r'[^"]+\.html)"', page.read_text()):
            if not (page.parent / unquote(href)).is_file():
                broken.append(f"{page.relative_to(site)} -> {href}")
    for twin in site.glob("tags/*/index.json"):
        for row in json.loads(twin.read_text())["packages"]:
            if row["has_page"] and not (twin.parent / "packages" / row["name"] / "index.html").is_file():
                broken.append(f"{twin.relative_to(site)} -> {row['name']}")
    return broken


def spec_pages(site: Path) -> set[str]:
    return {path.stem for path in site.glob("specs/*/*.html")}


def temporaries(site: Path) -> list[str]:
    return sorted(str(path.relative_to(site)) for path in site.rglob(".*.tmp"))


# -- DATA-1 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_data1_site_built_during_a_sync_keeps_its_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    path, site = tmp_path / "c.sqlite", tmp_path / "site"
    with Catalog(path) as catalog:
        swap_to(catalog, "A")
        write_site(catalog, site)
        swap_to(catalog, "B")
    monkeypatch.setattr(cachedex.publish.site, "PARALLEL_MIN_PAGES", 0)  # workers as on a big site

    class SyncCommitsMeanwhile(SpecGraph):
        def __init__(self, catalog: Catalog, only: Collection[int] | None = None) -> None:
            super().__init__(catalog, only)
            with Catalog(path) as other:  # another process's sync, committing now
                swap_to(other, "C")

    monkeypatch.setattr(cachedex.publish.site_build, "SpecGraph", SyncCommitsMeanwhile)
    monkeypatch.setattr(cachedex.publish.site, "BUILD_ATTEMPTS", 1)  # (one build, not made again)
    (site / ".cachedex-site").unlink()
    with Catalog(path, readonly=True) as catalog:
        report = write_site(catalog, site, workers=workers)
    assert broken_links(site) == []
    assert not (site / ".cachedex-site").exists()  # the site does not say it is complete
    assert not report.complete and report.removed == 0
    assert any("the catalog changed" in s and "run 'cachedex site' again" in s for s in report.skipped)
    # Nothing of B's was removed: at most pages left over from A stay until the next build.
    b_specs = {r.hash for r in specs_of("B")}
    assert b_specs <= spec_pages(site)

    monkeypatch.setattr(cachedex.publish.site_build, "SpecGraph", SpecGraph)
    with Catalog(path, readonly=True) as catalog:
        again = write_site(catalog, site, workers=workers)
        held = catalog.held_hashes()
    assert again.complete and (site / ".cachedex-site").is_file() and broken_links(site) == []
    assert spec_pages(site) == held == {r.hash for r in specs_of("C")}
    assert sorted(p.name for p in site.glob("tags/t/packages/*")) == [f"p{n}" for n in STATES["C"]]


@pytest.mark.parametrize("workers", [1, 2])
def test_data1_a_build_a_sync_overtook_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """A sync that commits during a build: the build is made again, complete (it returned
    incomplete, and `cachedex site` exited 0; a first build could leave nothing)."""
    path, site = tmp_path / "c.sqlite", tmp_path / "site"
    with Catalog(path) as catalog:
        swap_to(catalog, "B")
    monkeypatch.setattr(cachedex.publish.site, "PARALLEL_MIN_PAGES", 0)
    commits: list[str] = []

    class SyncCommitsOnce(SpecGraph):
        def __init__(self, catalog: Catalog, only: Collection[int] | None = None) -> None:
            super().__init__(catalog, only)
            if not commits:
                commits.append("C")
                with Catalog(path) as other:
                    swap_to(other, "C")

    monkeypatch.setattr(cachedex.publish.site_build, "SpecGraph", SyncCommitsOnce)
    with Catalog(path, readonly=True) as catalog:
        report = write_site(catalog, site, workers=workers)
        held = catalog.held_hashes()
    assert commits and report.complete and (site / ".cachedex-site").is_file() and broken_links(site) == []
    assert spec_pages(site) == held == {r.hash for r in specs_of("C")}


def test_data1_the_site_command_fails_when_syncs_overtake_every_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from cachedex.cli import main

    path, site = tmp_path / "c.sqlite", tmp_path / "site"
    with Catalog(path) as catalog:
        swap_to(catalog, "A")
    states = iter(["B", "C", "A", "B", "C", "A"])

    class SyncCommitsEachTime(SpecGraph):
        def __init__(self, catalog: Catalog, only: Collection[int] | None = None) -> None:
            super().__init__(catalog, only)
            with Catalog(path) as other:
                swap_to(other, next(states))

    monkeypatch.setattr(cachedex.publish.site, "PARALLEL_MIN_PAGES", 0)
    monkeypatch.setattr(cachedex.publish.site_build, "SpecGraph", SyncCommitsEachTime)
    (tmp_path / "c.yaml").write_text(json.dumps({"catalog": str(path), "tags": [{"name": "t", "url": str(tmp_path)}]}))
    result = CliRunner().invoke(main, ["--config", str(tmp_path / "c.yaml"), "site", str(site), "--workers", "1"])
    assert result.exit_code == 1, result.output
    assert "syncs committed during each of 3 builds; the site is not complete" in result.output


# -- DATA-3 ---------------------------------------------------------------------------------

#: Builds the site (argv: catalog, site, N) and is killed (SIGKILL) at its Nth file
#: replacement, after the temporary file is written and before its rename.
KILLED_BUILD = """
import os, signal, sys
from pathlib import Path
from cachedex.catalog import Catalog
from cachedex.publish.site import write_site
from cachedex.publish.sitefiles import remove_pages_of, remove_stale_files

limit, calls, replace = int(sys.argv[3]), 0, os.replace

def replace_or_die(source, target):
    global calls
    calls += 1
    if calls == limit:
        os.kill(os.getpid(), signal.SIGKILL)
    replace(source, target)

os.replace = replace_or_die
with Catalog(Path(sys.argv[1]), readonly=True) as catalog:
    write_site(catalog, Path(sys.argv[2]), workers=1)
print(calls)
"""


class Killed:
    """A build run in its own process, to its end or to its ``at``-th file replacement."""

    def __init__(self, catalog: Path, site: Path, at: int) -> None:
        command = [sys.executable, "-c", KILLED_BUILD, str(catalog), str(site), str(at)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stdout, self.stderr = process.communicate(timeout=120)
        self.returncode, self.pid = process.returncode, process.pid


@pytest.mark.parametrize("first", [True, False], ids=["first build", "A to B"])
def test_data3_a_killed_build_leaves_no_link_to_a_missing_page(tmp_path: Path, first: bool) -> None:
    path, built = tmp_path / "c.sqlite", tmp_path / "built"
    with Catalog(path) as catalog:
        swap_to(catalog, "A")
        if not first:
            write_site(catalog, built)
            swap_to(catalog, "B")
    built.mkdir(exist_ok=True)
    shutil.copytree(built, tmp_path / "whole", symlinks=True)
    whole = Killed(path, tmp_path / "whole", 0)  # never killed: counts its replacements
    assert whole.returncode == 0, whole.stderr
    total = int(whole.stdout)
    assert total > 20
    for at in sorted({1, 2, 3, total // 4, total // 2, 3 * total // 4, total - 2, total - 1, total}):
        site = tmp_path / f"killed-{at}"
        shutil.copytree(built, site, symlinks=True)
        killed = Killed(path, site, at)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert broken_links(site) == [], at
        assert temporaries(site)  # the file it was replacing when it died


def test_data3_the_next_build_removes_temporary_files_of_killed_builds(tmp_path: Path) -> None:
    path, site = tmp_path / "c.sqlite", tmp_path / "site"
    with Catalog(path) as catalog:
        swap_to(catalog, "A")
        write_site(catalog, site)
        swap_to(catalog, "B")
    killed = Killed(path, site, 10)
    assert killed.returncode == -signal.SIGKILL
    assert [name.rsplit(".", 2)[-2] for name in temporaries(site)] == [str(killed.pid)]
    # What killed runs leave in each kind of folder (the pid of a process that is gone) ...
    shard = next(p.name for p in (site / "specs").iterdir())
    for planted in (
        f"tags/t/.x.html.{dead_pid()}.tmp",
        f"specs/{shard}/.y.json.{dead_pid()}.tmp",
        f"tags/t/packages/p3/.index.html.{dead_pid()}.tmp",
        f"tags/t/packages/p3/.badge.svg.{dead_pid()}.tmp",
        f"tags/t/packages/p3/.changes.atom.{dead_pid()}.tmp",
        f"tags/t/.changes.atom.{dead_pid()}.tmp",
        f"static/.cachedex.css.{dead_pid()}.tmp",
        f"..cachedex-site.{dead_pid()}.tmp",
    ):
        (site / planted).write_text("partial")
    # ... but a file a live process is writing now, or not a name a build writes, stays.
    live = site / "tags" / "t" / f".index.html.{os.getppid()}.tmp"
    mine = site / "tags" / "t" / f".notes.txt.{dead_pid()}.tmp"
    live.write_text("being written")
    mine.write_text("mine")
    # The old files a killed build had not removed yet (see files.Replacer), and a live one's.
    left = site / f".cachedex-old-{dead_pid()}"
    left.mkdir()
    (left / "1").write_text("replaced")
    (site / f".cachedex-old-{os.getppid()}").mkdir()
    with Catalog(path, readonly=True) as catalog:
        report = write_site(catalog, site)
    assert temporaries(site) == sorted(str(p.relative_to(site)) for p in (live, mine))
    assert [p.name for p in site.glob(".cachedex-old-*")] == [f".cachedex-old-{os.getppid()}"]
    assert report.complete and broken_links(site) == []


def links_down(page: Path) -> list[Path]:
    """The pages a page links to that must exist before it (see :func:`broken_links`)."""
    if page.name == "index.html" and page.parent.parent.name == "packages":
        kind = "specs/"
    elif page.parent.parent.name == "tags" and page.name in ("index.html", "all.html"):
        kind = "packages/"
    elif page.parent.name == "site" and page.name == "index.html":
        kind = "tags/"
    else:
        return []
    hrefs = re.findall(r'href="((?:\.\./)*' + kind + r'[^"]+\.html)"', page.read_text())
    return [(page.parent / unquote(href)).resolve() for href in hrefs]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("first", [True, False], ids=["first build", "A to B"])
def test_data3_pages_are_written_after_the_pages_they_link_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, first: bool
) -> None:
    path, site = tmp_path / "c.sqlite", (tmp_path / "site").resolve()
    with Catalog(path) as catalog:
        swap_to(catalog, "A")
        if not first:
            write_site(catalog, site)
            swap_to(catalog, "B")
    before = {p.resolve() for p in site.rglob("*.html")}
    # Every file put in place, in order, by this process and its workers (forked: they
    # inherit the patch), each line appended whole.
    log = tmp_path / "replaced.log"
    real_replace, real_rename = os.replace, os.rename

    def logged(real):  # type: ignore[no-untyped-def]
        def put(source: object, target: object) -> None:
            real(source, target)
            with open(log, "a") as handle:
                handle.write(f"{target}\n")

        return put

    monkeypatch.setattr(os, "replace", logged(real_replace))
    monkeypatch.setattr(os, "rename", logged(real_rename))
    monkeypatch.setattr(cachedex.publish.site, "PARALLEL_MIN_PAGES", 0)
    with Catalog(path, readonly=True) as catalog:
        write_site(catalog, site, workers=workers)
    present = set(before)
    renamed_folders = []
    for line in log.read_text().splitlines():
        target = Path(line).resolve()
        if target.is_dir():  # a first build's staged pages, a folder at once
            renamed_folders.append(target.relative_to(site))
            pages = sorted(p.resolve() for p in target.rglob("*.html"))
            present |= set(pages)  # (spec pages link to nothing that must exist first)
        else:
            pages = [target]
        for page in pages:
            missing = [str(link.relative_to(site)) for link in links_down(page) if link not in present]
            assert missing == [], f"{page.relative_to(site)} was written before the pages it links to"
            present.add(page)
    assert {p.resolve() for p in site.glob("tags/t/packages/*/index.html")} <= present
    if first and workers > 1:  # spec pages, then package pages, each a folder at once
        assert renamed_folders == [Path("specs"), Path("tags/t/packages")]


# -- CRASH-11, COS-4: names that cannot be file names --------------------------------------

LONG = "a" * 300


@pytest.fixture
def long_name_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Catalog:
    """Tag ``t`` listing a package named ``a`` x 300 and ``zlib``, as ingest let them in
    before it refused such names: the publishers must be safe on their own."""

    def as_before(name: object) -> str | None:
        if isinstance(name, str) and len(name.encode()) > 255 and "/" not in name:
            return None
        return check_name(name)

    for module in (cachedex.publish.files, cachedex.publish.site, cachedex.publish.jekyll):
        monkeypatch.setattr(module, "check_name", as_before, raising=False)
    catalog = Catalog(tmp_path / "long.sqlite")
    write_tag(catalog, "t", [record(dag_hash("long"), LONG), record(dag_hash("zlib"), "zlib")])
    return catalog


def test_crash11_site_skips_a_package_name_too_long_for_a_file(long_name_catalog: Catalog, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with long_name_catalog as catalog:
        report = write_site(catalog, site)
    assert [s for s in report.skipped if LONG[:40] in s and "255" in s and len(s) < 300]
    assert (site / "tags/t/packages/zlib/index.html").is_file() and spec_pages(site) == {
        dag_hash("long"),
        dag_hash("zlib"),
    }
    assert sorted(p.name for p in site.iterdir() if p.name.startswith(".")) == [
        ".cachedex-lock",
        ".cachedex-site",
        ".cachedex-site-inputs",
    ]
    assert report.complete and broken_links(site) == []
    with pytest.raises(OutputError, match="File name too long"):  # whatever asks the file system
        safe_folder(tmp_path, "t", LONG)


def test_crash11_jekyll_skips_a_package_name_too_long_and_writes_the_rest(
    long_name_catalog: Catalog, tmp_path: Path
) -> None:
    out = tmp_path / "jekyll"
    with long_name_catalog as catalog:
        report = write_jekyll(catalog, out)
    (tag,) = report.tags
    assert [s for s in tag.skipped if LONG[:40] in s and "255" in s] and tag.pages == 1
    assert (out / "_cache/t/zlib/specs.md").is_file() and (out / "_data/meta.yaml").is_file()
    assert sorted(p.name for p in (out / "_cache/t").iterdir()) == [".cachedex-jekyll", "zlib"]


def test_cos4_names_without_a_page_are_not_linked(tmp_path: Path) -> None:
    site = tmp_path / "site"
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(dag_hash("slash"), "a/b"), record(dag_hash("zlib"), "zlib")])
        write_tag(catalog, "x/y", [], members={dag_hash("zlib"): True}, checksum="x")
        report = write_site(catalog, site)
    assert any("'a/b'" in s for s in report.skipped) and any("'x/y'" in s for s in report.skipped)
    for page in ("tags/t/index.html", "tags/t/all.html"):
        text = (site / page).read_text()
        assert '<td class="name">a/b</td>' in text or "<li>a/b " in text
        assert "a%2Fb" not in text and 'href="packages/zlib/index.html"' in text
    rows = json.loads((site / "tags/t/index.json").read_text())["packages"]
    assert [(row["name"], row.get("has_page")) for row in rows] == [("a/b", False), ("zlib", True)]  # for its script
    assert broken_links(site) == []
    assert json.loads((site / "packages.json").read_text()) == {"zlib": ["t"]}  # the search box's links
    home = (site / "index.html").read_text()
    assert '<td class="name">x/y</td>' in home and "x%2Fy" not in home
    spec = (site / "specs" / dag_hash("zlib")[:2] / f"{dag_hash('zlib')}.html").read_text()
    assert "x%2Fy" not in spec and "<li>x/y / root" in spec


#: A first build shared among processes (argv: catalog, site), stopped (SIGKILL) when its
#: package pages, written into their staging folder, are about to be put in place.
STOPPED_BEFORE_PACKAGES = """
import os, signal, sys
from pathlib import Path
import cachedex.publish.site, cachedex.publish.site_build
from cachedex.catalog import Catalog
from cachedex.publish.site import write_site

cachedex.publish.site.PARALLEL_MIN_PAGES = 0
cachedex.publish.site_build.place_staged_packages = lambda *_: os.kill(os.getpid(), signal.SIGKILL)
with Catalog(Path(sys.argv[1]), readonly=True) as catalog:
    write_site(catalog, Path(sys.argv[2]), workers=2)
"""


def site_files(site: Path) -> dict[str, bytes]:
    """:func:`~tests.helpers.file_bytes` of a site but its build records (which differ
    between builds of the same pages)."""
    return {path: data for path, data in file_bytes(site).items() if not Path(path).name.startswith(".cachedex-site")}


def test_data3_a_first_build_stopped_before_its_package_pages_are_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, site, fresh = tmp_path / "c.sqlite", tmp_path / "site", tmp_path / "fresh"
    with Catalog(path) as catalog:
        swap_to(catalog, "A")
        write_site(catalog, fresh)
    stopped = subprocess.run(
        [sys.executable, "-c", STOPPED_BEFORE_PACKAGES, str(path), str(site)], capture_output=True, timeout=120
    )
    assert stopped.returncode == -signal.SIGKILL, stopped.stderr
    # Written while the graph was read and after the spec pages, but not in place.
    assert len(list(site.glob(".packages-staging/tags/t/packages/*/index.html"))) == len(STATES["A"])
    assert (site / "specs").is_dir() and not (site / "tags" / "t" / "packages").exists()
    assert broken_links(site) == []
    monkeypatch.setattr(cachedex.publish.site, "PARALLEL_MIN_PAGES", 0)
    with Catalog(path, readonly=True) as catalog:
        report = write_site(catalog, site, workers=2)
    assert report.complete and not (site / ".packages-staging").exists()
    assert site_files(site) == site_files(fresh)


def test_a_first_build_over_package_pages_replaces_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A site whose spec pages were removed by hand is built as a first one: the package
    pages it writes aside replace those there, folder by folder, never through a symlink."""
    path, site, fresh = tmp_path / "c.sqlite", tmp_path / "site", tmp_path / "fresh"
    with Catalog(path) as catalog:
        swap_to(catalog, "A")
        write_site(catalog, site)
        swap_to(catalog, "B")
        write_site(catalog, fresh)
    shutil.rmtree(site / "specs")
    (site / ".cachedex-site").unlink()
    monkeypatch.setattr(cachedex.publish.site, "PARALLEL_MIN_PAGES", 0)
    with Catalog(path, readonly=True) as catalog:
        report = write_site(catalog, site, workers=2)
        assert report.complete and not (site / ".packages-staging").exists()
        assert site_files(site) == site_files(fresh)
        shutil.rmtree(site / "specs")
        (site / ".cachedex-site").unlink()
        elsewhere = tmp_path / "elsewhere"
        (site / "tags" / "t" / "packages").rename(elsewhere)
        (site / "tags" / "t" / "packages").symlink_to(elsewhere)
        before = sorted(p.name for p in elsewhere.iterdir())
        with pytest.raises(OutputError, match="packages"):
            write_site(catalog, site, workers=2)
    assert sorted(p.name for p in elsewhere.iterdir()) == before


def test_data3_temporary_files_are_removed_only_inside_the_site(tmp_path: Path) -> None:
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    (site / "tags" / "t").mkdir(parents=True)
    elsewhere.mkdir()
    outside = elsewhere / f".index.html.{dead_pid()}.tmp"
    outside.write_text("not the site's")
    (site / "mirrors").symlink_to(elsewhere)
    (site / "tags" / "t" / "packages").symlink_to(elsewhere)
    inside = site / "tags" / "t" / f".index.json.{dead_pid()}.tmp"
    inside.write_text("partial")
    assert remove_stale_files(site) == 1
    assert outside.exists() and not inside.exists()


def test_data3_pages_of_hashes_that_left_are_removed_only_inside_the_site(tmp_path: Path) -> None:
    dag_hash, other = "ab" + "c" * 30, "cd" + "e" * 30
    specs, elsewhere = tmp_path / "site" / "specs", tmp_path / "elsewhere"
    (specs / "cd").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / f"{dag_hash}.html").write_text("not the site's")
    (specs / "ab").symlink_to(elsewhere)  # a shard that leads out of the site
    (specs / "cd" / f"{other}.html").write_text("a page")
    (specs / "cd" / f"{other}.json").write_text("{}")
    assert remove_pages_of(specs, [dag_hash, other]) == 1
    assert (elsewhere / f"{dag_hash}.html").read_text() == "not the site's"
    assert not (specs / "cd").exists() and (specs / "ab").is_symlink()
