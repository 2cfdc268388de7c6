"""tags_from: the discovery file's bounds (its size, a FIFO, nesting), the index URLs it
may name, and the HTTP client a command opens for a remote discovery file alone."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest

from cachedex.config import Config, load_config
from cachedex.errors import ConfigError
from cachedex.ingest.discovery import chosen_tags, mirror_url_from_index_url, with_discovered_tags

ROOT_ONLY = {"develop": [{"label": "root", "url": "https://h.example/develop/build_cache/index.json"}]}


def _config(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "cachedex.yaml"
    path.write_text(text)
    return load_config(path)


def _padded(document: object, size: int) -> bytes:
    """``document`` as JSON, padded with spaces to exactly ``size`` bytes."""
    data = json.dumps(document).encode()
    return data + b" " * (size - len(data))


def test_a_discovery_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    limit = 1000  # (the smallest limit a config may set)
    settings = f"tags_from: index.json\nlimits: {{discovery_bytes: {limit}}}\n"
    (tmp_path / "index.json").write_bytes(_padded(ROOT_ONLY, limit))
    assert [tag.name for tag in with_discovered_tags(_config(tmp_path, settings), None).tags] == ["develop"]
    (tmp_path / "index.json").write_bytes(_padded(ROOT_ONLY, limit + 1))
    with pytest.raises(
        ConfigError, match=re.escape(f"cannot read '{tmp_path / 'index.json'}': larger than {limit:,} bytes")
    ):
        with_discovered_tags(_config(tmp_path, settings), None)


def test_a_discovery_file_whose_size_says_nothing_is_held_to_the_limit_by_what_it_reads(tmp_path: Path) -> None:
    """/proc's files say a size of 0: 1,001 bytes of one were read under a limit of 1,000,
    and a longer one was cut short and said to be no valid JSON."""
    proc_file = Path("/proc/self/maps")
    assert proc_file.stat().st_size == 0 and len(proc_file.read_bytes()) > 1001
    settings = f"tags_from: {proc_file}\nlimits: {{discovery_bytes: 1000}}\n"
    with pytest.raises(ConfigError, match=r"cannot read '/proc/\d+/maps': larger than 1,000 bytes"):
        with_discovered_tags(_config(tmp_path, settings), None)


def test_a_discovery_file_that_is_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "index.json"
    os.mkfifo(fifo)
    config = _config(tmp_path, "tags_from: index.json\n")
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            with_discovered_tags(config, None)
        except BaseException as exc:  # (handed to the test's thread)
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # a blocking open: give it a writer, so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO as tags_from waited for a writer")
    assert len(outcome) == 1 and isinstance(outcome[0], ConfigError)
    assert "is not a regular file" in str(outcome[0])


def test_a_discovery_file_given_as_a_file_uri_with_one_slash_is_read(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text(json.dumps(ROOT_ONLY))
    # ("file:/path" is a file URI as well as "file:///path")
    config = _config(tmp_path, f"tags_from: 'file:{tmp_path / 'index.json'}'\n")
    assert [tag.name for tag in with_discovered_tags(config, None).tags] == ["develop"]


def test_relative_index_urls_resolve_beside_the_real_file_a_symlink_names(tmp_path: Path) -> None:
    real = tmp_path / "published"
    real.mkdir()
    (real / "index.json").write_text(json.dumps({"v1": [{"label": "root", "url": "v1/build_cache/index.json"}]}))
    elsewhere = tmp_path / "config"
    elsewhere.mkdir()
    (elsewhere / "index.json").symlink_to(real / "index.json")
    # (a file:// URL: the config resolves a plain path already, a URL is read as given)
    link = (elsewhere / "index.json").as_uri()
    config = with_discovered_tags(_config(elsewhere, f"tags_from: '{link}'\n"), None)
    assert config.tags[0].mirrors[0].url == (real / "v1").as_uri()


def test_a_discovery_file_nested_too_deeply_is_said_not_to_be_json(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError, match=re.escape(f"'tags_from': '{tmp_path / 'index.json'}' is not valid JSON")):
        with_discovered_tags(_config(tmp_path, "tags_from: index.json\n"), None)


def test_an_index_url_in_a_private_s3_bucket_is_refused_with_its_tag_and_label(tmp_path: Path) -> None:
    # Only the public bucket has a known HTTPS address; another bucket cannot be read.
    discovery = {"develop": [{"label": "root", "url": "s3://private-bucket/develop/build_cache/index.json"}]}
    (tmp_path / "index.json").write_text(json.dumps(discovery))
    with pytest.raises(ConfigError) as caught:
        with_discovered_tags(_config(tmp_path, "tags_from: index.json\n"), None)
    assert any("'develop' root: cannot read index URL" in p for p in caught.value.problems), caught.value.problems


def test_an_index_url_with_a_path_after_its_blob_is_not_an_index_url() -> None:
    assert mirror_url_from_index_url("https://h.example/dev/blobs/sha256/ab/ab12") == "https://h.example/dev"
    assert mirror_url_from_index_url("https://h.example/dev/blobs/sha256/ab/ab12/more") is None


def test_an_index_manifest_of_any_layout_version_names_its_mirror() -> None:
    url = "https://h.example/dev/v4/manifests/index/index.manifest.json"
    assert mirror_url_from_index_url(url) == "https://h.example/dev"


def test_a_remote_discovery_file_alone_opens_the_http_client_it_needs(http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # No mirror is configured: only tags_from tells that the command needs HTTP.
    (http_server.state.root / "index.json").write_text(json.dumps(ROOT_ONLY))
    with chosen_tags(_config(tmp_path, f"tags_from: {http_server.url}/index.json\n"), None) as (config, chosen, _):
        assert [tag.name for tag in chosen] == ["develop"]
        assert chosen[0].mirrors[0].url == "https://h.example/develop"


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ([ROOT_ONLY], "expected a JSON object of tag -> list, got list"),
        ({"develop": "root"}, "tag 'develop': expected a list of {label, url}"),
    ],
)
def test_a_discovery_file_of_the_wrong_shape_says_where_in_one_problem(
    tmp_path: Path, document: object, said: str
) -> None:
    (tmp_path / "index.json").write_text(json.dumps(document))
    with pytest.raises(ConfigError) as caught:
        with_discovered_tags(_config(tmp_path, "tags_from: index.json\n"), None)
    assert caught.value.problems == [f"'tags_from': {said}"]
