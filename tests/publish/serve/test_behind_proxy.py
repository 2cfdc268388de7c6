"""``cachedex serve`` behind a real reverse proxy (Debian's nginx on 127.0.0.1) under a
prefix it strips, set up as the README says, and as proxies often are: passing the
client's ``Host`` on (Caddy does by default)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import Demo
from tests.servers import Nginx

PREFIX = "/cache/"


@pytest.fixture(scope="module")
def proxied(uvicorn_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    extra = f"""
        client_max_body_size 64m;
        proxy_read_timeout 90s;
        location {PREFIX} {{
            proxy_pass {uvicorn_server}/;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
    """
    with Nginx(tmp_path_factory.mktemp("empty"), extra=extra) as server:
        yield server.url + PREFIX


class _Keep(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # (answered as it is: the test reads its Location)


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    opener = urllib.request.build_opener(_Keep)
    try:
        with opener.open(url, timeout=20) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.mark.parametrize(
    ("path", "lands"),
    [
        ("tags/develop", "tags/develop/"),
        ("tags/develop?stack=e4s", "tags/develop/?stack=e4s"),
        ("tags/develop/packages/zlib", "tags/develop/packages/zlib/"),
        ("api/tags/", "api/tags"),
    ],
)
def test_a_url_without_its_slash_is_redirected_inside_the_prefix(proxied: str, path: str, lands: str) -> None:
    """Starlette's redirect was absolute, from Host: http://127.0.0.1/tags/develop/, out
    of the prefix (and off the proxy's port)."""
    status, headers, _ = _get(proxied + path)
    assert status == 307
    target = urllib.parse.urljoin(proxied + path, headers["location"])
    assert target == proxied + lands
    assert _get(target)[0] == 200


def test_the_openapi_document_leads_clients_to_the_prefix(proxied: str) -> None:
    """Without ``servers``, clients call the host's /api/tags: a 404 under a prefix."""
    document_url = proxied + "api/openapi.json"
    document = json.loads(_get(document_url)[2])
    base = urllib.parse.urljoin(document_url, document["servers"][0]["url"])
    assert base == proxied
    status, _, body = _get(base.rstrip("/") + "/api/tags")
    assert status == 200 and any(tag["name"] == "develop" for tag in json.loads(body))


def test_a_lockfile_over_nginx_s_default_limit_passes_as_the_readme_says(proxied: str, demo_run: Demo) -> None:
    lock = Path(demo_run.folder / "spack.lock").read_bytes()
    padded = lock.rstrip() + b" " * (1_200_000 - len(lock)) + b"\n"  # over nginx's 1 MiB default
    request = urllib.request.Request(proxied + "api/reuse?tag=develop", data=padded, method="POST")
    with urllib.request.urlopen(request, timeout=60) as answer:
        assert answer.status == 200 and json.loads(answer.read())["specs"] > 0
