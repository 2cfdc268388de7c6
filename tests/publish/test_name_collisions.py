"""Names that are one folder where case or Unicode forms are ignored (macOS's APFS,
Windows's NTFS and shares, a sync to one): a hostile mirror's ``Zlib`` or ``zlib.``
must not get a folder beside the real ``zlib``, whose page it would overwrite there.
And a temporary file a killed build left is removed even when it is a symlink."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish import jekyll
from cachedex.publish import site as site_module
from cachedex.publish.files import name_problem, remove_stale_temporaries
from cachedex.publish.folder_names import folder_clashes, folder_key
from cachedex.publish.jekyll import write_jekyll
from cachedex.publish.serve import create_app
from cachedex.publish.site import write_site
from cachedex.publish.urls import has_page, with_pages
from tests.helpers import dead_pid, file_bytes, record, write_tag
from tests.publish.serve import get

#: "café" as one character and as "e" and a combining accent: two names, one on APFS.
COMPOSED = unicodedata.normalize("NFC", "café")
DECOMPOSED = unicodedata.normalize("NFD", "café")


def _clashing_folders(top: Path) -> list[list[str]]:
    """The folders under ``top`` (at any depth) that hold two entries with one folder key."""
    found = []
    for folder, subfolders, files in os.walk(top):
        keys: dict[str, list[str]] = {}
        for name in subfolders + files:
            keys.setdefault(folder_key(name), []).append(os.path.join(folder, name))
        found += [sorted(group) for group in keys.values() if len(group) > 1]
    return found


def _catalog(path: Path, names: list[str]) -> Catalog:
    """A catalog of one tag ``t`` with a spec of each of ``names``, written as a catalog
    made before any publisher refused them holds them."""
    catalog = Catalog(path)
    write_tag(catalog, "t", [record(f"{n:032d}".replace("0", "a"), name) for n, name in enumerate(names, 1)])
    return catalog


def test_names_one_folder_where_case_is_ignored() -> None:
    assert folder_clashes(["zlib", "Zlib", "ZLIB", "zlib.", "zstd", "hdf5"]) == {
        "ZLIB": "one folder with 'Zlib', 'zlib', 'zlib.' where case is ignored; 'zlib' keeps it",
        "Zlib": "one folder with 'ZLIB', 'zlib', 'zlib.' where case is ignored; 'zlib' keeps it",
        "zlib.": "one folder with 'ZLIB', 'Zlib', 'zlib' where case is ignored; 'zlib' keeps it",
    }
    # None written as the key: which is real cannot be told, so neither takes the folder.
    assert set(folder_clashes(["MyLib", "MYLIB", "other"])) == {"MyLib", "MYLIB"}
    assert folder_clashes(["py-numpy", "py_numpy", "zlib-ng", "zlib"]) == {}  # different names on every disk


def test_a_name_beyond_ascii_has_no_page_so_no_unicode_form_shares_a_folder(tmp_path: Path) -> None:
    """Spack writes package names in ASCII (spec_parser.py's IDENTIFIER): one that is
    not was not made by Spack, and has no page, however the catalog came to hold it."""
    assert name_problem(DECOMPOSED) == f"{DECOMPOSED!r} is not ASCII, as Spack's package names and tags are"
    assert name_problem(COMPOSED) is not None and not has_page(COMPOSED)
    with _catalog(tmp_path / "c.sqlite", ["zlib", COMPOSED, DECOMPOSED]) as catalog:
        report = write_site(catalog, tmp_path / "site")
    assert _clashing_folders(tmp_path / "site") == []
    packages = tmp_path / "site" / "tags" / "t" / "packages"
    assert sorted(p.name for p in packages.iterdir()) == ["zlib"]
    assert [line for line in report.skipped if "not ASCII" in line] == [
        f"t: package {name!r}: {name!r} is not ASCII, as Spack's package names and tags are"
        for name in sorted([COMPOSED, DECOMPOSED])
    ]


@pytest.mark.parametrize("tree", ["site", "jekyll"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_hostile_zlib_gets_no_folder_beside_the_real_one(
    tmp_path: Path, tree: str, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written both, one page would overwrite the other where case is ignored: the
    lowercase name keeps its folder and page, the others are skipped and named (in
    workers too, each of which writes a share of the names)."""
    monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)
    monkeypatch.setattr(jekyll, "PARALLEL_MIN_SPECS", 0)
    with _catalog(tmp_path / "c.sqlite", ["zlib", "Zlib", "ZLIB", "zlib.", "zstd"]) as catalog:
        if tree == "site":
            report = write_site(catalog, tmp_path / tree, workers=workers)
            skipped = report.skipped
            packages = tmp_path / tree / "tags" / "t" / "packages"
            # never written, then removed (there, written, it would have been zlib's page)
            assert report.removed == 0
        else:
            (tag,) = write_jekyll(catalog, tmp_path / tree, workers=workers).tags
            skipped = [f"t: {line}" for line in tag.skipped]
            packages = tmp_path / tree / "_cache" / "t"
    assert _clashing_folders(tmp_path / tree) == []
    assert sorted(p.name for p in packages.iterdir() if not p.name.startswith(".")) == ["zlib", "zstd"]
    clashes = [line for line in skipped if "where case is ignored" in line]
    expected = ["ZLIB", "Zlib"] + (["zlib."] if tree == "site" else [])  # (Spack's grammar refuses zlib.)
    assert [line.split(":")[1] for line in clashes] == [f" package {name!r}" for name in expected]
    assert all(line.endswith("'zlib' keeps it") for line in clashes)
    if tree == "site":  # the tag page links the page that is there, and names the others as text
        specs = json.loads((tmp_path / tree / "tags" / "t" / "columns.json").read_text())["specs"]
        assert sorted(specs["names"][n] for n in specs["unlinked"]) == ["ZLIB", "Zlib", "zlib."]


