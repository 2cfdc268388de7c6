"""The spec manifests of a mirror, read and decoded to sizes by a second process.

Reading a spec manifest is CPU work: from a folder a few system calls and a small
decode; over HTTP libcurl's transfer, the HTTP engine's bookkeeping and the decode
(~30 us a manifest from a server on the same machine). Threads cannot share it (they
take turns holding the GIL). A first sync of a big mirror reads one manifest per spec
(250,000) while it also decodes indexes and writes specs: another process does the
reads on another core, over its own HTTP client for an ``http(s)://`` mirror, and sends
back each size, a chunk at a time. If that process cannot start or dies, the manifests
it did not report are read here, as before.

The process is ``python -m cachedex.ingest.reading_process``, not a multiprocessing
child: that would import the caller's main module again, and a script without a
``__main__`` guard would run twice. It reads one request on standard input and writes
length-prefixed chunks of results on standard output.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import msgspec

from ..errors import CachedexError, ChecksumError, IndexFormatError, SourceError, SourceNotFound, TooBig
from .manifests import manifest_size
from .sources import HttpSource, LocalSource

__all__ = ["sizes_in_process"]

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


#: One result: (key, size, None) or (key, None, (error class, url, problem)).
_Result = tuple[str, int | None, tuple[str, str, str] | None]
_decode_chunk = msgspec.msgpack.Decoder(list[_Result]).decode


def sizes_in_process(
    source: LocalSource | HttpSource, items: list[tuple[str, str]], *, limit: int
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
            process.stdin.write(msgspec.msgpack.encode(_request(source, items, limit)))
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
    request = msgspec.msgpack.decode(stdin.read(), type=_Request)
    if request.http is None:
        _send_sizes(LocalSource(Path(request.root), request.url), request, stdout)
        return
    from ..config import HttpOptions, RegistryAuth
    from .http import HttpClient

    auth = msgspec.convert(request.auth, RegistryAuth) if request.auth is not None else None
    with HttpClient(msgspec.convert(request.http, HttpOptions)) as client:
        _send_sizes(HttpSource(request.url, client, auth), request, stdout)


def _send_sizes(source: LocalSource | HttpSource, request: _Request, stdout: IO[bytes]) -> None:
    encode = msgspec.msgpack.encode
    chunk: list[_Result] = []
    sent = time.monotonic()

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
        # Sent when full, or after a while over a slow network: the sync shows progress.
        if len(chunk) == _CHUNK or time.monotonic() - sent > _CHUNK_SECONDS:
            send(encode(chunk))
            chunk, sent = [], time.monotonic()
    if chunk:
        send(encode(chunk))
    send(b"")
    stdout.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
