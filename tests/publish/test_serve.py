"""cachedex serve: the same pages as the site, the JSON API, caching, a real uvicorn,
and schemathesis against the OpenAPI document."""

from __future__ import annotations

import asyncio
import gzip
import html
import json
import re
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import positive_data_acceptance

from cachedex.catalog import Catalog
from cachedex.cli.serve_app import serve_app
from cachedex.config import load_config
from cachedex.demo.build import build_demo_mirrors
from cachedex.ingest.sync import sync
from cachedex.publish.serve import create_app
from tests.helpers import Demo, record, write_tag
from tests.lockfiles import closure, demo_nodes, lockfile, roots_named
from tests.servers import free_port


def get(app: Any, path: str, **headers: str) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await client.get(path, headers=headers)

    return asyncio.run(go())


def dated(app: Any, path: str, **headers: str) -> httpx.Response:
    """``get``, once the answer carries its state's date: none is sent before its second
    has begun (at most ~2 s after a state is first seen)."""
    deadline = time.monotonic() + 5
    while "last-modified" not in (answer := get(app, path, **headers)).headers:
        assert time.monotonic() < deadline, "no Last-Modified"
        time.sleep(0.1)
    return answer


@pytest.fixture(scope="module")
def app(demo_run: Demo) -> Any:
    return create_app(demo_run.catalog)


@pytest.mark.parametrize(
    "path",
    [
        "index.html",
        "tags/develop/index.html",
        "tags/develop/packages/zlib/index.html",
        "mirrors/index.html",
        "tags/develop/packages/zlib/index.json",
        "tags/develop/columns.json",
        "packages.json",
    ],
)
def test_pages_are_the_static_sites_pages(app: Any, demo_run: Demo, path: str) -> None:
    response = get(app, "/" + path)
    assert response.status_code == 200
    assert response.content == (demo_run.site / path).read_bytes()


@pytest.mark.parametrize("sort", ["sort", "so%72t"])  # (written plainly, or percent-encoded)
def test_one_visitor_s_sort_does_not_reach_the_pages_others_are_served(demo_run: Demo, sort: str) -> None:
    """``sort`` is read by the script alone, so a page is cached without it: its "as
    JSON" link kept the first visitor's (any text), for everyone served that page."""
    app = create_app(demo_run.catalog)
    first = get(app, f"/tags/develop/index.html?os=ubuntu22.04&{sort}=-size%22x")
    second = get(app, "/tags/develop/index.html?os=ubuntu22.04")
    assert first.status_code == second.status_code == 200
    for page in (first, second):
        assert 'href="index.json?os=ubuntu22.04"' in page.text and "-size" not in page.text


def test_a_search_result_names_its_other_compilers(app: Any) -> None:
    """The demo's netlib-lapack on darwin: C by apple-clang, Fortran by gcc; %gcc finds
    it, and its result says by which compiler (the API, the search page)."""
    found = get(app, "/api/search?q=netlib-lapack+platform%3Ddarwin+%25gcc&tag=develop").json()
    (spec,) = found["specs"]
    assert spec["compiler"].startswith("apple-clang@") and spec["other_compilers"][0].startswith("gcc@")
    page = get(app, "/search.html?q=netlib-lapack+platform%3Ddarwin+%25gcc&tag=develop").text
    assert f'<span class="muted">+{spec["other_compilers"][0]}</span>' in page
    assert "other_compilers" not in get(app, "/api/search?q=zlib&tag=develop").text


def test_a_tag_pages_script_loads_its_columns_alone(demo_run: Demo) -> None:
    """What the tag page's script loads is the twin's tag and spec columns, without its
    rows (which it makes from them): about half the twin's bytes, gzipped beside it."""
    folder = demo_run.site / "tags/develop"
    assert 'data-src="columns.json"' in (folder / "index.html").read_text()
    twin, columns = (json.loads((folder / name).read_text()) for name in ("index.json", "columns.json"))
    assert columns == {"tag": twin["tag"], "specs": twin["specs"]}
    assert gzip.decompress((folder / "columns.json.gz").read_bytes()) == (folder / "columns.json").read_bytes()
    assert (folder / "columns.json.gz").stat().st_size < 0.75 * (folder / "index.json.gz").stat().st_size


