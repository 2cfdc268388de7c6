"""A search's scope and what holds its specs: the catalog's mirrors by tag and stack,
and each spec's holders, read once per catalog state (see :mod:`.search`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

import msgspec

from ..errors import BadQuery, UnknownStack, UnknownTag
from ..values import ROOT_STACK, stack_order
from .facets import STATE_CACHE
from .holders import HolderIndex

__all__ = [
    "holder_index",
    "holder_names",
    "holders_key",
    "mirror_ids",
    "mirror_names",
    "page_holders",
    "scope_mirrors",
    "stack_names",
]

_encode = msgspec.json.encode


def scope_mirrors(
    db: sqlite3.Connection, path: str, token: str, tag: str | None, stack: str | None
) -> tuple[int | None, int | None]:
    """(root mirror id, stack mirror id) of a search's scope in state ``token``: (None,
    None) for every listed spec of the catalog, (root, None) for a tag (or its stack
    ``root``). UnknownTag, UnknownStack, or BadQuery for a stack without a tag."""
    if tag is None:
        if stack is not None:
            raise BadQuery("a stack needs a tag")
        return None, None
    mirrors = mirror_ids(db, path, token).get(tag, {})
    if ROOT_STACK not in mirrors:
        raise UnknownTag(tag, [row[0] for row in db.execute("SELECT name FROM tags ORDER BY name")])
    if stack is None or stack == ROOT_STACK:
        return mirrors[ROOT_STACK], None
    if stack not in mirrors:
        raise UnknownStack(tag, stack)
    return mirrors[ROOT_STACK], mirrors[stack]


def mirror_ids(db: sqlite3.Connection, path: str, token: str) -> dict[str, dict[str, int]]:
    """Every mirror's id, by tag and stack, in state ``token`` (made once per state from
    :func:`mirror_names`: a search asks for its scope's on every request)."""

    def index() -> dict[str, dict[str, int]]:
        found: dict[str, dict[str, int]] = {}
        for mirror, (tag, stack, _) in mirror_names(db, path, token).items():
            found.setdefault(tag, {})[stack] = mirror
        return found

    return STATE_CACHE.get(path, token, ("mirrors",), index)  # type: ignore[no-any-return]


def stack_names(db: sqlite3.Connection, path: str, token: str, tag: str) -> list[str]:
    """A tag's stacks in state ``token``, ``root`` first, then by name (the order of
    ``Catalog.mirrors``); [] for an unknown tag."""
    return sorted(mirror_ids(db, path, token).get(tag, {}), key=stack_order)


def mirror_names(db: sqlite3.Connection, path: str, token: str) -> dict[int, tuple[str, str, bool]]:
    """Every mirror's (tag, stack, has its own index), by id, in state ``token``."""

    def read() -> dict[int, tuple[str, str, bool]]:
        return {
            mirror: (tag, stack, bool(own))
            for mirror, tag, stack, own in db.execute(
                "SELECT m.id, t.name, m.stack, m.own_index FROM mirrors m JOIN tags t ON t.id = m.tag_id "
                "WHERE NOT m.dropped"
            )
        }

    return STATE_CACHE.get(path, token, ("mirror names",), read)  # type: ignore[no-any-return]


def holder_names(db: sqlite3.Connection, path: str, token: str, tag: str | None) -> dict[int, str]:
    """The mirrors that name a spec of a scope they hold, by id, with the name they give:
    within ``tag``, its stacks with an index of their own; without a tag, each tag's root
    (which names it only for the specs it lists)."""
    mirrors = mirror_names(db, path, token).items()
    if tag is None:
        return {mirror: name for mirror, (name, stack, _) in mirrors if stack == ROOT_STACK}
    return {mirror: stack for mirror, (name, stack, own_index) in mirrors if name == tag and own_index}


def holders_key(tag: str | None) -> tuple[object, ...]:
    return ("holders", tag)


def holder_index(db: sqlite3.Connection, path: str, token: str, tag: str | None) -> HolderIndex:
    """What holds each spec of a scope in state ``token`` (see :func:`holder_names`),
    read once per state."""

    def read() -> HolderIndex:
        chosen = list(holder_names(db, path, token, tag).items())
        listed = " AND listed" if tag is None else ""

        def pairs() -> Iterator[tuple[int, int]]:
            for bit, (mirror, _) in enumerate(chosen):
                for (spec,) in db.execute(f"SELECT spec_id FROM members WHERE mirror_id = ?{listed}", (mirror,)):
                    yield spec, bit

        return HolderIndex(pairs(), [name for _, name in chosen])

    return STATE_CACHE.get(path, token, holders_key(tag), read)  # type: ignore[no-any-return]


def page_holders(
    db: sqlite3.Connection, path: str, token: str, tag: str | None, ids: list[int]
) -> Callable[[int], tuple[str, ...]]:
    """What :func:`holder_index` says of the specs ``ids``, read for them alone."""
    names = holder_names(db, path, token, tag)
    held: dict[int, list[str]] = {spec: [] for spec in ids}
    for spec, mirror, listed in db.execute(
        "SELECT spec_id, mirror_id, listed FROM members WHERE spec_id IN (SELECT value FROM json_each(?))",
        (_encode(ids).decode(),),
    ):
        name = names.get(mirror)
        if name is not None and (listed or tag is not None):
            held[spec].append(name)
    return lambda spec: tuple(sorted(held[spec]))
