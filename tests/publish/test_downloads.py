"""Spec pages link to the spec's files in each mirror served over HTTP that lists it: a
v2 mirror's ``.spack`` tarball, a v3 mirror's spec manifest (which names the tarball's
blob and sha256). Mirrors written by the demo's generator, served by a real nginx; every
link is fetched."""

from __future__ import annotations

import hashlib
import html
import json
import re
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from cachedex.catalog import Catalog
from cachedex.demo.mirrorgen import edge, make_node, write_mirror
from cachedex.ingest.manifests import read_clearsigned
from cachedex.ingest.sync import sync
from cachedex.publish.graph import SpecGraph
from cachedex.publish.pages import spec_page
from cachedex.publish.render import download, render
from cachedex.values import spec_manifest_path, tarball_path_v2
from tests.helpers import make_config, record, replace_mirror
from tests.servers import Nginx

ZLIB = make_node("zlib", "1.3.1")
CMAKE = make_node("cmake", "3.31.2", dependencies=[edge(ZLIB, ("build", "link"))])
UNLISTED = make_node("curl", "8.11.1")
SIZES = {ZLIB["hash"]: 1234, CMAKE["hash"]: 2345}


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 (a test's own 127.0.0.1 server)
        return bytes(answer.read())


@pytest.mark.parametrize("layout", [2, 3])
def test_spec_pages_link_to_files_that_exist(tmp_path: Path, layout: int) -> None:
    records = [(ZLIB, True), (CMAKE, True), (UNLISTED, False)]
    write_mirror(tmp_path / "www" / "m", records, layout=layout, sizes=SIZES, tarballs=True)
    with Nginx(tmp_path / "www") as server:
        config = make_config(
            tmp_path, [{"name": "t", "url": f"{server.url}/m"}, {"name": "local", "url": str(tmp_path / "www" / "m")}]
        )
        with Catalog(config.catalog) as catalog:
            assert all(outcome.ok for outcome in sync(config, catalog))
            graph = SpecGraph(catalog)
            for node in (ZLIB, CMAKE):
                page = spec_page(catalog, node["hash"])
                assert graph.page(graph.ids[node["hash"]], page.node) == page
                links = {h.tag: download(h, page.spec) for h in page.holders}
                assert links["local"] is None  # a folder: nothing a browser could fetch
                label, url = links["t"] or ("", "")
                body = _get(url)
                if layout == 2:
                    assert label == "binary (.spack)" and len(body) == SIZES[node["hash"]]
                else:
                    assert label == "spec manifest"
                    manifest = json.loads(read_clearsigned(body.decode()))
                    tarball = next(r for r in manifest["data"] if "tar" in r["mediaType"])
                    checksum = tarball["checksum"]
                    blob = _get(f"{server.url}/m/blobs/sha256/{checksum[:2]}/{checksum}")
                    assert hashlib.sha256(blob).hexdigest() == checksum
                assert f'href="{url}"' in render(page)
            unlisted = spec_page(catalog, UNLISTED["hash"])
            assert all(download(h, unlisted.spec) is None for h in unlisted.holders)  # no binary, no link


def _download_href(tmp_path: Path, url: str, layout: int, **fields: str) -> str:
    """The download link of the spec page of one spec (``fields`` its values) that the
    mirror at ``url`` of layout ``layout`` lists."""
    dag_hash = "a" * 32
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record(dag_hash, "zlib", **fields)], {})
            replace_mirror(writer, "root", {dag_hash: True}, url=url, layout=layout)
        text = render(spec_page(catalog, dag_hash))
    (href,) = re.findall(r'&middot; <a href="([^"]*)" rel="nofollow">', text)
    return html.unescape(href)


@pytest.mark.parametrize("layout", [2, 3])
def test_download_links_of_a_mirror_written_with_a_trailing_slash_have_one_slash(tmp_path: Path, layout: int) -> None:
    """``https://cache.example/develop/`` and the file's path make one URL: an S3-style
    host reads ``develop//v3/...`` as another key, and answers 404."""
    href = _download_href(tmp_path, "https://cache.example/develop/", layout)
    expected = {
        3: "v3/manifests/spec/zlib/zlib-1.3.1-" + "a" * 32 + ".spec.manifest.json",
        2: "build_cache/linux-ubuntu24.04-x86_64_v3/gcc-13.2.0/zlib-1.3.1/"
        "linux-ubuntu24.04-x86_64_v3-gcc-13.2.0-zlib-1.3.1-" + "a" * 32 + ".spack",
    }
    assert href == "https://cache.example/develop/" + expected[layout]


@pytest.mark.parametrize("layout", [2, 3])
def test_download_links_percent_encode_a_version_with_a_space_or_a_hash_sign(tmp_path: Path, layout: int) -> None:
    """A version (or compiler) with ``#`` or ``?`` in it: unquoted, the link would stop
    there, and fetch another file."""
    fields = {"version": "1.0 #rc1?", "compiler": "gcc@13 2#x"}
    href = _download_href(tmp_path, "https://cache.example/m", layout, **fields)
    link = urlsplit(href)
    assert (link.scheme, link.netloc, link.query, link.fragment) == ("https", "cache.example", "", "")
    assert " " not in href and "%23" in link.path
    spec = record("a" * 32, "zlib", **fields)
    path = (
        spec_manifest_path("zlib", spec.version, spec.hash)
        if layout == 3
        else tarball_path_v2(
            **{k: getattr(spec, k) for k in ("hash", "name", "version", "compiler", "platform", "os", "target")}
        )
    )
    assert unquote(link.path) == "/m/" + path
