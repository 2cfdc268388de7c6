"""The records of cache.spack.io's data files, made from the catalog's rows and raw nodes.

:func:`read_specs` turns the catalog's rows into the members of ``specs_data`` (its
text, a spec at a time, sorted by hash), :func:`json_parts` cuts them into parts to
compress, :func:`package_specs` and :func:`package_member` make ``package_data``.

Only ``parameters`` and ``dependencies`` of each raw node are decoded (the rest is
skipped); each distinct ``parameters`` is formatted once; a dependency list already in
the app's form is passed through undecoded; each spec is encoded while it is in the
CPU's cache (encoding them later, in hash order, takes twice as long or more).

cache.spack.io's app writes names, versions, variants, arch, compilers, stacks,
releases and dependencies into its page with ``innerHTML``, and ``JSON.parse`` undoes
the file's escapes: a spec holding a value Spack's grammar cannot write (a mirror's
``<img src=x onerror=...>``) is refused, a :class:`Refusal`, not exported
(:mod:`.export_rules`, after ``lib/spack/spack/spec_parser.py``). Each distinct value is
checked once; a dependency list passed through is checked by its shape (the text
without identifier characters, known good once one such list matched the strict
pattern), which costs a ``bytes.translate``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any
from urllib.parse import quote

import msgspec

from .._perf import BoundedMemo
from ..values import DAG_HASH
from ..versions import version_key
from .export_gzip import script_safe
from .export_rules import RULES, STRICT_EDGES, Good, Refusal, edge_problem, label_problem, row_problem

__all__ = [
    "PACKAGE_URL",
    "Member",
    "NodeRow",
    "PackageSpecs",
    "app_dependencies",
    "json_parts",
    "package_member",
    "package_specs",
    "read_specs",
    "variant_strings",
]

#: A package's ``url``: its page on packages.spack.io (the name is URL-quoted).
PACKAGE_URL = "https://packages.spack.io/package.html?name="

#: ``Catalog.spec_nodes``'s rows: id, hash, name, version, compiler, platform, os, target, size, node.
NodeRow = tuple[int, str, str, str, str, str, str, str, int | None, bytes]

#: Per package: its hashes by release (in hash order), and its versions.
PackageSpecs = tuple[dict[str, list[str]], set[str]]

#: Members joined at a time.
_CHUNK = 2000


class _Spec(msgspec.Struct, gc=False):
    """One entry of ``specs_data``: ``data.py``'s keys in its order, then ours."""

    hash: str
    version: str
    variants: list[str]
    platform: str
    os: str
    target: str
    dependencies: msgspec.Raw
    stacks: list[str]
    releases: list[str]
    size: int | None
    compiler: str


class _Package(msgspec.Struct):
    """One entry of ``package_data``."""

    uid: str
    url: str
    releases: list[str]
    specs: dict[str, list[str]]
    latest_version: str


class _Node(msgspec.Struct):
    """What the export reads of a raw node; the rest is skipped."""

    parameters: msgspec.Raw = msgspec.Raw()
    dependencies: msgspec.Raw = msgspec.Raw()


class _OldEdge(msgspec.Struct):
    """A dependency in any of the forms Spack wrote."""

    name: str = ""
    hash: str | None = None
    build_hash: str | None = None
    full_hash: str | None = None
    type: list[str] | str | None = None
    parameters: dict[str, Any] | None = None


class _Edge(msgspec.Struct):
    """A dependency as Spack writes it since 0.20, the form the app reads."""

    name: str
    hash: str
    parameters: dict[str, Any]


_decode_node = msgspec.json.Decoder(_Node).decode
_decode_parameters = msgspec.json.Decoder(dict[str, Any]).decode
_decode_edges = msgspec.json.Decoder(list[_OldEdge] | dict[str, _OldEdge]).decode
_encoder = msgspec.json.Encoder()
_encode = _encoder.encode
_encode_into = _encoder.encode_into

_NO_DEPENDENCIES = msgspec.Raw(b"[]")


