"""RegistrySession's edges that test_oci.py and test_oci_quirks.py leave open (found by
mutating ingest/oci_auth.py): whose token is reused for whom, how long a token lives
when its service says little, realms with a query, scopes that are blank, Basic
challenges in other spellings, and the first request of a run learning the auth alone.
Scripted registries with a token service from tests/registry.py, on 127.0.0.1."""

from __future__ import annotations

import base64
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cachedex.config import Limits
from cachedex.config.tags import RegistryAuth
from cachedex.errors import CachedexError, SourceError
from cachedex.ingest import oci_auth
from cachedex.ingest.http import HttpClient
from cachedex.ingest.oci import OciSource
from cachedex.ingest.oci_auth import RegistrySession, parse_challenge
from tests.helpers import fixture_index
from tests.registry import FakeRegistry, Route, Seen, expected_tag, query_of, spec_manifest

LIMITS = Limits()
REPO = "cache/spack"
LAYER = b'{"database": {"version": "7", "installs": {}}}'


def _source(fake: FakeRegistry, client: HttpClient, auth: RegistryAuth | None = None) -> OciSource:
    return OciSource(f"oci+http://{fake.host}/{REPO}", client, auth)


def _specs(index: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(h, r["spec"]["name"], r["spec"]["version"]) for h, r in index["database"]["installs"].items()]


