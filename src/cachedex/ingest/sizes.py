"""Binary sizes: from v3 spec manifests (one small read per spec), or by HEAD of v2 tarballs.

A size belongs to a hash and never changes, so each is fetched once, ever: a sync asks
only for listed specs whose size the catalog does not know, and commits what it learns
a batch at a time (:meth:`Catalog.record_sizes`), so that a sync stopped during this
phase keeps every size it fetched and the next one fetches only the rest. Over HTTP the
manifests are read concurrently and each is decoded, as it arrives, to the one number
needed (:meth:`Source.read_many`): no body is kept.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import msgspec

from ..catalog import Catalog, SizeKey
from ..config import Limits
from ..errors import CachedexError, IndexFormatError, SourceNotFound
from ..progress import ProgressLine
from .manifests import manifest_size, spec_manifest_path, tarball_path_v2
from .sources import Source

__all__ = ["SizeReport", "fetch_sizes", "is_path_safe"]

#: Sizes committed in one transaction; a batch is also committed after this many seconds.
BATCH = 10_000
BATCH_SECONDS = 3.0


class SizeReport(msgspec.Struct, frozen=True):
    """What a size phase found: sizes recorded, specs without a manifest or tarball, and
    one example of each kind of problem."""

    fetched: int
    missing: int
    problems: tuple[str, ...]
    failed: int


def is_path_safe(text: str) -> bool:
    """Whether a name or version may become part of a path under a mirror: no ``/``,
    ``\\``, ``..``, NUL or control character (Spack's never hold one)."""
    return bool(text) and "/" not in text and "\\" not in text and ".." not in text and text.isprintable()


def _paths(keys: Iterable[SizeKey], layout: int, refused: list[str], source: Source) -> Iterable[tuple[str, str]]:
    for key in keys:
        if not (is_path_safe(key.name) and is_path_safe(key.version.replace("/", "_"))):
            shown = f"{key.name!r}@{key.version!r}"
            refused.append(f"{source.url}: spec {key.hash}: name or version {shown} cannot be part of a path")
            continue
        if layout == 3:
            yield key.hash, spec_manifest_path(key.name, key.version, key.hash)
        else:
            yield key.hash, tarball_path_v2(**key._asdict())


def fetch_sizes(
    catalog: Catalog,
    source: Source,
    keys: list[SizeKey],
    *,
    layout: int,
    limits: Limits,
    line: ProgressLine,
) -> SizeReport:
    """Fetch the sizes of ``keys`` from ``source`` and record them in ``catalog``, a batch
    at a time. A missing or unreadable manifest is a problem to report, not a failure:
    that size stays unknown."""
    refused: list[str] = []
    problems: dict[str, str] = {}  # kind of problem -> one example
    failed = missing = fetched = 0
    ids = catalog.spec_ids(key.hash for key in keys)
    batch: dict[int, int] = {}
    last_commit = time.monotonic()
    paths = _paths(keys, layout, refused, source)
    results: Iterable[tuple[str, int | CachedexError | None]]
    if layout == 3:
        results = source.read_many(paths, manifest_size, limit=limits.manifest_bytes)
    else:
        results = ((key, _head(source, path)) for key, path in paths)
    done = 0
    for dag_hash, result in results:
        done += 1
        if done % 256 == 0:  # the display needs no more: a call per spec costs more than its read
            line.advance(256)
        if isinstance(result, SourceNotFound) or result is None:
            missing += 1
        elif isinstance(result, CachedexError):
            failed += 1
            problems.setdefault(type(result).__name__, str(result))
        else:
            batch[ids[dag_hash]] = result
            if len(batch) >= BATCH or time.monotonic() - last_commit > BATCH_SECONDS:
                fetched += catalog.record_sizes(batch)
                batch, last_commit = {}, time.monotonic()
    line.advance(done % 256)
    if batch:
        fetched += catalog.record_sizes(batch)
    if refused:
        failed += len(refused)
        problems.setdefault("refused", refused[0])
    return SizeReport(fetched, missing, tuple(problems.values()), failed)


def _head(source: Source, path: str) -> int | CachedexError | None:
    try:
        size = source.size(path)
    except CachedexError as exc:
        return exc
    if size is not None and not 0 <= size < 2**53:
        return IndexFormatError(source.join(path), f"Content-Length {size} is not a size a file can have")
    return size
