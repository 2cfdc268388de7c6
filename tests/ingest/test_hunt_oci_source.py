"""OciSource's edges that test_oci.py leaves open (found by mutating ingest/oci.py): URL
parts that name no repository, HEAD answers and digests, sha512 digests, the index's
layer count and size bound, tag-list pagination and tag validity, spec names that
cannot be tags. Scripted registries from tests/registry.py on 127.0.0.1."""

from __future__ import annotations

import gzip
import hashlib
import json
from typing import Any

import pytest

from cachedex.config import Limits
from cachedex.errors import ChecksumError, IndexFormatError, SourceError, SourceNotFound, TooBig
from cachedex.ingest.http import HttpClient
from cachedex.ingest.oci import OciSource, _next_link, _origin, registry_url
from tests.registry import OCI_MANIFEST, FakeRegistry, Route, Seen

LIMITS = Limits()
REPO = "cache/spack"
MANIFEST_PATH = f"/v2/{REPO}/manifests/index.spack"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
IMAGE_INDEX = "application/vnd.oci.image.index.v1+json"
LAYER = b'{"database": {"version": "7", "installs": {}}}'


class _Scripted(FakeRegistry):
    """An open registry whose HEAD of a manifest gets ``head`` (when set) and whose GET of
    a manifest loses its Docker-Content-Digest when ``strip_get_digest``."""

    def __init__(self) -> None:
        self.head: Route | None = None
        self.strip_get_digest = False
        super().__init__(token_required=False)

    def respond(self, seen: Seen) -> Route:
        if "/manifests/" in seen.path and seen.method == "HEAD" and self.head is not None:
            return self.head
        status, headers, data = super().respond(seen)
        if "/manifests/" in seen.path and seen.method == "GET" and self.strip_get_digest:
            headers = {k: v for k, v in headers.items() if k.lower() != "docker-content-digest"}
        return status, headers, data


def _index_manifest(layer_digest: str, size: int) -> dict[str, Any]:
    return {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + "0" * 64, "size": 2},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": size}],
    }


def _source(fake: FakeRegistry, client: HttpClient) -> OciSource:
    return OciSource(f"oci+http://{fake.host}/{REPO}", client)


# -- URLs -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["oci://ghcr.io/spack/cache#frag", "oci://:5000/spack/cache"])
def test_a_fragment_or_a_missing_host_is_refused(client: HttpClient, url: str) -> None:
    """A URL with a fragment, or a port but no host name, names no registry repository."""
    with pytest.raises(SourceError, match="expected oci://HOST") as info:
        OciSource(url, client)
    assert str(info.value).startswith(url)


def test_registry_url_keeps_the_scheme_of_the_mirror() -> None:
    """Credentials are looked up by ``http://`` for oci+http and ``https://`` for oci."""
    assert registry_url("oci+http://127.0.0.1:5000/a/b") == "http://127.0.0.1:5000/"
    assert registry_url("oci://ghcr.io/spack/cache") == "https://ghcr.io/"
    assert registry_url("oci://myuser/cache") == "https://index.docker.io/"


# -- HEAD answers and digests ----------------------------------------------------------------------------


def test_a_registry_answering_501_to_head_is_read_with_get(client: HttpClient) -> None:
    """501 to HEAD (as 405) means "no HEAD here": the GET alone is sent, not an error."""
    with _Scripted() as fake:
        digest = fake.add_index(LAYER)
        fake.head = (501, {}, b"")
        snapshot = _source(fake, client).read_index(None, limits=LIMITS)
        assert (snapshot.data, snapshot.checksum) == (LAYER, digest)
        assert [s.method for s in fake.seen if s.path == MANIFEST_PATH] == ["HEAD", "GET"]


def test_a_digest_on_a_refused_head_is_not_read(client: HttpClient) -> None:
    """A 405's headers are no manifest's: a Docker-Content-Digest on it is ignored."""
    with _Scripted() as fake:
        digest = fake.add_index(LAYER)
        fake.head = (405, {"Docker-Content-Digest": "sha256:" + "0" * 64}, b"")
        fake.strip_get_digest = True
        assert _source(fake, client).read_index(None, limits=LIMITS).checksum == digest


def test_the_head_digest_checks_a_get_that_names_none(client: HttpClient) -> None:
    """A GET without Docker-Content-Digest is checked against the HEAD's digest: a
    manifest that changed between them is a ChecksumError, not a silent read."""
    with _Scripted() as fake:
        fake.add_index(LAYER)
        fake.head = (200, {"Docker-Content-Digest": "sha256:" + "1" * 64}, b"")
        fake.strip_get_digest = True
        with pytest.raises(ChecksumError, match="does not match its digest"):
            _source(fake, client).read_index(None, limits=LIMITS)


