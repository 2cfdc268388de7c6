"""``cachedex verify``: Spack's signed fixture, signed v3 mirrors (a key made at test time)
over a real nginx, each tampered copy reported precisely and nothing else, an OCI
registry with a missing layer, what the catalog keeps, the command and the API."""

from __future__ import annotations

import asyncio
import hashlib
import http.client
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
import httpx
import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.cli.verify_command import verify_command
from cachedex.config import parse_config
from cachedex.demo.mirrorgen import edge, make_node, publish_keys, write_mirror
from cachedex.ingest.manifests import read_clearsigned, spec_manifest_path
from cachedex.ingest.signatures import Keyring
from cachedex.ingest.sync import sync
from cachedex.ingest.verify import MirrorVerification, VerifyReport, verify
from tests.helpers import MIRRORS, Demo, dump, make_config
from tests.ingest.test_signatures import FIXTURE, TestKey
from tests.registry import Registry, push_spack_cache
from tests.servers import Nginx

# -- a signed v3 mirror, made once ---------------------------------------------------------------

GCC = make_node("gcc", "13.2.0", external_path="/usr")
ZLIB = make_node("zlib", "1.3.1", dependencies=[edge(GCC, ("build",), ("c",))])
OPENSSL = make_node("openssl", "3.4.0", dependencies=[edge(GCC, ("build",), ("c",)), edge(ZLIB, ("build", "link"))])
CURL = make_node("curl", "8.11.1", dependencies=[edge(OPENSSL, ("build", "link")), edge(ZLIB, ("build", "link"))])
CMAKE = make_node("cmake", "3.31.2", dependencies=[edge(CURL, ("build", "link")), edge(ZLIB, ("build", "link"))])
LISTED = [ZLIB, OPENSSL, CURL, CMAKE]
SIZES = {node["hash"]: 3000 + 1000 * i for i, node in enumerate(LISTED)}


def _records(unlisted: tuple[str, ...] = ()) -> list[tuple[dict[str, Any], bool]]:
    return [(GCC, False), *((n, n["name"] not in unlisted) for n in LISTED)]


@pytest.fixture(scope="module")
def signing_keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestKey, TestKey]]:
    folder = tmp_path_factory.mktemp("keys")
    a, b = TestKey(folder / "a", "mirror key"), TestKey(folder / "b", "another key")
    yield a, b
    a.close()
    b.close()


def _write_signed(dest: Path, key: TestKey, unlisted: tuple[str, ...] = ()) -> Path:
    write_mirror(dest, _records(unlisted), layout=3, sizes=SIZES, tarballs=True, sign=key.sign)
    publish_keys(dest, {key.fingerprint: key.public}, layout=3)
    return dest


@pytest.fixture(scope="module")
def signed_v3(tmp_path_factory: pytest.TempPathFactory, signing_keys: tuple[TestKey, TestKey]) -> Path:
    """A v3 mirror of four listed specs (and an external gcc), binaries included, each
    spec manifest clearsigned by key ``a``, whose public key it publishes."""
    return _write_signed(tmp_path_factory.mktemp("signed") / "m", signing_keys[0])


@pytest.fixture
def mirror(tmp_path: Path, signed_v3: Path) -> Path:
    """A copy of the signed mirror, for a test to tamper with."""
    return Path(shutil.copytree(signed_v3, tmp_path / "m", symlinks=True))


def _verify(tmp_path: Path, url: str, *, deep: bool = False, **tag: Any) -> MirrorVerification:
    config = make_config(tmp_path, [{"name": "t", "url": url, **tag}])
    with Catalog(config.catalog) as catalog:
        report = verify(config, catalog, deep=deep)
    assert isinstance(report, VerifyReport) and len(report.tags) == 1
    return report.tags[0].mirrors[0]


def _found(result: MirrorVerification, root: Path | str) -> set[tuple[str, str]]:
    """(kind, path under the mirror) of every problem; each URL names the mirror's file."""
    base = str(root).rstrip("/") + "/"
    assert all(p.url.startswith(base) and "\n" not in p.message for p in result.problems), result.problems
    return {(p.kind, p.url[len(base) :]) for p in result.problems}


def _manifest(name: str) -> str:
    node = next(n for n in LISTED if n["name"] == name)
    return spec_manifest_path(node["name"], node["version"], node["hash"])


def _blob(root: Path, name: str, media: str) -> str:
    """Path of a spec's tarball (``tar``) or spec blob (``spec``), from its manifest."""
    data = json.loads(read_clearsigned((root / _manifest(name)).read_text()))
    record = next(r for r in data["data"] if (media in r["mediaType"]))
    return f"blobs/sha256/{record['checksum'][:2]}/{record['checksum']}"


def _resign(root: Path, name: str, key: TestKey, change: Any = None) -> None:
    path = root / _manifest(name)
    data = json.loads(read_clearsigned(path.read_text()))
    if change is not None:
        change(data)
    path.write_text(key.sign(json.dumps(data, indent=0)))


# -- Spack's signed fixture ----------------------------------------------------------------------


