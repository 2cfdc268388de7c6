"""What every answer of the server carries besides its body: headers that keep a browser
from doing more with it than showing it (a content security policy, no type sniffing),
when the code that makes the pages was installed (their validators name it), and the
date each catalog state is served under."""

from __future__ import annotations

import base64
import hashlib
import importlib.resources
import math
import re
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from ..render import render_not_found

__all__ = ["SecurityHeaders", "StateDates", "accepts_gzip", "code_modified", "security_headers"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def code_modified() -> float:
    """When cachedex's newest file (code, template, asset) was written: an upgrade writes
    them anew. Not the bytecode: a process writes it when it first imports a module."""
    package = Path(str(importlib.resources.files("cachedex")))
    return max(
        (p.stat().st_mtime for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts),
        default=0.0,
    )


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header takes gzip: named, or as ``*``, with a weight
    above 0 (``gzip;q=0`` refuses it, RFC 9110)."""
    weights: dict[str, float] = {}
    for item in accept_encoding.lower().split(","):
        coding, _, parameters = item.strip().partition(";")
        weight = 1.0
        name, _, value = parameters.strip().partition("=")
        if name.strip() == "q":
            try:
                weight = float(value)
            except ValueError:
                weight = 0.0
        weights[coding.strip()] = weight
    return weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0))) > 0


class StateDates:
    """The ``Last-Modified`` date of the catalog state this process serves: the second
    after it first saw that state, and later than the date of any state it saw before.

    A date read from the catalog (its last sync's end) would not move when a tag is
    forgotten, a mirror verified or the file replaced by an older copy, nor for two
    syncs in one second or after the clock was set back: a client asking by date alone
    (``curl -z``, ``wget -N``, a proxy) would be told its old copy is current. Any
    process's date of a state is later than every date served of the states before it
    (none is served before its second has passed: see :meth:`servable`), so no two
    states share one, in one worker or across workers; a new process dates the states
    it finds anew (its clients fetch once more)."""

    def __init__(self, earliest: float) -> None:
        self._lock = threading.Lock()
        self._state: object = None
        self._date = math.floor(earliest)  #: no date before the code's own
        self._served = self._date  #: the latest date sent

    def of(self, state: object) -> int:
        """The date (whole seconds) of ``state``, a new one when it is not the last seen.
        A new date follows the clock and the dates that could be sent (see
        :meth:`servable`), not the dates of states no answer could be dated by yet:
        forty syncs in five seconds put the date forty seconds ahead of the clock, and
        Last-Modified was withheld until the clock caught up."""
        now = time.time()
        with self._lock:
            if state != self._state:
                self._state = state
                self._date = max(math.floor(now) + 1, self._served + 1)
            if self._date <= now:
                self._served = max(self._served, self._date)
            return self._date

    @staticmethod
    def servable(date: int) -> bool:
        """Whether ``date`` may be sent: only once its second has begun (never a date
        after the answer's own, RFC 9110), and so only after the second in which the
        state before it was last served."""
        return date <= time.time()


def _inline_hashes(page: str, kind: str) -> str:
    """The CSP sources of ``page``'s own inline ``<style>`` or ``<script>``."""
    found = re.findall(rf"<{kind}>(.*?)</{kind}>", page, re.S)
    return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(t.encode()).digest()).decode()}'" for t in found)


def security_headers() -> list[tuple[bytes, bytes]]:
    """The headers every answer carries. The pages load their scripts, styles and data
    from this server only, and are framed by no other site: should a value from a mirror
    ever escape its escaping, a browser runs nothing it brings. The error page is
    self-contained (shown at any URL): its inline style and script are allowed by their
    hashes, the same for every error."""
    page = render_not_found()
    policy = (
        "default-src 'self'; "
        f"script-src 'self' {_inline_hashes(page, 'script')}; "
        f"style-src 'self' {_inline_hashes(page, 'style')}; "
        "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
    )
    return [
        (b"content-security-policy", policy.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"same-origin"),
    ]


class SecurityHeaders:
    """ASGI middleware: :func:`security_headers` on every response, errors included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.headers = security_headers()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *self.headers]
            await send(message)

        await self.app(scope, receive, with_headers)
