"""The spec manifests of a mirror, read and decoded to sizes by a second process.

Reading a spec manifest is CPU work: from a folder a few system calls and a small
decode; over HTTP libcurl's transfer, the HTTP engine's bookkeeping and the decode
(~30 us a manifest from a server on the same machine). Threads cannot share it (they
take turns holding the GIL). A first sync of a big mirror reads one manifest per spec
(250,000) while it also decodes indexes and writes specs: another process does the
reads on another core, over its own HTTP client for an ``http(s)://`` mirror, and sends
back each size, a chunk at a time. If that process cannot start or dies, the manifests
it did not report are read here, as before.

Over HTTP the process is ``python -m cachedex.ingest.reading_process``, not a
multiprocessing child: that would import the caller's main module again, and a script
without a ``__main__`` guard would run twice. It reads one request on standard input and
writes length-prefixed chunks of results on standard output.

From a folder, on Linux, it is a forked copy of this process instead
(:class:`ForkedSizes`): it inherits the decoded index, so that it, not this process,
decodes each spec's name and version and makes its manifest's path (~0.5 s for
250,000 specs, which this process spent before its first batch), and it starts at once,
with no interpreter to load and no request to send.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

import msgspec

from .._perf import can_fork, end_fork, fork_alone
from ..errors import CachedexError, ChecksumError, IndexFormatError, SourceError, SourceNotFound, TooBig
from .local_source import LocalSource
from .manifests import manifest_size
from .sources import HttpSource

__all__ = ["ForkedSizes", "PathOf", "Results", "Unasked", "sizes_in_process"]

#: Results sent at once: few enough to show progress, many enough to cost little.
_CHUNK = 4096
#: The longest a result waits to be sent (seconds).
_CHUNK_SECONDS = 0.5
#: The errors a read may end in, rebuilt by name on this side.
_ERRORS: dict[str, type[SourceError] | type[IndexFormatError]] = {
    cls.__name__: cls for cls in (SourceError, SourceNotFound, ChecksumError, TooBig, IndexFormatError)
}


class _Request(msgspec.Struct, array_like=True):
    root: str  # a folder's path; '' over HTTP
    url: str
    limit: int
    items: list[tuple[str, str]]  # (key, path under root)
    # Over HTTP, the sync's ``http:`` settings (the fields of HttpOptions: a folder's
    # reading process does not import the config, nor libcurl).
    http: dict[str, object] | None = None
    # A private mirror's credentials: the NAMES of the environment variables holding them
    # (the fields of RegistryAuth), which the reading process inherits; never the secrets.
    auth: dict[str, object] | None = None


#: A result that is not a size: (key, (error class, url, problem)).
_Problem = tuple[str, tuple[str, str, str]]


class _Chunk(msgspec.Struct, array_like=True):
    """Results sent at once: the sizes as one map (taken in whole by the receiving side,
    not a result at a time), the problems apart."""

    sizes: dict[str, int]
    problems: list[_Problem]


_decode_chunk = msgspec.msgpack.Decoder(_Chunk).decode
#: The "error class" of a hash whose manifest a forked reader did not read.
_UNASKED = "unasked"
#: Results for the size of each of a chunk's hashes that has one, and what became of the others.
Results = tuple[dict[str, int], list[tuple[str, "CachedexError | Unasked"]]]


class Unasked(msgspec.Struct, frozen=True):
    """A hash whose manifest was not read: its node names no name and version, or its
    path was refused (``why`` says so, once)."""

    why: str | None


#: What a forked reader makes of a hash: its manifest's path, or why it reads none
#: (``(None, None)``: its node names no name and version; ``(None, why)``: refused).
PathOf = Callable[[str], tuple[str | None, str | None]]


def sizes_in_process(
    source: LocalSource | HttpSource, items: list[tuple[str, str]], *, limit: int
) -> Iterator[tuple[str, int | CachedexError]]:
    """What ``source.read_many(items, manifest_size, limit=limit)`` yields, read by
    another process."""
    received: set[str] = set()
    finished = False
    # The child imports cachedex from where this process did, whatever sys.path it had.
    package_root = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
        PARENT_ENV: str(os.getpid()),
    }
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            # Out of the terminal's process group: a Ctrl-C reaches this process alone,
            # which stops the reads and kills the child (below). Killed by the Ctrl-C
            # too, it looked like a crash, and this process read every size left itself.
            process_group=0,
        )
    except OSError:
        process = None
    if process is not None:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(msgspec.msgpack.encode(_request(source, items, limit)))
            process.stdin.close()
            while data := _read_chunk(process.stdout):
                chunk = _decode_chunk(data)
                received.update(chunk.sizes)
                yield from chunk.sizes.items()
                for key, problem in chunk.problems:
                    received.add(key)
                    result = _result(problem)
                    assert not isinstance(result, Unasked)  # (a process asked for paths reads each)
                    yield key, result
            finished = True
        except (OSError, ValueError, msgspec.DecodeError):  # it died or said something else: read the rest here
            pass
        finally:
            process.stdout.close()
            if process.poll() is None:
                process.kill()
            process.wait()
    if not finished:
        rest = [item for item in items if item[0] not in received]
        yield from source.read_many(rest, manifest_size, limit=limit)


class ForkedSizes:
    """The size of each of ``hashes``' manifests in folder ``source`` (where ``path_of``
    says), read by a forked copy of this process (``path_of`` runs there) as soon as this
    is made; iterating gives :data:`Results` a chunk at a time (each hash once), and
    reads here what that process does not report (none could be forked, or it died)."""

    def __init__(self, source: LocalSource, hashes: Sequence[str], path_of: PathOf, *, limit: int) -> None:
        self._source, self._hashes, self._path_of, self._limit = source, hashes, path_of, limit
        self._lock = threading.Lock()  # (the pid is reaped by the reading thread, and stopped by another)
        self._stopped = False
        self._pid, self._stream = _fork_reader(source, hashes, path_of, limit) if can_fork() else (0, None)

    def __iter__(self) -> Iterator[Results]:
        received: set[str] = set()
        try:
            if self._stream is not None:
                with contextlib.suppress(OSError, ValueError, msgspec.DecodeError):
                    while data := _read_chunk(self._stream):
                        chunk = _decode_chunk(data)
                        received.update(chunk.sizes)
                        received.update(key for key, _ in chunk.problems)
                        yield chunk.sizes, [(key, _result(problem)) for key, problem in chunk.problems]
        finally:
            if self._stream is not None:
                self._stream.close()
            self._end(reap=True)
        if self._stopped:
            return
        unasked: list[tuple[str, str | None]] = []
        rest = list(_paths((h for h in self._hashes if h not in received), self._path_of, unasked))
        # Nothing is left to make here: the paths' maker (the root's decoded index, and
        # the index's bytes its raw nodes view) is let go before the sync's write ends
        # (a 30,000-record tag's peak).
        self._hashes, self._path_of = (), _released
        yield {}, [(key, Unasked(why)) for key, why in unasked]
        for key, result in self._source.read_many(rest, manifest_size, limit=self._limit):
            yield ({key: result}, []) if isinstance(result, int) else ({}, [(key, result)])

    def stop(self) -> None:
        """End the forked process now (the iteration then ends, reading nothing here)."""
        self._stopped = True
        self._end(reap=False)

    def _end(self, *, reap: bool) -> None:
        with self._lock:
            if not self._pid:
                return
            end_fork(self._pid, reap=reap)
            if reap:
                self._pid = 0


def _released(dag_hash: str) -> tuple[str | None, str | None]:
    raise RuntimeError("ForkedSizes read twice")  # (an iteration is one use)


def _paths(hashes: Iterable[str], path_of: PathOf, unasked: list[tuple[str, str | None]]) -> Iterator[tuple[str, str]]:
    """(hash, path) of each manifest to read; the hashes not to go to ``unasked``, with why."""
    for dag_hash in hashes:
        path, why = path_of(dag_hash)
        if path is None:
            unasked.append((dag_hash, why))
        else:
            yield dag_hash, path


def _fork_reader(
    source: LocalSource, hashes: Sequence[str], path_of: PathOf, limit: int
) -> tuple[int, IO[bytes] | None]:
    """(pid, the read end of its results) of a forked reader; (0, None) if none starts."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return 0, None

    def work() -> None:  # (in the forked process)
        unasked: list[tuple[str, str | None]] = []
        with open(write_end, "wb") as out:
            # (a path at a time: the first reads start at once)
            _send_sizes(source, _paths(hashes, path_of, unasked), limit, out, unasked)

    try:
        pid = fork_alone((write_end,), work)
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return 0, None
    os.close(write_end)
    return pid, open(read_end, "rb")


