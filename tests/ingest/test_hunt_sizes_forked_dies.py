"""A forked reader of a folder's manifests that dies after it has sent some results
(ingest/reading_process.py, ForkedSizes): each hash still comes once; one ended on
purpose leaves nothing to read here."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from cachedex._perf import can_fork
from cachedex.config import Limits
from cachedex.errors import SourceNotFound
from cachedex.ingest import local_source, reading_process, sizes
from cachedex.ingest.local_source import LocalSource
from cachedex.ingest.reading_process import ForkedSizes, Unasked
from cachedex.progress import SILENT
from tests.helpers import fixture_index, index_nodes, manifest_path_of, name_version_in, write_v3_mirror


@pytest.mark.skipif(not can_fork(), reason="a folder's manifests are read by a forked process on Linux only")
def test_what_a_forked_reader_sent_before_it_died_is_neither_read_nor_said_again(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = fixture_index(mirrors)
    root = tmp_path / "m"
    expected = write_v3_mirror(root, index)
    nodes = index_nodes(index)
    missing, refused, read, die_at, *later = list(expected)
    (root / manifest_path_of(nodes, missing)).unlink()
    # One file read at a time and each result sent at once (the forked copy inherits
    # both): it sends the missing manifest, then the refused spec with the next size,
    # before it dies making the path of ``die_at``.
    monkeypatch.setattr(local_source, "_WINDOW", 1)
    monkeypatch.setattr(reading_process, "_CHUNK", 1)
    parent = os.getpid()
    paths_made_here: list[str] = []

    def path_of(dag_hash: str) -> tuple[str | None, str | None]:
        if os.getpid() != parent:
            if dag_hash == die_at:
                os._exit(3)
        else:
            paths_made_here.append(dag_hash)
        if dag_hash == refused:
            return None, f"spec {dag_hash}: refused"
        return manifest_path_of(nodes, dag_hash), None

    chunks = ForkedSizes(LocalSource(root, root.as_uri()), list(expected), path_of, limit=65_536)
    results = [result for sizes, others in chunks for result in [*sizes.items(), *others]]
    assert Counter(key for key, _ in results) == Counter(list(expected))  # each once
    found = dict(results)
    assert isinstance(found[missing], SourceNotFound)
    assert found[refused] == Unasked(f"spec {refused}: refused")
    assert {h: found[h] for h in [read, die_at, *later]} == {h: expected[h] for h in [read, die_at, *later]}
    # What the forked reader had sent is not made again here: only the rest is.
    assert paths_made_here == [die_at, *later]


@pytest.mark.skipif(not can_fork(), reason="a folder's manifests are read by a forked process on Linux only")
def test_a_cancelled_prefetch_reads_nothing_here_once_its_forked_reader_is_ended(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The listing's write failed: nothing will record these sizes, so the manifests the
    # ended reader did not report are not read here instead (as if it had died).
    asked_here: list[str] = []
    prefetch = held_reader_prefetch(mirrors, tmp_path, monkeypatch, asked_here)
    assert prefetch.waited
    began = time.monotonic()
    prefetch.cancel()
    assert time.monotonic() - began < 10
    assert asked_here == [] and prefetch.results == {}


@pytest.mark.skipif(not can_fork(), reason="a folder's manifests are read by a forked process on Linux only")
def test_a_refused_spec_last_is_reported_by_the_forked_reader_itself(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read a file at a time, the last path is made after the last read: no result
    # follows to carry it in a chunk. It is sent at the end, and this process, which
    # writes the specs meanwhile, makes no path.
    monkeypatch.setattr(local_source, "_WINDOW", 1)
    index = fixture_index(mirrors)
    root = tmp_path / "m"
    expected = write_v3_mirror(root, index)
    nodes = index_nodes(index)
    *read, refused = list(expected)
    parent = os.getpid()
    paths_made_here: list[str] = []

    def path_of(dag_hash: str) -> tuple[str | None, str | None]:
        if os.getpid() == parent:
            paths_made_here.append(dag_hash)
        if dag_hash == refused:
            return None, f"spec {dag_hash}: refused"
        return manifest_path_of(nodes, dag_hash), None

    chunks = ForkedSizes(LocalSource(root, root.as_uri()), list(expected), path_of, limit=65_536)
    found = dict(result for sizes, others in chunks for result in [*sizes.items(), *others])
    assert found == {**{h: expected[h] for h in read}, refused: Unasked(f"spec {refused}: refused")}
    assert paths_made_here == []


def held_reader_prefetch(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asked_here: list[str] | None = None
) -> sizes.Prefetch:
    """A prefetch of a folder's manifests whose forked reader is held (it reports
    nothing); the hashes whose name this process asks go to ``asked_here``."""
    index = fixture_index(mirrors)
    root = tmp_path / "m"
    expected = write_v3_mirror(root, index)
    name_version = name_version_in(index)
    monkeypatch.setattr(sizes, "FORKED_READER_MIN", 1)
    parent = os.getpid()

    def held_there(dag_hash: str) -> tuple[str, str]:
        if os.getpid() != parent:
            time.sleep(60)  # (ended by the prefetch's cancel)
        elif asked_here is not None:
            asked_here.append(dag_hash)
        return name_version(dag_hash)

    return sizes.Prefetch(
        LocalSource(root, root.as_uri()), list(expected), held_there, limits=Limits(), line=SILENT.task("sizes")
    )
