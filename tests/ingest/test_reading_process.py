"""Spec manifests of a folder or an HTTP mirror read by a second process, started or
forked (ingest/reading_process.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from cachedex._perf import can_fork
from cachedex.catalog import Catalog
from cachedex.config import HttpOptions, Limits
from cachedex.errors import CachedexError, IndexFormatError
from cachedex.ingest import local_source, reading_process, sizes
from cachedex.ingest.http import HttpClient
from cachedex.ingest.local_source import LocalSource
from cachedex.ingest.manifests import manifest_size, spec_manifest_path
from cachedex.ingest.reading_process import ForkedSizes, PathOf, Unasked, sizes_in_process
from cachedex.ingest.sources import HttpSource
from cachedex.ingest.sync import sync
from cachedex.progress import SILENT
from tests.helpers import fixture_index, index_nodes, make_config, spec_row, write_v3_mirror
from tests.servers import Nginx


def _items(tmp_path: Path, mirrors: Path) -> tuple[LocalSource, list[tuple[str, str]]]:
    """A v3 mirror's manifests, plus one missing, one not a manifest and one too big."""
    root = tmp_path / "m"
    index = fixture_index(mirrors)
    write_v3_mirror(root, index)
    items = [
        (h, spec_manifest_path(r["spec"]["name"], r["spec"]["version"], h))  # type: ignore[index]
        for h, r in index["database"]["installs"].items()  # type: ignore[index]
        if r["in_buildcache"]  # type: ignore[index]
    ]
    (root / "bad.json").write_text("{not json")
    (root / "big.json").write_bytes(b"{" + b" " * 70_000 + b"}")
    items += [("m" * 32, "v3/missing.json"), ("b" * 32, "bad.json"), ("g" * 32, "big.json")]
    return LocalSource(root, root.as_uri()), items


def _name_version(index: dict[str, object]) -> Callable[[str], tuple[str, str] | None]:
    """A spec's (name, version) by hash, from a test index as JSON."""
    nodes = index_nodes(index)
    return lambda h: (nodes[h]["name"], nodes[h]["version"]) if h in nodes else None


def _described(results: object) -> dict[str, object]:
    return {
        key: (type(value).__name__, str(value)) if isinstance(value, CachedexError) else value
        for key, value in results  # type: ignore[attr-defined]
    }


def test_the_process_reads_what_this_one_would(mirrors: Path, tmp_path: Path) -> None:
    source, items = _items(tmp_path, mirrors)
    here = _described(source.read_many(items, manifest_size, limit=65_536))
    there = _described(sizes_in_process(source, items, limit=65_536))
    assert there == here
    kinds = {value[0] for value in here.values() if isinstance(value, tuple)}
    assert kinds == {"SourceNotFound", "IndexFormatError", "TooBig"}
    assert sum(isinstance(value, int) for value in here.values()) == len(items) - 3


def test_a_ctrl_c_reaches_this_process_and_not_the_reading_one(mirrors: Path, http_server) -> None:  # type: ignore[no-untyped-def]
    """The reading process was in the terminal's process group: a Ctrl-C killed it too,
    which looked like a crash, and this process then read every size left itself (half
    a minute over a slow link before the command ended). It has a group of its own."""
    index = fixture_index(mirrors)
    expected = write_v3_mirror(http_server.state.root, index)
    items = [
        (h, spec_manifest_path(r["spec"]["name"], r["spec"]["version"], h))  # type: ignore[index]
        for h, r in index["database"]["installs"].items()  # type: ignore[index]
        if h in expected
    ]
    http_server.state.faults["/" + items[0][1]] = "slow"  # (the process waits on it: alive)
    http_server.state.stall_seconds = 3
    with HttpClient(HttpOptions(concurrency=4)) as client:
        reading = threading.Thread(
            target=list, args=(sizes_in_process(HttpSource(http_server.url, client), items, limit=65_536),)
        )
        reading.start()
        children: list[int] = []
        deadline = time.monotonic() + 2.5
        while not children and time.monotonic() < deadline:
            children = [
                int(entry.name)
                for entry in Path("/proc").iterdir()
                if entry.name.isdigit()
                and _parent_of(entry) == os.getpid()
                and b"cachedex.ingest.reading_process" in _read(entry / "cmdline")
            ]
            time.sleep(0.02)
        groups = [os.getpgid(child) for child in children]
        reading.join(timeout=30)
    assert len(children) == 1, children
    assert groups[0] != os.getpgid(0)


