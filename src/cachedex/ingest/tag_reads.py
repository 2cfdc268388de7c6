"""A tag's mirrors read for its sync: the root index first, and the sizes the catalog
lacks for the root's specs set reading meanwhile (:class:`~.sizes.Prefetch`); then the
stacks' (in parallel over the network), each decoded only as far as the sync needs (a
stack's records are nearly always the root's too). In a first sync from folders the
stacks are read once the root's new specs are written, while SQLite builds their
indexes without the GIL (:meth:`TagReader.start_stacks`); otherwise before the write."""

from __future__ import annotations

import threading
from collections.abc import Callable, Container, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from ..catalog import Catalog, KnownSpecs, MirrorState
from ..config import Config, TagConfig
from ..errors import CachedexError, SourceNotFound
from ..progress import Progress
from ..values import MirrorRef
from .index import RawIndex
from .layouts import read_index
from .mirror_signing import SAMPLED, SigningReads, sampled_specs, usable
from .records import name_version_in
from .sizes import Prefetch
from .snapshots import OCI_LAYOUT, IndexSnapshot, PreviousState
from .sources import Source, open_source, over_network
from .views import union_of_stacks

if TYPE_CHECKING:  # (loaded only when a mirror is remote: see discovery._client)
    from .http import HttpClient

__all__ = ["MirrorRead", "Previous", "StackReads", "TagReader", "mirror_row"]


#: A mirror's row as a read found it: (url, view, layout, checksum), None if it had none.
Seen = tuple[str, str | None, int | None, str | None] | None


def mirror_row(state: MirrorState | None) -> Seen:
    """What of a mirror's row tells whether another sync wrote it (:data:`Seen`)."""
    return None if state is None else (state.url, state.view, state.layout, state.checksum)


class MirrorRead(msgspec.Struct):
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
    own_index: bool = True  # False: a root of views only, listing what its stacks list
    unsized: set[str] | None = None  # listed hashes whose size the catalog lacked, once asked
    known: KnownSpecs | None = None  # what the catalog knew of the index's hashes, once asked
    #: the catalog's row of the mirror when it was read: (url, view, layout, checksum), or
    #: None if it had none; the write checks it is still so (another sync may have written)
    seen: Seen = None
    #: the ids of ``members``, in order, when every one had an id before the write asked:
    #: found by the thread that reads the stacks, beside SQLite's build of the indexes
    member_ids: list[int] | None = None
    #: whether the mirror signs its binaries, as its manifests said (see
    #: :mod:`.mirror_signing`); None when not told, or when the index did not change
    signed: bool | None = None
    #: not told for a passing reason (a server error, a timeout): the next sync asks again
    signing_unsure: bool = False
    #: the mirror moved (another URL or view) since its row was written: what its row
    #: said of its signing is no longer known
    moved: bool = False

    @property
    def changed(self) -> bool:
        return self.members is not None

    def listed(self) -> list[str]:
        return [h for h, listed in (self.members or {}).items() if listed]


class Previous(NamedTuple):
    """What the catalog holds of a mirror before it is read."""

    state: PreviousState | None  #: what an unchanged index is told by; None: read it in full
    seen: Seen  #: its row, as :attr:`MirrorRead.seen` keeps it
    moved: bool  #: another URL or view than its row's (see :attr:`MirrorRead.moved`)
    #: (hash, name, version) of listed specs whose manifests tell whether it signs, when
    #: its row does not say (a catalog made before it was recorded) and no sync looked at
    #: this index yet: read from the catalog, as the index is not (:mod:`.mirror_signing`)
    samples: list[tuple[str, str, str]] = []


def _views_signing(rows: Mapping[str, MirrorState], views: Sequence[MirrorRead]) -> tuple[bool | None, bool]:
    """Whether the root of a mirror of views only signs, and whether a passing failure
    kept that from being told: its views' binaries are its own, so it signs if one of
    them does (as ``verify`` decides); a view not read again, or not told this time, counts
    as its row says. Unsigned only when every view told is plain and none is unsure: a
    view that could not be read this time may be the one that signs."""
    told = {view.signed if view.signed is not None else _row_signed(rows, view) for view in views} - {None}
    if True in told:
        return True, False
    if any(view.signing_unsure for view in views):
        return None, True
    return (False if told else None), False


