"""A release between two others forgotten: the newer one's previous is now the older,
and a build after it writes the newer's change page and comparison again (it still named
the forgotten one), as a full build would. Small catalogs of
``test_site_builds_incremental``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish import site_delta
from cachedex.publish.site import write_site
from tests.helpers import file_bytes
from tests.publish.test_site_builds_incremental import _specs, _sync


def test_a_forgotten_release_between_two_has_the_newer_compared_with_the_older(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_delta, "MOST", 1.0)  # (a small catalog's change reaches most of it)
    site = tmp_path / "site"
    with Catalog(tmp_path / "c.sqlite") as catalog:
        # (specs of its own: no mirror of another release holds any spec it changes)
        for tag, seed in (("v1.0.0", "s"), ("v1.1.0", "b"), ("v1.2.0", "s")):
            _sync(catalog, tag, _specs(range(3), seed))
        _sync(catalog, "v1.0.0", _specs(range(4)))  # (the last sync is not the one forgotten)
        assert write_site(catalog, site).complete
        assert (site / "tags/v1.2.0/compare/v1.1.0/index.html").is_file()
        catalog.forget_tags(["v1.1.0"])
        after = write_site(catalog, site)
        assert after.complete and after.changed_only, after
        write_site(catalog, tmp_path / "fresh", workers=1)
    assert (site / "tags/v1.2.0/compare/v1.0.0/index.html").is_file()
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")
