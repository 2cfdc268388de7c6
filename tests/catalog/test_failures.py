"""The catalog under faults (reliability review): locks held by other processes, a full
disk, read-only files and storage, odd paths. Each is one line naming the file, and
the catalog keeps its content."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cachedex.catalog.connection as catalog_connection
from cachedex.catalog import Catalog
from cachedex.errors import CatalogError
from cachedex.ingest.sync import sync
from tests.helpers import Demo, dump, fixture_index, integrity_check, make_config, write_v2_mirror


def _hold_write_lock(path: Path, seconds: float, started: threading.Event) -> threading.Thread:
    """Another process's writer, as far as SQLite can tell: a connection holding the lock."""

    def hold() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        started.set()
        time.sleep(seconds)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    started.wait(10)
    return thread


def test_crash7_a_writer_waits_for_another_writer(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    Catalog(path).close()
    waits: list[float] = []
    holder = _hold_write_lock(path, 1.0, threading.Event())
    begun = time.monotonic()
    with Catalog(path, write_wait=20) as catalog, catalog.writing_tag("t", on_wait=lambda: waits.append(1)):
        waited = time.monotonic() - begun
    holder.join()
    assert waits == [1]
    assert 0.5 < waited < 10


def test_crash7_a_lock_held_too_long_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    Catalog(path).close()
    holder = _hold_write_lock(path, 3.0, threading.Event())
    with Catalog(path, write_wait=0.5) as catalog, pytest.raises(CatalogError) as caught, catalog.writing_tag("t"):
        pass
    holder.join()
    assert str(caught.value) == (
        f"{path}: another process kept the catalog locked for 0.5 s (another sync?); try again when it has finished"
    )


def test_crash7_syncs_of_tags_sharing_specs_wait_for_each_other(mirrors: Path, tmp_path: Path) -> None:
    """Both syncs read their indexes while a third writer holds the lock; the one that
    writes second must not insert the specs the first one stored meanwhile."""
    write_v2_mirror(tmp_path / "m", fixture_index(mirrors))
    config = make_config(
        tmp_path, [{"name": "alpha", "url": str(tmp_path / "m")}, {"name": "beta", "url": str(tmp_path / "m")}]
    )
    Catalog(config.catalog).close()
    holder = _hold_write_lock(config.catalog, 2.0, threading.Event())
    outcomes: dict[str, object] = {}

    def run(tag: str) -> None:
        with Catalog(config.catalog) as catalog:
            (outcomes[tag],) = sync(config, catalog, [tag], raise_unexpected=True)

    threads = [threading.Thread(target=run, args=(tag,)) for tag in ("alpha", "beta")]
    for thread in threads:
        thread.start()
    for thread in [*threads, holder]:
        thread.join(60)
    assert all(o.ok for o in outcomes.values()), outcomes  # type: ignore[attr-defined]
    with Catalog(config.catalog) as catalog:
        assert integrity_check(catalog) == "ok"
        alpha, beta = catalog.tag_stats()
        assert alpha.specs == beta.specs == 6


def _open_at_the_barrier(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        with Catalog(Path(path)) as catalog, catalog.writing_tag("t"):
            pass
        results.put("ok")
    except CatalogError as exc:
        results.put(str(exc))


def test_crash7_processes_opening_a_new_catalog_together(tmp_path: Path) -> None:
    """Three processes released together open a catalog no one made yet (as three
    ``cachedex sync`` started at once do): each waits for the others' lock, none is
    told the catalog is locked. Without the wait, one of the first rounds fails."""
    context = multiprocessing.get_context("fork")
    for round_ in range(40):
        path = str(tmp_path / f"c{round_}.sqlite")
        barrier, results = context.Barrier(3), context.Queue()
        processes = [context.Process(target=_open_at_the_barrier, args=(path, barrier, results)) for _ in range(3)]
        for process in processes:
            process.start()
        found = [results.get(timeout=60) for _ in processes]
        for process in processes:
            process.join(60)
        assert found == ["ok"] * 3, (round_, found)


def test_crash7_two_sync_commands_at_once(mirrors: Path, tmp_path: Path) -> None:
    """Real processes, started together, three rounds: none fails, nothing is lost."""
    for name in ("a", "b"):
        write_v2_mirror(
            tmp_path / name, fixture_index(mirrors, drop=("rqh2vuf6fqwkmipzgi2wjx352mq7y7ez",) if name == "b" else ())
        )
    config = tmp_path / "c.yaml"
    config.write_text(
        f"catalog: c.sqlite\ntags:\n  - {{name: a, url: {tmp_path / 'a'}}}\n  - {{name: b, url: {tmp_path / 'b'}}}\n"
    )
    for round_ in range(3):
        if round_:
            (tmp_path / "c.sqlite").unlink()
        commands = [[sys.executable, "-m", "cachedex", "-c", str(config), "sync", tag] for tag in ("a", "b", "a")]
        runs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands]
        errors = [r.communicate(timeout=60)[1] for r in runs]
        results = [(r.returncode, err) for r, err in zip(runs, errors, strict=True)]
        assert all(code == 0 for code, _ in results), results
        assert not any("Traceback" in err for _, err in results)
        with Catalog(tmp_path / "c.sqlite", readonly=True) as catalog:
            assert [s.specs for s in catalog.tag_stats()] == [6, 5]


def test_crash8_a_full_disk_is_one_line_and_loses_nothing(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small pages: the few specs of tag b then need pages that the full disk refuses
    # (in the free space of 16 KiB pages they would fit).
    monkeypatch.setattr(catalog_connection, "PAGE_SIZE", 1024)
    everything = fixture_index(mirrors)
    write_v2_mirror(tmp_path / "small", fixture_index(mirrors, drop=tuple(everything["database"]["installs"])[1:]))  # type: ignore[index]
    write_v2_mirror(tmp_path / "full", fixture_index(mirrors))
    config = make_config(
        tmp_path, [{"name": "a", "url": str(tmp_path / "small")}, {"name": "b", "url": str(tmp_path / "full")}]
    )
    with Catalog(config.catalog) as catalog:
        sync(config, catalog, ["a"])
        before = dump(catalog)
        pages = catalog._db.execute("PRAGMA page_count").fetchone()[0]
        # What a full disk looks like to SQLite: no page can be added.
        catalog._db.execute(f"PRAGMA max_page_count={pages}")
        (outcome,) = sync(config, catalog, ["b"], raise_unexpected=True)
        full = "the disk is full; what was being written is rolled back, the catalog keeps its previous content"
        assert outcome.error == f"{config.catalog}: {full}"
        assert dump(catalog) == before
        assert integrity_check(catalog) == "ok"


def test_crash10_a_catalog_folder_that_cannot_be_made(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(CatalogError, match=r"file/sub: cannot create the catalog's folder \(Not a directory\)"):
        Catalog(tmp_path / "file/sub/c.sqlite")


@pytest.mark.parametrize("path", ["/dev/null", "."])
def test_msg8_a_catalog_that_is_not_a_file(tmp_path: Path, path: str) -> None:
    with pytest.raises(CatalogError, match="not a regular file"):
        Catalog(tmp_path / path if path == "." else Path(path))


# -- read-only files and storage, as a user without write permission -------------------------


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder another user can read but not write (tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="cachedex-ro-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def _as_reader(*args: str) -> subprocess.CompletedProcess[str]:
    """``cachedex ARGS`` as a user who may not write the catalog's folder: nobody when
    the tests run as root (root writes anything), else this user after a chmod."""
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "cachedex", *args], capture_output=True, text=True, timeout=60
    )


def _catalog_in(folder: Path, mirrors: Path) -> Path:
    write_v2_mirror(folder / "m", fixture_index(mirrors))
    config = folder / "c.yaml"
    config.write_text(f"catalog: c.sqlite\ntags: [{{name: t, url: {folder / 'm'}}}]\n")
    with Catalog(folder / "c.sqlite") as catalog:
        sync(make_config(folder, [{"name": "t", "url": str(folder / "m")}]), catalog)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        (folder / "c.sqlite").chmod(0o444)
    assert not (folder / "c.sqlite-wal").exists()  # closed cleanly
    return config


def test_msg1_a_catalog_on_read_only_storage_can_be_read(mirrors: Path, shared_folder: Path) -> None:
    config = _catalog_in(shared_folder, mirrors)
    run = _as_reader("-c", str(config), "stats", "--json")
    assert run.returncode == 0, run.stderr
    assert '"specs": 6' in run.stdout


def test_msg1_a_read_only_catalog_with_a_write_ahead_log_says_what_to_do(mirrors: Path, shared_folder: Path) -> None:
    """A catalog whose sync's log (``-wal``) was left beside it, on storage this user may
    not write: SQLite cannot apply the log, and the one line said "unable to open
    database file" alone."""
    config = _catalog_in(shared_folder, mirrors)
    path = shared_folder / "c.sqlite"
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE scratch (x)")
    writer.commit()
    kept = {name: (shared_folder / name).read_bytes() for name in ("c.sqlite", "c.sqlite-wal")}
    writer.close()  # (it checkpoints and removes the log: the copies put it back)
    for name, data in kept.items():
        (shared_folder / name).write_bytes(data)
        (shared_folder / name).chmod(0o644)
    (shared_folder / "c.sqlite-shm").unlink(missing_ok=True)
    assert (shared_folder / "c.sqlite-wal").stat().st_size
    run = _as_reader("-c", str(config), "stats")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "a sync's write-ahead log (c.sqlite-wal) beside it" in run.stderr, run.stderr


def test_a_catalog_this_user_may_not_read_is_said_so(mirrors: Path, shared_folder: Path) -> None:
    """It said "catalog error (unable to open database file)", naming no cause."""
    config = _catalog_in(shared_folder, mirrors)
    (shared_folder / "c.sqlite").chmod(0o000)
    for command in ("stats", "sync"):
        run = _as_reader("-c", str(config), command)
        assert run.returncode == 1 and "Traceback" not in run.stderr
        said = "c.sqlite: cannot open the catalog's file: permission denied (this user may not read it)"
        assert said in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr


def test_crash9_syncing_into_a_read_only_catalog_is_one_line(mirrors: Path, shared_folder: Path) -> None:
    config = _catalog_in(shared_folder, mirrors)
    (shared_folder / "m/build_cache/index.json.hash").chmod(0o644)
    write_v2_mirror(shared_folder / "m", fixture_index(mirrors, drop=("rqh2vuf6fqwkmipzgi2wjx352mq7y7ez",)))
    run = _as_reader("-c", str(config), "sync")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "read-only" in run.stderr, run.stderr


def test_cos8_garbage_collection_forgets_what_no_mirror_or_history_needs(mirrors: Path, tmp_path: Path) -> None:
    everything = fixture_index(mirrors)
    installs = everything["database"]["installs"]  # type: ignore[index]
    needed = {d["hash"] for r in installs.values() for d in r["spec"].get("dependencies", [])}
    hashes = [h for h in installs if h not in needed]  # the first is a spec nothing depends on
    write_v2_mirror(tmp_path / "m", everything)
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        write_v2_mirror(tmp_path / "m", fixture_index(mirrors, drop=(hashes[0],)))
        sync(config, catalog)
        held_before = catalog.held_hashes()
        assert catalog.collect_garbage() == (0, 0)  # the history still names the dropped spec
        assert catalog.spec_ids([hashes[0]])
        specs, changes = catalog.collect_garbage(history_before=time.time() + 1)
        assert (specs, changes) == (1, 1)
        assert not catalog.spec_ids([hashes[0]])
        assert catalog.held_hashes() == held_before
        assert integrity_check(catalog) == "ok"
        assert catalog._db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_catalog_deleted_while_read_is_made_anew_whole(demo_run: Demo, tmp_path: Path) -> None:
    """Deleted while a server held it (its -wal and -shm stay), then synced anew: SQLite
    applied the old log to the new file, which read as corrupt until deleted again (the
    demo's tags: a small fixture's did not show it)."""
    config = tmp_path / "cachedex.yaml"
    text = demo_run.config.read_text().replace("./mirrors/", f"{demo_run.folder}/mirrors/")
    config.write_text(text.replace("catalog: cachedex.sqlite", "catalog: cat.sqlite"))
    command = [sys.executable, "-m", "cachedex", "--config", str(config), "sync"]

    def synced() -> None:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr

    synced()
    # Another process holds it, as `cachedex serve` does.
    holder = (
        "import sqlite3, sys\n"
        f"db = sqlite3.connect('file:{tmp_path / 'cat.sqlite'}?mode=ro', uri=True, isolation_level=None)\n"
        "db.execute('SELECT count(*) FROM specs').fetchone()\n"
        "print('holding', flush=True); sys.stdin.read()\n"
    )
    reader = subprocess.Popen([sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "holding\n"
        synced()  # while it reads: the log keeps its pages
        assert Path(f"{tmp_path / 'cat.sqlite'}-wal").stat().st_size > 0
        (tmp_path / "cat.sqlite").unlink()
        synced()
        with Catalog(tmp_path / "cat.sqlite", readonly=True) as catalog:
            assert integrity_check(catalog) == "ok" and len(catalog.tag_names()) == 4
    finally:
        reader.kill()
        reader.communicate(timeout=10)


def test_another_program_s_database_is_left_alone(tmp_path: Path) -> None:
    """Its tables got the catalog's beside them (and WAL mode); one with a table named
    specs was said to hold "no catalog yet", then failed its sync."""
    path = tmp_path / "other.sqlite"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE foo (a, b)")
    other.execute("INSERT INTO foo VALUES (1, 2)")
    other.commit()
    other.close()
    before = path.read_bytes()
    for readonly in (False, True):
        with pytest.raises(CatalogError, match=r"other.sqlite: another program's database \(tables 'foo'\), not a"):
            Catalog(path, readonly=readonly)
    assert path.read_bytes() == before and not Path(f"{path}-wal").exists()


def test_gc_of_an_empty_file_or_an_unfinished_first_sync_creates_no_catalog(tmp_path: Path) -> None:
    """`gc` and `forget` (create=False) made an empty file a whole catalog."""
    path = tmp_path / "c.sqlite"
    path.touch()
    with pytest.raises(
        CatalogError, match=r"holds no catalog yet \(no sync has finished writing it\); run 'cachedex sync' first$"
    ):
        Catalog(path, create=False)
    assert path.stat().st_size == 0
    started = sqlite3.connect(path)  # a first sync stopped before its schema: WAL set, no table
    started.execute("PRAGMA journal_mode=WAL")
    started.close()
    with pytest.raises(
        CatalogError, match=r"holds no catalog yet \(no sync has finished writing it\); run 'cachedex sync' first$"
    ):
        Catalog(path, create=False)
    with Catalog(path) as catalog:  # a sync goes on with it
        assert catalog.tag_names() == []


def test_gc_says_when_readers_keep_the_space_and_does_not_wait_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its checkpoint waited a sync's whole wait (300 s) for a reader, then said the
    space was given back while the log held the compacted file."""
    from cachedex.catalog import facade_core
    from tests.helpers import record, write_tag

    monkeypatch.setattr(facade_core, "CHECKPOINT_WAIT_SECONDS", 0.2)
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record("a" * 32, "zlib")])
    reader = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    said: list[str] = []
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM specs").fetchone()
        started = time.monotonic()
        with Catalog(path) as catalog:
            catalog.collect_garbage(on_readers=lambda: said.append("readers"))
        assert said == ["readers"] and time.monotonic() - started < 30
    finally:
        reader.close()
    with Catalog(path) as catalog:
        catalog.collect_garbage(on_readers=lambda: said.append("again"))
    assert said == ["readers"]  # none left: the space came back
