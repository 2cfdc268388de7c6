"""Mutation-hunt tests for cachedex.publish.files: the lock, atomic writes, modes,
leftovers of killed runs, and never writing through a symlink."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from cachedex.errors import OutputError
from cachedex.publish.files import (
    LOCK_FILE,
    Replacer,
    held_alone,
    remove_old_files,
    remove_stale_temporaries,
    safe_folder,
    update_file,
    write_atomically,
    write_new,
)
from tests.helpers import dead_pid


def test_a_second_holder_of_the_lock_is_refused_even_in_the_same_process(tmp_path: Path) -> None:
    # Two runs (here: two opens of the lock file) must exclude each other.
    with held_alone(tmp_path), pytest.raises(OutputError, match="another cachedex run"), held_alone(tmp_path):
        pass
    with held_alone(tmp_path):  # released once the first block ends
        pass


def test_a_symlinked_lock_file_is_refused_and_nothing_is_made_where_it_leads(tmp_path: Path) -> None:
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    site.mkdir()
    elsewhere.mkdir()
    (site / LOCK_FILE).symlink_to(elsewhere / "planted")
    with pytest.raises(OutputError, match="cannot open"), held_alone(site):
        pass
    assert list(elsewhere.iterdir()) == []


def test_a_temporary_file_a_killed_run_of_the_same_pid_left_is_not_reused(tmp_path: Path) -> None:
    # A longer leftover, written into rather than recreated, would leave its tail in the page.
    page = tmp_path / "index.html"
    (tmp_path / f".index.html.{os.getpid()}.tmp").write_bytes(b"x" * 100)
    write_atomically(str(page), b"new page")
    assert page.read_bytes() == b"new page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_bytes(b"old")
    page.chmod(0o640)
    assert update_file(str(page), b"new") is True
    assert page.read_bytes() == b"new" and stat.S_IMODE(page.stat().st_mode) == 0o640


def test_a_symlink_in_a_page_s_place_does_not_lend_the_page_its_mode(tmp_path: Path) -> None:
    # A symlink's own mode is 0o777: a page made world-writable from it would be a hole.
    target = tmp_path / "target"
    target.write_bytes(b"elsewhere")
    page = tmp_path / "index.html"
    page.symlink_to(target)
    write_atomically(str(page), b"page")
    assert not page.is_symlink() and page.read_bytes() == b"page"
    assert stat.S_IMODE(page.stat().st_mode) & 0o022 == 0
    assert target.read_bytes() == b"elsewhere"


def test_a_failed_replacement_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_bytes(b"old")

    def refuse(temp: str, path: str) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(str(page), b"new", refuse)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html"]
    assert page.read_bytes() == b"old"


def test_a_replacer_takes_over_the_folder_a_killed_process_of_its_pid_left(tmp_path: Path) -> None:
    replacer = Replacer(str(tmp_path))
    os.mkdir(replacer.folder)
    Path(replacer.folder, "1").write_bytes(b"left")
    page = tmp_path / "index.html"
    page.write_bytes(b"old")
    write_atomically(str(page), b"new", replacer.replace)
    replacer.close()
    assert page.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html"]


def test_old_files_of_a_running_process_are_kept_and_of_a_dead_one_removed(tmp_path: Path) -> None:
    alive = tmp_path / f".cachedex-old-{os.getpid()}"
    dead = tmp_path / f".cachedex-old-{dead_pid()}"
    for folder in (alive, dead):
        folder.mkdir()
        (folder / "1").write_bytes(b"old page")
    assert remove_old_files(str(tmp_path)) == 1
    assert alive.is_dir() and not dead.exists()


def test_a_file_where_old_files_are_kept_neither_stops_a_write_nor_is_counted_removed(tmp_path: Path) -> None:
    """A file (not a folder) named as a Replacer's folder of old files: one of this
    process's made every write of a page that replaced another fail, and one of a dead
    process was counted removed and left in place."""
    page = tmp_path / "index.html"
    page.write_bytes(b"old")
    (tmp_path / f".cachedex-old-{os.getpid()}").write_bytes(b"x")
    replacer = Replacer(str(tmp_path))
    try:
        write_atomically(str(page), b"new", replacer.replace)
    finally:
        replacer.close()
    assert page.read_bytes() == b"new"
    dead = tmp_path / f".cachedex-old-{dead_pid()}"
    dead.write_bytes(b"x")
    assert remove_old_files(str(tmp_path)) == 1 and not dead.exists()


def test_write_new_refuses_a_file_that_exists(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_bytes(b"a longer page already here")
    with pytest.raises(FileExistsError):
        write_new(str(page), b"short")
    assert page.read_bytes() == b"a longer page already here"


PAGES = re.compile(r"index\.(?:html|json)")


def test_only_stale_temporaries_of_pages_are_removed_and_counted(tmp_path: Path) -> None:
    dead = dead_pid()
    stale = [tmp_path / f".index.html.{dead}.tmp", tmp_path / f".index.json.{dead}.tmp"]
    for path in stale:
        path.write_bytes(b"part")
    kept = [
        tmp_path / f".notes.txt.{dead}.tmp",  # not a file name the writer makes
        tmp_path / f".index.html.{os.getpid()}.tmp",  # its process runs: may be writing it
    ]
    for path in kept:
        path.write_bytes(b"part")
    symlinked = tmp_path / f".index.html.{dead + 1_000_000_000}.tmp"  # (no such pid: dead)
    symlinked.symlink_to(tmp_path / "nowhere")
    huge = tmp_path / f".index.json.{10**30}.tmp"  # a pid past any: no process has it
    huge.write_bytes(b"part")
    file_in_place = tmp_path / "a-file"
    file_in_place.write_bytes(b"not a folder")
    assert remove_stale_temporaries([str(tmp_path), str(file_in_place), str(tmp_path / "missing")], PAGES) == 4
    assert not any(os.path.lexists(path) for path in [*stale, symlinked, huge])
    assert all(path.is_file() for path in kept)


def test_a_fifo_in_an_empty_file_s_place_is_replaced_by_a_regular_file(tmp_path: Path) -> None:
    # A FIFO reads as empty and has size 0: only its type tells it from an empty file.
    path = tmp_path / "empty.json"
    os.mkfifo(path)
    assert update_file(str(path), b"") is True
    assert stat.S_ISREG(path.lstat().st_mode) and path.read_bytes() == b""


def test_a_folder_name_holding_a_nul_is_refused_as_output_error(tmp_path: Path) -> None:
    # Without the check, the OS call raises ValueError: a traceback instead of a report.
    with pytest.raises(OutputError, match="leads outside"):
        safe_folder(tmp_path, "tags", "a\0b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tags"]


def test_a_folder_the_file_system_cannot_name_is_reported_as_output_error(tmp_path: Path) -> None:
    too_long = "a" * (os.pathconf(tmp_path, "PC_NAME_MAX") + 1)
    with pytest.raises(OutputError, match="cannot create"):
        safe_folder(tmp_path, too_long)