def _fill_specs(fake: FakeRegistry, index: dict[str, Any]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for dag_hash, name, version in _specs(index):
        sizes[dag_hash] = 1000 + len(sizes)
        fake.add_manifest(expected_tag(name, version, dag_hash), spec_manifest([7, sizes[dag_hash]]))
    return sizes


def _sizes(source: OciSource, index: dict[str, Any]) -> dict[str, int | CachedexError]:
    requests = source.size_requests(_specs(index), [])
    return dict(source.read_many(requests, OciSource.decode_size, limit=LIMITS.manifest_bytes))


# -- whose token is reused ---------------------------------------------------------------------------


@pytest.fixture
def basic_env(monkeypatch: pytest.MonkeyPatch) -> tuple[RegistryAuth, str]:
    """Credentials in the environment: (their RegistryAuth, their Basic value)."""
    monkeypatch.setenv("CACHEDEX_T_HUNT_USER", "hunt-user")
    monkeypatch.setenv("CACHEDEX_T_HUNT_PASS", "hunt-pass-7f3a")
    auth = RegistryAuth("127.0.0.1", username_env="CACHEDEX_T_HUNT_USER", password_env="CACHEDEX_T_HUNT_PASS")
    return auth, base64.b64encode(b"hunt-user:hunt-pass-7f3a").decode()


def test_a_token_got_with_credentials_is_not_lent_to_an_anonymous_source(
    client: HttpClient, basic_env: tuple[RegistryAuth, str]
) -> None:
    """Tokens are cached per credentials: an unauthenticated source of the same client
    asks the token service itself (and here is refused), never reusing the other's."""
    auth, basic = basic_env
    with FakeRegistry(basic=basic) as fake:
        fake.add_index(LAYER)
        assert _source(fake, client, auth).read_index(None, limits=LIMITS).data == LAYER
        with pytest.raises(SourceError, match="cannot get a token"):
            _source(fake, client).read_index(None, limits=LIMITS)
        assert len(fake.token_requests()) == 2


def test_a_source_with_credentials_keeps_its_own_token_when_an_anonymous_one_exists(
    client: HttpClient, basic_env: tuple[RegistryAuth, str], mirrors: Path
) -> None:
    """After an anonymous source of the same client got a token, a source with
    credentials gets and goes on sending its own (the token its credentials were given)."""
    auth, basic = basic_env
    index: dict[str, Any] = fixture_index(mirrors)
    with FakeRegistry() as fake:
        fake.add_index(LAYER)
        sizes = _fill_specs(fake, index)
        _source(fake, client).read_index(None, limits=LIMITS)
        source = _source(fake, client, auth)
        source.read_index(None, limits=LIMITS)
        anonymous, with_credentials = fake.token_requests()
        assert "authorization" not in anonymous.headers
        assert with_credentials.headers["authorization"] == f"Basic {basic}"
        before = len(fake.seen)
        assert _sizes(source, index) == sizes
        sent = {s.headers.get("authorization") for s in fake.seen[before:]}
        assert sent == {f"Bearer {fake.issued[1]}"}


def test_a_token_of_one_registry_never_goes_to_another(client: HttpClient) -> None:
    """Tokens are cached per registry: a second registry on the same client gets its own
    and never sees the first's."""
    with FakeRegistry() as first, FakeRegistry() as second:
        first.add_index(LAYER)
        second.add_index(LAYER)
        assert _source(first, client).read_index(None, limits=LIMITS).data == LAYER
        assert _source(second, client).read_index(None, limits=LIMITS).data == LAYER
        assert len(second.token_requests()) == 1
        assert not any(s.headers.get("authorization") == f"Bearer {first.issued[0]}" for s in second.seen)


# -- how long a token lives -----------------------------------------------------------------------------


@pytest.mark.parametrize("expires_in", [0, True, -5, "3600"])
def test_an_unusable_expires_in_is_the_default_lifetime(client: HttpClient, expires_in: object) -> None:
    """``expires_in`` 0, negative, a boolean or a string means the default 60 s: the
    token is reused, not fetched again before every batch."""
    with FakeRegistry(token_answer=lambda n: {"token": f"t{n}-x", "expires_in": expires_in}) as fake:
        fake.valid.update({"t0-x", "t1-x", "t2-x"})
        fake.add_index(LAYER)
        source = _source(fake, client)
        source.read_index(None, limits=LIMITS)
        source.read_index(None, limits=LIMITS)
        assert len(fake.token_requests()) == 1


def test_a_token_without_expires_in_outlives_a_few_seconds(client: HttpClient) -> None:
    """No ``expires_in``: 60 s (the distribution spec's default), so still good 1.2 s later."""
    with FakeRegistry() as fake:
        fake.add_index(LAYER)
        source = _source(fake, client)
        source.read_index(None, limits=LIMITS)
        time.sleep(1.2)
        source.read_index(None, limits=LIMITS)
        assert len(fake.token_requests()) == 1


def test_a_cached_token_is_not_shown_by_repr(client: HttpClient) -> None:
    """A cached token's repr hides it (a cache dumped in a log or a traceback)."""
    with FakeRegistry() as fake:
        fake.add_index(LAYER)
        source = _source(fake, client)
        source.read_index(None, limits=LIMITS)
        shown = repr(oci_auth._TOKENS[client])
        assert "<token, hidden>" in shown and fake.issued[0] not in shown


# -- challenges ----------------------------------------------------------------------------------------


def test_a_blank_scope_gets_the_repository_pull_scope(client: HttpClient) -> None:
    """A scope of blanks is no scope: the token is asked for ``repository:<repo>:pull``."""
    with FakeRegistry() as fake:
        fake.challenge = f'Bearer realm="{fake.url}/token",service="fake",scope="   "'
        fake.add_index(LAYER)
        assert _source(fake, client).read_index(None, limits=LIMITS).data == LAYER
        (asked,) = fake.token_requests()
        assert query_of(asked)["scope"] == [f"repository:{REPO}:pull"]


def test_a_realm_with_a_query_keeps_it(client: HttpClient) -> None:
    """A realm that has a query gets the token parameters after ``&``, not a second ``?``."""
    with FakeRegistry() as fake:
        fake.challenge = f'Bearer realm="{fake.url}/token?account=ci",service="fake",scope="repository:{REPO}:pull"'
        fake.add_index(LAYER)
        assert _source(fake, client).read_index(None, limits=LIMITS).data == LAYER
        (asked,) = fake.token_requests()
        assert query_of(asked) == {
            "account": ["ci"],
            "service": ["fake"],
            "scope": [f"repository:{REPO}:pull"],
            "client_id": ["cachedex"],
        }


def test_a_challenge_without_a_service_sends_no_service_parameter(client: HttpClient) -> None:
    """No service in the challenge: the token request names none (not an empty ``service=``)."""
    with FakeRegistry() as fake:
        fake.challenge = f'Bearer realm="{fake.url}/token",scope="repository:{REPO}:pull"'
        fake.add_index(LAYER)
        assert _source(fake, client).read_index(None, limits=LIMITS).data == LAYER
        (asked,) = fake.token_requests()
        assert "service" not in asked.path
        assert query_of(asked) == {"scope": [f"repository:{REPO}:pull"], "client_id": ["cachedex"]}


def test_a_realm_without_a_host_is_refused(client: HttpClient) -> None:
    """``http:///token`` names no host: refused as no http(s) URL, nothing is sent."""
    session = RegistrySession(client, "http://registry.example", None, plain_http=True)
    url = "http://registry.example/v2/x/manifests/index.spack"
    with pytest.raises(SourceError, match="is not an http") as info:
        session.refused(url, 'Bearer realm="http:///token",service="s",scope="repository:x:pull"', 0)
    assert str(info.value).startswith(url)


@pytest.mark.parametrize("challenge", ["Basic", 'basic realm="r"', 'BASIC realm="r"'])
def test_a_basic_challenge_in_any_spelling_asks_for_credentials(client: HttpClient, challenge: str) -> None:
    """``Basic`` alone (no realm) or in any case is a Basic challenge: the message says to
    name a user name and password."""
    with FakeRegistry() as fake:
        fake.challenge = challenge
        fake.add_index(LAYER)
        with pytest.raises(SourceError, match="asks for a user name and password: 'registries' names them"):
            _source(fake, client).read_index(None, limits=LIMITS)


class _BasicOnly(FakeRegistry):
    """An open registry behind Basic authentication: ``WWW-Authenticate: Basic`` to
    any request without the Basic value ``basic``."""

    def __init__(self, basic: str) -> None:
        self.expected = f"Basic {basic}"
        super().__init__(token_required=False)

    def respond(self, seen: Seen) -> Route:
        if seen.headers.get("authorization") != self.expected:
            return 401, {"WWW-Authenticate": "Basic"}, b""
        return super().respond(seen)


def test_a_bare_basic_challenge_is_answered_with_the_credentials(
    client: HttpClient, basic_env: tuple[RegistryAuth, str]
) -> None:
    """``WWW-Authenticate: Basic`` (no parameters) gets the configured user and password."""
    auth, basic = basic_env
    with _BasicOnly(basic) as fake:
        fake.add_index(LAYER)
        assert _source(fake, client, auth).read_index(None, limits=LIMITS).data == LAYER


def test_duplicate_challenge_parameters_keep_the_first() -> None:
    """A parameter named twice in one challenge keeps its first value."""
    assert parse_challenge('Bearer realm="https://a/t",realm="https://b/t",scope="s"') == ("https://a/t", "", "s")


# -- what a session shows and gives ---------------------------------------------------------------------


def test_auth_headers_and_repr_after_a_token(client: HttpClient) -> None:
    """auth_headers gives the token being sent (none before a 401); repr names the scope, not the token."""
    with FakeRegistry() as fake:
        fake.add_index(LAYER)
        source = _source(fake, client)
        assert source.auth_headers(source.join("blobs/x")) == []
        assert repr(source._session) == f"RegistrySession('http://{fake.host}', scope=None)"
        source.read_index(None, limits=LIMITS)
        assert source.auth_headers(source.join("blobs/x")) == [f"Authorization: Bearer {fake.issued[0]}"]
        assert repr(source._session) == f"RegistrySession('http://{fake.host}', scope='repository:{REPO}:pull')"


# -- the first request of a run learns the auth alone -------------------------------------------------


class _Slow(FakeRegistry):
    """A token registry whose answers take a moment, counting requests in flight at once."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0
        self._count = threading.Lock()
        super().__init__()

    def respond(self, seen: Seen) -> Route:
        with self._count:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            time.sleep(0.05)
            return super().respond(seen)
        finally:
            with self._count:
                self.in_flight -= 1


def test_read_many_on_a_fresh_session_sends_one_request_first_then_the_rest_at_once(
    client: HttpClient, mirrors: Path
) -> None:
    """A fresh session learns the registry's auth on one request (one 401, one token),
    then sends the rest concurrently."""
    index: dict[str, Any] = fixture_index(mirrors)
    with _Slow() as fake:
        sizes = _fill_specs(fake, index)
        assert _sizes(_source(fake, client), index) == sizes
        assert len([s for s in fake.seen if "authorization" not in s.headers and s.path.startswith("/v2")]) == 1
        assert len(fake.token_requests()) == 1
        assert fake.most > 1


def test_refused_basic_credentials_are_not_sent_twice_in_a_row(
    client: HttpClient, basic_env: tuple[RegistryAuth, str]
) -> None:
    """Credentials the registry refused are not sent again unchanged: the next read of
    the same source fails on its first request, naming the config entry."""
    auth, _basic = basic_env
    with _BasicOnly("d3Jvbmc6d3Jvbmc=") as fake:
        fake.add_index(LAYER)
        source = _source(fake, client, auth)
        with pytest.raises(SourceError, match="refused the user name and password in registries.127.0.0.1"):
            source.read_index(None, limits=LIMITS)
        before = len(fake.seen)
        with pytest.raises(SourceError, match="refused the user name and password in registries.127.0.0.1"):
            source.read_index(None, limits=LIMITS)
        assert len(fake.seen) - before == 1


def test_concurrent_401s_to_one_session_bring_one_token(client: HttpClient) -> None:
    """Requests of several threads refused at once: the first brings a token, the others
    take it (a 401 to an older token does not fetch another)."""
    with _Slow() as fake:
        fake.add_index(LAYER)
        session = _source(fake, client)._session
        url = f"{fake.url}/v2/{REPO}/manifests/index.spack"
        start = threading.Barrier(4)
        statuses: list[int] = []

        def one() -> None:
            start.wait()
            statuses.append(
                session.request(
                    url, headers=["Accept: application/vnd.oci.image.manifest.v1+json"], limit=10_000
                ).status
            )

        threads = [threading.Thread(target=one) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert statuses == [200] * 4
        assert len(fake.token_requests()) == 1
