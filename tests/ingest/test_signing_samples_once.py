"""A mirror's signing samples are read once: once per sync for all the views (and tags)
of one mirror, and once per index for a mirror whose sampled manifests cannot be read."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.ingest.mirror_signing import SAMPLED
from cachedex.ingest.sync import sync
from cachedex.ingest.verify_keys import KEY_INDEX_V3
from cachedex.values import ROOT_STACK
from tests.helpers import LIBELF_CORE2, fixture_index, make_config, write_v3_mirror, write_v3_view
from tests.ingest.test_mirror_signing import _plain_manifest
from tests.servers import Nginx, outage_locations

SPEC_MANIFESTS = "/v3/manifests/spec/"


def _first_listed(mirrors: Path, keep: int) -> dict[str, object]:
    """The real index with only its first ``keep`` listed records listed."""
    index = fixture_index(mirrors)
    kept = 0
    for record in index["database"]["installs"].values():  # type: ignore[index]
        kept += record["in_buildcache"]
        record["in_buildcache"] = record["in_buildcache"] and kept <= keep
    return index


def _signed(catalog: Catalog, tag: str, stack: str = ROOT_STACK) -> bool | None:
    state = catalog.mirror_state(tag, stack)
    assert state is not None
    return state.signed


def _sized_tag(tmp_path: Path, mirrors: Path) -> dict[str, object]:
    """A tag of a folder holding the same specs with their manifests: synced first, every
    size is known, so that no sync over HTTP reads a manifest for a size and every
    manifest it asks for is a signing sample."""
    write_v3_mirror(tmp_path / "sized", fixture_index(mirrors))
    return {"name": "sized", "url": str(tmp_path / "sized")}


def test_views_and_tags_of_one_mirror_read_its_samples_once(mirrors: Path, tmp_path: Path) -> None:
    """Each view of a mirror sampled it again, in one sync: the same manifests and key
    index read once per view (and once per tag reading the mirror). Each view is still
    told from its own samples; the files they share are read once."""
    write_v3_mirror(tmp_path / "www/m", fixture_index(mirrors))  # (plain: the key index is asked)
    write_v3_view(tmp_path / "www/m", "all", fixture_index(mirrors))  # (the root's samples)
    write_v3_view(tmp_path / "www/m", "few", _first_listed(mirrors, 2))
    server = Nginx(tmp_path / "www", log_requests=True)
    try:
        url = f"{server.url}/m"
        config = make_config(
            tmp_path,
            [
                _sized_tag(tmp_path, mirrors),
                {"name": "t", "url": url, "stacks": {"one": {"view": "all"}, "two": {"view": "few"}}},
                {"name": "u", "url": url},
            ],
        )
        with Catalog(config.catalog) as catalog:
            assert all(outcome.ok for outcome in sync(config, catalog, ["sized"]))
            assert not server.requests()
            outcomes = sync(config, catalog, ["t", "u"])
            assert all(outcome.ok for outcome in outcomes), [outcome.error for outcome in outcomes]
            reads = Counter(path for method, path, _ in server.requests() if method == "GET")
            manifests = {path: count for path, count in reads.items() if SPEC_MANIFESTS in path}
            assert manifests and all(count == 1 for count in manifests.values()), manifests
            assert len(manifests) <= 2 * SAMPLED  # (view "all" and tag u sample as the root does)
            assert reads[f"/m/{KEY_INDEX_V3}"] == 1
            # Every view and tag is told what the one sampling found.
            found = [_signed(catalog, "t"), _signed(catalog, "t", "one"), _signed(catalog, "t", "two")]
            assert [*found, _signed(catalog, "u")] == [False] * 4
    finally:
        server.stop()


def test_unreadable_samples_are_not_read_again_until_the_index_changes(mirrors: Path, tmp_path: Path) -> None:
    """A v3 mirror whose sampled manifests all 404 left its signing not known, and every
    later sync of its unchanged index read them again; a changed index is looked at."""
    write_v3_mirror(tmp_path / "www/m", fixture_index(mirrors))
    shutil.rmtree(tmp_path / "www/m/v3/manifests/spec")
    server = Nginx(tmp_path / "www", log_requests=True)
    try:
        config = make_config(tmp_path, [_sized_tag(tmp_path, mirrors), {"name": "t", "url": f"{server.url}/m"}])
        with Catalog(config.catalog) as catalog:
            assert all(outcome.ok for outcome in sync(config, catalog, ["sized"]))

            def manifests_read_by_a_sync() -> list[tuple[str, str, int]]:
                before = len(server.requests())
                (outcome,) = sync(config, catalog, ["t"])
                assert outcome.ok, outcome.error
                return [request for request in server.requests()[before:] if SPEC_MANIFESTS in request[1]]

            first = manifests_read_by_a_sync()
            assert first and all(status == 404 for _, _, status in first)
            assert _signed(catalog, "t") is None
            assert manifests_read_by_a_sync() == []  # (the same index: nothing new to tell)
            assert manifests_read_by_a_sync() == []
            assert _signed(catalog, "t") is None and ("t", ROOT_STACK) not in catalog.unsigned_mirrors()
            # Its index changed (pushed again, its manifests with it): sampled again, and told.
            write_v3_mirror(tmp_path / "www/m", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
            manifest = tmp_path / "www/m/v3/manifests/index/index.manifest.json"
            later = manifest.stat().st_mtime + 10  # (nginx's ETag: the size, same, and the second)
            os.utime(manifest, (later, later))
            again = manifests_read_by_a_sync()
            assert again and all(status == 200 for _, _, status in again)
            assert _signed(catalog, "t") is False
    finally:
        server.stop()


def test_a_passing_failure_is_asked_again_by_the_next_sync(mirrors: Path, tmp_path: Path) -> None:
    """A plain mirror whose key index answered 503 through an outage was left "looked at,
    not told" for as long as its index stayed the same: its pages never said
    ``--unsigned``. A server error is asked again by the next sync."""
    write_v3_mirror(tmp_path / "www/m", fixture_index(mirrors))  # (plain manifests, no key index)
    outage = tmp_path / "outage"
    server = Nginx(tmp_path / "www", extra=outage_locations(outage, f"= /m/{KEY_INDEX_V3}"))
    try:
        config = make_config(tmp_path, [{"name": "t", "url": f"{server.url}/m"}], retries=0)
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog, ["t"])
            assert outcome.ok, outcome.error
            assert _signed(catalog, "t") is None
            outage.unlink()
            (outcome,) = sync(config, catalog, ["t"])
            assert outcome.ok and not outcome.changed, outcome.error
            assert _signed(catalog, "t") is False
            assert ("t", ROOT_STACK) in catalog.unsigned_mirrors()
    finally:
        server.stop()


def _listing(mirrors: Path, keep: list[str]) -> dict[str, object]:
    """The real index with only ``keep`` listed."""
    index = fixture_index(mirrors)
    for dag_hash, record in index["database"]["installs"].items():  # type: ignore[union-attr]
        record["in_buildcache"] = record["in_buildcache"] and dag_hash in keep
    return index


def test_a_root_of_views_follows_a_view_told_after_a_passing_failure(mirrors: Path, tmp_path: Path) -> None:
    """A mirror of views only: view ``one`` signs, ``two`` is plain. While ``one``'s
    manifests answered 503, the root was made unsigned from ``two`` alone (a wrong
    ``--unsigned``), and kept so once ``one`` was told, as no view's index changed; with
    every view unsure, it was left "looked at" and never told."""
    index = fixture_index(mirrors)
    listed = [h for h, r in index["database"]["installs"].items() if r["in_buildcache"]]  # type: ignore[union-attr]
    root = tmp_path / "www/m"
    write_v3_mirror(root, index, signed=True)
    shutil.rmtree(root / "v3/manifests/index")  # (views only)
    signing, plain = listed[:2], listed[2:]
    for dag_hash in plain:
        _plain_manifest(root, dag_hash)
    write_v3_view(root, "one", _listing(mirrors, signing))
    write_v3_view(root, "two", _listing(mirrors, plain))
    outage = tmp_path / "outage"
    locations = [f"~ {h}\\.spec\\.manifest\\.json$" for h in signing]
    server = Nginx(tmp_path / "www", extra=outage_locations(outage, *locations))
    try:
        config = make_config(tmp_path, [{"name": "t", "url": f"{server.url}/m", "views": ["one", "two"]}], retries=0)
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog, ["t"])
            assert outcome.ok, outcome.error
            assert _signed(catalog, "t") is None  # (not unsigned: "one" may sign)
            assert ("t", ROOT_STACK) not in catalog.unsigned_mirrors()
            outage.unlink()
            (outcome,) = sync(config, catalog, ["t"])
            assert outcome.ok and not outcome.changed, outcome.error
            assert [_signed(catalog, "t"), _signed(catalog, "t", "one"), _signed(catalog, "t", "two")] == [
                True,
                True,
                False,
            ]
            assert sorted(catalog.unsigned_mirrors()) == [("t", "two")]
    finally:
        server.stop()
