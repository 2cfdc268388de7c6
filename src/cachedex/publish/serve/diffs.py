"""Diffs asked of the server: of two tags, or of one tag over time (since a date). The
API's ``/api/diff?from=&to=`` or ``?tag=&since=``, and the page's ``/diff?old=&new=``
or ``?tag=&since=``: each refuses a mix of the two kinds, and half of either."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
from starlette.requests import Request

from ...catalog import Catalog
from ...diff import diff_since, diff_tags, parse_since
from ...errors import BadQuery
from ..changes import ComparePage, compare_page, since_page
from .refusals import JSON

__all__ = ["DIFF_PARAMETERS", "api_diff", "diff_page"]

#: The parameters of the diff page (``/diff``).
DIFF_PARAMETERS = frozenset({"old", "new", "tag", "since"})


def _one_diff(params: Mapping[str, str], old: str, new: str) -> None:
    """BadQuery when a diff's parameters ask both kinds: two tags (``old`` and ``new``)
    and a tag over time (``tag`` and ``since``); one was dropped without a word."""
    if (params.get(old) or params.get(new)) and (params.get("tag") or params.get("since")):
        raise BadQuery(f"a diff is of two tags ({old} and {new}) or of one over time (tag and since), not both")


def api_diff(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    """``/api/diff``: the diff's JSON."""
    params = request.query_params
    _one_diff(params, "from", "to")
    if params.get("since") or params.get("tag"):
        tag, since = params.get("tag", ""), params.get("since", "")
        if not tag or not since:
            raise BadQuery("a diff over time needs tag and since (YYYY-MM-DD)")
        when = parse_since(since)
        return msgspec.json.encode(diff_since(catalog, tag, when, since)), JSON
    old, new = params.get("from", ""), params.get("to", "")
    if not old or not new:
        raise BadQuery("a diff needs from and to (two tags), or tag and since")
    return msgspec.json.encode(diff_tags(catalog, old, new)), JSON


def diff_page(catalog: Catalog, request: Request) -> ComparePage:
    """``/diff?old=&new=`` (two tags) or ``/diff?tag=&since=YYYY-MM-DD``."""
    params = request.query_params
    _one_diff(params, "old", "new")
    if params.get("tag") or params.get("since"):
        tag, since = params.get("tag", ""), params.get("since", "")
        if not tag or not since:
            raise BadQuery("a diff over time needs tag and since (YYYY-MM-DD)")
        return since_page(catalog, tag, parse_since(since), since)
    old, new = params.get("old", ""), params.get("new", "")
    if not old or not new:
        raise BadQuery("a diff needs old and new (two tags), or tag and since (YYYY-MM-DD)")
    return compare_page(catalog, old, new, live=True)