def test_a_spec_page_and_its_twin(app: Any, demo_run: Demo) -> None:
    spec = next((demo_run.site / "specs").glob("*/*.html")).stem
    for suffix in (".html", ".json"):
        response = get(app, f"/specs/{spec[:2]}/{spec}{suffix}")
        assert response.status_code == 200
        assert response.content == (demo_run.site / "specs" / spec[:2] / (spec + suffix)).read_bytes()
    assert get(app, f"/specs/zz/{spec}.html").status_code == 404  # under the wrong prefix
    missing = get(app, "/specs/no/nope.html")
    assert missing.status_code == 404 and "no spec with hash" in missing.text and "<html" in missing.text
    # The API takes a prefix as `spack find` prints it, when no other spec has it.
    whole, short = get(app, f"/api/specs/{spec}"), get(app, f"/api/specs/{spec[:7]}")
    assert short.status_code == 200 and short.json() == whole.json() and whole.json()["spec"]["hash"] == spec


def test_every_gzipped_twin_of_the_static_site_is_served(app: Any, demo_run: Demo) -> None:
    # Beside every tag page's twin, and any twin of 256 KiB (here a comparison of two tags).
    written = sorted(demo_run.site.rglob("*.json.gz"))
    assert any("compare" in path.parts for path in written)
    for path in written:
        response = get(app, "/" + path.relative_to(demo_run.site).as_posix())
        assert response.status_code == 200, path
        assert response.headers["content-type"] == "application/gzip"
        assert response.content == path.read_bytes()
    spec = next((demo_run.site / "specs").glob("*/*.json"))
    gzipped = get(app, f"/specs/{spec.parent.name}/{spec.name}.gz")
    assert gzip.decompress(gzipped.content) == spec.read_bytes()
    # Unfiltered, as the static file: a filter is refused, and an error is said in JSON.
    refused = get(app, "/tags/develop/index.json.gz?stack=e4s")
    assert refused.status_code == 400 and "unknown parameter 'stack'" in refused.json()["error"]["message"]


