"""Spack spec syntax for questions about concrete binaries: parse once, match anywhere.

The subset that makes sense for specs that are already built::

    py-keras@3.9 backend=jax target=aarch64:     name, version, variant, target range
    zlib target=:zen3                             what runs on zen3 (zen3 and its ancestors)
    hdf5+mpi~cuda os=ubuntu24.04 %gcc@13          boolean variants, os, compiler (last:
                                                  in Spack 1.0 what follows is gcc's)
    /2763an2                                      hash prefix
    arch=linux-ubuntu24.04-x86_64_v3              platform, os and target at once
    py-keras ^py-jax@0.4                          a link/run dependency, direct or not

:func:`parse` turns text into a frozen :class:`Query`; the catalog turns a Query into
indexed SQL (``Catalog.search``), with :func:`~.versions.version_satisfies` and
:func:`variants_satisfy` as the checks SQL cannot do. Versions follow Spack's rules:
``@3.9`` is the range 3.9:3.9, which holds 3.9 and 3.9.x but not 3.10; ``@1.2:1.4`` is
a range (open at either end); ``@=1.2.3`` is that exact version; commas join ranges.
"""

from __future__ import annotations

import functools
import re

import msgspec

from .errors import BadQuery
from .query_refusals import after_compiler, compiler_moved, flag_refused, propagated, provider_assigned, unexpected
from .query_targets import check_target, target_names
from .values import FLAG_NAMES, short_repr, visible
from .versions import VersionRange, at_most, git_ref

__all__ = [
    "ANY",
    "NAME_PATTERN",
    "Query",
    "parse",
    "parse_remembered",
    "parse_versions",
    "target_names",
    "variants_satisfy",
]


class Query(msgspec.Struct, frozen=True, kw_only=True):
    """What a spec must satisfy; an empty Query matches every spec."""

    name: str | None = None
    versions: tuple[VersionRange, ...] = ()  # any of them
    hash_prefix: str | None = None
    compiler: str | None = None  # compiler name
    compiler_versions: tuple[VersionRange, ...] = ()
    platform: str | None = None
    os: str | None = None
    #: Spack's target constraint as written: a name, or ranges of names joined by commas
    #: ('aarch64:' descends from aarch64, ':zen3' is what zen3 descends from: see target_names)
    target: str | None = None
    variants: tuple[tuple[str, str | bool | tuple[str, ...]], ...] = ()  # (name, wanted)
    #: the variants written ``name:=values``: their values exactly, as Spack compares
    #: concrete values (``cuda_arch=80`` is held by ``cuda_arch:=80,90``; ``:=80`` is not)
    exact_variants: tuple[str, ...] = ()
    #: ``^dep``: each must match some link/run dependency of the spec, direct or transitive
    dependencies: tuple[Query, ...] = ()

    @property
    def is_empty(self) -> bool:
        return self == _EMPTY


_EMPTY = Query()

#: A package, variant or key name, as a regular expression (the query's text writer reads
#: it too, to tell a value that would read back as a key).
NAME_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
#: What follows ``@``: versions and ranges, joined by commas that spaces may surround, as
#: in Spack (``@1.10, 2.1``); its spaces are dropped before it is read.
_VERSION_LIST = r"[^\s%+~,]*(?:\s*,\s*[^\s%+~,]*)*"
_TOKEN = re.compile(
    rf"""
    (?P<space>\s+)
  | /(?P<hash>[a-z0-9]*)
  | %\s*(?P<compiler>{NAME_PATTERN})(?:@\s*(?P<cversion>{_VERSION_LIST}))?
  | @\s*(?P<version>{_VERSION_LIST})
  | (?P<bool>[+~])\s*(?P<bool_name>{NAME_PATTERN})
  | (?P<key>{NAME_PATTERN})\s*(?P<op>==|:=|=)\s*(?P<value>"[^"]*"|'[^']*'|[^\s"']*)
  | (?P<word>{NAME_PATTERN})
    """,
    re.VERBOSE,
)
#: A dependency written ``^virtual=provider`` (Spack 1.0's ``^mpi=openmpi``).
_PROVIDER_ASSIGNED = re.compile(
    rf"\s*(?P<virtual>{NAME_PATTERN}(?:\s*,\s*{NAME_PATTERN})*)\s*=\s*(?P<provider>{NAME_PATTERN})"
)
# A '-' starting a word switches a variant off, as '~' does (Spack accepts both, and
# spaces after either).
_MINUS = re.compile(rf"-\s*(?P<name>{NAME_PATTERN})")
#: A version as an index may hold it: a git branch's (``git.release/1.0``) and a git
#: ref's with its Spack version (``git.abc=2.2.1``) included.
#: It starts and ends with a letter, digit or "_", as Spack's parser has it (``1.`` is refused).
_VERSION = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_./=-]*[A-Za-z0-9_])?")
#: A value that any value satisfies (``mpi=*``, ``target=*``), as in Spack.
ANY = "*"
_ARCH_KEYS = ("platform", "os", "target")


