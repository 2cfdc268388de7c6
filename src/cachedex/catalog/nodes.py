"""Raw nodes at rest: each compressed on its own, with a dictionary trained on the catalog's nodes.

A node is ~1.7 kB of JSON, and nodes were two thirds of a catalog: writing their text
was the largest single cost of a first sync. Nodes repeat each other (the same targets
with their feature lists, the same parameters and keys), so zstd with a dictionary
trained on a sample of them packs one to ~1/8 in ~5 µs, and unpacks it in ~1 µs. Each
node stays its own frame: a spec page reads one node, not a block.

The first write that brings :data:`MIN_TRAINING_NODES` nodes trains the dictionary and
stores it in ``node_dictionaries`` (in the same transaction, so a failed sync leaves
none). Until then, and in catalogs written before, nodes are stored as text. A stored
node is either: text (JSON), or a blob that is one zstd frame naming its dictionary.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import cast

import msgspec
import zstandard

__all__ = ["MIN_TRAINING_NODES", "NodePacker", "node_bytes_reader", "node_text_reader"]

#: The fewest nodes one write must bring to train a dictionary on (fewer give a poor one).
MIN_TRAINING_NODES = 500
#: Nodes sampled to train on, spread over the write; more took longer for no better ratio.
TRAINING_SAMPLES = 2000
DICTIONARY_BYTES = 64 * 1024
#: zstd's level 3 was both faster and smaller than level 1 with a dictionary, measured.
LEVEL = 3
#: The trainer's segment and d-mer sizes, given rather than searched for: its search
#: cost 0.19-0.28 s of every first sync (in the writing process, before anything is
#: written) for dictionaries that pack the bench's nodes within 0.3 % of these, and
#: better on a small tag's (0.088 against 0.095 of their size); these train in ~50 ms.
SEGMENT_BYTES, DMER_BYTES = 1024, 8
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

StoredNode = str | bytes


class NodePacker:
    """Turns the raw nodes a writer stores into what ``nodes.node`` holds."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        row = db.execute("SELECT dictionary FROM node_dictionaries ORDER BY rowid DESC LIMIT 1").fetchone()
        self._compressor: zstandard.ZstdCompressor | None = None
        if row is not None:
            self._use(zstandard.ZstdCompressionDict(bytes(row[0])))

    @property
    def packs_frames(self) -> bool:
        """Whether nodes are packed with a dictionary: :meth:`pack` then writes nothing to
        the catalog (it trains none), and needs nothing but the nodes."""
        return self._compressor is not None

    def _use(self, dictionary: zstandard.ZstdCompressionDict) -> None:
        self._compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=dictionary, write_checksum=False)

    def _train(self, nodes: Sequence[msgspec.Raw | bytes]) -> None:
        step = max(1, len(nodes) // TRAINING_SAMPLES)
        try:
            dictionary = zstandard.train_dictionary(
                DICTIONARY_BYTES, [bytes(n) for n in nodes[::step]], k=SEGMENT_BYTES, d=DMER_BYTES
            )
        except zstandard.ZstdError:
            return  # samples too alike or too small to learn from: stay with text
        self._db.execute(
            "INSERT OR IGNORE INTO node_dictionaries (id, dictionary) VALUES (?, ?)",
            (dictionary.dict_id(), dictionary.as_bytes()),
        )
        self._use(dictionary)

    def prepare(self, nodes: Sequence[msgspec.Raw | bytes]) -> None:
        """Train the dictionary on ``nodes`` now, if none is in use and they are enough:
        what :meth:`pack` does on its first call (the same nodes give the same one)."""
        if self._compressor is None and len(nodes) >= MIN_TRAINING_NODES:
            self._train(nodes)

    def pack(self, nodes: Sequence[msgspec.Raw | bytes]) -> Sequence[StoredNode | zstandard.BufferSegment]:
        """What to store for each of ``nodes`` (bytes of JSON, or anything exposing them)."""
        self.prepare(nodes)
        if self._compressor is None:
            return [str(node, "utf-8") for node in nodes]
        # On every core at once (zstd's own threads, without the GIL): each node is still
        # its own frame. What comes back are views into one buffer, which SQLite binds as
        # blobs.
        # (It takes any buffer, msgspec.Raw included; its stubs say bytes.)
        frames = self._compressor.multi_compress_to_buffer(
            cast("list[bytes | bytearray | memoryview[int]]", nodes), threads=-1
        )
        return [frames[i] for i in range(len(frames))]


def node_bytes_reader(db: sqlite3.Connection) -> Callable[[StoredNode], bytes]:
    """A function from a stored node to the bytes of its JSON, for one read of many nodes
    (it keeps what it loads; not to be shared between threads)."""
    decompressors: dict[int, zstandard.ZstdDecompressor] = {}

    def read(stored: StoredNode) -> bytes:
        if isinstance(stored, str):
            return stored.encode("utf-8")
        if stored[:4] != _ZSTD_MAGIC:
            return bytes(stored)
        dict_id = zstandard.get_frame_parameters(stored).dict_id
        decompressor = decompressors.get(dict_id)
        if decompressor is None:
            row = db.execute("SELECT dictionary FROM node_dictionaries WHERE id = ?", (dict_id,)).fetchone()
            if row is None:
                raise sqlite3.DatabaseError(f"a node names dictionary {dict_id}, which the catalog does not hold")
            decompressor = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(bytes(row[0])))
            decompressors[dict_id] = decompressor
        return decompressor.decompress(stored)

    return read


def node_text_reader(db: sqlite3.Connection) -> Callable[[StoredNode], str]:
    """:func:`node_bytes_reader`, giving the node's JSON text (a text node as it is)."""
    read_bytes = node_bytes_reader(db)

    def read(stored: StoredNode) -> str:
        return stored if isinstance(stored, str) else str(read_bytes(stored), "utf-8")

    return read