def test_search_paginates_with_a_total(app: Any, demo_run: Demo) -> None:
    whole = get(app, "/api/search?q=%25gcc%4011&tag=develop&limit=1000").json()
    assert whole["total"] == len(whole["specs"]) > 10
    pages = [
        get(app, f"/api/search?q=%25gcc%4011&tag=develop&limit=7&offset={o}").json()
        for o in range(0, whole["total"], 7)
    ]
    assert [s["hash"] for p in pages for s in p["specs"]] == [s["hash"] for s in whole["specs"]]
    assert all(p["total"] == whole["total"] for p in pages)
    assert all(s["compiler"].startswith("gcc@11") for s in whole["specs"])
    one = whole["specs"][0]["hash"]  # the search page counts in words
    assert "1 spec matches <code>" in get(app, f"/search.html?q=%2F{one}").text
    assert f"{whole['total']:,} specs match <code>" in get(app, "/search.html?q=%25gcc%4011&tag=develop").text
    # a page past the last says so and leads to the last, not an empty table
    last = -(-whole["total"] // 50)  # (50 a page)
    # a stack the tag lacks (a tag chosen after another's stack): the whole tag searched, and said
    other = get(app, "/search.html?q=hdf5&tag=v1.0.2&stack=ml-linux-x86_64-rocm")
    assert (
        other.status_code == 200
        and "Tag v1.0.2 has no stack ml-linux-x86_64-rocm: searched the whole tag" in other.text
    )
    assert 'value="hdf5"' in other.text and "specs match <code>hdf5</code> in v1.0.2" in other.text
    past = get(app, "/search.html?q=%25gcc%4011&tag=develop&page=99").text
    assert 'id="past-end">Page 99 is past the last page of these matches: <a href="search.html' in past
    assert f'&amp;page={last}">page {last}</a>' in past and "<table" not in past and "page 99 of" not in past


@pytest.mark.parametrize(
    ("path", "status", "needle"),
    [
        ("/api/search?q=zlib%40%40", 400, "bad query"),
        ("/api/search?limit=0", 400, "limit must be between"),
        ("/api/search?offset=-1", 400, "offset must be between"),
        ("/api/search?q=zlib&tag=nope", 404, "no tag 'nope'"),
        ("/api/search?q=zlib&stack=e4s", 400, "stack needs a tag"),
        ("/api/search?bogus=1", 400, "unknown parameter 'bogus'"),
        ("/api/tags/nope/packages", 404, "no tag 'nope'"),
        ("/api/tags/nope/packages?stack=e4s", 404, "no tag 'nope'"),
        ("/api/tags/develop/packages?stack=nope", 404, "tag 'develop' has no stack 'nope'"),  # as /api/search
        ("/api/tags/develop/packages/nope", 404, "lists no package 'nope'"),
        ("/api/tags/develop/packages/cp2k", 404, "lists no package 'cp2k'; it is in develop-2026-11-01 (1 spec)"),
        ("/api/specs/9999999", 404, "no spec with a hash starting with '9999999'"),
        ("/api/specs/a", 404, "hash prefix 'a' is ambiguous"),
        ("/api/diff?from=develop", 400, "needs from and to"),
        ("/api/diff?tag=develop&since=soon", 400, "since must be a date"),
        ("/api/diff?tag=develop", 400, "a diff over time needs tag and since"),
        ("/api/diff?since=2026-11-01", 400, "a diff over time needs tag and since"),
        # both kinds of diff asked: one was dropped without a word
        ("/api/diff?from=develop&to=v1.0.2&tag=develop&since=2026-11-01", 400, "not both"),
        ("/api/diff?from=develop&to=v1.0.2&since=2026-11-01", 400, "two tags (from and to) or of one over time"),
        ("/api/nothing-here", 404, "no such endpoint"),
    ],
)
def test_errors_have_one_json_shape(app: Any, path: str, status: int, needle: str) -> None:
    response = get(app, path)
    assert response.status_code == status and response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["status"] == status and needle in error["message"]


def test_a_short_hash_permalink_leads_to_the_spec_page(app: Any, demo_run: Demo) -> None:
    """``/spec/<prefix>``, a hash as ``spack find`` prints it: redirected (relatively, so
    that a server under a path prefix keeps it) to the page; none or several: a 404 that
    says which."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        spec = min(catalog.held_hashes())
    moved = get(app, f"/spec/{spec[:7]}")
    assert moved.status_code == 302 and moved.headers["location"] == f"../specs/{spec[:2]}/{spec}.html"
    page = get(app, "/" + moved.headers["location"].removeprefix("../"))  # where /spec/x leads
    assert page.status_code == 200 and spec in page.text
    assert get(app, f"/spec/{spec}").headers["location"] == moved.headers["location"]  # a whole hash too
    missing, several = get(app, "/spec/9999999"), get(app, f"/spec/{spec[0]}")
    assert missing.status_code == 404 and "no spec with a hash starting with &#39;9999999&#39;" in missing.text
    assert several.status_code == 404 and "is ambiguous" in several.text
    unknown = get(app, f"/spec/{spec[:7]}?x=1")  # it takes no parameters, as every page refuses those it has not
    assert unknown.status_code == 400 and "unknown parameter &#39;x&#39;" in unknown.text


def test_a_package_a_tag_no_longer_lists_says_where_it_is(app: Any) -> None:
    """cp2k left develop in the demo's second sync: its page's 404 names the tags that list it."""
    for path in ("/tags/develop/packages/cp2k/", "/tags/develop/packages/cp2k/badge.svg"):
        response = get(app, path)
        assert response.status_code == 404
        assert "lists no package &#39;cp2k&#39;; it is in develop-2026-11-01 (1 spec)" in response.text, path


def test_packages_with_facets_and_a_diff(app: Any, demo_run: Demo) -> None:
    everything = get(app, "/api/tags/develop/packages").json()
    e4s = get(app, "/api/tags/develop/packages?stack=e4s").json()
    assert e4s["total"] == everything["facets"]["stack"]["e4s"] == len(e4s["packages"]) < everything["total"]
    diff = get(app, "/api/diff?from=develop-2026-11-08&to=develop").json()
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        added = catalog.listed_hashes("develop") - catalog.listed_hashes("develop-2026-11-08")
    assert {s["hash"] for s in diff["stacks"][0]["added"]} == added


def test_etag_gzip_and_a_sync_meanwhile(demo_run: Demo, tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    shutil.copytree(demo_run.folder, folder, ignore=shutil.ignore_patterns("site", "jekyll"))
    app = create_app(folder / "cachedex.sqlite")
    first = dated(app, "/api/tags", **{"accept-encoding": "identity"})
    etag = first.headers["etag"]
    assert first.headers["last-modified"].endswith("GMT")
    assert get(app, "/api/tags", **{"if-none-match": etag}).status_code == 304
    for named in (f"W/{etag}", f'"other", {etag}', "*"):  # weakly compared, in a list, or any (RFC 9110)
        assert get(app, "/api/tags", **{"if-none-match": named}).status_code == 304, named
    assert get(app, "/api/tags", **{"if-none-match": '"other"'}).status_code == 200
    # Revalidating by date (curl -z, wget -N): If-Modified-Since, unless If-None-Match is sent
    modified = first.headers["last-modified"]
    assert get(app, "/api/tags", **{"if-modified-since": modified}).status_code == 304
    assert get(app, "/api/tags", **{"if-modified-since": "Fri, 01 Jan 2100 00:00:00 GMT"}).status_code == 304
    assert get(app, "/api/tags", **{"if-modified-since": "Thu, 01 Jan 1970 00:00:00 GMT"}).status_code == 200
    assert get(app, "/api/tags", **{"if-modified-since": "yesterday"}).status_code == 200
    both = {"if-modified-since": modified, "if-none-match": '"other"'}
    assert get(app, "/api/tags", **both).status_code == 200
    zipped = get(app, "/tags/develop/", **{"accept-encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    # a strong tag is its bytes': the gzipped body's differs from the plain one's, and names it too
    plain = get(app, "/tags/develop/", **{"accept-encoding": "identity"})
    assert zipped.headers["etag"] == plain.headers["etag"][:-1] + '-gzip"'
    for tag in (zipped.headers["etag"], plain.headers["etag"]):
        for accepted in ("gzip", "identity"):
            again = get(app, "/tags/develop/", **{"accept-encoding": accepted, "if-none-match": tag})
            assert again.status_code == 304, (tag, accepted)
    for accepted, gzipped in (
        ("gzip;q=0, identity", False),
        ("*", True),
        ("*, gzip;q=0", False),
        ("br, gzip;q=0.5", True),
    ):
        answer = get(app, "/tags/develop/", **{"accept-encoding": accepted})
        assert (answer.headers.get("content-encoding") == "gzip") is gzipped, accepted
    # develop goes back to its first revision; the served data follows the commit.
    build_demo_mirrors(folder, develop_revision=0)
    config = load_config(folder / "cachedex.yaml")
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog, ["develop"])
        assert outcome.ok and outcome.added
    after = get(app, "/api/tags", **{"if-none-match": etag})
    assert after.status_code == 200 and after.headers["etag"] != etag
    develop = lambda r: next(t for t in r.json() if t["name"] == "develop")  # noqa: E731
    assert develop(after)["specs"] != develop(first)["specs"]


def test_a_date_names_one_catalog_state_whatever_changed_it(demo_run: Demo, tmp_path: Path) -> None:
    """Last-Modified was the last sync's end: a tag forgotten, a mirror verified, a
    garbage collection, or a catalog replaced by an older copy left it (or set it back),
    and a client asking by date alone (curl -z, wget -N) was told its copy is current."""
    from cachedex.ingest.verify import verify

    folder = tmp_path / "demo"
    shutil.copytree(demo_run.folder, folder, ignore=shutil.ignore_patterns("site", "jekyll"))
    path = folder / "cachedex.sqlite"
    older = shutil.copy(path, tmp_path / "older.sqlite")
    app = create_app(path)

    def changed_by(change: Any, page: str = "/api/tags") -> None:
        before = dated(app, page, **{"accept-encoding": "identity"})
        change()
        after = get(app, page, **{"if-modified-since": before.headers["last-modified"]})
        assert after.status_code != 304 and after.content != before.content, page
        again = dated(app, page, **{"accept-encoding": "identity"})
        assert again.headers["last-modified"] != before.headers["last-modified"]
        assert get(app, "/api/tags", **{"if-modified-since": again.headers["last-modified"]}).status_code == 304

    with Catalog(path) as catalog:
        changed_by(lambda: catalog.forget_tags({"develop-2026-11-08": None}))
        trial = tmp_path / "trial.sqlite"
        with sqlite3.connect(trial) as copy:
            catalog._db.backup(copy)  # (the file alone lacks what its log holds)
        with Catalog(trial) as collected:
            collected.collect_garbage()
        kept = {row[0] for row in sqlite3.connect(trial).execute("SELECT hash FROM specs")}
        gone = min(row[0] for row in catalog._db.execute("SELECT hash FROM specs") if row[0] not in kept)
        changed_by(lambda: catalog.collect_garbage(), f"/api/specs/{gone}")  # a spec the collection removes
        changed_by(lambda: verify(load_config(folder / "cachedex.yaml"), catalog, ["develop"]), "/mirrors/")
    for file in folder.glob("cachedex.sqlite*"):
        file.unlink()
    changed_by(lambda: shutil.copy(older, path))  # an older copy of the same catalog, put back


def test_a_new_version_is_not_confirmed_by_the_old_ones_validators(
    demo_run: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an upgrade a browser's page (which loads the old version's assets, now 404)
    was confirmed by its ETag and its date until the next sync: both name the code."""
    import importlib
    import time

    module = importlib.import_module("cachedex.publish.serve.app")
    first = dated(create_app(demo_run.catalog), "/tags/develop/", **{"accept-encoding": "identity"})
    monkeypatch.setattr(module, "render_stamp", lambda: b"cachedex 99.0 another\n")
    monkeypatch.setattr(module, "code_modified", lambda: time.time() + 5)  # its files written after
    upgraded = create_app(demo_run.catalog)
    for header, value in (
        ("if-none-match", first.headers["etag"]),
        ("if-modified-since", first.headers["last-modified"]),
    ):
        assert get(upgraded, "/tags/develop/", **{header: value}).status_code == 200, header
    again = get(upgraded, "/tags/develop/", **{"accept-encoding": "identity"})
    assert get(upgraded, "/tags/develop/", **{"if-none-match": again.headers["etag"]}).status_code == 304


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/tags/develop", "develop/"),
        ("/tags/develop?stack=e4s", "develop/?stack=e4s"),
        ("/api/tags/", "../tags"),
        # a "/" sent within a name: no page (served there, its relative links led astray)
        ("/tags/develop%2Fpackages%2Fzlib-ng", None),
        ("/tags/develop/packages/a:b", "./a:b/"),  # not a URL of scheme "a"
        ("/tags/develop/packages/a%25b", "a%25b/"),
        ("/tags/develop/packages/%2e%2e", None),  # a browser reads %2e%2e as "..": no redirect up
    ],
)
def test_slash_redirects_are_relative_to_the_path_as_sent(app: Any, path: str, location: str | None) -> None:
    answer = get(app, path, host="example.org")
    if location is None:
        assert answer.status_code == 404
    else:
        assert answer.status_code == 307 and answer.headers["location"] == location


