"""How a catalog file is opened: a writer's connection (a new file gets 16 KiB pages, then
WAL mode, so that readers go on reading while a sync writes; another process's write is
waited for) and a reader's (read-only; immutable on storage where SQLite cannot share
the write-ahead log)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from urllib.parse import quote

from ..errors import CatalogError

__all__ = ["PAGE_SIZE", "WRITE_WAIT_SECONDS", "open_readonly", "open_writable"]

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
    up to ``write_wait`` seconds for another process's write transaction."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatalogError(f"{path.parent}: cannot create the catalog's folder ({exc.strerror or exc})") from exc
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute(f"PRAGMA busy_timeout={int(write_wait * 1000)}")
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


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection. On read-only storage SQLite cannot create the ``-shm``
    file WAL mode needs; a catalog closed cleanly (no ``-wal`` left) is then opened as
    immutable, which needs no ``-shm`` (MSG-1)."""
    if not path.exists():
        raise CatalogError(f"{path}: no catalog here yet; run 'cachedex sync' first")
    db = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    db.execute(f"PRAGMA busy_timeout={_READ_WAIT_MS}")
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        wal = path.with_name(path.name + "-wal")
        cannot_share = getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY"))
        if not cannot_share or (wal.exists() and wal.stat().st_size):
            raise
        db.close()
        db = sqlite3.connect(
            f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )
    return db
