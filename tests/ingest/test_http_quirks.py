"""What real hosts of public mirrors answer for a file they lack, served by a real nginx:
S3 read without ``s3:ListBucket`` (a public bucket without listing, CloudFront in front
of one) answers 403, not 404; some hosts answer any path with their HTML "not found"
page and status 200 (a soft 404). A missing optional file (v3's index manifest of a v2
mirror, ``index.json.hash``, a key index) is then as absent as after a 404; a missing
required one is said missing, by its URL, with what the server answered."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.config import HttpOptions
from cachedex.config.tags import RegistryAuth
from cachedex.demo.mirrorgen import write_mirror
from cachedex.errors import ConfigError, IndexFormatError, SourceError, SourceNotFound
from cachedex.ingest.discovery import with_discovered_tags
from cachedex.ingest.http import HttpClient
from cachedex.ingest.manifests import decode_manifest, manifest_size
from cachedex.ingest.outcomes import TagOutcome
from cachedex.ingest.sources import HttpSource
from cachedex.ingest.sync import sync
from tests.helpers import fixture_index, make_config, write_v2_mirror, write_v3_mirror
from tests.ingest.test_verify import SIZES, _manifest, _records
from tests.ingest.test_verify_network import _blob, _found, _v2, _verify
from tests.servers import Nginx

#: S3 without s3:ListBucket: a key it lacks is "AccessDenied" (403).
S3_NO_LISTING = "location / { try_files $uri =403; }"
#: A host whose "not found" page comes with 200, labelled text/html ...
SOFT_404 = "location / { try_files $uri /404.html; } location = /404.html { types { } default_type text/html; }"
#: ... or labelled as any other file it serves.
SOFT_404_UNLABELLED = "location / { try_files $uri /404.html; }"
PAGE = "<!DOCTYPE html>\n<html><head><title>Page not found</title></head><body>404</body></html>\n"


def _www(tmp_path: Path, mirrors: Path) -> Path:
    """v2 mirrors with and without index.json.hash, and a v3 mirror lacking one spec
    manifest; returns that spec manifest's path under /v3."""
    www = tmp_path / "www"
    index = fixture_index(mirrors)
    write_v2_mirror(www / "v2", index)
    write_v2_mirror(www / "v2-unhashed", index)
    (www / "v2-unhashed/build_cache/index.json.hash").unlink()
    write_v3_mirror(www / "v3", index)
    gone = min((www / "v3").rglob("*.spec.manifest.json"))
    gone.unlink()
    (www / "404.html").write_text(PAGE)
    return gone


