"""The served catalog file replaced, or damaged, while the server runs."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest

from cachedex.catalog import Catalog
from cachedex.publish.serve import create_app
from cachedex.values import Dependency
from tests.helpers import record, write_tag
from tests.publish.serve import corrupt_catalog, get


def _tag_names(app: object) -> list[str]:
    return [t["name"] for t in get(app, "/api/tags").json()]


def _found(app: object, query: str) -> list[str]:
    return [s["name"] for s in get(app, f"/api/search?q={query}").json()["specs"]]


def _quiet_warmers() -> None:
    """Wait for the app's background index builds (a thread per new catalog state)."""
    deadline = time.monotonic() + 10
    while any(t.name in ("cachedex-warm", "cachedex-walks") for t in threading.enumerate()):
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_data5_a_deleted_and_recreated_catalog_is_read_afresh(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "old", [record("a" * 32, "zlib", target="x86_64_v3")])
    app = create_app(path)
    assert _tag_names(app) == ["old"]
    assert _found(app, "target%3Dx86_64_v3") == ["zlib"]  # a facet index, built once per state
    _quiet_warmers()
    for file in tmp_path.glob("c.sqlite*"):
        file.unlink()
    # The new file's counts are the old one's (one sync each; its token names it), and its spec
    # ids are the old ones: nothing derived from the old file may be used for it.
    with Catalog(path) as catalog:
        write_tag(
            catalog,
            "new",
            [record("c" * 32, "cmake", target="aarch64"), record("d" * 32, "hdf5", target="x86_64_v3")],
        )
    assert _tag_names(app) == ["new"]
    assert _found(app, "target%3Dx86_64_v3") == ["hdf5"]
    assert _found(app, "zlib") == []
    assert get(app, "/tags/new/").status_code == 200 and get(app, "/tags/old/").status_code == 404


def test_a_started_server_walks_its_most_depended_on_packages_before_anyone_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cachedex.catalog.dependents import ReverseGraph

    path = tmp_path / "c.sqlite"
    base, lib = record("b" * 32, "base"), record("l" * 32, "lib", dependencies=(Dependency("b" * 32, "base", 2, ""),))
    app_ = record("a" * 32, "app", dependencies=(Dependency("l" * 32, "lib", 4, ""),))
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [base, lib, app_])
    walked: list[list[int]] = []
    walk = ReverseGraph.walk
    monkeypatch.setattr(
        ReverseGraph, "walk", lambda graph, start, *limit: walked.append(list(start)) or walk(graph, start, *limit)
    )
    app = create_app(path)

    async def session() -> list[list[str]]:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
        ):
            _quiet_warmers()  # the walks run in a thread once the indexes are built
            assert len(walked) == 2  # base, then lib
            answers = [await client.get("/api/search", params={"q": q}) for q in ("^base", "^lib", "^app")]
            return [[s["name"] for s in answer.json()["specs"]] for answer in answers]

    assert asyncio.run(session()) == [["app", "lib"], ["app"], []]
    assert len(walked) == 3  # ^app alone walked, over the graph the warm-up read


def test_crash12_a_corrupt_catalog_gets_500s_and_the_server_keeps_running(tmp_path: Path) -> None:
    app = create_app(corrupt_catalog(tmp_path / "c.sqlite"))

    async def session() -> dict[str, httpx.Response]:
        async with (
            app.router.lifespan_context(app),  # start-up (warming the search indexes) survives it
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
        ):
            paths = ["/api/search?q=target%3Dx86_64_v3", "/tags/t/", "/tags/t/index.json", "/api/openapi.json"]
            return {path: await client.get(path) for path in [*paths, "/api/search?q=zlib%40%40"]}

    answers = asyncio.run(session())
    search = answers["/api/search?q=target%3Dx86_64_v3"]
    assert search.status_code == 500 and search.headers["content-type"] == "application/json"
    error = search.json()["error"]
    assert error["status"] == 500
    assert "the catalog cannot be read (database disk image is malformed)" in error["message"]
    page = answers["/tags/t/"]
    assert page.status_code == 500 and page.headers["content-type"].startswith("text/html")
    assert "database disk image is malformed" in page.text
    assert answers["/tags/t/index.json"].json()["error"]["status"] == 500
    # Still serving: what does not touch the damaged pages answers.
    assert answers["/api/openapi.json"].status_code == 200
    assert answers["/api/search?q=zlib%40%40"].status_code == 400
    assert len(app.state.cachedex.cache) <= 1  # errors of a damaged file are not kept