def test_the_signed_fixture(tmp_path: Path) -> None:
    root = MIRRORS / "v2_layout/signed"
    result = _verify(tmp_path, str(root))
    assert result.layout == 2 and result.listed == 6 and result.found == 6 and result.binaries == 0
    assert result.signing == "signed" and len(result.keys) == 3  # every .pub under _pgp/, listed or not
    # The fixture holds no tarballs: said once per spec, and nothing else but the three
    # signatures over altered text (see FIXTURE in test_signatures.py).
    missing = {p.hash for p in result.problems if p.kind == "tarball-missing"}
    assert len(missing) == 6 and len([p for p in result.problems if p.kind == "tarball-missing"]) == 6
    bad = {p.url.rsplit("/", 1)[1].removesuffix(".spec.json.sig") for p in result.problems if p.kind == "signature-bad"}
    assert bad == {stem for stem, (status, _) in FIXTURE.items() if status == "bad"}
    assert len(result.problems) == 9
    assert (result.signatures.signed, result.signatures.bad, result.signatures.unsigned) == (3, 3, 0)
    assert "unindexed" in result.checks and "dependencies" in result.checks


def test_without_gpg_a_signed_mirror_is_not_called_unsigned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No gpg on the PATH: the signatures are not checked (and that is said), but the
    mirror still signs its specs; the unsigned fixture is still unsigned."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-gpg-here"))
    signed = _verify(tmp_path, str(MIRRORS / "v2_layout/signed"))
    assert signed.signing == "signed"
    assert any(s.startswith("signatures: ") for s in signed.skipped)
    assert {p.kind for p in signed.problems} == {"tarball-missing"}  # (none checked, none bad)
    unsigned = _verify(tmp_path, str(MIRRORS / "v2_layout/unsigned"))
    assert unsigned.signing == "unsigned" and unsigned.signatures.unsigned == 6


def test_the_signed_fixture_over_http_knows_only_the_keys_its_key_index_names(tmp_path: Path) -> None:
    # Over HTTP the _pgp/ folder cannot be listed: only CBAB..., which _pgp/index.json
    # names, is published; the spec files signed by the two other keys are by unknown keys.
    with Nginx(MIRRORS / "v2_layout") as nginx:
        result = _verify(tmp_path, f"{nginx.url}/signed")
    assert result.keys == ("CBAB2C1032C6FF5078049EC0FA61D50C12CAD37E",)
    kinds = sorted(p.kind for p in result.problems)
    assert kinds == ["signature-unknown-key"] * 4 + ["tarball-missing"] * 6
    assert (result.signatures.signed, result.signatures.unknown_key, result.found) == (2, 4, 6)
    assert result.skipped == ("unindexed: this mirror's folders cannot be listed",)


# -- signed v3 mirrors, clean --------------------------------------------------------------------


def test_a_signed_v3_mirror_verifies_cleanly_over_nginx(tmp_path: Path, signed_v3: Path) -> None:
    with Nginx(signed_v3.parent, log_requests=True) as nginx:
        result = _verify(tmp_path, f"{nginx.url}/m")
        assert result.problems == () and result.ok
        assert (result.listed, result.found, result.binaries) == (4, 4, 4)
        assert result.signing == "signed" and result.signatures.signed == 4
        assert result.skipped == ("unindexed: this mirror's folders cannot be listed",)
        served = nginx.requests()
        tarballs = {_blob(signed_v3, n["name"], "tar") for n in LISTED}
        # existence by HEAD: no binary is downloaded without --deep
        assert {p.removeprefix("/m/") for m, p, _ in served if m == "HEAD"} == tarballs
        assert not [p for m, p, _ in served if m == "GET" and p.removeprefix("/m/") in tarballs]
        deep = _verify(tmp_path, f"{nginx.url}/m", deep=True)
        assert deep.problems == () and "checksums" in deep.checks
        assert len([p for m, p, _ in nginx.requests() if m == "GET" and p.removeprefix("/m/") in tarballs]) == 4


