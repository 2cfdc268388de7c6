"""A search's page of specs as :class:`SpecSummary` values: their rows read by id (or
given by the search that read them), each with what holds it, from the holder index a
server builds when it warms up or, in a one-off search, from SQL."""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from ..values import decode_variants, stack_order
from .facets import STATE_CACHE
from .other_compilers import other_compilers_of
from .rows import SpecSummary
from .scopes import holders_key, page_holders

__all__ = ["RESULT_COLUMNS", "found_specs", "summaries"]

_encode = msgspec.json.encode


#: The columns of a search result's row, in the order :func:`summaries` reads them.
RESULT_COLUMNS = "s.id, s.hash, s.name, s.version, s.compiler, s.platform, s.os, s.target, s.variants, s.size"


def found_specs(
    db: sqlite3.Connection, path: str, token: str, tag: str | None, ids: list[int]
) -> tuple[SpecSummary, ...]:
    """The summaries of the specs ``ids``, in that order."""
    rows = db.execute(
        f"SELECT {RESULT_COLUMNS} FROM specs s WHERE s.id IN (SELECT value FROM json_each(?))",
        (_encode(ids).decode(),),
    ).fetchall()
    at = {spec_id: n for n, spec_id in enumerate(ids)}
    rows.sort(key=lambda row: at[row[0]])
    return summaries(db, path, token, tag, rows)


def summaries(
    db: sqlite3.Connection, path: str, token: str, tag: str | None, rows: list[Any]
) -> tuple[SpecSummary, ...]:
    """Result rows (:data:`RESULT_COLUMNS`) as summaries, with what holds each and the
    other compilers of each that more than one built (why ``%gcc`` found it)."""
    if not rows:
        return ()
    # A server builds the holder index when it warms up. A one-off search (the CLI) asks
    # SQL for its page's holders instead: the index of a big tag takes ~0.4 s to read.
    index = STATE_CACHE.peek(path, token, holders_key(tag))
    held = index.of if index is not None else page_holders(db, path, token, tag, [row[0] for row in rows])
    others = other_compilers_of(db, path, token, [row[0] for row in rows])
    return tuple(
        SpecSummary(
            hash=h,
            name=n,
            version=v,
            compiler=c,
            platform=p,
            os=o,
            target=t,
            variants=decode_variants(var),
            size=size,
            tags=(tag,) if tag is not None else held(spec),
            stacks=tuple(sorted(held(spec), key=stack_order)) if tag is not None else (),
            other_compilers=others.get(spec, ()),
        )
        for spec, h, n, v, c, p, o, t, var, size in rows
    )