#: The most ``^dep`` a query may hold, and values in one list (versions, targets, a
#: variant's): far beyond a question people ask, and each costs a search its walk or
#: its check (a thousand ``^dep`` held a server's worker for half a minute).
MAX_DEPENDENCIES = 16
MAX_VALUES = 64
#: The longest version a query may name: a git ref's (``git.<40 hex>=1.2.3``) is ~50.
MAX_VERSION_CHARS = 200


@functools.lru_cache(maxsize=1024)
def parse_remembered(text: str) -> Query:
    """:func:`parse`, remembered for the last 1,024 texts (a Query is immutable; a refusal
    is raised each time): a server reads a search's query twice, to tell whether it is
    cheap and to answer it (~25 µs a parse)."""
    return parse(text)


def parse(text: str) -> Query:
    """Parse ``text`` into a :class:`Query`; raises :class:`BadQuery` showing where.
    ``^`` starts a dependency's constraints (``hdf5 +mpi ^openmpi@5``), as in Spack."""
    if not text.isprintable():  # (in C: nearly every query is)
        for position, char in enumerate(text):
            if not (char.isprintable() or char.isspace()):
                # A control or invisible character, or a lone surrogate (an argument
                # that was not UTF-8), is in no name or value a catalog holds.
                raise BadQuery(text, position, f"unexpected character {visible(char)}")
    cuts = _carets(text)
    if len(cuts) > MAX_DEPENDENCIES:
        raise BadQuery(text, cuts[MAX_DEPENDENCIES], f"a query holds at most {MAX_DEPENDENCIES} ^dependencies")
    bounds = list(zip([0, *(c + 1 for c in cuts)], [*cuts, len(text)], strict=True))
    main = _parse_part(text, *bounds[0])
    dependencies = []
    for start, end in bounds[1:]:
        assigned = _PROVIDER_ASSIGNED.match(text, start, end)
        if assigned is not None:  # ^mpi=openmpi: Spack 1.0's provider of a virtual
            raise BadQuery(
                text, assigned.start("virtual"), provider_assigned(assigned["virtual"], assigned["provider"])
            )
        dependency = _parse_part(text, start, end)
        if dependency.is_empty:
            raise BadQuery(text, start - 1, "'^' needs a dependency, e.g. ^openmpi")
        dependencies.append(dependency)
    return msgspec.structs.replace(main, dependencies=tuple(dependencies)) if dependencies else main


def _after_compiler(text: str, compiler: re.Match[str], at: int, end: int) -> str:
    """:func:`after_compiler`'s refusal, suggesting the query with the compiler moved last
    only when that is a query this parser reads (``hdf5 ^%gcc target=x`` has none)."""
    rewritten = compiler_moved(text, compiler.start(), compiler.end(), end)
    try:
        parse(rewritten)
    except BadQuery:
        return after_compiler(text, compiler.start(), compiler.end(), at, end, None)
    return after_compiler(text, compiler.start(), compiler.end(), at, end, rewritten)


def _carets(text: str) -> list[int]:
    """Positions of the ``^`` that start dependencies (not those inside quotes)."""
    cuts: list[int] = []
    quote = ""
    for position, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "^":
            cuts.append(position)
    return cuts