def test_a_private_mirror_verifies_with_the_credentials_the_config_names(
    tmp_path: Path, signed_v3: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every read of a private mirror carries its credentials: the index and spec files,
    each binary's HEAD and, with --deep, its whole read."""
    users = tmp_path / "htpasswd"
    users.write_text("reader:{PLAIN}s3cret\n")
    private = f'auth_basic "private mirror"; auth_basic_user_file {users};'
    monkeypatch.setenv("T_USER", "reader")
    monkeypatch.setenv("T_PASS", "s3cret")
    with Nginx(signed_v3.parent, extra=private, log_requests=True) as nginx:
        document = {
            "catalog": "cat.sqlite",
            "tags": [{"name": "t", "url": f"{nginx.url}/m"}],
            "registries": {f"127.0.0.1:{nginx.port}": {"username_env": "T_USER", "password_env": "T_PASS"}},
        }
        config = parse_config(document, base=tmp_path)
        with Catalog(config.catalog) as catalog:
            report = verify(config, catalog, deep=True)
        assert isinstance(report, VerifyReport)
        result = report.tags[0].mirrors[0]
        assert result.problems == () and (result.listed, result.found, result.binaries) == (4, 4, 4)
        assert "checksums" in result.checks and result.signatures.signed == 4
        served = nginx.requests()
        assert {method for method, _, _ in served} == {"GET", "HEAD"} and {s for _, _, s in served} == {200}


def test_binaries_a_server_labels_gzip_are_hashed_as_stored(tmp_path: Path, signed_v3: Path) -> None:
    """S3 objects uploaded with Content-Encoding: gzip: their checksum is of the bytes
    stored, which Spack downloads and checks as they are, not of what gunzip makes."""
    with Nginx(signed_v3.parent, extra="location /m/blobs/ { add_header Content-Encoding gzip; }") as nginx:
        deep = _verify(tmp_path, f"{nginx.url}/m", deep=True)
    assert deep.problems == () and "checksums" in deep.checks


def test_a_signed_v3_mirror_verifies_cleanly_from_a_folder(tmp_path: Path, signed_v3: Path) -> None:
    result = _verify(tmp_path, str(signed_v3), deep=True)
    assert result.problems == () and result.skipped == ()
    assert set(result.checks) >= {"index", "keys", "manifests", "binaries", "spec blobs", "checksums", "unindexed"}


# -- each tampered copy: exactly its problem ------------------------------------------------------


def test_a_flipped_byte_in_a_tarball_is_found_by_deep_only(tmp_path: Path, mirror: Path) -> None:
    tarball = _blob(mirror, "curl", "tar")
    data = bytearray((mirror / tarball).read_bytes())
    data[len(data) // 2] ^= 0x01
    (mirror / tarball).write_bytes(bytes(data))
    assert _verify(tmp_path, str(mirror)).problems == ()
    assert _found(_verify(tmp_path, str(mirror), deep=True), mirror) == {("tarball-checksum", tarball)}


def test_a_removed_spec_manifest(tmp_path: Path, mirror: Path) -> None:
    (mirror / _manifest("openssl")).unlink()
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("manifest-missing", _manifest("openssl"))}
    assert (result.found, result.binaries) == (3, 3)


def test_a_manifest_too_big_to_read_is_named_once(tmp_path: Path, mirror: Path) -> None:
    with open(mirror / _manifest("openssl"), "ab") as handle:
        handle.write(b" " * 1_200_000)  # past limits.manifest_bytes
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("manifest-unreadable", _manifest("openssl"))}
    (problem,) = result.problems
    assert problem.message.startswith("openssl@3.4.0 /") and "larger than 1,000,000 bytes" in problem.message
    assert "spec.manifest.json" not in problem.message  # the row names the URL already


def test_an_orphan_manifest(tmp_path: Path, mirror: Path) -> None:
    orphan = "v3/manifests/spec/zlib/zlib-1.2.0-" + "q" * 32 + ".spec.manifest.json"
    shutil.copy(mirror / _manifest("zlib"), mirror / orphan)
    assert _found(_verify(tmp_path, str(mirror)), mirror) == {("unindexed", orphan)}


def test_a_tarball_whose_size_differs_from_its_manifest(tmp_path: Path, mirror: Path) -> None:
    tarball = _blob(mirror, "zlib", "tar")
    with open(mirror / tarball, "ab") as handle:
        handle.write(b"\0")
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("tarball-size", tarball)}
    assert "3,001 bytes, its manifest says 3,000" in result.problems[0].message


def test_a_signature_by_another_key(tmp_path: Path, mirror: Path, signing_keys: tuple[TestKey, TestKey]) -> None:
    _resign(mirror, "curl", signing_keys[1])
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("signature-unknown-key", _manifest("curl"))}
    assert signing_keys[1].fingerprint[-16:] in result.problems[0].message
    assert (result.signatures.signed, result.signatures.unknown_key) == (3, 1)


def test_a_mangled_signature(tmp_path: Path, mirror: Path) -> None:
    path = mirror / _manifest("curl")
    lines = path.read_text().splitlines()
    at = lines.index("-----BEGIN PGP SIGNATURE-----") + 2
    lines[at] = lines[at][:8] + ("x" if lines[at][8] != "x" else "y") + lines[at][9:]
    path.write_text("\n".join(lines) + "\n")
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("signature-bad", _manifest("curl"))}
    assert result.signatures.bad == 1


def test_an_unsigned_manifest_in_a_signed_mirror(tmp_path: Path, mirror: Path) -> None:
    path = mirror / _manifest("curl")
    path.write_text(read_clearsigned(path.read_text()))
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("unsigned", _manifest("curl"))}
    assert (result.signatures.signed, result.signatures.unsigned) == (3, 1)


def test_a_missing_public_key(tmp_path: Path, mirror: Path, signing_keys: tuple[TestKey, TestKey]) -> None:
    key = f"v3/manifests/key/{signing_keys[0].fingerprint}.key.manifest.json"
    (mirror / key).unlink()
    result = _verify(tmp_path, str(mirror))
    unknown = {("signature-unknown-key", _manifest(n["name"])) for n in LISTED}
    assert _found(result, mirror) == {("key-missing", key), *unknown}
    assert result.keys == () and result.signatures.unknown_key == 4


def test_a_key_file_holding_another_key(tmp_path: Path, signing_keys: tuple[TestKey, TestKey]) -> None:
    """A key published under one fingerprint that holds another key is said; the
    manifests signed by the key it names are then by an unknown key."""
    a, b = signing_keys
    dest = tmp_path / "m"
    write_mirror(dest, _records(), layout=3, sizes=SIZES, tarballs=True, sign=a.sign)
    publish_keys(dest, {a.fingerprint: b.public}, layout=3)
    result = _verify(tmp_path, str(dest))
    unreadable = [p for p in result.problems if p.kind == "key-unreadable"]
    assert len(unreadable) == 1 and unreadable[0].message.endswith(f"holds key {b.fingerprint}, not {a.fingerprint}")
    assert unreadable[0].url.startswith(str(dest / "blobs")), unreadable[0].url
    assert result.signatures.unknown_key == 4 and result.signatures.signed == 0


