"""Write Spack binary mirrors (build caches) from node dicts: for the demo, tests and benchmarks.

The files follow ``shared/docs/buildcache-format.md``: the index (§2), layout 2
(``build_cache/``, §5.2) and layout 3 (manifests + content-addressed blobs, §5.3), from
node dicts made by :mod:`.nodes`. Binaries are fake (filler bytes). Signatures are fake
by default (readers only strip the armor); given a ``sign`` callable (a real OpenPGP
clearsigner, e.g. gpg with a key made at test time) they are real, and
:func:`publish_keys` lays the public keys out as Spack does (``v3/manifests/key/``,
``build_cache/_pgp/``); both live in :mod:`.mirror_files` and are re-exported here.
The same input always gives byte-identical files (with the fake signatures).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..values import SPEC_MEDIA_TYPE, TARBALL_MEDIA_TYPE
from .mirror_files import KEY_INDEX_MEDIA_TYPE, PUBLIC_KEY_MEDIA_TYPE, MirrorFiles, Signer, clearsign, publish_keys
from .nodes import dag_hash, edge, make_node, node_compiler, target_object

__all__ = [
    "KEY_INDEX_MEDIA_TYPE",
    "PUBLIC_KEY_MEDIA_TYPE",
    "MirrorInfo",
    "Signer",
    "clearsign",
    "dag_hash",
    "edge",
    "fake_size",
    "make_node",
    "node_compiler",
    "publish_keys",
    "target_object",
    "write_mirror",
    "write_view",
]

_encode = msgspec.json.encode
_INDENT = re.compile(rb"\n +")


@dataclass(frozen=True)
class MirrorInfo:
    """What :func:`write_mirror` wrote."""

    layout: int
    index_path: Path
    index_checksum: str  # sha256 hex of the index bytes
    records: int  # records in the index
    listed: int  # records with in_buildcache true
    sizes: dict[str, int] = field(default_factory=dict)  # hash -> binary size in manifests/tarballs


def fake_size(dag_hash_: str) -> int:
    """A deterministic pseudo-random binary size between 10 KB and 500 MB (log-uniform)."""
    fraction = int(hashlib.sha256(f"size:{dag_hash_}".encode()).hexdigest()[:12], 16) / float(1 << 48)
    return int(10_000 * (50_000**fraction))


def _closure(root: str, nodes: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The root node, then its transitive dependencies among ``nodes`` (pre-order, each once)."""
    seen: set[str] = set()
    order: list[Mapping[str, Any]] = []
    stack = [root]
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        order.append(nodes[key])
        stack.extend(d["hash"] for d in reversed(nodes[key].get("dependencies") or ()) if d["hash"] in nodes)
    return order


def _indent0(obj: Any) -> bytes:
    """``json.dumps(obj, indent=0, separators=(",", ":"))`` (Spack's spec files), fast.

    msgspec pretty-prints with one space of indent; the indents and the space after each
    key's colon are then removed. Without backslashes in the text, raw newlines occur only
    between tokens and ``": `` only after keys (a ``"`` inside a string would be escaped).
    Text with escapes or non-ASCII characters goes through :mod:`json` itself.
    """
    compact = _encode(obj)
    if not compact.isascii() or b"\\" in compact or b"\x7f" in compact:
        return json.dumps(obj, indent=0, separators=(",", ":")).encode("ascii")
    return _INDENT.sub(b"\n", msgspec.json.format(compact, indent=1)).replace(b'": ', b'":')


def _spec_file(key: str, nodes: Mapping[str, Mapping[str, Any]], extra: dict[str, Any]) -> dict[str, Any]:
    """A spec file: ``_meta.version`` 4 for nodes with a ``compiler`` key, else 5."""
    version = 4 if "compiler" in nodes[key] else 5
    return {"spec": {"_meta": {"version": version}, "nodes": _closure(key, nodes)}, **extra}


_SPEC_MANIFEST = (
    '{{\n"version": 3,\n"data": [\n'
    '{{\n"contentLength": {tsize},\n"mediaType": "' + TARBALL_MEDIA_TYPE + '",\n'
    '"compression": "gzip",\n"checksumAlgorithm": "sha256",\n"checksum": "{tsum}"\n}},\n'
    '{{\n"contentLength": {ssize},\n"mediaType": "' + SPEC_MEDIA_TYPE + '",\n'
    '"compression": "gzip",\n"checksumAlgorithm": "sha256",\n"checksum": "{ssum}"\n}}\n]\n}}'
)  # == json.dumps(manifest, indent=0), without its per-call cost


