"""Credentials the config names for a host (``registries: {HOST: ...}``): an OCI
registry's, or a private http(s) mirror's.

The config holds the NAMES of environment variables, never the secrets: they are read
here, when a request needs them, and go into an ``Authorization`` header and nowhere
else (no message, exception or ``repr`` holds one). libcurl sends a header set this way
only to the host and port it was set for: a mirror's redirect to a CDN does not carry it.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from ..config.tags import RegistryAuth, host_and_port
from ..errors import SourceError

__all__ = ["DEFAULT_PORTS", "TOKEN", "auth_for", "authorization", "basic", "endpoint", "from_env"]

#: What a token (or a token from the environment) may hold: visible ASCII, as a header value.
TOKEN = re.compile(r"[\x21-\x7e]{1,65536}")


#: The port a URL without one is sent to, by scheme.
DEFAULT_PORTS = {"http": 80, "https": 443, "oci": 443, "oci+http": 80}


def endpoint(url: str) -> tuple[str | None, int | None]:
    """``url``'s host and port, the scheme's default port when it names none (None when
    its port is no number)."""
    parts = urlsplit(url)
    try:
        return parts.hostname, parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return parts.hostname, None


def auth_for(url: str, registries: Sequence[RegistryAuth]) -> RegistryAuth | None:
    """The credentials configured for ``url``'s host: by host and port (``ghcr.io:443``
    is ``https://ghcr.io/``'s too), else by the host alone (then for every port of it);
    an IPv6 host with or without its brackets."""
    hostname, port = endpoint(url)
    if port is None:
        return None
    found = [(r, *host_and_port(r.host)) for r in registries]
    same = [(r, p) for r, host, p in found if host == hostname and p in (None, port)]
    same.sort(key=lambda rp: rp[1] is None)  # one naming the port first
    return same[0][0] if same else None


def from_env(url: str, auth: RegistryAuth, name: str, field: str, *, token: bool = True) -> str:
    """The value of the environment variable ``name`` (``registries.<host>.<field>``);
    SourceError naming ``url`` and the variable, never the value, when it is unset or
    could not go into a header."""
    value = os.environ.get(name, "")
    if not value:
        raise SourceError(url, f"environment variable {name} (registries.{auth.host}.{field}) is not set")
    if token and not TOKEN.fullmatch(value):
        raise SourceError(url, f"environment variable {name} does not hold a usable token")
    if "\n" in value or "\r" in value:
        raise SourceError(url, f"environment variable {name} holds a line break")
    return value


def basic(url: str, auth: RegistryAuth) -> str | None:
    """``Authorization: Basic ...`` of the user name and password ``auth`` names, or
    None when it names none."""
    if not (auth.username_env and auth.password_env):
        return None
    user = from_env(url, auth, auth.username_env, "username_env", token=False)
    password = from_env(url, auth, auth.password_env, "password_env", token=False)
    return "Authorization: Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def authorization(url: str, auth: RegistryAuth) -> str:
    """The ``Authorization`` header a private http(s) mirror is sent: its token as a
    bearer (``token_env``), else Basic (``username_env``, ``password_env``)."""
    if auth.token_env:
        return f"Authorization: Bearer {from_env(url, auth, auth.token_env, 'token_env')}"
    header = basic(url, auth)
    if header is None:  # (the config refuses such an entry)
        raise SourceError(url, f"registries.{auth.host} names no credentials")
    return header
