"""A tag's new specs as the catalog writer takes them: :class:`IndexBatches` builds
their records from the indexes a sync read, :func:`batch_size` at a time. Apart from
:mod:`.sync` (which decides what is new, and writes it) as the one
:class:`~cachedex.catalog.batches.RecordBatches` of ingest, with the sizing it needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from ..catalog.batches import RecordBatches
from ..values import SpecRecord
from .records import RecordBuilder
from .sources import over_network

if TYPE_CHECKING:
    from .sizes import Prefetch
    from .tag_reads import MirrorRead

__all__ = ["IndexBatches", "batch_size"]

#: New specs built and written a batch at a time: one batch of decoded records is alive
#: at once (bounding a first sync's memory), and a bulk load hands later batches to a
#: forked process (``catalog/batches.py``). At most this many in a batch...
BATCH_SIZE = 20_000
#: ...and at most a quarter of a write's new specs, but never fewer than this many. A
#: batch's records weigh about half as much as their index's bytes: 20,000 of a
#: 30,000-record tag took its peak to 3.2 x its root index, 8,000 to 2.9 x (the same
#: time); smaller batches cost time (5,000: 1.17 x), and so do they on a big tag
#: (8,000 of 250,000: 1.09-1.15 x, bench/README.md).
SMALL_BATCH_SIZE = 8_000


def batch_size(new_specs: int) -> int:
    """How many of a write's ``new_specs`` new specs go in one batch."""
    return min(BATCH_SIZE, max(SMALL_BATCH_SIZE, new_specs // 4))


class IndexBatches(RecordBatches):
    """The records of ``new_hashes``, each built from its read's index, :func:`batch_size`
    at a time; a batch is ready once the sizes ``prefetch`` reads for it have come (see
    Prefetch.wait_for)."""

    def __init__(self, new_hashes: dict[str, MirrorRead], prefetch: Prefetch | None) -> None:
        super().__init__()
        self._prefetch = prefetch
        by_read: dict[int, tuple[MirrorRead, list[str]]] = {}
        for dag_hash, read in new_hashes.items():
            by_read.setdefault(id(read), (read, []))[1].append(dag_hash)
        self.may_fork = not any(over_network(read.ref.url) for read, _ in by_read.values())
        size = batch_size(len(new_hashes))
        self._slices = [
            (read, hashes[start : start + size])
            for read, hashes in by_read.values()
            for start in range(0, len(hashes), size)
        ]
        self._builders: dict[int, RecordBuilder] = {}

    def __len__(self) -> int:
        return len(self._slices)

    def hashes(self, position: int) -> list[str]:
        return self._slices[position][1]

    def build(self, position: int) -> list[SpecRecord]:
        read, hashes = self._slices[position]
        builder = self._builders.get(id(read))
        if builder is None:
            assert read.index is not None  # kept until every batch is built
            builder = self._builders[id(read)] = RecordBuilder(read.index)
        return builder.build(hashes)

    def nodes(self, position: int) -> list[msgspec.Raw]:
        read, hashes = self._slices[position]
        assert read.index is not None
        records = read.index.records
        return [records[dag_hash].spec for dag_hash in hashes]

    def ready(self, position: int) -> None:
        if self._prefetch is not None:
            self._prefetch.wait_for(self.hashes(position))

    def release(self) -> None:
        """Let every index go (the root's: its whole bytes) once every batch is written,
        before the writer sorts the new rows into their indexes, the sync's peak."""
        for read, _ in self._slices:
            read.index = None
        self._builders.clear()
