"""The server's catalog connections: read-only, one per thread, reopened when the file is replaced.

SQLite connections are not shared between threads, so each thread opens its own. A
connection keeps reading the file it opened even after that file is deleted (and a new
catalog written at the same path, say by ``rm``, then ``cachedex sync``): each request
compares the path's (device, inode) with the connection's, a ``stat`` of a microsecond,
and a thread whose file was replaced reopens. While any connection is open the old inode
stays allocated, so a new file cannot reuse its number and the change is always seen.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from ...catalog import Catalog
from ...catalog.facets import STATE_CACHE
from ...errors import CachedexError

__all__ = ["Catalogs", "FileId", "State", "forget_when_replaced"]

#: (device, inode) of a catalog file.
FileId = tuple[int, int]

#: What a cached answer was built from: the catalog file and its state token.
State = tuple[FileId, str]

_log = logging.getLogger("cachedex.serve")

#: What the server keeps of a catalog file by its state token, to forget (given the
#: path) when the file is replaced: a copy that went its own way may have the old token.
_FORGETTERS: list[Callable[[str], None]] = []


def forget_when_replaced(forget: Callable[[str], None]) -> Callable[[str], None]:
    """Have ``forget(path)`` called when the catalog file at ``path`` is found replaced."""
    _FORGETTERS.append(forget)
    return forget


# The search's facet indexes, cached by path and state token.
forget_when_replaced(STATE_CACHE.forget)


def _file_id(path: Path) -> FileId | None:
    try:
        status = os.stat(path)
    except OSError:  # deleted, and not written again yet: keep reading the old file
        return None
    return status.st_dev, status.st_ino


class Catalogs:
    """A read-only catalog connection per thread, and the warming of search indexes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        Catalog(path, readonly=True).close()  # fail at start-up, with a clear message
        self._file = _file_id(path)
        self._warmed: State | None = None
        self._warming = threading.Lock()
        #: True once the search indexes of the last catalog state seen are built.
        self.ready = False

    def get(self) -> tuple[Catalog, FileId]:
        """This thread's connection, to the file now at the path, and that file's id."""
        now = _file_id(self.path)
        catalog: Catalog | None = getattr(self._local, "catalog", None)
        opened: FileId | None = getattr(self._local, "file", None)
        if catalog is not None and opened is not None and (now is None or now == opened):
            return catalog, opened
        if catalog is not None:
            catalog.close()
            self._local.catalog = None
        catalog = Catalog(self.path, readonly=True)
        opened = _file_id(self.path) or now or (0, 0)
        self._local.catalog, self._local.file = catalog, opened
        self._replaced(opened)
        return catalog, opened

    def _replaced(self, opened: FileId) -> None:
        with self._warming:
            if self._file == opened:
                return
            self._file = opened
        for forget in _FORGETTERS:
            forget(str(self.path))
        _log.warning("%s was replaced; reading the new file", self.path)

    def warm(self, state: State, *, wait: bool = False) -> None:
        """Build the search indexes of catalog ``state`` (see :meth:`Catalog.warm_search`)
        once: now if ``wait``, else in a thread, so that the first searches after a sync
        do not pay for it. A failure (a damaged catalog) is logged: searches still work,
        each building what it needs, or answer the error."""
        with self._warming:
            if self._warmed == state:
                return
            self._warmed = state
            self.ready = False
        if wait:
            self._warm(state)
            threading.Thread(target=self._walk, args=(state,), name="cachedex-walks", daemon=True).start()
        else:
            threading.Thread(target=self._warm_and_walk, args=(state,), name="cachedex-warm", daemon=True).start()

    def _warm_and_walk(self, state: State) -> None:
        self._warm(state)
        self._walk(state)

    def _walk(self, state: State) -> None:
        """After the indexes, and while requests are answered: the walks up from the most
        depended-on packages (see :meth:`Catalog.warm_walks`), so that their first ``^dep``
        searches need none. A failure is logged: searches walk what they need."""
        try:
            with Catalog(self.path, readonly=True) as catalog:
                if _file_id(self.path) != state[0] or catalog.state_token()[0] != state[1]:
                    return  # replaced or synced meanwhile: the newer state's warm-up walks
                catalog.warm_walks()
        except (sqlite3.DatabaseError, CachedexError) as exc:
            _log.warning("%s: cannot walk the most depended-on packages (%s)", self.path, exc)

    def _warm(self, state: State) -> None:
        try:
            with Catalog(self.path, readonly=True) as catalog:
                if _file_id(self.path) != state[0]:
                    return  # replaced meanwhile: the next request warms the new file
                catalog.warm_search()
        except (sqlite3.DatabaseError, CachedexError) as exc:
            _log.warning("%s: cannot build the search indexes (%s); searches build what they need", self.path, exc)
            return
        with self._warming:
            self.ready = self._warmed == state
