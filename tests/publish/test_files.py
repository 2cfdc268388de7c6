"""Atomic replacement whose old files a thread removes (files.Replacer)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from cachedex.errors import OutputError
from cachedex.publish.files import Replacer, safe_folder, same_bytes, update_file, write_atomically


def test_a_replaced_file_is_atomic_and_its_old_file_is_gone_after_close(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(b"old")
    replacer = Replacer(str(tmp_path))
    with open(page, "rb") as reader:  # a reader holding the old file keeps reading it whole
        assert update_file(str(page), b"new", replacer.replace)
        assert reader.read() == b"old"
    folder = tmp_path / f".cachedex-old-{os.getpid()}"
    assert folder.is_dir()  # where the old file waits for the thread
    replacer.close()
    assert page.read_bytes() == b"new"
    assert not folder.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]


def test_the_old_files_are_really_removed(tmp_path: Path) -> None:
    replacer = Replacer(str(tmp_path))
    pages = [tmp_path / f"{n}.html" for n in range(50)]
    for page in pages:
        page.write_bytes(b"old" * 1000)
    for page in pages:
        assert update_file(str(page), b"new", replacer.replace)
    replacer.close()
    assert all(page.read_bytes() == b"new" and os.stat(page).st_nlink == 1 for page in pages)
    assert sorted(tmp_path.iterdir()) == sorted(pages)  # no old file left anywhere


def test_a_new_file_and_an_unchanged_one_leave_nothing_to_remove(tmp_path: Path) -> None:
    replacer = Replacer(str(tmp_path))
    same = tmp_path / "same.html"
    same.write_bytes(b"same")
    assert not update_file(str(same), b"same", replacer.replace)
    assert update_file(str(tmp_path / "new.html"), b"new", replacer.replace)
    replacer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.html", "same.html"]


def test_a_symlink_in_place_of_the_folder_is_removed_not_followed(tmp_path: Path) -> None:
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    site.mkdir()
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("not the site's")
    (site / f".cachedex-old-{os.getpid()}").symlink_to(elsewhere)
    (site / "page.html").write_text("old")
    replacer = Replacer(str(site))
    assert update_file(str(site / "page.html"), b"new", replacer.replace)
    replacer.close()
    assert (elsewhere / "keep").read_text() == "not the site's"
    assert sorted(p.name for p in site.iterdir()) == ["page.html"]


def test_same_bytes_tells_every_kind_of_difference(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(b"abcdef")
    assert same_bytes(str(page), b"abcdef")
    assert not same_bytes(str(page), b"abcdeX")  # same size, other bytes: read and compared
    assert not same_bytes(str(page), b"abcde") and not same_bytes(str(page), b"abcdefg")
    assert not same_bytes(str(tmp_path / "missing"), b"")
    (tmp_path / "link.html").symlink_to(page)
    assert not same_bytes(str(tmp_path / "link.html"), b"abcdef")  # a symlink is never the page
    (tmp_path / "empty").write_bytes(b"")
    assert same_bytes(str(tmp_path / "empty"), b"")


def test_a_fifo_in_a_pages_place_is_replaced_not_waited_on(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    os.mkfifo(page)
    done: list[bool] = []
    writer = threading.Thread(target=lambda: done.append(update_file(str(page), b"<p>page</p>")), daemon=True)
    writer.start()
    writer.join(10)
    assert done == [True], "update_file waited on a FIFO that nothing writes"
    assert page.is_file() and page.read_bytes() == b"<p>page</p>"


def test_a_big_file_is_written_and_compared_whole(tmp_path: Path) -> None:
    page = tmp_path / "twin.json"
    data = bytes(range(256)) * 80_000  # 20 MB: a hub library's twin is ~10 MB
    assert update_file(str(page), data)
    assert page.read_bytes() == data
    assert same_bytes(str(page), data)
    assert not same_bytes(str(page), data[:-1] + b"X")  # its last byte read and compared


def test_a_write_that_stalls_fails_and_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(b"old")
    monkeypatch.setattr(os, "write", lambda fd, data: 0)  # takes no byte, and says no error
    with pytest.raises(OSError, match="no byte written"):
        write_atomically(str(page), b"new")
    monkeypatch.undo()
    assert page.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]  # no temporary file left


def test_safe_folder_makes_real_folders_and_refuses_what_leads_elsewhere(tmp_path: Path) -> None:
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    site.mkdir()
    elsewhere.mkdir()
    made = safe_folder(site, "tags", "t", "packages", "zlib")
    assert made == site / "tags/t/packages/zlib" and made.is_dir()
    assert safe_folder(site, "tags", "t") == site / "tags/t"  # there already: fine
    (site / "tags" / "link").symlink_to(elsewhere)
    (site / "file").write_text("a page")
    refused = {
        ("tags", "link", "x"): "is a symlink",
        ("file",): "exists and is not a folder",
        ("file", "x"): "exists and is not a folder",
        ("..",): "leads outside",
        ("tags", ".", "x"): "leads outside",
        ("tags", ""): "leads outside",
        ("a/b",): "leads outside",
    }
    for parts, problem in refused.items():
        with pytest.raises(OutputError, match=problem):
            safe_folder(site, *parts)
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "x").exists()


def test_safe_folder_takes_a_folder_another_worker_made_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make = os.mkdir

    def made_by_another(path: str, *args: object) -> None:
        make(path)
        raise FileExistsError(path)

    monkeypatch.setattr(os, "mkdir", made_by_another)
    assert safe_folder(tmp_path, "a", "b").is_dir()