def variant_strings(parameters: dict[str, Any]) -> list[str]:
    """A node's ``parameters`` as ``data.py`` shows them: ``+name`` / ``~name`` for
    booleans, one ``name=value`` per element of a list, ``name=value`` otherwise (values
    as Python prints them), in the node's order, compiler flags included."""
    shown: list[str] = []
    for name, value in parameters.items():
        if value is True:
            shown.append(f"+{name}")
        elif value is False:
            shown.append(f"~{name}")
        elif isinstance(value, list):
            shown.extend(f"{name}={element}" for element in value)
        else:
            shown.append(f"{name}={value}")
    return shown


def _in_app_form(edges: bytes) -> bool:
    """Whether a node's dependencies (JSON text) are a compact list whose first edge is
    ``{"name":...,"hash":"<32>","parameters":{`` (Spack writes every edge of a node
    alike). Looks at the first edge only: a search through the whole text costs more
    than the rest of the spec's export."""
    if edges == b"[]":
        return True
    at = edges.find(b'"hash":"', 0, 400)
    return at > 0 and edges.startswith(b'[{"name":"') and edges.startswith(b'","parameters":{', at + 40)


def app_dependencies(edges: bytes) -> msgspec.Raw:
    """A node's dependencies (JSON text) as the app reads them: a list of ``{name,
    hash, parameters: {deptypes, virtuals, ...}}``.

    A list in that form is passed through as the index has it; anything else (none, a
    dict of edges, Spack 0.19's ``type`` instead of ``parameters``, ``build_hash``,
    pretty-printed) is decoded and written in that form."""
    if not edges or edges.strip() == b"null":  # (a sync reads ``null`` as none too)
        return _NO_DEPENDENCIES
    if _in_app_form(edges):
        return msgspec.Raw(edges)
    decoded = _decode_edges(edges)
    items = decoded.items() if isinstance(decoded, dict) else ((edge.name, edge) for edge in decoded)
    result = []
    for name, edge in items:
        parameters = edge.parameters
        if parameters is None:
            kinds = edge.type if edge.type is not None else []
            parameters = {"deptypes": [kinds] if isinstance(kinds, str) else kinds, "virtuals": []}
        target = edge.hash or edge.full_hash or edge.build_hash or ""  # (Spack's order)
        result.append(_Edge(name or edge.name, target, parameters))
    return msgspec.Raw(_encode(result))


#: An exported spec: (hash, ``"hash":{...}`` JSON, package name, version, releases, stacks).
Member = tuple[str, bytes, str, str, list[str], list[str]]


