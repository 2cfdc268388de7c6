"""Read a Spack environment's lockfile (``spack.lock``), or a spec file: roots and concrete specs.

A lockfile is JSON: ``_meta`` (``file-type`` "spack-lockfile", ``lockfile-version``),
``roots`` (``{hash, spec}``, the abstract spec each root was concretized from),
``concrete_specs`` (DAG hash -> node, the nodes a build cache index holds) and, since
version 5, ``include_concrete`` (the same two, per included environment, and the
environments that one includes, nested in its own ``include_concrete``). Versions 4 to
7 (Spack 0.18 and later) key specs by the DAG hash a build cache lists them by; versions
1 to 3 key them by hashes no build cache has, and are refused.

A spec file is what ``spack spec --json`` prints and what a build cache holds for each
binary (clearsigned or not): ``{"spec": {"_meta": {"version": N}, "nodes": [...]}}``,
the root first. Spec formats 3 and later (Spack 0.18 and later) have the DAG hash build
caches list; older ones are refused. ``spack spec --json A B`` (and ``spack -e ENV spec
--json``, each root of the environment) prints one such document per spec, one after
another: each is a root, and their nodes are read once each.

The nodes are decoded as an index's are (:mod:`.records`): the same checks, the same
:class:`~cachedex.values.SpecRecord` values.

A spliced spec (``spack.solve_splices``, ``Spec.splice``) names its ``build_spec``: Spack
installs it from that spec's binary, rewired, and writes the build spec's nodes beside the
environment's. Those nodes are not the environment's specs: only the spliced spec's link
to its build spec is kept (:attr:`Lockfile.splices`; :mod:`.splices` finds them).
"""

from __future__ import annotations

import codecs
import os
import sys
from pathlib import Path

import msgspec

from .._perf import gc_paused
from ..errors import IndexFormatError, SourceError, TooBig
from ..values import SpecRecord, short_repr
from .index import count_made, counting_decode, decode_index, reject_duplicate_hashes
from .json_documents import json_objects
from .manifests import read_clearsigned
from .records import build_records
from .signatures import is_clearsigned
from .sources import read_at_most
from .splices import find_splices, without_build_specs

__all__ = [
    "LOCKFILE_BYTES",
    "LOCKFILE_VERSIONS",
    "SPEC_VERSIONS",
    "LockRoot",
    "Lockfile",
    "parse_lockfile",
    "read_lockfile",
]

#: The lockfile versions whose specs are keyed by the DAG hash build caches use.
LOCKFILE_VERSIONS = (4, 5, 6, 7)
#: The spec file formats whose nodes have the DAG hash build caches list.
SPEC_VERSIONS = (3, 4, 5, 6)
#: The largest lockfile read: an environment of tens of thousands of specs is ~100 MB.
LOCKFILE_BYTES = 256 * 1024 * 1024


class LockRoot(msgspec.Struct, frozen=True):
    """A root of the environment: its DAG hash and the spec it was concretized from."""

    hash: str
    spec: str = ""


class Lockfile(msgspec.Struct, frozen=True):
    """What a lockfile holds: its roots (those of included environments after its own)
    and every concrete spec, each once; or a spec file's root and nodes."""

    path: str
    version: int  #: the lockfile's version, or the spec file's format
    roots: tuple[LockRoot, ...]
    specs: tuple[SpecRecord, ...]  #: the environment's (a spliced spec's build spec's nodes aside)
    #: a spliced spec's hash -> its build spec's, whose binary Spack installs it from
    splices: dict[str, str] = {}


class _Meta(msgspec.Struct):
    file_type: str = msgspec.field(name="file-type", default="")
    lockfile_version: int | None = msgspec.field(name="lockfile-version", default=None)


class _Included(msgspec.Struct):
    roots: list[LockRoot] = []
    concrete_specs: dict[str, msgspec.Raw] = {}
    #: the environments it includes in turn (Spack copies them in, nested)
    include_concrete: dict[str, _Included] = {}