def test_a_missing_key_index_blob(tmp_path: Path, mirror: Path) -> None:
    """The key index's manifest is there, the blob it names is not: said as missing (not
    taken for an unsigned mirror); the keys found in the folder still check signatures."""
    manifest = json.loads((mirror / "v3/manifests/key/keys.manifest.json").read_text())
    (record,) = manifest["data"]
    blob = f"blobs/sha256/{record['checksum'][:2]}/{record['checksum']}"
    (mirror / blob).unlink()
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("key-missing", blob)}
    assert result.keys and result.signatures.signed == 4


def test_an_index_blob_checksum_mismatch(tmp_path: Path, mirror: Path) -> None:
    manifest = json.loads((mirror / "v3/manifests/index/index.manifest.json").read_text())
    checksum = manifest["data"][0]["checksum"]
    blob = f"blobs/sha256/{checksum[:2]}/{checksum}"
    data = (mirror / blob).read_bytes()
    (mirror / blob).write_bytes(data.replace(b'"ref_count":1', b'"ref_count":2', 1))
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("index-checksum", blob)}
    assert result.layout is None and result.checks == ("index",)


def test_a_dependency_missing_from_the_tag(tmp_path: Path, signing_keys: tuple[TestKey, TestKey]) -> None:
    root = _write_signed(tmp_path / "m", signing_keys[0], unlisted=("openssl",))
    result = _verify(tmp_path, str(root))
    (problem,) = result.problems
    assert (problem.kind, problem.hash) == ("dependency-missing", CURL["hash"])
    assert f"needs openssl /{OPENSSL['hash']}" in problem.message and problem.url.endswith(_blob_of_index(root))
    # listed by another mirror of the tag (a stack), it resolves
    _write_signed(tmp_path / "m/stack", signing_keys[0])
    config = make_config(tmp_path, [{"name": "t", "url": str(root), "stacks": ["stack"]}])
    with Catalog(config.catalog) as catalog:
        report = verify(config, catalog)
    assert report.ok, [p.line() for t in report.tags for m in t.mirrors for p in m.problems]


@pytest.mark.parametrize("spec", [{"nodes": []}, {"nodes": [{"name": "curl"}]}])
def test_a_spec_blob_without_a_root_hash_is_unreadable(
    tmp_path: Path, mirror: Path, signing_keys: tuple[TestKey, TestKey], spec: dict[str, Any]
) -> None:
    """It was said to hold "the spec of None" (a DAG hash mismatch)."""
    body = json.dumps({"spec": spec}).encode()
    checksum = hashlib.sha256(body).hexdigest()
    blob = f"blobs/sha256/{checksum[:2]}/{checksum}"
    (mirror / blob).parent.mkdir(parents=True, exist_ok=True)
    (mirror / blob).write_bytes(body)

    def point_at_it(data: dict[str, Any]) -> None:
        record = next(r for r in data["data"] if "spec" in r["mediaType"])
        record.update(checksum=checksum, contentLength=len(body), compression="none")

    _resign(mirror, "curl", signing_keys[0], point_at_it)
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("spec-blob-unreadable", blob)}
    assert result.problems[0].message.endswith(": not a spec file (no root node with a hash)")


def test_an_index_that_is_not_json_is_summed_up_as_unreadable(tmp_path: Path, mirror: Path) -> None:
    """Its checksum right, its bytes no index: the mirror was summed up as "0 listed; 0
    manifests; 0 binaries; unsigned", as if read and empty."""
    from cachedex.cli.verify_command import summary

    manifest = mirror / "v3/manifests/index/index.manifest.json"
    document = json.loads(manifest.read_text())
    body = b"{not json"
    checksum = hashlib.sha256(body).hexdigest()
    (mirror / f"blobs/sha256/{checksum[:2]}").mkdir(parents=True, exist_ok=True)
    (mirror / f"blobs/sha256/{checksum[:2]}/{checksum}").write_bytes(body)
    document["data"][0].update(checksum=checksum, contentLength=len(body))
    manifest.write_text(json.dumps(document))
    result = _verify(tmp_path, str(mirror))
    assert [p.kind for p in result.problems] == ["index-unreadable"] and result.layout is None
    assert summary(result) == f"t/root: {mirror}: index unreadable; 1 problem (1 index-unreadable)"


def _blob_of_index(root: Path) -> str:
    checksum = json.loads((root / "v3/manifests/index/index.manifest.json").read_text())["data"][0]["checksum"]
    return f"blobs/sha256/{checksum[:2]}/{checksum}"


def test_a_blob_whose_dag_hash_differs_from_its_name(
    tmp_path: Path, mirror: Path, signing_keys: tuple[TestKey, TestKey]
) -> None:
    zlib_spec = _blob(mirror, "zlib", "spec")
    zlib = json.loads(read_clearsigned((mirror / _manifest("zlib")).read_text()))
    zlib_record = next(r for r in zlib["data"] if "spec" in r["mediaType"])

    def point_at_zlib(data: dict[str, Any]) -> None:
        record = next(r for r in data["data"] if "spec" in r["mediaType"])
        record.update(checksum=zlib_record["checksum"], contentLength=zlib_record["contentLength"])

    _resign(mirror, "curl", signing_keys[0], point_at_zlib)  # pushed by someone holding the key
    result = _verify(tmp_path, str(mirror))
    assert _found(result, mirror) == {("dag-hash-mismatch", zlib_spec)}
    assert result.problems[0].hash == CURL["hash"] and ZLIB["hash"] in result.problems[0].message


