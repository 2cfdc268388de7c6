"""Mirror layouts: find a mirror's index, verify it, and find binary sizes.

Layout detection follows format doc §5.1: a v3 index manifest wins over a v2
``build_cache/index.json`` when a mirror has both. Every index is verified against
the checksum that describes it (the v3 manifest, or v2's ``index.json.hash``); a
mismatch raises :class:`~cachedex.errors.ChecksumError`, never a silent accept.

A local v1/v2 mirror without ``index.json`` (Spack's own test mirrors) is read the
way ``spack buildcache update-index`` would: from its spec files.
"""

from __future__ import annotations

import hashlib
import re

import msgspec

from ..config import Limits, load_yaml
from ..errors import ChecksumError, IndexFormatError, SourceError, SourceNotFound, TooBig
from ..values import DAG_HASH, is_dag_hash, short_repr
from .http_requests import FORBIDDEN_MISSING, ProgressCallback
from .index import SUPPORTED_DB_VERSIONS, decode_index
from .manifests import (
    BlobRecord,
    Manifest,
    blob_path,
    decode_manifest,
    gunzip_bounded,
    read_clearsigned,
    verified_while,
    verify_checksum,
)
from .oci import OciSource
from .snapshots import IndexSnapshot, PreviousState
from .sources import Source

__all__ = ["V2_INDEX", "V3_INDEX_MANIFEST", "find_views", "read_index", "view_manifest"]

V3_INDEX_MANIFEST = "v3/manifests/index/index.manifest.json"
V2_INDEX = "build_cache/index.json"
V2_INDEX_HASH = "build_cache/index.json.hash"

# (ASCII digits, at most 9: int() reads others, and raises on a run of thousands)
_DB_MEDIA_TYPE = re.compile(r"application/vnd\.spack\.db\.v([0-9]{1,9})\+json")


def view_manifest(view: str) -> str:
    """Path of a buildcache view's index manifest (buildcache-2026 §1.2)."""
    return f"v3/manifests/index/{view}/index.manifest.json"


def read_index(
    source: Source,
    previous: PreviousState | None,
    *,
    limits: Limits,
    progress: ProgressCallback | None = None,
    view: str | None = None,
    decoded: bool = False,
) -> IndexSnapshot:
    """Find, download and verify the index of the mirror at ``source`` (with ``view``,
    the index of that buildcache view of it; views are v3 only); with ``decoded``, decode
    it too (:func:`~cachedex.ingest.index.decode_index`; a v3 blob while it is hashed).

    Returns a snapshot without data when the checksum (or HTTP validators) show the
    index is the one read last time. Raises SourceError, ChecksumError or
    IndexFormatError naming the file and the problem.
    """
    snapshot = _find_index(source, previous, limits, progress, view, decoded)
    if decoded and snapshot.data is not None:  # not v3: verified already
        return msgspec.structs.replace(snapshot, data=None, index=decode_index(snapshot.data, url=snapshot.url))
    return snapshot


def _find_index(
    source: Source,
    previous: PreviousState | None,
    limits: Limits,
    progress: ProgressCallback | None,
    view: str | None,
    decoded: bool,
) -> IndexSnapshot:
    if isinstance(source, OciSource):  # a registry: its index is an image, not a file
        return source.read_index(previous, limits=limits, progress=progress)
    if view is not None:
        try:
            return _read_v3(source, previous, limits, progress, decoded, view_manifest(view))
        except SourceNotFound as exc:
            raise SourceNotFound(exc.url, f"no view {view!r} in this mirror ({exc.problem})") from exc
    answers: list[str] = []  # what the server said of each index it was asked for
    try:
        return _read_v3(source, previous, limits, progress, decoded)
    except SourceNotFound as exc:
        answers.append(exc.problem)
    try:
        return _read_v2(source, previous, limits, progress)
    except SourceNotFound as exc:
        answers.append(exc.problem)
    names = source.list_dir("build_cache")
    if names is not None:
        return _scan_spec_files(source, names, limits)
    # A 403 read without credentials is a missing file's (S3): or a private mirror's.
    forbidden = FORBIDDEN_MISSING in answers
    said = (
        f" (answered: {FORBIDDEN_MISSING}; a private mirror needs credentials: see 'registries')" if forbidden else ""
    )
    raise SourceNotFound(
        source.url,
        f"no build cache index here (neither {V3_INDEX_MANIFEST} nor {V2_INDEX}){said}; is this the mirror's root URL?",
    )


