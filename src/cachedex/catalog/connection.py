"""How a catalog file is opened: a writer's connection (a new file gets 16 KiB pages, then
WAL mode, so that readers go on reading while a sync writes; another process's write is
waited for) and a reader's (read-only; immutable on storage where SQLite cannot share
the write-ahead log)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ..errors import CatalogError

__all__ = [
    "PAGE_SIZE",
    "WRITE_WAIT_SECONDS",
    "back_to_wal",
    "busy_timeout",
    "must_exist",
    "open_readonly",
    "open_writable",
    "refuse_foreign",
    "rollback_journal_if_alone",
]

#: How long a writer waits for another process's write transaction before giving up:
#: a first sync of a 250,000-record tag writes for under a minute.
WRITE_WAIT_SECONDS = 300.0
#: How long a reader waits on a lock (WAL readers wait only on recovery and checkpoints).
_READ_WAIT_MS = 10_000
#: The page size of a new catalog (an existing one keeps its own). Against SQLite's 4 KiB,
#: a first sync of a 250,000-record tag writes a quarter as many pages and takes ~5 % less
#: time, a tag added to nine overlapping ones as much or less, and reads measured the same.
PAGE_SIZE = 16384


def open_writable(path: Path, write_wait: float) -> sqlite3.Connection:
    """A connection that may write ``path`` (created with its folder if missing), waiting
    up to ``write_wait`` seconds for another process's write transaction. CatalogError
    for another program's database (tables, and no catalog schema): it is left as it is."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatalogError(f"{path.parent}: cannot create the catalog's folder ({exc.strerror or exc})") from exc
    _remove_orphan_logs(path)
    db = sqlite3.connect(os.fsencode(path), isolation_level=None, check_same_thread=False)
    db.execute(f"PRAGMA busy_timeout={int(write_wait * 1000)}")
    try:
        refuse_foreign(db, path)  # (before WAL mode, which changes the file)
    except BaseException:
        db.close()
        raise
    # Only a file without pages takes it, and only before WAL mode is set.
    db.execute(f"PRAGMA page_size={PAGE_SIZE}")
    _into_wal(db, write_wait)
    db.execute("PRAGMA synchronous=NORMAL")
    # A first sync inserts millions of index entries; keep the B-trees in memory.
    db.execute("PRAGMA cache_size=-131072")
    return db