def test_a_folder_where_a_binary_should_be_is_no_binary(tmp_path: Path, mirror: Path) -> None:
    """A folder's size (4,096 bytes) was compared with the manifest's as a binary's."""
    tarball = _blob(mirror, "curl", "tar")
    (mirror / tarball).unlink()
    (mirror / tarball).mkdir()
    result = _verify(tmp_path, str(mirror), deep=True)
    assert _found(result, mirror) == {("tarball-missing", tarball)}
    assert result.problems[0].hash == CURL["hash"] and result.binaries == 3


def test_a_binary_deep_cannot_read_is_its_spec_s_problem(tmp_path: Path, signed_v3: Path) -> None:
    """A binary that answers HEAD but not GET: its problem names its spec, as the
    other problems of a binary do (catalog.spec_verifications lists it on its page)."""
    tarball = _blob(signed_v3, "curl", "tar")
    refuse = f"location = /m/{tarball} {{ if ($request_method = GET) {{ return 403; }} }}"
    with Nginx(signed_v3.parent, extra=refuse) as nginx:
        assert _verify(tmp_path, f"{nginx.url}/m").problems == ()
        result = _verify(tmp_path, f"{nginx.url}/m", deep=True)
    assert _found(result, f"{nginx.url}/m") == {("tarball-unreadable", tarball)}
    assert result.problems[0].hash == CURL["hash"]
    assert result.problems[0].message.startswith(f"binary of curl@8.11.1 /{CURL['hash']}: ")


def test_an_index_that_is_gone_is_missing_not_unreadable(tmp_path: Path, mirror: Path) -> None:
    """v2: index.json deleted beside its index.json.hash; v3: the index blob the index
    manifest lists deleted. Either mirror has no index: index-missing."""
    v2 = Path(shutil.copytree(MIRRORS / "v2_layout/signed", tmp_path / "v2"))
    (v2 / "build_cache/index.json").unlink()
    assert _found(_verify(tmp_path, str(v2)), v2) == {("index-missing", "build_cache/index.json")}
    blob = _blob_of_index(mirror)
    (mirror / blob).unlink()
    assert _found(_verify(tmp_path, str(mirror)), mirror) == {("index-missing", blob)}


@pytest.mark.parametrize("where", ["no mirror", "no view"])
def test_views_that_cannot_be_found_are_the_root_s_problem_counted_once(
    tmp_path: Path, mirror: Path, where: str
) -> None:
    """views: all on a folder that is not there, or on a mirror with no view: one
    verification of the root (not two, each counted), with its one problem, which names
    the folder once."""
    url = str(tmp_path / "nothere") if where == "no mirror" else str(mirror)
    config = make_config(tmp_path, [{"name": "t", "url": url, "views": "all"}])
    with Catalog(config.catalog) as catalog:
        report = verify(config, catalog)
    (tag,) = report.tags
    assert [(m.tag, m.stack) for m in tag.mirrors] == [("t", "root")]
    unlisted = [p for p in tag.mirrors[0].problems if p.kind == "mirror-unreadable"]
    assert len(unlisted) == 1 and unlisted[0].message.startswith("its views cannot be found: ")
    assert url not in unlisted[0].message  # (the line prints the URL, then this)
    assert report.problems == tag.problems == tag.mirrors[0].problem_count
    if where == "no view":  # the root itself is sound: its views are the only problem
        assert _found(tag.mirrors[0], mirror) == {("mirror-unreadable", "v3/manifests/index/")}


@pytest.mark.parametrize("root_index", [True, False])
def test_a_found_view_that_cannot_be_a_stack_is_the_root_s_problem(
    tmp_path: Path, mirror: Path, root_index: bool
) -> None:
    """views: all with a view named ``bad name`` and one named ``root``: they were a
    problem of no mirror (the first failed the tag's view search, the second went
    unsaid); the other view is verified, and the root reports both, even in a mirror of
    views only (whose root, with no index of its own, is otherwise not reported)."""
    index = mirror / "v3/manifests/index"
    for view in ("good", "bad name", "root"):
        (index / view).mkdir()
        shutil.copy(index / "index.manifest.json", index / view / "index.manifest.json")
    if not root_index:
        (index / "index.manifest.json").unlink()
    config = make_config(tmp_path, [{"name": "t", "url": str(mirror), "views": "all"}])
    with Catalog(config.catalog) as catalog:
        report = verify(config, catalog)
    (tag,) = report.tags
    assert [(m.stack, m.view) for m in tag.mirrors] == [("root", None), ("good", "good")]
    assert tag.mirrors[1].problems == () and tag.mirrors[1].listed == len(LISTED)
    root = tag.mirrors[0]
    assert _found(root, mirror) == {
        ("index-unreadable", "v3/manifests/index/bad name/index.manifest.json"),
        ("index-unreadable", "v3/manifests/index/root/index.manifest.json"),
    }
    messages = sorted(p.message for p in root.problems)
    assert messages[0].startswith("view not read as a stack: 'root' names tag t's own mirror, not a stack; ")
    assert messages[1].startswith("view not read as a stack: its name 'bad name' may hold only letters")
    assert report.problems == 2