def _read_v3(
    source: Source,
    previous: PreviousState | None,
    limits: Limits,
    progress: ProgressCallback | None,
    decoded: bool,
    manifest_path: str = V3_INDEX_MANIFEST,
) -> IndexSnapshot:
    same_layout = previous is not None and previous.layout == 3
    fetched = source.fetch(
        manifest_path,
        limit=limits.manifest_bytes,
        etag=previous.etag if same_layout and previous else None,
        last_modified=previous.last_modified if same_layout and previous else None,
    )
    if fetched is None:  # 304 to our validators: the manifest, hence the index, is unchanged
        assert previous is not None  # validators are sent only when there is a previous state
        return IndexSnapshot(3, previous.checksum, None, previous.etag, previous.last_modified)
    manifest_url = source.join(manifest_path)
    record = _pick_index_blob(decode_manifest(fetched.data, manifest_url), manifest_url)
    if same_layout and previous and previous.checksum == record.checksum:
        return IndexSnapshot(3, record.checksum, None, fetched.etag, fetched.last_modified)
    path = blob_path(record)
    blob_url = source.join(path)
    try:
        blob = source.read(path, limit=limits.index_bytes)
    except SourceNotFound as exc:
        raise SourceError(blob_url, f"index blob listed in {manifest_url} is missing ({exc.problem})") from exc

    def body() -> bytes | bytearray:
        # Trust the bytes, not the "compression" field (format doc §7): gzip by its magic.
        data = gunzip_bounded(blob, limits.index_bytes, blob_url) if blob[:2] == b"\x1f\x8b" else blob
        if record.compression == "gzip" and data is blob:
            raise IndexFormatError(blob_url, "the manifest says gzip, but the blob is not gzip data")
        if record.compression not in ("gzip", "none") and data is blob and not blob.lstrip()[:1] == b"{":
            raise IndexFormatError(
                blob_url, f"compressed as {short_repr(record.compression)}, which cachedex does not read (gzip or none)"
            )
        return data

    snapshot = IndexSnapshot(3, record.checksum, None, fetched.etag, fetched.last_modified, blob_url)
    if decoded:
        index = verified_while(blob, record, blob_url, lambda: decode_index(body(), url=blob_url))
        return msgspec.structs.replace(snapshot, index=index)
    verify_checksum(blob, record, blob_url)
    return msgspec.structs.replace(snapshot, data=body())


def _pick_index_blob(manifest: Manifest, url: str) -> BlobRecord:
    """The index blob of the highest Database version we read (Spack 1.3 may list several)."""
    candidates: list[tuple[int, BlobRecord]] = []
    seen: list[str] = []
    for record in manifest.data:
        match = _DB_MEDIA_TYPE.fullmatch(record.mediaType)
        if match:
            seen.append(record.mediaType)
            if int(match.group(1)) in SUPPORTED_DB_VERSIONS:
                candidates.append((int(match.group(1)), record))
    if not candidates:
        if seen:
            raise IndexFormatError(
                url,
                f"index is only offered as {', '.join(seen)}; this cachedex reads "
                f"Database versions {SUPPORTED_DB_VERSIONS[0]} to {SUPPORTED_DB_VERSIONS[-1]}",
            )
        raise IndexFormatError(url, "manifest lists no index blob (application/vnd.spack.db.vN+json)")
    return max(candidates, key=lambda pair: pair[0])[1]


def _read_v2(
    source: Source, previous: PreviousState | None, limits: Limits, progress: ProgressCallback | None
) -> IndexSnapshot:
    expected, unverified = _index_hash(source)
    if previous is not None and previous.layout == 2 and expected == previous.checksum:
        return IndexSnapshot(2, expected, None, previous.etag, previous.last_modified)
    try:
        fetched = source.fetch(V2_INDEX, limit=limits.index_bytes, progress=progress)
    except SourceNotFound as exc:
        if expected is None:
            raise
        # The hash file says this is a v2 mirror: a missing index is its problem, not ours.
        raise SourceError(exc.url, f"{exc.problem}, although index.json.hash is there") from exc
    if fetched is None:
        raise SourceError(source.join(V2_INDEX), "unexpected 304 Not Modified to an unconditional request")
    index_url = source.join(V2_INDEX)
    checksum = hashlib.sha256(fetched.data).hexdigest()
    if expected is not None and checksum != expected and _index_hash(source)[0] != checksum:
        # (read again first: 'spack buildcache update-index' writes index.json, then its
        # hash, and a sync that read between the two has the hash of the last index)
        raise ChecksumError(
            index_url,
            f"does not match index.json.hash (expected {expected[:12]}…, got {checksum[:12]}…, read twice): "
            "the index is corrupt, or was replaced while being read, or a cache in front of the mirror "
            "(a CDN) serves one of the two stale; sync again once it has expired",
        )
    if previous is not None and previous.layout == 2 and checksum == previous.checksum:
        return IndexSnapshot(2, checksum, None, fetched.etag, fetched.last_modified, index_url, unverified=unverified)
    return IndexSnapshot(
        2, checksum, fetched.data, fetched.etag, fetched.last_modified, index_url, unverified=unverified
    )


