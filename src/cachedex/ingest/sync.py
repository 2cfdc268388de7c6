"""One sync: read every mirror of the chosen tags and write them into the catalog.

Per tag: read the root index, then the stacks' indexes in parallel; decode only the
records the catalog does not know yet; fetch the sizes it lacks; then write the
whole tag in one transaction. A tag that fails keeps its previous content and the
other tags still update; :func:`sync` reports each tag's outcome.
"""

from __future__ import annotations

import time
from collections.abc import Container, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import msgspec

from .._perf import gc_paused
from ..catalog import Catalog
from ..config import Config, TagConfig
from ..errors import CachedexError
from ..progress import SILENT, Progress
from ..values import MirrorRef, SpecRecord
from .index import RawIndex, build_records, decode_index
from .layouts import (
    IndexSnapshot,
    PreviousState,
    SizeLookup,
    fetch_sizes,
    read_index,
    spec_manifest_path,
    tarball_path_v2,
)
from .sources import Source, make_http_client, open_source

if TYPE_CHECKING:
    import httpx

__all__ = ["MirrorOutcome", "TagOutcome", "sync"]


class MirrorOutcome(msgspec.Struct, frozen=True):
    """What one mirror's read found."""

    stack: str
    url: str
    changed: bool
    layout: int
    db_version: int | None
    records: int | None


class TagOutcome(msgspec.Struct, frozen=True):
    """What a sync did to one tag; ``error`` is set when the tag was left unchanged."""

    tag: str
    error: str | None
    seconds: float
    mirrors: tuple[MirrorOutcome, ...] = ()
    records: int = 0
    specs: int = 0
    packages: int = 0
    stacks: int = 0
    added: int = 0
    removed: int = 0
    new_specs: int = 0
    sizes_fetched: int = 0
    warnings: tuple[str, ...] = ()
    phases: tuple[tuple[str, float], ...] = ()  # (phase, seconds), for --debug and bench/

    @property
    def ok(self) -> bool:
        """True when the tag was written."""
        return self.error is None


class _Read(msgspec.Struct):
    """One mirror's index after fetching: its state and, when it changed, what it holds.

    Only the root keeps its decoded index (to build new records from); a stack keeps
    its membership and, rarely, the records the root index does not have.
    """

    ref: MirrorRef
    source: Source
    snapshot: IndexSnapshot
    db_version: int | None = None
    members: dict[str, bool] | None = None  # hash -> listed; None when unchanged
    index: RawIndex | None = None  # records to build new specs from

    @property
    def changed(self) -> bool:
        return self.members is not None

    def listed(self) -> list[str]:
        return [h for h, listed in (self.members or {}).items() if listed]


def sync(
    config: Config,
    catalog: Catalog,
    tags: Iterable[str] | None = None,
    *,
    head_sizes: bool = False,
    reporter: Progress | None = None,
) -> list[TagOutcome]:
    """Sync the named tags (default: all configured ones) into ``catalog``.

    ``head_sizes`` also asks v2 mirrors for the size of every listed binary (one HTTP
    HEAD each). Errors of one tag are caught and reported in its outcome.
    """
    chosen = [config.tag(name) for name in tags] if tags else list(config.tags)
    reporter = reporter or SILENT
    needs_http = any(m.url.startswith(("http://", "https://")) for t in chosen for m in t.mirrors)
    client = make_http_client(config.http) if needs_http else None
    try:
        return [_sync_tag(config, catalog, tag, client, head_sizes, reporter) for tag in chosen]
    finally:
        if client is not None:
            client.close()


def _sync_tag(
    config: Config,
    catalog: Catalog,
    tag: TagConfig,
    client: httpx.Client | None,
    head_sizes: bool,
    reporter: Progress,
) -> TagOutcome:
    started = time.perf_counter()
    try:
        # A tag holds millions of small objects at once, none in reference cycles: with
        # the cyclic collector on, each of its passes walks them all, again and again.
        with gc_paused():
            return _sync_tag_or_raise(config, catalog, tag, client, head_sizes, reporter, started)
    except CachedexError as exc:
        return TagOutcome(tag=tag.name, error=str(exc), seconds=time.perf_counter() - started)