class _File(msgspec.Struct):
    meta: _Meta = msgspec.field(name="_meta", default_factory=_Meta)
    roots: list[LockRoot] = []
    concrete_specs: dict[str, msgspec.Raw] = {}
    include_concrete: dict[str, _Included] = {}


class _SpecMeta(msgspec.Struct):
    version: int | None = None


class _SpecBody(msgspec.Struct):
    meta: _SpecMeta = msgspec.field(name="_meta", default_factory=_SpecMeta)
    nodes: list[msgspec.Raw] = []


class _SpecFile(msgspec.Struct):
    spec: _SpecBody


class _Kind(msgspec.Struct):
    """Which of the two a document is (a lockfile has ``_meta`` at the top, a spec file
    ``spec``), and a lockfile's format, read before its specs."""

    meta: _Meta | None = msgspec.field(name="_meta", default=None)
    spec: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


class _Hashed(msgspec.Struct):
    hash: str = ""
    name: str = ""


class _Counted(msgspec.Struct):
    """A concrete spec, its fields skipped: only counted (a repeated key of
    ``concrete_specs`` keeps its last node, but each node is made)."""

    __post_init__ = count_made  # type: ignore[misc]  # msgspec calls it with the node


class _CountedIncluded(msgspec.Struct):
    concrete_specs: dict[str, _Counted] = {}
    include_concrete: dict[str, _CountedIncluded] = {}


class _CountedFile(msgspec.Struct):
    concrete_specs: dict[str, _Counted] = {}
    include_concrete: dict[str, _CountedIncluded] = {}


_decoder = msgspec.json.Decoder(_File)
_count_decoder = msgspec.json.Decoder(_CountedFile)
_kind_decoder = msgspec.json.Decoder(_Kind)
_spec_decoder = msgspec.json.Decoder(_SpecFile)
_hashed_decoder = msgspec.json.Decoder(_Hashed)


def read_lockfile(path: str | Path) -> Lockfile:
    """Read the lockfile or spec file at ``path`` (``-``: standard input).

    Raises :class:`~cachedex.errors.SourceError` when it cannot be read,
    :class:`~cachedex.errors.TooBig` past :data:`LOCKFILE_BYTES`, and
    :class:`~cachedex.errors.IndexFormatError` naming it when it is not a lockfile
    cachedex reads."""
    name = "<stdin>" if str(path) == "-" else str(path)
    data = _read_bounded(name)
    return parse_lockfile(data, name)


def parse_lockfile(data: bytes, name: str) -> Lockfile:
    """The :class:`Lockfile` in ``data`` (a lockfile or a spec file, clearsigned or not);
    ``name`` says where it came from in errors."""
    data = _without_bom(data, name)
    if not data.strip():  # (the decoder would say "Input data was truncated")
        raise IndexFormatError(name, "empty: expected a Spack lockfile (spack.lock) or a spec file")
    if is_clearsigned(data):
        try:
            data = read_clearsigned(data.decode("utf-8")).encode("utf-8")
        except (UnicodeDecodeError, ValueError) as exc:
            raise IndexFormatError(name, f"not a valid clearsigned spec file: {exc}") from exc
    try:
        kind = _kind_decoder.decode(data)
    except RecursionError as exc:
        raise IndexFormatError(name, "not a valid Spack lockfile: nested too deeply") from exc
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        documents = json_objects(data)
        if documents is None:
            raise IndexFormatError(name, f"not a valid Spack lockfile or spec file: {exc}") from exc
        return _spec_files(data, documents, name)
    if kind.meta is None and kind.spec:
        return _spec_files(data, [data], name)
    _check_meta(kind.meta or _Meta(), name)
    try:
        with gc_paused():
            parsed = _decoder.decode(data)
    except RecursionError as exc:
        raise IndexFormatError(name, "not a valid Spack lockfile: nested too deeply") from exc
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise IndexFormatError(name, f"not a valid Spack lockfile: {exc}") from exc
    included_environments = _included(parsed.include_concrete)
    _reject_repeated_hashes(data, parsed, included_environments, name)
    nodes = dict(parsed.concrete_specs)
    roots = list(parsed.roots)
    for included in included_environments:
        roots += included.roots
        for key, node in included.concrete_specs.items():
            nodes.setdefault(key, node)
    specs = _records(nodes, name)
    known = {spec.hash for spec in specs}
    for root in roots:
        if root.hash not in known:
            raise IndexFormatError(
                name, f"root {short_repr(root.spec or root.hash)} names a spec the lockfile does not hold"
            )
    version = parsed.meta.lockfile_version
    assert version is not None  # _check_meta saw it
    splices = find_splices(data, nodes, name)
    specs = without_build_specs(specs, [root.hash for root in roots], splices)
    return Lockfile(name, version, tuple(dict.fromkeys(roots)), tuple(specs), splices)