def test_a_catalog_made_again_with_the_same_counts_is_not_answered_from_the_old_ones_data(tmp_path: Path) -> None:
    """``rm``, then a first sync of the same config: one sync each, the same counts, so
    the same state token once; a tag's page data kept by token then answered the old
    file's packages beside the new file's totals."""
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "develop", [record("a" * 32, "zlib")])
    app = create_app(path)
    packages = lambda: [p["name"] for p in get(app, "/api/tags/develop/packages").json()["packages"]]  # noqa: E731
    assert packages() == ["zlib"]
    _quiet_warmers()
    for file in tmp_path.glob("c.sqlite*"):
        file.unlink()
    with Catalog(path) as catalog:
        write_tag(catalog, "develop", [record("c" * 32, "cmake")])
    assert packages() == ["cmake"]


def test_a_catalog_replaced_by_a_copy_that_went_its_own_way_is_not_answered_from_the_old_ones_data(
    tmp_path: Path,
) -> None:
    """A copy keeps the catalog's identity: synced as often as the served file, it has
    its state token. Its tag pages answered the replaced file's packages (searches and
    cached answers did not)."""
    path, copy = tmp_path / "c.sqlite", tmp_path / "copy.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "develop", [record("a" * 32, "zlib")])
    shutil.copy(path, copy)
    for where, spec in ((path, record("b" * 32, "zstd")), (copy, record("c" * 32, "cmake", os="rhel8"))):
        with Catalog(where) as catalog:
            write_tag(catalog, "develop", [spec])
    with Catalog(path, readonly=True) as served, Catalog(copy, readonly=True) as copied:
        assert served.state_token()[0] == copied.state_token()[0]
    app = create_app(path)
    packages = lambda: [p["name"] for p in get(app, "/api/tags/develop/packages").json()["packages"]]  # noqa: E731
    assert packages() == _found(app, "os=ubuntu24.04") == ["zstd"]
    _quiet_warmers()
    os.replace(copy, path)
    assert packages() == ["cmake"] and _found(app, "cmake") == ["cmake"]
    assert (_found(app, "os=ubuntu24.04"), _found(app, "os=rhel8")) == ([], ["cmake"])  # (the facet indexes too)


def test_a_deleted_catalog_is_an_error_answer_in_a_thread_that_never_read_it(tmp_path: Path) -> None:
    """A worker thread's first connection opens the file at the path: deleted (and not
    written again yet), that raised out of the app (a traceback, "internal error")."""
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record("a" * 32, "zlib")])
    app = create_app(path)
    assert get(app, "/api/tags").status_code == 200  # this thread's connection: kept
    _quiet_warmers()
    for file in tmp_path.glob("c.sqlite*"):
        file.unlink()
    answer = get(app, "/api/tags/t/packages")  # built in a new worker thread
    assert answer.status_code == 500 and "no catalog here yet" in answer.text


def test_a_warm_up_that_ends_after_a_newer_state_came_does_not_call_that_state_ready(tmp_path: Path) -> None:
    """Searches judged cheap are answered on the event loop only once the indexes of the
    state they read are built: an older state's warm-up says nothing of a newer one's."""
    from cachedex.publish.serve.catalogs import Catalogs

    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
    catalogs = Catalogs(path)
    catalog, file = catalogs.get()
    old = (file, catalog.state_token()[0])
    catalogs.warm(old, wait=True)
    assert catalogs.ready
    newer = ((0, 0), "a newer state")  # (of another file: its warm-up thread stops at once)
    catalogs.warm(newer)
    catalogs._warm(old)  # the old state's, ending now
    assert not catalogs.ready
