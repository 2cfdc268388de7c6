"""Mirror layouts: find a mirror's index, verify it, and find binary sizes.

Layout detection follows format doc §5.1: a v3 index manifest wins over a v2
``build_cache/index.json`` when a mirror has both. Every index is verified against
the checksum that describes it (the v3 manifest, or v2's ``index.json.hash``); a
mismatch raises :class:`~cachedex.errors.ChecksumError`, never a silent accept.

A local v1/v2 mirror without ``index.json`` (Spack's own test mirrors) is read the
way ``spack buildcache update-index`` would: from its spec files.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

import msgspec
import yaml

from ..errors import ChecksumError, IndexFormatError, SourceError, SourceNotFound
from ..values import DAG_HASH, TARBALL_MEDIA_TYPE, is_dag_hash
from .index import SUPPORTED_DB_VERSIONS
from .sources import ProgressCallback, Source

__all__ = [
    "IndexSnapshot",
    "PreviousState",
    "SizeLookup",
    "fetch_sizes",
    "read_clearsigned",
    "read_index",
    "spec_manifest_path",
    "tarball_path_v2",
]

V3_INDEX_MANIFEST = "v3/manifests/index/index.manifest.json"
V2_INDEX = "build_cache/index.json"
V2_INDEX_HASH = "build_cache/index.json.hash"
#: Highest build-cache layout version we read (format doc §1).
MAX_LAYOUT = 3

_DB_MEDIA_TYPE = re.compile(r"application/vnd\.spack\.db\.v(\d+)\+json")
_SIGNED_HEADER = "-----BEGIN PGP SIGNED MESSAGE-----"
_SIGNATURE_MARKER = "-----BEGIN PGP SIGNATURE-----"


class PreviousState(msgspec.Struct, frozen=True):
    """What the catalog remembers of a mirror's last successful read."""

    layout: int
    checksum: str
    etag: str | None = None
    last_modified: str | None = None


class IndexSnapshot(msgspec.Struct, frozen=True):
    """A mirror's index as found now. ``data`` is None when it did not change."""

    layout: int
    checksum: str
    data: bytes | None
    etag: str | None = None
    last_modified: str | None = None


class _BlobRecord(msgspec.Struct):
    mediaType: str
    checksum: str
    contentLength: int | None = None
    checksumAlgorithm: str = "sha256"
    compression: str = "none"


class _Manifest(msgspec.Struct):
    version: int | str
    data: list[_BlobRecord]


_manifest_decoder = msgspec.json.Decoder(_Manifest)


def read_clearsigned(text: str) -> str:
    """The signed text of an OpenPGP cleartext-signed message, dash-escaping undone.

    Plain text is returned unchanged. The signature is not verified.
    """
    if not text.lstrip().startswith(_SIGNED_HEADER):
        return text
    lines = text.lstrip().splitlines()
    try:
        start = lines.index("") + 1
        end = lines.index(_SIGNATURE_MARKER, start)
    except ValueError as exc:
        raise ValueError("clearsigned message without body or signature") from exc
    body = [line[2:] if line.startswith("- ") else line for line in lines[start:end]]
    return "\n".join(body)


