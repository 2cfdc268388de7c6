"""v3 mirrors (index manifest -> blob, spec manifests with sizes), on disk and over HTTP."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from cachedex.catalog import Catalog, bulk_load
from cachedex.config import Config, Limits, TagConfig
from cachedex.errors import ChecksumError, IndexFormatError
from cachedex.ingest import sizes as sizes_module
from cachedex.ingest.layouts import read_index
from cachedex.ingest.mirror_signing import SAMPLED
from cachedex.ingest.outcomes import TagOutcome
from cachedex.ingest.sizes import Prefetch
from cachedex.ingest.sources import open_source
from cachedex.ingest.sync import sync
from cachedex.ingest.tag_reads import MirrorRead, TagReader
from tests.helpers import LIBDWARF_CORE2, LIBELF_CORE2, fixture_index, make_config, spec_row, write_v3_mirror
from tests.servers import Nginx


@pytest.mark.parametrize("signed", [False, True])
def test_v3_sync_reads_sizes_from_spec_manifests(mirrors: Path, tmp_path: Path, signed: bool) -> None:
    sizes = write_v3_mirror(tmp_path / "m", fixture_index(mirrors), signed=signed)
    config = make_config(tmp_path, [{"name": "t", "url": (tmp_path / "m").as_uri()}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert outcome.mirrors[0].layout == 3 and outcome.sizes_fetched == 6
        (stats,) = catalog.tag_stats()
        assert (stats.sized, stats.size) == (6, sum(sizes.values()))
        row = spec_row(catalog, LIBELF_CORE2)
        assert row is not None and row["size"] == sizes[LIBELF_CORE2]


def test_a_folder_mirror_s_sizes_go_in_with_their_specs(mirrors: Path, tmp_path: Path) -> None:
    """Read before the listing is written, the sizes need no second pass over the specs."""
    sizes = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    # a stack listing the same specs: they were written with their sizes, none is read again
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m"), "stacks": {"s": str(tmp_path / "m")}}])
    statements: list[str] = []
    with Catalog(config.catalog) as catalog:
        catalog._db.set_trace_callback(statements.append)
        (outcome,) = sync(config, catalog)
        assert outcome.ok and outcome.sizes_fetched == 6
        assert not [s for s in statements if "new_sizes" in s]  # record_sizes never ran
        assert {h: spec_row(catalog, h)["size"] for h in sizes} == sizes  # type: ignore[index]


def test_a_tag_of_known_specs_asks_the_catalog_about_them_once(mirrors: Path, tmp_path: Path) -> None:
    """Their ids and sizes are read once, together, before the write lock, and reused
    under it and after."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    url = str(tmp_path / "m")
    config = make_config(tmp_path, [{"name": "t", "url": url}, {"name": "u", "url": url}])
    statements: list[str] = []
    with Catalog(config.catalog) as catalog:
        sync(config, catalog, ["t"])
        catalog._db.set_trace_callback(statements.append)
        (outcome,) = sync(config, catalog, ["u"])
        assert outcome.ok and outcome.specs == 6 and outcome.new_specs == 0
    # (each either reads every spec, in a small catalog, or looks the hashes up)
    ids = ("SELECT hash, id FROM specs", "SELECT s.hash, s.id FROM json_each")
    assert sum(s.startswith(ids) for s in statements) == 1
    assert sum(s.startswith("SELECT id FROM specs WHERE size IS NULL") for s in statements) == 1


