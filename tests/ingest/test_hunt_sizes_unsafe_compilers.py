"""Compilers a v2 tarball's path may not hold (ingest/sizes.py, is_path_safe): a
backslash (a separator where the mirror's files are served from Windows) and a control
character. The index's decoder lets them through in a compiler's name (it refuses them
in a version): the size phase is the last guard before the name goes into a URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.ingest.sizes import manifest_path_safe
from cachedex.ingest.sync import sync
from tests.helpers import LIBELF_CORE2, fixture_index, make_config, write_v2_mirror
from tests.servers import Nginx


@pytest.mark.parametrize("compiler", ["gc\\c", "gc\nc", "gc\x1bc"], ids=["backslash", "newline", "escape"])
def test_a_compiler_that_cannot_be_part_of_a_path_is_not_asked_for(
    mirrors: Path, tmp_path: Path, compiler: str
) -> None:
    index = fixture_index(mirrors)
    node = index["database"]["installs"][LIBELF_CORE2]["spec"]  # type: ignore[index]
    node["compiler"] = {"name": compiler, "version": "10.2.1"}
    write_v2_mirror(tmp_path / "www/m", index)
    with Nginx(tmp_path / "www", log_requests=True) as nginx:
        config = make_config(tmp_path, [{"name": "t", "url": f"{nginx.url}/m"}])
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog, head_sizes=True)
        asked = [path for _method, path, _status in nginx.requests() if LIBELF_CORE2 in path]
    assert outcome.ok, outcome.error
    assert asked == []
    refused = [w for w in outcome.warnings if w.startswith("root: 1 sizes unknown")]
    assert len(refused) == 1 and f"spec {LIBELF_CORE2}: " in refused[0]
    assert refused[0].endswith("cannot be part of a path")


def test_a_git_branch_version_may_make_a_manifest_path() -> None:
    # Spack writes a version's "/" as "_" in the manifest's name (verify and the signing
    # samples ask this before they read a manifest): such a version is no reason to skip.
    assert manifest_path_safe("libelf", "git.feature/x=1.0")
    assert not manifest_path_safe("libelf", "git.feature/../x")
    assert not manifest_path_safe("", "1.0")  # (the path would hold "spec//")
