"""Which credentials a URL is sent: the host and port a ``registries`` key names."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.config import parse_config
from cachedex.config.tags import RegistryAuth
from cachedex.errors import ConfigError
from cachedex.ingest.credentials import auth_for


@pytest.mark.parametrize(
    ("url", "hosts", "chosen"),
    [
        ("https://ghcr.io/spack/x", ["ghcr.io"], "ghcr.io"),
        ("oci://GHCR.io/spack/x", ["ghcr.io"], "ghcr.io"),  # (host names are not case-sensitive)
        ("http://127.0.0.1/m", ["127.0.0.1:80"], "127.0.0.1:80"),  # the scheme's default port, written
        ("https://ghcr.io/x", ["ghcr.io:443"], "ghcr.io:443"),
        ("https://ghcr.io:8443/x", ["ghcr.io:443"], None),  # another port: not this one's
        ("http://[::1]:8758/m", ["[::1]"], "[::1]"),  # IPv6, with or without its brackets
        ("http://[::1]:8758/m", ["::1"], "::1"),
        ("http://[::1]:8758/m", ["[::1]:8758"], "[::1]:8758"),
        ("http://h:81/m", ["h", "h:81"], "h:81"),  # the one naming the port first
        ("http://other/m", ["h"], None),
    ],
)
def test_a_url_is_sent_the_credentials_of_its_host_and_port(url: str, hosts: list[str], chosen: str | None) -> None:
    registries = [RegistryAuth(host, token_env="T") for host in hosts]
    found = auth_for(url, registries)
    assert (found.host if found is not None else None) == chosen


@pytest.mark.parametrize("host", ["h:port", "h:99999", "user@h", "h/x", "[::1"])
def test_a_registries_key_that_is_no_host_is_a_config_problem(host: str) -> None:
    document = {"tags": [{"name": "t", "url": "/m"}], "registries": {host: {"token_env": "T"}}}
    with pytest.raises(ConfigError, match="expected a host name"):
        parse_config(document, base=Path("/"))
