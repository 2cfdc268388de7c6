"""Binary sizes: from v3 spec manifests (one small read per spec), or by HEAD of v2 tarballs.

A size belongs to a hash and never changes, so each is fetched once, ever: a sync asks
only for listed specs whose size the catalog does not know, and commits what it learns
a batch at a time (:meth:`Catalog.record_sizes`), so that a sync stopped during this
phase keeps every size it fetched and the next one fetches only the rest. Over HTTP the
manifests are read concurrently and each is decoded, as it arrives, to the one number
needed (:meth:`Source.read_many`): no body is kept.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

import msgspec

from .._perf import can_fork
from ..catalog import Catalog, SizeKey
from ..config import Limits
from ..errors import CachedexError, IndexFormatError, SourceError, SourceNotFound
from ..progress import ProgressLine
from ..values import short_repr
from .local_source import LocalSource
from .manifests import MAX_SIZE, manifest_size, spec_manifest_path, tarball_path_v2
from .oci import OciSource
from .reading_process import ForkedSizes, PathOf, Results, Unasked, sizes_in_process
from .snapshots import OCI_LAYOUT
from .sources import Decoder, HttpSource, Source
from .verify_io import sizes as head_sizes

__all__ = ["Prefetch", "SizeReport", "fetch_sizes", "is_path_safe", "manifest_path_safe"]

#: From this many spec manifests of a folder or an HTTP mirror on, another process reads
#: them (see reading_process): starting it costs ~0.3 s, reading 250,000 manifests ~4 s
#: from a folder, ~10 s from a server on the same machine.
IN_PROCESS_MIN = 20_000
#: From this many spec manifests of a folder on, where a process can be forked, a forked
#: copy reads them while this one writes (forking costs milliseconds, not the ~0.3 s of
#: starting a new interpreter): a 10,000-record tag read its manifests here first.
FORKED_READER_MIN = 4_000
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
    missing_example: str = ""  #: the first missing file, as its error names it

    def warnings(self, stack: str) -> Iterator[str]:
        """What a sync says of this phase in ``stack``: sizes that stay unknown, and why."""
        if self.failed:
            yield f"{stack}: {self.failed} sizes unknown, e.g. {self.problems[0]}"
        if self.missing:
            # (naming one: a count alone left nothing to look at)
            what = "1 binary" if self.missing == 1 else f"{self.missing:,} binaries"
            example = f", e.g. {self.missing_example}" if self.missing_example else ""
            yield f"{stack}: {what} without a size (no manifest or tarball){example}"


def is_path_safe(text: str) -> bool:
    """Whether a name or version may become part of a path under a mirror: no ``/``,
    ``\\``, ``..``, NUL or control character (Spack's never hold one)."""
    return bool(text) and "/" not in text and "\\" not in text and ".." not in text and text.isprintable()


def manifest_path_safe(name: str, version: str) -> bool:
    """Whether a spec's name and version may make its v3 manifest's path
    (:func:`~cachedex.values.spec_manifest_path`, where a version's ``/`` becomes ``_``)."""
    return is_path_safe(name) and is_path_safe(version.replace("/", "_"))


def _paths(keys: Iterable[SizeKey], layout: int, refused: list[str], source: Source) -> Iterable[tuple[str, str]]:
    if layout in (3, OCI_LAYOUT):
        return _manifest_paths(((key.hash, key.name, key.version) for key in keys), source, refused)
    return _tarball_paths(keys, source, refused)


def _read_elsewhere(source: Source, count: int) -> bool:
    """Whether ``count`` spec manifests of ``source`` are read by another process: many,
    from a folder or over HTTP (an OCI registry's need its token dance: read here)."""
    return isinstance(source, (LocalSource, HttpSource)) and count >= IN_PROCESS_MIN


def _read_sizes(
    source: Source, items: Iterable[tuple[str, str]], *, limit: int, count: int
) -> Iterator[tuple[str, int | CachedexError]]:
    """The size in each ``(hash, path)`` spec manifest of ``items`` (``count`` of them),
    read by another process if there are many."""
    if _read_elsewhere(source, count):
        assert isinstance(source, (LocalSource, HttpSource))
        return sizes_in_process(source, list(items), limit=limit)
    return source.read_many(items, _size_decoder(source), limit=limit)


def _size_decoder(source: Source) -> Decoder[int]:
    """What turns a size request's answer into the binary's size: a v3 spec manifest, or
    an OCI image manifest (its last layer is the spec's tarball)."""
    return source.decode_size if isinstance(source, OciSource) else manifest_size


def _tarball_paths(keys: Iterable[SizeKey], source: Source, refused: list[str]) -> Iterable[tuple[str, str]]:
    for key in keys:
        # Every field of a v2 tarball's path comes from the index (SEC-6); the compiler
        # is "name@version", and an unknown one becomes "none-none".
        parts = (key.name, key.version.replace("/", "_"), key.platform, key.os, key.target, *key.compiler.split("@", 1))
        if not _refused(key.hash, parts, source, refused):
            yield key.hash, tarball_path_v2(**key._asdict())


def _refused(dag_hash: str, parts: Iterable[str], source: Source, refused: list[str]) -> bool:
    """Whether a part of a spec's path is unsafe (then the spec is noted, and skipped)."""
    bad = [part for part in parts if not is_path_safe(part)]
    if not bad:
        return False
    refused.append(f"{source.url}: spec {dag_hash}: {short_repr(bad[0])} cannot be part of a path")
    return True


#: A spec's name and version by its hash, decoded from its node; None if it has none.
NameVersion = Callable[[str], tuple[str, str] | None]


class Prefetch:
    """The sizes of a changed v3 mirror's listed specs ``hashes``, read before its new
    specs are written, so that most go in with their spec rather than by a second pass
    over them. Over the network they are read while the listing is decoded and written
    (the network then overlaps the CPU work), many by another process (its HTTP engine
    would otherwise share this process's GIL with the write), a few by this one's, in a
    thread. From a folder the reads are CPU work: many are read by another process (on
    Linux a forked one, which also decodes the names and versions their paths need)
    while this one writes, each batch waiting for its own; a few are read at once, in
    this thread. Whatever the listing's write did not take is recorded with
    :func:`fetch_sizes` once the listing is committed."""

    def __init__(
        self,
        source: Source,
        hashes: Sequence[str],
        name_version: NameVersion,
        *,
        limits: Limits,
        line: ProgressLine,
    ) -> None:
        self.results: dict[str, int | CachedexError] = {}
        #: The sizes read so far (the results that are not problems).
        self.sizes: dict[str, int] = {}
        self.refused: list[str] = []
        self._stop = threading.Event()
        self.started = time.monotonic()
        self.finished: float | None = None
        self._thread: threading.Thread | None = None
        self._arrived = threading.Condition()  # notified as results come, and at the end
        self._asked: set[str] | None = None  # the hashes whose manifest is read, once known
        self._unasked: set[str] = set()  # those of them whose manifest a forked reader did not read
        self._source = source
        self._specs: list[tuple[str, str, str]] = []  # (hash, name, version), read in this process
        #: Read by another process (many files of a folder or an HTTP mirror).
        self.elsewhere = _read_elsewhere(source, len(hashes)) or (
            isinstance(source, LocalSource) and can_fork() and len(hashes) >= FORKED_READER_MIN
        )
        #: Waited for before writing: read from a folder by another process, each batch's
        #: sizes come in a fraction of the time the batch takes to write. Over the network
        #: the reads may take much longer than the write: the rest are recorded after it.
        self.waited = self.elsewhere and isinstance(source, LocalSource)
        reads: Callable[[], Iterable[Results]]
        self._forked: ForkedSizes | None = None
        if self.waited and can_fork():
            assert isinstance(source, LocalSource)
            self._asked = set(hashes)
            forked = self._forked = ForkedSizes(
                source, hashes, _path_of(source, name_version), limit=limits.manifest_bytes
            )
            reads = lambda: forked  # noqa: E731
        else:
            self._specs = [(h, *nv) for h in hashes if (nv := name_version(h)) is not None]
            reads = lambda: _chunked(self._reads(limits), self._stop)  # noqa: E731
        if not source.concurrent and not self.elsewhere:
            self._run(reads, hashes, line)
            return
        self._thread = threading.Thread(
            target=self._run, args=(reads, hashes, line), name="cachedex-sizes", daemon=True
        )
        self._thread.start()

    def _reads(self, limits: Limits) -> Iterable[tuple[str, int | CachedexError]]:
        source, specs = self._source, self._specs
        paths = _manifest_paths(specs, source, self.refused)
        if self.waited:
            items = list(paths)
            with self._arrived:
                self._asked = {dag_hash for dag_hash, _path in items}
            paths = items
        return _read_sizes(source, paths, limit=limits.manifest_bytes, count=len(specs))

    def _refused_paths(self) -> set[str]:
        """The hashes read in this process that are refused a manifest path (counted as
        refused: a failed read's problem would count them twice), checked again."""
        made = {dag_hash for dag_hash, _path in _manifest_paths(self._specs, self._source, [])}
        return {dag_hash for dag_hash, _name, _version in self._specs} - made

    def _run(self, reads: Callable[[], Iterable[Results]], hashes: Sequence[str], line: ProgressLine) -> None:
        results = self.results
        try:
            # A chunk at a time: a forked reader's sizes are taken in whole (~1 us a size
            # saved, in this process, whose other thread writes the specs).
            for sizes, others in reads():
                results.update(sizes)
                self.sizes.update(sizes)
                for dag_hash, result in others:
                    if not isinstance(result, Unasked):
                        results[dag_hash] = result
                        continue
                    with self._arrived:
                        self._unasked.add(dag_hash)
                    if result.why is not None:
                        self.refused.append(result.why)
                line.advance(len(sizes) + len(others))
                if self.waited:
                    with self._arrived:
                        self._arrived.notify_all()
                if self._stop.is_set():
                    return  # closing the generator tells the HTTP engine to let the rest go
        except (CachedexError, RuntimeError) as exc:  # the whole read failed: each size stays unknown
            problem = exc if isinstance(exc, CachedexError) else CachedexError(str(exc))
            refused = self._refused_paths()
            for dag_hash in hashes:
                if dag_hash not in self._unasked and dag_hash not in refused:
                    results.setdefault(dag_hash, problem)
        finally:
            with self._arrived:
                self.finished = time.monotonic()
                self._arrived.notify_all()
            line.done()

    def sizes_to_write(self) -> dict[str, int]:
        """The sizes to write with the specs. Over the network, a copy of those read so
        far (the rest go on meanwhile). From a folder, the sizes themselves as they come,
        read in the order the specs are written: the writer calls :meth:`wait_for` before
        each batch."""
        return self.sizes if self.waited else dict(self.sizes)

    def wait_for(self, hashes: Iterable[str]) -> None:
        """From a folder, wait until the sizes of ``hashes`` are read (or the reads end)."""
        if not self.waited:
            return
        pending = list(hashes)
        with self._arrived:
            while self.finished is None:
                if self._asked is not None:
                    results, asked, unasked = self.results, self._asked, self._unasked
                    pending = [h for h in pending if h in asked and h not in results and h not in unasked]
                    if not pending:
                        return
                self._arrived.wait(0.5)

    @property
    def seconds(self) -> float:
        """How long the reads took, from the first to the last (so far)."""
        return (self.finished or time.monotonic()) - self.started

    def wait(self) -> dict[str, int | CachedexError]:
        """Every result, once the thread is done."""
        if self._thread is not None:
            self._thread.join()
        return self.results

    def cancel(self) -> None:
        """Stop reading (the listing failed: nothing will record these sizes)."""
        self._stop.set()
        if self._forked is not None:
            self._forked.stop()
        if self._thread is not None:
            self._thread.join()


def _chunked(
    reads: Iterable[tuple[str, int | CachedexError]], stop: threading.Event, size: int = 64
) -> Iterator[Results]:
    """Results read one at a time, in chunks as a forked reader sends them; once ``stop``
    is set, each as it comes, so that a cancelled read over HTTP ends at the next
    result (a chunk of a slow server's 64 took half a minute after a Ctrl-C)."""
    sizes: dict[str, int] = {}
    others: list[tuple[str, CachedexError | Unasked]] = []
    try:
        for dag_hash, result in reads:
            if isinstance(result, int):
                sizes[dag_hash] = result
            else:
                others.append((dag_hash, result))
            if len(sizes) + len(others) >= size or stop.is_set():
                yield sizes, others
                sizes, others = {}, []
    except (CachedexError, RuntimeError):  # the whole read failed: what came before it is kept
        if sizes or others:
            yield sizes, others
        raise
    if sizes or others:
        yield sizes, others


def _path_of(source: LocalSource, name_version: NameVersion) -> PathOf:
    """What a forked reader makes of a hash (see :data:`PathOf`)."""
    safe: set[str] = set()

    def path_of(dag_hash: str) -> tuple[str | None, str | None]:
        found = name_version(dag_hash)
        if found is None:
            return None, None
        refused: list[str] = []
        path = _manifest_path(dag_hash, *found, source, refused, safe)
        return (path, None) if path is not None else (None, refused[0])

    return path_of


def _manifest_paths(
    specs: Iterable[tuple[str, str, str]], source: Source, refused: list[str]
) -> Iterable[tuple[str, str]]:
    if isinstance(source, OciSource):  # one image per spec, tagged by Spack's rule
        yield from source.size_requests(specs, refused)
        return
    safe: set[str] = set()
    for dag_hash, name, version in specs:
        if (path := _manifest_path(dag_hash, name, version, source, refused, safe)) is not None:
            yield dag_hash, path


def _manifest_path(
    dag_hash: str, name: str, version: str, source: Source, refused: list[str], safe: set[str]
) -> str | None:
    """A spec's v3 manifest path, or None if its name or version cannot be part of one
    (then noted in ``refused``). ``safe``: the names and versions found safe so far
    (10,000 names for 250,000 specs: each is checked once)."""
    if name not in safe or version not in safe:
        if _refused(dag_hash, (name, version.replace("/", "_")), source, refused):
            return None
        safe.update((name, version))
    return spec_manifest_path(name, version, dag_hash)


def fetch_sizes(
    catalog: Catalog,
    source: Source,
    keys: list[SizeKey],
    *,
    layout: int,
    limits: Limits,
    line: ProgressLine,
    prefetched: Prefetch | None = None,
) -> SizeReport:
    """Fetch the sizes of ``keys`` from ``source`` (those ``prefetched`` has are taken from
    it) and record them in ``catalog``, a batch at a time. A missing or unreadable
    manifest is a problem to report, not a failure: that size stays unknown."""
    refused: list[str] = []
    problems: dict[str, str] = {}  # kind of problem -> one example
    failed = missing = fetched = 0
    missing_example = ""
    ids = catalog.spec_ids(key.hash for key in keys)
    batch: dict[int, int] = {}
    last_commit = time.monotonic()
    known: dict[str, int | CachedexError] = {}
    if prefetched is not None:
        known = prefetched.wait()
        refused.extend(prefetched.refused)
    rest = [key for key in keys if key.hash not in known]
    paths = _paths(rest, layout, refused, source)
    results: Iterable[tuple[str, int | CachedexError]]
    if layout in (3, OCI_LAYOUT):
        results = _read_sizes(source, paths, limit=limits.manifest_bytes, count=len(rest))
    else:
        results = _head_sizes(source, list(paths))
    done = 0
    wanted = {key.hash for key in keys}
    # (a chain, not a list: each result is recorded as it comes, a batch committed at a time)
    for dag_hash, result in itertools.chain(((h, r) for h, r in known.items() if h in wanted), results):
        if dag_hash not in known:
            done += 1
            if done % 256 == 0:  # the display needs no more: a call per spec costs more than its read
                line.advance(256)
        if isinstance(result, SourceNotFound):
            missing += 1
            missing_example = missing_example or str(result)
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
    if refused:  # (one the prefetch refused is refused again here: counted once)
        failed += len(set(refused))
        problems.setdefault("refused", refused[0])
    return SizeReport(fetched, missing, tuple(problems.values()), failed, missing_example)


def _head_sizes(source: Source, paths: list[tuple[str, str]]) -> Iterator[tuple[str, int | CachedexError]]:
    """The size of each ``(hash, path)`` binary of a v2 mirror by HEAD, many at once (as
    ``verify`` asks them; one at a time, a mirror of thousands took as many round trips).
    An answer without a length is a size unknown, not a binary missing."""
    path_of = dict(paths)
    encoded: dict[str, str] = {}
    for dag_hash, size in head_sizes(source, paths, encoded=encoded):
        if size is None:  # (the binary is there, its length unsaid: once counted "missing", as a 404)
            size = SourceError(source.join(path_of[dag_hash]), "the server's answer to HEAD has no Content-Length")
        elif dag_hash in encoded and isinstance(size, int):  # (a length as sent, not the file's: kept for ever)
            problem = f"the server's answer to HEAD is labelled Content-Encoding: {encoded[dag_hash]}"
            size = SourceError(source.join(path_of[dag_hash]), f"{problem}: its length is not the file's")
        elif isinstance(size, int) and not 0 <= size < MAX_SIZE:
            size = IndexFormatError(
                source.join(path_of[dag_hash]), f"Content-Length {size} is not a size a file can have"
            )
        yield dag_hash, size
