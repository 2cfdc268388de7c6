"""Which registry and repository an ``oci://`` URL names, as Spack reads an image name:
a first part that is no host name (no ``.`` or ``:``, not ``localhost``) is a Docker Hub
user (``oci://myuser/cache`` is ``index.docker.io``'s ``myuser/cache``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.config import parse_config
from cachedex.ingest.oci import registry_and_repository
from cachedex.ingest.sync import sync
from tests.helpers import fixture_index, listed_specs
from tests.registry import FakeRegistry, Route, Seen, expected_tag, spec_manifest

HUB = "http://index.docker.io"


@pytest.mark.parametrize(
    ("netloc", "path", "expected"),
    [
        ("ghcr.io", "/Spack/cache", ("ghcr.io", "spack/cache")),
        ("127.0.0.1:5000", "/a/b", ("127.0.0.1:5000", "a/b")),
        ("localhost", "/cache", ("localhost", "cache")),
        ("registry:5000", "/cache", ("registry:5000", "cache")),
        ("myuser", "/spack-cache", ("index.docker.io", "myuser/spack-cache")),
        ("myuser", "/team/Cache/", ("index.docker.io", "myuser/team/cache")),
        ("ubuntu", "", ("index.docker.io", "library/ubuntu")),
        ("MyRegistry", "/Cache", ("myregistry", "cache")),  # (upper case: a host, as Docker reads it)
    ],
)
def test_a_name_is_read_as_spack_reads_it(netloc: str, path: str, expected: tuple[str, str]) -> None:
    assert registry_and_repository(netloc, path) == expected


class _DockerHubProxy(FakeRegistry):
    """A forward proxy on 127.0.0.1 answering for ``index.docker.io`` as a registry
    would (the test has no network): requests for any other host get 502."""

    def respond(self, seen: Seen) -> Route:
        if not seen.path.startswith(HUB + "/"):
            return 502, {}, b"not index.docker.io"
        return super().respond(Seen(seen.method, seen.path.removeprefix(HUB), seen.headers))


def test_a_docker_hub_name_syncs_from_docker_hub_with_its_credentials(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index: dict[str, Any] = fixture_index(mirrors)
    with _DockerHubProxy() as hub:
        hub.valid.add("hub-token-1")
        hub.add_index(json.dumps(index).encode())
        sizes = {}
        for dag_hash, record in index["database"]["installs"].items():  # (the fake's repository: cache/spack)
            sizes[dag_hash] = 1000 + len(sizes)
            spec = record["spec"]
            hub.add_manifest(expected_tag(spec["name"], spec["version"], dag_hash), spec_manifest([7, sizes[dag_hash]]))
        for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", hub.url)
        monkeypatch.setenv("http_proxy", hub.url)
        monkeypatch.setenv("CACHEDEX_T_HUB", "hub-token-1")
        document = {
            "catalog": "c.sqlite",
            "tags": [{"name": "t", "url": "oci+http://cache/spack"}],
            "registries": {"index.docker.io": {"token_env": "CACHEDEX_T_HUB"}},
        }
        config = parse_config(document, base=tmp_path)
        with Catalog(config.catalog) as catalog:
            (outcome,) = sync(config, catalog)
            assert outcome.ok, outcome.error
            specs = {s.hash: s.size for s in listed_specs(catalog, "t")}
    listed = {h for h, r in index["database"]["installs"].items() if r["in_buildcache"]}
    assert specs == {h: sizes[h] for h in listed}
    assert hub.seen and all(s.path.startswith(f"{HUB}/v2/cache/spack/") for s in hub.seen)
    assert all(s.headers.get("authorization") == "Bearer hub-token-1" for s in hub.seen)
