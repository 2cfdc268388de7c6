"""``POST /api/reuse``: a Spack environment's lockfile (or a spec file) in the body, the
reuse report back (:func:`cachedex.reuse.reuse_report`): which of its specs each tag has
as binaries, and for those the best tag lacks, the nearest cached build. What a CI job
asks before it builds, with ``curl --data-binary @spack.lock`` and no cachedex installed.

The server reads no lockfile itself (reading one is ingest's work, which ``publish`` does
not import): the app is given the reader, as ``cachedex serve`` does
(``create_app(read_environment=...)``); without one there is no such route. The body is
bounded in bytes (:data:`BODY_BYTES`: 413 past it) and in time (:data:`BODY_SECONDS`:
then 408), and the work is one of the heavy builds (in a thread, in turn). Answers are
not cached: each body is another question.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from ...errors import BadQuery, CachedexError, IndexFormatError, SourceError
from ...reuse import reuse_report
from ...values import ROOT_STACK, SpecRecord
from ..gzipped import gzip_bytes
from .cache import GZIP_MIN
from .catalogs import Catalogs
from .headers import accepts_gzip
from .refusals import JSON, check_parameters, error_body

__all__ = ["BODIES_BYTES", "BODY_BYTES", "BODY_SECONDS", "ReadEnvironment", "reuse_endpoint"]

#: Reads a lockfile or a spec file from its bytes (and a name for its errors): its
#: concrete specs and its roots' hashes. IndexFormatError when it is neither.
ReadEnvironment = Callable[[bytes, str], tuple[Sequence[SpecRecord], Sequence[str], Mapping[str, str]]]

#: The largest body read: an environment of ~10,000 specs is ~20 MB.
BODY_BYTES = 64 * 1024 * 1024
#: Seconds for the whole body to arrive.
BODY_SECONDS = 60.0
#: The most bytes of bodies a server process holds at once (arriving, or waiting for
#: their turn): past it, 503. One body's bound alone would let a thousand slow uploads
#: hold 64 GB.
BODIES_BYTES = 2 * BODY_BYTES

_NAME = "the request's body"
_ALLOWED = frozenset({"tag", "stack"})


class _TooBig(Exception):
    pass


class _Busy(Exception):
    pass


class _Taken:
    """What one request took of the budget, given back once it is answered."""

    def __init__(self) -> None:
        self.size = 0


class _Budget:
    """The bytes of bodies a process holds, against :data:`BODIES_BYTES` (one event loop
    counts them: no lock)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int, taken: _Taken) -> None:
        if self.held + size > self.limit:
            raise _Busy
        self.held += size
        taken.size += size


def reuse_endpoint(
    catalogs: Catalogs,
    heavy: Callable[[], AbstractAsyncContextManager[None]],
    read: ReadEnvironment,
) -> Callable[[Request], Awaitable[Response]]:
    """The handler of ``POST /api/reuse?tag=A,B&stack=S``."""
    budget = _Budget(BODIES_BYTES)

    def work(data: bytes, tags: list[str] | None, stack: str) -> tuple[int, bytes]:
        try:
            specs, roots, splices = read(data, _NAME)
            catalog, _ = catalogs.get()
            report = reuse_report(catalog, _NAME, specs, roots, tags=tags, stack=stack, splices=splices)
        except (IndexFormatError, SourceError) as exc:  # the body is not what it should be
            return 400, error_body(400, str(exc))
        except CachedexError as exc:
            return exc.status, error_body(exc.status, str(exc))
        except sqlite3.DatabaseError:
            return 500, error_body(500, "the catalog cannot be read; see the server's log")
        return 200, msgspec.json.encode(report)

    def work_gzipped(data: bytes, tags: list[str] | None, stack: str, gzipped: bool) -> tuple[int, bytes, bool | None]:
        """The answer, gzipped if the client takes it; the last item None when too short to gain."""
        status, body = work(data, tags, stack)
        if len(body) < GZIP_MIN:
            return status, body, None
        return (status, gzip_bytes(body, 3), True) if gzipped else (status, body, False)

    async def respond(request: Request) -> Response:
        taken = _Taken()
        try:
            return await answer(request, taken)
        finally:
            budget.held -= taken.size  # given back once answered, however it ended

    async def answer(request: Request, taken: _Taken) -> Response:
        try:
            check_parameters(request, _ALLOWED)
            tags = [tag for tag in request.query_params.get("tag", "").split(",") if tag] or None
            stack = request.query_params.get("stack") or ROOT_STACK
            data = await asyncio.wait_for(_body(request, budget, taken), BODY_SECONDS)
        except BadQuery as exc:
            return _error(400, str(exc))
        except _TooBig:
            return _error(413, f"the body is larger than {BODY_BYTES:,} bytes")
        except _Busy:
            busy = _error(503, "the server holds as many bodies as it takes at once; try again shortly")
            busy.headers["Retry-After"] = "5"
            return busy
        except TimeoutError:
            return _error(408, f"the body did not arrive within {BODY_SECONDS:.0f} s")
        if not data:
            return _error(400, "send a Spack lockfile (spack.lock) or spec file as the request's body")
        gzipped = accepts_gzip(request.headers.get("accept-encoding", ""))
        async with heavy():
            status, body, encoded = await run_in_threadpool(work_gzipped, data, tags, stack, gzipped)
        headers = {"Cache-Control": "no-store"}
        if encoded is not None:  # gzipped as every other answer (a big report is megabytes)
            headers["Vary"] = "Accept-Encoding"
            if encoded:
                headers["Content-Encoding"] = "gzip"
        return Response(body, status_code=status, media_type=JSON, headers=headers)

    return respond


async def _body(request: Request, budget: _Budget, taken: _Taken) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > BODY_BYTES:
        raise _TooBig
    chunks: list[bytes] = []
    size = 0
    stream: AsyncIterator[bytes] = request.stream()
    async for chunk in stream:
        size += len(chunk)
        if size > BODY_BYTES:
            raise _TooBig
        budget.take(len(chunk), taken)
        chunks.append(chunk)
    return b"".join(chunks)


def _error(status: int, message: str) -> Response:
    return Response(error_body(status, message), status_code=status, media_type=JSON)