def write_mirror(
    dest: Path,
    records: Iterable[tuple[Mapping[str, Any], bool]],
    *,
    layout: int,
    db_version: str = "8",
    sizes: Mapping[str, int] | None = None,
    signed: bool = False,
    spec_files: bool = True,
    spec_blobs: bool = True,
    tarballs: bool = False,
    spec_cache: MutableMapping[tuple[str, int, str], bytes] | None = None,
    sign: Signer | None = None,
) -> MirrorInfo:
    """Write one mirror at ``dest`` from ``records`` = (node dict, in_buildcache) pairs.

    layout 2: ``build_cache/index.json`` + ``index.json.hash`` and, with ``spec_files``,
    a ``.spec.json`` (``.spec.json.sig`` when ``signed``) per listed record; with
    ``tarballs`` a ``.spack`` of exactly ``sizes[hash]`` filler bytes.
    layout 3: the index as an uncompressed blob + ``v3/manifests/index/index.manifest.json``,
    ``v3/layout.json``, and with ``spec_files`` a spec manifest per listed record (sizes
    from ``sizes`` or :func:`fake_size`), clearsigned when ``signed``; ``spec_blobs=False``
    skips the gzipped spec blobs (the manifest then points at a fake checksum), and
    ``tarballs`` writes the binaries as blobs too.

    ``sign`` signs spec files and manifests for real (``signed`` is then implied), instead
    of :func:`clearsign`'s fake signature; publish its public key with :func:`publish_keys`.

    ``spec_files=False`` writes the index only. ``spec_cache`` (any dict) lets several
    calls reuse the encoded spec files of records they share: a spec file depends only on
    its DAG, which the hash identifies. Duplicate hashes in ``records`` keep the first.
    """
    if layout not in (2, 3):
        raise ValueError(f"layout must be 2 or 3, got {layout}")
    signer: Signer | None = sign if sign is not None else (clearsign if signed else None)
    nodes, listed, index = _index(records, db_version)
    checksum = hashlib.sha256(index).hexdigest()
    wanted = [key for key, flag in listed.items() if flag]
    if tarballs and any(not sizes or key not in sizes for key in wanted):
        raise ValueError("tarballs=True needs sizes[hash] for every listed record")
    files = MirrorFiles(dest)
    cache: MutableMapping[tuple[str, int, str], bytes] = {} if spec_cache is None else spec_cache
    write = _write_v2 if layout == 2 else _write_v3
    index_path, written = write(
        files,
        index,
        checksum,
        nodes,
        wanted,
        db_version=str(db_version),
        sizes=sizes or {},
        signer=signer,
        spec_files=spec_files,
        spec_blobs=spec_blobs,
        tarballs=tarballs,
        cache=cache,
    )
    return MirrorInfo(layout, Path(dest) / index_path, checksum, len(nodes), len(wanted), written)


def _index(
    records: Iterable[tuple[Mapping[str, Any], bool]], db_version: str
) -> tuple[dict[str, Mapping[str, Any]], dict[str, bool], bytes]:
    """(nodes by hash, listed by hash, index.json bytes) of ``records``; the first of a
    repeated hash wins."""
    nodes: dict[str, Mapping[str, Any]] = {}
    listed: dict[str, bool] = {}
    for node, in_buildcache in records:
        if node["hash"] not in nodes:
            nodes[node["hash"]] = node
            listed[node["hash"]] = bool(in_buildcache)
    ref_count = dict.fromkeys(nodes, 0)
    for node in nodes.values():
        for dep in node.get("dependencies") or ():
            if dep["hash"] in ref_count:
                ref_count[dep["hash"]] += 1
    installs = {
        key: {"spec": node, "ref_count": ref_count[key], "in_buildcache": listed[key]} for key, node in nodes.items()
    }
    return nodes, listed, _encode({"database": {"version": str(db_version), "installs": installs}})


def write_view(
    dest: Path, view: str, records: Iterable[tuple[Mapping[str, Any], bool]], *, db_version: str = "8"
) -> Path:
    """Write a buildcache view of the v3 mirror at ``dest``, as ``spack buildcache
    update-index --name VIEW`` does: its index as a blob among the mirror's blobs, and
    ``v3/manifests/index/<view>/index.manifest.json``. The records' spec manifests are the
    mirror's own (write the mirror with every record first). Returns the manifest's path."""
    _nodes, _listed, index = _index(records, db_version)
    checksum = hashlib.sha256(index).hexdigest()
    files = MirrorFiles(dest)
    files.write(f"blobs/sha256/{checksum[:2]}/{checksum}", index)
    manifest_path = f"v3/manifests/index/{view}/index.manifest.json"
    files.write(manifest_path, _index_manifest(index, checksum, db_version))
    return Path(dest) / manifest_path


def _index_manifest(index: bytes, checksum: str, db_version: str) -> bytes:
    manifest = {
        "version": 3,
        "data": [
            {
                "contentLength": len(index),
                "mediaType": f"application/vnd.spack.db.v{db_version}+json",
                "compression": "none",
                "checksumAlgorithm": "sha256",
                "checksum": checksum,
            }
        ],
    }
    return json.dumps(manifest, indent=0).encode("ascii")