def _parse_part(text: str, position: int, end: int) -> Query:
    """The constraints of ``text[position:end]`` (one spec: the main one or a dependency);
    error positions count from the start of the whole text."""
    fields: dict[str, object] = {}
    variants: dict[str, str | bool | tuple[str, ...]] = {}
    after_space = True
    compiler: re.Match[str] | None = None  # the %compiler token, once read
    while position < end:
        minus = _MINUS.match(text, position, end) if after_space else None
        if minus is not None and compiler is not None:
            raise BadQuery(text, position, _after_compiler(text, compiler, position, end))
        if minus is not None:
            _set_variant(text, position, variants, minus["name"], False)
            position, after_space = minus.end(), False
            continue
        token = _TOKEN.match(text, position, end)
        if token is None or token.end() == position:
            raise BadQuery(text, position, unexpected(text, position))
        if token["space"] is not None:
            after_space = True
            position = token.end()
            continue
        start, position, after_space = position, token.end(), False
        if compiler is not None and token["compiler"] is None:
            # In Spack 1.0 what follows %gcc is gcc's (its version, variants, target):
            # a question about the package's own is written before it.
            raise BadQuery(text, start, _after_compiler(text, compiler, start, end))
        if token["hash"] is not None:
            prefix = token["hash"]
            if not prefix:
                wrote = re.match(r"[A-Za-z0-9]+", text[start + 1 : end])
                if wrote is not None:  # (a DAG hash is base32: lower-case letters and digits)
                    said = f"a hash is lower case: /{wrote[0].lower()}"
                    raise BadQuery(text, start + 1, said)
                raise BadQuery(text, start + 1, "'/' needs a hash or the start of one")
            _set(text, start, fields, "hash_prefix", prefix)
        elif token["compiler"] is not None:
            _set(text, start, fields, "compiler", token["compiler"])
            compiler = token
            if token["cversion"] is not None:
                where = token.start("cversion")
                fields["compiler_versions"] = parse_versions("".join(token["cversion"].split()), text, where)
        elif token["version"] is not None:
            versions = parse_versions("".join(token["version"].split()), text, token.start("version"))
            _set(text, start, fields, "versions", versions)
        elif token["bool"] is not None:
            _set_variant(text, start, variants, token["bool_name"], token["bool"] == "+")
        elif token["key"] is not None:
            if token["key"] in FLAG_NAMES:
                raise BadQuery(text, start, flag_refused(token["key"]))
            if token["op"] == "==":
                raise BadQuery(text, token.start("op"), propagated(f"{token['key']}=={token['value']}"))
            _keyed(text, start, token.start("value"), fields, variants, token["key"], token["value"])
            if token["op"] == ":=" and token["key"] in variants:
                fields["exact_variants"] = (*fields.get("exact_variants", ()), token["key"])  # type: ignore[misc]
        else:
            if "name" in fields:
                raise BadQuery(text, start, f"a query names one package; {short_repr(token['word'])} is a second")
            if variants or any(key in fields for key in ("versions", "compiler", *_ARCH_KEYS)):
                raise BadQuery(text, start, "the package name comes first")
            fields["name"] = token["word"]
    if len(variants) > MAX_VALUES:
        raise BadQuery(text, start, f"a spec takes at most {MAX_VALUES} variants")
    return Query(**fields, variants=tuple(variants.items()))  # type: ignore[arg-type]


def _set(text: str, position: int, fields: dict[str, object], key: str, value: object) -> None:
    if key in fields:
        label = {"versions": "a version", "hash_prefix": "a hash", "compiler": "a compiler"}.get(key, key)
        raise BadQuery(text, position, f"{label} is given twice")
    fields[key] = value


def _set_variant(
    text: str,
    position: int,
    variants: dict[str, str | bool | tuple[str, ...]],
    name: str,
    value: str | bool | tuple[str, ...],
) -> None:
    if name in variants:
        raise BadQuery(text, position, f"variant {short_repr(name)} is given twice")
    variants[name] = value


