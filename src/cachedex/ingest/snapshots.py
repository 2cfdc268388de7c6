"""What reading a mirror's index gives, whatever the layout: the state remembered from
the last read, and the index as found now."""

from __future__ import annotations

import msgspec

from .index import RawIndex

__all__ = ["OCI_LAYOUT", "IndexSnapshot", "PreviousState"]

#: The ``layout`` of a mirror that is an OCI registry (Spack's layouts are 1 to 3).
OCI_LAYOUT = 100


class PreviousState(msgspec.Struct, frozen=True):
    """What the catalog remembers of a mirror's last successful read."""

    layout: int
    checksum: str
    etag: str | None = None
    last_modified: str | None = None


class IndexSnapshot(msgspec.Struct, frozen=True):
    """A mirror's index as found now. ``data`` is None when it did not change, or when
    it was read decoded: then ``index`` holds it. ``url`` is where its bytes came from
    (the v3 blob, v2's index.json), for messages."""

    layout: int
    checksum: str
    data: bytes | bytearray | None
    etag: str | None = None
    last_modified: str | None = None
    url: str = ""
    index: RawIndex | None = None
    #: why a v2 index was read with nothing to check it against ("" when it was checked):
    #: its index.json.hash is not there, or holds no sha256
    unverified: str = ""