def _row_signed(rows: Mapping[str, MirrorState], read: MirrorRead) -> bool | None:
    """What a mirror's row says of its signing, unless it moved since (see
    :attr:`MirrorRead.moved`, which the read's :class:`Previous` told from that row)."""
    row = rows.get(read.ref.stack)
    return None if row is None or read.moved else row.signed


#: The catalog ids of a listing's hashes, in order, or None where one has none yet.
IdsOf = Callable[[Mapping[str, bool]], list[int] | None]


class StackReads:
    """The stacks' reads under way (:meth:`TagReader.start_stacks`)."""

    def __init__(self, pool: ThreadPoolExecutor, futures: list[Future[MirrorRead]]) -> None:
        self._pool = pool
        self._futures = futures

    def result(self, on_stop: Callable[[], None] | None = None) -> list[MirrorRead]:
        """Every stack's read, in the config's order, once all are done; a
        :class:`CachedexError` naming each stack that failed. ``on_stop``: called first
        should the wait end otherwise (a Ctrl-C), before the reads under way are waited
        for: the root's size reads, which the stacks' requests queue behind in the HTTP
        engine, stopped by it (they kept a Ctrl-C waiting half a minute)."""
        reads: list[MirrorRead] = []
        errors: list[str] = []
        try:
            for future in self._futures:
                try:
                    reads.append(future.result())
                except CachedexError as exc:
                    errors.append(str(exc))
        except BaseException:
            if on_stop is not None:
                on_stop()
            raise
        finally:
            self._pool.shutdown(cancel_futures=True)
        if errors:
            raise CachedexError("\n".join(errors))
        return reads

    def cancel(self) -> None:
        """Stop: the reads not begun are not, those under way are waited for."""
        self._pool.shutdown(cancel_futures=True)