def test_the_server_links_each_name_it_answers(tmp_path: Path) -> None:
    """The server has no folders: ``Zlib`` has its page there, and its tag's page and
    data link it (they named it as text, as a static site must, and hid a page that is)."""
    _catalog(tmp_path / "c.sqlite", ["zlib", "Zlib", "ZLIB"]).close()
    app = create_app(tmp_path / "c.sqlite")
    page = get(app, "/tags/t/").text
    for name in ["zlib", "Zlib", "ZLIB"]:
        assert f'<a href="packages/{name}/index.html">{name}</a>' in page
        assert get(app, f"/tags/t/packages/{name}/").status_code == 200
    assert get(app, "/tags/t/columns.json").json()["specs"]["unlinked"] == []


def test_a_stale_temporary_that_is_a_symlink_is_removed_not_followed(tmp_path: Path) -> None:
    """A web server follows symlinks: a planted ``.index.html.<pid>.tmp`` leading to
    another file would stay served from the site, build after build."""
    with _catalog(tmp_path / "c.sqlite", ["zlib"]) as catalog:
        write_site(catalog, tmp_path / "site")
        secret = tmp_path / "secret.txt"
        secret.write_text("not for the web")
        folder = tmp_path / "site" / "tags" / "t" / "packages" / "zlib"
        planted = [folder / f".index.html.{dead_pid()}.tmp", folder / f".index.json.{dead_pid()}.tmp"]
        planted[0].symlink_to(secret)
        planted[1].symlink_to(tmp_path / "nowhere")  # (dangling)
        kept = folder / f".notes.txt.{dead_pid()}.tmp"  # not a name a build writes
        kept.symlink_to(secret)
        write_site(catalog, tmp_path / "site", full=True)  # (a current site is left as it is)
    assert [path for path in planted if os.path.lexists(path)] == []
    assert secret.read_text() == "not for the web" and kept.is_symlink()
    # The same of the function itself, and a folder of that name stays.
    again = folder / f".index.html.{dead_pid()}.tmp"
    again.symlink_to(folder)
    made = folder / f".index.json.{dead_pid()}.tmp"
    made.mkdir()
    assert remove_stale_temporaries([str(folder)], re.compile(r"index\.(html|json)")) == 1
    assert not os.path.lexists(again) and made.is_dir() and (folder / "index.html").is_file()


@pytest.mark.parametrize("tree", ["site", "jekyll"])
def test_a_tag_asked_for_alone_does_not_take_another_s_folder(tmp_path: Path, tree: str) -> None:
    """`--tag T` wrote tags/T beside the catalog's tag t's folder: the clash is told
    among every tag of the catalog, not only those asked for."""
    with _catalog(tmp_path / "d.sqlite", ["zlib"]) as catalog:
        write_tag(catalog, "T", [record("b" * 32, "zlib")])  # one folder with "t" where case is ignored
        if tree == "site":
            skipped = write_site(catalog, tmp_path / f"{tree}2", tags=["T"]).skipped
        else:
            skipped = list(write_jekyll(catalog, tmp_path / f"{tree}2", tags=["T"]).skipped)
    assert any(line.startswith("tag 'T': one folder with 't' where case is ignored") for line in skipped), skipped
    assert not (tmp_path / f"{tree}2" / ("tags" if tree == "site" else "_cache") / "T").exists()


def test_the_search_box_links_only_the_page_that_is_there() -> None:
    """The search box's packages.json linked `Zlib` in its tag, whose page is not written."""
    assert with_pages({"zlib": ["t", "u"], "Zlib": ["t"], "ZLIB": ["u", "v"]}) == {
        "zlib": ["t", "u"],
        "ZLIB": ["v"],
    }


def test_jekyll_reads_the_catalog_s_packages_once_for_all_its_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each tag written read every tag's packages again (a second apiece on a big catalog)."""
    calls = []
    read = Catalog.all_package_tags

    def counted(self: Catalog) -> dict[str, list[tuple[str, int]]]:
        calls.append(1)
        return read(self)

    with _catalog(tmp_path / "c.sqlite", ["zlib", "Zlib"]) as catalog:
        write_tag(catalog, "u", [record("b" * 32, "zlib")])
        monkeypatch.setattr(Catalog, "all_package_tags", counted)
        report = write_jekyll(catalog, tmp_path / "jekyll", workers=1)
    assert len(report.tags) == 2 and len(calls) == 1


