"""``cachedex verify`` as a mirror operator relies on it over the network: signed v3 and
v2 mirrors served by a real nginx, each tampered copy found as from a folder; servers
that refuse (403), fail (500, 503), redirect or are slow, each error named once by its
URL and the rest still checked; ``--deep`` reads bounded by the size a manifest gives,
resumed (not restarted) after a timeout, streamed from an OCI registry; and what the
catalog keeps is what ``--json`` printed."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.config import parse_config
from cachedex.demo.mirrorgen import publish_keys, write_mirror
from cachedex.ingest.manifests import read_clearsigned
from cachedex.ingest.sync import sync
from cachedex.ingest.verify import MirrorVerification, verify
from tests.helpers import make_config
from tests.ingest.test_signatures import TestKey
from tests.ingest.test_verify import CURL, GCC, LISTED, OPENSSL, SIZES, ZLIB, _cli, _manifest, _records, _resign
from tests.registry import OCI_MANIFEST, Registry, RegistryPusher, expected_tag, push_index, push_spack_cache
from tests.servers import Nginx

#: curl's binary is big enough to be cut by a short deadline.
BIG = {**SIZES, CURL["hash"]: 3_000_000}


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestKey, TestKey]]:
    folder = tmp_path_factory.mktemp("keys")
    a, b = TestKey(folder / "a", "mirror key"), TestKey(folder / "b", "another key")
    yield a, b
    a.close()
    b.close()


def _signed(dest: Path, key: TestKey, layout: int, unlisted: tuple[str, ...] = ()) -> Path:
    write_mirror(dest, _records(unlisted), layout=layout, sizes=BIG, tarballs=True, sign=key.sign)
    publish_keys(dest, {key.fingerprint: key.public}, layout=layout)
    return dest


@pytest.fixture(scope="module")
def mirrors(tmp_path_factory: pytest.TempPathFactory, keys: tuple[TestKey, TestKey]) -> dict[int, Path]:
    """A signed v3 and a signed v2 mirror of four listed specs, binaries included."""
    root = tmp_path_factory.mktemp("mirrors")
    return {layout: _signed(root / f"v{layout}", keys[0], layout) for layout in (2, 3)}


def _verify(tmp_path: Path, url: str, *, deep: bool = False, **http: Any) -> MirrorVerification:
    config = make_config(tmp_path, [{"name": "t", "url": url}], **http)
    with Catalog(config.catalog) as catalog:
        report = verify(config, catalog, deep=deep)
    return report.tags[0].mirrors[0]


def _found(result: MirrorVerification, base: str) -> set[tuple[str, str]]:
    """(kind, path under ``base``) of every problem; no message repeats its URL."""
    base = base.rstrip("/") + "/"
    assert all(p.url.startswith(base) and p.url not in p.message for p in result.problems), result.problems
    return {(p.kind, p.url[len(base) :]) for p in result.problems}


def _blob(root: Path, name: str, media: str) -> str:
    data = json.loads(read_clearsigned((root / _manifest(name)).read_text()))
    record = next(r for r in data["data"] if media in r["mediaType"])
    return f"blobs/sha256/{record['checksum'][:2]}/{record['checksum']}"


def _v2(root: Path, name: str, suffix: str) -> str:
    node = next(n for n in LISTED if n["name"] == name)
    return str(next(root.rglob(f"*-{node['hash']}{suffix}")).relative_to(root))


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _mangle(path: Path) -> None:
    lines = path.read_text().splitlines()
    at = lines.index("-----BEGIN PGP SIGNATURE-----") + 2
    lines[at] = lines[at][:8] + ("x" if lines[at][8] != "x" else "y") + lines[at][9:]
    path.write_text("\n".join(lines) + "\n")


def _resign_v2(root: Path, key: TestKey) -> None:
    path = root / _v2(root, "curl", ".spec.json.sig")
    path.write_text(key.sign(read_clearsigned(path.read_text())))


Tamper = Callable[[Path, tuple[TestKey, TestKey]], str]

#: Per tampered copy: what is done to it (returns the file concerned) and the problem
#: kinds expected, each about that file; ``deep``: found by --deep only.
V3: dict[str, tuple[Tamper, tuple[str, ...], bool]] = {
    "tarball gone": (lambda m, k: _gone(m, _blob(m, "curl", "tar")), ("tarball-missing",), False),
    "tarball altered": (lambda m, k: _at(m, _blob(m, "curl", "tar"), _flip), ("tarball-checksum",), True),
    "tarball truncated": (lambda m, k: _cut(m, _blob(m, "curl", "tar")), ("tarball-size",), False),
    "manifest gone": (lambda m, k: _gone(m, _manifest("curl")), ("manifest-missing",), False),
    "manifest not JSON": (
        lambda m, k: _write(m, _manifest("curl"), k[0].sign("this is { not JSON")),
        ("manifest-unreadable",),
        False,
    ),
    "unknown key": (lambda m, k: _resign(m, "curl", k[1]) or _manifest("curl"), ("signature-unknown-key",), False),
    "bad signature": (lambda m, k: _at(m, _manifest("curl"), _mangle), ("signature-bad",), False),
    "spec blob truncated": (lambda m, k: _cut(m, _blob(m, "curl", "spec")), ("spec-blob-checksum",), False),
    "spec blob gone": (lambda m, k: _gone(m, _blob(m, "curl", "spec")), ("spec-blob-missing",), False),
}
V2: dict[str, tuple[Tamper, tuple[str, ...], bool]] = {
    "tarball gone": (lambda m, k: _gone(m, _v2(m, "curl", ".spack")), ("tarball-missing",), False),
    "tarball altered": (lambda m, k: _at(m, _v2(m, "curl", ".spack"), _flip), ("tarball-checksum",), True),
    "spec file gone": (lambda m, k: _gone(m, _v2(m, "curl", ".spec.json.sig")), ("manifest-missing",), False),
    "spec file not JSON": (
        lambda m, k: _write(m, _v2(m, "curl", ".spec.json.sig"), k[0].sign("not { JSON")),
        ("manifest-unreadable",),
        False,
    ),
    "unknown key": (
        lambda m, k: _resign_v2(m, k[1]) or _v2(m, "curl", ".spec.json.sig"),
        ("signature-unknown-key",),
        False,
    ),
    "bad signature": (lambda m, k: _at(m, _v2(m, "curl", ".spec.json.sig"), _mangle), ("signature-bad",), False),
}


def _gone(root: Path, path: str) -> str:
    (root / path).unlink()
    return path


def _at(root: Path, path: str, change: Callable[[Path], None]) -> str:
    change(root / path)
    return path


def _cut(root: Path, path: str) -> str:
    (root / path).write_bytes((root / path).read_bytes()[:20])
    return path


def _write(root: Path, path: str, text: str) -> str:
    (root / path).write_text(text)
    return path


@pytest.mark.parametrize("layout", [3, 2])
def test_each_tampered_copy_is_found_over_nginx_as_from_a_folder(
    tmp_path: Path, mirrors: dict[int, Path], keys: tuple[TestKey, TestKey], layout: int
) -> None:
    cases = V3 if layout == 3 else V2
    served = tmp_path / "served"
    concerned: dict[str, str] = {}
    for number, (tamper, _kinds, _deep) in enumerate(cases.values()):
        copy = Path(shutil.copytree(mirrors[layout], served / f"c{number}"))
        concerned[f"c{number}"] = tamper(copy, keys)
    with Nginx(served) as nginx:
        for number, (name, (_tamper, kinds, deep_only)) in enumerate(cases.items()):
            folder = f"c{number}"
            want = {(kind, concerned[folder]) for kind in kinds}
            over_http = _verify(tmp_path, f"{nginx.url}/{folder}", deep=True)
            assert _found(over_http, f"{nginx.url}/{folder}") == want, name
            from_folder = _verify(tmp_path, str(served / folder), deep=True)
            assert {k for k in _found(from_folder, str(served / folder)) if k[0] != "unindexed"} == want, name
            shallow = _verify(tmp_path, f"{nginx.url}/{folder}")
            assert _found(shallow, f"{nginx.url}/{folder}") == (set() if deep_only else want), name


@pytest.mark.parametrize("layout", [3, 2])
def test_a_dependency_no_mirror_lists_over_nginx(tmp_path: Path, keys: tuple[TestKey, TestKey], layout: int) -> None:
    _signed(tmp_path / "m", keys[0], layout, unlisted=("openssl",))
    with Nginx(tmp_path) as nginx:
        result = _verify(tmp_path, f"{nginx.url}/m")
    (problem,) = result.problems
    assert (problem.kind, problem.hash) == ("dependency-missing", CURL["hash"])
    assert f"needs openssl /{OPENSSL['hash']}" in problem.message


def test_refusals_and_server_errors_are_named_once_by_url_and_the_rest_is_checked(
    tmp_path: Path, mirrors: dict[int, Path]
) -> None:
    """403 on a manifest, 500 on a binary, 503 on a spec blob, 500 on a binary's GET
    only (--deep): each is its file's problem, its URL said once (the row names it, the
    message does not repeat it), and every other spec is checked. A 403 read without
    credentials is a file missing, or not readable: S3 answers so for a key it lacks
    (``test_http_quirks.py``)."""
    m3 = mirrors[3]
    curl_tar, zlib_tar, zlib_spec = _blob(m3, "curl", "tar"), _blob(m3, "zlib", "tar"), _blob(m3, "zlib", "spec")
    v2_tar = _v2(mirrors[2], "curl", ".spack")
    extra = f"""
        location = /v3/{_manifest("openssl")} {{ return 403; }}
        location = /v3/{curl_tar} {{ return 500; }}
        location = /v3/{zlib_spec} {{ return 503; }}
        location = /v3/{zlib_tar} {{ if ($request_method = GET) {{ return 500; }} }}
        location = /v2/{v2_tar} {{ return 403; }}
    """
    with Nginx(m3.parent, extra=extra) as nginx:
        v3 = _verify(tmp_path, f"{nginx.url}/v3", deep=True, retries=0)
        v2 = _verify(tmp_path, f"{nginx.url}/v2", deep=True, retries=0)
    assert _found(v3, f"{nginx.url}/v3") == {
        ("manifest-missing", _manifest("openssl")),
        ("tarball-unreadable", curl_tar),
        ("spec-blob-unreadable", zlib_spec),
        ("tarball-unreadable", zlib_tar),
    }
    messages = {p.kind + " " + p.url.rsplit("/", 1)[1]: p.message for p in v3.problems}
    assert messages[f"tarball-unreadable {curl_tar.rsplit('/', 1)[1]}"] == (
        f"binary of curl@8.11.1 /{CURL['hash']}: server error (HTTP 500), after 1 attempt"
    )
    assert messages[f"spec-blob-unreadable {zlib_spec.rsplit('/', 1)[1]}"] == (
        f"spec of zlib@1.3.1 /{ZLIB['hash']}: server error (HTTP 503), after 1 attempt"
    )
    # the rest checked: cmake's binary read whole, three manifests found and signed
    assert (v3.found, v3.binaries, v3.signatures.signed) == (3, 2, 3) and "checksums" in v3.checks
    assert _found(v2, f"{nginx.url}/v2") == {("tarball-missing", v2_tar)}
    assert v2.problems[0].message == f"binary of curl@8.11.1 /{CURL['hash']}: missing (or not readable: HTTP 403)"
    assert (v2.found, v2.binaries) == (4, 3)


def test_a_mirror_behind_redirects_verifies_cleanly(tmp_path: Path, mirrors: dict[int, Path]) -> None:
    m3 = mirrors[3]
    extra = f"""
        location /moved3/ {{ rewrite ^/moved3/(.*)$ /v3/$1 permanent; }}
        location /moved2/ {{ rewrite ^/moved2/(.*)$ /v2/$1 redirect; }}
        location /v3/blobs/ {{ rewrite ^/v3/blobs/(.*)$ /elsewhere/$1 redirect; }}
        location /elsewhere/ {{ alias {m3}/blobs/; }}
        location /loop/ {{ rewrite ^/loop/(.*)$ /loop/$1 redirect; }}
    """
    with Nginx(m3.parent, extra=extra) as nginx:
        for url in (f"{nginx.url}/moved3", f"{nginx.url}/moved2"):
            result = _verify(tmp_path, url, deep=True)
            assert result.problems == () and (result.found, result.binaries) == (4, 4), url
            assert "checksums" in result.checks
        loop = _verify(tmp_path, f"{nginx.url}/loop")
    assert [(p.kind, "redirected too many times" in p.message) for p in loop.problems] == [("index-unreadable", True)]


def test_a_deep_read_cut_by_the_deadline_resumes_where_it_stopped(tmp_path: Path, mirrors: dict[int, Path]) -> None:
    """A 3 MB binary served at 1 MB/s with a 1 s deadline: each attempt asks for the rest
    (HTTP 206), so the binary is read once in all and its checksum is right. Each attempt
    started over from byte 0, and never got to the end."""
    curl_tar = _blob(mirrors[3], "curl", "tar")
    extra = f"location = /v3/{curl_tar} {{ limit_rate 1m; }}"
    with Nginx(mirrors[3].parent, extra=extra, log_requests=True) as nginx:
        result = _verify(tmp_path, f"{nginx.url}/v3", deep=True, deadline=1, retries=6)
        reads = [status for method, path, status in nginx.requests() if method == "GET" and path.endswith(curl_tar)]
    assert result.problems == () and "checksums" in result.checks
    assert reads[0] == 200 and set(reads[1:]) == {206} and len(reads) >= 2


def test_a_deep_read_a_server_restarts_from_the_first_byte_is_hashed_anew(  # type: ignore[no-untyped-def]
    tmp_path: Path, mirrors: dict[int, Path], http_server
) -> None:
    """A server that ignores the range a retry asks for answers the whole file (200):
    what the cut attempt hashed is dropped, not hashed again before it."""
    served = Path(shutil.copytree(mirrors[3], http_server.state.root / "m"))
    curl_tar = _blob(served, "curl", "tar")
    http_server.state.faults[f"/m/{curl_tar}"] = "cut-first-get"
    result = _verify(tmp_path, f"{http_server.url}/m", deep=True, retries=1)
    assert result.problems == () and "checksums" in result.checks
    gets = [n for n, asked in enumerate(http_server.state.requests) if asked == ("GET", f"/m/{curl_tar}")]
    assert len(gets) == 2 and "Range" in http_server.state.headers[gets[1]]  # (asked, and not given)


def test_a_deep_read_given_another_range_than_it_asked_for_is_not_hashed_on(  # type: ignore[no-untyped-def]
    tmp_path: Path, mirrors: dict[int, Path], http_server
) -> None:
    """After a cut, a server answers the retry's range with another part (a cache's, of
    another request): those bytes are not hashed after the ones read, and it is said."""
    served = Path(shutil.copytree(mirrors[3], http_server.state.root / "m"))
    curl_tar = _blob(served, "curl", "tar")
    http_server.state.faults[f"/m/{curl_tar}"] = "cut-first-get>206"  # (bytes 0-1/100)
    result = _verify(tmp_path, f"{http_server.url}/m", deep=True, retries=1)
    gets = [n for n, asked in enumerate(http_server.state.requests) if asked == ("GET", f"/m/{curl_tar}")]
    assert len(gets) == 2 and http_server.state.headers[gets[1]]["Range"].startswith("bytes=")
    assert [problem.message for problem in result.problems] == [
        f"binary of curl@{CURL['version']} /{CURL['hash']}: answered the range 'bytes 0-1/100', not the one asked"
    ]


def test_a_deep_read_stops_at_the_size_the_manifest_gives(tmp_path: Path, mirrors: dict[int, Path]) -> None:
    """A server whose HEAD says the size the manifest gives but whose GET serves a
    bigger file (replaced meanwhile, or lying): --deep stops past that size, and says
    so, rather than reading on (up to a terabyte)."""
    zlib_tar, curl_tar = _blob(mirrors[3], "zlib", "tar"), _blob(mirrors[3], "curl", "tar")
    extra = f"location = /v3/{zlib_tar} {{ if ($request_method = GET) {{ rewrite ^ /v3/{curl_tar} last; }} }}"
    with Nginx(mirrors[3].parent, extra=extra) as nginx:
        result = _verify(tmp_path, f"{nginx.url}/v3", deep=True)
    assert _found(result, f"{nginx.url}/v3") == {("tarball-size", zlib_tar)}
    assert (
        result.problems[0].message
        == f"binary of zlib@1.3.1 /{ZLIB['hash']}: more than the 3,000 bytes its manifest says"
    )


def test_the_catalog_keeps_what_json_printed_over_http(tmp_path: Path, mirrors: dict[int, Path]) -> None:
    served = Path(shutil.copytree(mirrors[3], tmp_path / "s" / "m"))
    (served / _manifest("openssl")).unlink()
    extra = f"location = /m/{_blob(served, 'curl', 'tar')} {{ return 500; }}"
    with Nginx(served.parent, extra=extra) as nginx:
        path = tmp_path / "cachedex.yaml"
        document = {"catalog": "cat.sqlite", "tags": [{"name": "t", "url": f"{nginx.url}/m"}], "http": {"retries": 0}}
        path.write_text(json.dumps(document))
        config = parse_config(document, base=tmp_path)
        with Catalog(config.catalog) as catalog:  # (the catalog shows verifications of mirrors it lists)
            assert sync(config, catalog)[0].ok
        runner = CliRunner()
        text = runner.invoke(_cli(), ["--config", str(path), "verify", "--deep"])
        printed = runner.invoke(_cli(), ["--config", str(path), "verify", "--deep", "--json"])
    assert text.exit_code == printed.exit_code == 1
    (mirror,) = json.loads(printed.stdout)["tags"][0]["mirrors"]
    with Catalog(tmp_path / "cat.sqlite") as catalog:
        (kept,) = catalog.latest_verifications("t")
    stored = json.loads(msgspec.json.encode(kept))
    volatile = ("started_at", "finished_at")
    assert {k: v for k, v in stored.items() if k not in volatile} == {
        k: v for k, v in mirror.items() if k not in volatile
    }
    assert sorted(p["kind"] for p in mirror["problems"]) == ["manifest-missing", "tarball-unreadable"]
    for problem in mirror["problems"]:
        assert f"{problem['url']}: {problem['message']}" in text.output.splitlines()


# -- OCI ----------------------------------------------------------------------------------------------


def _push_one_big(registry: Registry, repository: str, size: int) -> tuple[str, Path]:
    """A cache of zlib alone, whose tarball is ``size`` random bytes; (its digest, the
    index's source folder)."""
    index = json.loads(
        write_mirror(
            registry.workdir / "src", [(GCC, False), (ZLIB, True)], layout=2, spec_files=False
        ).index_path.read_bytes()
    )
    tarball = bytes(range(256)) * (size // 256)
    with RegistryPusher(registry.url, repository) as pusher:
        digest = pusher.put_blob(tarball)
        config = pusher.put_blob(b"{}")
        manifest = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config, "size": 2},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest, "size": size}],
        }
        pusher.put_manifest(expected_tag("zlib", str(ZLIB["version"]), ZLIB["hash"]), manifest)
        push_index(pusher, json.dumps(index, separators=(",", ":")).encode())
    return digest, registry.workdir