def _sync(tmp_path: Path, url: str) -> TagOutcome:
    folder = tmp_path / str(abs(hash(url)))
    folder.mkdir()
    config = make_config(folder, [{"name": "t", "url": url}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    return outcome


@pytest.mark.parametrize(
    ("server", "answer"),
    [
        (S3_NO_LISTING, "missing (or not readable: HTTP 403)"),
        (SOFT_404, "answered with an HTML page, not the file"),
        (SOFT_404_UNLABELLED, "answered with an HTML page, not the file"),
    ],
)
def test_a_mirror_on_a_host_that_does_not_answer_404_syncs(
    tmp_path: Path, mirrors: Path, server: str, answer: str
) -> None:
    """A v2 mirror's sync failed at its first read, the v3 index manifest it does not
    have: "request refused (HTTP 403)", or "not a valid v3 manifest: JSON is malformed".
    The spec manifest a v3 mirror lacks was "sizes unknown" (a read failing), not a
    binary without a size (its manifest missing)."""
    gone = _www(tmp_path, mirrors)
    with Nginx(tmp_path / "www", extra=server) as nginx:
        hashed = _sync(tmp_path, f"{nginx.url}/v2")
        unhashed = _sync(tmp_path, f"{nginx.url}/v2-unhashed")
        v3 = _sync(tmp_path, f"{nginx.url}/v3")
        nowhere = _sync(tmp_path, f"{nginx.url}/nothing-here")
    assert hashed.ok and hashed.warnings == (), hashed.error
    assert unhashed.ok, unhashed.error
    assert [w for w in unhashed.warnings if "has no index.json.hash beside it" not in w] == []
    assert v3.ok, v3.error
    (warning,) = v3.warnings
    url = f"{nginx.url}/{gone.relative_to(tmp_path / 'www')}"
    assert "1 binary without a size (no manifest or tarball)" in warning and f"{url}: {answer}" in warning
    assert not nowhere.ok and "no build cache index here" in str(nowhere.error)
    # Where every file answered 403, the mirror may be private: it says what it was told.
    private = "(answered: missing (or not readable: HTTP 403); a private mirror needs credentials"
    assert (private in str(nowhere.error)) is (server == S3_NO_LISTING), nowhere.error


def test_verify_on_s3_without_listing_says_missing_not_refused(tmp_path: Path) -> None:
    """An unsigned mirror (no key index: optional) on S3 without listing, one binary
    and (v3) one spec manifest gone: each is missing (or not readable), by its URL; no
    key index problem. They were "unreadable: request refused (HTTP 403)", and an
    unsigned v2 mirror's every spec file too (its .spec.json.sig is not there)."""
    www = tmp_path / "www"
    for layout in (2, 3):
        write_mirror(www / f"v{layout}", _records(), layout=layout, sizes=SIZES, tarballs=True)
    v3_tar, v2_tar = _blob(www / "v3", "curl", "tar"), _v2(www / "v2", "curl", ".spack")
    os.unlink(www / "v3" / v3_tar)
    os.unlink(www / "v3" / _manifest("zlib"))
    os.unlink(www / "v2" / v2_tar)
    with Nginx(www, extra=S3_NO_LISTING) as nginx:
        v3 = _verify(tmp_path, f"{nginx.url}/v3")
        v2 = _verify(tmp_path, f"{nginx.url}/v2", deep=True)
    assert _found(v3, f"{nginx.url}/v3") == {("tarball-missing", v3_tar), ("manifest-missing", _manifest("zlib"))}
    assert _found(v2, f"{nginx.url}/v2") == {("tarball-missing", v2_tar)}
    for problem in (*v3.problems, *v2.problems):
        assert problem.message.endswith(": missing (or not readable: HTTP 403)"), problem
    assert (v2.found, v3.found) == (4, 3)


def test_with_credentials_a_403_stays_a_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials sent and refused the file (an Artifactory or GitLab user without the
    permission): not called missing."""
    (tmp_path / "www").mkdir()
    monkeypatch.setenv("T_QUIRKS_TOKEN", "t0ken")
    with Nginx(tmp_path / "www", extra=S3_NO_LISTING) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        anonymous = HttpSource(f"{nginx.url}/m", client)
        private = HttpSource(f"{nginx.url}/m", client, RegistryAuth(host="127.0.0.1", token_env="T_QUIRKS_TOKEN"))
        with pytest.raises(SourceNotFound, match=r"missing \(or not readable: HTTP 403\)"):
            anonymous.read("build_cache/index.json", limit=100)
        with pytest.raises(SourceError, match=r"request refused \(HTTP 403\)") as refused:
            private.read("build_cache/index.json", limit=100)
    assert type(refused.value) is SourceError


def test_a_discovery_file_that_is_a_not_found_page_says_so(tmp_path: Path) -> None:
    """``tags_from`` on a soft-404 host: it said "is not valid JSON: JSON is malformed"."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www/404.html").write_text(PAGE)
    with Nginx(tmp_path / "www", extra=SOFT_404) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        url = f"{nginx.url}/cache_spack_io_index.json"
        config = make_config(tmp_path, [{"name": "t", "url": "./m"}])
        with pytest.raises(ConfigError) as caught:
            with_discovered_tags(msgspec.structs.replace(config, tags_from=url), client)
    assert f"cannot read {url!r}: {url}: answered with an HTML page" in str(caught.value)


def test_a_404_page_larger_than_the_file_asked_is_still_a_404(tmp_path: Path, mirrors: Path) -> None:
    """GitHub Pages answers a missing file with 404 and its 9 kB page: more than an
    index.json.hash may be (1,000 bytes). A v2 mirror without one failed its sync:
    "larger than 1,000 bytes, the limit for this kind of file"."""
    _www(tmp_path, mirrors)
    (tmp_path / "www/404.html").write_text(PAGE.replace("404", "404 " + "x" * 9000))
    with Nginx(tmp_path / "www", extra="error_page 404 /404.html;") as nginx:
        unhashed = _sync(tmp_path, f"{nginx.url}/v2-unhashed")
        with HttpClient(HttpOptions(retries=0)) as client:
            source = HttpSource(f"{nginx.url}/v2-unhashed", client)
            with pytest.raises(SourceNotFound, match=r"not found \(HTTP 404\)"):
                source.read("build_cache/index.json.hash", limit=1000)
            with pytest.raises(SourceNotFound, match=r"not found \(HTTP 404\)"):  # (a watched read too)
                source.fetch("build_cache/index.json.hash", limit=1000, progress=lambda done, total: None)
    assert unhashed.ok, unhashed.error


def test_a_manifest_that_is_a_page_is_said_to_be_one() -> None:
    """A page a host sends unlabelled and without a doctype (nginx's own error page's
    markup, served as a file): it said "not a valid v3 manifest: JSON is malformed"."""
    page = b"<html>\r\n<head><title>404 Not Found</title></head>\r\n</html>\r\n"
    for decode in (decode_manifest, lambda data, url: manifest_size(url, data)):
        with pytest.raises(IndexFormatError, match=r"^https://h/x\.json: an HTML page, not a v3 manifest"):
            decode(b"\n  " + page.replace(b"<html>", b"<h1>"), "https://h/x.json")
