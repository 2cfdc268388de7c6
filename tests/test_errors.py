"""The one error family: its tree, the statuses the server answers with, one wording per
kind of error, and the API's one JSON error shape."""

from __future__ import annotations

import inspect

import httpx
import pytest

from cachedex import errors
from cachedex.errors import (
    BadQuery,
    CachedexError,
    ChecksumError,
    ConfigError,
    JekyllError,
    LookupFailed,
    OutputError,
    SourceError,
    SourceNotFound,
    UnknownPackage,
    UnknownSpec,
    UnknownStack,
    UnknownTag,
)


def test_every_error_is_a_cachedex_error_drawn_in_the_module_docstring() -> None:
    classes = [value for value in vars(errors).values() if inspect.isclass(value) and issubclass(value, Exception)]
    assert len(classes) >= 15
    for kind in classes:
        assert issubclass(kind, CachedexError)
        if not kind.__name__.startswith("_"):
            assert kind.__name__ in (errors.__doc__ or ""), f"{kind.__name__} is not in the drawn tree"
            assert kind.__doc__, f"{kind.__name__} does not say who raises it"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (UnknownTag("x"), 404),
        (UnknownStack("t", "s"), 404),
        (UnknownPackage("p", "t"), 404),
        (UnknownSpec("abc"), 404),
        (BadQuery("q", 0, "bad"), 400),
        (BadQuery("limit must be a whole number"), 400),
        (ConfigError(["x"]), 400),
        (SourceError("u", "p"), 502),
        (errors.CatalogError("c"), 500),
        (OutputError("o"), 500),
    ],
)
def test_statuses(error: CachedexError, status: int) -> None:
    assert error.status == status


def test_one_wording_per_kind() -> None:
    assert str(UnknownTag("nope", ["a", "b"])) == "no tag 'nope' in the catalog (tags: a, b)"
    assert str(UnknownTag("nope")) == "no tag 'nope' in the catalog; run 'cachedex sync' first"
    assert "and 5 more" in str(UnknownTag("x", [f"t{n}" for n in range(25)]))
    assert str(UnknownPackage("p", "t")) == "tag 't' lists no package 'p'"
    assert str(UnknownPackage("p", "t", [("t", 0), ("u", 1), ("v", 2_000)])) == (
        "tag 't' lists no package 'p'; it is in u (1 spec), v (2,000 specs)"
    )
    assert str(UnknownPackage("p")) == "no tag lists a package 'p'; try 'cachedex search p'"
    assert str(BadQuery("zlib @", 5, "'@' needs a version")) == "bad query: '@' needs a version\n  zlib @\n       ^"
    assert str(SourceNotFound("http://x/i", "not found")) == "http://x/i: not found"
    assert issubclass(SourceNotFound, SourceError) and issubclass(ChecksumError, SourceError)
    assert issubclass(JekyllError, OutputError) and issubclass(UnknownSpec, LookupFailed)


def test_the_api_answers_every_error_in_one_shape(small_catalog: object) -> None:
    from cachedex.publish.serve import create_app

    app = create_app(small_catalog.path)  # type: ignore[attr-defined]

    async def fetch(path: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            return await client.get(path)

    import asyncio

    for path, status in [
        ("/api/tags/nope/packages", 404),
        ("/api/search?q=zlib%20@", 400),
        ("/api/search?q=zlib&tag=t&stack=nope", 404),
        ("/api/search?q=zlib&stack=s", 400),
        ("/api/search?limit=0", 400),
        ("/api/specs/" + "q" * 32, 404),
        ("/api/tags?x=1", 400),
        ("/api/nothing", 404),
    ]:
        answer = asyncio.run(fetch(path))
        assert answer.status_code == status, (path, answer.text)
        body = answer.json()
        assert set(body) == {"error"} and set(body["error"]) == {"status", "message"}, path
        assert body["error"]["status"] == status and body["error"]["message"], path
