"""The spec manifests of a local mirror, read and decoded to sizes by a second process.

Reading a spec manifest from a folder is a few system calls and a small decode: CPU work
for the reading process, which threads cannot share (they take turns holding the GIL).
A first sync of a big local mirror reads one manifest per spec (250,000) while it also
decodes indexes and writes specs: another process does the reads on another core and
sends back each size, a chunk at a time. If that process cannot start or dies, the
manifests it did not report are read here, as before.

The process is ``python -m cachedex.ingest.reading_process``, not a multiprocessing
child: that would import the caller's main module again, and a script without a
``__main__`` guard would run twice. It reads one request on standard input and writes
length-prefixed chunks of results on standard output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import msgspec

from ..errors import CachedexError, ChecksumError, IndexFormatError, SourceError, SourceNotFound, TooBig
from .manifests import manifest_size
from .sources import LocalSource

__all__ = ["sizes_in_process"]

#: Results sent at once: few enough to show progress, many enough to cost little.
_CHUNK = 4096
#: The errors a read may end in, rebuilt by name on this side.
_ERRORS: dict[str, type[SourceError] | type[IndexFormatError]] = {
    cls.__name__: cls for cls in (SourceError, SourceNotFound, ChecksumError, TooBig, IndexFormatError)
}


class _Request(msgspec.Struct, array_like=True):
    root: str
    url: str
    limit: int
    items: list[tuple[str, str]]  # (key, path under root)


#: One result: (key, size, None) or (key, None, (error class, url, problem)).
_Result = tuple[str, int | None, tuple[str, str, str] | None]
_decode_chunk = msgspec.msgpack.Decoder(list[_Result]).decode


def sizes_in_process(
    source: LocalSource, items: list[tuple[str, str]], *, limit: int
) -> Iterator[tuple[str, int | CachedexError]]:
    """What ``source.read_many(items, manifest_size, limit=limit)`` yields, read by
    another process."""
    received: set[str] = set()
    finished = False
    # The child imports cachedex from where this process did, whatever sys.path it had.
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        process = None
    if process is not None:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(msgspec.msgpack.encode(_Request(str(source.root), source.url, limit, items)))
            process.stdin.close()
            while chunk := _read_chunk(process.stdout):
                for key, size, problem in _decode_chunk(chunk):
                    received.add(key)
                    yield key, (size if problem is None else _ERRORS.get(problem[0], SourceError)(*problem[1:]))  # type: ignore[misc]
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
    request = msgspec.msgpack.decode(stdin.read(), type=_Request)
    encode = msgspec.msgpack.encode
    source = LocalSource(Path(request.root), request.url)
    chunk: list[_Result] = []

    def send(data: bytes) -> None:
        stdout.write(len(data).to_bytes(4, "big") + data)

    for key, result in source.read_many(request.items, manifest_size, limit=request.limit):
        if isinstance(result, CachedexError):
            problem = (
                type(result).__name__,
                getattr(result, "url", request.url),
                getattr(result, "problem", str(result)),
            )
            chunk.append((key, None, problem))
        else:
            chunk.append((key, result, None))
        if len(chunk) == _CHUNK:
            send(encode(chunk))
            chunk = []
    if chunk:
        send(encode(chunk))
    send(b"")
    stdout.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
