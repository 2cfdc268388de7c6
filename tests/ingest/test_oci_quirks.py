"""What real registries do that the plain docker-registry of test_oci.py does not: Basic
authentication (Debian's docker-registry itself, with htpasswd, as AWS ECR asks for it),
tokens that end in the middle of a long run of requests, and challenges with several
scopes (scripted registries, from tests/registry.py)."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import random
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.config import HttpOptions, Limits, parse_config
from cachedex.errors import CachedexError, SourceError
from cachedex.ingest.http import HttpClient
from cachedex.ingest.oci import OciSource
from cachedex.ingest.sync import sync
from tests.helpers import fixture_index, listed_specs
from tests.registry import FakeRegistry, Registry, Route, Seen, expected_tag, push_spack_cache, query_of, spec_manifest

LIMITS = Limits()
REPO = "cache/spack"
USER, PASSWORD = "ci-reader", "Pa55-" + secrets.token_hex(8)


# -- a registry that asks for Basic credentials -------------------------------------------------


def _bcrypt(password: str) -> str:
    """``password`` hashed with bcrypt (the only hash docker-registry's htpasswd takes), by
    the system's libcrypt (libxcrypt)."""
    library = ctypes.util.find_library("crypt")
    if library is None:
        pytest.skip("no libcrypt to hash an htpasswd entry")
    crypt = ctypes.CDLL(library).crypt
    crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    crypt.restype = ctypes.c_char_p
    alphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    salt = "$2b$05$" + "".join(random.choice(alphabet) for _ in range(22))
    hashed = crypt(password.encode(), salt.encode())
    assert hashed and hashed.startswith(b"$2b$05$"), hashed
    return str(hashed.decode())


@pytest.fixture(scope="module")
def basic_registry(tmp_path_factory: pytest.TempPathFactory, mirrors: Path) -> Iterator[tuple[str, dict[str, int]]]:
    """(host, sizes) of a Spack cache at ``cache/spack`` of a registry wanting Basic credentials."""
    storage = tmp_path_factory.mktemp("storage")
    with Registry(storage) as open_registry:  # pushed without auth, then served with it
        sizes = push_spack_cache(open_registry.url, REPO, fixture_index(mirrors)).sizes
    with Registry(storage, htpasswd=f"{USER}:{_bcrypt(PASSWORD)}") as registry:
        yield registry.host, sizes


def _sync(
    host: str, tmp_path: Path, password: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[str | None, dict[str, int | None]]:
    """(the error, the sizes) of a sync of ``host``'s cache with the user's credentials."""
    monkeypatch.setenv("CACHEDEX_T_BASIC_USER", USER)
    monkeypatch.setenv("CACHEDEX_T_BASIC_PASS", password)
    document = {
        "catalog": "c.sqlite",
        "tags": [{"name": "t", "url": f"oci+http://{host}/{REPO}"}],
        "registries": {host: {"username_env": "CACHEDEX_T_BASIC_USER", "password_env": "CACHEDEX_T_BASIC_PASS"}},
    }
    config = parse_config(document, base=tmp_path)
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        return outcome.error, {s.hash: s.size for s in listed_specs(catalog, "t")}


def test_a_registry_asking_for_basic_credentials_is_sent_the_configured_ones(
    basic_registry: tuple[str, dict[str, int]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, sizes = basic_registry
    error, synced = _sync(host, tmp_path / "good", PASSWORD, monkeypatch)
    assert error is None
    assert synced == sizes
    # A wrong password: one line naming the config entry, never the password or its hash.
    error, _ = _sync(host, tmp_path / "bad", PASSWORD + "-old", monkeypatch)
    assert error is not None and "\n" not in error
    assert f"refused the user name and password in registries.{host}" in error
    assert PASSWORD not in error and USER not in error


def test_a_basic_challenge_without_credentials_says_to_name_them(
    basic_registry: tuple[str, dict[str, int]],
) -> None:
    host, _ = basic_registry
    with HttpClient(HttpOptions(retries=0, timeout=5)) as client:
        source = OciSource(f"oci+http://{host}/{REPO}", client)
        with pytest.raises(SourceError, match="asks for a user name and password: 'registries' names them"):
            source.read_index(None, limits=LIMITS)


# -- a token that ends during a long run of requests -------------------------------------------------


class _ShortLivedTokens(FakeRegistry):
    """A registry whose tokens end after ``uses`` requests each (as a token that lives
    minutes ends in the middle of a long sync, whatever its holder is doing)."""

    def __init__(self, uses: int) -> None:
        self.uses = uses
        self.used: dict[str, int] = {}
        super().__init__(token_answer=lambda n: {"token": f"t{n}-{random.getrandbits(32):x}", "expires_in": 3600})

    def respond(self, seen: Seen) -> Route:
        token = seen.headers.get("authorization", "").removeprefix("Bearer ")
        if not seen.path.startswith("/token") and token in self.valid:
            self.used[token] = self.used.get(token, 0) + 1
            if self.used[token] > self.uses:
                self.valid.discard(token)
        return super().respond(seen)

    def _token(self, seen: Seen) -> Route:
        status, headers, data = super()._token(seen)
        self.valid.add(json.loads(data)["token"])  # (the default answer's token is not ours)
        return status, headers, data


def test_a_token_that_ends_again_and_again_during_one_run_of_requests_is_renewed_each_time(
    mirrors: Path,
) -> None:
    index: dict[str, Any] = fixture_index(mirrors)
    specs = [(h, r["spec"]["name"], r["spec"]["version"]) for h, r in index["database"]["installs"].items()]
    # Many spec images, few requests a token: a run of hundreds of manifests outlives several tokens.
    many = [(f"{h[:-4]}{n:04d}", name, version) for n in range(60) for h, name, version in specs]
    with _ShortLivedTokens(uses=25) as fake, HttpClient(HttpOptions(retries=0, timeout=5, concurrency=4)) as client:
        sizes = {}
        for dag_hash, name, version in many:
            sizes[dag_hash] = 1000 + len(sizes)
            fake.add_manifest(expected_tag(name, version, dag_hash), spec_manifest([7, sizes[dag_hash]]))
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        requests = source.size_requests(many, [])
        results: dict[str, int | CachedexError] = dict(
            source.read_many(requests, OciSource.decode_size, limit=LIMITS.manifest_bytes)
        )
        assert results == sizes
        assert len(fake.token_requests()) >= len(many) // 25
        assert len(fake.seen) < 2 * len(many)  # a 401 is sent again once, not in a loop


def test_a_new_token_refused_at_once_still_ends_the_run(mirrors: Path) -> None:
    # The token service issues tokens the registry never takes: no loop of new tokens.
    index: dict[str, Any] = fixture_index(mirrors)
    specs = [(h, r["spec"]["name"], r["spec"]["version"]) for h, r in index["database"]["installs"].items()]
    with (
        FakeRegistry(token_answer=lambda n: {"token": f"useless-{n}"}) as fake,
        HttpClient(HttpOptions(retries=0, timeout=5)) as client,
    ):
        for dag_hash, name, version in specs:
            fake.add_manifest(expected_tag(name, version, dag_hash), spec_manifest([7, 9]))
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        results = dict(source.read_many(source.size_requests(specs, []), OciSource.decode_size, limit=10_000))
        assert len(results) == len(specs)
        assert all(isinstance(v, SourceError) and "HTTP 401" in str(v) for v in results.values())
        assert len(fake.token_requests()) <= 2


# -- challenges ----------------------------------------------------------------------------------------


def test_each_scope_of_a_challenge_is_a_scope_parameter_of_the_token_request(mirrors: Path) -> None:
    """The distribution spec's token.md: the scope query parameter "should be specified
    multiple times if there is more than one scope entry" (space-separated) in the challenge."""
    index = fixture_index(mirrors)
    data = json.dumps(index).encode()
    with FakeRegistry() as fake, HttpClient(HttpOptions(retries=0, timeout=5)) as client:
        fake.challenge = (
            f'Bearer realm="{fake.url}/token",service="fake",'
            'scope="repository:cache/spack:pull repository:cache/base:pull"'
        )
        fake.add_index(data)
        snapshot = OciSource(f"oci+http://{fake.host}/{REPO}", client).read_index(None, limits=LIMITS)
        assert snapshot.data == data
        (asked,) = fake.token_requests()
        assert query_of(asked)["scope"] == ["repository:cache/spack:pull", "repository:cache/base:pull"]
