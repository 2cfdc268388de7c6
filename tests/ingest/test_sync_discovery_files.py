"""tags_from as a sync reads it, found unguarded by a mutation hunt: a local discovery
file naming mirrors over HTTP, tags named twice, and the file's size limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.config import Config, parse_config
from cachedex.errors import ConfigError
from cachedex.ingest.sync import sync
from tests.helpers import fixture_index, write_v2_mirror


def test_a_local_discovery_file_naming_http_mirrors_syncs_them(http_server, mirrors: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """No configured tag is remote, so the HTTP client is made for the discovered ones:
    without it their sync failed."""
    write_v2_mirror(http_server.state.root / "develop", fixture_index(mirrors))
    index_url = f"{http_server.url}/develop/build_cache/index.json"
    (tmp_path / "d.json").write_text(json.dumps({"develop": [{"label": "root", "url": index_url}]}))
    config = parse_config(
        {"catalog": "c.sqlite", "tags_from": str(tmp_path / "d.json"), "http": {"retries": 1, "backoff": 0.01}},
        base=tmp_path,
    )
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        assert outcome.tag == "develop" and outcome.mirrors[0].url == f"{http_server.url}/develop"
        assert outcome.new_specs == 7


def _discovery(tmp_path: Path, mirror: Path, **extra: object) -> Config:
    """A config whose tags_from (a local file) names ``mirror`` as tag 'develop''s root."""
    index_url = (mirror / "build_cache/index.json").as_uri()
    (tmp_path / "d.json").write_text(json.dumps({"develop": [{"label": "root", "url": index_url}]}))
    return parse_config({"catalog": "c.sqlite", "tags_from": str(tmp_path / "d.json"), **extra}, base=tmp_path)


def test_a_tag_named_twice_on_the_command_line_is_synced_once(mirrors: Path, tmp_path: Path) -> None:
    write_v2_mirror(tmp_path / "m", fixture_index(mirrors))
    config = _discovery(tmp_path, tmp_path / "m")
    with Catalog(config.catalog) as catalog:
        outcomes = sync(config, catalog, ["develop", "develop"])
    assert [(o.tag, o.ok) for o in outcomes] == [("develop", True)]


def test_a_discovered_tag_named_as_a_configured_one_is_refused(mirrors: Path, tmp_path: Path) -> None:
    """Two tags of one name would be synced one over the other into the same tag."""
    write_v2_mirror(tmp_path / "m", fixture_index(mirrors))
    config = _discovery(tmp_path, tmp_path / "m", tags=[{"name": "develop", "url": str(mirrors / "legacy_yaml")}])
    with pytest.raises(ConfigError) as info, Catalog(config.catalog) as catalog:
        sync(config, catalog)
    assert any("develop" in problem for problem in info.value.problems), info.value.problems


def test_a_discovery_file_of_exactly_the_size_limit_is_read(mirrors: Path, tmp_path: Path) -> None:
    write_v2_mirror(tmp_path / "m", fixture_index(mirrors))
    config = _discovery(tmp_path, tmp_path / "m", limits={"discovery_bytes": 1000})
    text = (tmp_path / "d.json").read_text()
    (tmp_path / "d.json").write_text(text + " " * (1000 - len(text)))  # (JSON allows trailing space)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok and outcome.tag == "develop", outcome.error