def _index_hash(source: Source) -> tuple[str | None, str]:
    """(the checksum ``index.json.hash`` gives, or None where there is none; and then
    why, for the warning). Read as Spack reads it (``DefaultIndexFetcher.get_remote_hash``):
    its first 64 bytes, if they are a lowercase sha256 hex digest (what follows, a line
    end or more, is no part of it); a file that is none, or that cannot be read (a
    server's error), is no check at all, not a failure, for Spack reads that mirror
    ("failure to fetch index.json.hash is not fatal")."""
    try:
        head = source.read(V2_INDEX_HASH, limit=1000)[:64]
    except SourceNotFound:
        return None, "has no index.json.hash beside it"
    except (SourceError, TooBig) as exc:  # (a file that long holds no digest)
        return None, f"has an index.json.hash that cannot be read ({getattr(exc, 'problem', exc)})"
    if re.fullmatch(rb"[0-9a-f]{64}", head):
        return head.decode("ascii"), ""
    # (it was said to be missing, though there)
    return None, f"has an index.json.hash holding no sha256 ({short_repr(head.decode('utf-8', 'replace'))})"


def find_views(source: Source) -> list[str] | None:
    """Names of the buildcache views of the mirror at ``source`` (folders under
    ``v3/manifests/index/`` holding an index manifest), or None where it cannot list."""
    folders = source.list_folders("v3/manifests/index")
    if folders is None:
        return None
    return [name for name in folders if "index.manifest.json" in (source.list_dir(f"v3/manifests/index/{name}") or ())]


# -- v1/v2 mirrors without index.json: build one from the spec files -----------------

_SPEC_FILE = re.compile(rf".+-({DAG_HASH.pattern})\.spec\.(json|json\.sig|yaml)")
#: Spec-file format version -> the Database version whose nodes have that shape (§1).
_DB_FOR_SPEC_VERSION = {1: 6, 2: 6, 3: 6, 4: 7, 5: 8, 6: 9}


def _scan_spec_files(source: Source, names: list[str], limits: Limits) -> IndexSnapshot:
    """Build an index from ``build_cache/*.spec.{json,json.sig,yaml}`` (local mirrors only)."""
    by_hash: dict[str, str] = {}
    for name in names:
        match = _SPEC_FILE.fullmatch(name)
        if match:
            # Prefer the unsigned file when both exist: same content, cheaper to read.
            current = by_hash.get(match.group(1))
            if current is None or current.endswith(".sig"):
                by_hash[match.group(1)] = name
    if not by_hash:
        raise SourceNotFound(
            source.url,
            f"no build cache index here (neither {V3_INDEX_MANIFEST} nor {V2_INDEX}, "
            "and no spec files under build_cache/)",
        )
    installs: dict[str, dict[str, object]] = {}
    db_version = 6
    layout = 0
    for _hash, name in sorted(by_hash.items()):
        path = f"build_cache/{name}"
        url = source.join(path)
        spec_version, file_layout, nodes = _read_spec_file(source.read(path, limit=limits.spec_file_bytes), url, name)
        layout = max(layout, file_layout)
        db_version = max(db_version, _DB_FOR_SPEC_VERSION.get(spec_version, 6))
        for position, (node_hash, node) in enumerate(nodes):
            listed = position == 0 or node_hash in by_hash
            known = installs.get(node_hash)
            if known is None or (listed and not known["in_buildcache"]):
                installs[node_hash] = {"spec": node, "ref_count": 0, "in_buildcache": listed}
    try:
        data = msgspec.json.encode({"database": {"version": str(db_version), "installs": installs}})
    except RecursionError as exc:  # a node nested too deep for Python's stack
        raise IndexFormatError(source.join("build_cache"), "a spec file is nested too deeply") from exc
    return IndexSnapshot(
        max(layout, 1) if layout else 1, hashlib.sha256(data).hexdigest(), data, url=source.join("build_cache")
    )