def _result(problem: tuple[str, str, str]) -> CachedexError | Unasked:
    if problem[0] == _UNASKED:
        return Unasked(problem[2] or None)
    return _ERRORS.get(problem[0], SourceError)(*problem[1:])


def _request(source: LocalSource | HttpSource, items: list[tuple[str, str]], limit: int) -> _Request:
    if isinstance(source, HttpSource):
        auth = msgspec.structs.asdict(source.auth) if source.auth is not None else None
        return _Request("", source.url, limit, items, msgspec.structs.asdict(source.client.options), auth)
    return _Request(str(source.root), source.url, limit, items)


def _read_chunk(stream: IO[bytes]) -> bytes:
    """One length-prefixed chunk; b"" for the end mark. ValueError if the stream ends early."""
    head = stream.read(4)
    if len(head) != 4:
        raise ValueError("the reading process ended early")
    size = int.from_bytes(head, "big")
    data = stream.read(size)
    if len(data) != size:
        raise ValueError("the reading process ended early")
    return data


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """The reading process: every result, a chunk at a time, then an empty chunk."""
    _end_with(int(os.environ.get(PARENT_ENV) or os.getppid()))
    request = msgspec.msgpack.decode(stdin.read(), type=_Request)
    if request.http is None:
        _send_sizes(LocalSource(Path(request.root), request.url), request.items, request.limit, stdout)
        return
    from ..config import HttpOptions, RegistryAuth
    from .http import HttpClient

    auth = msgspec.convert(request.auth, RegistryAuth) if request.auth is not None else None
    with HttpClient(msgspec.convert(request.http, HttpOptions)) as client:
        _send_sizes(HttpSource(request.url, client, auth), request.items, request.limit, stdout)


