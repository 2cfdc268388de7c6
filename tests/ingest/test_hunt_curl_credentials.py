"""Which credentials a URL is sent, and which values from the environment may go into
its ``Authorization`` header: default ports by scheme, a port that is no number, the
token's alphabet and length, an entry that names only half of a user and password."""

from __future__ import annotations

import pytest

from cachedex.config.tags import RegistryAuth
from cachedex.errors import SourceError
from cachedex.ingest.credentials import auth_for, authorization


@pytest.mark.parametrize(
    ("url", "hosts", "chosen"),
    [
        ("oci://ghcr.io/spack/x", ["ghcr.io:443"], "ghcr.io:443"),  # oci:// is https
        ("oci://ghcr.io/spack/x", ["ghcr.io:80"], None),
        ("oci+http://h/x", ["h:80"], "h:80"),  # oci+http:// is http
        ("oci+http://h/x", ["h:443"], None),
        ("http://h:99999/x", ["h"], None),  # a port out of range: nobody's
        ("http://h:port/x", ["h"], None),  # a port that is no number
        ("http://h:81/m", ["h:81", "h"], "h:81"),  # the one naming the port first, whatever the order
    ],
)
def test_a_scheme_default_port_and_a_bad_port(url: str, hosts: list[str], chosen: str | None) -> None:
    """oci:// and oci+http:// have https's and http's ports; a URL whose port is no
    port is sent no credentials, not even a host-wide entry's."""
    found = auth_for(url, [RegistryAuth(host, token_env="T") for host in hosts])
    assert (found.host if found is not None else None) == chosen


@pytest.mark.parametrize(
    ("token", "usable"),
    [
        ("a" * 65536, True),  # (a long JWT is fine)
        ("a" * 65537, False),
        ("!~" + "x" * 100, True),  # the ends of visible ASCII
        ("t0k en", False),  # a space is no part of a token
        ("t0k\x7fen", False),  # nor DEL
        ("t0k\ten", False),
    ],
)
def test_a_token_is_visible_ascii_of_bounded_length(monkeypatch: pytest.MonkeyPatch, token: str, usable: bool) -> None:
    """A bearer token is 1 to 65536 visible ASCII characters; anything else is said by the
    variable's name."""
    monkeypatch.setenv("T", token)
    auth = RegistryAuth("h", token_env="T")
    if usable:
        assert authorization("http://h/m", auth) == f"Authorization: Bearer {token}"
        return
    with pytest.raises(SourceError) as caught:
        authorization("http://h/m", auth)
    assert str(caught.value) == "http://h/m: environment variable T does not hold a usable token"


def test_a_password_may_hold_spaces_and_what_is_not_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user name and password are no token: a space or a non-ASCII letter in them goes
    into Basic (base64) as it is."""
    monkeypatch.setenv("U", "me")
    monkeypatch.setenv("P", "pass word é")
    header = authorization("http://h/m", RegistryAuth("h", username_env="U", password_env="P"))
    assert header == "Authorization: Basic bWU6cGFzcyB3b3JkIMOp"


@pytest.mark.parametrize("auth", [RegistryAuth("h", username_env="U"), RegistryAuth("h", password_env="P")])
def test_half_of_a_user_and_password_is_no_credentials(monkeypatch: pytest.MonkeyPatch, auth: RegistryAuth) -> None:
    """An entry naming a user without a password (or the reverse) sends nothing, and says so."""
    monkeypatch.setenv("U", "me")
    monkeypatch.setenv("P", "pa55")
    with pytest.raises(SourceError) as caught:
        authorization("http://h/m", auth)
    assert str(caught.value) == "http://h/m: registries.h names no credentials"
