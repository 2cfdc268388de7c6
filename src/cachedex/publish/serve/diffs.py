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


def _asked(params: Mapping[str, str], old: str, new: str) -> tuple[str, str, bool]:
    """What a diff's parameters ask: two tags (``old`` and ``new``, False), or a tag and
    the date it is compared since (True). BadQuery when they ask both kinds (one would be
    dropped without a word) or half of either."""
    if (params.get(old) or params.get(new)) and (params.get("tag") or params.get("since")):
        raise BadQuery(f"a diff is of two tags ({old} and {new}) or of one over time (tag and since), not both")
    if params.get("tag") or params.get("since"):
        tag, since = params.get("tag", ""), params.get("since", "")
        if not tag or not since:
            raise BadQuery("a diff over time needs tag and since (YYYY-MM-DD)")
        return tag, since, True
    first, second = params.get(old, ""), params.get(new, "")
    if not first or not second:
        raise BadQuery(f"a diff needs {old} and {new} (two tags), or tag and since (YYYY-MM-DD)")
    return first, second, False


def api_diff(catalog: Catalog, request: Request) -> tuple[bytes, str]:
    """``/api/diff``: the diff's JSON."""
    first, second, over_time = _asked(request.query_params, "from", "to")
    if over_time:
        return msgspec.json.encode(diff_since(catalog, first, parse_since(second), second)), JSON
    return msgspec.json.encode(diff_tags(catalog, first, second)), JSON


def diff_page(catalog: Catalog, request: Request) -> ComparePage:
    """``/diff?old=&new=`` (two tags) or ``/diff?tag=&since=YYYY-MM-DD``."""
    first, second, over_time = _asked(request.query_params, "old", "new")
    if over_time:
        return since_page(catalog, first, parse_since(second), second)
    return compare_page(catalog, first, second, live=True)
