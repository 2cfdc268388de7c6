"""Decode Spack build-cache indexes (``index.json``, Database versions 6-9) into records.

Decoding happens in two steps so that a sync only pays for what it uses:

1. :func:`decode_index` reads the outer structure: the Database version and, per DAG
   hash, ``in_buildcache`` plus the node as undecoded JSON (``msgspec.Raw``, a view
   into the original bytes, no copy).
2. :func:`build_records` decodes the nodes a caller asks for into :class:`SpecRecord`
   values: display strings for compiler, target and variants as Spack 1.x prints them
   (format doc §4), and typed dependency edges.

A stack's index is only needed for its set of hashes, so a sync never runs step 2
on a stack unless the stack holds records the root index does not.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from .._perf import BoundedMemo, gc_paused
from ..errors import IndexFormatError
from ..values import (
    FLAG_NAMES,
    MAX_NAME_BYTES,
    Dependency,
    SpecRecord,
    check_name,
    deptypes_to_mask,
    is_dag_hash,
    short_repr,
)

__all__ = [
    "SUPPORTED_DB_VERSIONS",
    "RawIndex",
    "RecordBuilder",
    "build_records",
    "decode_index",
    "format_variant",
    "names_and_versions",
]

#: Database versions whose node formats we read (format doc §2.3).
SUPPORTED_DB_VERSIONS = (6, 7, 8, 9)

#: ``parameters`` keys that are compiler flags, not variants: a set, for the hot loop.
_FLAGS = frozenset(FLAG_NAMES)

#: Languages whose provider edge names the compiler of a spec-v5+ node, in priority order.
COMPILER_LANGUAGES = ("c", "cxx", "fortran")

_UNQUOTED_VALUE = re.compile(r"[a-zA-Z0-9,/_.\-\[\]]+")


# -- typed views of the JSON: only the fields we use are declared ---------------------


class _Presence(msgspec.Struct):
    in_buildcache: bool = False


class _Record(msgspec.Struct):
    spec: msgspec.Raw  # required: the duplicate check counts these keys
    in_buildcache: bool = False


class _Database(msgspec.Struct):
    version: str | int | float | None = None
    installs: dict[str, _Record] = {}


class _IndexFile(msgspec.Struct):
    database: _Database


class _VersionOnlyDatabase(msgspec.Struct):
    version: str | int | float | None = None


class _VersionOnlyFile(msgspec.Struct):
    database: _VersionOnlyDatabase


class _TargetObject(msgspec.Struct):
    name: str = ""


class _Arch(msgspec.Struct):
    platform: str | None = None
    platform_os: str | None = None
    target: str | _TargetObject | None = None


class _CompilerKey(msgspec.Struct):
    name: str = ""
    version: str | int | float | None = None


class _EdgeParameters(msgspec.Struct):
    deptypes: tuple[str, ...] | str = ()
    virtuals: list[str] = []


class _Edge(msgspec.Struct):
    name: str = ""
    hash: str | None = None
    build_hash: str | None = None
    full_hash: str | None = None
    type: tuple[str, ...] | str | None = None
    # Undecoded: an index holds a handful of distinct edge parameters ({"deptypes": [...],
    # "virtuals": [...]}) among millions of edges; each text is decoded once (_edges).
    parameters: msgspec.Raw = msgspec.Raw(b"")


class _Annotations(msgspec.Struct):
    compiler: str | None = None


class _Node(msgspec.Struct):
    name: str | None = None
    # Not float: 1.10 would read as 1.1 (COS-10); Spack writes versions as strings.
    version: str | int | None = None
    arch: _Arch | None = None
    compiler: _CompilerKey | None = None
    # Undecoded: a package's parameters repeat across its specs, and their variants are
    # formatted once per distinct text (see _variants).
    parameters: msgspec.Raw = msgspec.Raw(b"{}")
    patches: list[str] | None = None
    dependencies: list[_Edge] | dict[str, _Edge] | None = None
    annotations: _Annotations | None = None
    external: Any = None
    hash: str | None = None


_index_decoder = msgspec.json.Decoder(_IndexFile)
_version_decoder = msgspec.json.Decoder(_VersionOnlyFile)
_node_decoder = msgspec.json.Decoder(_Node)


class RawIndex(msgspec.Struct, frozen=True):
    """An index after step 1: its Database version and its records, nodes undecoded."""

    url: str
    db_version: int
    records: dict[str, _Record]

    def listed_hashes(self) -> list[str]:
        """Hashes of the records that have a binary in this mirror (``in_buildcache``)."""
        return [h for h, rec in self.records.items() if rec.in_buildcache]


def _db_version_number(version: object, url: str) -> int:
    text = str(version) if version is not None else ""
    try:
        number = int(text)
    except ValueError as exc:
        raise IndexFormatError(url, f"unsupported Database version {text!r} (cachedex reads versions 6 to 9)") from exc
    if number > max(SUPPORTED_DB_VERSIONS):
        raise IndexFormatError(
            url,
            f"Database version {number} is newer than this cachedex reads (6 to 9); upgrade cachedex",
        )
    if number < min(SUPPORTED_DB_VERSIONS):
        raise IndexFormatError(url, f"Database version {number} is too old (cachedex reads versions 6 to 9)")
    return number


def decode_index(data: bytes | bytearray | memoryview, *, url: str) -> RawIndex:
    """Decode the outer structure of an ``index.json`` (step 1).

    Raises :class:`IndexFormatError` naming ``url`` for invalid JSON, a wrong shape,
    nesting too deep, an unsupported Database version or a malformed hash.
    """
    try:
        with gc_paused():
            parsed = _index_decoder.decode(data)
    except RecursionError as exc:  # msgspec's depth limit, even inside Raw values
        raise IndexFormatError(url, "not a valid Spack index: nested too deeply") from exc
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # bytes that are not UTF-8 too
        # A wrong shape may just be an older or newer Database version: say that instead.
        version = _sniff_version(data)
        if version is not None:
            _db_version_number(version, url)
        raise IndexFormatError(url, f"not a valid Spack index: {exc}") from exc
    number = _db_version_number(parsed.database.version, url)
    _reject_duplicate_hashes(data, parsed.database.installs, url)
    for key in parsed.database.installs:
        if not is_dag_hash(key):
            raise IndexFormatError(
                url, f"malformed DAG hash {short_repr(key)} in database.installs (expected 32 of a-z0-9)"
            )
    return RawIndex(url=url, db_version=number, records=parsed.database.installs)


def _reject_duplicate_hashes(data: bytes | bytearray | memoryview, installs: dict[str, _Record], url: str) -> None:
    """Reject ``installs`` objects that hold the same DAG hash twice.

    A repeated JSON key silently decodes to its last value. The decoder requires a
    ``spec`` key in every record it reads, the overwritten ones included, so the bytes
    ``"spec"`` occur at least once per record written (more if a node holds the word).
    Counting them (cheap) against the decoded records tells whether a key may repeat,
    unless the file escapes characters (``\\u0073pec`` is also "spec"); only then is the
    file parsed again, slowly, to find the repeated key.
    """
    blob = bytes(data) if isinstance(data, memoryview) else data  # a bytearray counts in place
    # A backslash is rare in an index, and looking for one byte is ~30 x faster than
    # looking for two: only a file that has one is searched for an escape.
    if blob.count(b'"spec"') <= len(installs) and (b"\\" not in blob or b"\\u" not in blob):
        return
    repeated: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> None:
        seen: set[str] = set()
        for key, _value in items:
            if key in seen and is_dag_hash(key):
                repeated.append(key)
            seen.add(key)

    try:
        # Values are not needed: numbers are not converted (a 5,000-digit integer would
        # exceed Python's limit for int()), objects are not built.
        json.loads(blob, object_pairs_hook=pairs, parse_int=len, parse_float=len, parse_constant=len)
    except RecursionError as exc:
        raise IndexFormatError(url, "not a valid Spack index: nested too deeply") from exc
    except ValueError as exc:
        raise IndexFormatError(url, f"not a valid Spack index: {exc}") from exc
    if repeated:
        raise IndexFormatError(
            url,
            f"DAG hash {repeated[0]} appears {repeated.count(repeated[0]) + 1} times in "
            f"database.installs ({len(set(repeated))} duplicated hashes in all)",
        )


def _sniff_version(data: bytes | bytearray | memoryview) -> object | None:
    try:
        return _version_decoder.decode(data).database.version
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None


# -- display strings (format doc §4) -------------------------------------------------


def _quote_if_needed(value: str) -> str:
    if _UNQUOTED_VALUE.fullmatch(value):
        return value
    if "'" in value:
        return msgspec.json.encode(value).decode()
    return f"'{value}'"


def format_variant(name: str, value: object) -> str:
    """Format one variant as Spack 1.x prints it: ``+x``, ``~x``, ``x=v``, ``x:=a,b``."""
    if value is True:
        return f"+{name}"
    if value is False:
        return f"~{name}"
    if isinstance(value, list):
        # Spack shows patch sha256 sums shortened to 7 characters (format doc §4.3).
        shown = [str(v)[:7] for v in value] if name == "patches" else sorted(str(v) for v in value)
        return f"{name}:={_quote_if_needed(','.join(shown))}"
    return f"{name}={_quote_if_needed(str(value))}"


# Variant strings repeat across thousands of records: format each (name, value) once.
_variant_cache: BoundedMemo[tuple[str, object], str] = BoundedMemo(200_000)
# And whole parameter objects repeat across a package's specs: format each text once.
_parameters_cache: BoundedMemo[bytes, tuple[str, ...]] = BoundedMemo(20_000)
_parameters_decoder = msgspec.json.Decoder(dict[str, Any])


def _variants(node: _Node, url: str, owner: str) -> tuple[str, ...]:
    text = bytes(node.parameters)
    shown = _parameters_cache.get(text)
    if shown is None:
        try:
            parameters = _parameters_decoder.decode(text)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise IndexFormatError(url, f"record {owner}: invalid node ({exc})") from exc
        shown = _parameters_cache.remember(text, _format_parameters(parameters))
    # (Patches named outside the parameters count unless the parameters name some too;
    # the text is decoded again only if it may hold the key.)
    if node.patches and (
        (b'"patches"' not in text and b"\\" not in text) or "patches" not in _parameters_decoder.decode(text)
    ):
        shown = (*shown, format_variant("patches", list(node.patches)))
    return shown


def _format_parameters(parameters: dict[str, Any]) -> tuple[str, ...]:
    shown = []
    cache = _variant_cache
    for name, value in parameters.items():
        if name in _FLAGS:
            continue
        key = (name, tuple(value) if isinstance(value, list) else value)
        try:
            text = cache[key]
        except (KeyError, TypeError):  # TypeError: an unhashable value (a dict): format it each time
            text = format_variant(name, value)
            with contextlib.suppress(TypeError):
                cache.remember(key, text)
        shown.append(text)
    return tuple(shown)


# Few distinct deptype lists exist ("build", "build,link", ...): map each to its mask once.
_mask_cache: dict[tuple[str, ...] | str | None, int] = {}
# An edge's parameters text -> (deptype mask, virtuals), or None for ``null`` (then the
# edge's ``type`` holds its deptypes, as in older nodes).
_edge_parameters_cache: BoundedMemo[bytes, tuple[int, str] | None] = BoundedMemo(10_000)
_edge_parameters_decoder = msgspec.json.Decoder(_EdgeParameters | None)


def _mask(kinds: tuple[str, ...] | str | None) -> int:
    mask = _mask_cache.get(kinds)
    if mask is None:
        mask = _mask_cache[kinds] = deptypes_to_mask(kinds)
    return mask


def _edge_parameters(text: bytes, url: str, owner: str) -> tuple[int, str] | None:
    try:
        params = _edge_parameters_decoder.decode(text)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise IndexFormatError(url, f"record {owner}: invalid node ({exc})") from exc
    if params is None:
        return None
    return _mask(params.deptypes), ",".join(params.virtuals)


def _edges(node: _Node, url: str, owner: str, canonical: dict[str, str]) -> tuple[Dependency, ...]:
    deps = node.dependencies
    if not deps:
        return ()
    if isinstance(deps, dict):  # older nodes name each edge by its key
        deps = [msgspec.structs.replace(edge, name=name or edge.name) for name, edge in deps.items()]
    known_parameters = _edge_parameters_cache
    known_hash = canonical.get
    edges: list[Dependency] = []
    append = edges.append
    for edge in deps:  # millions in a big index: one pass, no call that can be spared
        target = edge.hash or edge.build_hash or edge.full_hash
        # A key of the index was checked when decoded; only look closer at other hashes.
        # Keeping the key's own string object, not the edge's copy, saves ~80 bytes an edge.
        known = known_hash(target)  # type: ignore[arg-type]
        if known is not None:
            target = known
        elif not is_dag_hash(target):
            raise IndexFormatError(url, f"record {owner}: dependency {edge.name!r} has a malformed hash {target!r}")
        text = bytes(edge.parameters)
        kinds = known_parameters.get(text) if text else None
        if kinds is None and text and text not in known_parameters:
            kinds = known_parameters.remember(text, _edge_parameters(text, url, owner))
        if kinds is None:  # no parameters (or null): older nodes give the deptypes as "type"
            append(Dependency(target, edge.name, _mask(edge.type), ""))  # type: ignore[arg-type]
        else:
            append(Dependency(target, edge.name, kinds[0], kinds[1]))  # type: ignore[arg-type]
    return tuple(edges)


def _compiler_edge(edges: tuple[Dependency, ...]) -> Dependency | None:
    """The edge to the compiler of a spec-v5+ node: the c, else cxx, else fortran provider."""
    for language in COMPILER_LANGUAGES:
        for edge in edges:
            if edge.virtuals and language in edge.virtuals.split(","):
                return edge
    return None


def _target_name(arch: _Arch | None) -> str:
    if arch is None or arch.target is None:
        return ""
    if isinstance(arch.target, str):
        return arch.target
    return arch.target.name


def build_records(index: RawIndex, hashes: Iterable[str] | None = None) -> list[SpecRecord]:
    """Decode nodes of ``index`` into :class:`SpecRecord` values (step 2).

    ``hashes`` selects which records to build (default: all). A spec-v5+ node's compiler
    is looked up among all records of the index, built or not.
    """
    return RecordBuilder(index).build(hashes)


class RecordBuilder:
    """Builds records of one index, batch after batch (:meth:`build`), keeping across
    batches what every batch would otherwise find again: the index's hash strings, the
    names and versions already checked, the compilers' names."""

    def __init__(self, index: RawIndex) -> None:
        self.index = index
        # Edges keep the index key's own string object, not the edge's copy: ~80 bytes an edge.
        self._canonical = {key: key for key in index.records}
        self._good_names: set[str] = set()  # names and versions repeat: check each once
        self._good_versions: set[str] = set()
        self._compilers: dict[str, str | None] = {}  # hash of a compiler node -> name@version

    def build(self, hashes: Iterable[str] | None = None) -> list[SpecRecord]:
        """The records of ``hashes`` (default: all of the index)."""
        index = self.index
        url = index.url
        records = index.records
        selected = records.keys() if hashes is None else hashes
        built: list[SpecRecord] = []
        pending: list[tuple[int, str]] = []  # (position in built, hash of compiler node)
        good_names, good_versions, canonical = self._good_names, self._good_versions, self._canonical
        with gc_paused():
            for key in selected:
                raw = records[key]
                try:
                    node = _node_decoder.decode(raw.spec)
                except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
                    raise IndexFormatError(url, f"record {key}: invalid node ({exc})") from exc
                if not node.name:
                    raise IndexFormatError(url, f"record {key}: node has no name")
                version = "" if node.version is None else str(node.version)
                if node.name not in good_names:
                    _check_text(url, key, "package name", node.name, check_name(node.name))
                    good_names.add(node.name)
                if version not in good_versions:
                    _check_text(url, key, "version", version, _version_problem(version))
                    good_versions.add(version)
                if node.hash is not None and node.hash != key:
                    raise IndexFormatError(url, f"record {key} holds the node of another hash ({node.hash!r})")
                edges = _edges(node, url, key, canonical)
                compiler = _direct_compiler(node)
                if compiler is None:
                    edge = _compiler_edge(edges)
                    if edge is None:
                        compiler = "none"
                    else:
                        compiler = edge.name
                        pending.append((len(built), edge.hash))
                arch = node.arch
                built.append(
                    SpecRecord(
                        hash=key,
                        name=node.name,
                        version=version,
                        platform=(arch.platform or "") if arch else "",
                        os=(arch.platform_os or "") if arch else "",
                        target=_target_name(arch),
                        compiler=compiler,
                        variants=_variants(node, url, key),
                        dependencies=edges,
                        in_buildcache=raw.in_buildcache,
                        external=node.external is not None,
                        node=raw.spec,
                    )
                )
            compilers = self._compilers
            for position, provider in pending:
                if provider not in compilers:
                    compilers[provider] = _name_version(records.get(provider))
                name_version = compilers[provider]
                if name_version is not None:
                    built[position] = msgspec.structs.replace(built[position], compiler=name_version)
        return built