def test_a_real_uvicorn(uvicorn_server: str) -> None:
    with httpx.Client(base_url=uvicorn_server, timeout=10) as client:
        tags = client.get("/api/tags")
        assert tags.status_code == 200 and {t["name"] for t in tags.json()} >= {"develop", "v1.0.2"}
        page = client.get("/tags/develop/packages/zlib/", headers={"accept-encoding": "gzip"})
        assert page.status_code == 200 and "zlib" in page.text and page.headers["content-encoding"] == "gzip"
        assert client.get("/api/openapi.json").json()["openapi"].startswith("3.")
        assert client.get("/live.json").json() == {"live": True}  # (a static copy's says false)
        search = client.get("/api/search", params={"q": "hdf5+mpi target=x86_64:", "tag": "develop"})
        assert search.status_code == 200 and search.json()["total"] > 0
        # Nothing built for zen3 itself: why, and the search for what runs on it.
        found = client.get("/api/search", params={"q": "hdf5+mpi target=zen3", "tag": "develop"}).json()
        assert found["total"] == 0 and found["suggestion"] == "hdf5 target=:zen3 +mpi" and found["hints"]
        wider = client.get("/api/search", params={"q": found["suggestion"], "tag": "develop"}).json()
        assert wider["total"] > 0 and wider["suggestion"] == ""