def _decode_manifest(data: bytes, url: str) -> _Manifest:
    try:
        if data[:1] == b"{":  # plain JSON: skip the text round trip (hot: one per spec)
            manifest = _manifest_decoder.decode(data)
        else:
            manifest = _manifest_decoder.decode(read_clearsigned(data.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, msgspec.DecodeError) as exc:
        raise IndexFormatError(url, f"not a valid v3 manifest: {exc}") from exc
    try:
        version = int(manifest.version)
    except ValueError as exc:
        raise IndexFormatError(url, f"manifest version {manifest.version!r} is not a number") from exc
    if version > MAX_LAYOUT:
        raise IndexFormatError(
            url,
            f"build-cache layout version {version} is newer than this cachedex reads "
            f"(up to {MAX_LAYOUT}); upgrade cachedex",
        )
    return manifest


def _blob_path(record: _BlobRecord) -> str:
    return f"blobs/{record.checksumAlgorithm}/{record.checksum[:2]}/{record.checksum}"


def _verify(data: bytes, algorithm: str, expected: str, url: str) -> None:
    try:
        digest = hashlib.new(algorithm, data).hexdigest()
    except ValueError as exc:
        raise IndexFormatError(url, f"unknown checksum algorithm {algorithm!r}") from exc
    if digest != expected.strip().lower():
        raise ChecksumError(
            url,
            f"checksum mismatch ({algorithm} expected {expected.strip()[:12]}…, "
            f"got {digest[:12]}…): the file is corrupt or was replaced while being read",
        )


def read_index(
    source: Source,
    previous: PreviousState | None,
    *,
    progress: ProgressCallback | None = None,
) -> IndexSnapshot:
    """Find, download and verify the index of the mirror at ``source``.

    Returns a snapshot without data when the checksum (or HTTP validators) show the
    index is the one read last time. Raises SourceError, ChecksumError or
    IndexFormatError naming the file and the problem.
    """
    try:
        return _read_v3(source, previous, progress)
    except SourceNotFound:
        pass
    try:
        return _read_v2(source, previous, progress)
    except SourceNotFound:
        pass
    names = source.list_dir("build_cache")
    if names is not None:
        return _scan_spec_files(source, names)
    raise SourceNotFound(
        source.url,
        f"no build cache index here (neither {V3_INDEX_MANIFEST} nor {V2_INDEX}); is this the mirror's root URL?",
    )


def _read_v3(source: Source, previous: PreviousState | None, progress: ProgressCallback | None) -> IndexSnapshot:
    same_layout = previous is not None and previous.layout == 3
    fetched = source.fetch(
        V3_INDEX_MANIFEST,
        etag=previous.etag if same_layout and previous else None,
        last_modified=previous.last_modified if same_layout and previous else None,
    )
    if fetched is None:  # 304: the manifest, hence the index, is unchanged
        assert previous is not None
        return IndexSnapshot(3, previous.checksum, None, previous.etag, previous.last_modified)
    manifest_url = source.join(V3_INDEX_MANIFEST)
    manifest = _decode_manifest(fetched.data, manifest_url)
    record = _pick_index_blob(manifest, manifest_url)
    if same_layout and previous and previous.checksum == record.checksum:
        return IndexSnapshot(3, record.checksum, None, fetched.etag, fetched.last_modified)
    blob_path = _blob_path(record)
    blob_url = source.join(blob_path)
    try:
        data = source.fetch(blob_path, progress=progress)
    except SourceNotFound as exc:
        raise SourceError(blob_url, f"index blob listed in {manifest_url} is missing ({exc.problem})") from exc
    assert data is not None
    _verify(data.data, record.checksumAlgorithm, record.checksum, blob_url)
    if record.contentLength is not None and record.contentLength != len(data.data):
        raise ChecksumError(
            blob_url, f"size mismatch (manifest says {record.contentLength} bytes, got {len(data.data)})"
        )
    body = data.data
    if body[:2] == b"\x1f\x8b":  # trust the bytes, not the "compression" field (format doc §7)
        try:
            body = gzip.decompress(body)
        except (OSError, EOFError) as exc:
            raise IndexFormatError(blob_url, f"corrupt gzip data: {exc}") from exc
    return IndexSnapshot(3, record.checksum, body, fetched.etag, fetched.last_modified)


def _pick_index_blob(manifest: _Manifest, url: str) -> _BlobRecord:
    """The index blob of the highest Database version we read (Spack 1.3 may list several)."""
    candidates: list[tuple[int, _BlobRecord]] = []
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


def _read_v2(source: Source, previous: PreviousState | None, progress: ProgressCallback | None) -> IndexSnapshot:
    try:
        expected: str | None = source.read(V2_INDEX_HASH).decode("ascii", "replace").strip()
    except SourceNotFound:
        expected = None
    if expected is not None and not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise IndexFormatError(source.join(V2_INDEX_HASH), "not a sha256 hex digest")
    if previous is not None and previous.layout == 2 and expected == previous.checksum:
        return IndexSnapshot(2, expected, None, previous.etag, previous.last_modified)
    try:
        fetched = source.fetch(V2_INDEX, progress=progress)
    except SourceNotFound as exc:
        if expected is None:
            raise
        # The hash file says this is a v2 mirror: a missing index is its problem, not ours.
        raise SourceError(exc.url, f"{exc.problem}, although index.json.hash is there") from exc
    assert fetched is not None
    index_url = source.join(V2_INDEX)
    checksum = hashlib.sha256(fetched.data).hexdigest()
    if expected is not None and checksum != expected:
        raise ChecksumError(
            index_url,
            f"does not match index.json.hash (expected {expected[:12]}…, "
            f"got {checksum[:12]}…): the index is corrupt or was replaced while being read",
        )
    if previous is not None and previous.layout == 2 and checksum == previous.checksum:
        return IndexSnapshot(2, checksum, None, fetched.etag, fetched.last_modified)
    return IndexSnapshot(2, checksum, fetched.data, fetched.etag, fetched.last_modified)


# -- v1/v2 mirrors without index.json: build one from the spec files -----------------

_SPEC_FILE = re.compile(rf".+-({DAG_HASH.pattern})\.spec\.(json|json\.sig|yaml)")
#: Spec-file format version -> the Database version whose nodes have that shape (§1).
_DB_FOR_SPEC_VERSION = {1: 6, 2: 6, 3: 6, 4: 7, 5: 8, 6: 9}


def _scan_spec_files(source: Source, names: list[str]) -> IndexSnapshot:
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
        spec_version, file_layout, nodes = _read_spec_file(source.read(path), url, name)
        layout = max(layout, file_layout)
        db_version = max(db_version, _DB_FOR_SPEC_VERSION.get(spec_version, 6))
        for position, (node_hash, node) in enumerate(nodes):
            listed = position == 0 or node_hash in by_hash
            known = installs.get(node_hash)
            if known is None or (listed and not known["in_buildcache"]):
                installs[node_hash] = {"spec": node, "ref_count": 0, "in_buildcache": listed}
    data = msgspec.json.encode({"database": {"version": str(db_version), "installs": installs}})
    return IndexSnapshot(max(layout, 1) if layout else 1, hashlib.sha256(data).hexdigest(), data)


def _read_spec_file(raw: bytes, url: str, name: str) -> tuple[int, int, list[tuple[str, dict]]]:  # type: ignore[type-arg]
    """(spec format version, layout version, [(hash, node)]) of one v1/v2 spec file."""
    try:
        text = read_clearsigned(raw.decode("utf-8"))
        document = yaml.safe_load(text) if name.endswith(".yaml") else msgspec.json.decode(text)
    except (UnicodeDecodeError, ValueError, msgspec.DecodeError, yaml.YAMLError) as exc:
        raise IndexFormatError(url, f"not a valid spec file: {exc}") from exc
    if not isinstance(document, dict) or "spec" not in document:
        raise IndexFormatError(url, "not a valid spec file: no 'spec' key")
    raw_layout = document.get("buildcache_layout_version", 0)
    try:
        file_layout = int(raw_layout)  # the future_layout fixture has the string "10"
    except (TypeError, ValueError) as exc:
        raise IndexFormatError(url, f"buildcache_layout_version {raw_layout!r} is not a number") from exc
    if file_layout > 2:
        raise IndexFormatError(
            url,
            f"build-cache layout version {file_layout} is newer than this cachedex reads "
            "in a build_cache/ folder (up to 2); upgrade cachedex",
        )
    spec = document["spec"]
    nodes: list[tuple[str, dict]] = []  # type: ignore[type-arg]
    if isinstance(spec, list):  # spec v1: [{"<name>": {node}}, ...]
        spec_version = 1
        for item in spec:
            for node_name, node in item.items():
                nodes.append((node.get("hash", ""), {"name": node_name, **node}))
    else:
        spec_version = int(spec.get("_meta", {}).get("version", 2))
        nodes = [(node.get("hash", ""), node) for node in spec.get("nodes", [])]
    for node_hash, _node in nodes:
        if not is_dag_hash(node_hash):
            raise IndexFormatError(url, f"node with malformed hash {node_hash!r}")
    return spec_version, file_layout, nodes


# -- binary sizes --------------------------------------------------------------------


def spec_manifest_path(name: str, version: str, dag_hash: str) -> str:
    """Path of a spec's v3 manifest (format doc §5.3); ``/`` in a version becomes ``_``."""
    stem = f"{name}-{version}-{dag_hash}".replace("/", "_")
    return f"v3/manifests/spec/{name}/{stem}.spec.manifest.json"


def tarball_path_v2(*, hash: str, name: str, version: str, compiler: str, platform: str, os: str, target: str) -> str:
    """Path of a spec's ``.spack`` tarball in a v2 mirror (format doc §5.2)."""
    cname, _, cversion = compiler.partition("@")
    compiler_part = f"{cname}-{cversion}" if cversion else "none-none"
    arch = f"{platform}-{os}-{target}"
    stem = f"{arch}-{compiler_part}-{name}-{version}"
    return f"build_cache/{arch}/{compiler_part}/{name}-{version}/{stem}-{hash}.spack"


class SizeLookup(msgspec.Struct, frozen=True):
    """What to look up for one spec: its hash and the path that gives its size."""

    hash: str
    path: str


def _manifest_size(source: Source, path: str) -> int | None:
    url = source.join(path)
    try:
        manifest = _decode_manifest(source.read(path), url)
    except SourceNotFound:
        return None
    for record in manifest.data:
        if record.mediaType == TARBALL_MEDIA_TYPE:
            return record.contentLength
    raise IndexFormatError(url, f"manifest lists no {TARBALL_MEDIA_TYPE} blob")


def fetch_sizes(
    source: Source,
    lookups: Iterable[SizeLookup],
    *,
    layout: int,
    workers: int,
    on_done: Callable[[], None] | None = None,
) -> tuple[dict[str, int], list[str]]:
    """Fetch binary sizes with ``workers`` threads: v3 from spec manifests, v2 by HEAD/stat.

    Returns ({hash: size}, [problems]). A missing or unreadable manifest is a
    problem to report, not a reason to fail the sync: the size stays unknown.
    """
    sizes: dict[str, int] = {}
    problems: list[str] = []

    def one(lookup: SizeLookup) -> tuple[str, int | None, str | None]:
        try:
            if layout == 3:
                return lookup.hash, _manifest_size(source, lookup.path), None
            return lookup.hash, source.size(lookup.path), None
        except (SourceError, IndexFormatError) as exc:
            return lookup.hash, None, str(exc)

    def run(chunk: list[SizeLookup]) -> None:
        # Each worker walks its own slice: one task per worker, not one future per spec
        # (250,000 futures cost more than the reads). Reads release the GIL.
        for result in map(one, chunk):
            dag_hash, size, problem = result
            if size is not None:
                sizes[dag_hash] = size
            if problem is not None:
                problems.append(problem)
            if on_done is not None:
                on_done()

    todo = list(lookups)
    workers = max(1, min(workers, len(todo)))
    if workers == 1:
        run(todo)
        return sizes, problems
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for future in [pool.submit(run, todo[n::workers]) for n in range(workers)]:
            future.result()
    return sizes, problems
