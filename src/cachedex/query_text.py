"""A :class:`~.query.Query` written back as Spack syntax, whole or condition by condition.

:func:`format_query` is the normal form the search page shows and hints suggest;
:func:`query_parts` splits a query into its conditions, each with the query that lacks
it, for the hints that say which condition nothing satisfies. Apart from the parser:
the writing reads a finished Query and nothing of parsing reads it back.
"""

from __future__ import annotations

import re

import msgspec

from .query import NAME_PATTERN, Query
from .versions import VersionRange

__all__ = ["format_query", "query_parts"]


def _ranges_text(ranges: tuple[VersionRange, ...]) -> str:
    return ",".join(map(_range_text, ranges))


def _range_text(r: VersionRange) -> str:
    if r.ref is not None:  # a git version: git.abc, git.abc=1.2, git.abc=1.2:1.4
        given = "" if not (r.low or r.high) else ("=" + (r.low if r.exact else f"{r.low}:{r.high}"))
        return f"git.{r.ref}{given}"
    return f"={r.low}" if r.exact else (r.low if r.low == r.high != "" else f"{r.low}:{r.high}")


def _variant_text(name: str, value: str | bool | tuple[str, ...], exact: bool = False) -> str:
    if isinstance(value, bool):
        return f"{name}:={str(value).lower()}" if exact else f"{'+' if value else '~'}{name}"
    return f"{name}{':' if exact else ''}={_value_text(','.join(value) if isinstance(value, tuple) else value)}"


#: A value :func:`parse` reads back as it is, unquoted.
_PLAIN_VALUE = re.compile(r"[^\s\"'^=]+")


def _value_text(value: str) -> str:
    """A value as a query writes it: quoted when it holds a space, a quote, "^" or "="."""
    if _PLAIN_VALUE.fullmatch(value):
        return value
    return f"'{value}'" if '"' in value else f'"{value}"'


#: A part written ``key=value``: a dependency cannot start with one (``^mpi=openmpi``
#: names a virtual's provider in Spack 1.0).
_KEYED_PART = re.compile(rf"{NAME_PATTERN}:?=")
_ARCH_PART = re.compile(r"(?:platform|os|target)=")


def query_parts(query: Query) -> list[tuple[str, Query]]:
    """Each condition of ``query`` as Spack syntax, with the query that lacks it: what a
    search that found nothing tries, to say which condition nothing satisfies."""
    replace = msgspec.structs.replace
    parts: list[tuple[str, Query]] = []
    if query.name is not None:
        parts.append((query.name, replace(query, name=None)))
    if query.versions:
        parts.append((f"@{_ranges_text(query.versions)}", replace(query, versions=())))
    if query.hash_prefix is not None:
        parts.append((f"/{query.hash_prefix}", replace(query, hash_prefix=None)))
    for key in ("platform", "os", "target"):
        value = getattr(query, key)
        if value is not None:
            parts.append((f"{key}={_value_text(value)}", replace(query, **{key: None})))
    for position, (name, value) in enumerate(query.variants):
        rest = query.variants[:position] + query.variants[position + 1 :]
        exact = tuple(other for other in query.exact_variants if other != name)
        label = _variant_text(name, value, name in query.exact_variants)
        parts.append((label, replace(query, variants=rest, exact_variants=exact)))
    if query.compiler is not None:  # last of the spec's own: in Spack 1.0 what follows is the compiler's
        versions = f"@{_ranges_text(query.compiler_versions)}" if query.compiler_versions else ""
        parts.append((f"%{query.compiler}{versions}", replace(query, compiler=None, compiler_versions=())))
    for position, dependency in enumerate(query.dependencies):
        rest_deps = query.dependencies[:position] + query.dependencies[position + 1 :]
        words = _words(dependency)
        if words and _KEYED_PART.match(words[0]):
            # Nameless, it starts with what is not key=value (^~mpi target=zen3).
            first = next((n for n, word in enumerate(words) if not _KEYED_PART.match(word) and word[0] != "%"), 0)
            words.insert(0, words.pop(first))
        if words and _ARCH_PART.match(words[0]):
            # Of key=value alone, its first an os, target or platform (``^os=rhel8``,
            # read back as a provider): written ``os:=rhel8``, which means the same.
            words[0] = words[0].replace("=", ":=", 1)
        elif words and (keyed := _KEYED_PART.match(words[0])) and words[0][keyed.end() :][:1] not in ("'", '"'):
            # Of variants alone, its first quoted (``^build_type="Release"``): bare, it
            # reads as a provider (``^build_type=Release``); ``:=`` would ask for it alone.
            words[0] = words[0][: keyed.end()] + f'"{words[0][keyed.end() :]}"'
        parts.append((f"^{' '.join(words)}", replace(query, dependencies=rest_deps)))
    return parts


def format_query(query: Query) -> str:
    """``query`` written back in Spack syntax (a normal form of what :func:`parse` read)."""
    return " ".join(_words(query))


def _words(query: Query) -> list[str]:
    words = [label for label, _ in query_parts(query)]
    if query.name is not None and query.versions:  # name@version, written together
        words[:2] = [words[0] + words[1]]
    return words
