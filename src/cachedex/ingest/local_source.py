"""A mirror in a local folder: :class:`LocalSource`, which reads a folder's many small
files with the fewest system calls, on this thread alone while they come from the page
cache and on a few threads while they wait on the disk. Apart from :mod:`.sources` (the
:class:`~.sources.Source` it implements, and :func:`~.sources.open_source`, which opens
it) for the tuning of those reads, which no other source shares."""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..errors import CachedexError, SourceError, SourceNotFound, TooBig
from .sources import Decoder, Fetched, Source, read_at_most

if TYPE_CHECKING:
    from .http_requests import ProgressCallback

__all__ = ["LocalSource"]

K = TypeVar("K")
V = TypeVar("V")

#: Bytes asked by the first read of a file: more than a spec manifest, signed or not.
_FIRST_READ = 16 * 1024
#: Threads reading a folder's small files at once when the reads wait on the disk.
_LOCAL_READERS = 4
#: Files read per window, and per task of a reading thread.
_WINDOW, _RUN = 512, 64
#: A threaded read checks every this many windows whether the files are cached by now.
_RECHECK = 8


class _Waits:
    """Whether this thread waited for most of what it did since this was made.

    On Linux, by the voluntary context switches of the thread: one per read that waited
    on the disk; a thread that was only preempted (another process wanted the CPU)
    switches involuntarily, and its reads were no slower. Elsewhere, by the time that
    was not this thread's CPU time, which preemption inflates too."""

    def __init__(self) -> None:
        self._switches = _voluntary_switches()
        self._wall, self._cpu = time.perf_counter(), time.thread_time()

    def most(self, reads: int) -> bool:
        """Whether at least a quarter of ``reads`` waited (or, without the count, most of
        the time was spent waiting)."""
        switches = _voluntary_switches()
        if switches is not None and self._switches is not None:
            return switches - self._switches >= reads / 4
        wall, cpu = time.perf_counter() - self._wall, time.thread_time() - self._cpu
        return wall - cpu > wall / 2


def _voluntary_switches() -> int | None:
    """This thread's voluntary context switches so far (Linux), or None."""
    who = getattr(resource, "RUSAGE_THREAD", None)
    return None if who is None else resource.getrusage(who).ru_nvcsw


class LocalSource(Source):
    """A mirror in a local folder (given as a path or a ``file://`` URL)."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self._root_text = str(root)
        self.url = url

    def fetch(
        self,
        path: str,
        *,
        limit: int,
        etag: str | None = None,
        last_modified: str | None = None,
        progress: ProgressCallback | None = None,
    ) -> Fetched | None:
        return Fetched(data=self.read(path, limit=limit))

    def read(self, path: str, *, limit: int) -> bytes | bytearray:
        return self._read(path, limit, None)

    def _read(self, path: str, limit: int, root_fd: int | None) -> bytes | bytearray:
        """``path``'s bytes, opened under ``root_fd`` (the root, opened once for many
        reads: the kernel then walks only the path's own parts) or by its full path."""
        # os-level calls: a sync reads one small manifest per spec, so this is hot.
        try:
            # Non-blocking: a FIFO in a mirror would otherwise wait for a writer forever.
            if root_fd is None:
                fd = os.open(os.path.join(self._root_text, path), os.O_RDONLY | os.O_NONBLOCK)
            else:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK, dir_fd=root_fd)
            try:
                # A manifest fits in one small read, without asking for its size first (a
                # system call per spec saved). Only a file that fills it is asked: reading
                # up to the limit would allocate (and map) that much every time.
                data = os.read(fd, min(_FIRST_READ, limit + 1))
                if len(data) == _FIRST_READ:
                    size = os.fstat(fd).st_size
                    if size > limit:
                        raise TooBig(self.join(path), f"larger than {limit:,} bytes, the limit for this kind of file")
                    if size:  # a file (an index): read whole again, rather than copy the parts
                        os.lseek(fd, 0, os.SEEK_SET)
                        data = os.read(fd, size + 1)
                    else:  # a pipe or /proc: its size is unknown
                        data += read_at_most(functools.partial(os.read, fd), limit + 1 - len(data))
            finally:
                os.close(fd)
        except FileNotFoundError as exc:
            raise SourceNotFound(self.join(path), "not found") from exc
        except IsADirectoryError as exc:
            raise SourceNotFound(self.join(path), "is a folder, not a file") from exc
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            raise SourceError(self.join(path), f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
        if len(data) > limit:
            raise TooBig(self.join(path), f"larger than {limit:,} bytes, the limit for this kind of file")
        return data

    def size(self, path: str) -> int | None:
        try:
            return (self.root / path).stat().st_size
        except (OSError, ValueError):
            return None

    def read_many(
        self, items: Iterable[tuple[K, str]], decode: Decoder[V], *, limit: int
    ) -> Iterator[tuple[K, V | CachedexError]]:
        root_fd = self._open_root()
        base = self.join("")  # (each file's URL is the decoder's to name in a problem)

        def one(item: tuple[K, str]) -> tuple[K, V | CachedexError]:
            key, path = item
            try:
                return key, decode(base + path, self._read(path, limit, root_fd))
            except CachedexError as exc:
                return key, exc

        # Files in the page cache are read fastest by this thread alone: each read is a
        # few microseconds of system calls, and threads would only pass the GIL around
        # (4 threads took 4 x as long here). Files on a disk or a network file system wait
        # on it, one seek each: then several threads keep reads in flight (the reads
        # release the GIL). A window read here tells which: how often the thread had to
        # wait (see _Waits). A threaded run checks again every few windows, as the cache
        # warms.
        pending = iter(items)
        threaded, windows = False, 0
        with contextlib.ExitStack() as stack, ThreadPoolExecutor(max_workers=_LOCAL_READERS) as pool:
            if root_fd is not None:
                stack.callback(os.close, root_fd)
            while window := list(islice(pending, _WINDOW)):
                if threaded and windows % _RECHECK:
                    runs = [window[i : i + _RUN] for i in range(0, len(window), _RUN)]
                    for run in pool.map(lambda run: [one(item) for item in run], runs):
                        yield from run
                else:
                    waits = _Waits()
                    done = [one(item) for item in window]
                    threaded = waits.most(len(window))
                    yield from done
                windows += 1

    def _open_root(self) -> int | None:
        """The root folder opened, to read many files under it; None where that cannot
        be (each is then opened by its full path, which says what is wrong)."""
        if os.open not in os.supports_dir_fd:
            return None
        try:
            return os.open(self._root_text, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return None

    def list_dir(self, path: str) -> list[str] | None:
        try:
            return sorted(entry.name for entry in os.scandir(self.root / path) if entry.is_file())
        except OSError:
            return None

    def list_folders(self, path: str) -> list[str] | None:
        try:
            # A symlink is not followed: a view is a folder of the mirror itself.
            return sorted(e.name for e in os.scandir(self.root / path) if e.is_dir(follow_symlinks=False))
        except FileNotFoundError:
            return []
        except OSError:
            return None