def test_a_malformed_docker_content_digest_is_a_source_error_saying_so(client: HttpClient) -> None:
    """A digest header that is no digest is named as such (not reported as corruption)."""
    with _Scripted() as fake:
        fake.add_index(LAYER, layer_digest=None)
        status, headers, data = fake.routes[MANIFEST_PATH]
        fake.routes[MANIFEST_PATH] = (status, {**headers, "Docker-Content-Digest": "md5:abc"}, data)
        with pytest.raises(SourceError, match="Docker-Content-Digest 'md5:abc' is not a sha256 or sha512") as info:
            _source(fake, client).read_index(None, limits=LIMITS)
        assert not isinstance(info.value, ChecksumError)


def test_sha512_digests_of_manifest_and_layer_are_checked_with_sha512(client: HttpClient) -> None:
    """A registry may name sha512 digests: the manifest and its layer are hashed with sha512."""
    with _Scripted() as fake:
        layer_digest = "sha512:" + hashlib.sha512(LAYER).hexdigest()
        fake.add_blob(LAYER, digest=layer_digest)
        data = json.dumps(_index_manifest(layer_digest, len(LAYER))).encode()
        digest = fake.add_manifest("index.spack", data, digest="sha512:" + hashlib.sha512(data).hexdigest())
        snapshot = _source(fake, client).read_index(None, limits=LIMITS)
        assert (snapshot.data, snapshot.checksum) == (LAYER, digest)
        # ... and a sha512 layer digest that does not match is still caught
        fake.routes[f"/v2/{REPO}/blobs/{layer_digest}"] = (200, {}, LAYER[:-1] + b" ")
        with pytest.raises(ChecksumError, match="checksum mismatch"):
            _source(fake, client).read_index(None, limits=LIMITS)


# -- the index manifest -----------------------------------------------------------------------------------


def test_an_index_without_layers_is_an_index_format_error(client: HttpClient) -> None:
    """index.spack must hold exactly one layer: zero is as wrong as two."""
    with _Scripted() as fake:
        manifest = _index_manifest("sha256:" + "0" * 64, 1)
        manifest["layers"] = []
        fake.add_manifest("index.spack", manifest)
        with pytest.raises(IndexFormatError, match="index.spack has 0 layers; expected exactly one"):
            _source(fake, client).read_index(None, limits=LIMITS)


def test_a_negative_layer_size_is_an_index_format_error(client: HttpClient) -> None:
    """A layer size below zero is refused as a format error before any blob is asked."""
    with _Scripted() as fake:
        fake.add_blob(LAYER)
        fake.add_manifest("index.spack", _index_manifest("sha256:" + hashlib.sha256(LAYER).hexdigest(), -1))
        with pytest.raises(IndexFormatError, match="layer size -1 is not a size"):
            _source(fake, client).read_index(None, limits=LIMITS)
        assert not any("/blobs/" in s.path for s in fake.seen)


def test_an_index_of_exactly_the_limit_is_read(client: HttpClient) -> None:
    """``index_bytes`` is the largest index allowed, not the first refused."""
    with _Scripted() as fake:
        fake.add_index(LAYER)
        assert _source(fake, client).read_index(None, limits=Limits(index_bytes=len(LAYER))).data == LAYER


def test_the_index_manifest_is_bounded_by_manifest_bytes(client: HttpClient) -> None:
    """The manifest of index.spack is read under ``manifest_bytes``, not ``index_bytes``."""
    with _Scripted() as fake:
        fake.add_index(LAYER)
        with pytest.raises(TooBig):
            _source(fake, client).read_index(None, limits=Limits(manifest_bytes=100))


def test_a_manifest_typed_only_by_its_content_type_header_is_read(client: HttpClient) -> None:
    """A manifest whose body has no mediaType is typed by Content-Type (its parameters aside)."""
    with _Scripted() as fake:
        digest = fake.add_blob(LAYER)
        manifest = _index_manifest(digest, len(LAYER))
        del manifest["mediaType"]
        fake.add_manifest("index.spack", manifest)
        status, headers, data = fake.routes[MANIFEST_PATH]
        fake.routes[MANIFEST_PATH] = (status, {**headers, "Content-Type": f"{DOCKER_MANIFEST}; charset=utf-8"}, data)
        assert _source(fake, client).read_index(None, limits=LIMITS).data == LAYER


def test_a_plain_blob_starting_like_half_a_gzip_header_is_taken_as_it_is(client: HttpClient) -> None:
    """Only the two bytes of gzip's magic make a layer gunzipped; one of them does not."""
    with _Scripted() as fake:
        layer = b"\x1f" + LAYER
        fake.add_index(layer)
        assert _source(fake, client).read_index(None, limits=LIMITS).data == layer
        fake.add_index(gzip.compress(LAYER))
        assert _source(fake, client).read_index(None, limits=LIMITS).data == LAYER