def test_the_reading_process_ends_with_the_one_that_started_it(mirrors: Path, http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Out of the terminal's group, the reading process no longer got the hang-up or the
    group's kill that ended its parent: it went on asking the mirror, with nobody to
    read its answers, until its next write failed (a hung mirror: minutes)."""
    index = fixture_index(mirrors)
    expected = write_v3_mirror(http_server.state.root, index)
    items = [
        f"{h}={spec_manifest_path(r['spec']['name'], r['spec']['version'], h)}"  # type: ignore[index]
        for h, r in index["database"]["installs"].items()  # type: ignore[index]
        if h in expected
    ]
    for item in items:  # (none answered: the reading process waits on them)
        http_server.state.faults["/" + item.partition("=")[2]] = "never"
    http_server.state.stall_seconds = 60
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys\n"
        "from cachedex.config import HttpOptions\n"
        "from cachedex.ingest.http import HttpClient\n"
        "from cachedex.ingest.reading_process import sizes_in_process\n"
        "from cachedex.ingest.sources import HttpSource\n"
        "items = [tuple(item.split('=', 1)) for item in sys.argv[2:]]\n"
        "with HttpClient(HttpOptions(concurrency=2)) as client:\n"
        "    list(sizes_in_process(HttpSource(sys.argv[1], client), items, limit=65_536))\n"
    )
    parent = subprocess.Popen([sys.executable, str(script), http_server.url, *items])
    try:
        deadline, children = time.monotonic() + 20, []
        while not children and time.monotonic() < deadline:
            children = [
                int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit() and _parent_of(e) == parent.pid
            ]
            time.sleep(0.05)
        assert len(children) == 1, children
        parent.kill()  # (as a hang-up would end it: no finally of its own runs)
        parent.wait()
        deadline = time.monotonic() + 5
        while _alive(children[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(children[0]), "the reading process outlived the one that started it"
    finally:
        parent.kill()
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped by whoever adopted it, does not)."""
    stat = _read(Path(f"/proc/{pid}/stat"))
    return bool(stat) and stat.rsplit(b")", 1)[1].split()[0] != b"Z"


def _parent_of(proc: Path) -> int:
    stat = _read(proc / "stat")
    return int(stat.rsplit(b")", 1)[1].split()[1]) if stat else -1


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # (a process that ended meanwhile)
        return b""


def test_the_process_reads_over_http_what_this_one_would(mirrors: Path, tmp_path: Path) -> None:
    """Over its own HTTP client: this process's is closed (a read here would fail)."""
    folder, items = _items(tmp_path, mirrors)
    with Nginx(folder.root, log_requests=True) as nginx:
        with HttpClient(HttpOptions(retries=0)) as client:
            here = _described(HttpSource(nginx.url, client).read_many(items, manifest_size, limit=65_536))
        served = len(nginx.requests())
        there = _described(sizes_in_process(HttpSource(nginx.url, client), items, limit=65_536))
        assert len(nginx.requests()) == served + len(items)
    assert there == here
    kinds = {value[0] for value in here.values() if isinstance(value, tuple)}
    assert kinds == {"SourceNotFound", "IndexFormatError", "TooBig"}
    assert sum(isinstance(value, int) for value in here.values()) == len(items) - 3


@pytest.mark.parametrize("interpreter", ["/nonexistent/python", "/bin/true"])
def test_what_the_process_did_not_report_is_read_here(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interpreter: str
) -> None:
    """A process that cannot start, or ends without a word: every file is still read."""
    source, items = _items(tmp_path, mirrors)
    expected = _described(source.read_many(items, manifest_size, limit=65_536))
    monkeypatch.setattr(sys, "executable", interpreter)
    assert _described(sizes_in_process(source, items, limit=65_536)) == expected


def _path_of(index: dict[str, object], refuse: str = "", die_at: str = "") -> PathOf:
    """What a forked reader makes of each hash of a test index (see sizes._path_of),
    refusing the spec ``refuse``; the forked process alone dies at ``die_at``."""
    name_version = _name_version(index)
    parent = os.getpid()

    def path_of(dag_hash: str) -> tuple[str | None, str | None]:
        if dag_hash == die_at and os.getpid() != parent:
            os._exit(3)
        found = name_version(dag_hash)
        if found is None:
            return None, None
        if dag_hash == refuse:
            return None, f"spec {dag_hash}: refused"
        return spec_manifest_path(*found, dag_hash), None

    return path_of


@pytest.mark.skipif(not can_fork(), reason="a folder's manifests are read by a forked process on Linux only")
@pytest.mark.parametrize("case", ["whole", "the forked process dies", "no process can be forked"])
def test_a_forked_process_reads_what_this_one_would(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Each hash once: its size or problem as read here, or why
    it was not asked (its node names no name and version, its path is refused). Killed
    midway, or never started, what it did not report is read here."""
    index = fixture_index(mirrors)
    expected = write_v3_mirror(tmp_path / "m", index)
    source = LocalSource(tmp_path / "m", (tmp_path / "m").as_uri())
    hashes = list(expected)
    (tmp_path / "m" / spec_manifest_path(*_name_version(index)(hashes[0]), hashes[0])).write_text("{not json")
    refused, unknown = hashes[1], "u" * 32
    die_at = hashes[3] if case == "the forked process dies" else ""
    if case == "no process can be forked":

        def no_fork() -> int:
            raise OSError(11, "Resource temporarily unavailable")

        monkeypatch.setattr(os, "fork", no_fork)
    forked = os.getpid()
    path_of = _path_of(index, refused, die_at)
    made_paths = weakref.ref(path_of)
    chunks = ForkedSizes(source, [*hashes, unknown], path_of, limit=65_536)
    del path_of
    results = [result for sizes, others in chunks for result in [*sizes.items(), *others]]
    assert os.getpid() == forked  # (the forked process never returns here)
    # Read, it lets the paths' maker go (a sync's root index, its bytes) while a sync
    # still holds it, until the write ends.
    assert made_paths() is None and chunks is not None
    assert sorted(key for key, _ in results) == sorted([*hashes, unknown])
    found = dict(results)
    assert found[unknown] == Unasked(None)
    assert found[refused] == Unasked(f"spec {refused}: refused")
    assert isinstance(found[hashes[0]], IndexFormatError)
    assert {h: found[h] for h in hashes[2:]} == {h: expected[h] for h in hashes[2:]}


@pytest.mark.skipif(not can_fork(), reason="a folder's manifests are read by a forked process on Linux only")
def test_a_batch_does_not_wait_for_what_the_forked_reader_does_not_ask(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hash without a name and version, or with a path refused (said once), is not
    waited for: here the forked process is held at the last hash, and the others come."""
    index = fixture_index(mirrors)
    expected = write_v3_mirror(tmp_path / "m", index)
    *hashes, held = list(expected)
    monkeypatch.setattr(sizes, "IN_PROCESS_MIN", 1)
    # Each read, and each result sent, at once (not a window, a chunk at a time).
    monkeypatch.setattr(local_source, "_WINDOW", 1)
    monkeypatch.setattr(reading_process, "_CHUNK", 1)
    source = LocalSource(tmp_path / "m", (tmp_path / "m").as_uri())
    names, parent, bad, unknown = _name_version(index), os.getpid(), hashes[1], "u" * 32

    def name_version(dag_hash: str) -> tuple[str, str] | None:
        if dag_hash == held and os.getpid() != parent:
            time.sleep(60)
        found = names(dag_hash)
        return ("a/b", found[1]) if dag_hash == bad and found else found

    began = time.monotonic()
    prefetch = sizes.Prefetch(
        source, [unknown, *hashes, held], name_version, limits=Limits(), line=SILENT.task("sizes")
    )
    try:
        prefetch.wait_for([unknown, *hashes])
        assert time.monotonic() - began < 30 and prefetch.finished is None
        assert {h: prefetch.sizes.get(h) for h in hashes if h != bad} == {h: expected[h] for h in hashes if h != bad}
        assert unknown not in prefetch.results and bad not in prefetch.results
        assert prefetch.refused == [f"{source.url}: spec {bad}: 'a/b' cannot be part of a path"]
    finally:
        prefetch.cancel()  # (it ends the forked process: no wait for the held read)
    assert time.monotonic() - began < 30


@pytest.fixture
def processes_read(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """(how, manifests) of each read by another process (a process started, or on Linux
    from a folder a forked one), from one manifest on (the threshold lowered to a test
    mirror's few)."""
    used: list[tuple[str, int]] = []
    real, real_fork = reading_process.sizes_in_process, reading_process.ForkedSizes

    def counted(source: LocalSource | HttpSource, items: list[tuple[str, str]], *, limit: int):  # type: ignore[no-untyped-def]
        used.append((f"started, {type(source).__name__}", len(items)))
        return real(source, items, limit=limit)

    def counted_fork(source: LocalSource, hashes: list[str], path_of: PathOf, *, limit: int):  # type: ignore[no-untyped-def]
        used.append(("forked, LocalSource", len(hashes)))
        return real_fork(source, hashes, path_of, limit=limit)

    monkeypatch.setattr(sizes, "IN_PROCESS_MIN", 1)
    monkeypatch.setattr(sizes, "sizes_in_process", counted)
    monkeypatch.setattr(sizes, "ForkedSizes", counted_fork)
    return used


def test_a_sync_of_many_manifests_reads_them_in_the_process(
    mirrors: Path, tmp_path: Path, processes_read: list[tuple[str, int]]
) -> None:
    """Lowered to this mirror's 6 manifests: the sizes go in with their specs, as read here."""
    expected = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    statements: list[str] = []
    with Catalog(config.catalog) as catalog:
        catalog._db.set_trace_callback(statements.append)
        (outcome,) = sync(config, catalog)
        assert outcome.ok and outcome.sizes_fetched == 6
        assert {h: spec_row(catalog, h)["size"] for h in expected} == expected  # type: ignore[index]
    assert processes_read == [("forked, LocalSource" if can_fork() else "started, LocalSource", 6)]
    assert not [s for s in statements if "new_sizes" in s]  # all written with their specs


@pytest.mark.skipif(not can_fork(), reason="a folder's manifests are read by a forked process on Linux only")
@pytest.mark.parametrize("least", [6, 7])
def test_a_forked_reader_takes_fewer_manifests_than_a_started_one(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, least: int
) -> None:
    """Forking costs milliseconds, starting an interpreter ~0.3 s: from a folder, a forked
    reader takes from FORKED_READER_MIN manifests on (lowered here to this mirror's 6),
    below IN_PROCESS_MIN; under it, they are read here."""
    forked: list[int] = []
    real_fork = reading_process.ForkedSizes

    def counted_fork(source: LocalSource, hashes: list[str], path_of: PathOf, *, limit: int):  # type: ignore[no-untyped-def]
        forked.append(len(hashes))
        return real_fork(source, hashes, path_of, limit=limit)

    monkeypatch.setattr(sizes, "ForkedSizes", counted_fork)
    monkeypatch.setattr(sizes, "FORKED_READER_MIN", least)
    assert sizes.IN_PROCESS_MIN > 6
    expected = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok and outcome.sizes_fetched == 6
        assert {h: spec_row(catalog, h)["size"] for h in expected} == expected  # type: ignore[index]
    assert forked == ([6] if least <= 6 else [])


@pytest.mark.parametrize("stopped", [False, True], ids=["first sync", "a stopped sync's rest"])
def test_a_sync_over_http_reads_many_manifests_in_the_process(
    mirrors: Path, tmp_path: Path, processes_read: list[tuple[str, int]], stopped: bool
) -> None:
    """Lowered to this mirror's 6 manifests: read by the process before the listing is
    written, or, when a sync stopped before its sizes, in the size phase of the next."""
    expected = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    with Nginx(tmp_path) as nginx:
        config = make_config(tmp_path, [{"name": "t", "url": f"{nginx.url}/m"}])
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog)
            assert outcome.ok and outcome.sizes_fetched == 6
            if stopped:
                with catalog._db:
                    catalog._db.execute("UPDATE specs SET size = NULL")
                processes_read.clear()
                (outcome,) = sync(config, catalog)
                assert outcome.ok and outcome.sizes_fetched == 6
            assert {h: spec_row(catalog, h)["size"] for h in expected} == expected  # type: ignore[index]
    assert processes_read == [("started, HttpSource", 6)]


def test_over_http_the_write_does_not_wait_for_the_sizes(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over a network the reads may take longer than the write: it takes what has come."""
    index = fixture_index(mirrors)
    expected = write_v3_mirror(tmp_path / "m", index)
    monkeypatch.setattr(sizes, "IN_PROCESS_MIN", 1)
    with Nginx(tmp_path) as nginx, HttpClient(HttpOptions()) as client:
        source = HttpSource(f"{nginx.url}/m", client)
        prefetch = sizes.Prefetch(source, list(expected), _name_version(index), limits=Limits(), line=SILENT.task("s"))
        assert prefetch.elsewhere and not prefetch.waited
        assert prefetch.sizes_to_write() is not prefetch.sizes  # a copy: the reads go on
        assert {h: r for h, r in prefetch.wait().items()} == expected


def test_a_batch_waits_until_each_of_its_sizes_has_come(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked right after the process starts (nothing has come yet), with a generator of
    hashes: every hash is waited for, not only the first ones looked at."""
    index = fixture_index(mirrors)
    expected = write_v3_mirror(tmp_path / "m", index)
    monkeypatch.setattr(sizes, "IN_PROCESS_MIN", 1)
    source = LocalSource(tmp_path / "m", (tmp_path / "m").as_uri())
    prefetch = sizes.Prefetch(source, list(expected), _name_version(index), limits=Limits(), line=SILENT.task("sizes"))
    assert prefetch.elsewhere and prefetch.waited and prefetch.sizes_to_write() is prefetch.sizes
    prefetch.wait_for(h for h in expected)
    assert {h: prefetch.sizes.get(h) for h in expected} == expected
    prefetch.wait()


def test_the_reading_process_loads_neither_libcurl_nor_the_config() -> None:
    # Its start is paid before a folder's first sizes arrive: pycurl (libcurl, ssl) and
    # the config's YAML cost ~0.13 s of it, and it reads only files.
    probe = "import sys, cachedex.ingest.reading_process; print(sorted({'pycurl', 'yaml', 'ssl'} & set(sys.modules)))"
    found = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert found.strip() == "[]"


def test_a_cancelled_read_over_http_ends_at_its_next_result(
    mirrors: Path,
    http_server,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    """A Ctrl-C in a first sync over HTTP waited for the reads' chunk of 64 sizes (half a
    minute from a slow server) before the command ended: once cancelled, the read ends
    at the next result, and the rest are not asked."""
    index = fixture_index(mirrors)
    expected = write_v3_mirror(http_server.state.root, index)
    root = http_server.state.root
    for manifest in root.glob("v3/manifests/spec/**/*.spec.manifest.json"):
        http_server.state.faults["/" + manifest.relative_to(root).as_posix()] = "slow"
    http_server.state.stall_seconds = 0.5
    monkeypatch.setattr(sizes, "IN_PROCESS_MIN", len(expected) + 1)  # (read in this process)
    with HttpClient(HttpOptions(concurrency=1)) as client:
        source = HttpSource(http_server.url, client)
        prefetch = sizes.Prefetch(source, list(expected), _name_version(index), limits=Limits(), line=SILENT.task("s"))
        deadline = time.monotonic() + 10
        while http_server.state.count(".spec.manifest.json") < 2:  # (one answered, the next asked)
            assert time.monotonic() < deadline
            time.sleep(0.05)
        began = time.monotonic()
        prefetch.cancel()
        assert time.monotonic() - began < 1.5 and len(expected) >= 5
    assert http_server.state.count(".spec.manifest.json") < len(expected)