# -- schemathesis over the OpenAPI document ---------------------------------------------------


OPERATIONS = ["tags", "packages", "package", "spec", "search", "diff", "verify", "coverage", "reuse"]


@pytest.mark.parametrize("operation_id", OPERATIONS)
def test_api_conforms_to_its_openapi_document(demo_run: Demo, operation_id: str) -> None:
    """Generated requests (valid and not) get documented answers: never a 500, always
    the documented status codes, content types and shapes."""
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", serve_app(demo_run.catalog))
    operations = [r.ok() for r in schema.get_all_operations()]
    assert sorted(o.definition.raw["operationId"] for o in operations) == sorted(OPERATIONS)
    operation = next(o for o in operations if o.definition.raw["operationId"] == operation_id)

    @given(case=operation.as_strategy())
    @settings(max_examples=40, database=None, suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        # Schema-valid is not always valid here: a query string must parse, a stack needs
        # a tag. OpenAPI cannot say that, so such requests get a documented 400, and the
        # check that any schema-valid request succeeds does not apply.
        case.call_and_validate(excluded_checks=[positive_data_acceptance])

    check()


def test_every_operation_documents_the_statuses_any_path_may_answer(app: Any) -> None:
    document = get(app, "/api/openapi.json").json()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert {"405", "500"} <= set(operation["responses"]), (path, method)


def test_the_serve_command_with_two_workers(demo_run: Demo) -> None:
    """``cachedex serve`` through its console script: uvicorn, two worker processes."""
    from tests.servers import cachedex_serving

    port, said = free_port(), []
    with cachedex_serving(demo_run.config, port, "--workers", "2", said=said):
        response = httpx.get(f"http://127.0.0.1:{port}/api/tags", timeout=10)
        assert response.status_code == 200 and "develop" in {t["name"] for t in response.json()}
        # each worker's app reads lockfiles (the factory uvicorn imports is the CLI's)
        nodes = demo_nodes()
        roots = roots_named(nodes, "zlib-ng")
        body = json.dumps(lockfile(closure(nodes, roots), roots)).encode()
        for _ in range(4):  # (whichever worker answers)
            reused = httpx.post(f"http://127.0.0.1:{port}/api/reuse?tag=develop", content=body, timeout=10)
            assert reused.status_code == 200 and reused.json()["tags"][0]["cached"] > 0
    assert f"on http://127.0.0.1:{port}/" in said[0]


def test_serve_without_a_catalog_is_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cachedex.cli import main

    config = tmp_path / "cachedex.yaml"
    config.write_text("tags:\n  - name: t\n    url: ./m\n")
    result = CliRunner().invoke(main, ["--config", str(config), "serve"])
    assert result.exit_code == 1 and "no catalog here yet; run 'cachedex sync' first" in result.output


def test_links_that_carry_filters_carry_those_their_page_takes(app: Any) -> None:
    """A package page's tag link drops its variant (the tag page refuses one: a 400);
    an empty tag page's "without ..." links keep the name filter their counts applied."""
    package = get(app, "/tags/develop/packages/py-torch/index.html?variant=%2Bcuda").text
    crumb = package.split('class="crumbs"')[1].split("</p>")[0]
    assert 'href="../../index.html"' in crumb and "variant" not in crumb
    empty = get(app, "/tags/develop/index.html?os=sequoia&target=zen4&q=py").text
    relax = empty.split('id="relax"')[1].split("</ul>")[0]
    links = re.findall(r'href="index.html(\?[^"]+)"', relax)
    assert links and all("q=py" in link for link in links), relax
    for link in links:  # and each leads where it says, with its count
        assert get(app, f"/tags/develop/index.html{html.unescape(link)}").status_code == 200


@pytest.mark.parametrize(
    ("page", "check"),
    [
        ("/diff?old=v1.0.2&new=develop", lambda twin: twin["old"] == "v1.0.2" and twin["new"] == "develop"),
        ("/search.html?q=hdf5&tag=develop", lambda twin: twin["query"] == "hdf5" and twin["total"] > 0),
        ("/tags/develop/index.html?stack=e4s", lambda twin: twin["filters"] == {"stack": "e4s"}),
    ],
)
def test_a_live_page_s_json_link_keeps_its_query(app: Any, page: str, check: Any) -> None:
    """ "This page as JSON" named the twin's file alone: a diff's answered 400, a search's
    the empty search, a filtered page's the whole tag."""
    body = get(app, page, **{"accept-encoding": "identity"}).text
    hrefs = set(re.findall(r'<a href="([^"]*\.json\?[^"]*)">this page as JSON', body))
    assert hrefs, page
    for href in hrefs:
        twin = get(app, str(httpx.URL(f"http://test{page}").join(html.unescape(href)).raw_path.decode()))
        assert twin.status_code == 200 and check(twin.json()), href


def test_a_tag_and_a_package_page_filter_a_spec_by_each_of_its_compilers(app: Any) -> None:
    """A tag page's Compiler filter listed a spec under its C's compiler alone: the
    demo's darwin netlib-lapack (apple-clang, gfortran from gcc) was missing under gcc,
    which ``%gcc`` finds it by. Each compiler's packages are now those its search finds."""
    facets = get(app, "/tags/develop/index.json").json()["facets"]["compiler"]
    assert len(facets) > 2
    for compiler, count in facets.items():
        found = get(app, "/tags/develop/index.json?" + urlencode({"compiler": compiler})).json()
        listed = {row["name"] for row in found["packages"]}
        searched = get(
            app, "/api/search?" + urlencode({"q": f"%{compiler.replace('@', '@=')}", "tag": "develop", "limit": 1000})
        )
        assert listed == {spec["name"] for spec in searched.json()["specs"]}, compiler
        assert count == len(listed), compiler
    (darwin,) = get(app, "/api/search?q=netlib-lapack+platform%3Ddarwin&tag=develop").json()["specs"]
    other = darwin["other_compilers"][0]
    rows = get(app, "/tags/develop/index.json?" + urlencode({"compiler": other, "os": darwin["os"]})).json()["packages"]
    assert "netlib-lapack" in {row["name"] for row in rows}
    page = get(app, "/tags/develop/packages/netlib-lapack/index.json?" + urlencode({"compiler": other})).json()
    assert darwin["hash"] in {spec["hash"] for spec, shown in zip(page["specs"], page["matches"], strict=True) if shown}
    html_page = get(app, "/tags/develop/packages/netlib-lapack/index.html").text
    assert "data-other-compilers=" in html_page
    assert f'<span class="muted">+{other}</span>' in html_page
    spec_page = get(app, f"/specs/{darwin['hash'][:2]}/{darwin['hash']}.html").text  # (its page names both)
    assert f'<span class="muted">+{other}</span></dd>' in spec_page


def test_a_tag_page_filtered_by_name_is_not_the_one_kept_unfiltered(small_catalog: Catalog) -> None:
    app = create_app(small_catalog.path)
    names = lambda path: [p["name"] for p in get(app, path).json()["packages"]]  # noqa: E731
    assert names("/tags/t/index.json") == ["cmake", "zlib"]
    assert names("/tags/t/index.json?q=zl") == ["zlib"]


def test_a_search_of_an_empty_tag_field_searches_every_tag(small_catalog: Catalog) -> None:
    """A form's empty tag field (``tag=``) is no tag named ''."""
    found = get(create_app(small_catalog.path), "/api/search?q=zlib&tag=")
    assert found.status_code == 200 and [s["name"] for s in found.json()["specs"]] == ["zlib"]


def test_a_tag_page_s_name_filter_ignores_case_as_the_script_does(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, "Zlib"), record("b" * 32, "zstd"), record("c" * 32, "cmake")])
    app = create_app(tmp_path / "c.sqlite")
    for q in ("zl", "ZL", "Zl"):
        assert [p["name"] for p in get(app, f"/tags/t/index.json?q={q}").json()["packages"]] == ["Zlib"], q
