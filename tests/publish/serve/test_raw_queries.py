"""Query strings as a non-browser client may send them, with ``"`` and ``<`` not
percent-encoded (httpx would encode them, so the app is called as ASGI directly): the
"as JSON" link repeats the query as written, and the page is kept for every visitor."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cachedex.cli.serve_app import serve_app
from tests.helpers import Demo

HOSTILE = b'"><script>alert(1)</script>'


async def _raw(app: Any, path: str, query: bytes) -> tuple[int, bytes]:
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": query, "root_path": "",
        "headers": [(b"host", b"test")], "client": ("127.0.0.1", 1), "server": ("test", 80),
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.parametrize(("path", "query"), [("/tags/develop/", b"q=zlib"), ("/search.html", b"q=zlib")])
def test_a_query_written_with_markup_is_escaped_in_the_json_link(demo_run: Demo, path: str, query: bytes) -> None:
    app = serve_app(demo_run.catalog)
    for _ in range(2):  # built, then from the answer cache
        status, body = asyncio.run(_raw(app, path, query + HOSTILE))
        assert status == 200
        assert b"<script>alert" not in body
        assert b'?q=zlib&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">this page as JSON</a>' in body