def _keyed(
    text: str,
    start: int,
    value_at: int,
    fields: dict[str, object],
    variants: dict[str, str | bool | tuple[str, ...]],
    key: str,
    raw: str,
) -> None:
    value = raw[1:-1] if raw[:1] in "\"'" and len(raw) >= 2 else raw
    if not raw and text[value_at : value_at + 1] in ("'", '"'):
        raise BadQuery(text, value_at, f"{key}= has a quote that is not closed")
    if not value and raw and key not in ("arch", *_ARCH_KEYS):
        # A variant's empty value, quoted as its specs show it (e=''): "a quote that is
        # not closed", it was said, of a closed one.
        _set_variant(text, start, variants, key, "")
        return
    if not value:
        raise BadQuery(text, value_at, f"{key}= needs a value")
    if key == "arch":
        pieces = value.split("-")
        if len(pieces) != 3 or not any(pieces):
            raise BadQuery(text, value_at, "arch= is platform-os-target, e.g. linux-ubuntu24.04-x86_64_v3")
        for name, piece in zip(_ARCH_KEYS, pieces, strict=True):
            if name == "target" and piece:
                check_target(text, value_at + value.rindex("-") + 1, piece)
            _set(text, start, fields, name, piece or None)  # (an empty part, as Spack: any)
        return
    if key in _ARCH_KEYS and value == ANY:  # any platform, OS or target: every spec has one
        _set(text, start, fields, key, None)
        return
    if key in ("platform", "os"):
        _set(text, start, fields, key, value)
        return
    if key == "target":
        if value.count(",") >= MAX_VALUES:
            raise BadQuery(text, value_at, f"target= takes at most {MAX_VALUES} names or ranges")
        check_target(text, value_at, value)
        _set(text, start, fields, "target", value)
        return
    lowered = value.lower()
    if lowered in ("true", "false"):
        _set_variant(text, start, variants, key, lowered == "true")
    elif "," in value:
        if value.count(",") >= MAX_VALUES:
            raise BadQuery(text, value_at, f"{key}= takes at most {MAX_VALUES} values")
        if not all(value.split(",")):
            raise BadQuery(text, value_at, f"{key}= has an empty value between its commas")
        values = tuple(dict.fromkeys(value.split(",")))  # (a value twice is once, as in Spack)
        _set_variant(text, start, variants, key, values if len(values) > 1 else values[0])
    else:
        _set_variant(text, start, variants, key, value)


def parse_versions(spec: str, text: str = "", position: int = 0) -> tuple[VersionRange, ...]:
    """``3.9``, ``1.2:1.4``, ``1.2:``, ``:1.4``, ``=1.2.3``, or several joined by commas."""
    text = text or spec
    if not spec:
        raise BadQuery(text, position, "'@' needs a version")
    ranges = []
    offset = position
    if spec.count(",") >= MAX_VALUES:
        raise BadQuery(text, position, f"at most {MAX_VALUES} versions or ranges, joined by commas")
    for part in spec.split(","):
        if max(map(len, part.lstrip("=").split(":"))) > MAX_VERSION_CHARS:
            # (each version asked is kept with its sort key: an unbounded one is memory)
            raise BadQuery(text, offset, f"a version is at most {MAX_VERSION_CHARS} characters")
        git = git_ref(part) if not part.startswith("=") else None
        if git is not None:
            ranges.append(_git_range(text, offset, part, *git))
        elif part.startswith("="):
            if not _VERSION.fullmatch(part[1:]):
                raise BadQuery(text, offset, f"bad exact version {short_repr(part)}")
            ranges.append(VersionRange(part[1:], part[1:], exact=True))
        elif ":" in part:
            low, _, high = part.partition(":")
            for bound in (low, high):
                if bound and not _VERSION.fullmatch(bound):
                    raise BadQuery(text, offset, f"bad version {short_repr(bound)}")
                if bound and git_ref(bound) is not None:
                    raise BadQuery(text, offset, f"a git version ({bound}) ends no range; write @git.REF=LOW:HIGH")
            if low and high and not at_most(low, high):
                raise BadQuery(text, offset, f"empty range {short_repr(part)}: {low} is after {high}")
            ranges.append(VersionRange(low, high))
        else:
            if not _VERSION.fullmatch(part):
                raise BadQuery(text, offset, f"bad version {short_repr(part)}")
            ranges.append(VersionRange(part, part))
        offset += len(part) + 1
    return tuple(ranges)


