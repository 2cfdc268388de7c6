"""The core of the :class:`~cachedex.catalog.Catalog` facade: the open connection, one
read state (:meth:`CatalogCore.snapshot`), the state token readers key caches on, and
every write (a tag, sizes, forgetting, garbage collection), each in one transaction.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from ..errors import CatalogError
from .connection import (
    WRITE_WAIT_SECONDS,
    back_to_wal,
    busy_timeout,
    must_exist,
    open_readonly,
    open_writable,
    rollback_journal_if_alone,
)
from .forgetting import collect_garbage, forget_tag
from .schema import migrate, no_catalog_yet, schema_version
from .sql_functions import register_functions
from .totals import record_sizes
from .writer import TagWriter

__all__ = ["CatalogCore"]

#: How long ``gc``'s checkpoint waits for readers to end before leaving the space to a later one.
CHECKPOINT_WAIT_SECONDS = 5.0


class CatalogCore:
    """An open catalog file: its connection, its states and transactions, and the writes
    (a tag, sizes, forgetting, garbage collection). :class:`~cachedex.catalog.Catalog` adds
    the reads."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        readonly: bool = False,
        write_wait: float = WRITE_WAIT_SECONDS,
        create: bool = True,
    ) -> None:
        self.path = path = Path(path)
        if not create:  # (a command with nothing to do on a new catalog: gc, forget)
            must_exist(path)
            if path.is_file() and path.stat().st_size == 0:  # (it was made a whole catalog)
                raise no_catalog_yet(path)
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
            if not create and schema_version(self._db) == 0:  # (a first sync stopped early: nothing to do)
                self._db.close()
                raise no_catalog_yet(path)
            migrate(self._db, path, readonly=readonly)
        except sqlite3.Error as exc:
            raise CatalogError.from_sqlite(path, exc) from exc

    def __enter__(self) -> Self:
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

    def forget_tags(self, tags: Iterable[str], *, on_wait: Callable[[], None] | None = None) -> dict[str, int]:
        """Remove ``tags`` (those no config names any more, say) with their history and
        verifications, in one transaction: {tag: specs it listed}. The specs no other
        tag holds stay until :meth:`collect_garbage`. ``on_wait`` as :meth:`writing_tag`'s."""
        with self._transaction(on_wait):
            return {tag: forget_tag(self._db, tag) for tag in tags}

    def collect_garbage(
        self,
        *,
        history_before: float | None = None,
        vacuum: bool = True,
        on_wait: Callable[[], None] | None = None,
        on_readers: Callable[[], None] | None = None,
    ) -> tuple[int, int]:
        """Forget specs no mirror holds and no history names (with ``history_before``,
        first the changes recorded before that time), then give the space back to the
        file system. Returns (specs forgotten, changes forgotten). ``on_wait`` as
        :meth:`writing_tag`'s; ``on_readers`` is called when readers kept the space from
        coming back (the rewritten file stays in the write-ahead log until they end)."""
        with self._transaction(on_wait):
            counts = collect_garbage(self._db, history_before)
        if vacuum:
            try:
                self._db.execute("VACUUM")
                # In WAL mode the rewritten file is in the log until a checkpoint, which
                # closing does only as the last connection: with a server reading, the
                # space did not come back and the log doubled the catalog on disk. The
                # checkpoint waits for readers (a server's request, a site build) a
                # little, not a sync's whole wait: it waited 300 s, then said nothing.
                with busy_timeout(self._db, CHECKPOINT_WAIT_SECONDS, then=self.write_wait):
                    busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.Error as exc:
                raise CatalogError.from_sqlite(self.path, exc, waited=self.write_wait) from exc
            if busy and on_readers is not None:
                on_readers()
        return counts