def test_specs_a_forget_removed_after_the_read_are_sized_when_written_again(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tag renamed: its new name's sync read its specs as known and sized, then
    `forget` of the old name and `gc` removed them before its write lock; it wrote them
    again without sizes and fetched none ("binaries without a size"), exiting 0."""
    sizes = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    url = str(tmp_path / "m")
    config = make_config(tmp_path, [{"name": "old", "url": url}, {"name": "new", "url": url}])
    with Catalog(config.catalog) as catalog:
        assert sync(config, catalog, ["old"])[0].ok
    read_all = TagReader.read_all

    def then_forgotten(self: TagReader, tag: TagConfig) -> object:
        found = read_all(self, tag)
        with Catalog(config.catalog) as other:  # another process's `forget old`
            other.forget_tags({"old": None})
            other.collect_garbage()
        return found

    monkeypatch.setattr(TagReader, "read_all", then_forgotten)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog, ["new"])
        assert outcome.ok and outcome.new_specs > 0 and not outcome.warnings, outcome
        assert {h: spec_row(catalog, h)["size"] for h in sizes} == sizes  # type: ignore[index]


def _another_sync_after_the_read(monkeypatch: pytest.MonkeyPatch, config: Config, tag: str) -> list[TagOutcome]:
    """Make the next sync's read of its mirrors be followed, once, by another process's
    sync of ``tag`` with ``config``, committed before the first takes its write lock;
    returns the list that then holds that sync's outcome."""
    read_all = TagReader.read_all
    others: list[TagOutcome] = []

    def read_then_another_sync(self: TagReader, tag_config: TagConfig) -> object:
        read = read_all(self, tag_config)
        if not others:
            others.append(None)  # type: ignore[arg-type]  # the nested sync must not recurse
            with Catalog(config.catalog) as other:
                others[:] = sync(config, other, [tag])
        return read

    monkeypatch.setattr(TagReader, "read_all", read_then_another_sync)
    return others


def test_ids_read_before_the_write_lock_are_read_again_if_another_process_wrote(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another sync that commits the same specs between this sync's read of the catalog
    and its write lock: the ids are asked again, and no spec is written twice."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    url = str(tmp_path / "m")
    config = make_config(tmp_path, [{"name": "t", "url": url}, {"name": "u", "url": url}])
    others = _another_sync_after_the_read(monkeypatch, config, "u")
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog, ["t"], raise_unexpected=True)
        assert others[0].ok and others[0].new_specs == 7  # six listed, one not
        assert outcome.ok and outcome.new_specs == 0 and outcome.specs == 6
        (count,) = catalog._db.execute("SELECT count(*) FROM specs").fetchone()
        assert count == 7


def test_sizes_are_fetched_once_per_hash(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = http_server.state.root / "m"
    write_v3_mirror(root, fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    config = make_config(tmp_path, [{"name": "t", "url": f"{http_server.url}/m"}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        # five sizes, and three manifests read to see whether the mirror signs (again
        # whenever its index changes: mirror_signing)
        assert http_server.state.count(".spec.manifest.json") == 5 + SAMPLED
        write_v3_mirror(root, fixture_index(mirrors))  # one new listed spec
        (outcome,) = sync(config, catalog)
        assert outcome.ok and outcome.added == 1
        assert http_server.state.count(".spec.manifest.json") == 5 + SAMPLED + 1 + SAMPLED  # only the new hash
        # unchanged index: the manifest answers 304 (ETag), no blob is downloaded again
        blobs = http_server.state.count("/blobs/sha256/", "GET")
        (again,) = sync(config, catalog)
        assert again.ok and not again.mirrors[0].changed
        assert http_server.state.count("/blobs/sha256/") == blobs


def test_a_sync_stopped_while_it_reads_sizes_keeps_those_it_read(
    http_server, mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Sizes are committed a batch at a time as they come (each batch of two here): a
    Ctrl-C after the fourth keeps four, and the next sync asks only for the rest. (The
    results were all gathered first: a stopped size phase kept none.)"""
    root = http_server.state.root / "m"
    sizes = write_v3_mirror(root, fixture_index(mirrors))
    manifests = [
        "/" + m.relative_to(http_server.state.root).as_posix() for m in root.glob("v3/manifests/spec/**/*.json")
    ]
    http_server.state.faults.update(dict.fromkeys(manifests, "500"))
    config = make_config(tmp_path, [{"name": "t", "url": f"{http_server.url}/m"}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)  # listed, sized by none
        assert outcome.ok and _sized(catalog) == 0
    for manifest in manifests:
        del http_server.state.faults[manifest]
    monkeypatch.setattr(sizes_module, "BATCH", 2)
    read_sizes = sizes_module._read_sizes

    def stopped_after_four(*args: object, **kwargs: object) -> Iterator[object]:
        for n, result in enumerate(read_sizes(*args, **kwargs)):  # type: ignore[arg-type]
            if n == 4:
                raise KeyboardInterrupt
            yield result

    monkeypatch.setattr(sizes_module, "_read_sizes", stopped_after_four)
    with Catalog(config.catalog) as catalog, pytest.raises(KeyboardInterrupt):
        sync(config, catalog)
    with Catalog(config.catalog, readonly=True) as catalog:
        assert _sized(catalog) == 4
        kept = catalog.sized_hashes(list(sizes))
    monkeypatch.setattr(sizes_module, "_read_sizes", read_sizes)
    # (by name, not by count: a read the stopped sync had sent may reach the server late)
    asked = len(http_server.state.requests)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok and _sized(catalog) == len(sizes)
    later = {path for _, path in http_server.state.requests[asked:] if path.endswith(".spec.manifest.json")}
    assert {h for h in sizes if any(h in path for path in later)} == set(sizes) - kept


def test_a_spec_whose_version_cannot_be_part_of_a_path_is_a_size_unknown_and_said(
    mirrors: Path, tmp_path: Path
) -> None:
    """Its manifest is not asked for (``1..2`` would climb a folder), and the sync says
    which size stays unknown and why (once: it was counted twice, as a folder's sizes are
    read before the listing is written and the refused one asked again after)."""
    index = fixture_index(mirrors)
    record = index["database"]["installs"][LIBELF_CORE2]  # type: ignore[index]
    write_v3_mirror(tmp_path / "m", index)
    record["spec"]["version"] = "1..2"
    write_v3_mirror(tmp_path / "m", index)
    assert not sizes_module.is_path_safe("..") and not sizes_module.manifest_path_safe("libelf", "1..2")
    config = make_config(tmp_path, [{"name": "t", "url": (tmp_path / "m").as_uri()}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        row = spec_row(catalog, LIBELF_CORE2)
        assert outcome.ok and _sized(catalog) == 5
    assert row is not None and row["size"] is None
    url = (tmp_path / "m").as_uri()
    assert outcome.warnings == (
        f"root: 1 sizes unknown, e.g. {url}: spec {LIBELF_CORE2}: '1..2' cannot be part of a path",
    )


def _sized(catalog: Catalog) -> int:
    (stats,) = catalog.tag_stats()
    return stats.sized


def test_missing_spec_manifests_are_warnings_not_failures(mirrors: Path, tmp_path: Path) -> None:
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    for manifest in (tmp_path / "m/v3/manifests/spec/libelf").glob("*.json"):
        manifest.unlink()
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok and outcome.sizes_fetched == 4
    assert any("2 binaries without a size" in w for w in outcome.warnings)


def test_a_mirror_migrated_to_v3_with_the_same_index_bytes_is_read_as_v3(mirrors: Path, tmp_path: Path) -> None:
    """``spack buildcache migrate`` may keep the index's bytes: its v3 blob's checksum is
    then the old index.json's, and the mirror is read again all the same (its layout
    and its sizes are new), not taken as unchanged."""
    from tests.helpers import write_v2_mirror

    write_v2_mirror(tmp_path / "m", fixture_index(mirrors))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (first,) = sync(config, catalog)
        assert first.mirrors[0].layout == 2 and _sized(catalog) == 0
        sizes = write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
        (second,) = sync(config, catalog)
        assert second.ok and second.mirrors[0].layout == 3 and _sized(catalog) == len(sizes)


def test_a_missing_spec_manifest_is_named_in_its_warning(mirrors: Path, tmp_path: Path) -> None:
    """The warning gave a count alone ("1 binaries without a size"): nothing to look at."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    (gone,) = (tmp_path / "m/v3/manifests/spec/compiler-wrapper").glob("*.json")
    gone.unlink()
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok
    (warning,) = [w for w in outcome.warnings if "without a size" in w]
    assert warning == f"root: 1 binary without a size (no manifest or tarball), e.g. {gone}: not found"


@pytest.mark.parametrize("beside", [False, True])
@pytest.mark.parametrize("damage", ["a letter", "cut short", "gzip"])
def test_v3_blob_checksum_mismatch(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, beside: bool, damage: str
) -> None:
    """Read or decoded, with the blob hashed before its decode or beside it: damaged bytes
    are a checksum mismatch, also where they no longer decode (nor gunzip)."""
    from cachedex.ingest import manifests

    if beside:  # the fixture's index is small: hash it beside its decode as a big one is
        monkeypatch.setattr(manifests, "_HASH_BESIDE_MIN", 0)
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    (blob,) = (tmp_path / "m/blobs/sha256").glob("*/*")
    good = blob.read_bytes()
    source = open_source(str(tmp_path / "m"), client=None)
    whole = read_index(source, None, limits=Limits(), decoded=True)
    assert whole.index is not None and whole.data is None and len(whole.index.records) == 7
    if damage == "a letter":
        blob.write_bytes(good.replace(b"libdwarf", b"libdwarX", 1))
    elif damage == "cut short":
        blob.write_bytes(good[: len(good) // 2])
    else:
        blob.write_bytes(b"\x1f\x8b" + good[2:])
    for decoded in (False, True):
        with pytest.raises(ChecksumError, match="checksum mismatch"):
            read_index(source, None, limits=Limits(), decoded=decoded)


def test_v3_wins_over_v2_in_the_same_prefix(mirrors: Path, tmp_path: Path) -> None:
    from tests.helpers import write_v2_mirror

    write_v2_mirror(tmp_path / "m", fixture_index(mirrors, drop=(LIBDWARF_CORE2,)))
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    source = open_source(str(tmp_path / "m"), client=None)
    assert read_index(source, None, limits=Limits()).layout == 3


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"version": 4, "data": []}, "manifest version 4 is not 3, the build-cache layout this cachedex reads"),
        (
            {"version": 3, "data": [{"mediaType": "application/vnd.spack.db.v10+json", "checksum": "ab" * 32}]},
            r"index is only offered as application/vnd\.spack\.db\.v10\+json",
        ),
        ({"version": 3, "data": []}, "manifest lists no index blob"),
        ("not json", "not a valid v3 manifest"),
    ],
)
def test_bad_index_manifests(tmp_path: Path, manifest: object, message: str) -> None:
    path = tmp_path / "v3/manifests/index/index.manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    source = open_source(str(tmp_path), client=None)
    with pytest.raises(IndexFormatError, match=message):
        read_index(source, None, limits=Limits())


def test_gzip_transfer_is_used(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The test server gzips bodies for clients that accept it; the index still verifies."""
    write_v3_mirror(http_server.state.root / "m", fixture_index(mirrors))
    config = make_config(tmp_path, [{"name": "t", "url": f"{http_server.url}/m"}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok and outcome.specs == 6


def test_the_decoded_indexes_are_let_go_before_the_new_rows_are_indexed(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once its records are written, the root's decoded index (which holds its whole
    bytes) is released before the writer sorts the new rows into their indexes: kept
    until after, it made that step a big first sync's peak of memory."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    reads: list[MirrorRead] = []
    read_all = TagReader.read_all

    def kept(self: TagReader, tag: TagConfig) -> tuple[list[MirrorRead], Prefetch | None, bool]:
        found = read_all(self, tag)
        reads.extend(found[0])
        return found

    built_after = bulk_load.indexes_built_after
    held_then: list[bool] = []

    @contextmanager
    def indexed(db: sqlite3.Connection, indexes: Mapping[str, str], bulk: bool) -> Iterator[None]:
        with built_after(db, indexes, bulk):
            yield  # every batch written; the indexes are built when this block ends
            held_then.extend(read.index is not None for read in reads)

    monkeypatch.setattr(TagReader, "read_all", kept)
    monkeypatch.setattr(bulk_load, "indexes_built_after", indexed)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok and outcome.new_specs > 0
    assert held_then and not any(held_then)  # (the writer indexes twice: specs, then members)


def test_a_mirror_another_sync_changed_meanwhile_fails_the_tag_as_that_sync_left_it(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tag's URL edited while a sync with the old config runs: the old sync found its
    mirror unchanged, then the new config's sync committed another mirror; keeping the
    mirror gave the row the old URL and the new mirror's specs (install commands for a
    mirror without the spec). Now the old sync fails the tag and leaves the new state."""
    write_v3_mirror(tmp_path / "a", fixture_index(mirrors))
    write_v3_mirror(tmp_path / "b", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    old = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "a")}])
    new = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "b")}])
    with Catalog(old.catalog) as catalog:
        sync(old, catalog, ["t"])
        others = _another_sync_after_the_read(monkeypatch, new, "t")
        (outcome,) = sync(old, catalog, ["t"])
        assert others[0].ok and not outcome.ok
        assert "another sync changed this mirror" in (outcome.error or "")
        root = catalog.mirror_state("t", "root")
        assert root is not None and root.url == str(tmp_path / "b")
        assert LIBELF_CORE2 not in catalog.members_of("t", "root")  # b's specs under b's URL


