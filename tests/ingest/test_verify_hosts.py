"""``cachedex verify`` against hosts whose HEAD cannot tell whether a binary is there:
one that forbids HEAD while GET works (403: hosts that sign each URL for GET alone, as
S3 presigned URLs and GitLab's package registry do), and one that labels binaries
``text/html`` (a misconfigured server), which a soft-404 detector reading the label
alone took for its "not found" page. A GET of each file's first byte tells, and a
binary really missing (404, 403 on GET too, a host's "not found" page) stays missing.
Served by a real nginx."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.ingest.test_signatures import TestKey
from tests.ingest.test_verify_network import _blob, _found, _gone, _signed, _v2, _verify
from tests.servers import Nginx

#: nginx forbidding HEAD (403) under /forbidding/, and under /forbidding-all/ GET too
#: (S3 without listing: a key it lacks is 403 to any request).
FORBID_HEAD = """
    location /forbidding/ { if ($request_method = HEAD) { return 403; } }
    location /forbidding-all/ { if ($request_method = HEAD) { return 403; } error_page 404 =403 /403; }
    location = /403 { return 403; }
"""

#: nginx labelling every file text/html, and answering what it lacks with its page, 200.
HTML_LABELS = """
    types { } default_type text/html;
    error_page 404 =200 /not-found.html;
    {ranges}
"""
PAGE = "<!DOCTYPE html>\n<html><body><h1>Nothing here</h1></body></html>\n"


def _binary(root: Path, layout: int, name: str) -> str:
    return _blob(root, name, "tar") if layout == 3 else _v2(root, name, ".spack")


def _mirrors(served: Path, key: TestKey, layout: int, *names: str) -> str:
    """Signed mirrors of four specs under each of ``names`` in ``served``, curl's binary
    removed from each; that binary's path."""
    first = _signed(served / names[0], key, layout)
    for name in names[1:]:
        shutil.copytree(first, served / name)
    gone = _binary(first, layout, "curl")
    for name in names:
        _gone(served / name, gone)
    return gone


@pytest.mark.parametrize("layout", [3, 2])
def test_a_host_forbidding_head_verifies_as_one_that_takes_it(tmp_path: Path, key: TestKey, layout: int) -> None:
    """Each binary there was "missing (or not readable: HTTP 403)", and a v2 mirror's
    index.json.hash too ("the index's checksum cannot be checked"). Now: the binaries
    found, the one removed still missing, said as its GET says (404, or 403 where GET
    is forbidden too); HEAD is given up after its first 403 (one request at a time)."""
    served = tmp_path / "served"
    gone = _mirrors(served, key, layout, "allowing", "forbidding", "forbidding-all")
    with Nginx(served, extra=FORBID_HEAD, log_requests=True) as nginx:
        results = {name: _verify(tmp_path, f"{nginx.url}/{name}", concurrency=1) for name in ("allowing", "forbidding")}
        everything = _verify(tmp_path, f"{nginx.url}/forbidding-all", concurrency=1)
        heads = [path for method, path, _status in nginx.requests() if method == "HEAD"]
    for name, result in results.items():
        assert _found(result, f"{nginx.url}/{name}") == {("tarball-missing", gone)}, name
        assert result.problems[0].message.endswith(": not found (HTTP 404)"), name
        assert (result.found, result.binaries) == (4, 3), name
    assert _found(everything, f"{nginx.url}/forbidding-all") == {("tarball-missing", gone)}
    assert everything.problems[0].message.endswith(": missing (or not readable: HTTP 403)")
    assert (everything.found, everything.binaries) == (4, 3)
    assert len([p for p in heads if p.startswith("/forbidding/")]) == 1
    assert len([p for p in heads if p.startswith("/forbidding-all/")]) == 1


@pytest.mark.parametrize("ranges", ["", "max_ranges 0;"], ids=["ranges", "no-ranges"])
@pytest.mark.parametrize("layout", [3, 2])
def test_binaries_labelled_text_html_are_not_a_not_found_page(
    tmp_path: Path, key: TestKey, layout: int, ranges: str
) -> None:
    """Every binary was "answered with an HTML page, not the file" (and a v2 mirror's
    index.json.hash missing): a HEAD shows the label alone. Now the first byte tells:
    the binaries are found, with their sizes, and the one removed, whose answer is the
    host's page (200), is still missing; with Range honoured or not (a 200 is stopped
    at its first bytes)."""
    served = tmp_path / "served"
    gone = _mirrors(served, key, layout, "m")
    (served / "not-found.html").write_text(PAGE)
    # a binary cut short: its size is still checked (v3 manifests give sizes)
    cut = _binary(served / "m", layout, "zlib")
    (served / "m" / cut).write_bytes((served / "m" / cut).read_bytes()[:20])
    with Nginx(served, extra=HTML_LABELS.replace("{ranges}", ranges)) as nginx:
        result = _verify(tmp_path, f"{nginx.url}/m")
        deep = _verify(tmp_path, f"{nginx.url}/m", deep=True)
    want = {("tarball-missing", gone)} | ({("tarball-size", cut)} if layout == 3 else set())
    assert _found(result, f"{nginx.url}/m") == want
    missing = next(p for p in result.problems if p.kind == "tarball-missing")
    assert missing.message.endswith(
        "answered with an HTML page, not the file (the server's 'not found' page, sent as HTTP 200?)"
    )
    assert (result.found, result.binaries) == (4, 2 if layout == 3 else 3)
    # (v2: no size to compare; --deep finds the cut binary by its checksum)
    deep_want = want if layout == 3 else want | {("tarball-checksum", cut)}
    assert _found(deep, f"{nginx.url}/m") == deep_want