def _read_spec_file(raw: bytes | bytearray, url: str, name: str) -> tuple[int, int, list[tuple[str, dict]]]:  # type: ignore[type-arg]
    """(spec format version, layout version, [(hash, node)]) of one v1/v2 spec file."""
    try:
        text = read_clearsigned(raw.decode("utf-8"))
        # YAML without aliases (HANG-3: an alias bomb in a 576-byte file); JSON nested too
        # deep raises RecursionError, which is a ValueError's sibling, not a child.
        document = load_yaml(text) if name.endswith(".yaml") else msgspec.json.decode(text)
    except RecursionError as exc:
        raise IndexFormatError(url, "not a valid spec file: nested too deeply") from exc
    except (UnicodeDecodeError, ValueError, msgspec.DecodeError) as exc:
        raise IndexFormatError(url, f"not a valid spec file: {exc}") from exc
    if not isinstance(document, dict) or "spec" not in document:
        raise IndexFormatError(url, "not a valid spec file: no 'spec' key")
    raw_layout = document.get("buildcache_layout_version", 0)
    try:
        file_layout = int(raw_layout)  # the future_layout fixture has the string "10"
    except (TypeError, ValueError) as exc:
        raise IndexFormatError(url, f"buildcache_layout_version {short_repr(raw_layout)} is not a number") from exc
    if file_layout > 2:
        raise IndexFormatError(
            url,
            f"build-cache layout version {file_layout} is newer than this cachedex reads "
            "in a build_cache/ folder (up to 2); upgrade cachedex",
        )
    spec = document["spec"]
    nodes: list[tuple[str, dict]] = []  # type: ignore[type-arg]
    spec_version = 0
    if isinstance(spec, list):  # spec v1: [{"<name>": {node}}, ...]
        spec_version = 1
        for item in spec:
            for node_name, node in item.items() if isinstance(item, dict) else ():
                if isinstance(node, dict):
                    nodes.append((node.get("hash", ""), {"name": node_name, **node}))
    elif isinstance(spec, dict):
        meta = spec.get("_meta")
        version = meta.get("version", 2) if isinstance(meta, dict) else 2
        spec_version = version if isinstance(version, int) else 0
        listed = spec.get("nodes")
        nodes = (
            [(node.get("hash", ""), node) for node in listed if isinstance(node, dict)]
            if isinstance(listed, list)
            else []
        )
    if not nodes:
        raise IndexFormatError(url, "not a valid spec file: no nodes under 'spec'")
    for node_hash, _node in nodes:
        if not is_dag_hash(node_hash):
            raise IndexFormatError(url, f"node with malformed hash {short_repr(node_hash)}")
    return spec_version, file_layout, _edges_to_dag_hashes(nodes, by_name=spec_version == 1)


#: The keys an edge may name its target by, in the order Spack tries them (its
#: ``hash_types.HASHES``): Spack 0.16/0.17 spec files name it by ``build_hash``.
_EDGE_HASH_KEYS = ("hash", "process_hash", "full_hash", "build_hash")


def _edges_to_dag_hashes(nodes: list[tuple[str, dict]], *, by_name: bool) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    """``nodes`` with every edge naming its target by the target's DAG hash (``hash``),
    the key of the index built from them. A spec file's edges lead where Spack's reader
    takes them: in spec v1 to the node of the edge's name (its ``hash`` holds the
    target's build hash there), later to the node whose hash of the edge's kind
    (``build_hash`` in Spack 0.17) is the edge's. Without this, an edge of an old spec
    file points at no record whenever its target has build dependencies."""
    by_kind: dict[str, dict[str, str]] = {}
    for node_hash, node in nodes:
        name = node.get("name")
        if by_name and isinstance(name, str):
            by_kind.setdefault("name", {})[name] = node_hash
        for key in _EDGE_HASH_KEYS:
            value = node.get(key)
            if isinstance(value, str):
                by_kind.setdefault(key, {})[value] = node_hash
    return [(node_hash, _rewired(node, by_kind, by_name)) for node_hash, node in nodes]


def _rewired(node: dict, by_kind: dict[str, dict[str, str]], by_name: bool) -> dict:  # type: ignore[type-arg]
    deps = node.get("dependencies")
    if isinstance(deps, dict):  # spec v1: {name: edge}
        edges = {name: _edge_to_dag_hash(edge, by_kind, name if by_name else None) for name, edge in deps.items()}
        return {**node, "dependencies": edges}
    if isinstance(deps, list):
        return {**node, "dependencies": [_edge_to_dag_hash(edge, by_kind, None) for edge in deps]}
    return node


def _edge_to_dag_hash(edge: object, by_kind: dict[str, dict[str, str]], name: str | None) -> object:
    if not isinstance(edge, dict):
        return edge  # (not an edge: the record's decoding names the problem)
    if name is not None:
        target = by_kind.get("name", {}).get(name)
    else:
        kind = next((key for key in _EDGE_HASH_KEYS if key in edge), None)
        value = edge.get(kind) if kind else None
        target = by_kind.get(kind, {}).get(value) if kind and isinstance(value, str) else None
    # A target not in the file keeps the hash the edge gives (as an index's edge would).
    return {**edge, "hash": target} if target is not None else edge
