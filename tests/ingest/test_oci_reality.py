"""OCI registries as they really behave, where they part from the distribution spec:
Debian's docker-registry (distribution 2.8) holding a Spack cache, behind a relay
(tests/registry.py's RegistryProxy) that adds what the real one cannot be configured to
show: a 405 to HEAD on manifests (Sonatype Nexus), Bearer challenges that name no scope
(Nexus), an empty one (Oracle's OCIR) or only the realm (Google's Artifact Registry)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cachedex.config import Limits
from cachedex.errors import CachedexError
from cachedex.ingest.http import HttpClient
from cachedex.ingest.oci import OciSource
from cachedex.ingest.oci_auth import parse_challenge
from cachedex.ingest.snapshots import OCI_LAYOUT, PreviousState
from tests.helpers import fixture_index
from tests.registry import PushedCache, Registry, RegistryProxy, Route, Seen, push_spack_cache, query_of

LIMITS = Limits()
REPO = "org/sub/spack-cache"  # nested, as GitLab's and Harbor's projects are


@pytest.fixture(scope="module")
def pushed(mirrors: Path) -> Iterator[tuple[Registry, PushedCache, dict[str, Any]]]:
    """(the registry, what was pushed, the index) of a Spack cache at ``REPO``."""
    index = fixture_index(mirrors)
    with Registry() as registry:
        yield registry, push_spack_cache(registry.url, REPO, index), index


def _specs(index: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(h, r["spec"]["name"], r["spec"]["version"]) for h, r in index["database"]["installs"].items()]


def _sizes(source: OciSource, index: dict[str, Any]) -> dict[str, int | CachedexError]:
    refused: list[str] = []
    paths = list(source.size_requests(_specs(index), refused))
    return dict(source.read_many(paths, source.decode_size, limit=LIMITS.manifest_bytes))


# -- HEAD refused -------------------------------------------------------------------------------------


def _no_head_on_manifests(seen: Seen) -> Route | None:
    if seen.method == "HEAD" and "/manifests/" in seen.path:
        return 405, {"Content-Type": "application/json"}, b'{"errors":[{"code":"UNSUPPORTED"}]}'
    return None


def test_a_registry_that_refuses_head_on_a_manifest_is_read_with_get(
    pushed: tuple[Registry, PushedCache, dict[str, Any]], client: HttpClient
) -> None:
    # Nexus (merll/docker-registry-util#3) and distribution 2.2 behind token auth
    # (distribution/distribution#1485) answer 405 where the spec says HEAD MUST work.
    registry, cache, _index = pushed
    with RegistryProxy(registry, token_required=False, intercept=_no_head_on_manifests) as proxy:
        source = OciSource(f"oci+http://{proxy.host}/{REPO}", client)
        snapshot = source.read_index(None, limits=LIMITS)
        assert (snapshot.data, snapshot.checksum) == (cache.index, cache.index_digest)
        # Unchanged: the GET's digest is the one kept, and no data is read again.
        previous = PreviousState(OCI_LAYOUT, cache.index_digest)
        again = source.read_index(previous, limits=LIMITS)
        assert (again.data, again.checksum) == (None, cache.index_digest)
        manifests = [(s.method, s.path) for s in proxy.seen if "/manifests/index.spack" in s.path]
        assert (
            manifests
            == [("HEAD", f"/v2/{REPO}/manifests/index.spack"), ("GET", f"/v2/{REPO}/manifests/index.spack")] * 2
        )


# -- challenges that name no scope or no service ------------------------------------------------------


@pytest.mark.parametrize(
    ("challenge", "service"),
    [
        ('BEARER realm="{url}/token", service="{url}/token"', "{url}/token"),  # Nexus (nexus-public#659)
        ('Bearer realm="{url}/token",service="ocir.example",scope=""', "ocir.example"),  # OCIR (binderhub#1586)
        ('Bearer realm="{url}/token"', None),  # Google's Artifact Registry (watchtower#1895)
    ],
)
def test_a_bearer_challenge_without_a_scope_gets_a_token_for_pulling_the_repository(
    pushed: tuple[Registry, PushedCache, dict[str, Any]], client: HttpClient, challenge: str, service: str | None
) -> None:
    registry, cache, index = pushed
    with RegistryProxy(registry) as proxy:
        proxy.challenge = challenge.replace("{url}", proxy.url)
        source = OciSource(f"oci+http://{proxy.host}/{REPO}", client)
        snapshot = source.read_index(None, limits=LIMITS)
        assert snapshot.data == cache.index
        sizes = _sizes(source, index)
        assert {h: v for h, v in sizes.items() if h in cache.sizes} == cache.sizes
        (asked,) = proxy.token_requests()  # one token served them all
        query = query_of(asked)
        assert query["scope"] == [f"repository:{REPO}:pull"]
        assert query.get("service") == ([service.replace("{url}", proxy.url)] if service else None)


def test_a_challenge_needs_only_a_realm() -> None:
    assert parse_challenge('Bearer realm="https://r/token"') == ("https://r/token", "", "")
    assert parse_challenge('Bearer realm="https://r/token",service="s",scope=""') == ("https://r/token", "s", "")
    assert parse_challenge('Bearer service="s",scope="repository:a:pull"') is None
    assert parse_challenge('Bearer realm="",service="s"') is None
