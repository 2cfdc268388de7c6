"""Several JSON objects one after another in one input, as ``spack spec --json A B``
prints them (one a line): where each ends, found without decoding them (a bracket inside
a string is not one). :mod:`.lockfile` reads such an input as that many spec files."""

from __future__ import annotations

import re

__all__ = ["json_objects"]

#: A JSON string (its escapes skipped whole) or a bracket: what finds where each of
#: several documents ends (a bracket inside a string is not one).
_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[][{}]')
_BETWEEN = re.compile(rb"\s*")
#: Where one object may end and the next begin: never outside a string in one document.
_NEXT = re.compile(rb"}\s*{")


def json_objects(data: bytes) -> list[bytes] | None:
    """The JSON objects of ``data`` when it holds more than one, one after another (what
    ``spack spec --json A B`` prints: a line each); None when it is not so (the decode
    error of the whole then says what is wrong)."""
    if _NEXT.search(data) is None:  # (a damaged lockfile: no slower look at it)
        return None
    found: list[bytes] = []
    depth, start, end = 0, 0, 0
    for token in _JSON_TOKEN.finditer(data):
        text, at = token.group(), token.start()
        if depth == 0:
            if text != b"{" or _BETWEEN.fullmatch(data, end, at) is None:
                return None  # something between two objects, or not an object
            start = at
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                end = token.end()
                found.append(data[start:end])
    if depth != 0 or len(found) < 2 or _BETWEEN.fullmatch(data, end) is None:
        return None
    return found