@pytest.mark.parametrize("over", ["folder", "http"])
def test_a_v2_spec_file_that_is_not_one_is_named_as_the_file_read(tmp_path: Path, over: str) -> None:
    """A .spec.json.sig holding no signature (emptied, garbage): its problems named a
    .spec.json, which is not there."""
    root = Path(shutil.copytree(MIRRORS / "v2_layout/signed", tmp_path / "v2/signed"))
    dag_hash = "jr3yipyxyjulcdvckwwwjrrumis7glpa"
    name = f"build_cache/test-debian6-m1-gcc-10.2.1-libelf-0.8.13-{dag_hash}.spec.json.sig"
    (root / name).write_text("garbage\n")
    if over == "folder":
        result = _verify(tmp_path, str(root))
    else:
        with Nginx(tmp_path / "v2") as nginx:
            result = _verify(tmp_path, f"{nginx.url}/signed")
    mine = {(p.kind, p.url) for p in result.problems if p.hash == dag_hash and p.kind != "tarball-missing"}
    url = f"{root}/{name}" if over == "folder" else f"{nginx.url}/signed/{name}"
    assert mine == {("manifest-unreadable", url), ("unsigned", url)}


def test_a_v2_spec_file_without_a_root_hash_is_unreadable(tmp_path: Path) -> None:
    """It was said to hold "the spec of None"."""
    root = Path(shutil.copytree(MIRRORS / "v2_layout/signed", tmp_path / "v2/signed"))
    dag_hash = "jr3yipyxyjulcdvckwwwjrrumis7glpa"
    name = f"build_cache/test-debian6-m1-gcc-10.2.1-libelf-0.8.13-{dag_hash}.spec.json.sig"
    (root / name).write_text('{"spec": {"nodes": []}}')
    result = _verify(tmp_path, str(root))
    mine = {(p.kind, p.message) for p in result.problems if p.hash == dag_hash and p.kind != "tarball-missing"}
    assert ("manifest-unreadable", "not a spec file (no root node with a hash)") in mine, mine
    assert not any(kind == "dag-hash-mismatch" for kind, _ in mine), mine


# -- OCI --------------------------------------------------------------------------------------------


def test_an_oci_cache_and_a_missing_layer(tmp_path: Path) -> None:
    index = json.loads(write_mirror(tmp_path / "src", _records(), layout=2, spec_files=False).index_path.read_bytes())
    with Registry() as registry:
        pushed = push_spack_cache(registry.url, "cache/spack", index)
        url = f"oci+http://{registry.host}/cache/spack"
        result = _verify(tmp_path, url, deep=True)
        assert result.problems == () and result.layout == 100 and result.signing == "none"
        assert (result.listed, result.found, result.binaries) == (4, 4, 4)
        # cmake's own tarball (nothing depends on it): its image's last layer
        digest = "sha256:" + _last_layer(registry, "cache/spack", pushed.tags[CMAKE["hash"]])
        connection = http.client.HTTPConnection(registry.host)
        try:
            connection.request("DELETE", f"/v2/cache/spack/blobs/{digest}")
            assert connection.getresponse().status == 202
        finally:
            connection.close()
        result = _verify(tmp_path, url)
        base = f"http://{registry.host}/v2/cache/spack"
        assert _found(result, base) == {("layer-missing", f"blobs/{digest}")}
        assert result.problems[0].hash == CMAKE["hash"] and "its own tarball" in result.problems[0].message
        # An image index where a spec's image goes: said once, its URL not again in the message.
        other = next(h for h in pushed.tags if h != CMAKE["hash"])
        index_type = "application/vnd.oci.image.index.v1+json"
        connection = http.client.HTTPConnection(registry.host)
        try:
            body = json.dumps({"schemaVersion": 2, "mediaType": index_type, "manifests": []}).encode()
            connection.request(
                "PUT", f"/v2/cache/spack/manifests/{pushed.tags[other]}", body, {"Content-Type": index_type}
            )
            assert connection.getresponse().status == 201
        finally:
            connection.close()
        (problem,) = [p for p in _verify(tmp_path, url).problems if p.hash == other]
        assert (problem.kind, problem.url) == ("manifest-unreadable", f"{base}/manifests/{pushed.tags[other]}")
        assert problem.message.endswith(f": not an image manifest (mediaType '{index_type}')"), problem.message
        assert "http" not in problem.message, problem.message
        # An image of no layers has no tarball: said, and a deep check reads no last layer of it.
        empty = next(h for h in pushed.tags if h not in (CMAKE["hash"], other))
        image_type = "application/vnd.oci.image.manifest.v1+json"
        connection = http.client.HTTPConnection(registry.host)
        try:
            path = f"/v2/cache/spack/manifests/{pushed.tags[empty]}"
            connection.request("GET", path, headers={"Accept": image_type})
            image = json.loads(connection.getresponse().read()) | {"layers": []}
            connection.request("PUT", path, json.dumps(image).encode(), {"Content-Type": image_type})
            assert connection.getresponse().status == 201
        finally:
            connection.close()
        (problem,) = [p for p in _verify(tmp_path, url, deep=True).problems if p.hash == empty]
        assert (problem.kind, problem.url) == ("manifest-unreadable", f"{base}/manifests/{pushed.tags[empty]}")
        assert problem.message.endswith(": the image lists no layers"), problem.message