def test_oci_deep_streams_a_big_layer_rather_than_holding_it(tmp_path: Path) -> None:
    """--deep over a registry fetched each own tarball whole into memory (sixteen at
    once), then hashed it: an 8 MB layer now passes through a few kB at a time."""
    size = 8 << 20
    with Registry() as registry:
        _push_one_big(registry, "cache/big", size)
        tracemalloc.start()
        try:
            result = _verify(tmp_path, f"oci+http://{registry.host}/cache/big", deep=True)
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert result.problems == () and "checksums" in result.checks and result.binaries == 1
    assert peak < size // 2, f"peak {peak:,} bytes"


def test_oci_altered_and_truncated_layers(tmp_path: Path) -> None:
    index = json.loads(write_mirror(tmp_path / "src", _records(), layout=2, spec_files=False).index_path.read_bytes())
    storage = tmp_path / "storage"
    with Registry(storage) as registry:
        pushed = push_spack_cache(registry.url, "cache/spack", index)
        url = f"oci+http://{registry.host}/cache/spack"
        base = f"http://{registry.host}/v2/cache/spack"
        layers = {}
        for data in storage.rglob("blobs/sha256/*/*/data"):
            layers[data.parent.name] = data
        from tests.ingest.test_verify import _last_layer

        digest = _last_layer(registry, "cache/spack", pushed.tags[CURL["hash"]])
        _flip(layers[digest])
        assert _verify(tmp_path, url).problems == ()
        assert _found(_verify(tmp_path, url, deep=True), base) == {("tarball-checksum", f"blobs/sha256:{digest}")}
        layers[digest].write_bytes(layers[digest].read_bytes()[:10])
        assert _found(_verify(tmp_path, url, deep=True), base) == {("tarball-size", f"blobs/sha256:{digest}")}