def test_read_index_reports_progress_of_the_blob(client: HttpClient) -> None:
    """The progress callback given to read_index is called while the index blob is read."""
    calls: list[tuple[int, int | None]] = []
    with _Scripted() as fake:
        fake.add_index(LAYER)
        _source(fake, client).read_index(None, limits=LIMITS, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == len(LAYER)


def test_a_tag_holding_an_image_index_is_told_apart_from_a_missing_one(client: HttpClient) -> None:
    """The Accept of a manifest GET names image indexes too: a registry that serves one
    only to such an Accept gives it, and it is refused as an image index, not "not found"."""

    class _Strict(FakeRegistry):
        def respond(self, seen: Seen) -> Route:
            if "/manifests/" in seen.path and IMAGE_INDEX not in seen.headers.get("accept", ""):
                return 404, {}, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}'
            return super().respond(seen)

    with _Strict(token_required=False) as fake:
        fake.add_manifest("index.spack", {"schemaVersion": 2, "mediaType": IMAGE_INDEX, "manifests": []})
        with pytest.raises(IndexFormatError, match="an image index") as info:
            _source(fake, client).read_index(None, limits=LIMITS)
        assert not isinstance(info.value, SourceNotFound)


def test_fetch_of_the_tag_list_asks_for_json(client: HttpClient) -> None:
    """fetch("tags/list") sends ``Accept: application/json``, as list_tags does."""
    with _Scripted() as fake:
        fake.routes[f"/v2/{REPO}/tags/list"] = (200, {}, b'{"tags": ["a"]}')
        fetched = _source(fake, client).fetch("tags/list", limit=1000)
        assert fetched is not None and fetched.data == b'{"tags": ["a"]}'
        assert fake.seen[-1].headers.get("accept") == "application/json"


# -- spec names that cannot be tags ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "bad"),
    [
        (("h" * 32, "zlib", "1.3\x85"), "'1.3\\x85'"),
        (("h" * 32, "zlib", "1.3\x9f"), "'1.3\\x9f'"),
        (("", "zlib", "1.3"), "''"),
        (("h" * 31 + "\n", "zlib", "1.3"), "\\n"),
    ],
)
def test_c1_controls_and_bad_hashes_cannot_be_part_of_a_tag(
    client: HttpClient, spec: tuple[str, str, str], bad: str
) -> None:
    """C1 control characters (0x80-0x9f) and an empty or control-holding hash are refused."""
    source = OciSource("oci://ghcr.io/spack/cache", client)
    refused: list[str] = []
    assert list(source.size_requests([spec], refused)) == []
    (message,) = refused
    assert "cannot be part of a tag" in message and bad in message


# -- tag lists -------------------------------------------------------------------------------------------


def _tag_pages(fake: FakeRegistry, pages: dict[str, tuple[list[str], str | None]]) -> None:
    for path, (tags, link) in pages.items():
        fake.routes[path] = (200, {"Link": link} if link else {}, json.dumps({"tags": tags}).encode())


def test_list_dir_of_manifests_with_slashes_lists_the_tags(client: HttpClient) -> None:
    """``manifests/`` and ``/manifests`` are the tags' "folder" too."""
    with _Scripted() as fake:
        _tag_pages(fake, {f"/v2/{REPO}/tags/list": (["a.spack"], None)})
        source = _source(fake, client)
        assert source.list_dir("manifests/") == ["a.spack"]
        assert source.list_dir("/manifests") == ["a.spack"]


@pytest.mark.parametrize("body", [b'{"name": "cache/spack", "tags": null}', b'{"name": "cache/spack"}'])
def test_a_repository_without_tags_lists_none(client: HttpClient, body: bytes) -> None:
    """``"tags": null`` (distribution's answer for a repository with no tags) or no
    ``tags`` at all is an empty list."""
    with _Scripted() as fake:
        fake.routes[f"/v2/{REPO}/tags/list"] = (200, {}, body)
        assert _source(fake, client).list_tags() == []


