"""``POST /api/reuse``: a lockfile in the body, the report ``cachedex reuse`` makes, and
what the route refuses (bodies too big or too slow, what is not a lockfile)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.cli.serve_app import serve_app
from cachedex.ingest.lockfile import parse_lockfile
from cachedex.publish.serve import create_app, reuse_route
from cachedex.reuse import reuse_report
from tests.helpers import Demo
from tests.lockfiles import changed, closure, demo_nodes, developed, lockfile, roots_named, spliced


def _post(app: Any, path: str, body: bytes | AsyncIterator[bytes], **headers: str) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await client.post(path, content=body, headers=headers)

    return asyncio.run(go())


def _environment() -> bytes:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = changed(closure(nodes, roots), "zlib-ng", lambda node: node.update(version="9.9.9"))
    return json.dumps(lockfile(specs, [renamed[r] for r in roots])).encode()


def test_the_report_is_cachedex_reuses(demo_run: Demo) -> None:
    body = _environment()
    answer = _post(serve_app(demo_run.catalog), "/api/reuse?tag=develop,v1.0.2", body)
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    lock = parse_lockfile(body, "the request's body")
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        made = reuse_report(catalog, lock.path, lock.specs, [r.hash for r in lock.roots], tags=["develop", "v1.0.2"])
    assert answer.json() == json.loads(msgspec.json.encode(made))
    assert [row["tag"] for row in answer.json()["tags"]] == ["develop", "v1.0.2"]
    assert sum(not m["follows"] for m in answer.json()["tags"][0]["missing"]) == 1
    stack = _post(serve_app(demo_run.catalog), "/api/reuse?tag=develop&stack=e4s", body).json()
    assert stack["tags"][0]["stack"] == "e4s"


def test_spliced_specs_come_from_their_build_specs(demo_run: Demo) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = spliced(nodes, roots, "zlib-ng")
    body = json.dumps(lockfile(specs, [renamed[r] for r in roots])).encode()
    (develop,) = _post(serve_app(demo_run.catalog), "/api/reuse?tag=develop", body).json()["tags"]
    assert develop["rewired"] == sum("build_spec" in node for node in specs.values()) > 0
    assert [m["name"] for m in develop["missing"]] == ["zlib-ng"]


def test_a_spec_developed_in_place_is_apart_with_no_nearest_build(demo_run: Demo) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = developed(nodes, roots, "zlib-ng")
    (zlib,) = [key for key, node in specs.items() if node["name"] == "zlib-ng"]
    body = json.dumps(lockfile(specs, [renamed[r] for r in roots])).encode()
    report = _post(serve_app(demo_run.catalog), "/api/reuse?tag=develop", body).json()
    assert [(d["hash"], d["name"], d["root"]) for d in report["developed"]] == [(zlib, "zlib-ng", False)]
    (develop,) = report["tags"]
    assert zlib not in {m["hash"] for m in develop["missing"]} and all(m["follows"] for m in develop["missing"])


def test_the_report_is_gzipped_as_every_answer(demo_run: Demo) -> None:
    """The README: answers of 800 bytes or more are gzipped. The report was sent as is,
    whatever the client accepted (the reuse page's browser, curl --compressed): an
    environment of thousands of specs has a report of megabytes."""
    app, body = serve_app(demo_run.catalog), _environment()
    zipped = _post(app, "/api/reuse?tag=develop", body, **{"accept-encoding": "gzip"})
    plain = _post(app, "/api/reuse?tag=develop", body, **{"accept-encoding": "identity"})
    assert zipped.status_code == plain.status_code == 200 and len(plain.content) >= 800
    assert zipped.headers["content-encoding"] == "gzip" and "content-encoding" not in plain.headers
    assert int(zipped.headers["content-length"]) < len(plain.content) // 2
    assert zipped.json() == plain.json()
    for answer in (zipped, plain):
        assert answer.headers["vary"] == "Accept-Encoding" and answer.headers["cache-control"] == "no-store"
    short = _post(app, "/api/reuse", b"{}", **{"accept-encoding": "gzip"})  # (a short error: as is)
    assert short.status_code == 400 and "content-encoding" not in short.headers


def test_what_the_route_refuses(demo_run: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    app = serve_app(demo_run.catalog)
    body = _environment()

    def refused(path: str, content: bytes | AsyncIterator[bytes], status: int) -> str:
        answer = _post(app, path, content)
        assert answer.status_code == status, answer.text
        return str(answer.json()["error"]["message"])

    assert "not a Spack lockfile" in refused("/api/reuse", b"{}", 400)
    assert "send a Spack lockfile" in refused("/api/reuse", b"", 400)
    assert "unknown parameter 'q'" in refused("/api/reuse?q=x", body, 400)
    assert "nope" in refused("/api/reuse?tag=nope", body, 404)
    assert "no stack" in refused("/api/reuse?tag=develop&stack=nope", body, 404)
    monkeypatch.setattr(reuse_route, "BODY_BYTES", 1000)
    assert "larger than 1,000 bytes" in refused("/api/reuse", body, 413)

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
        yield b" " * 800
        yield b" " * 700

    assert "larger than 1,000 bytes" in refused("/api/reuse", chunked(), 413)

    async def slow() -> AsyncIterator[bytes]:
        yield b"{"
        await asyncio.sleep(5)
        yield b"}"

    monkeypatch.setattr(reuse_route, "BODY_SECONDS", 0.2)
    assert "did not arrive within" in refused("/api/reuse", slow(), 408)
    got = asyncio.run(_get(app, "/api/reuse"))
    assert got.status_code == 405 and got.headers["allow"] == "POST"
    # an app not given a lockfile reader has no such route, and its search page no link to it
    plain = create_app(demo_run.catalog)
    assert _post(plain, "/api/reuse", body).status_code == 404
    assert asyncio.run(_get(plain, "/reuse.html")).status_code == 404
    assert 'id="reuse-link"' not in asyncio.run(_get(plain, "/search.html")).text
    assert "/api/reuse" not in asyncio.run(_get(plain, "/api/openapi.json")).json()["paths"]
    assert "/api/reuse" in asyncio.run(_get(app, "/api/openapi.json")).json()["paths"]
    assert 'id="reuse-link"' in asyncio.run(_get(app, "/search.html")).text


async def _get(app: Any, path: str) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        return await client.get(path)


def test_bodies_held_at_once_are_bounded(demo_run: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each body is bounded, and so are all those a process holds at once: a thousand
    slow uploads of 64 MiB would hold 64 GB. Past the bound, 503 and Retry-After; what
    an answered request held is given back."""
    monkeypatch.setattr(reuse_route, "BODIES_BYTES", 3000)
    app = serve_app(demo_run.catalog)
    body = _environment()
    assert len(body) > 3000  # (alone, even this one is past the bound)

    async def slow() -> AsyncIterator[bytes]:
        yield b" " * 2500
        await asyncio.sleep(1.0)
        yield b"{}"

    async def go() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            first = asyncio.create_task(client.post("/api/reuse", content=slow()))
            await asyncio.sleep(0.3)  # its first 2,500 bytes held
            second = await client.post("/api/reuse", content=b" " * 1000)
            answered = await first
            # 1,000 bytes fit only if the first request's 2,502 were given back
            third = await client.post("/api/reuse", content=b" " * 998 + b"{}")
            return answered, second, third

    answered, second, third = asyncio.run(go())
    assert second.status_code == 503 and second.headers["retry-after"] == "5"
    assert answered.status_code == 400 and third.status_code == 400  # (not lockfiles: read, and refused as such)
    assert _post(app, "/api/reuse", body).status_code == 503


def test_empty_tag_and_stack_parameters_are_their_defaults(demo_run: Demo) -> None:
    """A form's empty field (``tag=``, ``stack=``) or a trailing comma asks for no tag
    more: every tag, the root."""
    app = serve_app(demo_run.catalog)
    body = _environment()

    def report(path: str) -> Any:
        answer = _post(app, path, body)
        assert answer.status_code == 200, (path, answer.text)
        return answer.json()

    assert report("/api/reuse?tag=") == report("/api/reuse")
    assert report("/api/reuse?tag=develop,") == report("/api/reuse?tag=develop") != report("/api/reuse")
    assert report("/api/reuse?tag=develop&stack=") == report("/api/reuse?tag=develop&stack=root")


def test_a_body_its_reader_cannot_take_is_the_client_s_error(demo_run: Demo) -> None:
    """Whatever the reader refuses (a format, or a source it names) answers 400, not the
    502 of a mirror's failure, which a proxy may retry."""
    from cachedex.errors import IndexFormatError, SourceError

    for error in (SourceError("the request's body", "refused"), IndexFormatError("the request's body", "bad")):

        def read(data: bytes, name: str, error: Exception = error) -> Any:
            raise error

        answer = _post(create_app(demo_run.catalog, read_environment=read), "/api/reuse", b"{}")
        assert answer.status_code == 400, answer.text
