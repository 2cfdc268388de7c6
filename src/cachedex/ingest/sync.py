"""One sync: read every mirror of the chosen tags and write them into the catalog.

Per tag, in two steps:

1. **The listing**, in one transaction: read the root index, then the stacks'; decode
   only the records the catalog does not know yet and write the specs, each mirror's
   membership and the history (a first sync from folders reads its stacks under the
   lock, while SQLite indexes the root's new rows: the decodes hold the GIL, the index
   build does not). A tag that fails here keeps its previous content, and the other
   tags still update.
2. **The sizes** the catalog lacks for the tag's listed binaries (v3 spec manifests, or
   HEAD of v2 tarballs with ``--sizes``), committed a batch at a time: a size belongs to
   a hash and never changes, so a sync stopped here keeps what it fetched, and outputs
   count the sizes known (``n of m``) meanwhile.

:func:`sync` reports each tag's outcome; the new records go to the catalog in
:mod:`.index_batches`' batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import msgspec

from .._perf import gc_paused, release_free_heap
from ..catalog import Catalog, TagWriter
from ..config import Config, TagConfig
from ..errors import CachedexError, resource_problem
from ..progress import SILENT, Progress, ProgressLine
from ..values import ROOT_STACK, counted
from .discovery import chosen_tags
from .index_batches import IndexBatches
from .outcomes import MirrorOutcome, TagOutcome
from .sizes import Prefetch, SizeReport, fetch_sizes
from .snapshots import OCI_LAYOUT
from .sources import open_source
from .tag_reads import MirrorRead, TagReader, mirror_row
from .views import with_found_views

if TYPE_CHECKING:  # (the HTTP engine, pycurl and ssl load only when a mirror is remote)
    from .http import HttpClient

__all__ = ["MirrorOutcome", "TagOutcome", "sync"]


def sync(
    config: Config,
    catalog: Catalog,
    tags: Iterable[str] | None = None,
    *,
    head_sizes: bool = False,
    reporter: Progress | None = None,
    raise_unexpected: bool = False,
) -> list[TagOutcome]:
    """Sync the named tags (default: all configured ones) into ``catalog``.

    ``head_sizes`` also asks v2 mirrors for the size of every listed binary (one HTTP
    HEAD each). Errors of one tag are caught and reported in its outcome, unexpected
    ones (bugs) too unless ``raise_unexpected``.
    """
    reporter = reporter or SILENT
    with chosen_tags(config, tags) as (config, chosen, client):
        run = _TagSync(config, catalog, client, head_sizes, reporter, raise_unexpected)
        return [run.sync(tag) for tag in chosen]


class _TagSync:
    """What every tag of one sync shares: the config, the catalog, the HTTP client, the
    progress display."""

    def __init__(
        self,
        config: Config,
        catalog: Catalog,
        client: HttpClient | None,
        head_sizes: bool,
        reporter: Progress,
        raise_unexpected: bool,
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.client = client
        self.head_sizes = head_sizes
        self.reporter = reporter
        self.raise_unexpected = raise_unexpected
        self.reader = TagReader(config, catalog, client, reporter)

    def sync(self, tag: TagConfig) -> TagOutcome:
        started = time.perf_counter()
        try:
            # A tag holds millions of small objects at once, none in reference cycles: with
            # the cyclic collector on, each of its passes walks them all, again and again.
            with gc_paused():
                return self._sync(tag, started)
        except CachedexError as exc:
            return TagOutcome(tag=tag.name, error=str(exc), seconds=time.perf_counter() - started)
        except Exception as exc:  # (MemoryError too: what ran out is said, not "a bug")
            ran_out = resource_problem(exc)
            if self.raise_unexpected and ran_out is None:
                raise
            problem = ran_out or f"unexpected {type(exc).__name__}: {exc} (a bug in cachedex; --debug shows where)"
            return TagOutcome(tag=tag.name, error=problem, seconds=time.perf_counter() - started)

    def _sync(self, tag: TagConfig, started: float) -> TagOutcome:
        phases: list[tuple[str, float]] = []
        mark = time.perf_counter()

        def phase(name: str) -> None:
            nonlocal mark
            now = time.perf_counter()
            phases.append((name, now - mark))
            mark = now

        found: list[str] = []  # what views: all has to say of the mirror's views, said first
        if tag.discover_views:
            root = open_source(tag.mirrors[0].url, client=self.client, registries=self.config.registries)
            tag, skipped = with_found_views(tag, root, none_ok=True)
            found = [f"root: {view}" for view in skipped]
            if not skipped and not tag.reads_root_views:
                found.append(
                    f"root: views: all, but {root.join('v3/manifests/index/')} holds no view: the root is read "
                    "without views"
                )
        reads, prefetch, stacks_later = self.reader.read_all(tag)
        try:
            outcome = self._write(tag, reads, prefetch, stacks_later, started, phases, phase)
        except BaseException:
            if prefetch is not None:
                prefetch.cancel()
            raise
        return msgspec.structs.replace(outcome, warnings=(*found, *outcome.warnings)) if found else outcome

    def _write(
        self,
        tag: TagConfig,
        reads: list[MirrorRead],
        prefetch: Prefetch | None,
        stacks_later: bool,
        started: float,
        phases: list[tuple[str, float]],
        phase: Callable[[str], None],
    ) -> TagOutcome:
        phase("indexes")
        # The stacks' indexes were read and decoded by threads, each in a heap of its own:
        # what they freed is held there unless given back (~110 MB of a big tag's peak).
        release_free_heap()
        fetched_at = time.time()
        waiting: list[ProgressLine] = []

        def on_wait() -> None:  # another process writes the catalog: say why nothing moves
            waiting.append(self.reporter.task(f"{tag.name}: waiting for another process writing the catalog"))

        with self.catalog.writing_tag(tag.name, on_wait=on_wait) as writer:
            for line in waiting:
                line.done()
            self._check_unchanged(reads)
            # New hashes are decided under the write lock: a sync of another tag that
            # committed meanwhile may have stored some of them already.
            new_hashes = self._new_hashes(reads, writer)
            # The sizes read so far go in with their specs (over the network the reads go
            # on meanwhile, and what they bring later is recorded after commit).
            presized = prefetch.sizes_to_write() if prefetch is not None else {}
            stacks = None
            try:
                with writer.specs_in_bulk(len(new_hashes)):
                    batches = IndexBatches(new_hashes, prefetch)
                    writer.add_spec_batches(list(new_hashes), batches, presized)
                    batches.release()
                    reads[0].index = None  # (the batches let it go, if there were any to build)
                    if stacks_later:
                        # Their decoding holds the GIL, which SQLite's build of the new rows'
                        # indexes, as the block ends, does not: each on a core of its own.
                        # Each listing's ids are found there too, and so are not after.
                        stacks = self.reader.start_stacks(tag, reads[0], writer.known_ids)
                phase("decode and write new specs")
                if stacks is not None:
                    later = stacks.result()
                    release_free_heap()
                    reads += later
                    new_hashes.update(self._write_stacks_records(later, writer))
                    phase("stacks")
            finally:
                if stacks is not None:
                    stacks.cancel()
            writer.link_pending_edges()
            dropped = self._write_members(writer, reads, fetched_at)
            added, removed, first = writer.root_added, writer.root_removed, writer.root_first
            dangling = (
                [f"new specs have {counted(writer.dangling, 'dependency edge')} to specs no index of the tag "
                 f"holds (e.g. {writer.dangling_example}); pages and searches cannot show those dependencies"]
                if writer.dangling
                else []
            )  # fmt: skip
            phase("write members")
        phase("commit")
        written_sized = presized.keys() & new_hashes.keys()
        sizes = self._fetch_sizes(reads, written_sized, prefetch)
        phase("sizes")
        if prefetch is not None:  # for bench/: the manifests' own time, most of it during the listing
            phases.append(("size reads ahead", prefetch.seconds))
        (stats,) = self.catalog.tag_stats([tag.name])
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
            first=first,
            new_specs=len(new_hashes),
            sizes_fetched=len(written_sized) + sum(report.fetched for _, report in sizes),
            sized=stats.sized,
            dropped_stacks=tuple(dropped),
            warnings=(
                *(
                    f"stack {s} is gone from tag {tag.name} (no longer configured, or its view no longer in "
                    "the mirror): its specs are recorded as removed"
                    for s in dropped
                ),
                *(warning for stack, report in sizes for warning in report.warnings(stack)),
                *dangling,
                *(
                    f"{r.ref.stack}: {r.snapshot.url} {r.snapshot.unverified}: read unverified"
                    for r in reads
                    if r.snapshot.unverified
                ),
            ),
            phases=tuple(phases),
        )

    def _write_stacks_records(self, stacks: list[MirrorRead], writer: TagWriter) -> dict[str, MirrorRead]:
        """Under the write lock, the stacks read after the root's new specs were written:
        checked as the root was, and the records they hold that the catalog lacks written."""
        self._check_unchanged(stacks)
        new_hashes = self._new_hashes(stacks, writer)
        with writer.specs_in_bulk(len(new_hashes)):
            batches = IndexBatches(new_hashes, None)
            writer.add_spec_batches(list(new_hashes), batches, {})
            batches.release()
        return new_hashes

    def _check_unchanged(self, reads: list[MirrorRead]) -> None:
        """Under the write lock: each mirror's row is still as it was when its index was
        read, or as this read found the mirror (another sync of the same read committed
        first: the same content). Another sync of this tag under another config (the
        tag's URL edited) may have committed something else meanwhile; keeping a mirror
        then gave its row one mirror's URL and another's specs, and replacing it could
        put older content over newer. The tag fails as that sync left it, saying so."""
        for read in reads:
            if read.ref.stack == ROOT_STACK and not read.own_index:
                continue  # (a root of views only: made from its stacks, each checked)
            now = mirror_row(self.catalog.mirror_state(read.ref.tag, read.ref.stack))
            found = (read.ref.url, read.ref.view, read.snapshot.layout, read.snapshot.checksum or None)
            if now not in (read.seen, found):
                raise CachedexError(
                    f"{read.ref.tag}/{read.ref.stack}: another sync changed this mirror in the catalog while this "
                    f"one read it; {read.ref.tag} is left as that sync wrote it: run 'cachedex sync "
                    f"{read.ref.tag}' again"
                )

    def _new_hashes(self, reads: list[MirrorRead], writer: TagWriter) -> dict[str, MirrorRead]:
        """Hashes the catalog does not have, each with the first read whose index holds it.
        The ids of the others are handed to ``writer``, which needs them for members."""
        new_hashes: dict[str, MirrorRead] = {}
        for read in reads:
            if read.index is None or not read.index.records:
                continue
            if read.known is not None and self.catalog.still_as_of(read.known):
                known = read.known.ids
            else:  # not asked yet, or another process wrote some of them since
                known = self.catalog.spec_ids(read.index.records.keys())
                # (and which of them lack a size, asked with them, too: a `forget` and
                # `gc` meanwhile removed specs it took for sized, written now without)
                read.unsized = None
            writer.remember_ids(known)
            for dag_hash in read.index.records:
                if dag_hash not in known and dag_hash not in new_hashes:
                    new_hashes[dag_hash] = read
        return new_hashes

    @staticmethod
    def _write_members(writer: TagWriter, reads: list[MirrorRead], fetched_at: float) -> list[str]:
        """Write each mirror's members; returns the stacks dropped (no longer configured)."""
        rows = sum(len(read.members) for read in reads if read.members is not None and read.db_version is not None)
        with writer.members_in_bulk(rows):
            for read in reads:
                snap = read.snapshot
                if read.members is None or read.db_version is None:
                    writer.keep_mirror(
                        read.ref.stack,
                        read.ref.url,
                        fetched_at=fetched_at,
                        etag=snap.etag,
                        last_modified=snap.last_modified,
                        signed=read.signed,
                        looked=not read.signing_unsure,
                    )
                    continue
                writer.replace_mirror(
                    read.ref.stack,
                    read.ref.url,
                    layout=snap.layout,
                    db_version=read.db_version,
                    checksum=snap.checksum or None,
                    etag=snap.etag,
                    last_modified=snap.last_modified,
                    fetched_at=fetched_at,
                    members=read.members,
                    view=read.ref.view,
                    own_index=read.own_index,
                    member_ids=read.member_ids,
                    signed=read.signed,
                    moved=read.moved,
                    looked=not read.signing_unsure,
                )
        return writer.drop_other_stacks()

    def _fetch_sizes(
        self, reads: list[MirrorRead], presized: set[str], prefetch: Prefetch | None
    ) -> list[tuple[str, SizeReport]]:
        """Sizes of the listed binaries the catalog does not know, each from the first
        mirror listing it, committed as they come. ``presized``: the specs this sync
        added with their size."""
        reports: list[tuple[str, SizeReport]] = []
        claimed: set[str] = set()
        # (committed: the catalog says which listed specs lack a size, the new ones
        # written without theirs among them)
        stacks_unsized: dict[str, set[str]] | None = None
        for read in reads:
            layout = read.snapshot.layout
            if layout not in (3, OCI_LAYOUT) and not self.head_sizes:
                continue
            if read.changed and read.unsized is not None:
                unsized = read.unsized - presized  # what the catalog lacked, asked already
            else:  # a stack, or a stopped sync's rest
                if stacks_unsized is None:
                    stacks_unsized = self.catalog.unsized_listed_by_stack(read.ref.tag)
                unsized = stacks_unsized.get(read.ref.stack, set())
            unsized -= claimed
            claimed |= unsized
            if not unsized:
                continue
            keys = self.catalog.size_keys(unsized)
            prefetched = prefetch if read is reads[0] else None
            line = self.reporter.task(f"{read.ref.tag}/{read.ref.stack}: sizes", total=len(keys))
            try:
                report = fetch_sizes(
                    self.catalog,
                    read.source,
                    keys,
                    layout=layout,
                    limits=self.config.limits,
                    line=line,
                    prefetched=prefetched,
                )
            finally:
                line.done()
            reports.append((read.ref.stack, report))
        return reports
