"""The answer of a server process that holds as many connections as it takes at once:
503 with ``Retry-After``, in the one error shape (JSON under ``/api`` and for a page's
JSON twin, the site's error page elsewhere), with the headers every answer carries.

uvicorn's own answer past ``limit_concurrency`` is a line of plain text without them: no
content security policy, no ``nosniff``, no ``Retry-After``. :class:`.server.BoundedHttpTools`
makes uvicorn's check itself and hands a request past the limit to :class:`OverLimit`
instead of the app. Nothing is made per request: both answers are made once.
"""

from __future__ import annotations

from typing import Any

from .headers import Receive, Scope, Send, security_headers
from .refusals import HTML, JSON, error_body, error_page, wants_html

__all__ = ["OverLimit"]


class OverLimit:
    """The ASGI app that answers 503 to any request, without reading its body, and
    closes the connection (as uvicorn's did: a connection kept would keep its place)."""

    def __init__(self, retry_seconds: int) -> None:
        message = f"the server holds as many connections as it takes at once; try again in {retry_seconds} s"
        self._answers = {
            html: self._answer(body, media_type, retry_seconds)
            for html, body, media_type in [
                (True, error_page(503, message), HTML),
                (False, error_body(503, message), JSON),
            ]
        }

    @staticmethod
    def _answer(body: bytes, media_type: str, retry_seconds: int) -> tuple[dict[str, Any], dict[str, Any]]:
        headers = [
            (b"content-type", media_type.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(retry_seconds).encode()),
            (b"cache-control", b"no-cache"),  # as every error made outside a route: not kept
            (b"connection", b"close"),
            *security_headers(),
        ]
        start = {"type": "http.response.start", "status": 503, "headers": headers}
        return start, {"type": "http.response.body", "body": body, "more_body": False}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, body = self._answers[wants_html(scope["path"])]
        await send(dict(start))  # (a copy each: a server may add to what it is sent)
        await send(dict(body))