def _included(environments: dict[str, _Included]) -> list[_Included]:
    """The included environments, each followed by those it includes (an included
    environment's own ``include_concrete``, as Spack reads them: depth first)."""
    found: list[_Included] = []
    pending = list(reversed(environments.values()))
    while pending:
        included = pending.pop()
        found.append(included)
        pending += reversed(included.include_concrete.values())
    return found


def _without_bom(data: bytes, name: str) -> bytes:
    """``data`` as UTF-8 without a byte order mark: Windows tools write one (Notepad,
    PowerShell 5's ``Out-File -Encoding utf8``), and PowerShell 5's ``>`` writes UTF-16
    (``spack spec --json hdf5 > spec.json``)."""
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :]
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16").encode("utf-8")
        except UnicodeError as exc:
            raise IndexFormatError(name, f"not valid UTF-16: {exc}") from exc
    return data


def _reject_repeated_hashes(data: bytes, parsed: _File, included: list[_Included], name: str) -> None:
    """Refuse a ``concrete_specs`` (the lockfile's own or an ``included`` environment's)
    that names a DAG hash twice: which of its nodes is the spec would be a guess (the JSON
    decoder keeps the last)."""
    try:
        made = counting_decode(_count_decoder, data)[1]
    except msgspec.DecodeError:
        return  # a node that is not an object: decoding it as a spec says so, by its hash
    keys = len(parsed.concrete_specs) + sum(len(i.concrete_specs) for i in included)
    reject_duplicate_hashes(data, keys, made, name, where="concrete_specs")


def _check_meta(meta: _Meta, name: str) -> None:
    """Refuse what is not a lockfile, or one whose hashes no build cache lists, before
    reading its specs."""
    if meta.file_type != "spack-lockfile":
        raise IndexFormatError(name, "not a Spack lockfile (its _meta.file-type is not 'spack-lockfile')")
    _check_version(name, "lockfile version", meta.lockfile_version, LOCKFILE_VERSIONS)


def _check_version(name: str, what: str, version: int | None, readable: tuple[int, ...]) -> None:
    """Refuse a format older than ``readable`` (its hashes are not those build caches
    list: concretizing again makes them) or newer."""
    first, last = readable[0], readable[-1]
    if version is None:
        raise IndexFormatError(name, f"no {what} (cachedex reads {first} to {last}); is it a file Spack wrote?")
    if version < first:
        raise IndexFormatError(
            name,
            f"{what} {version} predates the DAG hash build caches list (cachedex reads {first} to {last}, "
            "Spack 0.18 and later); concretize it again",
        )
    if version > last:
        raise IndexFormatError(
            name, f"{what} {version} is newer than this cachedex reads ({first} to {last}); upgrade cachedex"
        )


def _is_spec_file(document: bytes) -> bool:
    try:
        kind = _kind_decoder.decode(document)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False
    return kind.meta is None and bool(kind.spec)


