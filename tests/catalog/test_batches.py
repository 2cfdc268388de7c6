"""A bulk load's later batches built in a forked process (catalog/batches.py)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from cachedex.catalog import Catalog, TagWriter
from cachedex.catalog import batches as batches_module
from cachedex.catalog.batches import FORK_MIN_BATCHES, OWN_SHARE, RecordBatches, can_fork
from cachedex.errors import IndexFormatError
from cachedex.values import Dependency, SpecRecord
from tests.helpers import record, replace_mirror, write_tag

pytestmark = pytest.mark.skipif(not can_fork(), reason="batches are built in a forked process on Linux only")

BATCH = 600  # (a dictionary is trained on the first batch's nodes: 500 at least)
COUNT = BATCH * FORK_MIN_BATCHES + 150  # the last batch smaller
SPLIT = max(1, round((COUNT // BATCH + 1) * OWN_SHARE))


@pytest.fixture(autouse=True)
def _small_writes_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches_module, "FORK_MIN_SPECS", 2 * BATCH)


def _hash(n: int) -> str:
    return f"{n:032x}".replace("0", "q")


def _records(count: int, extra: Sequence[Dependency] = ()) -> list[SpecRecord]:
    """Records with varied nodes, each depending on earlier and later ones (edges across
    batches, of several kinds), the last ones also on ``extra``."""
    rng = random.Random(7)
    records = []
    for n in range(count):
        node = {
            "name": f"pkg-{n % 89}",
            "version": f"{rng.randint(1, 9)}.{rng.randint(0, 40)}",
            "arch": {"platform": "linux", "platform_os": "ubuntu24.04", "target": {"name": "zen4"}},
            "parameters": {"shared": rng.random() < 0.5, "cflags": [], "note": "größe ✓"},
            "hash": _hash(n),
        }
        deps = [
            Dependency(_hash(other), f"pkg-{other % 89}", rng.choice((1, 2, 6)), rng.choice(("", "mpi", "c,cxx")))
            for other in {rng.randrange(count) for _ in range(3)} - {n}
        ]
        if n >= count - 5:
            deps += extra
        records.append(record(_hash(n), f"pkg-{n % 89}", node=json.dumps(node).encode(), dependencies=tuple(deps)))
    return records


class _Batches(RecordBatches):
    """Batches of a list of records; notes which this process built, and can fail or
    kill the forked process at a given batch."""

    def __init__(self, records: list[SpecRecord], *, fail_at: int = -1, kill_at: int = -1) -> None:
        super().__init__([records[i : i + BATCH] for i in range(0, len(records), BATCH)])
        self.parent = os.getpid()
        self.built_here: list[int] = []
        self.fail_at, self.kill_at = fail_at, kill_at
        self.interrupt_at = -1
        self.on_ready: Callable[[int], None] = lambda position: None
        self.slow_at = -1

    def build(self, position: int) -> Sequence[SpecRecord]:
        if os.getpid() == self.parent:
            self.built_here.append(position)
        elif position == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        elif position == self.slow_at:
            time.sleep(1)
        if position == self.fail_at:
            raise IndexFormatError("/m/index.json", f"record of batch {position}: invalid node")
        return super().build(position)

    def nodes(self, position: int) -> list[bytes]:
        return [r.node for r in super().build(position)]  # (not a build: not noted)

    def ready(self, position: int) -> None:
        if position == self.interrupt_at:
            raise KeyboardInterrupt
        self.on_ready(position)


def _write(catalog: Catalog, batches: _Batches, records: list[SpecRecord]) -> None:
    with catalog.writing_tag("t") as writer:
        writer.add_spec_batches([r.hash for r in records], batches, {r.hash: 1000 + i for i, r in enumerate(records)})
        writer.link_pending_edges()
        replace_mirror(writer, "root", {r.hash: True for r in records})


def _written(path: Path) -> list[list[tuple[object, ...]]]:
    db = sqlite3.connect(path)
    return [
        db.execute("SELECT * FROM specs ORDER BY id").fetchall(),
        db.execute("SELECT * FROM nodes ORDER BY spec_id").fetchall(),
        db.execute("SELECT * FROM edges ORDER BY parent, child").fetchall(),
    ]


def _built_here_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: list[SpecRecord]) -> Path:
    """The same write with every batch built in this process."""
    path = tmp_path / "here.sqlite"
    with monkeypatch.context() as patch:
        patch.setattr(batches_module, "can_fork", lambda: False)
        batches = _Batches(records)
        with Catalog(path) as catalog:
            _write(catalog, batches, records)
    assert batches.built_here == list(range(len(batches)))
    return path


def test_later_batches_built_by_a_forked_process_are_written_as_if_built_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _records(COUNT)
    batches = _Batches(records)
    with Catalog(tmp_path / "forked.sqlite") as catalog:
        _write(catalog, batches, records)
    assert batches.built_here == list(range(SPLIT))  # the others came from the forked process
    written = _written(tmp_path / "forked.sqlite")
    assert written == _written(_built_here_alone(tmp_path, monkeypatch, records))
    assert len(written[0]) == COUNT and {row[-1] for row in written[0]} >= {1000, 1000 + COUNT - 1}
    assert {row[3] for row in written[2]} == {"", "mpi", "c,cxx"}


def test_a_batch_the_forked_process_fails_is_built_here_and_raises_as_it_would(tmp_path: Path) -> None:
    records = _records(COUNT)
    batches = _Batches(records, fail_at=SPLIT + 1)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with pytest.raises(IndexFormatError, match=f"batch {SPLIT + 1}: invalid node"):
            _write(catalog, batches, records)
        assert catalog.spec_ids([r.hash for r in records]) == {}  # the tag rolled back whole
    assert batches.built_here == [*range(SPLIT), SPLIT + 1]


def test_a_forked_process_killed_midway_leaves_the_rest_to_this_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _records(COUNT)
    batches = _Batches(records, kill_at=SPLIT + 1)
    with Catalog(tmp_path / "forked.sqlite") as catalog:
        _write(catalog, batches, records)
    assert batches.built_here == [*range(SPLIT), *range(SPLIT + 1, len(batches))]
    assert _written(tmp_path / "forked.sqlite") == _written(_built_here_alone(tmp_path, monkeypatch, records))


def test_an_edge_to_a_spec_only_the_catalog_holds_is_linked_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = record("s" * 32, "openmpi")
    records = _records(COUNT, extra=[Dependency(stored.hash, "openmpi", 2, "mpi")])
    batches = _Batches(records)
    with Catalog(tmp_path / "forked.sqlite") as catalog:
        write_tag(catalog, "other", [stored])
        _write(catalog, batches, records)
        (stored_id,) = catalog.spec_ids([stored.hash]).values()
    last = len(batches) - 1
    assert batches.built_here == [*range(SPLIT), last]  # (the forked process has no catalog to ask)
    written = _written(tmp_path / "forked.sqlite")
    assert sum(1 for edge in written[2] if edge[1] == stored_id) == 5
    with Catalog(tmp_path / "here.sqlite") as catalog:
        write_tag(catalog, "other", [stored])
        with monkeypatch.context() as patch:
            patch.setattr(batches_module, "can_fork", lambda: False)
            _write(catalog, _Batches(records), records)
    assert written == _written(tmp_path / "here.sqlite")


def test_an_interrupted_write_stops_the_forked_process(tmp_path: Path) -> None:
    records = _records(COUNT)
    batches = _Batches(records)
    batches.interrupt_at = SPLIT + 1
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with pytest.raises(KeyboardInterrupt):
            _write(catalog, batches, records)
        assert catalog.spec_ids([r.hash for r in records]) == {}
    with pytest.raises(ChildProcessError):  # no child left, running or unreaped
        os.waitpid(-1, os.WNOHANG)


def test_few_batches_are_built_here(tmp_path: Path) -> None:
    records = _records(BATCH * (FORK_MIN_BATCHES - 1))
    batches = _Batches(records)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _write(catalog, batches, records)
    assert batches.built_here == list(range(FORK_MIN_BATCHES - 1))


def test_a_writer_of_plain_batches_builds_them_here(tmp_path: Path) -> None:
    records = _records(COUNT)
    with Catalog(tmp_path / "c.sqlite") as catalog, catalog.writing_tag("t") as writer:
        assert isinstance(writer, TagWriter)
        chunks = [records[i : i + BATCH] for i in range(0, COUNT, BATCH)]
        assert writer.add_spec_batches([r.hash for r in records], iter(chunks), {}) == COUNT


def test_a_write_of_few_specs_in_many_batches_is_built_here(tmp_path: Path) -> None:
    records = _records(8)
    batches = _Batches(records)
    batches._batches = [[r] for r in records]  # eight batches of one spec
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _write(catalog, batches, records)
    assert batches.built_here == list(range(8))


def _open_files() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("failing", ["fork", "pipe", "temporary file"])
def test_without_a_forked_process_every_batch_is_built_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """A limit on processes, memory that strict overcommit refuses a copy of this one,
    or no temporary folder: the write goes on as if alone, leaving no file open."""

    def refused(*args: object, **kwargs: object) -> object:
        raise OSError(12, "Cannot allocate memory")

    records = _records(COUNT)
    here = _built_here_alone(tmp_path, monkeypatch, records)
    target = {"fork": (os, "fork"), "pipe": (os, "pipe"), "temporary file": (batches_module.tempfile, "TemporaryFile")}
    monkeypatch.setattr(*target[failing], refused)
    batches = _Batches(records)
    before = _open_files()
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _write(catalog, batches, records)
    assert _open_files() <= before
    assert batches.built_here == list(range(len(batches)))
    assert _written(tmp_path / "c.sqlite") == _written(here)


def test_a_process_that_ignores_its_children_still_writes(tmp_path: Path) -> None:
    """Started with SIGCHLD ignored (it survives exec), the kernel reaps the forked
    process itself: there is no child left to wait for."""
    records = _records(COUNT)
    batches = _Batches(records)
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        with Catalog(tmp_path / "c.sqlite") as catalog:
            _write(catalog, batches, records)
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert batches.built_here == list(range(SPLIT))
    assert len(_written(tmp_path / "c.sqlite")[0]) == COUNT


@pytest.fixture
def other_pipe() -> Iterator[tuple[int, int]]:
    """A pipe of this process's (as the manifests' reading process's input is)."""
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        with contextlib.suppress(OSError):  # (closed by the test)
            os.close(fd)


