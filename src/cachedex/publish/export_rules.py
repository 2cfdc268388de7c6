"""What cache.spack.io's app may be given: the values Spack's grammar can write.

The app writes names, versions, variants, arch, compilers, stacks, releases and
dependencies into its page with ``innerHTML``, and ``JSON.parse`` undoes the data files'
escapes: a spec holding a value Spack could not write (a hostile mirror's
``<img src=x onerror=...>``) is refused, a :class:`Refusal`, by :func:`.export_specs.read_specs`.
The rules follow ``lib/spack/spack/spec_parser.py`` (IDENTIFIER, NAME, VERSION, GIT_REF,
QUOTED_VALUE) and ``spack/deptypes.py``.

The Jekyll pages (:mod:`.jekyll_shares`) are held to the same rules, as the catalog
shows a spec (:func:`shown_problem`): cache.spack.io's layout prints their values with
Liquid, which escapes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from ..values import DAG_HASH, check_label, decode_variants, short_repr

__all__ = [
    "RULES",
    "SHOWN_VARIANT",
    "STRICT_EDGES",
    "Good",
    "Refusal",
    "Shown",
    "ShownGood",
    "edge_problem",
    "label_problem",
    "row_problem",
    "shown_problem",
]


class _Edge(msgspec.Struct):
    """A dependency as Spack writes it since 0.20, the form the app reads."""

    name: str
    hash: str
    parameters: dict[str, Any]


_decode_app_edges = msgspec.json.Decoder(list[_Edge]).decode
_encode = msgspec.json.Encoder().encode

# After lib/spack/spack/spec_parser.py: IDENTIFIER (package and virtual names), NAME
# (variant names), VERSION and GIT_REF (versions, "<ref>=<version>" for a git one).
_IDENTIFIER = r"[A-Za-z0-9_][A-Za-z0-9_-]*"
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
_VERSION = r"=?[A-Za-z0-9_][A-Za-z0-9_.-]*"

#: A field's rule (``fullmatch``). Arch parts: Spack writes them joined by ``-``
#: (``linux-ubuntu22.04-x86_64``; ``OperatingSystem`` turns ``-`` into ``_``); empty is
#: what the catalog holds for a node without them. A variant's value may be quoted in
#: Spack's grammar (QUOTED_VALUE), so any printable ASCII but the markup ``<``, ``>``, ``&``.
RULES: dict[str, re.Pattern[str]] = {
    "hash": DAG_HASH,
    "package name": re.compile(_IDENTIFIER),
    "version": re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_./-]*(?:={_VERSION})?"),
    "compiler": re.compile(rf"{_IDENTIFIER}(?:@{_VERSION})?"),
    "platform": re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.]*)?"),
    "variant": re.compile(rf"[+~]{_NAME}|{_NAME}=[ -%'-;=?-~]*"),
    "dependency type": re.compile(r"build|link|run|test"),  # spack/deptypes.py ALL_TYPES
}
RULES["dependency name"] = RULES["virtual"] = RULES["package name"]
RULES["dependency hash"] = DAG_HASH
RULES["os"] = RULES["target"] = RULES["platform"]
#: Other keys of an edge's ``parameters``: a name, any value whose JSON is plain.
RULES["dependency parameter"] = re.compile(rf"{_NAME}=[ -%'-;=?-\[\]-~]*")

#: A dependency list as Spack writes it, all strings under the rules above.
_EDGE_TYPE = rb'"(?:build|link|run|test)"'
_EDGE_NAMES = rb'\[(?:"' + _IDENTIFIER.encode() + rb'"(?:,"' + _IDENTIFIER.encode() + rb'")*)?\]'
_STRICT_EDGE = (
    rb'\{"name":"'
    + _IDENTIFIER.encode()
    + rb'","hash":"[a-z0-9]{32}","parameters":\{"deptypes":\[(?:'
    + _EDGE_TYPE
    + rb"(?:,"
    + _EDGE_TYPE
    + rb")*)?\],\"virtuals\":"
    + _EDGE_NAMES
    + rb"\}\}"
)
STRICT_EDGES = re.compile(rb"\[(?:" + _STRICT_EDGE + rb"(?:," + _STRICT_EDGE + rb")*)?\]")


@dataclass(frozen=True)
class Refusal:
    """A spec left out of the export: one of its values Spack cannot write."""

    hash: str
    field: str  #: which value: "package name", "version", "variant", "dependency name", ...
    value: str

    def __str__(self) -> str:
        # (repr: a terminal shows control and invisible characters as escapes)
        return f"{short_repr(self.hash, 40)} ({self.field} {short_repr(self.value, 60)})"


def _problem(field: str, value: str) -> tuple[str, str] | None:
    return None if RULES[field].fullmatch(value) else (field, value)


def label_problem(field: str, names: Iterable[str]) -> tuple[str, str] | None:
    """A stack or release (a tag) that is no label, as cachedex's config refuses."""
    return next(((field, name) for name in names if check_label(name) is not None), None)


