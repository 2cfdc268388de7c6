"""A tag read from an OCI registry by ``sync``: a real docker-registry on 127.0.0.1
holding a Spack OCI build cache and a stack of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.config import parse_config
from cachedex.ingest.outcomes import TagOutcome
from cachedex.ingest.sync import sync
from tests.helpers import fixture_index, listed_specs, spec_row
from tests.registry import Registry, RegistryPusher, push_spack_cache

FIRST = "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    with Registry() as running:
        yield running


def test_an_oci_tag_syncs_with_sizes_and_an_unchanged_one_costs_a_head(
    registry: Registry, mirrors: Path, tmp_path: Path
) -> None:
    index = fixture_index(mirrors)
    root = push_spack_cache(registry.url, "spack/cache", index, seed=1)
    stack_index = fixture_index(mirrors)
    for dag_hash, record in stack_index["database"]["installs"].items():
        record["in_buildcache"] = record["in_buildcache"] and dag_hash == FIRST
    push_spack_cache(registry.url, "spack/cache/e4s", stack_index, seed=1)
    url = f"oci+http://{registry.host}/spack/cache"
    config = parse_config(
        {"catalog": "c.sqlite", "tags": [{"name": "t", "url": url, "stacks": ["e4s"]}]}, base=tmp_path
    )
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        specs = {s.hash: s for s in listed_specs(catalog, "t")}
        assert {h: s.size for h, s in specs.items()} == root.sizes
        assert specs[FIRST].stacks == ("e4s", "root")
        assert {m.stack: m.layout for m in catalog.mirrors("t")} == {"root": 100, "e4s": 100}
        served = len(registry.requests())
        (again,) = sync(config, catalog)
        assert again.ok and not again.changed
    new = registry.requests()[served:]
    assert [(method, path) for method, path, _ in new] == [
        ("HEAD", "/v2/spack/cache/manifests/index.spack"),
        ("HEAD", "/v2/spack/cache/e4s/manifests/index.spack"),
    ]


def test_a_spec_only_a_stack_lists_is_sized_from_the_stack_s_repository(
    registry: Registry, mirrors: Path, tmp_path: Path
) -> None:
    """The root's sizes are read with its listing; a spec the root does not list is
    sized by its stack's own image manifest."""
    index = fixture_index(mirrors)
    index["database"]["installs"][FIRST]["in_buildcache"] = False  # type: ignore[index]
    push_spack_cache(registry.url, "spack/only/root", index, seed=2)
    stack_index = fixture_index(mirrors)
    for dag_hash, record in stack_index["database"]["installs"].items():  # type: ignore[attr-defined]
        record["in_buildcache"] = record["in_buildcache"] and dag_hash == FIRST
    stack = push_spack_cache(registry.url, "spack/only/root/e4s", stack_index, seed=2)
    url = f"oci+http://{registry.host}/spack/only/root"
    config = parse_config(
        {"catalog": "c.sqlite", "tags": [{"name": "t", "url": url, "stacks": ["e4s"]}]}, base=tmp_path
    )
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok and outcome.warnings == (), outcome.error
        assert catalog.listed_hashes("t", "e4s") == {FIRST} and FIRST not in catalog.listed_hashes("t")
        row = spec_row(catalog, FIRST)
    assert row is not None and row["size"] == stack.sizes[FIRST]


def _sync_alone(registry: Registry, repository: str, tmp_path: Path) -> TagOutcome:
    """The sync of one tag, the OCI repository ``repository`` of ``registry``."""
    url = f"oci+http://{registry.host}/{repository}"
    config = parse_config({"catalog": "c.sqlite", "tags": [{"name": "t", "url": url}]}, base=tmp_path)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    return outcome


def test_a_missing_oci_index_is_one_line(registry: Registry, tmp_path: Path) -> None:
    outcome = _sync_alone(registry, "nothing/here", tmp_path)
    assert outcome.error is not None and "\n" not in outcome.error
    assert outcome.error.startswith(f"http://{registry.host}/v2/nothing/here/manifests/index.spack")
    assert "no index.spack in this repository" in outcome.error


def test_an_image_index_at_index_spack_is_named_as_one(registry: Registry, mirrors: Path, tmp_path: Path) -> None:
    """A manifest list (several platforms' images) where Spack's index image belongs:
    docker-registry answers 404 to an Accept without image indexes, which read as "no
    index.spack"; it is refused as what it is."""
    pushed = push_spack_cache(registry.url, "listed/cache", fixture_index(mirrors), seed=2)
    with RegistryPusher(registry.url, "listed/cache") as pusher:
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [
                {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": pushed.index_digest, "size": 300}
            ],
        }
        pusher.put_manifest("index.spack", manifest)
    outcome = _sync_alone(registry, "listed/cache", tmp_path)
    assert outcome.error is not None and "no index.spack" not in outcome.error
    assert outcome.error.startswith(f"http://{registry.host}/v2/listed/cache/manifests/index.spack: an image index")
