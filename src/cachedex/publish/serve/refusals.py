"""How the server refuses a request: its parameters checked (only those a route takes,
none twice, whole numbers in range), and the one error shape, ``{"error": {"status":
<int>, "message": <str>}}`` for the API or an HTML page for the site's routes."""

from __future__ import annotations

import re
from http import HTTPStatus

import msgspec
from starlette.requests import Request

from ...errors import BadQuery
from ..render import render_not_found

__all__ = [
    "HTML",
    "JSON",
    "ErrorBody",
    "ErrorDetail",
    "check_parameters",
    "error_body",
    "error_page",
    "in_api",
    "int_parameter",
    "refusal",
    "wants_html",
]

JSON = "application/json"
HTML = "text/html; charset=utf-8"


class ErrorDetail(msgspec.Struct, frozen=True):
    """What went wrong."""

    status: int  #: the HTTP status: 400 a bad parameter or query, 404 nothing of that name
    message: str  #: one line (a bad query: the query shown with a caret under the problem)


class ErrorBody(msgspec.Struct, frozen=True):
    """Every error answer of the API."""

    error: ErrorDetail


def error_body(status: int, message: str) -> bytes:
    """The JSON of an error: ``{"error": {"status": ..., "message": ...}}``."""
    return msgspec.json.encode(ErrorBody(ErrorDetail(status, message)))


def error_page(status: int, message: str) -> bytes:
    """An error as an HTML page, for the site's routes: the site's own 404 page, for
    another status headed by it ("400 Bad Request"), with the site's navigation."""
    heading = "Not found" if status == 404 else f"{status} {HTTPStatus(status).phrase}"
    return render_not_found(message, heading=heading).encode()


def in_api(path: str) -> bool:
    """Whether ``path`` is the API's."""
    return path == "/api" or path.startswith("/api/")


def wants_html(path: str) -> bool:
    """Whether errors on ``path`` are HTML pages: the site's pages, not their JSON twins
    and not the API."""
    return not in_api(path) and not path.endswith((".json", ".json.gz"))


def refusal(path: str, status: int, message: str) -> tuple[bytes, str]:
    """An error's body on ``path`` and its media type: the site's error page, or the JSON."""
    if wants_html(path):
        return error_page(status, message), HTML
    return error_body(status, message), JSON


def int_parameter(request: Request, name: str, default: int, low: int, high: int) -> int:
    """Parameter ``name`` as a whole number from ``low`` to ``high`` (``default`` when it
    is absent or empty); BadQuery (400) naming the parameter for anything else."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    shown = repr(raw if len(raw) <= 30 else raw[:30] + "...")
    # ASCII digits only: int() would also take "１" (fullwidth), "1_0", "+5" and " 5".
    if not _WHOLE.fullmatch(raw):
        raise BadQuery(f"{name} must be a whole number, got {shown}")
    # (leading zeros are no larger a number: a longer one is out of range anyway)
    digits = raw.lstrip("-").lstrip("0") or "0"
    value = (-1 if raw.startswith("-") else 1) * int(digits) if len(digits) <= 19 else None
    if value is None or not low <= value <= high:
        raise BadQuery(f"{name} must be between {low} and {high}, got {value if value is not None else shown}")
    return value


_WHOLE = re.compile(r"-?[0-9]+")


def check_parameters(request: Request, allowed: frozenset[str]) -> None:
    """BadQuery (400) for a parameter not in ``allowed``, or one given twice."""
    names = [name for name, _ in request.query_params.multi_items()]
    unknown = sorted(set(names) - allowed)
    if unknown:
        raise BadQuery(f"unknown parameter {unknown[0]!r} (allowed: {', '.join(sorted(allowed)) or 'none'})")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise BadQuery(f"parameter {name!r} is given more than once")
        seen.add(name)
