"""The server's response cache: answers kept in memory, bounded in bytes.

A key is (catalog file, catalog state, path, the parameters the answer depends on), so
what a client can vary freely (unknown parameters are refused; parameters a page only
reads in the browser are left out) never makes a new entry. The bound is in bytes, body
and gzipped copy counted, because one tag page of a big tag weighs megabytes and a
search answer a few kilobytes: a bound in entries is no bound on memory.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Hashable

import msgspec

from ..gzipped import gzip_bytes

__all__ = ["CACHE_BYTES", "GZIP", "Cached", "ResponseCache", "cached"]

#: What one server process keeps at most (bodies and their gzipped copies).
CACHE_BYTES = 64 * 1024 * 1024

#: Bodies shorter than this are not worth compressing.
GZIP_MIN = 800
#: The media type of a gzip file (a twin's ``.json.gz``), which is not compressed again.
GZIP = "application/gzip"

#: Bodies at least this long are compressed harder (they are sent many times).
GZIP_THOROUGH = 256 * 1024

#: Counted per entry besides its bodies and its key's text: the ETag, the dict slot.
_OVERHEAD = 512


class Cached(msgspec.Struct, frozen=True):
    """One answer as it is sent: body, type, status, ETag, and the gzipped body."""

    body: bytes  #: empty when only the gzipped copy is kept (:meth:`plain` gives it)
    media_type: str
    status: int
    etag: str
    gzipped: bytes | None  # compressed once, when built, not on every request
    gzipped_only: bool = False

    @property
    def weight(self) -> int:
        """The bytes this answer holds."""
        return len(self.body) + len(self.gzipped or b"") + len(self.etag) + _OVERHEAD

    def plain(self) -> bytes:
        """The body as is: kept, or decompressed for the rare client that takes no gzip."""
        return zlib.decompress(self.gzipped, wbits=31) if self.gzipped_only and self.gzipped else self.body


def cached(body: bytes, media_type: str, status: int, etag: str) -> Cached:
    """An answer, gzipped once if it is long enough to gain from it."""
    # A gzip file (a tag's index.json.gz) gains nothing from a second gzip.
    worth = len(body) >= GZIP_MIN and media_type != GZIP
    # Small answers (a search, one package) are mostly asked once: level 3 takes 0.6-0.85 x
    # the CPU of level 6 from 10 kB up, for 2-5 % more bytes (zlib-ng's levels; the standard
    # library's level 3 took 1.1-5 x as long). Big ones are sent many times: level 6.
    level = 6 if len(body) >= GZIP_THOROUGH else 3
    zipped = gzip_bytes(body, level) if worth else None
    return Cached(body, media_type, status, etag, zipped)


class ResponseCache:
    """Least recently used answers, at most ``max_bytes`` of them; thread-safe.

    An answer heavier than a quarter of the bound is kept as its gzipped copy alone if
    that fits (a diff of two big tags: 70 MB of JSON, 8 MB gzipped, rebuilt in 11 s at
    every request when not kept), else served but not kept: it would push out everything
    else. Answers of another catalog state than the newest stored are
    dropped at once when a new state comes in, since no request will ask for them again.
    """

    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        #: Bytes held now (the sum of the entries' weights).
        self.size = 0
        #: key -> (answer, its weight and its key's)
        self._entries: OrderedDict[tuple[Hashable, ...], tuple[Cached, int]] = OrderedDict()
        self._state: Hashable = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[Hashable, ...]) -> Cached | None:
        """The answer stored under ``key`` (now the most recently used), or None."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self._entries.move_to_end(key)
            return hit[0]

    def put(self, state: Hashable, key: tuple[Hashable, ...], answer: Cached) -> None:
        """Keep ``answer`` under ``key``, an answer of catalog ``state``."""
        weight = answer.weight
        if weight > self.max_bytes // 4 and answer.gzipped is not None:
            answer = msgspec.structs.replace(answer, body=b"", gzipped_only=True)
            weight = answer.weight
        if weight > self.max_bytes // 4:
            return
        # A key holds the path and the filter values a client sends, up to a request
        # head's 64 KiB: uncounted, a 600-byte answer to a 6 kB ?os= was counted as
        # 1.1 kB and held 7 kB, and the bound had no limit. (Its text's length: the
        # strings it holds are most of what it takes.)
        weight += len(repr(key))
        with self._lock:
            if state != self._state:  # a sync committed (or the file was replaced)
                self._entries.clear()
                self.size = 0
                self._state = state
            old = self._entries.pop(key, None)
            if old is not None:
                self.size -= old[1]
            self._entries[key] = (answer, weight)
            self.size += weight
            while self.size > self.max_bytes:
                _, (_evicted, evicted_weight) = self._entries.popitem(last=False)
                self.size -= evicted_weight
