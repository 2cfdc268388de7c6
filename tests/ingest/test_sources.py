"""A folder's many small files: read by the calling thread while they are cached, by
several threads once the reads wait (on a disk or a network file system)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from cachedex.errors import CachedexError, SourceNotFound
from cachedex.ingest.local_source import LocalSource


def _folder(tmp_path: Path, count: int) -> list[tuple[int, str]]:
    for number in range(count):
        (tmp_path / f"f{number}.txt").write_text(str(number))
    return [(number, f"f{number}.txt") for number in range(count)]


def _keep(url: str, data: bytes | bytearray) -> bytes:
    return bytes(data)


def _read_all(source: LocalSource, items: list[tuple[int, str]]) -> tuple[list[tuple[int, object]], set[int]]:
    threads: set[int] = set()

    def decode(url: str, data: bytes | bytearray) -> int:
        threads.add(threading.get_ident())
        return int(data)

    return list(source.read_many(items, decode, limit=100)), threads


def test_cached_files_are_read_by_the_calling_thread_in_order(tmp_path: Path) -> None:
    items = _folder(tmp_path, 3000)
    items.insert(700, (-1, "absent.txt"))
    results, threads = _read_all(LocalSource(tmp_path, str(tmp_path)), items)
    assert threads == {threading.get_ident()}
    assert [key for key, _ in results] == [key for key, _ in items]
    assert all(value == key for key, value in results if key >= 0)
    assert isinstance(dict(results)[-1], SourceNotFound)


class _SlowDisk(LocalSource):
    """Every read waits, as on a disk that seeks (the wait is not CPU time)."""

    def _read(self, path: str, limit: int, root_fd: int | None) -> bytes | bytearray:
        time.sleep(0.0005)
        return super()._read(path, limit, root_fd)


def test_reads_that_wait_are_spread_over_threads_in_order(tmp_path: Path) -> None:
    items = _folder(tmp_path, 3000)
    items.insert(2000, (-1, "absent.txt"))
    results, threads = _read_all(_SlowDisk(tmp_path, str(tmp_path)), items)
    assert len(threads) > 2
    assert [key for key, _ in results] == [key for key, _ in items]
    assert all(value == key for key, value in results if key >= 0)
    assert isinstance(dict(results)[-1], CachedexError)


def test_a_fifo_in_a_folder_mirror_is_an_error_not_a_wait(tmp_path: Path) -> None:
    """Opening a FIFO for reading waits for a writer; a mirror's reads must not."""
    import os

    (tmp_path / "m").mkdir()
    fifo = tmp_path / "m" / "x.spec.manifest.json"
    os.mkfifo(fifo)
    (tmp_path / "m" / "ok.json").write_bytes(b'{"a": 1}')
    source = LocalSource(tmp_path / "m", (tmp_path / "m").as_uri())
    found: list[object] = []
    reader = threading.Thread(
        target=lambda: found.extend(source.read_many([("x", fifo.name), ("ok", "ok.json")], _keep, limit=1024)),
        daemon=True,
    )
    reader.start()
    reader.join(10)
    if reader.is_alive():  # let the stuck open go before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert not reader.is_alive()
    assert dict(found) == {"x": b"", "ok": b'{"a": 1}'}  # empty: the manifest's decoder refuses it