#: A git reference as a query names it (a branch, tag or commit: ``release/1.0``).
_GIT_REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")


def _git_range(text: str, offset: int, part: str, ref: str, given: str) -> VersionRange:
    """A git version asked, as Spack reads one: ``git.abc=1.2`` (built from ``abc`` and
    given version 1.2, exactly), ``git.abc=1.2:1.4`` (given one in that range), or
    ``git.abc`` and a commit's 40 hex digits (built from it, whatever its version)."""
    if not _GIT_REF.fullmatch(ref):
        raise BadQuery(text, offset, f"bad git reference {short_repr(ref)} in {short_repr(part)}")
    if not given:
        return VersionRange(ref=ref)
    low, colon, high = given.partition(":")
    for bound in (low, high):
        if (bound and not _VERSION.fullmatch(bound)) or git_ref(bound) is not None:
            raise BadQuery(text, offset, f"bad version {short_repr(bound)} given git reference {short_repr(ref)}")
    if not colon:
        return VersionRange(low, low, exact=True, ref=ref)
    if low and high and not at_most(low, high):
        raise BadQuery(text, offset, f"empty range {short_repr(given)}: {low} is after {high}")
    return VersionRange(low, high, ref=ref)


# -- variants ----------------------------------------------------------------------

#: The length of a patch's sha256, as ``patches=`` values are (the catalog keeps 7).
_SHA256_HEX = 64


def _stored_value(stored: str) -> tuple[str, str | bool | tuple[str, ...]] | None:
    """(name, value) of a variant string as the catalog keeps it (``+x``, ``x=v``, ``x:=a,b``)."""
    if stored[:1] in "+~":
        return stored[1:], stored[0] == "+"
    name, op, value = stored.partition("=")
    if not op:
        return None
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    if name.endswith(":"):
        return name[:-1], tuple(value.split(",")) if value else ()
    return name, value


def variants_satisfy(stored: tuple[str, ...] | list[str], wanted: Query) -> bool:
    """Whether a spec's variant strings satisfy every variant constraint of ``wanted``.

    A multi-valued variant satisfies ``x=a`` or ``x=a,b`` when it holds those values
    (as Spack's ``satisfies`` reads an abstract spec); ``+x``/``x=true`` need ``+x``.
    """
    if not wanted.variants:
        return True
    have: dict[str, str | bool | tuple[str, ...]] = {}
    for text in stored:
        parsed = _stored_value(text)
        if parsed is not None:
            have[parsed[0]] = parsed[1]
    for name, value in wanted.variants:
        if name not in have:
            return False
        if value == ANY:  # has the variant, with any value
            continue
        actual = have[name]
        if name == "patches" and not isinstance(value, bool) and not isinstance(actual, bool):
            # Kept as their first 7 characters: a longer one matches by its start, as Spack's do.
            needed = value if isinstance(value, tuple) else (value,)
            held = actual if isinstance(actual, tuple) else (actual,)
            if not all(any(w.startswith(h) or h.startswith(w) for h in held) for w in needed):
                return False
            if name in wanted.exact_variants and (
                len(set(needed)) != len(set(held)) or not all(len(w) == _SHA256_HEX for w in needed)
            ):
                return False  # (exactly: whole sha256s, as Spack compares concrete values)
            continue
        if name in wanted.exact_variants and not isinstance(value, bool) and not isinstance(actual, bool):
            wanted_values = set(value) if isinstance(value, tuple) else {value}
            if wanted_values != (set(actual) if isinstance(actual, tuple) else {actual}):
                return False
            continue
        if isinstance(value, bool) or isinstance(actual, bool):
            if actual != value and str(actual).lower() != str(value).lower():
                return False
        elif isinstance(actual, tuple):
            needed = value if isinstance(value, tuple) else (value,)
            if not set(needed) <= set(actual):
                return False
        elif isinstance(value, tuple):
            if value != (actual,):
                return False
        elif actual != value:
            return False
    return True
