"""From a cached answer to the response sent: its validators (ETag, Last-Modified), a
304 when the client's copy holds, the gzipped body when the client takes it."""

from __future__ import annotations

import datetime
import email.utils
import hashlib

from starlette.requests import Request
from starlette.responses import Response

from .cache import Cached
from .headers import StateDates, accepts_gzip

__all__ = ["NOT_KEPT", "etag", "send"]

#: On the errors made outside :func:`send` (no such route, a method refused, a 500), as
#: on the routes' own: a 404 or a 405 is cacheable by default (RFC 9111, heuristically),
#: and what another version of the server has (its assets, during an upgrade) must not
#: stay missing in a proxy's cache.
NOT_KEPT = {"Cache-Control": "no-cache"}

#: What a gzipped body's ETag ends with: a strong tag is the bytes', and those differ
#: from the plain body's (RFC 9110: "x" for one, "x-gzip" for the other).
_GZIP_TAG = '-gzip"'


def etag(stamp: bytes, content: bytes) -> str:
    """The ETag of an answer made by the code of ``stamp`` (:func:`~..render.render_stamp`,
    one line) from ``content``: its body, or what the body is made of (the answer's
    cache key, which names the catalog's state). A new version of the code, a new tag."""
    return '"' + hashlib.sha1(stamp + content).hexdigest()[:20] + '"'


def _matches(if_none_match: str | None, tag: str) -> bool:
    """Whether an If-None-Match header names ``tag``, compared weakly as RFC 9110
    says (``W/"x"`` is ``"x"``), in a list or as ``*``; the gzipped body's tag
    (``"x-gzip"``) names it too."""
    if not if_none_match:
        return False
    named = (each.strip().removeprefix("W/").replace(_GZIP_TAG, '"') for each in if_none_match.split(","))
    return any(each in (tag, "*") for each in named)


def _not_modified_since(if_modified_since: str | None, date: int) -> bool:
    """Whether an If-Modified-Since date (what ``Last-Modified`` said) is not before
    ``date``, the state's (see :class:`.headers.StateDates`)."""
    if not if_modified_since:
        return False
    try:
        since = email.utils.parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError, IndexError, OverflowError):  # (OverflowError: year 99999999999)
        return False  # (a date that cannot be read is ignored, as RFC 9110 says)
    if since.tzinfo is None:  # asctime's form has no zone: HTTP's dates are GMT (RFC 9110)
        if "-0000" in if_modified_since:  # (a zone said to be unknown)
            return False
        since = since.replace(tzinfo=datetime.UTC)
    return date <= since.timestamp()


def send(request: Request, hit: Cached, date: int | None, cache_control: str = "no-cache") -> Response:
    """The response for a request from a cached answer: 304, gzipped, or as is. Every
    body is gzipped here, once, when cached (so no GZipMiddleware, which would compress
    again and add a second Vary)."""
    headers = {"Cache-Control": cache_control}
    gzipped = hit.gzipped is not None and accepts_gzip(request.headers.get("accept-encoding", ""))
    if hit.gzipped is not None:
        headers["Vary"] = "Accept-Encoding"
    if hit.etag:
        headers["ETag"] = hit.etag[:-1] + _GZIP_TAG if gzipped else hit.etag
    if date is not None and StateDates.servable(date):
        headers["Last-Modified"] = email.utils.formatdate(date, usegmt=True)
    if hit.status == 200:
        # If-None-Match, when sent, decides (RFC 9110); else If-Modified-Since.
        asked = request.headers.get("if-none-match")
        if (hit.etag and _matches(asked, hit.etag)) or (
            asked is None and date is not None and _not_modified_since(request.headers.get("if-modified-since"), date)
        ):
            return Response(status_code=304, headers=headers)
    if gzipped:
        headers["Content-Encoding"] = "gzip"
        return Response(hit.gzipped, status_code=hit.status, media_type=hit.media_type, headers=headers)
    return Response(hit.plain(), status_code=hit.status, media_type=hit.media_type, headers=headers)