def _previous(catalog: Catalog, ref: MirrorRef) -> PreviousState | None:
    state = catalog.mirror_state(ref.tag, ref.stack)
    if state is None or state.checksum is None or state.layout is None:
        return None
    if state.url != ref.url:
        return None  # the mirror moved: read it again in full
    return PreviousState(state.layout, state.checksum, state.etag, state.last_modified)


def _read_mirror(
    ref: MirrorRef,
    client: httpx.Client | None,
    config: Config,
    previous: PreviousState | None,
    reporter: Progress,
    root: RawIndex | None = None,
) -> _Read:
    """Fetch and decode one mirror's index; with ``root``, keep only what the root lacks."""
    source = open_source(ref.url, client=client, options=config.http)
    line = reporter.download(f"{ref.tag}/{ref.stack}: index")
    try:
        snapshot = read_index(source, previous, progress=line.update)
    finally:
        line.done()
    if snapshot.data is None:
        return _Read(ref, source, snapshot)
    where = source.join("index") if snapshot.layout == 3 else source.join("build_cache/index.json")
    index = decode_index(snapshot.data, url=where)
    snapshot = msgspec.structs.replace(snapshot, data=None)  # the index holds what it needs
    members = {h: r.in_buildcache for h, r in index.records.items()}
    db_version = index.db_version
    if root is not None:
        # A stack's records are nearly always in the root index too: drop the stack's
        # bytes now rather than hold 40 indexes in memory at once.
        extra = {h: r for h, r in index.records.items() if h not in root.records}
        kept = RawIndex(url=index.url, db_version=index.db_version, records=extra) if extra else None
        return _Read(ref, source, snapshot, db_version, members, kept)
    return _Read(ref, source, snapshot, db_version, members, index)


def _sync_tag_or_raise(
    config: Config,
    catalog: Catalog,
    tag: TagConfig,
    client: httpx.Client | None,
    head_sizes: bool,
    reporter: Progress,
    started: float,
) -> TagOutcome:
    phases: list[tuple[str, float]] = []
    mark = time.perf_counter()

    def phase(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        phases.append((name, now - mark))
        mark = now

    previous = {ref.stack: _previous(catalog, ref) for ref in tag.mirrors}
    root_ref, *stack_refs = tag.mirrors
    # The root first: it holds nearly every record, so stacks rarely need decoding.
    root = _read_mirror(root_ref, client, config, previous[root_ref.stack], reporter)
    reads = [root]
    phase("root index")
    # When the root did not change, stacks seldom did; those that did are kept whole.
    root_index = root.index
    workers = max(1, min(len(stack_refs), config.http.concurrency, 8))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(_read_mirror, ref, client, config, previous[ref.stack], reporter, root_index)
            for ref in stack_refs
        ]
        # Collect every result so that one failing stack reports, not a half-read tag.
        errors: list[str] = []
        for future in futures:
            try:
                reads.append(future.result())
            except CachedexError as exc:
                errors.append(str(exc))
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CachedexError(errors[0] + more)

    phase("stack indexes")
    # New hashes, each from the first index holding it; their records are built and
    # written in batches so that a first sync never holds every decoded record at once.
    new_hashes: dict[str, _Read] = {}
    for read in reads:
        if read.index is None or not read.index.records:
            continue
        known = catalog.spec_ids(read.index.records.keys())
        for dag_hash in read.index.records:
            if dag_hash not in known and dag_hash not in new_hashes:
                new_hashes[dag_hash] = read

    fetched_at = time.time()
    with catalog.writing_tag(tag.name) as writer:
        writer.add_spec_batches(list(new_hashes), _record_batches(new_hashes), {})
        root.index = None  # records were built from it; nothing else needs it now
        phase("decode and write new specs")
        # Sizes are looked up after the specs are written: the catalog then knows the
        # name and version of every hash, which locating a manifest or tarball needs.
        sizes, warnings = _fetch_missing_sizes(catalog, reads, new_hashes, head_sizes, config, reporter)
        phase("sizes")
        writer.set_sizes(sizes)
        for read in reads:
            snap = read.snapshot
            if read.members is None or read.db_version is None:
                writer.keep_mirror(
                    read.ref.stack,
                    read.ref.url,
                    fetched_at=fetched_at,
                    etag=snap.etag,
                    last_modified=snap.last_modified,
                )
            else:
                writer.replace_mirror(
                    read.ref.stack,
                    read.ref.url,
                    layout=snap.layout,
                    db_version=read.db_version,
                    checksum=snap.checksum,
                    etag=snap.etag,
                    last_modified=snap.last_modified,
                    fetched_at=fetched_at,
                    members=read.members,
                )
        writer.drop_other_stacks()
        added, removed = writer.root_added, writer.root_removed
        phase("write members")
    phase("commit")

    (stats,) = catalog.tag_stats([tag.name])
    return TagOutcome(
        tag=tag.name,
        error=None,
        seconds=time.perf_counter() - started,
        mirrors=tuple(
            MirrorOutcome(
                r.ref.stack,
                r.ref.url,
                r.changed,
                r.snapshot.layout,
                r.db_version,
                len(r.members) if r.members is not None else None,
            )
            for r in reads
        ),
        records=stats.records,
        specs=stats.specs,
        packages=stats.packages,
        stacks=stats.stacks,
        added=added,
        removed=removed,
        new_specs=len(new_hashes),
        sizes_fetched=len(sizes),
        warnings=tuple(warnings),
        phases=tuple(phases),
    )


