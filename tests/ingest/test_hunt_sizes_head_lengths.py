"""``sync --sizes`` of a v2 mirror over a real nginx (ingest/sizes.py, _head_sizes):
every length HEAD says is a size, an empty binary's 0 too."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.values import tarball_path_v2
from tests.helpers import LIBELF_CORE2, fixture_index, listed_specs, make_config, write_v2_mirror
from tests.servers import Nginx


def test_an_empty_binary_is_recorded_with_size_zero(mirrors: Path, tmp_path: Path) -> None:
    root = tmp_path / "www/m"
    write_v2_mirror(root, fixture_index(mirrors))
    with Nginx(tmp_path / "www") as nginx:
        config = make_config(tmp_path, [{"name": "t", "url": f"{nginx.url}/m"}])
        with Catalog(config.catalog) as catalog:
            sync(config, catalog)
            specs = listed_specs(catalog, "t")
            written = {}
            for length, s in enumerate(specs):  # (the first empty, the others 1, 2, ... bytes)
                path = root / tarball_path_v2(
                    hash=s.hash, name=s.name, version=s.version, compiler=s.compiler,
                    platform=s.platform, os=s.os, target=s.target,
                )  # fmt: skip
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"x" * length)
                written[s.hash] = length
            (outcome,) = sync(config, catalog, head_sizes=True)
            recorded = {s.hash: s.size for s in listed_specs(catalog, "t")}
    assert outcome.ok, outcome.error
    assert outcome.warnings == ()
    assert recorded == written and 0 in recorded.values()


def test_a_git_branch_version_is_asked_for_at_the_path_spack_writes(mirrors: Path, tmp_path: Path) -> None:
    # A version's "/" becomes "_" in the tarball's path, as Spack writes it: such a
    # version is no reason to leave the size unknown.
    index = fixture_index(mirrors)
    node = index["database"]["installs"][LIBELF_CORE2]["spec"]  # type: ignore[index]
    node["version"] = "git.feature/x=1.0"
    root = tmp_path / "www/m"
    write_v2_mirror(root, index)
    with Nginx(tmp_path / "www") as nginx:
        config = make_config(tmp_path, [{"name": "t", "url": f"{nginx.url}/m"}])
        with Catalog(config.catalog) as catalog:
            sync(config, catalog)
            (s,) = [s for s in listed_specs(catalog, "t") if s.hash == LIBELF_CORE2]
            path = root / tarball_path_v2(
                hash=s.hash, name=s.name, version=s.version, compiler=s.compiler,
                platform=s.platform, os=s.os, target=s.target,
            )  # fmt: skip
            assert "git.feature_x=1.0" in path.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x" * 1234)
            (outcome,) = sync(config, catalog, head_sizes=True)
            (s,) = [s for s in listed_specs(catalog, "t") if s.hash == LIBELF_CORE2]
    assert outcome.ok, outcome.error
    assert s.size == 1234
    assert not [w for w in outcome.warnings if "sizes unknown" in w]
