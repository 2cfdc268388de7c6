"""A request's path, as the routes read it and as it was sent: what an answer is kept
under, and where a path with its trailing "/" toggled leads."""

from __future__ import annotations

from urllib.parse import unquote

from starlette.requests import Request

__all__ = ["relative_to", "routed_path", "sent_path", "slash_toggled", "slash_within_name"]


def routed_path(request: Request) -> str:
    """The path the routes matched and took their parameters from (percent-decoded, its
    control characters kept): what an answer is kept under. Not ``request.url.path``:
    Starlette makes the URL through ``urlsplit``, which drops tabs and line breaks, so
    ``/api/tags/develop%0a`` read as ``/api/tags/develop`` while its route was asked for
    tag ``"develop\\n"``: one answer was kept for both, and the 404 of the one answered
    the other."""
    return str(request.scope["path"])


def slash_within_name(request: Request) -> bool:
    """Whether the path as sent holds a ``/`` percent-encoded: within a name (no tag,
    package or hash has one), where the routes, which read it decoded, take it for a
    separator (``zlib%2F`` for ``zlib/``, a page whose relative links then lead astray)."""
    raw = request.scope.get("raw_path") or b""
    return b"%2f" in raw.split(b"?", 1)[0].lower()


def sent_path(request: Request) -> str:
    """The request's path as it was sent (still percent-encoded)."""
    raw = request.scope.get("raw_path") or routed_path(request).encode()
    return bytes(raw).decode("latin-1").split("?", 1)[0]


def slash_toggled(path: str) -> str | None:
    """``path`` with its trailing "/" dropped or added (None for the root)."""
    if path == "/":
        return None
    return path[:-1] if path.endswith("/") else path + "/"


def relative_to(request: Request) -> str | None:
    """A relative URL to the request's path with its trailing "/" toggled (with the
    query kept), or None when no URL leads there. Written from the path as it was sent
    (still percent-encoded), which the browser resolves it against."""
    if slash_within_name(request):  # (zlib%2F would lead to zlib%2F/: no page either way)
        return None
    sent = sent_path(request)
    query = f"?{request.url.query}" if request.url.query else ""
    if sent.endswith("//"):  # /tags/t// -> "../", /tags/t/ (a name would be read below the empty segment)
        return "../" + query
    name = sent.rstrip("/").rsplit("/", 1)[-1]
    if unquote(name) in ("", ".", ".."):  # (a browser reads %2e%2e as "..": no way up by a redirect)
        return None
    # /tags/develop -> "develop/" (./ before a name with ":", which would read as a scheme);
    # /api/tags/ -> "../tags".
    target = f"../{name}" if sent.endswith("/") else f"{'./' if ':' in name else ''}{name}/"
    return target + query