def _last_layer(registry: Registry, repository: str, tag: str) -> str:
    connection = http.client.HTTPConnection(urlsplit(registry.url).netloc)
    try:
        connection.request(
            "GET", f"/v2/{repository}/manifests/{tag}", headers={"Accept": "application/vnd.oci.image.manifest.v1+json"}
        )
        return str(json.loads(connection.getresponse().read())["layers"][-1]["digest"]).removeprefix("sha256:")
    finally:
        connection.close()


# -- the catalog: kept, and never changing the listing ------------------------------------------------


def _listing(catalog: Catalog) -> list[tuple[object, ...]]:
    return [row for row in dump(catalog) if not str(row[0]).startswith("verification")]


def test_verification_is_kept_and_never_changes_the_listing(
    tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (mirror / _manifest("openssl")).unlink()
    config = make_config(tmp_path, [{"name": "t", "url": str(mirror)}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok
        before = _listing(catalog)
        verify(config, catalog)
        calls: list[int] = []
        original = Keyring.verify

        def counted(self: Keyring, data: bytes | bytearray) -> Any:
            calls.append(1)
            return original(self, data)

        monkeypatch.setattr(Keyring, "verify", counted)
        second = verify(config, catalog)
        assert calls == []  # the unchanged manifests' signatures were verified last time, with the same keys
        assert _listing(catalog) == before
        (latest,) = catalog.latest_verifications("t")
        assert latest.id == second.tags[0].mirrors[0].id and latest.problem_count == 1
        assert [p.kind for p in latest.problems] == ["manifest-missing"]
        tag = catalog.tag_verification("t")
        assert tag is not None and not tag.ok and tag.problems == 1
        (curl,) = catalog.spec_verifications(CURL["hash"])
        assert (curl.signature, curl.problems) == ("signed", ())
        (openssl,) = catalog.spec_verifications(OPENSSL["hash"])
        assert openssl.signature is None and [p.kind for p in openssl.problems] == ["manifest-missing"]
        assert catalog.tag_verification("other") is None


# -- the command and the API --------------------------------------------------------------------------


def _cli() -> click.Group:
    """``cachedex`` with the verify command, as cli/__init__.py registers it."""
    return click.Group("cachedex", params=main.params, callback=main.callback, commands={"verify": verify_command})


def _config_file(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "cachedex.yaml"
    path.write_text(json.dumps({"catalog": "cat.sqlite", "tags": [{"name": "t", "url": url}]}))
    return path


def test_the_command_exit_codes_lines_and_json(tmp_path: Path, mirror: Path) -> None:
    config = _config_file(tmp_path, str(mirror))
    runner = CliRunner()
    clean = runner.invoke(_cli(), ["--config", str(config), "verify"])
    assert clean.exit_code == 0, clean.output
    assert "t/root (v3," in clean.output and "4 signed (1 key published); no problem" in clean.output
    (mirror / _manifest("openssl")).unlink()
    broken = runner.invoke(_cli(), ["--config", str(config), "verify", "t"])
    assert broken.exit_code == 1
    assert (
        broken.output.splitlines()[0] == f"{mirror / _manifest('openssl')}: openssl@3.4.0 /{OPENSSL['hash']}: not found"
    )
    as_json = runner.invoke(_cli(), ["--config", str(config), "verify", "--json"])
    report = json.loads(as_json.stdout)
    assert as_json.exit_code == 1 and report["ok"] is False and report["problems"] == 1
    assert report["tags"][0]["mirrors"][0]["problems"][0]["kind"] == "manifest-missing"
    assert runner.invoke(_cli(), ["--config", str(config), "verify", "nope"]).exit_code == 2
    assert runner.invoke(_cli(), ["--config", str(config), "verify", "--bogus"]).exit_code == 2


def _get(app: Any, path: str) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await client.get(path)

    return asyncio.run(go())


def test_the_api_returns_the_latest_report(tmp_path: Path, mirror: Path) -> None:
    from cachedex.publish.serve import create_app

    config = make_config(tmp_path, [{"name": "t", "url": str(mirror)}])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        app = create_app(config.catalog)
        never = _get(app, "/api/tags/t/verify")
        assert never.status_code == 404 and "never verified" in never.json()["error"]["message"]
        assert _get(app, "/api/tags/nope/verify").status_code == 404
        (mirror / _manifest("zlib")).unlink()
        verify(config, catalog)
        # a new app: the response cache is keyed on the catalog's sync state, which a
        # verification does not change (see the report: Catalog.state_token)
        app = create_app(config.catalog)
        answer = _get(app, "/api/tags/t/verify")
        assert answer.status_code == 200
        body = answer.json()
        assert body["tag"] == "t" and body["problems"] == 1 and body["ok"] is False
        assert body["mirrors"][0]["problems"][0]["kind"] == "manifest-missing"
        document = _get(app, "/api/openapi.json").json()
        assert "/api/tags/{tag}/verify" in document["paths"]
        assert "TagVerification" in document["components"]["schemas"]


def test_mirrorgen_signs_for_real_and_publishes_keys_as_spack(
    signed_v3: Path, signing_keys: tuple[TestKey, TestKey]
) -> None:
    key = signing_keys[0]
    text = (signed_v3 / _manifest("zlib")).read_text()
    assert text.startswith("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n")
    index = json.loads((signed_v3 / "v3/manifests/key/keys.manifest.json").read_text())
    (record,) = index["data"]
    assert record["mediaType"] == "application/vnd.spack.keyindex.v1+json"
    blob = (signed_v3 / f"blobs/sha256/{record['checksum'][:2]}/{record['checksum']}").read_bytes()
    assert (
        json.loads(blob) == {"keys": {key.fingerprint: {}}} and hashlib.sha256(blob).hexdigest() == record["checksum"]
    )
    (key_record,) = json.loads((signed_v3 / f"v3/manifests/key/{key.fingerprint}.key.manifest.json").read_text())[
        "data"
    ]
    assert key_record["mediaType"] == "application/pgp-keys" and key_record["compression"] == "none"
    armored = (signed_v3 / f"blobs/sha256/{key_record['checksum'][:2]}/{key_record['checksum']}").read_text()
    assert armored == key.public


def test_a_fault_repeated_per_spec_prints_some_of_it_and_counts_the_rest(
    demo_run: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mirror with one fault repeats it per spec: two big tags printed 950,000 lines.
    The text shows the first of each kind per mirror and how many more (--json: each)."""
    from cachedex.cli.verify_command import PRINTED_PER_KIND

    folder = tmp_path / "demo"
    shutil.copytree(demo_run.folder, folder, ignore=shutil.ignore_patterns("site", "jekyll"))
    config = ["--config", str(folder / "cachedex.yaml"), "verify", "develop"]
    report = json.loads(CliRunner().invoke(_cli(), [*config, "--json"]).stdout)
    root = next(m for m in report["tags"][0]["mirrors"] if m["stack"] == "root")
    kinds = Counter(problem["kind"] for problem in root["problems"])
    kind, count = kinds.most_common(1)[0]
    assert count > PRINTED_PER_KIND
    text = CliRunner().invoke(_cli(), config).output
    shown = {problem["url"] for problem in root["problems"] if problem["kind"] == kind}
    assert sum(line.split(": ", 1)[0] in shown for line in text.splitlines()) == PRINTED_PER_KIND
    assert f"... and {count - PRINTED_PER_KIND:,} more {kind} in develop/root (--json lists each)" in text
    summary = next(line for line in text.splitlines() if line.startswith("develop/root ("))
    assert f"{count:,} {kind}" in summary
    # The API lists the first of each mirror's problems, and counts them all.
    from cachedex.publish.serve import api, create_app

    monkeypatch.setattr(api, "VERIFY_PROBLEMS", 5)
    body = _get(create_app(folder / "cachedex.sqlite"), "/api/tags/develop/verify").json()
    answered = next(m for m in body["mirrors"] if m["stack"] == "root")
    assert len(answered["problems"]) == 5 and answered["problem_count"] == root["problem_count"] > 5


def test_a_verification_of_a_tag_forgotten_meanwhile_is_not_kept(
    tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `forget` while the tag was being verified removed the rows there were; the
    verification's then stayed, and a tag later given that name showed them as its own."""
    from cachedex.ingest import verify as verify_module

    config = make_config(tmp_path, [{"name": "t", "url": str(mirror)}])
    with Catalog(config.catalog) as catalog:
        assert sync(config, catalog)[0].ok
        check = verify_module._check_dependencies

        def forgotten_meanwhile(tag: str, findings: Any) -> None:
            check(tag, findings)
            catalog.forget_tags({tag: None})

        monkeypatch.setattr(verify_module, "_check_dependencies", forgotten_meanwhile)
        report = verify(config, catalog)
        assert report.tags[0].mirrors  # (said, not kept)
        assert catalog._db.execute("SELECT count(*) FROM verifications").fetchone()[0] == 0


def test_a_forgotten_tag_s_verifications_go_with_it(tmp_path: Path, mirror: Path) -> None:
    """A tag later given a forgotten tag's name does not show the forgotten one's
    verification as its own (nor its specs' verification rows)."""
    config = make_config(tmp_path, [{"name": "t", "url": str(mirror)}])
    with Catalog(config.catalog) as catalog:
        assert sync(config, catalog)[0].ok
        verify(config, catalog)
        assert catalog.tag_verification("t") is not None
        catalog.forget_tags({"t": None})
        assert sync(config, catalog)[0].ok
        assert catalog.tag_verification("t") is None
        assert catalog.all_spec_verifications() == {}
        tables = ("verifications", "verification_problems", "verification_signatures")
        assert [catalog._db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables] == [0, 0, 0]


def test_the_summary_lines_say_what_was_found_and_not_checked(
    tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder with no index is "no index" (not unreadable); each mirror's problems are
    named by kind, one kind too; without gpg a signed mirror's signatures are "not
    checked", not "0 signed (0 keys published)"."""
    runner = CliRunner()
    gone = runner.invoke(_cli(), ["--config", str(_config_file(tmp_path, str(tmp_path / "gone"))), "verify"])
    assert f"t/root: {tmp_path / 'gone'}: no index; 1 problem (1 index-missing)" in gone.output
    (mirror / _manifest("openssl")).unlink()
    broken = runner.invoke(_cli(), ["--config", str(_config_file(tmp_path, str(mirror))), "verify"])
    assert "; 1 problem (1 manifest-missing)" in broken.output
    monkeypatch.setenv("PATH", str(tmp_path / "no-gpg-here"))
    signed = str(MIRRORS / "v2_layout/signed")
    without = runner.invoke(_cli(), ["--config", str(_config_file(tmp_path, signed)), "verify"])
    assert "; signed, signatures not checked;" in without.output and "keys published" not in without.output
