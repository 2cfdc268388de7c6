"""What the mirrors page's data says: each mirror beside its own latest verification."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.ingest.verify import verify
from cachedex.publish.pages import mirrors_page
from tests.helpers import MIRRORS, make_config


def test_each_mirror_shows_its_own_verification_and_an_unverified_one_none(tmp_path: Path) -> None:
    """Tag t's stack s is verified; t's root and tag u are not: no row borrows another's findings."""
    signed = str(MIRRORS / "v2_layout/signed")
    config = make_config(
        tmp_path, [{"name": "t", "url": signed, "stacks": {"s": signed}}, {"name": "u", "url": signed}]
    )
    with Catalog(config.catalog) as catalog:
        assert all(outcome.ok for outcome in sync(config, catalog))
        verify(config, catalog, ["t"])
        page = mirrors_page(catalog)
    found = {(m.tag, m.stack): v for m, v in zip(page.mirrors, page.verifications, strict=True)}
    assert set(found) == {("t", "root"), ("t", "s"), ("u", "root")}
    assert found[("u", "root")] is None
    assert found[("t", "s")] is not None and (found[("t", "s")].tag, found[("t", "s")].stack) == ("t", "s")
    assert found[("t", "root")] is not None and found[("t", "root")].stack == "root"
