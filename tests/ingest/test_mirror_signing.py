"""Whether a mirror signs its binaries, as a sync tells it from one spec manifest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.values import ROOT_STACK
from tests.helpers import MIRRORS, fixture_index, make_config, write_v3_mirror
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
    shutil.rmtree(tmp_path / "m/v3/manifests/spec")  # every size missing, and the sample's file
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert _signed(catalog, "t") is None and not catalog.unsigned_mirrors()
