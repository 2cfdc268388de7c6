"""What ``/api/openapi.json`` declares against what the API really answers: a sample of
real answers, revalidations (304), slash redirects (307), refusals (400 to 503) among
them, each checked against the statuses and content types its route declares, and each
body against the struct the document's schema is made from."""

from __future__ import annotations

import asyncio
import re
import string
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.cli.serve_app import serve_app
from cachedex.publish.serve import openapi, reuse_route
from cachedex.publish.serve.refusals import ErrorBody
from tests.helpers import Demo
from tests.publish.serve import corrupt_catalog, crowded

#: Answers without a body.
_EMPTY = {304, 307}


def _route(document: dict[str, Any], path: str) -> tuple[str, dict[str, Any]]:
    """The documented path a request's path is answered by: itself, or, written with a
    trailing "/", the path without it (which the 307 sends the client to)."""
    path = path.split("?", 1)[0]
    for candidate in (path, path.removesuffix("/")):
        for template, operations in document["paths"].items():
            if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), candidate):
                return template, operations
    raise AssertionError(f"{path}: no documented path answers it")


def _schema_type(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    """The struct a response schema names (by its $ref), as msgspec decodes it."""
    structs = {kind.__name__: kind for kind in vars(openapi).values() if isinstance(kind, type)}
    if schema.get("type") == "array":
        return list[_schema_type(document, schema["items"])]  # type: ignore[misc]
    name = schema["$ref"].rsplit("/", 1)[-1]
    assert name in document["components"]["schemas"], name
    return structs[name]


def check_declared(document: dict[str, Any], method: str, path: str, answer: httpx.Response) -> None:
    """AssertionError unless the route of ``path`` declares ``answer``'s status for
    ``method`` (a method it does not take: 405, declared by each of its operations),
    with the answer's content type, and the body has the declared shape."""
    template, operations = _route(document, path)
    status = answer.status_code
    operation = "get" if method == "HEAD" else method.lower()  # (HEAD is answered as GET)
    declared = (
        [operations[operation]["responses"]]
        if operation in operations
        else [other["responses"] for other in operations.values()]
    )
    if operation not in operations:
        assert status == 405, (method, path, status)
    for responses in declared:
        assert str(status) in responses, f"{method} {path} answered {status}, not declared for {template}"
        response = responses[str(status)]
        if status in _EMPTY:
            assert "content" not in response, (template, status)
        if status in _EMPTY or method == "HEAD":
            assert not answer.content, (method, path, status)
            continue
        media = answer.headers["content-type"].split(";", 1)[0]
        assert media in response["content"], f"{method} {path}: {status} as {media}, not declared"
        if media == "application/json":
            kind = ErrorBody if status >= 400 else _schema_type(document, response["content"][media]["schema"])
            msgspec.json.decode(answer.content, type=kind)
        for name, header in response.get("headers", {}).items():
            assert not header.get("required") or name in answer.headers, (method, path, status, name)


def _ambiguous_prefix(catalog: Path) -> str:
    with Catalog(catalog, readonly=True) as opened:
        return next(c for c in string.ascii_lowercase + string.digits if len(opened.hashes_starting(c, limit=2)) > 1)


async def _answers(app: Any, requests: list[tuple[str, str, dict[str, str], bytes]]) -> list[httpx.Response]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        return [
            await client.request(method, path, headers=headers, content=body or None)
            for method, path, headers, body in requests
        ]


@pytest.fixture(scope="module")
def document(demo_run: Demo) -> dict[str, Any]:
    answer = asyncio.run(_answers(serve_app(demo_run.catalog), [("GET", "/api/openapi.json", {}, b"")]))[0]
    document: dict[str, Any] = answer.json()
    return document


def test_a_sample_of_real_answers_is_declared(demo_run: Demo, document: dict[str, Any]) -> None:
    app = serve_app(demo_run.catalog)
    ambiguous = _ambiguous_prefix(demo_run.catalog)
    lockfile = (demo_run.folder / "spack.lock").read_bytes()
    # (method, path, status expected): every documented path, answered and refused
    sample = [
        ("GET", "/api/tags", 200),
        ("GET", "/api/tags?format=yaml", 400),
        ("GET", "/api/tags/develop/packages?compiler=gcc@13.3.0&runs_on=zen4", 200),
        ("GET", "/api/tags/develop/packages?stack=nope", 404),
        ("GET", "/api/tags/develop/packages?q=zlib", 400),
        ("GET", "/api/tags/develop/packages/zlib-ng", 200),
        ("GET", "/api/tags/develop/packages/nope", 404),
        ("GET", f"/api/specs/{ambiguous}", 404),
        ("GET", "/api/specs/zzzzzzz", 404),
        ("GET", "/api/search?q=zlib-ng&tag=develop&limit=2", 200),
        ("GET", "/api/search?q=%40%40", 400),
        ("GET", "/api/search?q=zlib&stack=e4s", 400),
        ("GET", "/api/search?tag=nope", 404),
        ("GET", "/api/diff?from=develop-2026-11-08&to=develop", 200),
        ("GET", "/api/diff?tag=develop&since=2026-11-01", 200),
        ("GET", "/api/diff?tag=develop&since=soon", 400),
        ("GET", "/api/diff?from=develop&to=nope", 404),
        ("GET", "/api/tags/develop/verify", 404),  # (never verified)
        ("GET", "/api/tags/develop/coverage", 200),
        ("GET", "/api/tags/nope/coverage", 404),
        ("HEAD", "/api/tags/develop/coverage", 200),
        ("POST", "/api/tags", 405),
        ("GET", "/api/reuse", 405),
        ("POST", "/api/reuse?tag=develop", 200),
        ("POST", "/api/reuse?tag=nope", 404),
        ("POST", "/api/reuse?colour=red", 400),
    ]
    # Each path with a trailing "/": sent to the path without it, whatever it answers there;
    # with a method the path does not take, refused as there (405, not 404).
    sample += [
        (method, path.replace("?", "/?", 1) if "?" in path else path + "/", 405 if status == 405 else 307)
        for method, path, status in sample
    ]
    requests: list[tuple[str, str, dict[str, str], bytes]] = [
        (method, path, {}, lockfile if method == "POST" else b"") for method, path, _ in sample
    ]
    answers = asyncio.run(_answers(app, requests))
    for (method, path, expected), answer in zip(sample, answers, strict=True):
        assert answer.status_code == expected, (method, path, answer.status_code, answer.text[:200])
        check_declared(document, method, path, answer)
    said = dict(zip([path for _, path, _ in sample], answers, strict=True))
    assert "ambiguous" in said[f"/api/specs/{ambiguous}"].json()["error"]["message"]

    # Revalidated: 304 for each GET answered 200, by its ETag and by its date.
    ok = [(m, p, a) for (m, p, status), a in zip(sample, answers, strict=True) if m == "GET" and status == 200]
    again = [("GET", path, {"If-None-Match": answer.headers["etag"]}, b"") for _, path, answer in ok]
    again += [("GET", path, {"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"}, b"") for _, path, _ in ok]
    for (method, path, _, _), answer in zip(again, asyncio.run(_answers(app, again)), strict=True):
        assert answer.status_code == 304, (path, answer.status_code)
        check_declared(document, method, path, answer)


def test_the_ambiguous_prefix_is_one_the_document_describes(document: dict[str, Any]) -> None:
    described = document["paths"]["/api/specs/{hash}"]["get"]["responses"]["404"]["description"]
    assert "ambiguous" in described and "no spec" in described.lower()


def test_refused_bodies_are_declared(demo_run: Demo, document: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """413, 408 and the 503 of the bodies' budget, from the reuse route itself."""
    monkeypatch.setattr(reuse_route, "BODY_BYTES", 100)
    monkeypatch.setattr(reuse_route, "BODY_SECONDS", 0.2)
    monkeypatch.setattr(reuse_route, "BODIES_BYTES", 150)

    async def slow() -> AsyncIterator[bytes]:
        yield b"{"
        await asyncio.sleep(2)
        yield b"}"

    async def go() -> list[httpx.Response]:
        app = serve_app(demo_run.catalog)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return [
                await client.post("/api/reuse", content=b" " * 101),
                await client.post("/api/reuse", content=slow()),
            ]

    too_big, too_slow = asyncio.run(go())
    assert (too_big.status_code, too_slow.status_code) == (413, 408)

    async def busy() -> httpx.Response:
        app = serve_app(demo_run.catalog)

        async def held() -> AsyncIterator[bytes]:
            yield b" " * 90
            await asyncio.sleep(0.1)

        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            first = asyncio.create_task(client.post("/api/reuse", content=held()))
            await asyncio.sleep(0.05)  # its 90 bytes held: 90 more are past the budget
            refused = await client.post("/api/reuse", content=b" " * 90)
            await first
            return refused

    refused = asyncio.run(busy())
    assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
    for answer in (too_big, too_slow, refused):
        check_declared(document, "POST", "/api/reuse", answer)


def test_a_catalog_that_cannot_be_read_is_declared(tmp_path: Path, document: dict[str, Any]) -> None:
    app = serve_app(corrupt_catalog(tmp_path / "corrupt.sqlite"))
    paths = ["/api/tags/t/packages", "/api/search?q=pkg-00001"]
    for path, answer in zip(paths, asyncio.run(_answers(app, [("GET", p, {}, b"") for p in paths])), strict=True):
        assert answer.status_code == 500, (path, answer.text)
        check_declared(document, "GET", path, answer)


@pytest.fixture
def crowded_server(demo_run: Demo) -> Iterator[str]:
    with crowded(demo_run.config) as url:
        yield url


def test_a_server_past_its_connection_limit_is_declared(crowded_server: str, document: dict[str, Any]) -> None:
    for method, path in [("GET", "/api/tags"), ("GET", "/api/specs/zzzz"), ("POST", "/api/reuse")]:
        answer = httpx.request(method, crowded_server + path, content=b"{}" if method == "POST" else None, timeout=5)
        assert answer.status_code == 503, (path, answer.text)
        check_declared(document, method, path, answer)


def test_an_empty_page_parameter_is_its_default_as_declared(demo_run: Demo, document: dict[str, Any]) -> None:
    """A form's empty field (``limit=``) is the default: the document says so too."""
    declared = {p["name"]: p for p in document["paths"]["/api/search"]["get"]["parameters"]}
    assert declared["limit"]["allowEmptyValue"] and declared["offset"]["allowEmptyValue"]
    app = serve_app(demo_run.catalog)
    empty, default = asyncio.run(
        _answers(app, [("GET", f"/api/search?q=zlib{extra}", {}, b"") for extra in ("&limit=&offset=", "")])
    )
    assert empty.status_code == 200 and empty.json() == default.json()


def test_path_parameters_are_required_and_a_page_s_bounds_and_default_are_the_server_s(
    demo_run: Demo, document: dict[str, Any]
) -> None:
    """Each path parameter is required (OpenAPI's rule: validators refuse the document
    otherwise); ``limit`` and ``offset`` answer 200 at their declared bounds and 400 past
    them, and a search without ``limit`` lists the declared default."""
    for template, operations in document["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                assert parameter["required"] == (parameter["in"] == "path"), (template, parameter["name"])
    declared = {p["name"]: p["schema"] for p in document["paths"]["/api/search"]["get"]["parameters"]}
    asked = []
    for name in ("limit", "offset"):
        low, high = declared[name]["minimum"], declared[name]["maximum"]
        asked += [(name, low, 200), (name, high, 200), (name, low - 1, 400), (name, high + 1, 400)]
    answers = asyncio.run(
        _answers(
            serve_app(demo_run.catalog),
            [("GET", "/api/search?q=", {}, b"")] + [("GET", f"/api/search?q=&{n}={v}", {}, b"") for n, v, _ in asked],
        )
    )
    assert [a.status_code for a in answers[1:]] == [status for _, _, status in asked], asked
    plain = answers[0].json()
    assert plain["total"] > declared["limit"]["default"] == len(plain["specs"])


def test_a_server_that_reads_no_lockfile_does_not_declare_reuse(demo_run: Demo) -> None:
    from cachedex.publish.serve import create_app

    app = create_app(demo_run.catalog)
    (answer,) = asyncio.run(_answers(app, [("GET", "/api/openapi.json", {}, b"")]))
    assert "/api/reuse" not in answer.json()["paths"]
    (refused,) = asyncio.run(_answers(app, [("POST", "/api/reuse", {}, b"{}")]))
    assert refused.status_code in (404, 405)
