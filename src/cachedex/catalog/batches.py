"""New specs a batch at a time, and a bulk load's later batches built in a forked process.

In a first sync, each batch of new specs is built (its nodes decoded into records) and
then written (SQLite takes its specs, nodes and edges), one after the other, on one
core: ~2.3 s and ~2.9 s for 250,000 specs, while the other core is idle once the sizes
are read. A thread cannot take the building's share: both halves are Python that holds
the GIL, and ``executemany`` gives it up and takes it back for every row (a thread
that built the next batch meanwhile: 1.00 ×). A forked process can. It inherits the
decoded index and every id, builds the records of the later batches and all a writer
needs of them (their rows, their nodes packed, their edges packed), and hands them over
through a temporary file, while this process builds and writes the earlier batches
itself; then this process only writes the others, in order. See ``bench/README.md``.

The forked process touches neither the catalog nor the network: a batch it cannot
finish (an edge to a spec without an id, which needs the catalog; an index the records
refuse) is built here instead, so that what is written, and any error raised, is what
building every batch here gives. It exits when it is done, or when this process stops
it (an error here, Ctrl-C): the write is then rolled back as any other.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import struct
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType

import msgspec

from .._perf import can_fork, end_fork, fork_alone
from ..values import SpecRecord
from .edge_writer import EdgeWriter, pack_text
from .nodes import NodePacker

__all__ = [
    "FORK_MIN_BATCHES",
    "FORK_MIN_SPECS",
    "INSERT_NODE",
    "INSERT_SPEC",
    "OWN_SHARE",
    "ForkedBatches",
    "RecordBatches",
    "batch_bytes",
    "can_fork",
    "forking_pays",
    "insert_batch_bytes",
    "spec_row",
]

#: A write of fewer new specs, or of fewer batches, is built here alone: the fork and
#: the hand-over would cost more than they save (a tag of 50,000 new specs among
#: 250,000 known ones gained nothing: its time is SQLite's, keeping indexes up).
FORK_MIN_SPECS = 60_000
FORK_MIN_BATCHES = 3
#: The share of the batches this process builds itself before it writes the forked
#: process's: building one here costs about twice its writing, and about the forked
#: process's building of one (measured in bench/ingest.py's sync).
OWN_SHARE = 1 / 3

# A note through the pipe: a batch's position, what became of it, where its data lies.
_NOTE = struct.Struct("<qBqq")
_BUILT, _DECLINED = 0, 1


class RecordBatches:
    """The records of new specs, batch by batch, each built on demand by position.

    :meth:`build` may run in a forked process: it must read nothing but what the object
    holds (no catalog, no network, no lock another thread may hold). :meth:`ready` runs
    in the writing process before a batch is written. Iterating gives each batch once
    it is ready, for writers that build them in turn."""

    #: Whether a forked process may build some (a writer forks only for many specs).
    #: Not while the sizes are read over the network: that reading is then the bound,
    #: and a forked process takes its CPU (bench/README.md).
    may_fork = True

    def __init__(self, batches: Sequence[Sequence[SpecRecord]] = ()) -> None:
        self._batches = batches

    def __len__(self) -> int:
        return len(self._batches)

    def build(self, position: int) -> Sequence[SpecRecord]:
        """The records of batch ``position``."""
        return self._batches[position]

    def nodes(self, position: int) -> Sequence[bytes | msgspec.Raw]:
        """The raw nodes of batch ``position`` (what its records' ``node`` hold)."""
        return [record.node for record in self.build(position)]

    def ready(self, position: int) -> None:
        """Wait until batch ``position`` may be written (what it needs has come)."""

    def __iter__(self) -> Iterator[Sequence[SpecRecord]]:
        for position in range(len(self)):
            records = self.build(position)
            self.ready(position)
            yield records


def forking_pays(specs: int, batches: int) -> bool:
    """Whether a write of ``specs`` new specs in ``batches`` batches has the later ones
    built by a forked process."""
    return specs >= FORK_MIN_SPECS and batches >= FORK_MIN_BATCHES and can_fork()


class ForkedBatches:
    """The batches ``positions``, made into bytes by ``make`` in a forked process, read
    back in order (:meth:`results`): (position, bytes), or (position, None) for a batch
    to build here (``make`` returned None, failed, or the process ended before it)."""

    def __init__(self, make: Callable[[int], bytes | None], positions: range) -> None:
        self._make = make
        self._positions = positions
        self._pid = 0
        self._notes = -1
        self._file = -1

    def __enter__(self) -> ForkedBatches:
        write_end = -1
        try:
            with tempfile.TemporaryFile(prefix="cachedex-batches-") as handle:
                self._file = os.dup(handle.fileno())  # (the duplicate keeps the unnamed file)
            self._notes, write_end = os.pipe()
            self._pid = fork_alone((write_end, self._file), lambda: self._run_child(write_end))
        except OSError:
            # No fork (a limit on processes, memory that strict overcommit refuses), no
            # pipe, no temporary file: every batch is built here, as if alone.
            self._pid = 0
            self._close(write_end)
            self._close_own()
            return self
        except BaseException:
            self._close(write_end)
            self._finish()
            raise
        self._close(write_end)
        return self

    def _run_child(self, notes: int) -> None:
        """The forked process's work: each batch built, written to the file, noted."""
        offset = 0
        for position in self._positions:
            try:
                data = self._make(position)
            except Exception:  # built here again, where it raises as it would have
                break
            if data is None:
                os.write(notes, _NOTE.pack(position, _DECLINED, 0, 0))
                continue
            view = memoryview(data)
            while view:
                view = view[os.pwrite(self._file, view, offset + len(data) - len(view)) :]
            os.write(notes, _NOTE.pack(position, _BUILT, offset, len(data)))
            offset += len(data)

    def results(self) -> Iterator[tuple[int, bytes | None]]:
        """Each position in order, with its bytes (None: build it here)."""
        for position in self._positions:
            note = self._read_note() if self._pid else None
            if note is None or note[0] != position:
                # Ended early (a batch it could not build, or killed): the rest are built here.
                self._stop()
                yield from ((p, None) for p in range(position, self._positions.stop))
                return
            _, status, offset, length = note
            yield position, (os.pread(self._file, length, offset) if status == _BUILT else None)

    def _read_note(self) -> tuple[int, int, int, int] | None:
        data = b""
        while len(data) < _NOTE.size:
            chunk = os.read(self._notes, _NOTE.size - len(data))
            if not chunk:
                return None
            data += chunk
        position, status, offset, length = _NOTE.unpack(data)
        return position, status, offset, length

    def _stop(self) -> None:
        """End the forked process (if it has not ended) and reap it."""
        pid, self._pid = self._pid, 0
        if pid:
            end_fork(pid)

    @staticmethod
    def _close(fd: int) -> None:
        if fd >= 0:
            os.close(fd)

    def _close_own(self) -> None:
        self._close(self._notes)
        self._close(self._file)
        self._notes = self._file = -1

    def _finish(self) -> None:
        try:
            self._stop()
        finally:
            self._close_own()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._finish()


#: A new spec's row (:func:`spec_row` and its size) and its node, as every writer inserts them.
INSERT_SPEC = "INSERT INTO specs VALUES (?,?,?,?,?,?,?,?,?,?,?)"
INSERT_NODE = "INSERT INTO nodes VALUES (?,?)"


def spec_row(ids: Mapping[str, int], r: SpecRecord) -> tuple[int, str, str, str, str, str, str, str, str, int]:
    """A row of ``specs`` for a new record, but for its size (the last column)."""
    variants = _encode(r.variants).decode()
    return (ids[r.hash], r.hash, r.name, r.version, r.platform, r.os, r.target, r.compiler, variants, int(r.external))


class _BatchRows(msgspec.Struct, array_like=True):
    """A batch as a forked process hands it over: rows of ``specs`` without their size,
    the nodes packed (one buffer, and each one's length), the edges packed, and the
    kinds of edge numbered since its last batch."""

    specs: list[tuple[int, str, str, str, str, str, str, str, str, int]]
    node_lengths: list[int]
    nodes: bytes
    edges: str
    kinds: list[tuple[int, int, str]]


_encode = msgspec.json.encode
_encode_batch = msgspec.msgpack.Encoder().encode
_decode_batch = msgspec.msgpack.Decoder(_BatchRows).decode


def batch_bytes(
    records: Sequence[SpecRecord], ids: Mapping[str, int], packer: NodePacker, edges: EdgeWriter, top: int
) -> bytes | None:
    """What :func:`insert_batch_bytes` writes of ``records`` (in a forked process: it
    reads nothing but its arguments, and ``packer`` must have its dictionary); None
    when an edge names a spec without an id in ``ids`` (the catalog may hold it)."""
    packed_edges = edges.pack([ids[r.hash] for r in records], records, ids, top)
    if packed_edges is None:
        return None
    nodes = packer.pack([r.node for r in records])
    rows = _BatchRows(
        [spec_row(ids, r) for r in records],
        [len(node) for node in nodes],
        b"".join(nodes),  # type: ignore[arg-type]  # (frames are bytes-like)
        pack_text(packed_edges),
        edges.new_kinds(),
    )
    return _encode_batch(rows)


def insert_batch_bytes(db: sqlite3.Connection, data: bytes, sizes: Mapping[str, int], edges: EdgeWriter) -> int:
    """Insert a batch :func:`batch_bytes` made (its edges through ``edges``, the copy of
    the writer that packed them); returns its count of specs."""
    rows = _decode_batch(data)
    get_size = sizes.get
    db.executemany(INSERT_SPEC, ((*row, get_size(row[1])) for row in rows.specs))
    frames = memoryview(rows.nodes)
    ends = itertools.accumulate(rows.node_lengths)
    db.executemany(
        INSERT_NODE,
        (
            (row[0], frames[end - length : end])
            for row, length, end in zip(rows.specs, rows.node_lengths, ends, strict=True)
        ),
    )
    edges.write_packed(rows.edges, rows.kinds)
    return len(rows.specs)