def test_a_tag_list_of_exactly_the_byte_bound_is_read(client: HttpClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """TAG_LIST_BYTES is the most allowed: a list of that many bytes is read whole."""
    with _Scripted() as fake:
        _tag_pages(fake, {f"/v2/{REPO}/tags/list": (["a"], None)})
        monkeypatch.setattr("cachedex.ingest.oci.TAG_LIST_BYTES", len(b'{"tags": ["a"]}'))
        assert _source(fake, client).list_tags() == ["a"]


@pytest.mark.parametrize(("tag", "valid"), [("t" * 128, True), ("t" * 129, False), (".x", False), ("-x", False)])
def test_tag_validity_follows_the_distribution_grammar(client: HttpClient, tag: str, valid: bool) -> None:
    """A tag is ``[A-Za-z0-9_][A-Za-z0-9._-]{0,127}``: at most 128 characters, not led by ``.`` or ``-``."""
    with _Scripted() as fake:
        _tag_pages(fake, {f"/v2/{REPO}/tags/list": ([tag], None)})
        source = _source(fake, client)
        if valid:
            assert source.list_tags() == [tag]
        else:
            with pytest.raises(IndexFormatError, match="is not a valid tag"):
                source.list_tags()


def test_a_loop_back_to_a_later_page_is_caught(client: HttpClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page read is remembered, not only the first: A -> B -> C -> B is a loop."""
    monkeypatch.setattr("cachedex.ingest.oci.MAX_TAG_PAGES", 20)  # (a missed loop fails fast)
    base = f"/v2/{REPO}/tags/list"
    with _Scripted() as fake:
        _tag_pages(
            fake,
            {
                base: (["a"], f'<{base}?p=b>; rel="next"'),
                f"{base}?p=b": (["b"], f'<{base}?p=c>; rel="next"'),
                f"{base}?p=c": (["c"], f'<{base}?p=b>; rel="next"'),
            },
        )
        with pytest.raises(SourceError, match="was read before: a loop"):
            _source(fake, client).list_tags()
        assert len(fake.seen) == 3


def test_a_next_link_is_read_in_any_case(client: HttpClient) -> None:
    """``REL="NEXT"`` is rel="next" (link relation types are case-insensitive, RFC 8288)."""
    base = f"/v2/{REPO}/tags/list"
    with _Scripted() as fake:
        _tag_pages(fake, {base: (["a"], f'<{base}?p=2>; REL="NEXT"'), f"{base}?p=2": (["b"], None)})
        assert _source(fake, client).list_tags() == ["a", "b"]


def test_a_next_page_on_the_same_host_in_upper_case_is_followed(client: HttpClient) -> None:
    """Host names are case-insensitive: ``LOCALHOST`` is the registry ``localhost``."""
    base = f"/v2/{REPO}/tags/list"
    with _Scripted() as fake:
        port = fake.host.rsplit(":", 1)[1]
        _tag_pages(
            fake,
            {base: (["a"], f'<http://LOCALHOST:{port}{base}?p=2>; rel="next"'), f"{base}?p=2": (["b"], None)},
        )
        source = OciSource(f"oci+http://localhost:{port}/{REPO}", client)
        assert source.list_tags() == ["a", "b"]


@pytest.mark.parametrize(("rel", "expected"), [('rel="last next"', ["a", "b"]), ('rel="next-archive"', ["a"])])
def test_the_next_relation_is_one_of_a_list_of_relation_types(
    client: HttpClient, rel: str, expected: list[str]
) -> None:
    """rel is a space-separated list of relation types (RFC 8288 section 3.3): "next" among
    them is the next page; a relation type that merely starts with "next" is not."""
    base = f"/v2/{REPO}/tags/list"
    with _Scripted() as fake:
        _tag_pages(fake, {base: (["a"], f"<{base}?p=2>; {rel}"), f"{base}?p=2": (["b"], None)})
        assert _source(fake, client).list_tags() == expected


@pytest.mark.parametrize(
    "header",
    [
        '<PAGE>; rel="last next"',
        '<PAGE>; title="a, b; rel=x"; rel=next',
        '<FIRST>; rel="first", <PAGE>; rel="next"',
        '<PAGE>; REL="Next"',
    ],
)
def test_the_next_link_is_found_among_relation_types_and_parameters(header: str) -> None:
    """A ``Link`` header's next page: ``next`` among the relation types of the link's
    ``rel``, past quoted parameters holding "," and ";", and past other links."""
    assert _next_link(header.replace("FIRST", "/first").replace("PAGE", "/v2/r/tags/list?p=2")) == "/v2/r/tags/list?p=2"


@pytest.mark.parametrize(
    "header",
    [
        '<PAGE>; rel="next-archive"',
        "<PAGE>; rel=first; rel=next",
        "<PAGE>; rel=nextpage",
        '<PAGE>; title="rel=next"',
        "<PAGE>",
        "",
    ],
)
def test_no_next_link_where_no_relation_type_is_next(header: str) -> None:
    """No next page where no link's ``rel`` lists ``next`` itself."""
    assert _next_link(header.replace("PAGE", "/v2/r/tags/list?p=2")) is None


def test_a_default_port_said_is_the_same_origin() -> None:
    """A next page at ``https://host:443/`` is on ``https://host/`` (and ``http`` on 80):
    it was refused as "not on this registry"."""
    assert _origin("https://R.example:443/v2/x") == _origin("https://r.example/v2/y")
    assert _origin("http://r.example:80/v2/x") == _origin("http://r.example/v2/y")
    assert _origin("https://r.example:444/v2/x") != _origin("https://r.example/v2/y")
    assert _origin("http://r.example:443/v2/x") != _origin("https://r.example/v2/y")
