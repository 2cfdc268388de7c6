"""Whether a mirror signs (ingest/mirror_signing.py): which failures to read its samples
are asked again by the next sync, and which the same index would answer again."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.ingest.index import RawIndex, decode_index
from cachedex.ingest.local_source import LocalSource
from cachedex.ingest.mirror_signing import SAMPLES, SigningReads, sampled_specs, usable
from cachedex.ingest.sources import open_source
from cachedex.ingest.sync import sync
from cachedex.values import ROOT_STACK, spec_manifest_path
from tests.helpers import fixture_index, make_config, write_v3_mirror
from tests.servers import Nginx, outage_locations


def _samples(mirrors: Path) -> list[tuple[str, str, str]]:
    index = fixture_index(mirrors)
    return sampled_specs(decode_index(json.dumps(index).encode(), url="index.json"))


def test_manifests_too_big_leave_the_mirror_not_known_without_asking_again(mirrors: Path, tmp_path: Path) -> None:
    """A manifest past the limit is past it at the next sync too: not a passing failure."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    samples = _samples(mirrors)
    source = open_source(str(tmp_path / "m"), client=None)
    assert SigningReads(limit=1 << 20).signs_binaries(source, samples) == (False, False)  # (plain, no keys)
    assert SigningReads(limit=16).signs_binaries(source, samples) == (None, False)


def test_one_sample_in_an_outage_among_missing_ones_is_asked_again(mirrors: Path, tmp_path: Path) -> None:
    """Of the samples, one answers 503 and the others are missing: the mirror is not
    known yet, and the next sync asks again (then tells it plain), not only when every
    failure was passing."""
    root = tmp_path / "www/m"
    write_v3_mirror(root, fixture_index(mirrors))  # (plain manifests, no key index)
    first, *others = _samples(mirrors)
    for dag_hash, name, version in others:
        (root / spec_manifest_path(name, version, dag_hash)).unlink()
    outage = tmp_path / "outage"
    server = Nginx(tmp_path / "www", extra=outage_locations(outage, f"~ {first[0]}\\.spec\\.manifest\\.json$"))
    try:
        config = make_config(tmp_path, [{"name": "t", "url": f"{server.url}/m"}], retries=0)
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog, ["t"])
            assert outcome.ok, outcome.error
            state = catalog.mirror_state("t", ROOT_STACK)
            assert state is not None and state.signed is None
            outage.unlink()
            (outcome,) = sync(config, catalog, ["t"])
            assert outcome.ok and not outcome.changed, outcome.error
            state = catalog.mirror_state("t", ROOT_STACK)
            assert state is not None and state.signed is False
    finally:
        server.stop()


def _index_usable_only_at(count: int, usable: int) -> RawIndex:
    """A hostile index listing ``count`` specs, only the one at ``usable`` with a name
    that can be part of a path (the others' names climb out of the mirror)."""
    installs = {}
    for position in range(count):
        dag_hash = base64.b32encode(hashlib.sha256(str(position).encode()).digest()).decode()[:32].lower()
        name = "zlib" if position == usable else "../evil"
        node = {"name": name, "version": "1.3", "hash": dag_hash}
        installs[dag_hash] = {"spec": node, "in_buildcache": True}
    document = {"database": {"version": "8", "installs": installs}}
    return decode_index(json.dumps(document).encode(), url="index.json")


def test_at_most_samples_records_are_looked_at_from_each_place() -> None:
    """From the first listed spec on, from the middle one on, and from the last one back,
    SAMPLES records are looked at for a usable name: the last of those counts, the one
    past it does not. Each index below has its usable name in reach of one run only."""
    index = _index_usable_only_at(2 * SAMPLES, usable=SAMPLES - 1)
    assert [name for _, name, _ in sampled_specs(index)] == ["zlib"]
    past_the_last = _index_usable_only_at(4 * SAMPLES + 4, usable=3 * SAMPLES + 3)
    assert sampled_specs(past_the_last) == []
    from_the_end = _index_usable_only_at(4 * SAMPLES + 4, usable=3 * SAMPLES + 4)
    assert [name for _, name, _ in sampled_specs(from_the_end)] == ["zlib"]
    # the middle's run starts at position count // 2 = 2 * SAMPLES + 2
    middle_s_last = _index_usable_only_at(4 * SAMPLES + 4, usable=3 * SAMPLES + 1)
    assert [name for _, name, _ in sampled_specs(middle_s_last)] == ["zlib"]


def test_samples_are_spread_over_the_index(mirrors: Path) -> None:
    """The first listed spec, the middle one and the last: not the first three."""
    index = fixture_index(mirrors)
    listed = [h for h, record in index["database"]["installs"].items() if record["in_buildcache"]]  # type: ignore[index]
    assert len(listed) >= 5  # (room between them)
    sampled = [dag_hash for dag_hash, _, _ in _samples(mirrors)]
    assert sampled == [listed[0], listed[len(listed) // 2], listed[-1]]


def test_a_catalog_s_samples_with_names_that_climb_out_are_not_used() -> None:
    """A catalog's samples came from a mirror's index: a name or version that would make
    a manifest path outside the mirror is dropped before any read."""
    dag_hash = "a" * 32
    samples = [(dag_hash, "zlib", "1.3"), (dag_hash, "../../etc", "1"), (dag_hash, "zlib", "../..")]
    assert usable(samples) == [(dag_hash, "zlib", "1.3")]


class _Failing(LocalSource):
    """A folder whose reads end in an unexpected error (a bug, MemoryError) midway."""

    def read_many(self, items, decode, *, limit):  # type: ignore[no-untyped-def]
        raise RuntimeError("unexpected")


def test_a_read_that_raised_leaves_no_one_waiting_for_its_files(mirrors: Path, tmp_path: Path) -> None:
    """Another view of the mirror asks for the same files: it is told they were not read
    (not known), rather than waiting forever for a read that ended."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    source, reads, samples = (
        _Failing(tmp_path / "m", str(tmp_path / "m")),
        SigningReads(limit=1 << 20),
        _samples(mirrors),
    )
    with pytest.raises(RuntimeError):
        reads.signs_binaries(source, samples)
    told: list[tuple[bool | None, bool]] = []
    asker = threading.Thread(target=lambda: told.append(reads.signs_binaries(source, samples)), daemon=True)
    asker.start()
    asker.join(timeout=10)
    assert not asker.is_alive(), "waited forever for a read that had ended"
    assert told == [(None, True)]  # (a passing failure: the next sync asks again)