def _into_wal(db: sqlite3.Connection, wait: float) -> None:
    """``PRAGMA journal_mode=WAL``, tried again (for up to ``wait`` seconds) while it finds
    the file busy: processes opening a new catalog together each take a lock the others
    need to change its journal, and SQLite answers some of them "busy" at once, without
    waiting its busy timeout (three ``cachedex sync`` started together failed so)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not getattr(exc, "sqlite_errorname", "").startswith("SQLITE_BUSY") or time.monotonic() >= deadline:
                raise
        time.sleep(0.01)


@contextmanager
def busy_timeout(db: sqlite3.Connection, seconds: float, *, then: float) -> Iterator[None]:
    """A writer's wait on another connection's lock set to ``seconds`` for the block (0:
    do not wait), then back to ``then`` (its own wait), whatever the block raises."""
    db.execute(f"PRAGMA busy_timeout={int(seconds * 1000)}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA busy_timeout={int(then * 1000)}")


def rollback_journal_if_alone(db: sqlite3.Connection, write_wait: float) -> bool:
    """Switch an empty catalog that no other connection has open to a rollback journal,
    for its first write; True if it did (then :func:`back_to_wal` after the write).

    Through the write-ahead log a first sync writes its catalog twice: every page into
    the log, then the commit's checkpoint copies them into the file (~0.4 s of a 250,000-
    record tag's first sync). A rollback journal writes each new page once and journals
    none (they lie past the file's old end). Readers wait on its locks, but SQLite allows
    the switch only when no other connection has the file open, and a reader who opens
    an empty catalog meanwhile waits for its first tag (up to its busy timeout, then it
    is told the catalog is busy). ``synchronous=FULL`` while it lasts: the journal's
    header is synced too, as a rollback journal needs to survive a power loss."""
    if db.execute("SELECT 1 FROM specs LIMIT 1").fetchone() is not None:
        return False
    try:
        with busy_timeout(db, 0, then=write_wait):  # another connection open: keep the log, do not wait
            (mode,) = db.execute("PRAGMA journal_mode=DELETE").fetchone()
    except sqlite3.OperationalError:
        return False
    if mode != "delete":
        return False
    db.execute("PRAGMA synchronous=FULL")
    return True


def back_to_wal(db: sqlite3.Connection, write_wait: float) -> None:
    """Back to the write-ahead log after :func:`rollback_journal_if_alone`'s write. A
    reader that opened the catalog meanwhile and is reading may hold it back, up to
    :data:`_BACK_TO_WAL_SECONDS`; past that the catalog keeps the rollback journal
    until a writer opens it again (:func:`open_writable` sets the log each time). Never
    raises: it runs after the write, whose own error must not be hidden."""
    try:
        db.execute("PRAGMA synchronous=NORMAL")
        with busy_timeout(db, _BACK_TO_WAL_SECONDS, then=write_wait):
            _into_wal(db, _BACK_TO_WAL_SECONDS)
    except sqlite3.Error:
        pass


#: How long a writer waits for readers to let it go back to the write-ahead log.
_BACK_TO_WAL_SECONDS = 5.0


def _remove_orphan_logs(path: Path) -> None:
    """Remove a write-ahead log (and its index) whose catalog file is gone: SQLite would
    apply it to the new file made at that path, which then read as corrupt (a catalog
    deleted while `cachedex serve` held it, then synced anew)."""
    for suffix in ("-wal", "-shm"):
        log = f"{os.fspath(path)}{suffix}"
        # The log first, then the file: SQLite makes a new catalog's file before its log,
        # so a log seen while its file is missing is no live one's (checked the other way,
        # a process making the catalog meanwhile lost its new log: two first syncs at once)
        if os.path.lexists(log) and not os.path.lexists(path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(log)


def refuse_foreign(db: sqlite3.Connection, path: Path) -> None:
    """CatalogError if the file holds tables but no catalog schema (its version is 0):
    another program's database, which a migration would have filled with the catalog's
    tables beside its own."""
    # One statement, one snapshot: read apart, another process's first sync could commit
    # its schema between the two (its tables seen, and its version not yet).
    version, listed = db.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), "
        "(SELECT group_concat(name, char(10)) FROM "
        "(SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 4))"
    ).fetchone()
    names = listed.split("\n") if version == 0 and listed else []
    if names:
        listed = ", ".join(repr(name) for name in names[:3]) + (", ..." if len(names) > 3 else "")
        raise CatalogError(
            f"{path}: another program's database (tables {listed}), not a catalog; check the 'catalog' "
            "path (cachedex leaves the file alone)"
        )


def must_exist(path: Path) -> None:
    """Refuse a catalog that is not there yet, in the one line every command gives."""
    if not path.exists():
        raise CatalogError(f"{path}: no catalog here yet; run 'cachedex sync' first")


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection. On read-only storage SQLite cannot create the ``-shm``
    file WAL mode needs; a catalog closed cleanly (no ``-wal`` left) is then opened as
    immutable, which needs no ``-shm`` (MSG-1)."""
    must_exist(path)
    db = sqlite3.connect(
        f"file:{quote(os.fsencode(path))}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    db.execute(f"PRAGMA busy_timeout={_READ_WAIT_MS}")
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        wal = path.with_name(path.name + "-wal")
        cannot_share = getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY"))
        if not cannot_share:
            raise
        db.close()
        if wal.exists() and wal.stat().st_size:
            # (it said "unable to open database file" alone)
            raise CatalogError(
                f"{path}: cannot be read here: its folder cannot be written, and a sync's write-ahead log "
                f"({wal.name}) beside it needs a process that may write there; run any cachedex command "
                "where it can, or read a copy"
            ) from exc
        journal = path.with_name(path.name + "-journal")
        if journal.exists() and journal.stat().st_size:
            # A write in a rollback journal (an empty catalog's first: rollback_journal_if_alone)
            # whose process was killed: only a writer can roll it back, and read as
            # immutable the file would show what the write left half done.
            raise CatalogError(
                f"{path}: its first sync was interrupted and is not rolled back yet; run 'cachedex sync'"
            ) from exc
        db = sqlite3.connect(
            f"file:{quote(os.fsencode(path))}?mode=ro&immutable=1",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
    return db