def _spec_files(data: bytes, documents: list[bytes], name: str) -> Lockfile:
    """The nodes of one or more spec files, the first node of each a root."""
    nodes: dict[str, msgspec.Raw] = {}
    roots: list[str] = []
    version = None
    for number, document in enumerate(documents):
        where = f"spec {number + 1}: " if len(documents) > 1 else ""
        if where and not _is_spec_file(document):
            raise IndexFormatError(
                name,
                f"{len(documents):,} JSON documents one after another, and document {number + 1} is not a spec "
                "file: only spec files are read so (what 'spack spec --json A B' prints)",
            )
        try:
            with gc_paused():
                body = _spec_decoder.decode(document).spec
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise IndexFormatError(name, f"{where}not a valid Spack spec file: {exc}") from exc
        _check_version(name, f"{where}spec format", body.meta.version, SPEC_VERSIONS)
        version = body.meta.version if version is None else version
        if not body.nodes:
            raise IndexFormatError(name, f"{where}a spec file without nodes")
        for count, node in enumerate(body.nodes):
            try:
                named = _hashed_decoder.decode(node)
            except msgspec.DecodeError as exc:
                raise IndexFormatError(name, f"{where}node {count + 1} is not a spec node: {exc}") from exc
            if not named.hash:
                raise IndexFormatError(name, f"{where}node {count + 1} ({short_repr(named.name)}) has no hash")
            if count == 0:
                roots.append(named.hash)
            nodes.setdefault(named.hash, node)
    assert version is not None  # checked
    specs = _records(nodes, name)
    by_hash = {spec.hash: spec for spec in specs}
    roots = list(dict.fromkeys(roots))
    splices = find_splices(data, nodes, name)
    specs = without_build_specs(specs, roots, splices)
    return Lockfile(name, version, tuple(LockRoot(h, by_hash[h].name) for h in roots), tuple(specs), splices)


def _records(nodes: dict[str, msgspec.Raw], name: str) -> list[SpecRecord]:
    """The nodes as records, decoded and checked as an index's: written out as the
    ``installs`` of an index (its keys checked as DAG hashes, its nodes against them)."""
    encode = msgspec.json.encode
    parts = [b'{"database":{"version":"8","installs":{']
    parts.append(b",".join(encode(key) + b':{"spec":' + bytes(node) + b"}" for key, node in nodes.items()))
    parts.append(b"}}}")
    try:
        specs = build_records(decode_index(b"".join(parts), url=name))
    except IndexFormatError as exc:
        # (said of the index these nodes were written into: said of the lockfile's own keys)
        problem = exc.problem.replace("database.installs", "concrete_specs").replace("record ", "spec ")
        raise IndexFormatError(name, problem) from exc
    # Spack writes every node a lockfile's specs depend on: one missing is a damaged file,
    # whose report would quietly leave that dependency out.
    held = {spec.hash for spec in specs}
    for spec in specs:
        for edge in spec.dependencies:
            if edge.hash not in held:
                raise IndexFormatError(
                    name,
                    f"{short_repr(spec.name)} /{spec.hash[:7]} depends on {short_repr(edge.name)} /{edge.hash[:7]}, "
                    "which it does not hold",
                )
    return specs


def _read_bounded(name: str) -> bytes:
    """The bytes of the file (or standard input), at most :data:`LOCKFILE_BYTES`."""
    try:
        if name == "<stdin>":
            data = read_at_most(sys.stdin.buffer.read, LOCKFILE_BYTES + 1)
        else:
            # Non-blocking: a FIFO named by mistake must not wait for a writer forever.
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as stream:
                data = read_at_most(stream.read, LOCKFILE_BYTES + 1)
    except FileNotFoundError as exc:
        raise SourceError(name, "not found") from exc
    except IsADirectoryError as exc:
        raise SourceError(name, "is a folder, not a lockfile (give the path of its spack.lock)") from exc
    except (OSError, ValueError) as exc:
        raise SourceError(name, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    if len(data) > LOCKFILE_BYTES:
        raise TooBig(name, f"larger than {LOCKFILE_BYTES:,} bytes, the limit for a lockfile")
    return data