def _record_batches(new_hashes: dict[str, _Read], size: int = 20_000) -> Iterator[list[SpecRecord]]:
    """The records of ``new_hashes``, each built from its read's index, ``size`` at a time."""
    by_read: dict[int, tuple[_Read, list[str]]] = {}
    for dag_hash, read in new_hashes.items():
        by_read.setdefault(id(read), (read, []))[1].append(dag_hash)
    for read, hashes in by_read.values():
        assert read.index is not None  # kept until every batch is built
        for start in range(0, len(hashes), size):
            yield build_records(read.index, hashes[start : start + size])


def _fetch_missing_sizes(
    catalog: Catalog,
    reads: list[_Read],
    new_hashes: Container[str],
    head_sizes: bool,
    config: Config,
    reporter: Progress,
) -> tuple[dict[str, int], list[str]]:
    """Sizes of listed binaries the catalog does not know yet, from the mirror listing them."""
    sizes: dict[str, int] = {}
    warnings: list[str] = []
    claimed: set[str] = set()
    for read in reads:
        layout = read.snapshot.layout
        if layout == 3:
            if not read.changed:
                continue  # unchanged index: its sizes were fetched when it changed
        elif not head_sizes:
            continue
        listed = read.listed() if read.changed else sorted(catalog.listed_hashes(read.ref.tag, read.ref.stack))
        candidates = [h for h in listed if h not in claimed]
        # A spec new in this sync has no size yet: only ask the catalog about the others.
        unsized = set(candidates) - catalog.sized_hashes(h for h in candidates if h not in new_hashes)
        claimed.update(unsized)
        if not unsized:
            continue
        keys = catalog.size_keys(unsized)
        lookups = [
            SizeLookup(
                key.hash,
                spec_manifest_path(key.name, key.version, key.hash)
                if layout == 3
                else tarball_path_v2(**key._asdict()),
            )
            for key in keys
        ]
        line = reporter.task(f"{read.ref.tag}/{read.ref.stack}: sizes", total=len(lookups))
        found, problems = fetch_sizes(
            read.source,
            lookups,
            layout=layout,
            workers=read.source.readers or config.http.concurrency,
            on_done=line.advance,
        )
        line.done()
        sizes.update(found)
        if problems:
            warnings.append(f"{read.ref.stack}: {len(problems)} sizes unknown, e.g. {problems[0]}")
        missing = len(lookups) - len(found) - len(problems)
        if missing > 0:
            warnings.append(f"{read.ref.stack}: {missing} binaries without a size (no manifest or tarball)")
    return sizes, warnings