def test_two_syncs_of_one_tag_reading_the_same_mirror_both_succeed(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `cachedex sync t` at once, one config: the other commits the mirror this one
    read, as this one found it; this one goes on (the check of a row changed meanwhile
    must not fail it: the same content)."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    others = _another_sync_after_the_read(monkeypatch, config, "t")
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog, ["t"])
        assert others[0].ok and outcome.ok, outcome.error
        assert [s.specs for s in catalog.tag_stats()] == [6]


@pytest.mark.parametrize("over", ["a folder", "HTTP"])
def test_a_first_sync_whose_later_batches_a_forked_process_builds_writes_what_one_process_does(  # type: ignore[no-untyped-def]
    demo_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, over: str
) -> None:
    """The demo's develop tag in batches of 100 (its specs with their sizes, nodes and
    edges; catalog/batches.py), against the same sync with every batch built here. Over
    HTTP, where reading the sizes is the bound, no process is forked."""
    from cachedex.catalog import batches, nodes
    from cachedex.ingest import index_batches

    monkeypatch.setattr(index_batches, "BATCH_SIZE", 100)
    monkeypatch.setattr(nodes, "MIN_TRAINING_NODES", 100)
    monkeypatch.setattr(bulk_load, "BULK_MIN", 1)
    monkeypatch.setattr(batches, "FORK_MIN_SPECS", 300)
    forked: list[bool] = []
    results = batches.ForkedBatches.results

    def noting_what_came(self: batches.ForkedBatches) -> Iterator[tuple[int, bytes | None]]:
        for position, data in results(self):
            forked.append(data is not None)
            yield position, data

    monkeypatch.setattr(batches.ForkedBatches, "results", noting_what_came)
    written = []
    with contextlib.ExitStack() as stack:
        url = str(demo_run.folder / "mirrors" / "develop")
        if over == "HTTP":
            url = f"{stack.enter_context(Nginx(demo_run.folder)).url}/mirrors/develop"
        for fork in (True, False):
            monkeypatch.setattr(batches, "can_fork", lambda fork=fork: fork)
            config = make_config(tmp_path / str(fork), [{"name": "develop", "url": url}])
            with Catalog(config.catalog) as catalog:
                (outcome,) = sync(config, catalog)
                assert outcome.ok, outcome.error
            db = sqlite3.connect(config.catalog)
            tables = ("specs", "nodes", "edges", "members")
            written.append([db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in tables])
    assert (forked and all(forked)) if over == "a folder" else not forked
    assert written[0] == written[1]
    assert len(written[0][0]) > 500 and sum(row[-1] is not None for row in written[0][0]) > 500


def test_a_small_write_goes_in_smaller_batches() -> None:
    """A batch's records weigh about half their index's bytes: a 30,000-record tag in
    batches of 20,000 peaked at 3.2 x its root index (bench/ingest.py); in a quarter of
    its specs, but never fewer than 8,000, it stays under 3 x at the same speed."""
    from cachedex.ingest.index_batches import BATCH_SIZE, SMALL_BATCH_SIZE, batch_size

    assert (BATCH_SIZE, SMALL_BATCH_SIZE) == (20_000, 8_000)
    assert batch_size(250_000) == batch_size(100_000) == BATCH_SIZE
    assert batch_size(60_000) == 15_000
    assert batch_size(30_000) == batch_size(1_000) == SMALL_BATCH_SIZE
