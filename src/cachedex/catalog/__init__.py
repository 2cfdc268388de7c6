"""The SQLite catalog: every spec read from every mirror, and its history. All SQL lives here.

Layout of the file (``docs/catalog.md`` has the full reference):

- ``specs``    one row per DAG hash, whatever number of tags hold it; ``nodes`` its raw node
- ``edges``    dependency edges between specs (deptypes as a bit mask, virtuals)
- ``tags`` / ``mirrors``  a tag has a root mirror and one mirror per stack, each with its
  sync state (URL, layout, Database version, checksum, HTTP validators)
- ``members``  which records each mirror's index holds, and whether listed (``in_buildcache``)
- ``syncs`` / ``changes``  history: what each sync of a mirror added or dropped

The file is plain SQLite in WAL mode, so ``sqlite3`` and datasette can read it while a
sync writes. One tag is written in one transaction: a failure leaves it as it was.

:class:`Catalog` is the one entry point; its methods delegate to the modules below,
each a function of an open connection:

    connection  how the file is opened (a new file's page size, WAL, read-only storage)
    schema    tables, versions, migrations
    rows      typed results and the row shapes of bulk reads
    reads     named point reads (a page's, a command's, a sync step's)
    bulk      whole-catalog streams for publishers
    search    a Query answered from the indexes; explain_search
    facets    facet indexes of search scopes, cached per catalog state
    writer    TagWriter: the only code that writes a tag (batches: a bulk load's later
              batches built by a forked process meanwhile; bulk_load: a first sync's
              indexes built after its rows; totals: a tag's totals and sizes;
              forgetting: forget and gc)
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import msgspec

from ..errors import CatalogError, UnknownTag
from ..query import Query
from ..values import ROOT_STACK
from . import bulk, history, reads, scopes, verifications
from . import search as searching
from .bulk_load import is_bulk_load
from .connection import (
    PAGE_SIZE,
    WRITE_WAIT_SECONDS,
    back_to_wal,
    busy_timeout,
    open_readonly,
    open_writable,
    rollback_journal_if_alone,
)
from .forgetting import collect_garbage, forget_tag
from .hints import zero_hints
from .inputs import PageInputs, SpecInputs
from .rows import (
    DependentRow,
    Edge,
    HolderRow,
    HoldingMirror,
    KnownSpecs,
    ListedRow,
    MirrorState,
    SearchPage,
    SizeKey,
    SpecConfig,
    SpecRow,
    SpecSummary,
    TagStats,
    summary_of,
)
from .schema import SCHEMA_VERSION, migrate, schema_version
from .sql_functions import register_functions
from .totals import record_sizes
from .writer import TagWriter

__all__ = [
    "PAGE_SIZE",
    "SCHEMA_VERSION",
    "Catalog",
    "DependentRow",
    "Edge",
    "HolderRow",
    "HoldingMirror",
    "KnownSpecs",
    "ListedRow",
    "MirrorState",
    "PageInputs",
    "SearchPage",
    "SizeKey",
    "SpecConfig",
    "SpecInputs",
    "SpecRow",
    "SpecSummary",
    "TagStats",
    "TagWriter",
    "package_names_of",
    "summary_of",
]


class Catalog:
    """An open catalog file. Use as a context manager, or call :meth:`close`."""

    def __init__(
        self, path: str | os.PathLike[str], *, readonly: bool = False, write_wait: float = WRITE_WAIT_SECONDS
    ) -> None:
        self.path = path = Path(path)
        self.readonly = readonly
        self.write_wait = write_wait
        #: (SQLite's data_version, the state token read with it): see :meth:`state_token`.
        self._token: tuple[int, tuple[str, float | None]] | None = None
        if path.exists() and not path.is_file():
            raise CatalogError(f"{path}: not a regular file; give 'catalog' a file path")
        try:
            self._db = open_readonly(path) if readonly else open_writable(path, write_wait)
            register_functions(self._db)
            self._db.execute("PRAGMA foreign_keys=ON")
            migrate(self._db, path, readonly=readonly)
        except sqlite3.Error as exc:
            raise CatalogError.from_sqlite(path, exc) from exc

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    @property
    def schema_version(self) -> int:
        """The schema version of the open file."""
        return schema_version(self._db)

    # -- states and transactions ----------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every statement inside sees the same catalog state,
        even while a sync commits."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            self._db.execute("COMMIT")

    def state_token(self) -> tuple[str, float | None]:
        """(token, time of the last sync): the token changes whenever a sync commits, in
        any process, so readers can key caches and ETags on it."""
        # A verification changes what pages show too, so it changes the token as a sync
        # does; so do sizes, which a sync records in batches after committing its listing
        # (and which only ever grow in number between syncs: their count tells).
        # A tag forgotten changes what pages show, and its verifications' ids are then
        # given again: the forgettings, never renumbered, are counted too; and so are
        # garbage collections that removed something (a spec's page may be gone). The
        # token starts with the catalog's own id: another catalog written at the same
        # path (``rm``, then a first sync) has the same counts at first.
        if not self.readonly:
            return self._read_state_token()
        # A read-only connection commits nothing, so SQLite's data_version moves when, and
        # only when, another connection has committed: the token is read again only then
        # (a query of ~14 µs against the pragma's ~5, asked twice per search a server
        # answers). Read after the version, it is never older than the version's state.
        (version,) = self._db.execute("PRAGMA data_version").fetchone()
        if self._token is None or self._token[0] != version:
            self._token = (version, self._read_state_token())
        return self._token[1]

    def _read_state_token(self) -> tuple[str, float | None]:
        last, finished, checked, sized, forgotten, identity, collected = self._db.execute(
            "SELECT max(id), max(finished_at), (SELECT max(id) FROM verifications), "
            "(SELECT total(sized) FROM tags), (SELECT max(id) FROM forgotten), "
            "(SELECT substr(id, 1, 8) FROM identity), (SELECT collected FROM identity) FROM syncs"
        ).fetchone()
        token = f"{identity}s{last or 0}z{int(sized)}" + (f"v{checked}" if checked else "")
        token += (f"f{forgotten}" if forgotten else "") + (f"c{collected}" if collected else "")
        return token, finished

    def identity(self) -> str:
        """The catalog's own id (random, made with it): marks what its builds write into
        folders other catalogs may write too, and names its Atom feeds' entries."""
        return str(self._db.execute("SELECT id FROM identity").fetchone()[0])

    @contextmanager
    def writing_tag(self, tag: str, *, on_wait: Callable[[], None] | None = None) -> Iterator[TagWriter]:
        """A transaction that rewrites one tag; rolled back if the block raises.

        Another process's write transaction is waited for, up to ``write_wait`` seconds;
        ``on_wait`` is called once if the wait begins. SQLite's own errors (locked, disk
        full, read-only, corrupt) come out as one-line :class:`CatalogError`."""
        # An empty catalog's first write goes through a rollback journal when it can.
        try:
            journal = not self.readonly and rollback_journal_if_alone(self._db, self.write_wait)
        except sqlite3.Error as exc:
            raise CatalogError.from_sqlite(self.path, exc) from exc
        # Without foreign-key enforcement: a first sync writes millions of edge and member
        # rows, and looking up both ends of each doubled their write (4.2 s against 1.9 s
        # for 1.25 million edges). The writer gives every row ids it has just inserted or
        # read from the catalog in this transaction, so the keys hold by construction
        # (and the tests check them with PRAGMA foreign_key_check after every kind of
        # failure). The pragma cannot change inside a transaction: it is set around it.
        try:
            self._db.execute("PRAGMA foreign_keys=OFF")
            with self._transaction(on_wait):
                writer = TagWriter(self._db, tag)
                yield writer
                writer._finish()
        finally:
            self._db.execute("PRAGMA foreign_keys=ON")
            if journal:
                back_to_wal(self._db, self.write_wait)

    @contextmanager
    def _transaction(self, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """Every write: one transaction, committed when the block ends, rolled back if it
        raises; SQLite's errors come out as :class:`CatalogError`."""
        if self.readonly:
            raise CatalogError(f"{self.path}: opened read-only")
        self._begin_write(on_wait)
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException as exc:
            # SQLite has already rolled back after some errors (disk full): a second
            # ROLLBACK would raise and hide the real error.
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise CatalogError.from_sqlite(self.path, exc, waited=self.write_wait) from exc
            raise

    def _begin_write(self, on_wait: Callable[[], None] | None) -> None:
        db = self._db
        try:
            with busy_timeout(db, 0, then=self.write_wait):
                db.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not getattr(exc, "sqlite_errorname", "").startswith("SQLITE_BUSY"):
                raise CatalogError.from_sqlite(self.path, exc) from exc
        if on_wait is not None:
            on_wait()
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise CatalogError.from_sqlite(self.path, exc, waited=self.write_wait) from exc

    def record_sizes(self, sizes: Mapping[int, int]) -> int:
        """Record binary sizes by spec id, outside any tag's transaction (a size never
        changes), with the totals of the tags listing them; returns how many were new."""
        if not sizes and not self.readonly:  # (read-only, it says so, whatever the sizes)
            return 0
        with self._transaction():
            return record_sizes(self._db, sizes)

    def forget_tags(self, tags: Iterable[str]) -> dict[str, int]:
        """Remove ``tags`` (those no config names any more, say) with their history and
        verifications, in one transaction: {tag: specs it listed}. The specs no other
        tag holds stay until :meth:`collect_garbage`."""
        with self._transaction():
            return {tag: forget_tag(self._db, tag) for tag in tags}

    def collect_garbage(self, *, history_before: float | None = None, vacuum: bool = True) -> tuple[int, int]:
        """Forget specs no mirror holds and no history names (with ``history_before``,
        first the changes recorded before that time), then give the space back to the
        file system. Returns (specs forgotten, changes forgotten)."""
        with self._transaction():
            counts = collect_garbage(self._db, history_before)
        if vacuum:
            try:
                self._db.execute("VACUUM")
                # In WAL mode the rewritten file is in the log until a checkpoint, which
                # closing does only as the last connection: with a server reading, the
                # space did not come back and the log doubled the catalog on disk.
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise CatalogError.from_sqlite(self.path, exc, waited=self.write_wait) from exc
        return counts

    # -- point reads (see reads.py) ---------------------------------------------------

    def require_tag(self, tag: str) -> None:
        """UnknownTag (listing the tags there are) unless the catalog has ``tag``."""
        known = self.tag_names()
        if tag not in known:
            raise UnknownTag(tag, known)

    def mirror_state(self, tag: str, stack: str) -> MirrorState | None:
        """The stored state of one mirror, or None if it was never synced."""
        return reads.mirror_state(self._db, tag, stack)

    def mirrors(self, tag: str | None = None) -> list[MirrorState]:
        """All mirrors (of one tag), sorted by tag then stack with root first."""
        return reads.mirrors(self._db, tag)

    def members_of(self, tag: str, stack: str) -> dict[str, bool]:
        """{hash: listed} of every record one mirror of a tag holds."""
        return reads.members_of(self._db, tag, stack)

    def tag_names(self) -> list[str]:
        """Names of the tags in the catalog, sorted."""
        return reads.tag_names(self._db)

    def tag_stats(self, tags: Iterable[str] | None = None) -> list[TagStats]:
        """Totals per tag: records, listed specs, packages, stacks, sizes, last changes."""
        return reads.tag_stats(self._db, tags)

    def spec_ids(self, hashes: Iterable[str]) -> dict[str, int]:
        """Map the given hashes to the ids of the specs the catalog already has."""
        return reads.spec_ids(self._db, hashes)

    def is_bulk_load(self, new_specs: int) -> bool:
        """Whether writing ``new_specs`` new specs would be a bulk load (many, and more than
        the catalog holds: the secondary indexes are built after the rows)."""
        return is_bulk_load(self._db, new_specs)

    def known_specs(self, hashes: Iterable[str]) -> KnownSpecs:
        """The ids and known sizes of ``hashes``, read once for a sync that needs both, and
        the catalog's state then (see :meth:`still_as_of`)."""
        as_of = self._data_version()  # before reading: a commit in between makes it stale, never wrong
        ids, sized = reads.known_specs(self._db, hashes)
        return KnownSpecs(ids, frozenset(sized), as_of)

    def still_as_of(self, known: KnownSpecs) -> bool:
        """Whether no other process committed since ``known`` was read (inside a write
        transaction: nor can one until it ends), so that its ids still hold."""
        return self._data_version() == known.as_of

    def _data_version(self) -> int:
        (version,) = self._db.execute("PRAGMA data_version").fetchone()
        return int(version)

    def sized_hashes(self, hashes: Iterable[str]) -> set[str]:
        """Those of ``hashes`` whose binary size the catalog already knows."""
        return reads.sized_hashes(self._db, hashes)

    def spec_sizes(self, hashes: Iterable[str]) -> dict[str, int | None]:
        """{hash: binary size, or None when unknown} of those of ``hashes`` the catalog has."""
        return reads.spec_sizes(self._db, hashes)

    def size_keys(self, hashes: Iterable[str]) -> list[SizeKey]:
        """What locating the manifest or tarball of each known spec of ``hashes`` needs."""
        return reads.size_keys(self._db, hashes)

    def listed_hashes(self, tag: str, stack: str = ROOT_STACK, among: Iterable[str] | None = None) -> set[str]:
        """Hashes listed (``in_buildcache``) by one mirror of a tag (of ``among`` only)."""
        return reads.listed_hashes(self._db, tag, stack, among)

    def unsized_listed_by_stack(self, tag: str) -> dict[str, set[str]]:
        """{stack: hashes it lists whose size is unknown} of every mirror of a tag."""
        return reads.unsized_listed_by_stack(self._db, tag)

    def node(self, dag_hash: str) -> str | None:
        """The raw node JSON of a spec, as its index held it, or None."""
        return reads.node(self._db, dag_hash)

    def holders(self, dag_hash: str) -> list[tuple[str, str, bool, str, int | None]]:
        """(tag, stack, listed, mirror URL, layout) of every mirror whose index holds a hash."""
        return reads.holders(self._db, dag_hash)

    def edges_of(self, dag_hash: str, *, reverse: bool = False) -> list[Edge]:
        """Direct dependencies of a spec (or, ``reverse``, its direct dependents)."""
        return reads.edges_of(self._db, dag_hash, reverse=reverse)

    def spec_configs(self, hashes: Collection[str]) -> dict[str, SpecConfig]:
        """{hash: variants, compiler, OS and target} of those of ``hashes`` the catalog has."""
        return reads.spec_configs(self._db, hashes)

    def closure(self, dag_hash: str) -> list[Edge]:
        """Every spec reachable from a spec through link and run edges, itself excluded."""
        return reads.closure(self._db, dag_hash)

    def package_tags(self, name: str) -> list[tuple[str, int]]:
        """(tag, listed specs) of every tag whose root mirror lists a package."""
        return reads.package_tags(self._db, name)

    def all_package_tags(self) -> dict[str, list[tuple[str, int]]]:
        """{package: :meth:`package_tags` of it} for every package, in one pass."""
        return reads.all_package_tags(self._db)

    def package_names(self) -> dict[str, list[str]]:
        """{package: [tags listing it]} over every tag, names sorted."""
        return package_names_of(self.all_package_tags())

    def tag_members(
        self, tag: str, names: Collection[str] | None = None, stacks: Collection[str] | None = None
    ) -> dict[str, dict[str, tuple[str, str]]]:
        """{stack: {hash: (name, version)}} of the listed specs of every mirror of a tag
        (of the packages ``names`` and the stacks ``stacks`` only, if given)."""
        return reads.tag_members(self._db, tag, names, stacks)

    def held_hashes(self, hashes: Iterable[str] | None = None) -> set[str]:
        """Every hash some mirror holds, listed or not (of ``hashes`` only, if given)."""
        return reads.held_hashes(self._db, hashes)

    def spec_summary(self, dag_hash: str) -> SpecSummary | None:
        """One spec by its full hash with every tag listing it (``stacks`` empty), or None."""
        found = self.search(Query(hash_prefix=dag_hash), limit=2).specs
        exact = [s for s in found if s.hash == dag_hash]
        if exact:
            return exact[0]
        return reads.spec_summary(self._db, dag_hash)  # a record no mirror lists: a compiler, an external

    def hashes_starting(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` hashes of any of the catalog's records that start with ``prefix``."""
        return reads.hashes_starting(self._db, prefix, limit)

    # -- history and coverage (see history.py) ---------------------------------------------

    def listing_difference(self, old: str, new: str) -> list[tuple[str, str, str, str, int]]:
        """(stack, hash, name, version, +1 in ``new`` only / -1 in ``old`` only) of the
        listed specs two tags do not share, stack by stack."""
        return history.listing_difference(self._db, old, new)

    def changes_since(self, tag: str, since: float) -> list[tuple[str, str, str, str, int]]:
        """(stack, hash, name, version, +1/-1) of listing changes after ``since``, oldest first."""
        return history.changes_since(self._db, tag, since)

    def first_synced_at(self, tag: str) -> float | None:
        """When the first recorded sync of ``tag`` finished (epoch seconds), or None."""
        return history.first_synced_at(self._db, tag)

    def tag_syncs(
        self, tag: str | None = None, *, limit: int = 1000, changed_only: bool = False
    ) -> list[history.SyncRecord]:
        """The syncs of ``tag`` (of every tag), newest first, with their change counts
        (``changed_only``: those that changed something)."""
        return history.tag_syncs(self._db, tag, limit=limit, changed_only=changed_only)

    def package_changes(
        self, tag: str, names: Collection[str] | None = None, *, syncs: int = 50
    ) -> dict[str, list[history.PackageChange]]:
        """What each of the newest ``syncs`` syncs that changed a package added to and
        removed from ``tag``'s listing, by package (of ``names``), newest sync first."""
        return history.package_changes(self._db, tag, names, syncs=syncs)

    def sync_changes(self, sync_id: int) -> list[history.ChangedSpec]:
        """What one sync added to and removed from each mirror's listing."""
        return history.sync_changes(self._db, sync_id)

    def changed_packages(self, sync_id: int, stack: str = ROOT_STACK) -> list[tuple[bool, str]]:
        """(added, name) of the packages one sync added or removed specs of in ``stack``."""
        return history.changed_packages(self._db, sync_id, stack)

    def additions(self, ids: Collection[int] | None = None) -> list[tuple[str, str, str, float]]:
        """(hash, tag, stack, end of the sync) of each recorded addition of a spec (of ``ids``) to a mirror."""
        return history.additions(self._db, ids)

    def first_syncs(self) -> dict[str, float]:
        """When each tag's first sync ended."""
        return history.first_syncs(self._db)

    def first_seen(self, dag_hash: str) -> list[history.FirstSeen]:
        """When a spec first appeared in each mirror listing it now."""
        return history.first_seen(self._db, dag_hash)

    def listing_counts(
        self, tag: str, names: Collection[str] | None = None, stacks: Collection[str] | None = None
    ) -> list[tuple[str, str, str, int]]:
        """(stack, name, version, listed specs) of every mirror of a tag (of ``names`` and
        ``stacks`` only)."""
        return history.listing_counts(self._db, tag, names, stacks)

    def coverage_cells(self, tag: str, *, root: bool = True) -> list[history.CoverageCell]:
        """Listed specs of a tag per stack and platform-os-target (the root's too if ``root``)."""
        return history.coverage_cells(self._db, tag, root=root)

    def package_coverage(
        self, tag: str, name: str | None = None, *, versions: bool = True
    ) -> list[history.PackageCoverage]:
        """Listed specs of a tag (of one package) per version (unless not ``versions``)
        and platform-os-target."""
        return history.package_coverage(self._db, tag, name, versions=versions)

    # -- verifications (see verifications.py) ---------------------------------------------

    def store_verification(
        self, result: verifications.MirrorVerification, signatures: Iterable[verifications.SpecSignature], keyring: str
    ) -> int:
        """Keep one mirror's verification and its specs' signature statuses (never
        touching what the mirrors list); returns its id."""
        with self._transaction():
            return verifications.store_verification(self._db, result, signatures, keyring)

    def latest_verifications(
        self, tag: str | None = None, *, problems: int | None = None
    ) -> list[verifications.MirrorVerification]:
        """The latest verification of each mirror (of one tag), root first, each with at
        most ``problems`` of its problems (None: all); ``problem_count`` has them all."""
        return verifications.latest_verifications(self._db, tag, problems=problems)

    def tag_verification(self, tag: str, *, problems: int | None = None) -> verifications.TagVerification | None:
        """The latest verification of each mirror of ``tag`` (each with at most
        ``problems`` of its problems; ``problem_count`` has them all), or None if never verified."""
        return verifications.tag_verification(self._db, tag, problems=problems)

    def spec_verifications(self, dag_hash: str) -> list[verifications.SpecVerification]:
        """Signature status and problems of one spec in the latest verification of each
        mirror listing it."""
        return verifications.spec_verifications(self._db, dag_hash)

    def all_spec_verifications(self) -> dict[str, list[verifications.SpecVerification]]:
        """:meth:`spec_verifications` of every spec a verification mentions, in one read
        (hash -> findings), for a site build."""
        return verifications.all_spec_verifications(self._db)

    def previous_signatures(self, tag: str, stack: str, keyring: str) -> dict[str, verifications.SpecSignature]:
        """Signature statuses of the mirror's latest verification with the same keys, by hash."""
        return verifications.previous_signatures(self._db, tag, stack, keyring)

    # -- bulk reads for publishers (see bulk.py) ------------------------------------------

    def listed_rows(
        self, tag: str, *, part: int = 0, parts: int = 1, names: Collection[str] | None = None
    ) -> Iterator[ListedRow]:
        """The specs ``tag``'s root mirror lists, by package name then hash (share ``part``
        of ``parts`` of its packages; only the packages ``names``, if given)."""
        return bulk.listed_rows(self._db, tag, part=part, parts=parts, names=names)

    def all_spec_rows(self, ids: Collection[int] | None = None) -> Iterator[SpecRow]:
        """Every spec of the catalog (or those of ``ids``)."""
        return bulk.all_spec_rows(self._db, ids)

    def all_edge_rows(self, parents: Collection[int] | None = None) -> Iterator[tuple[int, int, int, str]]:
        """``(parent id, child id, deptypes, virtuals)`` of every edge (from ``parents``)."""
        return bulk.all_edge_rows(self._db, parents)

    def all_holder_rows(self, ids: Collection[int] | None = None) -> Iterator[HolderRow]:
        """Every mirror's records (of ``ids``), in the order of :meth:`holders` for each spec."""
        return bulk.all_holder_rows(self._db, ids)

    def members_by_mirror(self) -> Iterator[tuple[HoldingMirror, list[tuple[int, int]]]]:
        """Every mirror, in the order of :meth:`holders`, with ``(spec id, listed)`` of its records."""
        return bulk.members_by_mirror(self._db)

    def root_listing_tags(self, ids: Collection[int] | None = None) -> Iterator[tuple[int, str]]:
        """``(spec id, tag)`` for every tag whose root mirror lists a spec (of ``ids``), tags in order."""
        return bulk.root_listing_tags(self._db, ids)

    def page_inputs(self) -> PageInputs:
        """What pages are made from, to compare between site builds (see :mod:`.inputs`)."""
        return PageInputs(self._db)

    def nodes_of(self, ids: Sequence[int]) -> Iterator[tuple[int, str]]:
        """``(spec id, raw node JSON)`` for the given ids, in ascending id order."""
        return bulk.nodes_of(self._db, ids)

    def stack_listings(
        self,
        *,
        tags: Sequence[str] | None = None,
        stacks: Sequence[str] | None = None,
        packages: Sequence[str] | None = None,
        include_root: bool = False,
    ) -> tuple[dict[int, tuple[str, str]], Iterator[tuple[int, int]]]:
        """``({mirror id: (tag, stack)}, (spec id, mirror id) of each listing)`` of what
        each stack's own index lists (the root's too with ``include_root``), narrowed to
        ``tags``, ``stacks``, ``packages``."""
        return bulk.stack_listings(self._db, tags=tags, stacks=stacks, packages=packages, include_root=include_root)

    def spec_nodes(
        self, ids: Sequence[int]
    ) -> Iterator[tuple[int, str, str, str, str, str, str, str, int | None, bytes]]:
        """``(id, hash, name, version, compiler, platform, os, target, size, raw node
        bytes)`` of the specs of ``ids``, in ascending id order."""
        return bulk.spec_nodes(self._db, ids)

    # -- search (see search.py) ----------------------------------------------------------

    def search(
        self,
        query: Query,
        *,
        tag: str | None = None,
        stack: str | None = None,
        limit: int = 50,
        offset: int = 0,
        hints: bool = False,
    ) -> SearchPage:
        """Listed specs satisfying ``query``, by name, newest version first (Spack's order), then hash.

        ``tag`` limits the search to that tag's listed specs (``stack`` further to those
        its stack holds) and fills each row's ``stacks``; without a tag, every spec some
        mirror lists, with the tags listing it. With ``hints``, a search that finds
        nothing says which condition nothing satisfies. UnknownTag or UnknownStack when
        the scope does not exist."""
        with self.snapshot():
            token = self.state_token()[0]
            page = searching.search(
                self._db, str(self.path), token, query, tag=tag, stack=stack, limit=limit, offset=offset
            )
            if hints and page.total == 0 and not query.is_empty:
                found = zero_hints(self._db, str(self.path), token, query, tag=tag, stack=stack)
                page = msgspec.structs.replace(page, hints=found.lines, suggestion=found.suggestion)
            return page

    def explain_search(
        self, query: Query, *, tag: str | None = None, stack: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[str]:
        """How :meth:`search` would answer: SQLite's query plan, or the facet index used."""
        with self.snapshot():
            token = self.state_token()[0]
            return searching.explain_search(
                self._db, str(self.path), token, query, tag=tag, stack=stack, limit=limit, offset=offset
            )

    def stack_names(self, tag: str) -> list[str]:
        """A tag's stacks, ``root`` first, then by name ([] for an unknown tag); read once
        per catalog state, as every search page asks."""
        with self.snapshot():
            return scopes.stack_names(self._db, str(self.path), self.state_token()[0], tag)

    def warm_search(self) -> int:
        """Build now what the first facet query of each scope (the whole catalog, each
        tag, each of its stacks) would otherwise build: a server calls this at start and
        after a sync. Returns the number of scopes."""
        with self.snapshot():
            return searching.warm_search(self._db, str(self.path), self.state_token()[0])

    def warm_walks(self) -> list[str]:
        """Read the edges into the graph that ``^dep`` searches then walk (~2.5 times
        faster than in SQL), and walk up from the most depended-on packages now: a
        server calls this after :meth:`warm_search`. Returns the names walked."""
        with self.snapshot():
            return searching.warm_walks(self._db, str(self.path), self.state_token()[0])

    def walks_made(self, query: Query, *, walk_up_to: int = 0) -> bool:
        """Whether every ``^dependency`` of ``query`` is walked in the catalog's present
        state (by the warm-up or a search before), so that its search walks nothing;
        with ``walk_up_to``, one not walked yet is walked now if it names a package or a
        hash and reaches at most that many specs (given up as soon as it reaches more)."""
        with self.snapshot():
            return searching.walks_made(self._db, str(self.path), self.state_token()[0], query, walk_up_to)


def package_names_of(package_tags: dict[str, list[tuple[str, int]]]) -> dict[str, list[str]]:
    """:meth:`Catalog.package_names` from :meth:`Catalog.all_package_tags`, for a caller
    that has read the latter already."""
    return {name: [tag for tag, _ in package_tags[name]] for name in sorted(package_tags)}
