"""The documents ``cachedex verify`` reads, as its checks need them: a spec manifest or
spec file once its signature is checked (:class:`DecodedSpec`), its text with any
signature taken off, and the DAG hash a spec file or a spec blob names as its root."""

from __future__ import annotations

from typing import Any

import msgspec

from ..errors import IndexFormatError
from .manifests import BlobRecord, read_clearsigned
from .signatures import SignatureCheck

__all__ = ["NO_ROOT", "DecodedSpec", "blob_root_hash", "plain_text", "raw_bytes", "root_hash"]


class DecodedSpec(msgspec.Struct):
    """A spec manifest (or spec file) after its signature was checked."""

    hash: str
    url: str
    check: SignatureCheck | None  #: None: not checked (no gpg)
    digest: str
    tarball: BlobRecord | None = None
    spec: BlobRecord | None = None
    document: Any = None  #: a v2 spec file's JSON


def root_hash(document: Any) -> str | None:
    """The DAG hash of the root node of a spec file (spec v1 list or v2+ ``nodes``)."""
    spec = document.get("spec") if isinstance(document, dict) else None
    if isinstance(spec, list) and spec and isinstance(spec[0], dict):
        node = next(iter(spec[0].values()), None)
        return node.get("hash") if isinstance(node, dict) else None
    nodes = spec.get("nodes") if isinstance(spec, dict) else None
    if isinstance(nodes, list) and nodes and isinstance(nodes[0], dict):
        value = nodes[0].get("hash")
        return value if isinstance(value, str) else None
    return None


class _NodeHash(msgspec.Struct):
    hash: str | None = None


class _SpecBody(msgspec.Struct):
    nodes: list[_NodeHash] = []


class _SpecFile(msgspec.Struct):
    spec: _SpecBody


_spec_decoder = msgspec.json.Decoder(_SpecFile)


def blob_root_hash(body: bytes, url: str) -> str:
    """The DAG hash of a spec blob's first node, its root; IndexFormatError naming ``url``
    when the blob is not a spec file, or has no root with a hash (it was said to hold
    "the spec of None")."""
    try:
        nodes = _spec_decoder.decode(body).spec.nodes
    except (msgspec.DecodeError, RecursionError) as exc:
        raise IndexFormatError(url, f"not a spec file ({exc})") from exc
    found = nodes[0].hash if nodes else None
    if found is None:
        raise IndexFormatError(url, NO_ROOT)
    return found


#: A spec file whose root (first node) names no DAG hash, or that has no node at all.
NO_ROOT = "not a spec file (no root node with a hash)"


def raw_bytes(url: str, data: bytes | bytearray) -> bytes:
    """A read's bytes as they came (what ``Source.read_many`` hands on unchanged)."""
    return bytes(data)


def plain_text(data: bytes) -> str:
    """The text of a manifest or spec file, signed or not (signature unverified)."""
    try:
        return read_clearsigned(data.decode("utf-8", "replace"))
    except ValueError:
        return ""