#: How often the reading process looks whether the process that started it is alive.
PARENT_CHECK_SECONDS = 0.25
#: Names that process to the reading one (should it end before the reading one looks).
PARENT_ENV = "CACHEDEX_READER_PARENT"


def _end_with(parent: int) -> None:
    """End this process within :data:`PARENT_CHECK_SECONDS` once ``parent`` has ended.
    It is out of the terminal's process group (so that a Ctrl-C reaches the parent
    alone, which kills it), so a hang-up, or a ``kill`` of the group, ending the parent
    reached it no more: it went on asking a mirror until its next write failed."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="cachedex-parent-watch", daemon=True).start()


def _send_sizes(
    source: LocalSource | HttpSource,
    items: Iterable[tuple[str, str]],
    limit: int,
    stdout: IO[bytes],
    unasked: list[tuple[str, str | None]] | None = None,
) -> None:
    """Each size (or problem) read of ``items``, a chunk at a time, with the hashes not
    asked for that ``unasked`` gathers meanwhile (and why), then an empty chunk."""
    encode = msgspec.msgpack.encode
    sizes: dict[str, int] = {}
    problems: list[_Problem] = []
    sent = time.monotonic()

    def send(data: bytes) -> None:
        stdout.write(len(data).to_bytes(4, "big") + data)
        stdout.flush()  # (a small chunk would wait in the buffer: no progress shown meanwhile)

    def take_unasked() -> None:
        if unasked:
            problems.extend((key, (_UNASKED, "", why or "")) for key, why in unasked)
            unasked.clear()

    for key, result in source.read_many(items, manifest_size, limit=limit):
        take_unasked()
        if isinstance(result, CachedexError):
            url = getattr(result, "url", source.url)
            problems.append((key, (type(result).__name__, url, getattr(result, "problem", str(result)))))
        else:
            sizes[key] = result
        # Sent when full, or after a while over a slow network: the sync shows progress.
        if len(sizes) + len(problems) >= _CHUNK or time.monotonic() - sent > _CHUNK_SECONDS:
            send(encode(_Chunk(sizes, problems)))
            sizes, problems, sent = {}, [], time.monotonic()
    take_unasked()
    if sizes or problems:
        send(encode(_Chunk(sizes, problems)))
    send(b"")


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
