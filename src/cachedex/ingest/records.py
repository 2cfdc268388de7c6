"""Step 2 of decoding an index: the nodes a caller asks for, as :class:`SpecRecord` values.

Display strings for compiler, target and variants as Spack 1.x prints them (format doc
§4), and typed dependency edges. Only the fields used are decoded; what repeats across
records (parameters, edge parameters, variant strings, checked names) is worked out once.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable
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
from .index import IndexRecord, RawIndex

__all__ = ["RecordBuilder", "build_records", "format_variant", "name_version_in"]

#: ``parameters`` keys that are compiler flags, not variants: a set, for the hot loop.
_FLAGS = frozenset(FLAG_NAMES)

#: Languages whose provider edge names the compiler of a spec-v5+ node, in priority order.
COMPILER_LANGUAGES = ("c", "cxx", "fortran")

_UNQUOTED_VALUE = re.compile(r"[a-zA-Z0-9,/_.\-\[\]]+")


# -- typed views of a node: only the fields we use are declared --------------------


class _TargetObject(msgspec.Struct):
    name: str = ""


class _Arch(msgspec.Struct):
    platform: str | None = None
    platform_os: str | None = None
    target: str | _TargetObject | None = None


class _CompilerKey(msgspec.Struct):
    name: str = ""
    version: str | int | None = None  # not float, as _Node.version: 13.10 would read 13.1


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


_node_decoder = msgspec.json.Decoder(_Node)


# -- display strings (format doc §4) -------------------------------------------------


def _quote_if_needed(value: str) -> str:
    if _UNQUOTED_VALUE.fullmatch(value):
        return value
    if "'" in value:
        return msgspec.json.encode(value).decode()
    return f"'{value}'"


def format_variant(name: str, value: object) -> str:
    """Format one variant as Spack 1.x prints it: ``+x``, ``~x``, ``x=v``, ``x:=a,b``
    (a value written as the text "true" or "false" is a boolean to Spack too)."""
    if value is True or (isinstance(value, str) and value.lower() == "true"):
        return f"+{name}"
    if value is False or (isinstance(value, str) and value.lower() == "false"):
        return f"~{name}"
    if isinstance(value, list):
        # Spack shows patch sha256 sums shortened to 7 characters (format doc §4.3).
        shown = [_value_text(v)[:7] for v in value] if name == "patches" else sorted(map(_value_text, value))
        return f"{name}:={_quote_if_needed(','.join(shown))}"
    return f"{name}={_quote_if_needed(_value_text(value))}"


def _value_text(value: object) -> str:
    """A variant's value as text: a string as it is, anything else (a number, ``null``,
    an object a hostile or broken index holds) as JSON writes it, never Python's
    ``None`` or ``{'a': 1}``, so that what is shown can be searched back."""
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError, OverflowError, RecursionError):
        return str(value)


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
        target = edge.hash or edge.full_hash or edge.build_hash  # (Spack's order: hash_types.HASHES)
        # A key of the index was checked when decoded; only look closer at other hashes.
        # Keeping the key's own string object, not the edge's copy, saves ~80 bytes an edge.
        known = known_hash(target)  # type: ignore[arg-type]
        if known is not None:
            target = known
        elif not is_dag_hash(target):
            raise IndexFormatError(
                url, f"record {owner}: dependency {short_repr(edge.name)} has a malformed hash {short_repr(target)}"
            )
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
                        external=bool(node.external),  # (as Spack reads it: {} and false are none)
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


def _name_version(record: IndexRecord | None) -> str | None:
    if record is None:
        return None
    try:
        node = _name_version_decoder.decode(record.spec)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return f"{node.name}@{node.version}" if node.version is not None else node.name


def name_version_in(index: RawIndex) -> Callable[[str], tuple[str, str] | None]:
    """A spec's (name, version) by its hash in ``index``, read from its raw node (only
    those two fields are decoded); None for a record without them or that does not
    decode."""
    records = index.records
    decode = _name_version_decoder.decode

    def name_version(dag_hash: str) -> tuple[str, str] | None:
        try:
            node = decode(records[dag_hash].spec)
        except (KeyError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return None
        return (node.name, str(node.version)) if node.name and node.version is not None else None

    return name_version


def _direct_compiler(node: _Node) -> str | None:
    """Compiler from a ``compiler`` key (spec ≤4) or ``annotations.compiler`` (format doc §4.2)."""
    if node.compiler is not None and node.compiler.name:
        version = node.compiler.version
        return node.compiler.name if version is None else f"{node.compiler.name}@{version}"
    if node.annotations is not None and node.annotations.compiler:
        return node.annotations.compiler.replace("@=", "@", 1)
    return None