def _version_problem(version: str) -> str | None:
    """Why a version cannot be shown and used in paths (``/`` is allowed: Spack writes it
    as ``_`` in file names); None if fine."""
    if len(version.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"{short_repr(version)} is longer than {MAX_NAME_BYTES} bytes"
    if not version.isprintable() or any(c.isspace() for c in version) or "\\" in version:
        return f"{short_repr(version)} holds spaces, control characters or '\\'"
    return None


def _check_text(url: str, key: str, what: str, text: str, problem: str | None) -> None:
    """Refuse a record whose name or version cannot become a path or a page (CRASH-5,
    SEC-6, COS-6): Spack never writes one, so the index is not a Spack index."""
    if problem is not None:
        raise IndexFormatError(url, f"record {key}: {what} {problem}")


class _NameVersion(msgspec.Struct):
    name: str = ""
    version: str | int | None = None


_name_version_decoder = msgspec.json.Decoder(_NameVersion)


def _name_version(record: _Record | None) -> str | None:
    if record is None:
        return None
    try:
        node = _name_version_decoder.decode(record.spec)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return f"{node.name}@{node.version}" if node.version is not None else node.name


def names_and_versions(index: RawIndex, hashes: Iterable[str]) -> Iterator[tuple[str, str, str]]:
    """(hash, name, version) of each of ``hashes`` in ``index``, read from its raw node
    (only those two fields are decoded); records that do not decode are left out."""
    records = index.records
    decode = _name_version_decoder.decode
    for dag_hash in hashes:
        try:
            node = decode(records[dag_hash].spec)
        except (KeyError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            continue
        if node.name and node.version is not None:
            yield dag_hash, node.name, str(node.version)


def _direct_compiler(node: _Node) -> str | None:
    """Compiler from a ``compiler`` key (spec ≤4) or ``annotations.compiler`` (format doc §4.2)."""
    if node.compiler is not None and node.compiler.name:
        version = node.compiler.version
        return node.compiler.name if version is None else f"{node.compiler.name}@{version}"
    if node.annotations is not None and node.annotations.compiler:
        return node.annotations.compiler.replace("@=", "@", 1)
    return None