def test_the_forked_process_keeps_no_other_pipe_open(tmp_path: Path, other_pipe: tuple[int, int]) -> None:
    """While it works, a pipe this process closes has ended for its reader: the forked
    process holds no end of it (else the manifests' reading process would wait for
    the end of its request as long as the forked process lives)."""
    read_end, write_end = other_pipe
    records = _records(COUNT)
    batches = _Batches(records)
    batches.slow_at = SPLIT + 1  # (still at work when this process writes batch SPLIT)
    ended: list[bool] = []

    def close_and_read(position: int) -> None:
        if position == SPLIT:
            os.close(write_end)
            readable, _, _ = select.select([read_end], [], [], 0.5)
            ended.append(bool(readable) and os.read(read_end, 1) == b"")

    batches.on_ready = close_and_read
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _write(catalog, batches, records)
    assert ended == [True]


def test_a_batch_from_the_forked_process_is_written_with_sizes_that_came_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync reads sizes while it writes: a batch written before its sizes came would lose them."""
    monkeypatch.setattr(batches_module, "FORK_MIN_SPECS", 2 * BATCH)
    records = _records(COUNT)
    sizes: dict[str, int] = {}
    batches = _Batches(records)
    batches.on_ready = lambda position: sizes.update(
        (r.hash, 1000 + position) for r in records[position * BATCH : (position + 1) * BATCH]
    )
    with Catalog(tmp_path / "c.sqlite") as catalog, catalog.writing_tag("t") as writer:
        writer.add_spec_batches([r.hash for r in records], batches, sizes)
        replace_mirror(writer, "root", {r.hash: True for r in records})
    assert batches.built_here == list(range(SPLIT))  # (the others were the forked process's)
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert db.execute("SELECT count(*) FROM specs WHERE size IS NULL").fetchone() == (0,)
    assert db.execute("SELECT max(size) FROM specs").fetchone() == (1000 + len(batches) - 1,)
    db.close()
