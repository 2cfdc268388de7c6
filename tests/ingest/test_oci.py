"""OCI build caches: a real registry (Debian's docker-registry, distribution 2.8) holding
a Spack-layout cache pushed over the distribution API, and a scripted registry with a
token service for the bearer flow and for what a real one would not serve."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cachedex.config import HttpOptions, Limits
from cachedex.config.tags import RegistryAuth
from cachedex.errors import CachedexError, ChecksumError, IndexFormatError, SourceError, SourceNotFound
from cachedex.ingest.http import HttpClient
from cachedex.ingest.oci import OciSource, spack_tag
from cachedex.ingest.oci_auth import RegistrySession, parse_challenge
from cachedex.ingest.snapshots import OCI_LAYOUT, PreviousState
from tests.helpers import fixture_index
from tests.registry import (
    FakeRegistry,
    Recorder,
    Registry,
    RegistryPusher,
    expected_tag,
    push_index,
    push_spack_cache,
    query_of,
    spec_manifest,
)

LIMITS = Limits()
REPO = "cache/spack"


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    with Registry() as running:
        yield running


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    with FakeRegistry() as running:
        yield running


@pytest.fixture
def index(mirrors: Path) -> dict[str, Any]:
    return fixture_index(mirrors)


_repositories = iter(range(1_000_000))


def _repository() -> str:
    """A repository of its own for each test (the registry is shared by the module)."""
    return f"cache/test-{next(_repositories)}"


def _specs(index: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(h, r["spec"]["name"], r["spec"]["version"]) for h, r in index["database"]["installs"].items()]


def _one_line(exc: BaseException, url: str) -> str:
    text = str(exc)
    assert "\n" not in text and text.startswith(url), text
    return text


def _served_since(registry: Registry, before: int, repository: str) -> list[tuple[str, str, int]]:
    """What the registry served for ``repository`` after its first ``before`` requests
    (its access log is written as each answer ends: wait until it is quiet)."""
    deadline = time.monotonic() + 3
    seen = registry.requests()[before:]
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = registry.requests()[before:]
        if now == seen and now:
            break
        seen = now
    return [r for r in seen if f"/v2/{repository}/" in r[1]]


# -- a real registry ------------------------------------------------------------------------------


def test_read_index_gives_the_exact_index_bytes_and_its_manifest_digest(
    registry: Registry, client: HttpClient, index: dict[str, Any]
) -> None:
    repository = _repository()
    pushed = push_spack_cache(registry.url, repository, index)
    source = OciSource(f"oci+http://{registry.host}/{repository}", client)
    snapshot = source.read_index(None, limits=LIMITS)
    assert snapshot.layout == OCI_LAYOUT
    assert snapshot.data == pushed.index
    assert snapshot.checksum == pushed.index_digest
    layer = "sha256:" + hashlib.sha256(pushed.index).hexdigest()
    assert snapshot.url == f"http://{registry.host}/v2/{repository}/blobs/{layer}"


def test_an_unchanged_index_costs_one_head_and_a_changed_one_is_read_again(
    registry: Registry, client: HttpClient, index: dict[str, Any]
) -> None:
    repository = _repository()
    pushed = push_spack_cache(registry.url, repository, index)
    source = OciSource(f"oci+http://{registry.host}/{repository}", client)
    first = source.read_index(None, limits=LIMITS)
    before = len(registry.requests())
    again = source.read_index(PreviousState(OCI_LAYOUT, first.checksum), limits=LIMITS)
    assert again.data is None and again.checksum == pushed.index_digest
    assert _served_since(registry, before, repository) == [("HEAD", f"/v2/{repository}/manifests/index.spack", 200)]
    # The same digest remembered for another layout is not "unchanged".
    assert source.read_index(PreviousState(3, first.checksum), limits=LIMITS).data == pushed.index
    del index["database"]["installs"]["sk2gqqz4n5njmvktycnd25wq25jxiqkr"]
    changed = json.dumps(index).encode()
    with RegistryPusher(registry.url, repository) as pusher:
        digest = push_index(pusher, changed)
    after = source.read_index(PreviousState(OCI_LAYOUT, first.checksum), limits=LIMITS)
    assert (after.data, after.checksum) == (changed, digest)


def test_sizes_are_the_last_layer_of_each_spec_image(
    registry: Registry, client: HttpClient, index: dict[str, Any]
) -> None:
    repository = _repository()
    pushed = push_spack_cache(registry.url, repository, index, seed=3)
    source = OciSource(f"oci+http://{registry.host}/{repository}", client)
    refused: list[str] = []
    requests = list(source.size_requests(_specs(index), refused))
    assert refused == [] and len(requests) == 7
    assert {h: p for h, p in requests if h in pushed.tags} == {h: f"manifests/{t}" for h, t in pushed.tags.items()}
    results = dict(source.read_many(requests, OciSource.decode_size, limit=LIMITS.manifest_bytes))
    # libdwarf's image has its dependencies' tarballs first: only the last layer is its own.
    assert {h: v for h, v in results.items() if h in pushed.sizes} == pushed.sizes
    assert len(set(pushed.sizes.values())) == len(pushed.sizes)
    (missing,) = [v for h, v in results.items() if h not in pushed.sizes]  # gcc: external, never pushed
    assert isinstance(missing, SourceNotFound)


def test_the_images_hold_dependencies_first(registry: Registry, client: HttpClient, index: dict[str, Any]) -> None:
    repository = _repository()
    pushed = push_spack_cache(registry.url, repository, index, seed=5)
    source = OciSource(f"oci+http://{registry.host}/{repository}", client)
    data = source.read(f"manifests/{pushed.tags['u5uz3dcch5if4eve4sef67o2rf2lbfgh']}", limit=LIMITS.manifest_bytes)
    sizes = [layer["size"] for layer in json.loads(data)["layers"]]
    # libdwarf links gcc-runtime and libelf (which links gcc-runtime): three layers, its own last
    own = pushed.sizes["u5uz3dcch5if4eve4sef67o2rf2lbfgh"]
    assert sizes == [
        pushed.sizes["izgzpzeljwairalfjm3k6fntbb64nt6n"],
        pushed.sizes["jr3yipyxyjulcdvckwwwjrrumis7glpa"],
        own,
    ]


def test_a_repository_without_index_spack_is_source_not_found(registry: Registry, client: HttpClient) -> None:
    repository = _repository()
    with RegistryPusher(registry.url, repository) as pusher:
        pusher.put_blob(b"x")
    source = OciSource(f"oci+http://{registry.host}/{repository}", client)
    with pytest.raises(SourceNotFound) as info:
        source.read_index(None, limits=LIMITS)
    url = f"http://{registry.host}/v2/{repository}/manifests/index.spack"
    assert str(info.value) == f"{url}: no index.spack in this repository; run 'spack buildcache update-index' on it"


def test_a_gzipped_index_is_unzipped(registry: Registry, client: HttpClient, index: dict[str, Any]) -> None:
    repository = _repository()
    plain = json.dumps(index).encode()
    push_spack_cache(registry.url, repository, index, index_layer=gzip.compress(plain))
    source = OciSource(f"oci+http://{registry.host}/{repository}", client)
    assert source.read_index(None, limits=LIMITS).data == plain


def test_a_gzip_looking_blob_that_is_not_gzip_is_an_index_format_error(
    registry: Registry, client: HttpClient, index: dict[str, Any]
) -> None:
    repository = _repository()
    layer = b"\x1f\x8b" + b"not gzip at all" * 10
    push_spack_cache(registry.url, repository, index, index_layer=layer)
    source = OciSource(f"oci+http://{registry.host}/{repository}", client)
    with pytest.raises(IndexFormatError, match="corrupt gzip data") as info:
        source.read_index(None, limits=LIMITS)
    _one_line(info.value, source.join("blobs/sha256:" + hashlib.sha256(layer).hexdigest()))


def test_list_tags_fetch_and_size_on_a_real_registry(
    registry: Registry, client: HttpClient, index: dict[str, Any]
) -> None:
    repository = _repository()
    pushed = push_spack_cache(registry.url, repository, index)
    source = OciSource(f"oci+http://{registry.host}/{repository}", client)
    assert sorted(source.list_tags()) == sorted([*pushed.tags.values(), "index.spack"])
    assert source.list_dir("manifests") == source.list_tags() and source.list_dir("blobs") is None
    # The registry answers 404 to a manifest GET without the OCI Accept type: fetch sends it.
    tag = pushed.tags["rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"]
    fetched = source.fetch(f"manifests/{tag}", limit=LIMITS.manifest_bytes)
    assert fetched is not None and OciSource.decode_size("u", fetched.data) == pushed.sizes[tag.split("-")[-1][:-6]]
    assert source.size(f"manifests/{tag}") == len(fetched.data)
    assert source.size("manifests/no-such-tag.spack") is None


# -- tags, sizes, URLs ------------------------------------------------------------------------------


H = "abcdefghijklmnopqrstuvwxyz234567"


@pytest.mark.parametrize(
    ("name", "version", "expected"),
    [
        ("zlib", "1.3.1", f"zlib-1.3.1-{H}.spack"),
        ("py-numpy", "git.abc123=2.1", f"py-numpy-git.abc123_2.1-{H}.spack"),
        ("x", "1/2 b+c", f"x-1_2_b_c-{H}.spack"),
        ("naïve", "1", f"na_ve-1-{H}.spack"),
        # 143 characters: the first 64, then the last 64 (21 n's and "-1.0-<hash>.spack")
        ("n" * 100, "1.0", "n" * 64 + "n" * 21 + f"-1.0-{H}.spack"),
        # 128 characters (87 + 41): kept whole; one more: cut
        ("p" * 87, "1", "p" * 87 + f"-1-{H}.spack"),
        ("p" * 87 + "q", "1", "p" * 64 + "p" * 22 + f"q-1-{H}.spack"),
    ],
)
def test_tags_follow_spacks_rule(name: str, version: str, expected: str) -> None:
    assert len(expected) <= 128
    assert spack_tag(name, version, H) == expected
    assert expected_tag(name, version, H) == expected  # the pusher's own copy of the rule


def test_names_and_versions_that_cannot_be_tags_are_refused_one_message_each(client: HttpClient) -> None:
    source = OciSource("oci://ghcr.io/spack/cache", client)
    refused: list[str] = []
    specs = [("a" * 32, "", "1"), ("b" * 32, "zlib", "1\n2"), ("c" * 32, "zlib", "1.3"), ("d" * 32, "z\x7f", "")]
    assert list(source.size_requests(specs, refused)) == [("c" * 32, f"manifests/zlib-1.3-{'c' * 32}.spack")]
    assert len(refused) == 3 and all(m.startswith("oci://ghcr.io/spack/cache: spec ") for m in refused)
    assert "'1\\n2' cannot be part of a tag" in refused[1]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"not json", "not an image manifest"),
        (b"[1, 2]", "not an image manifest"),
        (b'{"mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []}', "an image index"),
        (b'{"schemaVersion": 2, "layers": []}', "lists no layers"),
        (b'{"schemaVersion": 2}', "lists no layers"),
        (b'{"layers": [{"size": -1}]}', "is not a size"),
        (b'{"layers": [{"size": 9007199254740992}]}', "is not a size"),
        (b'{"layers": [{"size": "12"}]}', "not an image manifest"),
        (b'{"layers": [{"size": 1.5}]}', "not an image manifest"),
    ],
)
def test_decode_size_refuses_what_is_not_a_spec_image(data: bytes, problem: str) -> None:
    with pytest.raises(IndexFormatError, match=problem) as info:
        OciSource.decode_size("http://r/v2/x/manifests/t", data)
    _one_line(info.value, "http://r/v2/x/manifests/t")


def test_decode_size_takes_the_last_layer() -> None:
    data = json.dumps(spec_manifest([10, 20, 4242])).encode()
    assert OciSource.decode_size("u", data) == 4242
    docker = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json"}
    assert OciSource.decode_size("u", json.dumps({**docker, "layers": [{"size": 0}]}).encode()) == 0


def test_urls(client: HttpClient) -> None:
    secure = OciSource("oci://ghcr.io/Spack/github-actions-buildcache", client)
    assert secure.url == "oci://ghcr.io/Spack/github-actions-buildcache"
    assert secure.join("tags/list") == "https://ghcr.io/v2/spack/github-actions-buildcache/tags/list"
    plain = OciSource("oci+http://127.0.0.1:5000/a/b/c/", client)
    assert plain.join("manifests/index.spack") == "http://127.0.0.1:5000/v2/a/b/c/manifests/index.spack"
    assert OciSource.concurrent and repr(plain) == "OciSource('oci+http://127.0.0.1:5000/a/b/c/')"


@pytest.mark.parametrize(
    "url",
    [
        "oci://ghcr.io",
        "oci://ghcr.io/",
        "oci://ghcr.io/spack/cache:latest",
        "oci://ghcr.io/spack/cache@sha256:" + "0" * 64,
        "oci://ghcr.io/spack//cache",
        "oci://ghcr.io:port/spack",
        "https://ghcr.io/spack",
        "oci://ghcr.io/spack?x=1",
    ],
)
def test_urls_that_name_no_repository_are_one_line_errors(client: HttpClient, url: str) -> None:
    with pytest.raises(SourceError) as info:
        OciSource(url, client)
    _one_line(info.value, url)


def test_credentials_in_the_url_are_refused_without_being_shown(client: HttpClient) -> None:
    with pytest.raises(SourceError, match="registries") as info:
        OciSource("oci://me:hunter2@ghcr.io/spack/cache", client)
    assert "hunter2" not in str(info.value) and "ghcr.io/spack/cache" in str(info.value)


# -- tag lists --------------------------------------------------------------------------------------


def test_list_tags_follows_link_pagination(client: HttpClient) -> None:
    with FakeRegistry(token_required=False) as fake:
        base = "/v2/cache/spack/tags/list"

        def page(tags: list[str], link: str | None) -> tuple[int, dict[str, str], bytes]:
            headers = {"Content-Type": "application/json", **({"Link": link} if link else {})}
            return 200, headers, json.dumps({"name": REPO, "tags": tags}).encode()

        fake.routes[base] = page(["a.spack", "b.spack"], f'<{base}?n=2&last=b.spack>; rel="next"')
        fake.routes[f"{base}?n=2&last=b.spack"] = page(["c.spack"], f'<{fake.url}{base}?n=2&last=c.spack>; rel="next"')
        fake.routes[f"{base}?n=2&last=c.spack"] = page(["index.spack"], None)
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        assert source.list_tags() == ["a.spack", "b.spack", "c.spack", "index.spack"]
        assert [s.path for s in fake.seen] == [base, f"{base}?n=2&last=b.spack", f"{base}?n=2&last=c.spack"]
        assert all(s.headers.get("accept") == "application/json" for s in fake.seen)


@pytest.mark.parametrize(
    ("link", "problem"),
    [
        ('<https://{host}/v2/cache/spack/tags/list?last=b>; rel="next"', "is not on this registry"),
        ('<http://elsewhere.example/v2/cache/spack/tags/list?last=b>; rel="next"', "is not on this registry"),
        ('</v2/cache/spack/tags/list>; rel="next"', "was read before: a loop"),
    ],
)
def test_list_tags_refuses_a_next_page_elsewhere_or_a_loop(client: HttpClient, link: str, problem: str) -> None:
    with FakeRegistry(token_required=False) as fake:
        headers = {"Link": link.replace("{host}", fake.host)}
        fake.routes["/v2/cache/spack/tags/list"] = (200, headers, b'{"tags": ["a"]}')
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        with pytest.raises(SourceError, match=problem) as info:
            source.list_tags()
        _one_line(info.value, source.join("tags/list"))


def test_list_tags_refuses_a_tag_that_would_change_the_url(client: HttpClient) -> None:
    with FakeRegistry(token_required=False) as fake:
        fake.routes["/v2/cache/spack/tags/list"] = (200, {}, b'{"tags": ["../../x"]}')
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        with pytest.raises(IndexFormatError, match="is not a valid tag"):
            source.list_tags()


def test_list_tags_stops_after_the_page_bound(client: HttpClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cachedex.ingest.oci.MAX_TAG_PAGES", 3)
    with FakeRegistry(token_required=False) as fake:
        base = "/v2/cache/spack/tags/list"
        for n in range(5):
            here = base if n == 0 else f"{base}?last={n}"
            fake.routes[here] = (200, {"Link": f'<{base}?last={n + 1}>; rel="next"'}, b'{"tags": []}')
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        with pytest.raises(SourceError, match="more than 3 pages of tags"):
            source.list_tags()
        assert len(fake.seen) == 3
        # ... and after a bound on all pages' bytes (the pages' bound alone allowed 160 GB)
        monkeypatch.setattr("cachedex.ingest.oci.MAX_TAG_PAGES", 10)
        monkeypatch.setattr("cachedex.ingest.oci.TAG_LIST_BYTES", 30)
        with pytest.raises(SourceError, match="the tag list is larger than 30 bytes") as info:
            source.list_tags()
        _one_line(info.value, source.join("tags/list"))
        assert len(fake.seen) == 3 + 3  # (12 bytes a page)


# -- the bearer flow ----------------------------------------------------------------------------------


def _fill(fake: FakeRegistry, index: dict[str, Any]) -> tuple[bytes, dict[str, int]]:
    """index.spack and a spec image per listed spec on ``fake``: (index bytes, sizes)."""
    data = json.dumps(index).encode()
    fake.add_index(data)
    sizes = {}
    for dag_hash, name, version in _specs(index):
        sizes[dag_hash] = 1000 + len(sizes)
        fake.add_manifest(expected_tag(name, version, dag_hash), spec_manifest([7, sizes[dag_hash]]))
    return data, sizes


def _sizes(source: OciSource, index: dict[str, Any]) -> dict[str, int | CachedexError]:
    requests = source.size_requests(_specs(index), [])
    return dict(source.read_many(requests, OciSource.decode_size, limit=LIMITS.manifest_bytes))


@pytest.mark.parametrize("field", ["token", "access_token"])
def test_the_bearer_flow(client: HttpClient, index: dict[str, Any], field: str) -> None:
    with FakeRegistry(token_field=field) as fake:
        data, sizes = _fill(fake, index)
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        assert source.read_index(None, limits=LIMITS).data == data
        assert _sizes(source, index) == sizes
        (token_request,) = fake.token_requests()  # one token, for every request
        assert query_of(token_request) == {
            "service": ["fake"],
            "scope": ["repository:cache/spack:pull"],
            "client_id": ["cachedex"],
        }
        assert "authorization" not in token_request.headers  # anonymous
        head, again = fake.seen[0], fake.seen[2]
        assert (head.method, "authorization" in head.headers) == ("HEAD", False)
        assert (again.method, again.headers["authorization"]) == ("HEAD", f"Bearer {fake.issued[0]}")
        answered_401 = [s for s in fake.seen if not s.path.startswith("/token") and "authorization" not in s.headers]
        assert len(answered_401) == 1
        # A second source of the same client and registry reuses the token.
        OciSource(f"oci+http://{fake.host}/{REPO}", client).read_index(None, limits=LIMITS)
        assert len(fake.token_requests()) == 1


def test_basic_credentials_from_the_environment_reach_the_token_service_and_no_message(
    client: HttpClient, index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    user, password = "alice-5b1e", "pa55-Secret-93ff"
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    auth = RegistryAuth("127.0.0.1", username_env="CACHEDEX_T_USER", password_env="CACHEDEX_T_PASS")
    monkeypatch.setenv("CACHEDEX_T_USER", user)
    monkeypatch.setenv("CACHEDEX_T_PASS", password)
    texts: list[str] = []
    with FakeRegistry(basic=basic) as fake:
        data, sizes = _fill(fake, index)
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client, auth)
        assert source.read_index(None, limits=LIMITS).data == data
        assert fake.token_requests()[0].headers["authorization"] == f"Basic {basic}"
        texts += [repr(source), repr(source._session), repr(auth)]
        # The password changed in the environment: read when needed, refused, and not shown.
        monkeypatch.setenv("CACHEDEX_T_PASS", password + "-old")
        fake.revoke()
        with pytest.raises(SourceError, match="cannot get a token from .*HTTP 401") as info:
            OciSource(f"oci+http://{fake.host}/{REPO}", HttpClient(HttpOptions(retries=0)), auth).read_index(
                None, limits=LIMITS
            )
        texts += [str(info.value), repr(info.value), str(info.value.__cause__)]
        results = _sizes(OciSource(f"oci+http://{fake.host}/{REPO}", HttpClient(HttpOptions(retries=0)), auth), index)
        assert all(isinstance(v, SourceError) for v in results.values())
        texts += [str(v) for v in results.values()]
        monkeypatch.delenv("CACHEDEX_T_USER")
        with pytest.raises(SourceError, match="environment variable CACHEDEX_T_USER .* is not set") as unset:
            OciSource(f"oci+http://{fake.host}/{REPO}", HttpClient(HttpOptions(retries=0)), auth).read_index(
                None, limits=LIMITS
            )
        texts.append(str(unset.value))
        issued = list(fake.issued)
    assert sizes and texts and issued
    for text in texts:
        for secret in (user, password, basic, *issued):
            assert secret not in text, text


def test_token_env_is_sent_as_the_bearer(
    client: HttpClient, index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = RegistryAuth("127.0.0.1", token_env="CACHEDEX_T_TOKEN")
    with FakeRegistry() as fake:
        data, sizes = _fill(fake, index)
        fake.valid.add("ghp_Secret0123")
        monkeypatch.setenv("CACHEDEX_T_TOKEN", "ghp_Secret0123")
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client, auth)
        assert source.read_index(None, limits=LIMITS).data == data
        assert _sizes(source, index) == sizes
        assert fake.token_requests() == []
        assert all(s.headers["authorization"] == "Bearer ghp_Secret0123" for s in fake.seen)
        monkeypatch.setenv("CACHEDEX_T_TOKEN", "ghp_Wrong0123")
        with pytest.raises(SourceError, match=r"refused the token in \$CACHEDEX_T_TOKEN") as info:
            source.read_index(None, limits=LIMITS)
        assert "ghp_" not in str(info.value)
        results = _sizes(source, index)
        assert all(isinstance(v, SourceError) and "ghp_" not in str(v) for v in results.values())


def test_a_token_at_its_end_is_replaced_before_use(client: HttpClient, index: dict[str, Any]) -> None:
    # expires_in 6 s, less the 5 s margin: good for about a second.
    with FakeRegistry(token_answer=lambda n: {"token": f"t{n}-x", "expires_in": 6}) as fake:
        fake.valid.update({"t0-x", "t1-x"})
        data, sizes = _fill(fake, index)
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        assert source.read_index(None, limits=LIMITS).data == data
        assert _sizes(source, index) == sizes
        assert len(fake.token_requests()) == 1
        time.sleep(1.2)
        assert _sizes(source, index) == sizes
        assert len(fake.token_requests()) == 2
        assert [s for s in fake.seen if "authorization" not in s.headers and s.path.startswith("/v2")] == fake.seen[:1]


def test_a_token_revoked_during_read_many_is_renewed_once(client: HttpClient, index: dict[str, Any]) -> None:
    with FakeRegistry() as fake:
        data, sizes = _fill(fake, index)
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        source.read_index(None, limits=LIMITS)
        fake.revoke()  # the registry forgets the token the source holds
        assert _sizes(source, index) == sizes
        assert len(fake.token_requests()) == 2


def test_a_second_401_is_an_error(client: HttpClient, index: dict[str, Any]) -> None:
    # The token service issues tokens the registry does not take.
    with FakeRegistry(token_answer=lambda n: {"token": f"useless-{n}"}) as fake:
        _fill(fake, index)
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        with pytest.raises(SourceError, match="HTTP 401 Unauthorized, even with the token") as info:
            source.read_index(None, limits=LIMITS)
        _one_line(info.value, source.join("manifests/index.spack"))
        assert len(fake.token_requests()) == 1
        before = len(fake.seen)
        results = _sizes(source, index)
        assert len(results) == 7 and all(isinstance(v, SourceError) for v in results.values())
        assert all("401" in str(v) and "useless" not in str(v) for v in results.values())
        assert len(fake.seen) - before <= 3 * 7  # bounded: no loop of tokens


@pytest.mark.parametrize(
    "challenge",
    [
        "",
        'Basic realm="registry"',
        'Bearer service="fake",scope="repository:cache/spack:pull"',
        'Bearer realm="",service="fake",scope="repository:cache/spack:pull"',
    ],
)
def test_a_401_without_a_usable_challenge(client: HttpClient, index: dict[str, Any], challenge: str) -> None:
    with FakeRegistry() as fake:
        fake.challenge = challenge.replace("{url}", fake.url)
        _fill(fake, index)
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        with pytest.raises(SourceError, match="401 without a usable Bearer challenge") as info:
            source.read_index(None, limits=LIMITS)
        _one_line(info.value, source.join("manifests/index.spack"))
        assert fake.token_requests() == []


@pytest.mark.parametrize(
    ("status", "answer", "problem"),
    [
        (500, None, r"server error \(HTTP 500\)"),
        (403, None, r"request refused \(HTTP 403\)"),
        (404, None, r"not found \(HTTP 404\)"),
        (200, {"details": "no token here"}, "its answer holds no usable token"),
        (200, {"token": ""}, "its answer holds no usable token"),
        (200, {"token": "two words"}, "its answer holds no usable token"),
        (200, {"token": "a\r\nX-Evil: 1"}, "its answer holds no usable token"),
        (200, {"token": 12}, "its answer holds no usable token"),
        (200, ["token"], "its answer holds no usable token"),
    ],
)
def test_a_failing_token_service(
    client: HttpClient, index: dict[str, Any], status: int, answer: object, problem: str
) -> None:
    def answering(_number: int) -> Any:
        return answer

    with FakeRegistry(token_status=status, token_answer=answering if answer else None) as fake:
        _fill(fake, index)
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        with pytest.raises(SourceError, match=f"cannot get a token from {fake.url}/token: {problem}") as info:
            source.read_index(None, limits=LIMITS)
        assert type(info.value) is SourceError  # not SourceNotFound: the index may well be there
        _one_line(info.value, source.join("manifests/index.spack"))
        results = _sizes(source, index)
        assert all(isinstance(v, SourceError) and "cannot get a token" in str(v) for v in results.values())
        assert len(fake.token_requests()) <= 3


@pytest.mark.parametrize(
    ("realm", "plain_http", "problem"),
    [
        ("http://127.0.0.1:9/token", False, "refusing to ask for a token over plain http"),
        ("file:///etc/passwd", True, "is not an http"),
        ("/token", True, "is not an http"),
    ],
)
def test_a_realm_that_is_not_https_is_refused(client: HttpClient, realm: str, plain_http: bool, problem: str) -> None:
    session = RegistrySession(client, "https://registry.example", None, plain_http=plain_http)
    url = "https://registry.example/v2/x/manifests/index.spack"
    with pytest.raises(SourceError, match=problem) as info:
        session.refused(url, f'Bearer realm="{realm}",service="s",scope="repository:x:pull"', 0)
    _one_line(info.value, url)


def test_authorization_does_not_follow_a_redirect_to_another_port(client: HttpClient, index: dict[str, Any]) -> None:
    """libcurl (>= 7.83) keeps a custom Authorization header to the host AND port it was
    set for: a blob the registry redirects to its CDN is fetched without the token."""
    data = json.dumps(index).encode()
    with FakeRegistry() as fake, Recorder(data) as cdn:
        digest = fake.add_index(data)
        layer = "sha256:" + hashlib.sha256(data).hexdigest()
        fake.routes[f"/v2/{REPO}/blobs/{layer}"] = (307, {"Location": f"{cdn.url}/blob/{layer}"}, b"")
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        snapshot = source.read_index(None, limits=LIMITS)
        assert (snapshot.data, snapshot.checksum) == (data, digest)
        (redirected,) = [s for s in fake.seen if s.path.endswith(layer)]
        assert redirected.headers["authorization"] == f"Bearer {fake.issued[0]}"
        (fetched,) = cdn.seen
        assert fetched.path == f"/blob/{layer}" and "authorization" not in fetched.headers


# -- an index that is not what it says ---------------------------------------------------------------


def _mismatched_layer(fake: FakeRegistry, data: bytes) -> str:
    fake.add_index(data, layer_digest="sha256:" + "ab" * 32)
    return fake.url + f"/v2/{REPO}/blobs/sha256:" + "ab" * 32


def _wrong_manifest_digest(fake: FakeRegistry, data: bytes) -> str:
    fake.add_index(data)
    status, headers, body = fake.routes[f"/v2/{REPO}/manifests/index.spack"]
    fake.routes[f"/v2/{REPO}/manifests/index.spack"] = (
        status,
        {**headers, "Docker-Content-Digest": "sha256:" + "0" * 64},
        body,
    )
    return fake.url + f"/v2/{REPO}/manifests/index.spack"


def _unknown_media_type(fake: FakeRegistry, data: bytes) -> str:
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.example.thing+json", "layers": []}
    fake.add_manifest("index.spack", manifest)
    return fake.url + f"/v2/{REPO}/manifests/index.spack"


def _an_image_index(fake: FakeRegistry, data: bytes) -> str:
    fake.add_manifest("index.spack", {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json"})
    return fake.url + f"/v2/{REPO}/manifests/index.spack"


def _two_layers(fake: FakeRegistry, data: bytes) -> str:
    fake.add_index(data, layers=2)
    return fake.url + f"/v2/{REPO}/manifests/index.spack"


def _a_digest_that_is_a_path(fake: FakeRegistry, data: bytes) -> str:
    layer = {"mediaType": "x", "digest": "sha256:../../../etc/passwd", "size": 10}
    fake.add_manifest(
        "index.spack",
        {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "layers": [layer]},
    )
    return fake.url + f"/v2/{REPO}/manifests/index.spack"


def _schema_version_one(fake: FakeRegistry, data: bytes) -> str:
    layer = {"mediaType": "x", "digest": "sha256:" + "0" * 64, "size": 10}
    fake.add_manifest(
        "index.spack",
        {"schemaVersion": 1, "mediaType": "application/vnd.oci.image.manifest.v1+json", "layers": [layer]},
    )
    return fake.url + f"/v2/{REPO}/manifests/index.spack"


def _missing_blob(fake: FakeRegistry, data: bytes) -> str:
    layer = fake.add_blob(data)
    fake.add_index(data)
    del fake.routes[f"/v2/{REPO}/blobs/{layer}"]
    return fake.url + f"/v2/{REPO}/blobs/{layer}"


def _short_blob(fake: FakeRegistry, data: bytes) -> str:
    layer = "sha256:" + hashlib.sha256(data).hexdigest()
    fake.add_index(data)
    manifest = json.loads(fake.routes[f"/v2/{REPO}/manifests/index.spack"][2])
    manifest["layers"][0]["size"] += 1
    fake.add_manifest("index.spack", manifest)
    return fake.url + f"/v2/{REPO}/blobs/{layer}"


@pytest.mark.parametrize(
    ("arrange", "kind", "problem"),
    [
        (_mismatched_layer, ChecksumError, "checksum mismatch"),
        (_wrong_manifest_digest, ChecksumError, "does not match its digest"),
        (_unknown_media_type, IndexFormatError, "unknown media type 'application/vnd.example.thing"),
        (
            _an_image_index,
            IndexFormatError,
            r"an image index \(application/vnd.oci.image.index.v1\+json: a list of manifests\)",
        ),
        (_two_layers, IndexFormatError, "has 2 layers; expected exactly one"),
        (_a_digest_that_is_a_path, IndexFormatError, "is not a sha256 or sha512 digest"),
        (_schema_version_one, IndexFormatError, "schemaVersion 1 is not 2"),
        (_missing_blob, SourceError, "the index blob listed in .* is missing"),
        (_short_blob, ChecksumError, "size mismatch"),
    ],
)
def test_an_index_that_is_not_what_it_says_is_one_line_naming_the_url(
    client: HttpClient,
    index: dict[str, Any],
    arrange: Callable[[FakeRegistry, bytes], str],
    kind: type[CachedexError],
    problem: str,
) -> None:
    with FakeRegistry(token_required=False) as fake:
        url = arrange(fake, json.dumps(index).encode())
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        with pytest.raises(kind, match=problem) as info:
            source.read_index(None, limits=LIMITS)
        assert not isinstance(info.value, SourceNotFound)
        _one_line(info.value, url)


def test_an_index_over_the_limit_is_refused_before_it_is_read(client: HttpClient, index: dict[str, Any]) -> None:
    with FakeRegistry(token_required=False) as fake:
        fake.add_index(json.dumps(index).encode())
        source = OciSource(f"oci+http://{fake.host}/{REPO}", client)
        with pytest.raises(SourceError, match="larger than 1,000 bytes"):
            source.read_index(None, limits=Limits(index_bytes=1000))
        assert not any("/blobs/" in s.path for s in fake.seen)


# -- challenges ---------------------------------------------------------------------------------------


def test_parse_challenge() -> None:
    assert parse_challenge('Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull"') == (
        "https://ghcr.io/token",
        "ghcr.io",
        "repository:a/b:pull",
    )
    # Several challenges, a quoted comma, an escaped quote, any case, unquoted values.
    header = (
        'Basic realm="x", bearer Realm="https://a/t?x=1,2", service=svc, scope="repository:a:pull,push" , other="q\\"'
    )
    assert parse_challenge(header) == ("https://a/t?x=1,2", "svc", "repository:a:pull,push")
    assert parse_challenge('Bearer realm="r",service="s",scope="a\\"b"') == ("r", "s", 'a"b')
    assert parse_challenge('Bearer realm="r",service="s"') == ("r", "s", "")  # (a scope is asked for anyway)
    assert parse_challenge('Basic realm="r",service="s",scope="c"') is None
    assert parse_challenge("") is None