def _write_v2(
    files: MirrorFiles,
    index: bytes,
    checksum: str,
    nodes: Mapping[str, Mapping[str, Any]],
    wanted: list[str],
    *,
    sizes: Mapping[str, int],
    signer: Signer | None,
    spec_files: bool,
    tarballs: bool,
    cache: MutableMapping[tuple[str, int, str], bytes],
    **_unused: object,
) -> tuple[str, dict[str, int]]:
    files.write("build_cache/index.json", index)
    files.write("build_cache/index.json.hash", checksum.encode("ascii"))
    written: dict[str, int] = {}
    if not (spec_files or tarballs):
        return "build_cache/index.json", written
    suffix = ".spec.json.sig" if signer is not None else ".spec.json"
    for key in wanted:
        node = nodes[key]
        arch = node["arch"]
        target = arch["target"] if isinstance(arch["target"], str) else arch["target"]["name"]
        arch_part = f"{arch['platform']}-{arch['platform_os']}-{target}"
        compiler = node_compiler(node, nodes)
        cpart = f"{compiler[0]}-{compiler[1]}" if compiler else "none-none"
        stem = f"{arch_part}-{cpart}-{node['name']}-{node['version']}".replace("/", "_")
        tsum = hashlib.sha256(f"tarball:{key}".encode()).hexdigest()
        if tarballs:
            folder = f"build_cache/{arch_part}/{cpart}/" + f"{node['name']}-{node['version']}".replace("/", "_")
            tsum = files.filler(f"{folder}/{stem}-{key}.spack", sizes[key], key)
            written[key] = sizes[key]
        if spec_files:
            cache_key = (key, 2, tsum + suffix + ("" if signer in (None, clearsign) else str(id(signer))))
            text = cache.get(cache_key)
            if text is None:
                spec = _spec_file(
                    key,
                    nodes,
                    {
                        "buildcache_layout_version": 2,
                        "binary_cache_checksum": {"hash_algorithm": "sha256", "hash": tsum},
                    },
                )
                raw = _indent0(spec)
                text = cache[cache_key] = signer(raw.decode("ascii")).encode("utf-8") if signer is not None else raw
            files.write(f"build_cache/{stem}-{key}{suffix}", text)
    return "build_cache/index.json", written


def _write_v3(
    files: MirrorFiles,
    index: bytes,
    checksum: str,
    nodes: Mapping[str, Mapping[str, Any]],
    wanted: list[str],
    *,
    db_version: str,
    sizes: Mapping[str, int],
    signer: Signer | None,
    spec_files: bool,
    spec_blobs: bool,
    tarballs: bool,
    cache: MutableMapping[tuple[str, int, str], bytes],
) -> tuple[str, dict[str, int]]:
    index_path = f"blobs/sha256/{checksum[:2]}/{checksum}"
    files.write(index_path, index)
    files.write("v3/manifests/index/index.manifest.json", _index_manifest(index, checksum, db_version))
    files.write("v3/layout.json", b'{"signing": "gpg"}' if signer is not None else b"{}")
    written: dict[str, int] = {}
    if not (spec_files or tarballs):
        return index_path, written
    for key in wanted:
        node = nodes[key]
        size = sizes[key] if key in sizes else fake_size(key)
        written[key] = size
        if tarballs:
            temporary = f"blobs/sha256/.tmp-{key}"
            tsum = files.filler(temporary, size, key)
            os.makedirs(f"{files.root}/blobs/sha256/{tsum[:2]}", exist_ok=True)
            os.replace(f"{files.root}/{temporary}", f"{files.root}/blobs/sha256/{tsum[:2]}/{tsum}")
        else:
            tsum = hashlib.sha256(f"tarball:{key}".encode()).hexdigest()
        if not spec_files:
            continue
        if spec_blobs:
            blob = cache.get((key, 3, ""))
            if blob is None:
                spec = _spec_file(key, nodes, {"buildcache_layout_version": 2})
                blob = cache[(key, 3, "")] = gzip.compress(_encode(spec), compresslevel=1, mtime=0)
            ssum, slen = hashlib.sha256(blob).hexdigest(), len(blob)
            files.write(f"blobs/sha256/{ssum[:2]}/{ssum}", blob)
        else:
            ssum, slen = hashlib.sha256(f"spec:{key}".encode()).hexdigest(), 1000
        text = _SPEC_MANIFEST.format(tsize=size, tsum=tsum, ssize=slen, ssum=ssum)
        name = node["name"]
        stem = f"{name}-{node['version']}-{key}".replace("/", "_")
        files.write(
            f"v3/manifests/spec/{name}/{stem}.spec.manifest.json",
            (signer(text) if signer is not None else text).encode("utf-8"),
        )
    return index_path, written
