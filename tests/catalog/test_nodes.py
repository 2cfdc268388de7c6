"""Raw nodes at rest (catalog/nodes.py): compressed with a trained dictionary, read back exactly."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
import zstandard

from cachedex.catalog import Catalog
from cachedex.catalog.nodes import MIN_TRAINING_NODES
from cachedex.values import SpecRecord
from tests.helpers import record, write_tag


def _node(rng: random.Random, n: int) -> bytes:
    """A node as an index holds it: its own spacing and key order, text beyond ASCII."""
    node = {
        "name": f"pkg-{n % 97}",
        "version": f"{rng.randint(1, 9)}.{rng.randint(0, 30)}",
        "arch": {"platform": "linux", "platform_os": "ubuntu24.04", "target": {"name": "zen4", "features": ["avx"]}},
        "parameters": {"shared": rng.random() < 0.5, "build_system": "cmake", "cflags": [], "note": "größe ✓"},
        "hash": f"{n:032d}",
    }
    text = json.dumps(node, ensure_ascii=n % 3 == 0, indent=None if n % 2 else 1)
    return text.encode()


def _records(first: int, count: int) -> list[SpecRecord]:
    rng = random.Random(first)
    return [record(f"{n:032d}", f"pkg-{n % 97}", node=_node(rng, n)) for n in range(first, first + count)]


def _stored(path: Path) -> dict[str, tuple[str, int]]:
    db = sqlite3.connect(path)
    rows = db.execute("SELECT s.hash, typeof(n.node), length(n.node) FROM nodes n JOIN specs s ON s.id = n.spec_id")
    return {dag_hash: (kind, length) for dag_hash, kind, length in rows}


def _dictionaries(path: Path) -> int:
    return int(sqlite3.connect(path).execute("SELECT count(*) FROM node_dictionaries").fetchone()[0])


def test_nodes_are_stored_compressed_and_read_back_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    records = _records(0, MIN_TRAINING_NODES + 100)
    with Catalog(path) as catalog:
        write_tag(catalog, "t", records)
        for r in records:
            assert catalog.node(r.hash) == r.node.decode()
        ids = catalog.spec_ids(r.hash for r in records)
        by_id = {ids[r.hash]: r.node for r in records}
        assert {spec_id: node.encode() for spec_id, node in catalog.nodes_of(list(by_id))} == by_id
        assert {row[0]: row[-1] for row in catalog.spec_nodes(list(by_id))} == by_id
    stored = _stored(path)
    assert {kind for kind, _ in stored.values()} == {"blob"}
    assert sum(length for _, length in stored.values()) < sum(len(r.node) for r in records) / 3
    assert _dictionaries(path) == 1


def test_small_writes_stay_text_until_one_trains_the_dictionary(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    small, big, later = _records(0, 10), _records(10, MIN_TRAINING_NODES), _records(10_000, 5)
    with Catalog(path) as catalog:
        write_tag(catalog, "a", small)
        assert {kind for kind, _ in _stored(path).values()} == {"text"} and _dictionaries(path) == 0
        write_tag(catalog, "b", big)
        write_tag(catalog, "c", later)  # few nodes, but a dictionary exists: packed with it
        stored = _stored(path)
        assert [stored[r.hash][0] for r in small] == ["text"] * len(small)
        assert {stored[r.hash][0] for r in big + later} == {"blob"}
        for r in small + big + later:
            assert catalog.node(r.hash) == r.node.decode()
    assert _dictionaries(path) == 1


def test_a_failed_write_keeps_neither_its_nodes_nor_its_dictionary(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    records = _records(0, MIN_TRAINING_NODES)
    with Catalog(path) as catalog:
        with pytest.raises(RuntimeError, match="stop"), catalog.writing_tag("t") as writer:
            writer.add_specs(records, {})
            raise RuntimeError("stop")
        assert catalog.node(records[0].hash) is None
    assert _dictionaries(path) == 0 and _stored(path) == {}


def test_nodes_stay_text_when_no_dictionary_can_be_trained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise zstandard.ZstdError("cannot train")

    monkeypatch.setattr(zstandard, "train_dictionary", refuse)
    path = tmp_path / "c.sqlite"
    records = _records(0, MIN_TRAINING_NODES)
    with Catalog(path) as catalog:
        write_tag(catalog, "t", records)
        assert catalog.node(records[-1].hash) == records[-1].node.decode()
    assert {kind for kind, _ in _stored(path).values()} == {"text"} and _dictionaries(path) == 0
