"""The static website: page data, files and JSON twins, re-runs, escaping, no external host."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.errors import LookupFailed, UnknownTag
from cachedex.publish.pages import home_page, package_page, spec_page, tag_page
from cachedex.publish.render import render
from cachedex.publish.site import write_site
from cachedex.query import Query
from cachedex.values import Dependency, SpecRecord
from tests.helpers import Demo, listed_specs


def test_tag_page_data_counts_what_the_catalog_holds(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        page = tag_page(catalog, "develop")
        (stats,) = catalog.tag_stats(["develop"])
        assert len(page.packages) == stats.packages and sum(p.specs for p in page.packages) == stats.specs
        listed = list(listed_specs(catalog, "develop"))
        for stack, count in page.facets["stack"].items():
            assert count == len({s.name for s in listed if stack in s.stacks}), stack
        hdf5 = next(p for p in page.packages if p.name == "hdf5")
        mine = [s for s in listed if s.name == "hdf5"]
        assert hdf5.specs == len(mine) and hdf5.size == sum(s.size or 0 for s in mine)
        assert set(hdf5.targets) == {s.target for s in mine}


def test_package_and_spec_page_data(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        page = package_page(catalog, "develop", "hdf5")
        assert (
            page.facets["stack"]["root"] == len(page.specs) == catalog.search(Query(name="hdf5"), tag="develop").total
        )
        assert {t for t, _ in page.other_tags} == {"develop-2026-11-01", "develop-2026-11-08", "v1.0.2"}
        spec = spec_page(catalog, page.specs[0].hash)
        assert spec.spec.hash == page.specs[0].hash and spec.node.startswith("{")
        direct = {d.hash for d in spec.dependencies if d.deptypes & 0b110}
        assert direct <= {c.hash for c in spec.closure}
        # the closure, walked edge by edge in Python: link and run edges only
        seen: dict[str, object] = {}
        todo = [spec.spec.hash]
        while todo:
            for edge in catalog.edges_of(todo.pop()):
                if edge.deptypes & 0b110 and edge.hash not in seen:
                    seen[edge.hash] = edge
                    todo.append(edge.hash)
        assert {c.hash for c in spec.closure} == set(seen)
        sizes = [e.size for e in spec.closure if e.listed] + [spec.spec.size]
        assert spec.closure_size == sum(x for x in sizes if x) > (spec.spec.size or 0)
        assert spec.install and f"spack install --cache-only /{spec.spec.hash}" in spec.install[0].commands
        for dependency in spec.dependencies:  # each dependent list holds the spec back
            back = spec_page(catalog, dependency.hash)
            assert not back.dependents or all(d.listed for d in back.dependents)
        with pytest.raises(LookupFailed):
            package_page(catalog, "develop", "no-such-package")
        with pytest.raises(LookupFailed):
            tag_page(catalog, "nope")


def test_every_page_has_its_json_twin_with_the_same_data(demo_run: Demo) -> None:
    site = demo_run.site
    pages = list(site.rglob("*.html"))
    assert len(pages) > 1000
    for html in pages:
        assert html.with_suffix(".json").is_file() or html.name in ("all.html", "404.html"), html
    assert len(list((site / "specs").glob("*/*.html"))) > 500
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        home = json.loads((site / "index.json").read_text())
        assert home == json.loads(msgspec.json.encode(home_page(catalog)))
        twin = json.loads((site / "tags/develop/packages/zlib/index.json").read_text())
        assert twin == json.loads(msgspec.json.encode(package_page(catalog, "develop", "zlib")))
        assert (site / "packages.json").read_bytes() == msgspec.json.encode(catalog.package_names())
        hdf5 = spec_page(catalog, package_page(catalog, "develop", "hdf5").specs[0].hash)
        twin = json.loads((site / "specs" / hdf5.spec.hash[:2] / f"{hdf5.spec.hash}.json").read_text())
        assert twin == json.loads(msgspec.json.encode(hdf5))
    # an edge leaves out what it does not have: a closure entry has no deptypes
    assert twin["closure"] and all(set(e) == {"hash", "name", "version", "listed", "size"} for e in twin["closure"])
    assert all(e["deptypes"] > 0 for e in twin["dependencies"])
    packages = json.loads((site / "packages.json").read_text())
    assert packages["zlib"] == ["develop", "develop-2026-11-01", "develop-2026-11-08", "v1.0.2"]


def test_home_page_is_small(demo_run: Demo) -> None:
    home = (demo_run.site / "index.html").read_bytes()
    assert len(gzip.compress(home)) < 200_000
    assert b"develop-2026-11-08" in home


EXTERNAL = re.compile(
    rb"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import""", re.I
)