def test_a_tag_that_comes_to_clash_leaves_as_a_full_build_leaves_it(tmp_path: Path) -> None:
    """A catalog's `T` built alone, then its `t` synced: `T` clashes and has no pages,
    and the build after it left `tags/T`, which a full build does not write. (The page
    of a spec only `T` holds stays, as those of a tag not asked for do: a spec page
    stays while any tag of the catalog holds its hash.)"""
    with _catalog(tmp_path / "c.sqlite", ["zlib"]) as catalog:
        catalog._db.execute("UPDATE tags SET name = 'T' WHERE name = 't'")
        write_site(catalog, tmp_path / "site")
        assert (tmp_path / "site/tags/T").is_dir()
        write_tag(catalog, "t", [record("c" * 32, "zstd")])
        after = write_site(catalog, tmp_path / "site")
        assert after.complete and any("tag 'T': one folder with 't'" in line for line in after.skipped)
        write_site(catalog, tmp_path / "fresh")
    built, fresh = file_bytes(tmp_path / "site"), file_bytes(tmp_path / "fresh")
    only_t = "specs/aa/" + "a" * 31 + "1"
    assert set(built) - set(fresh) == {f"{only_t}.html", f"{only_t}.json"} and set(fresh) <= set(built)
    assert all(built[path] == data for path, data in fresh.items())
    assert not (tmp_path / "site/tags/T").exists()
    assert with_pages({"zlib": ["T", "t"], "zstd": ["t"]}) == {"zlib": ["t"], "zstd": ["t"]}


def test_a_comparison_with_a_tag_that_cannot_be_a_folder_is_not_written(tmp_path: Path) -> None:
    """The older tag of a pair names a folder under the newer's ``compare``: one whose
    name cannot be a folder (not ASCII) has no comparison page, as it has no pages."""
    with _catalog(tmp_path / "c.sqlite", ["zlib"]) as catalog:
        write_tag(catalog, DECOMPOSED, [record("d" * 32, "zstd")])
        report = write_site(catalog, tmp_path / "site", compare=[(DECOMPOSED, "t"), ("t", DECOMPOSED)])
    assert report.complete and f"tag {DECOMPOSED!r}: {DECOMPOSED!r} is not ASCII" in report.skipped[0]
    written = {str(path.relative_to(tmp_path / "site")) for path in (tmp_path / "site/tags").rglob("*")}
    assert written and not any(DECOMPOSED in path or "compare" in path for path in written)


def test_a_trailing_space_is_one_folder_with_the_name_without_it() -> None:
    """Windows and its shares drop a name's trailing spaces as they drop its dots: a
    hostile mirror's ``zlib `` would be written over ``zlib``."""
    assert folder_key("zlib ") == folder_key("zlib. ") == folder_key("Zlib .") == "zlib"
    assert folder_clashes(["zlib", "zlib ", "zstd"]) == {
        "zlib ": "one folder with 'zlib' where case is ignored; 'zlib' keeps it"
    }


def test_a_name_beyond_ascii_does_not_take_the_page_of_the_name_it_lowercases_to(tmp_path: Path) -> None:
    """The Kelvin sign lowercases to ASCII ``k``: a hostile ``\\u212aokkos`` (which has no
    page) was counted as one folder with the real ``Kokkos``, and neither being written
    as their key ``kokkos``, the real one lost its page too."""
    kelvin = "\u212aokkos"
    assert folder_key(kelvin) == folder_key("Kokkos") == "kokkos" and not has_page(kelvin)
    with _catalog(tmp_path / "c.sqlite", ["Kokkos", kelvin]) as catalog:
        report = write_site(catalog, tmp_path / "site")
    assert not [line for line in report.skipped if "where case is ignored" in line], report.skipped
    packages = tmp_path / "site" / "tags" / "t" / "packages"
    assert sorted(p.name for p in packages.iterdir()) == ["Kokkos"]
    specs = json.loads((tmp_path / "site" / "tags" / "t" / "columns.json").read_text())["specs"]
    assert [specs["names"][n] for n in specs["unlinked"]] == [kelvin]


def test_a_spec_page_does_not_link_a_package_page_its_name_cannot_have(tmp_path: Path) -> None:
    """A spec of ``café`` (not ASCII: no package page) linked ``packages/caf%C3%A9/``
    from its crumbs, a page never written; it names the package as text."""
    with _catalog(tmp_path / "c.sqlite", ["zlib", COMPOSED]) as catalog:
        write_site(catalog, tmp_path / "site")
    site = tmp_path / "site"
    pages = {
        name: (site / "specs" / "aa" / f"{n:032d}.html".replace("0", "a")).read_text()
        for n, name in enumerate(["zlib", COMPOSED], 1)
    }
    assert 'href="../../tags/t/packages/zlib/index.html"' in pages["zlib"]
    crumbs = pages[COMPOSED].split('<p class="crumbs">')[1].split("</p>")[0]
    assert f"/ {COMPOSED} /" in crumbs and "packages/" not in crumbs
    assert "packages/" not in pages[COMPOSED].replace('href="../../tags/t/packages/zlib', "")
