"""``sync --sizes`` of a v2 mirror over a real nginx: what a HEAD without a length means."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.values import tarball_path_v2
from tests.helpers import LIBELF_CORE2, fixture_index, listed_specs, make_config, write_v2_mirror
from tests.servers import Nginx

#: nginx's SSI filter leaves the length out, as a server that transforms files as it
#: sends them does: HEAD answers 200 with no Content-Length (GET answers chunked).
NO_LENGTH = r"location ~ \.spack$ { ssi on; ssi_types *; }"


def test_a_head_answered_without_a_length_is_a_size_unknown_not_a_binary_missing(mirrors: Path, tmp_path: Path) -> None:
    """Such a binary, which is there, was counted "without a size (no manifest or
    tarball)": the warning sent the user looking for a file that was not missing."""
    root = tmp_path / "www/m"
    write_v2_mirror(root, fixture_index(mirrors, drop=(LIBELF_CORE2,)))
    with Nginx(tmp_path / "www") as plain:
        config = make_config(tmp_path, [{"name": "t", "url": f"{plain.url}/m"}])
        with Catalog(config.catalog) as catalog:
            sync(config, catalog)
            specs = listed_specs(catalog, "t")
    paths = [
        tarball_path_v2(hash=s.hash, name=s.name, version=s.version, compiler=s.compiler,
                        platform=s.platform, os=s.os, target=s.target)
        for s in specs
    ]  # fmt: skip
    gone, *there = paths  # the first binary is missing indeed: it stays "missing"
    for path in there:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"x" * 1000)
    with Nginx(tmp_path / "www", extra=NO_LENGTH) as nginx:
        url = f"{nginx.url}/m"
        config = make_config(tmp_path, [{"name": "t", "url": url}])
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog, head_sizes=True)
            sizes = [s.size for s in listed_specs(catalog, "t")]
    assert outcome.ok, outcome.error
    assert len(there) >= 3 and sizes == [None] * len(paths)
    unknown, missing = outcome.warnings
    example = unknown.removeprefix(f"root: {len(there)} sizes unknown, e.g. ")
    assert example in {f"{url}/{path}: the server's answer to HEAD has no Content-Length" for path in there}
    assert missing == f"root: 1 binary without a size (no manifest or tarball), e.g. {url}/{gone}: not found (HTTP 404)"


def test_a_compiler_that_cannot_be_part_of_a_path_is_a_size_unknown_and_said(mirrors: Path, tmp_path: Path) -> None:
    """A v2 tarball's path holds the compiler's name and version: one holding a ``/``
    is not asked for (the path would lead elsewhere), and the sync says why."""
    index = fixture_index(mirrors)
    node = index["database"]["installs"][LIBELF_CORE2]["spec"]  # type: ignore[index]
    node["compiler"] = {"name": "gc/c", "version": "10.2.1"}
    root = tmp_path / "www/m"
    write_v2_mirror(root, index)
    with Nginx(tmp_path / "www") as nginx:
        config = make_config(tmp_path, [{"name": "t", "url": f"{nginx.url}/m"}])
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog, head_sizes=True)
    assert outcome.ok, outcome.error
    refused = f"root: 1 sizes unknown, e.g. {nginx.url}/m: spec {LIBELF_CORE2}: 'gc/c' cannot be part of a path"
    assert refused in outcome.warnings