#: The one kind of link to another host a page may have: a package's recipe, which a
#: reader follows; nothing a page loads comes from elsewhere.
RECIPE = re.compile(rb'<a href="https://packages\.spack\.io/package\.html\?name=[^"]*">')


def test_no_page_references_an_external_host(demo_run: Demo) -> None:
    checked = recipes = 0
    for path in demo_run.site.rglob("*"):
        if path.suffix in (".html", ".css", ".js"):
            text = path.read_bytes()
            recipes += len(RECIPE.findall(text))
            assert not EXTERNAL.search(RECIPE.sub(b"", text)), path
            checked += 1
    for js in (demo_run.site / "static").glob("*.js"):
        assert b"http" not in js.read_bytes()
    assert checked > 1000 and recipes > 200


def test_a_second_run_rewrites_nothing_and_removes_what_left(demo_run: Demo, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(demo_run.site, site)
    mtimes = {p: p.stat().st_mtime_ns for p in site.rglob("*") if p.is_file()}
    # '9' is not in Spack's base32 alphabet: no demo hash lives under specs/99/
    stale = [site / "specs" / "99" / ("9" * 32 + ".html"), site / "specs" / "99" / ("9" * 32 + ".json")]
    stale[0].parent.mkdir()
    for path in stale:
        path.write_text("old")
    old_layout = site / "specs" / ("y" * 32)  # a folder per spec, as earlier builds wrote
    old_layout.mkdir()
    (old_layout / "index.html").write_text("old")
    (old_layout / "index.json").write_text("{}")
    (site / "notes.txt").write_text("mine")
    (site / "specs" / "README").write_text("mine too")
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        # .cachedex-site says the site is current: only a full run looks at its files.
        assert write_site(catalog, site).current
        report = write_site(catalog, site, full=True)
    assert report.written == 0 and report.removed == 2 and not old_layout.exists()
    assert not any(path.exists() for path in stale) and not stale[0].parent.exists()
    mtimes[site / "specs" / "README"] = (site / "specs" / "README").stat().st_mtime_ns
    assert {p: p.stat().st_mtime_ns for p in site.rglob("*") if p.is_file() and p.name != "notes.txt"} == mtimes
    assert (site / "notes.txt").read_text() == "mine"


def _record(dag_hash: str, name: str, variants: tuple[str, ...], deps: tuple[Dependency, ...] = ()) -> SpecRecord:
    return SpecRecord(
        hash=dag_hash,
        name=name,
        version="1.0",
        platform="linux",
        os="rhel8",
        target="x86_64",
        compiler="gcc@13.1.0",
        variants=variants,
        dependencies=deps,
        in_buildcache=True,
        external=False,
        node=b'{"name": "x"}',
    )


def evil_catalog(path: Path) -> Catalog:
    """A catalog whose names and values try to break out of HTML and folders."""
    catalog = Catalog(path)
    zlib = _record("b" * 32, "zlib", ())
    evil = _record(
        "a" * 32,
        "we\"ird'<b>name",
        ("note=<script>alert(1)</script>", "+shared"),
        (Dependency(hash="b" * 32, name="zlib", deptypes=2, virtuals=""),),
    )
    escape = _record("c" * 32, "../escape", ())
    with catalog.writing_tag("t<i>x") as writer:
        writer.add_specs([zlib, evil, escape], {"a" * 32: 1234})
        writer.replace_mirror(
            "root",
            "/m",
            layout=3,
            db_version=8,
            checksum="x",
            etag=None,
            last_modified=None,
            fetched_at=0.0,
            members={"a" * 32: True, "b" * 32: True, "c" * 32: True},
        )
    with catalog.writing_tag("../up") as writer:
        writer.replace_mirror(
            "root",
            "/m",
            layout=3,
            db_version=8,
            checksum="y",
            etag=None,
            last_modified=None,
            fetched_at=0.0,
            members={"b" * 32: True},
        )
    return catalog


def test_values_are_escaped_and_names_never_leave_the_site(tmp_path: Path) -> None:
    site = tmp_path / "out" / "site"
    with evil_catalog(tmp_path / "c.sqlite") as catalog:
        report = write_site(catalog, site)
    assert any("'../up'" in s for s in report.skipped) and any("'../escape'" in s for s in report.skipped)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["site"]
    assert not (tmp_path / "up").exists() and not (site.parent / "escape").exists()
    spec = (site / "specs" / "aa" / ("a" * 32 + ".html")).read_text()
    assert "<script>alert(1)</script>" not in spec and "note=&lt;script&gt;alert(1)&lt;/script&gt;" in spec
    assert "<b>name" not in spec and "we&#34;ird&#39;&lt;b&gt;name" in spec
    package = next((site / "tags").glob("t*x/packages/we*")) / "index.html"
    assert "<script>alert" not in package.read_text() and "t<i>x" not in package.read_text()
    assert report.pages >= 5


def test_unknown_tag_is_one_clear_error(demo_run: Demo, tmp_path: Path) -> None:
    with (
        Catalog(demo_run.catalog, readonly=True) as catalog,
        pytest.raises(UnknownTag, match="no tag 'nope' in the catalog"),
    ):
        write_site(catalog, tmp_path / "s", tags=["nope"])
    assert not (tmp_path / "s").exists()  # (a typo left an OUTDIR holding a lock file)


def test_a_folder_of_other_files_is_refused_and_kept(demo_run: Demo, tmp_path: Path) -> None:
    """Its index.html and 404.html were replaced without a word (`cachedex site .` in a
    project's folder, say); hidden files (a .git) are no one's pages, and a folder whose
    first build was stopped (its record of building is there) is built again; jekyll's lock is no
    site's mark."""
    from cachedex.errors import OutputError

    foreign = tmp_path / "project"
    foreign.mkdir()
    (foreign / "index.html").write_text("mine")
    (foreign / "notes.txt").write_text("mine too")
    hidden, stopped = tmp_path / "gh-pages", tmp_path / "stopped"
    (hidden / ".git").mkdir(parents=True)
    stopped.mkdir()
    (stopped / ".cachedex-site-building").touch()  # (a build's first file)
    (foreign / ".cachedex-lock").touch()  # (jekyll and export leave one: it is no site's mark)
    (stopped / "index.html").write_text("a page of the stopped build")
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        with pytest.raises(OutputError, match=r"project: holds files \('index.html', 'notes.txt'\) and no record of a"):
            write_site(catalog, foreign)
        assert write_site(catalog, hidden, tags=["v1.0.2"]).written > 0
        assert write_site(catalog, stopped, tags=["v1.0.2"]).written > 0
    assert sorted(p.name for p in foreign.iterdir()) == [".cachedex-lock", "index.html", "notes.txt"]
    assert (foreign / "index.html").read_text() == "mine" and (stopped / "index.html").read_text().startswith("<!")


def test_one_tag_into_a_folder_without_the_others_names_them(demo_run: Demo, tmp_path: Path) -> None:
    """The pages of one tag link to the others' (the home page lists every tag): a
    folder that lacks them is told which, and one that has them is not."""
    note = "the pages of 'develop-2026-11-08', 'develop-2026-11-01', 'v1.0.2', which the pages written link to"
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        alone = write_site(catalog, tmp_path / "alone", tags=["develop"])
        again = write_site(catalog, tmp_path / "alone", tags=["develop"])  # current: said again
        shutil.copytree(demo_run.site, tmp_path / "whole")
        whole = write_site(catalog, tmp_path / "whole", tags=["develop"])
    assert any(s.startswith(note) for s in alone.skipped) and any(s.startswith(note) for s in again.skipped)
    assert again.current and not any("link to" in s for s in whole.skipped)


def test_a_tag_named_twice_is_built_once(demo_run: Demo, tmp_path: Path) -> None:
    """``--tag develop --tag develop`` built develop's pages twice (844 "unchanged" in an
    empty folder) and, alternating with one --tag, was never current."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        once = write_site(catalog, tmp_path / "once", tags=["develop"])
        twice = write_site(catalog, tmp_path / "twice", tags=["develop", "develop"])
        again = write_site(catalog, tmp_path / "twice", tags=["develop"])
    assert (twice.pages, twice.written, twice.unchanged) == (once.pages, once.written, 0)
    assert again.current


def test_one_build_at_a_time(demo_run: Demo, tmp_path: Path) -> None:
    """Two builds into one folder removed each other's staging (a traceback, and no
    site at all): the second is told another is writing, and changes nothing."""
    from cachedex.errors import OutputError
    from cachedex.publish.files import held_alone

    site = tmp_path / "site"
    site.mkdir()
    with (
        Catalog(demo_run.catalog, readonly=True) as catalog,
        held_alone(site),
        pytest.raises(OutputError, match="another cachedex run is writing this folder"),
    ):
        write_site(catalog, site)
    assert [p.name for p in site.iterdir()] == [".cachedex-lock"]


def test_render_uses_relative_links(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        html = render(package_page(catalog, "develop", "zlib"))
    assert 'href="../../../../static/cachedex-' in html and 'href="../../../../specs/' in html


def test_pages_written_by_two_processes_are_the_same(
    demo_run: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cachedex.publish.site

    monkeypatch.setattr(cachedex.publish.site, "PARALLEL_MIN_PAGES", 0)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        report = write_site(catalog, tmp_path / "site", tags=["v1.0.2"], workers=2)
        again = write_site(catalog, tmp_path / "site", tags=["v1.0.2"], workers=2, full=True)
    assert report.written > 500 and again.written == 0 and again.pages == report.pages
    with Catalog(demo_run.catalog, readonly=True) as catalog:  # a page for every spec a mirror of the tag holds
        held = {h for h in catalog.held_hashes() if any(tag == "v1.0.2" for tag, *_ in catalog.holders(h))}
    assert {p.stem for p in (tmp_path / "site" / "specs").glob("*/*.html")} == held
    tag_files = [
        {path.relative_to(site) for path in (site / "tags" / "v1.0.2").rglob("*")}
        for site in (tmp_path / "site", demo_run.site)
    ]
    assert tag_files[0] == tag_files[1] and len(tag_files[0]) > 20
    for path in (tmp_path / "site").rglob("*"):
        if path.is_file() and ("v1.0.2" in path.parts or "specs" in path.parts):
            assert path.read_bytes() == (demo_run.site / path.relative_to(tmp_path / "site")).read_bytes(), path


def test_each_page_links_its_own_json_twin(demo_run: Demo) -> None:
    site = demo_run.site
    spec = next((site / "specs").glob("*/*.html"))
    assert f'href="{spec.stem}.json">this page as JSON' in spec.read_text()
    package = site / "tags/develop/packages/zlib/index.html"
    assert 'href="index.json">this page as JSON' in package.read_text()


def test_new_templates_make_every_page_compared_again(demo_run: Demo, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(demo_run.site, site)
    spec = next((site / "specs").glob("*/*.html"))
    original = spec.read_bytes()
    spec.write_bytes(original.replace(b"<h1>", b"<h1>edited "))
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        # The stamp says these templates made the site, and the spec's JSON twin is as
        # it would be: its HTML is trusted, not rendered again.
        assert write_site(catalog, site).written == 0 and spec.read_bytes() != original
        (site / ".cachedex-site").write_text("cachedex 0.0.1 other templates\n")
        report = write_site(catalog, site)
    assert report.written == 1 and spec.read_bytes() == original
    assert (site / ".cachedex-site").read_bytes().startswith(b"cachedex ")


def test_the_site_command(demo_run: Demo, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cachedex.cli import main

    runner = CliRunner()
    args = ["--config", str(demo_run.config), "site", str(tmp_path / "out"), "--tag", "v1.0.2"]
    result = runner.invoke(main, [*args, "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert re.search(r"[\d,]+ pages: [\d,]+ files written, 0 unchanged, 0 removed", result.output)
    assert (tmp_path / "out/tags/v1.0.2/index.html").is_file() and not (tmp_path / "out/tags/develop").exists()
    again = runner.invoke(main, args)
    assert again.exit_code == 0 and "is current: built from this state of the catalog" in again.output
    checked = runner.invoke(main, [*args, "--full"])
    assert checked.exit_code == 0 and " 0 files written" in checked.output
    assert runner.invoke(main, [*args, "--workers", "0"]).exit_code == 2
