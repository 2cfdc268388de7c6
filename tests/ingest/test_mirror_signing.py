"""Whether a mirror signs its binaries, as a sync of its changed index tells it from three
listed specs' v3 manifests and its key index."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.ingest.verify import verify
from cachedex.values import ROOT_STACK
from tests.helpers import LIBELF_CORE2, MIRRORS, fixture_index, make_config, write_v3_mirror, write_v3_view
from tests.servers import Nginx


def _signed(catalog: Catalog, tag: str, stack: str = ROOT_STACK) -> bool | None:
    state = catalog.mirror_state(tag, stack)
    assert state is not None
    return state.signed


@pytest.mark.parametrize("over", ["folder", "http"])
def test_a_sync_tells_a_signed_mirror_from_a_plain_one(mirrors: Path, tmp_path: Path, over: str) -> None:
    write_v3_mirror(tmp_path / "www/plain", fixture_index(mirrors))
    write_v3_mirror(tmp_path / "www/signed", fixture_index(mirrors), signed=True)
    server = Nginx(tmp_path / "www") if over == "http" else None
    base = server.url if server is not None else str(tmp_path / "www")
    try:
        config = make_config(
            tmp_path,
            [
                {"name": "plain", "url": f"{base}/plain", "stacks": {"s": f"{base}/signed"}},
                {"name": "sig", "url": f"{base}/signed"},
                {"name": "old", "url": str(MIRRORS / "v2_layout/unsigned")},  # (v2: not read)
            ],
        )
        with Catalog(config.catalog) as catalog:
            assert all(outcome.ok for outcome in sync(config, catalog))
            assert (_signed(catalog, "plain"), _signed(catalog, "plain", "s")) == (False, True)
            assert (_signed(catalog, "sig"), _signed(catalog, "old")) == (True, None)
            assert catalog.unsigned_mirrors() == {("plain", ROOT_STACK)}
            # An unchanged index is not read again, nor its manifest: what was found stays.
            shutil.rmtree(tmp_path / "www/plain/v3/manifests/spec")
            assert all(outcome.ok for outcome in sync(config, catalog))
            assert _signed(catalog, "plain") is False
            # A mirror moved is looked at again.
            moved = make_config(tmp_path, [{"name": "plain", "url": f"{base}/signed"}])
            assert all(outcome.ok for outcome in sync(moved, catalog, ["plain"]))
            assert _signed(catalog, "plain") is True
    finally:
        if server is not None:
            server.stop()


def test_a_mirror_whose_manifests_cannot_be_read_syncs_and_stays_not_known(mirrors: Path, tmp_path: Path) -> None:
    index = fixture_index(mirrors)
    write_v3_mirror(tmp_path / "m", index)
    shutil.rmtree(tmp_path / "m/v3/manifests/spec")  # every size missing, and the samples' files
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert _signed(catalog, "t") is None and not catalog.unsigned_mirrors()


def _plain_manifest(root: Path, dag_hash: str) -> None:
    """Write one spec's manifest of the mirror at ``root`` again as plain JSON (as a push
    with --unsigned would have), keeping what it says."""
    (path,) = (root / "v3/manifests/spec").glob(f"*/*-{dag_hash}.spec.manifest.json")
    text = path.read_text()
    if text.startswith("-----BEGIN PGP SIGNED MESSAGE-----"):
        body = text.split("\n\n", 1)[1].split("\n-----BEGIN PGP SIGNATURE-----", 1)[0]
        path.write_text(body)


def test_one_plain_manifest_does_not_make_a_signing_mirror_unsigned(mirrors: Path, tmp_path: Path) -> None:
    """A wrong --unsigned turns off the check that keeps a tampered binary out: one plain
    manifest (pushed by someone without the key) among signed ones, or plain manifests
    where the mirror publishes keys, leave the mirror signing, as verify decides; only
    plain manifests and no key index make it unsigned."""
    index = fixture_index(mirrors)
    listed = [h for h, record in index["database"]["installs"].items() if record["in_buildcache"]]  # type: ignore[index]
    write_v3_mirror(tmp_path / "mixed", index, signed=True)
    _plain_manifest(tmp_path / "mixed", listed[0])  # the first listed: the first one read
    write_v3_mirror(tmp_path / "keys", index)
    keys = tmp_path / "keys/v3/manifests/key/keys.manifest.json"
    keys.parent.mkdir(parents=True)
    keys.write_text('{"version": 3, "data": []}')
    config = make_config(tmp_path, [{"name": name, "url": str(tmp_path / name)} for name in ("mixed", "keys")])
    with Catalog(config.catalog) as catalog:
        assert all(outcome.ok for outcome in sync(config, catalog))
        assert (_signed(catalog, "mixed"), _signed(catalog, "keys")) == (True, True)
        assert not catalog.unsigned_mirrors()


def test_a_changed_index_is_looked_at_again_and_a_moved_mirror_forgets(mirrors: Path, tmp_path: Path) -> None:
    """Pushed again with signing, a mirror said unsigned is signed from its next sync
    (not at its next `verify` only); moved to where nothing can be told (a v2 mirror),
    it is no longer known, not what its old URL was."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        assert _signed(catalog, "t") is False
        write_v3_mirror(tmp_path / "m", fixture_index(mirrors), signed=True)  # (its index changes)
        sync(config, catalog)
        assert _signed(catalog, "t") is True
        write_v3_mirror(tmp_path / "m", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
        sync(config, catalog)
        assert _signed(catalog, "t") is False
        moved = make_config(tmp_path, [{"name": "t", "url": str(MIRRORS / "v2_layout/signed")}])
        assert all(outcome.ok for outcome in sync(moved, catalog))
        assert _signed(catalog, "t") is None and not catalog.unsigned_mirrors()


def test_a_root_of_views_signs_while_one_of_its_views_does(mirrors: Path, tmp_path: Path) -> None:
    """A mirror of views only signs if one of its views does: when only its plain view
    changed, it was told unsigned, its other view (not read again) forgotten."""
    index = fixture_index(mirrors)
    listed = [h for h, record in index["database"]["installs"].items() if record["in_buildcache"]]  # type: ignore[index]
    write_v3_mirror(tmp_path / "m", index, signed=True)
    shutil.rmtree(tmp_path / "m/v3/manifests/index")  # no root index: views only
    signing, plain = listed[:2], listed[2:]
    for dag_hash in plain:
        _plain_manifest(tmp_path / "m", dag_hash)

    def view(keep: list[str]) -> dict[str, object]:
        subset = fixture_index(mirrors)
        for dag_hash, record in subset["database"]["installs"].items():  # type: ignore[union-attr]
            record["in_buildcache"] = record["in_buildcache"] and dag_hash in keep
        return subset

    write_v3_view(tmp_path / "m", "one", view(signing))
    write_v3_view(tmp_path / "m", "two", view(plain))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m"), "views": "all"}])
    with Catalog(config.catalog) as catalog:
        assert all(outcome.ok for outcome in sync(config, catalog))
        assert (_signed(catalog, "t"), _signed(catalog, "t", "one"), _signed(catalog, "t", "two")) == (
            True,
            True,
            False,
        )
        write_v3_view(tmp_path / "m", "two", view(plain[:-1]))  # only the plain view changes
        assert all(outcome.ok for outcome in sync(config, catalog))
        assert _signed(catalog, "t") is True and ("t", ROOT_STACK) not in catalog.unsigned_mirrors()


def test_the_newer_of_a_sync_s_and_a_verification_s_finding_counts(mirrors: Path, tmp_path: Path) -> None:
    """`verify` found a plain mirror unsigned; pushed again with signing and synced, it
    was still given `--unsigned` (the verification always won), and the reverse."""
    write_v3_mirror(tmp_path / "m", fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        verify(config, catalog)
        assert catalog.unsigned_mirrors() == {("t", ROOT_STACK)}
        write_v3_mirror(tmp_path / "m", fixture_index(mirrors), signed=True)  # (its index changes)
        sync(config, catalog)
        assert _signed(catalog, "t") is True and not catalog.unsigned_mirrors()  # the sync is newer
        verify(config, catalog)  # signed too now
        write_v3_mirror(tmp_path / "m", fixture_index(mirrors, drop=(LIBELF_CORE2,)))  # plain again
        sync(config, catalog)
        assert catalog.unsigned_mirrors() == {("t", ROOT_STACK)}


def test_a_catalog_made_before_signing_was_recorded_learns_it_unchanged(mirrors: Path, tmp_path: Path) -> None:
    """A catalog upgraded to schema 12 had every mirror's signing not known, and learnt
    it only when the mirror's index next changed (a private mirror may not for months):
    its next sync reads the manifests of listed specs the catalog names, once."""
    write_v3_mirror(tmp_path / "plain", fixture_index(mirrors))
    write_v3_mirror(tmp_path / "sig", fixture_index(mirrors), signed=True)
    config = make_config(tmp_path, [{"name": tag, "url": str(tmp_path / tag)} for tag in ("plain", "sig")])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        catalog._db.execute("UPDATE mirrors SET signed = NULL, signed_at = NULL")  # (as the upgrade leaves it)
        catalog._db.commit()
        outcomes = sync(config, catalog)
        assert all(o.ok and not o.mirrors[0].changed for o in outcomes)  # (no index changed)
        assert (_signed(catalog, "plain"), _signed(catalog, "sig")) == (False, True)
        assert catalog.unsigned_mirrors() == {("plain", ROOT_STACK)}
        # Known, it stays while the index does
        shutil.rmtree(tmp_path / "plain/v3/manifests/spec")
        sync(config, catalog)
        assert _signed(catalog, "plain") is False
