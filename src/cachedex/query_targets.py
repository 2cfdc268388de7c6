"""Targets in Spack's syntax: ``target=zen3``, ranges by archspec's family tree
(``aarch64:``, ``:zen3``, ``x86_64_v2:zen3``), and a query's check of them (a range of
a target archspec does not know is refused, as Spack refuses it)."""

from __future__ import annotations

from functools import lru_cache

from .errors import BadQuery

__all__ = ["check_target", "target_names"]


def check_target(text: str, value_at: int, value: str) -> None:
    """Refuse a target constraint that is not Spack's: each of its comma-separated parts
    a name (``zen3``) or a range with a name on one side at least (``zen2:``,
    ``:zen3``, ``x86_64_v2:zen3``)."""
    parts = value.split(",")
    for part in parts:
        low, _, high = part.partition(":")
        if not (low or high) or ":" in high:
            raise BadQuery(
                text,
                value_at,
                "target= is a name (zen3), a range ('x86_64_v3:' and what descends from it, "
                "':zen3' and what zen3 descends from, 'x86_64_v2:zen3'), or several joined by commas",
            )
    offset = value_at
    for part in parts:
        low, colon, high = part.partition(":")
        for bound, at in ((low, offset), (high, offset + len(low) + 1)) if colon else ():
            if bound and not _known_target(bound):  # (Spack refuses it too)
                alone = f"; target={bound} alone finds the specs built for it" if len(bound) <= 60 else ""
                raise BadQuery(
                    text, at, f"a target range needs targets archspec knows, and {bound[:60]!r} is none of them{alone}"
                )
        offset += len(part) + 1


@lru_cache(maxsize=1024)
def target_names(constraint: str) -> tuple[str, ...]:
    """The targets that satisfy ``target=constraint`` as Spack reads it, sorted: a name
    is itself; ``low:`` is ``low`` and every microarchitecture archspec knows to descend
    from it (a zen4 machine's binaries for ``x86_64_v3:``); ``:high`` is ``high`` and
    every one it descends from (what runs on a ``high`` machine); ``low:high`` what is
    both; parts joined by commas, what any of them is. A name archspec does not know
    has no relatives."""
    names: set[str] = set()
    for part in constraint.split(","):
        low, colon, high = part.partition(":")
        if not colon:
            names.add(low)
            continue
        allowed: frozenset[str] | None = _descendants(low) if low else None
        if high:
            allowed = _ancestry(high) if allowed is None else allowed & _ancestry(high)
        names |= allowed or frozenset()
    return tuple(sorted(names))


def _known_target(name: str) -> bool:
    import archspec.cpu

    return name in archspec.cpu.TARGETS


@lru_cache(maxsize=1024)
def _descendants(name: str) -> frozenset[str]:
    """``name`` and every microarchitecture archspec knows to descend from it."""
    import archspec.cpu

    members = {name}
    for other, microarchitecture in archspec.cpu.TARGETS.items():
        if any(ancestor.name == name for ancestor in microarchitecture.ancestors):
            members.add(other)
    return frozenset(members)


@lru_cache(maxsize=1024)
def _ancestry(name: str) -> frozenset[str]:
    """``name`` and every microarchitecture it descends from, as archspec knows them."""
    import archspec.cpu

    known = archspec.cpu.TARGETS.get(name)
    return frozenset([name, *(ancestor.name for ancestor in known.ancestors)] if known else [name])