def read_specs(
    rows: Iterable[NodeRow], held: dict[int, tuple[int, ...]], mirrors: dict[int, tuple[str, str]]
) -> tuple[list[Member], list[Refusal]]:
    """The exported specs of ``rows`` (of ``Catalog.spec_nodes``), sorted by hash, and
    the specs refused (a value Spack cannot write), in the rows' order.

    ``held`` gives the mirrors listing each spec (ids into ``mirrors``, which gives
    ``(tag, stack)``)."""
    decode_node = _decode_node
    encode = _encode
    variants_of: BoundedMemo[bytes, tuple[list[str], tuple[str, str] | None]] = BoundedMemo(100_000)
    places_of: dict[tuple[int, ...], tuple[list[str], list[str], tuple[str, str] | None]] = {}
    strict_edges = STRICT_EDGES.fullmatch
    good: Good = (set(), set(), set(), set())  # values seen good
    names, versions, compilers, arch = good
    hash_rule = DAG_HASH.fullmatch
    members: list[Member] = []
    refused: list[Refusal] = []
    for spec_id, dag_hash, name, version, compiler, platform, os_name, target, size, node in rows:
        problem: tuple[str, str] | None = None
        if hash_rule(dag_hash) is None:
            problem = ("hash", dag_hash)
        elif not (
            name in names
            and version in versions
            and compiler in compilers
            and platform in arch
            and os_name in arch
            and target in arch
        ):
            problem = row_problem(good, name, version, compiler, (platform, os_name, target))
        try:
            decoded = decode_node(node)
        except (msgspec.DecodeError, RecursionError):  # (nested past what a parser reads)
            refused.append(Refusal(dag_hash, "node", bytes(node).decode("utf-8", "replace")))
            continue
        parameters = bytes(decoded.parameters)
        seen = variants_of.get(parameters)
        if seen is None:
            shown = variant_strings(_decode_parameters(parameters)) if parameters else []
            bad = next((v for v in shown if not RULES["variant"].fullmatch(v)), None)
            seen = variants_of.remember(parameters, (shown, None if bad is None else ("variant", bad)))
        variants = seen[0]
        places = held[spec_id]
        where = places_of.get(places)
        if where is None:
            pairs = [mirrors[mirror] for mirror in places]
            stacks, releases = sorted({s for _, s in pairs}), sorted({t for t, _ in pairs})
            where = places_of[places] = (
                stacks,
                releases,
                label_problem("stack", stacks) or label_problem("release", releases),
            )
        stacks, releases, _ = where
        edges = bytes(decoded.dependencies)
        if _in_app_form(edges):
            dependencies = msgspec.Raw(edges)
            # (each list in full: one of the same punctuation passing says nothing of its values)
            if strict_edges(edges) is None:
                problem = problem or edge_problem(edges)
        else:
            try:
                dependencies = app_dependencies(edges)
            except (msgspec.DecodeError, RecursionError):  # (a list of numbers, say)
                dependencies = _NO_DEPENDENCIES
                problem = problem or ("dependencies", edges.decode("utf-8", "replace"))
            else:
                problem = problem or edge_problem(bytes(dependencies))
        problem = problem or seen[1] or where[2]
        if problem is not None:
            refused.append(Refusal(dag_hash, *problem))
            continue
        spec = _Spec(
            dag_hash, version, variants, platform, os_name, target, dependencies, stacks, releases, size, compiler
        )
        members.append((dag_hash, b"".join((encode(dag_hash), b":", encode(spec))), name, version, releases, stacks))
    members.sort(key=itemgetter(0))
    return members, refused


def json_parts(members: Sequence[Member], size: int) -> list[Iterator[bytes]]:
    """The JSON object of ``members`` (in their order) in parts of ``size`` members:
    each part yields its pieces (a few thousand members joined at a time) when
    iterated, so that a part is held whole only as it is compressed. The parts'
    pieces, in order, are the object."""
    starts = range(0, len(members), size)

    def part(start: int) -> Iterator[bytes]:
        yield b"," if start else b"{"
        end = min(start + size, len(members))
        for chunk in range(start, end, _CHUNK):
            if chunk != start:
                yield b","
            yield script_safe(b",".join([member[1] for member in members[chunk : min(chunk + _CHUNK, end)]]))
        if start == starts[-1]:
            yield b"}"

    return [part(start) for start in starts] if members else [iter((b"{}",))]


def package_specs(members: Iterable[Member]) -> dict[str, PackageSpecs]:
    """Per package, its hashes by release (in the members' order) and its versions."""
    packages: dict[str, PackageSpecs] = {}
    for dag_hash, _, name, version, releases, _ in members:
        package = packages.get(name)
        if package is None:
            package = packages[name] = ({}, set())
        by_release = package[0]
        for release in releases:
            hashes = by_release.get(release)
            if hashes is None:
                by_release[release] = [dag_hash]
            else:
                hashes.append(dag_hash)
        package[1].add(version)
    return packages


def package_member(name: str, by_release: dict[str, list[str]], versions: Iterable[str]) -> bytes:
    """``"name":{...}``: one package's member of ``package_data``."""
    entry = _Package(
        uid=name,
        url=PACKAGE_URL + quote(name, safe=""),
        releases=sorted(by_release),
        specs={release: by_release[release] for release in sorted(by_release)},
        latest_version=max(sorted(versions), key=version_key),  # of equal ones, the first by name
    )
    member = bytearray(_encode(name))
    member.append(0x3A)  # ":"
    _encode_into(entry, member, -1)
    return bytes(member)
