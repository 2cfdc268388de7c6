"""A mirror in a local folder: its reads honour their limit to the byte, a FIFO or a
path the system refuses is an error naming the file (never a hang or a crash), and
its views are the mirror's own folders."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from cachedex.errors import SourceError, SourceNotFound, TooBig
from cachedex.ingest.layouts import find_views
from cachedex.ingest.local_source import LocalSource
from tests.helpers import write_v2_mirror, write_v3_mirror, write_v3_view

EMPTY_INDEX = {"database": {"version": "8", "installs": {}}}


def _local(root: Path) -> LocalSource:
    return LocalSource(root, root.as_uri())


def test_a_small_file_of_exactly_the_limit_is_read_and_one_byte_more_is_too_big(tmp_path: Path) -> None:
    limit = 100
    (tmp_path / "exact").write_bytes(b"x" * limit)
    (tmp_path / "over").write_bytes(b"x" * (limit + 1))
    assert _local(tmp_path).read("exact", limit=limit) == b"x" * limit
    with pytest.raises(TooBig, match="larger than 100 bytes") as caught:
        _local(tmp_path).read("over", limit=limit)
    assert caught.value.url.endswith("/over")


def test_a_fifo_read_from_a_mirror_does_not_wait_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "index.json"
    os.mkfifo(fifo)
    outcome: list[object] = []
    reader = threading.Thread(
        target=lambda: outcome.append(_local(tmp_path).read("index.json", limit=100)), daemon=True
    )
    reader.start()
    reader.join(10)
    if reader.is_alive():  # a blocking open: give it a writer, so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO in a mirror waited for a writer")
    assert outcome == [b""]  # (no writer: nothing in it)


def test_a_stream_longer_than_its_limit_is_too_big_not_cut_short(tmp_path: Path) -> None:
    # A FIFO has no size (as a /proc file): only its bytes read tell it is too big.
    fifo = tmp_path / "index.json"
    os.mkfifo(fifo)
    limit = 40_000  # more than the first read, less than a pipe's buffer
    keep_open = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (holds the written bytes for the source)
    try:
        writer = os.open(fifo, os.O_WRONLY)
        os.write(writer, b"x" * (limit + 1000))
        os.close(writer)
        with pytest.raises(TooBig, match="larger than 40,000 bytes"):
            _local(tmp_path).read("index.json", limit=limit)
    finally:
        os.close(keep_open)


def test_a_path_holding_a_nul_byte_is_an_error_naming_it_not_a_crash(tmp_path: Path) -> None:
    source = _local(tmp_path)
    with pytest.raises(SourceError, match="cannot read"):
        source.read("build_cache/index\0.json", limit=100)
    assert source.size("build_cache/index\0.json") is None


def test_a_folder_where_a_file_is_expected_is_a_file_not_found(tmp_path: Path) -> None:
    # (a mirror then reads on as without that file: a folder is no index)
    (tmp_path / "build_cache" / "index.json").mkdir(parents=True)
    with pytest.raises(SourceNotFound, match="is a folder, not a file"):
        _local(tmp_path).read("build_cache/index.json", limit=100)


def test_a_symlinked_view_folder_is_not_a_view_of_the_mirror(tmp_path: Path) -> None:
    # A view is a folder of the mirror itself: a symlink may point anywhere on this machine.
    mirror, other = tmp_path / "mirror", tmp_path / "other"
    write_v3_mirror(mirror, EMPTY_INDEX)
    write_v3_view(mirror, "e4s", EMPTY_INDEX)
    write_v3_view(other, "outside", EMPTY_INDEX)
    (mirror / "v3/manifests/index/outside").symlink_to(other / "v3/manifests/index/outside")
    assert find_views(_local(mirror)) == ["e4s"]


def test_a_folder_named_like_an_index_manifest_does_not_make_a_view(tmp_path: Path) -> None:
    write_v3_mirror(tmp_path, EMPTY_INDEX)
    (tmp_path / "v3/manifests/index/fake/index.manifest.json").mkdir(parents=True)
    assert find_views(_local(tmp_path)) == []


def test_a_mirror_without_v3_folders_has_no_views_rather_than_unlistable_ones(tmp_path: Path) -> None:
    write_v2_mirror(tmp_path, EMPTY_INDEX)
    assert find_views(_local(tmp_path)) == []
