"""Which credentials a URL is sent: the host and port a ``registries`` key names."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.config import parse_config
from cachedex.config.tags import RegistryAuth
from cachedex.errors import ConfigError, SourceError
from cachedex.ingest.credentials import auth_for, authorization


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


@pytest.mark.parametrize(
    "host", ["h:port", "h:99999", "user@h", "h/x", "[::1", "h:", "h?", "h#", "h?x", "fe80::1#", "h:0"]
)
def test_a_registries_key_that_is_no_host_is_a_config_problem(host: str) -> None:
    document = {"tags": [{"name": "t", "url": "/m"}], "registries": {host: {"token_env": "T"}}}
    with pytest.raises(ConfigError, match="expected a host name"):
        parse_config(document, base=Path("/"))


@pytest.mark.parametrize(
    ("user", "password", "token", "said"),
    [
        ("me", "pa55", None, None),
        ("me", "", None, "environment variable P (registries.h.password_env) is not set"),
        ("me", "pa\nss", None, "environment variable P holds a line break"),
        ("m\re", "pa55", None, "environment variable U holds a line break"),
        (None, None, "t0k-en.1", None),
        (None, None, "t0k\r\nX-Evil: 1", "environment variable T does not hold a usable token"),
    ],
)
def test_credentials_from_the_environment_go_into_a_header_or_are_said(
    monkeypatch: pytest.MonkeyPatch, user: str | None, password: str | None, token: str | None, said: str | None
) -> None:
    """A value that would split the header, or end it, is said by the variable's name,
    never its value (a password is base64 in Basic, yet a line break in it is a paste's slip)."""
    for name, value in (("U", user), ("P", password), ("T", token)):
        monkeypatch.setenv(name, value or "")
    auth = (
        RegistryAuth("h", token_env="T") if token is not None else RegistryAuth("h", username_env="U", password_env="P")
    )
    if said is None:
        header = authorization("http://h/m", auth)
        assert header == ("Authorization: Bearer t0k-en.1" if token else "Authorization: Basic bWU6cGE1NQ==")
        return
    with pytest.raises(SourceError) as caught:
        authorization("http://h/m", auth)
    assert str(caught.value) == f"http://h/m: {said}"
    assert all(value is None or value not in str(caught.value) for value in (password, token) if value)