class TagReader:
    """Reads the mirrors of the tags of one sync (what they share: the config, the
    catalog's previous states, the HTTP client, the progress display)."""

    def __init__(self, config: Config, catalog: Catalog, client: HttpClient | None, reporter: Progress) -> None:
        self.config = config
        self.catalog = catalog
        self.client = client
        self.reporter = reporter
        self.signing_reads = SigningReads(limit=config.limits.manifest_bytes)

    def _previous(self, ref: MirrorRef) -> Previous:
        """What the catalog holds of the mirror (see :class:`Previous`). Asked in the
        sync's thread (the catalog's connection is its)."""
        state = self.catalog.mirror_state(ref.tag, ref.stack)
        seen = mirror_row(state)
        moved = state is not None and (state.url != ref.url or state.view != ref.view)
        if state is None or state.checksum is None or state.layout is None or moved:
            return Previous(None, seen, moved)  # never read, or moved: read it again in full
        unknown = state.signed is None and state.layout == 3
        samples = self.catalog.signing_samples(ref.tag, ref.stack, SAMPLED) if unknown else []
        return Previous(
            PreviousState(state.layout, state.checksum, state.etag, state.last_modified), seen, moved, samples
        )

    def _read_mirror(self, ref: MirrorRef, previous: Previous, root: Container[str] | None = None) -> MirrorRead:
        """Fetch and decode one mirror's index; with ``root`` (its hashes), keep only the
        records the root lacks."""
        read = self._read_index(ref, previous.state, root)
        read.seen, read.moved = previous.seen, previous.moved
        if not read.changed and previous.samples:  # (an unchanged index says nothing of it)
            read.signed, read.signing_unsure = self.signing_reads.signs_binaries(read.source, usable(previous.samples))
        return read

    def _read_index(self, ref: MirrorRef, previous: PreviousState | None, root: Container[str] | None) -> MirrorRead:
        source = open_source(ref.url, client=self.client, registries=self.config.registries)
        line = self.reporter.download(f"{ref.tag}/{ref.stack}: index")
        try:
            snapshot = read_index(
                source, previous, limits=self.config.limits, progress=line.update, view=ref.view, decoded=True
            )
        finally:
            line.done()
        index = snapshot.index
        if index is None:
            return MirrorRead(ref, source, snapshot)
        snapshot = msgspec.structs.replace(snapshot, index=None)  # held by the MirrorRead, which lets the root's go
        members = {h: r.in_buildcache for h, r in index.records.items()}
        samples = sampled_specs(index) if snapshot.layout == 3 else []
        if root is not None:
            # A stack's records are nearly always in the root index too: drop the stack's
            # bytes now rather than hold 40 indexes in memory at once.
            extra = {h: r for h, r in index.records.items() if h not in root}
            kept = RawIndex(url=index.url, db_version=index.db_version, records=extra) if extra else None
            read = MirrorRead(ref, source, snapshot, index.db_version, members, kept)
        else:
            read = MirrorRead(ref, source, snapshot, index.db_version, members, index)
        # Let a stack's index go before the reads below, which over HTTP wait their turn
        # behind the sizes' (40 stacks' indexes held meanwhile took 1.4 times the memory).
        del index
        read.signed, read.signing_unsure = self.signing_reads.signs_binaries(source, samples)
        return read

    def read_all(self, tag: TagConfig) -> tuple[list[MirrorRead], Prefetch | None, bool]:
        """What a sync reads before its write lock: the root index (and the sizes the
        catalog lacks for its specs set reading), then the stacks' (in parallel over the
        network); every failing stack is named. In a first sync from folders the stacks
        can wait, to be read while SQLite indexes the root's new specs
        (:meth:`start_stacks`): then the third value is True. The root is always first."""
        root_ref, *stack_refs = tag.mirrors
        try:
            root: MirrorRead | None = self._read_mirror(root_ref, self._previous(root_ref))
        except SourceNotFound:
            if not tag.reads_root_views:
                raise
            root = None  # a mirror of views only: the root lists what its views list
        prefetch = self._prefetch(root) if root is not None else None
        if root is not None and self._stacks_can_wait(root, stack_refs):
            return [root], prefetch, True
        try:
            stacks = self.start_stacks(tag, root).result(prefetch.cancel if prefetch is not None else None)
        except BaseException:
            if prefetch is not None:
                prefetch.cancel()
            raise
        return [root if root is not None else self._root_of_views(root_ref, stacks), *stacks], prefetch, False

    def _stacks_can_wait(self, root: MirrorRead, stack_refs: list[MirrorRef]) -> bool:
        """Whether to read the stacks under the write lock, once the root's new specs are
        written, beside the build of their indexes: only when that build happens (a bulk
        load, a first sync) and every stack is a folder. Over the network, reads under
        the lock would keep other writers waiting as long as they take."""
        if root.index is None or not stack_refs or any(over_network(ref.url) for ref in stack_refs):
            return False
        records = root.index.records
        if not self.catalog.is_bulk_load(len(records)):
            return False  # (no more new specs than records: not asked which are known)
        if root.known is None:  # (a v3 root's were asked with its sizes; kept for the write)
            root.known = self.catalog.known_specs(records.keys())
        return self.catalog.is_bulk_load(len(records) - len(root.known.ids))

    def start_stacks(self, tag: TagConfig, root: MirrorRead | None, ids_of: IdsOf | None = None) -> StackReads:
        """Begin reading the stacks' indexes, in threads; each keeps only the records the
        root's listing lacks (all of them when the root is unchanged or missing).
        ``ids_of`` (the ids of a listing's hashes, or None where one has none yet) finds
        each read's :attr:`MirrorRead.member_ids` there, the root's first.
        Called in the sync's thread (the catalog's connection is its)."""
        stack_refs = tag.mirrors[1:]
        # From folders, one thread: a decode holds the GIL, so more read no faster, and
        # each is one more for the GIL the writer needs between its statements (the
        # indexes built beside these reads took ~30 % longer with eight).
        remote = any(over_network(ref.url) for ref in stack_refs)
        workers = max(1, min(len(stack_refs), self.config.http.concurrency, 8)) if remote else 1
        root_hashes = root.members if root is not None else None
        previous = [self._previous(ref) for ref in stack_refs]
        # Each decode holds the GIL for as long as it takes: the reads begin once all are
        # handed out, rather than make each hand-out wait its turn (~0.25 s for 40).
        begun = threading.Event()

        def read(ref: MirrorRef, previous: Previous) -> MirrorRead:
            begun.wait()
            if ids_of is not None and root is not None and root.members is not None and root.member_ids is None:
                root.member_ids = ids_of(root.members)  # (once: in the first read's thread)
            found = self._read_mirror(ref, previous, root_hashes)
            if ids_of is not None and found.members is not None:
                found.member_ids = ids_of(found.members)
            return found

        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            futures = [pool.submit(read, ref, state) for ref, state in zip(stack_refs, previous, strict=True)]
        except BaseException:
            begun.set()  # (first: the reads under way wait for it, and the shutdown for them)
            pool.shutdown(cancel_futures=True)
            raise
        begun.set()
        return StackReads(pool, futures)

    def _root_of_views(self, ref: MirrorRef, stacks: list[MirrorRead]) -> MirrorRead:
        """The root of a mirror without a root index: every record its stacks hold. When no
        stack changed, none was added or dropped, and the root was already such a root, it
        is unchanged too (a view dropped from the config or the mirror left the union
        listing its specs)."""
        source = open_source(ref.url, client=self.client, registries=self.config.registries)
        snapshot = IndexSnapshot(3, "", None)
        state = self.catalog.mirror_state(ref.tag, ref.stack)
        before = {mirror.stack: mirror for mirror in self.catalog.mirrors(ref.tag) if mirror.stack != ref.stack}
        same_stacks = before.keys() == {read.ref.stack for read in stacks}
        if state is not None and not state.own_index and same_stacks and not any(read.changed for read in stacks):
            kept = MirrorRead(ref, source, snapshot, own_index=False)
            # (a view's signing may be told now, its index unchanged: the root follows it)
            kept.signed, kept.signing_unsure = _views_signing(before, stacks)
            return kept
        members = union_of_stacks(
            [
                read.members if read.members is not None else self.catalog.members_of(ref.tag, read.ref.stack)
                for read in stacks
            ]
        )
        # (an unchanged stack's version is its row's: without one, the root was kept as it was)
        rows = [before.get(read.ref.stack) for read in stacks]
        versions = [
            read.db_version or (row.db_version if row else 0) or 0 for read, row in zip(stacks, rows, strict=True)
        ]
        read = MirrorRead(ref, source, snapshot, max(versions, default=0) or None, members, None, own_index=False)
        read.signed, read.signing_unsure = _views_signing(before, stacks)
        read.moved = state is not None and state.url != ref.url
        return read

    def _prefetch(self, root: MirrorRead) -> Prefetch | None:
        """Read the sizes the catalog lacks for the specs a changed v3 root lists, before
        its new specs are written (see :class:`Prefetch`)."""
        if root.index is None or root.snapshot.layout not in (3, OCI_LAYOUT):
            return None
        listed = root.listed()
        # The ids are asked with the sizes: the write needs them, and one read of the
        # catalog's 700,000 hashes (ten snapshots of a big tag) costs ~1 s.
        root.known = self.catalog.known_specs(root.index.records.keys())
        root.unsized = unsized = set(listed) - root.known.sized
        if not unsized:
            return None
        line = self.reporter.task(f"{root.ref.tag}/{root.ref.stack}: sizes", total=len(unsized))
        # In the index's order, which is the order new specs are written in.
        hashes = listed if len(unsized) == len(listed) else [h for h in listed if h in unsized]
        return Prefetch(root.source, hashes, name_version_in(root.index), limits=self.config.limits, line=line)