def edge_problem(edges: bytes) -> tuple[str, str] | None:
    """The first value of a dependency list (in the app's form) Spack cannot write."""
    try:
        decoded = _decode_app_edges(edges)
    except (msgspec.DecodeError, RecursionError):
        return ("dependencies", edges.decode("utf-8", "replace"))
    for edge in decoded:
        problem = _problem("dependency name", edge.name) or _problem("dependency hash", edge.hash)
        if problem:
            return problem
        for key, value in edge.parameters.items():
            field = _EDGE_LISTS.get(key) if isinstance(value, list) else None
            if field is None:  # (Spack writes none other; shown as its JSON)
                problem = _problem("dependency parameter", f"{key}={_encode(value).decode()}")
            else:
                shown = (v if isinstance(v, str) else repr(v) for v in value)
                problem = next(filter(None, (_problem(field, v) for v in shown)), None)
            if problem:
                return problem
    return None


#: The lists of an edge's ``parameters`` and the rule of their elements.
_EDGE_LISTS = {"deptypes": "dependency type", "virtuals": "virtual"}


#: Values seen good: package names, versions, compilers, arch parts (one rule for the three).
Good = tuple[set[str], set[str], set[str], set[str]]


def row_problem(
    good: Good, name: str, version: str, compiler: str, arch: tuple[str, str, str]
) -> tuple[str, str] | None:
    """The first of a row's values Spack cannot write; the good ones are added to ``good``."""
    checks = [(good[0], "package name", name), (good[1], "version", version), (good[2], "compiler", compiler)]
    checks += [(good[3], field, value) for field, value in zip(("platform", "os", "target"), arch, strict=True)]
    for seen, field, value in checks:
        if value not in seen:
            if not RULES[field].fullmatch(value):
                return field, value
            seen.add(value)
    return None


#: A variant as the catalog stores it to show (``ingest.records.format_variant``): also
#: ``name:=a,b`` for a multi-valued one, as Spack's KEY_VALUE_PAIR (``NAME:?=``) writes
#: it; a value as :data:`RULES`' ``variant`` allows (quoted or not).
SHOWN_VARIANT = re.compile(rf"[+~]{_NAME}|{_NAME}:?=[ -%'-;=?-~]*")

#: What a package's page shows of a spec, as the catalog holds it (fields of
#: :class:`~cachedex.catalog.ListedRow`): version, compiler, platform, os, target,
#: variants (the stored JSON list) and stacks (joined by ``\x1f``).
Shown = tuple[str, str, str, str, str, str, str]

#: Values seen good as a page shows them: those of :data:`Good`, then single variants,
#: variant lists and stack sets.
ShownGood = tuple[set[str], set[str], set[str], set[str], set[str], set[str], set[str]]


def shown_problem(good: ShownGood, name: str, shown: Shown) -> tuple[str, str] | None:
    """The first value of package ``name``'s spec as its page shows it (its hash apart)
    that Spack cannot write, or None; the good ones are added to ``good``."""
    version, compiler, platform, os_name, target, variants, stacks = shown
    problem = row_problem(good[:4], name, version, compiler, (platform, os_name, target))
    if problem is None and variants not in good[5]:
        try:
            decoded = decode_variants(variants)
        except (msgspec.DecodeError, RecursionError):
            return ("variants", variants)
        for variant in decoded:
            if variant not in good[4]:
                if not SHOWN_VARIANT.fullmatch(variant):
                    return ("variant", variant)
                good[4].add(variant)
        good[5].add(variants)
    if problem is None and stacks not in good[6]:
        problem = label_problem("stack", stacks.split("\x1f") if stacks else ())
        if problem is None:
            good[6].add(stacks)
    return problem
