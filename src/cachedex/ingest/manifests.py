"""v3 manifests and blobs (format doc §5.3): decoding, paths, checksums, decompression.

A manifest is ``{"version": 3, "data": [BlobRecord, ...]}``, plain JSON or clearsigned in
place; every field of a record that becomes part of a path (the checksum algorithm, the
checksum) is checked before it is used, and every size is a number a file can have.
Decompression is bounded: it stops at the limit, however much a gzip bomb would expand.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import msgspec

from ..errors import ChecksumError, IndexFormatError, TooBig
from ..values import TARBALL_MEDIA_TYPE, format_version, spec_manifest_path, tarball_path_v2

__all__ = [
    "BlobRecord",
    "Manifest",
    "blob_path",
    "decode_manifest",
    "gunzip_bounded",
    "inflate_bounded",
    "manifest_size",
    "read_clearsigned",
    "spec_manifest_path",
    "tarball_path_v2",
    "verified_while",
    "verify_checksum",
]

#: The only manifest version there is (layout v3); Spack refuses any other too.
MANIFEST_VERSION = 3
#: Checksum algorithms a blob's address may use, and the length of their hex digests.
_ALGORITHMS = {"sha256": 64, "sha512": 128}
_HEX = re.compile(r"[0-9a-f]+")
#: The largest size we believe: 2**53 bytes (8 PiB) is more than any binary and still a float.
MAX_SIZE = 2**53
_SIGNED_HEADER = "-----BEGIN PGP SIGNED MESSAGE-----"
_SIGNATURE_MARKER = "-----BEGIN PGP SIGNATURE-----"


class BlobRecord(msgspec.Struct):
    """One blob a manifest lists: what it is, how it is stored, its address and size."""

    mediaType: str  # noqa: N815 - Spack's key
    checksum: str
    contentLength: int | None = None  # noqa: N815
    checksumAlgorithm: str = "sha256"  # noqa: N815
    compression: str = "none"


class Manifest(msgspec.Struct):
    """A v3 manifest: its version and the blobs it lists."""

    version: int | str
    data: list[BlobRecord]


_manifest_decoder = msgspec.json.Decoder(Manifest)


def read_clearsigned(text: str) -> str:
    """The signed text of an OpenPGP cleartext-signed message, dash-escaping undone.

    Plain text is returned unchanged. The signature is not verified (``verify`` does that).
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


def decode_manifest(data: bytes | bytearray, url: str) -> Manifest:
    """A v3 manifest from its bytes (clearsigned or not); IndexFormatError naming ``url``
    for anything else, a version other than 3 included."""
    try:
        if data[:1] == b"{":  # plain JSON: skip the text round trip (hot: one per spec)
            manifest = _manifest_decoder.decode(data)
        else:
            manifest = _manifest_decoder.decode(read_clearsigned(data.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError, msgspec.DecodeError) as exc:
        raise IndexFormatError(url, _not_a_manifest(data, exc)) from exc
    version = format_version(manifest.version)  # (as manifest_size reads it: " 3" is no version)
    if version is None:
        raise IndexFormatError(url, f"manifest version {_short(manifest.version)} is not a number")
    if version != MANIFEST_VERSION:
        newer = version > MANIFEST_VERSION
        raise IndexFormatError(
            url,
            f"manifest version {version} is not 3, the build-cache layout this cachedex reads"
            + ("; upgrade cachedex" if newer else ""),
        )
    for record in manifest.data:
        _check_record(record, url)
    return manifest


def _check_record(record: BlobRecord, url: str) -> None:
    """Refuse what a record must not hold before any of it becomes a path or a number we keep."""
    length = _ALGORITHMS.get(record.checksumAlgorithm)
    if length is None:
        raise IndexFormatError(
            url, f"unknown checksum algorithm {_short(record.checksumAlgorithm)} (cachedex reads sha256, sha512)"
        )
    checksum = record.checksum.strip().lower()
    if len(checksum) != length or not _HEX.fullmatch(checksum):
        raise IndexFormatError(
            url, f"checksum {_short(record.checksum)} is not a {record.checksumAlgorithm} hex digest"
        )
    record.checksum = checksum
    size = record.contentLength
    if size is not None and not 0 <= size < MAX_SIZE:
        raise IndexFormatError(url, f"contentLength {_short(size)} is not a size a file can have")


def blob_path(record: BlobRecord) -> str:
    """Where a blob lives under the mirror's root: ``blobs/<alg>/<first two>/<checksum>``."""
    return f"blobs/{record.checksumAlgorithm}/{record.checksum[:2]}/{record.checksum}"


def verify_checksum(data: bytes | bytearray, record: BlobRecord, url: str, digest: str | None = None) -> None:
    """ChecksumError unless ``data`` has the checksum and size ``record`` gives (its
    ``digest``, when already computed)."""
    if digest is None:
        digest = hashlib.new(record.checksumAlgorithm, data).hexdigest()
    if digest != record.checksum:
        raise ChecksumError(
            url,
            f"checksum mismatch ({record.checksumAlgorithm} expected {record.checksum[:12]}…, "
            f"got {digest[:12]}…): the file is corrupt or was replaced while being read",
        )
    if record.contentLength is not None and record.contentLength != len(data):
        raise ChecksumError(url, f"size mismatch (manifest says {record.contentLength} bytes, got {len(data)})")


_T = TypeVar("_T")

#: Below this many bytes a blob is hashed before its ``work``, not beside it.
_HASH_BESIDE_MIN = 1 << 20


def verified_while(data: bytes | bytearray, record: BlobRecord, url: str, work: Callable[[], _T]) -> _T:
    """``work()`` (the decode of ``data``), run while another thread computes the checksum
    of ``data`` (hashlib lets go of the GIL), then checked as :func:`verify_checksum`
    does: a 440 MB index is hashed during its decode (0.54 s) instead of before it
    (0.24 s more). Nothing ``work`` made is returned unless the checksum is right, and a
    wrong checksum is the error raised, whatever ``work`` raised on those bytes."""
    if len(data) < _HASH_BESIDE_MIN:
        verify_checksum(data, record, url)
        return work()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cachedex-checksum") as pool:
        hashed = pool.submit(hashlib.new, record.checksumAlgorithm, data)
        try:
            result = work()
        finally:  # a wrong checksum replaces whatever work() raised
            verify_checksum(data, record, url, hashed.result().hexdigest())
    return result


def gunzip_bounded(data: bytes | bytearray, limit: int, url: str) -> bytes:
    """``data`` decompressed (gzip), at most ``limit`` bytes of it: TooBig past that,
    IndexFormatError if it is not gzip."""
    try:
        out, ended = inflate_bounded(data, 31, limit)
    except zlib.error as exc:
        raise IndexFormatError(url, f"corrupt gzip data: {exc}") from exc
    if len(out) > limit:
        raise TooBig(url, f"decompresses to more than {limit:,} bytes, the limit for this kind of file")
    if not ended:
        raise IndexFormatError(url, "corrupt gzip data: the stream ends early")
    return out


def inflate_bounded(data: bytes | bytearray, wbits: int, limit: int) -> tuple[bytes, bool]:
    """``data`` inflated as zlib's ``wbits`` say, at most ``limit + 1`` bytes of it (more
    is over the limit), and whether its stream ended. Gzip (``wbits`` 31) goes on to each
    further member: files concatenated are one gzip file, as ``gunzip`` reads them (the
    first member alone was read, the rest dropped without a word). zlib.error if the
    data is not what ``wbits`` says."""
    parts: list[bytes] = []  # (joined only when there are several: an index is big)
    size = 0
    rest = data
    while True:
        inflater = zlib.decompressobj(wbits)
        parts.append(inflater.decompress(rest, limit + 1 - size))
        size += len(parts[-1])
        rest = inflater.unused_data
        if size > limit or not inflater.eof or wbits != 31 or rest[:2] != b"\x1f\x8b":
            return parts[0] if len(parts) == 1 else b"".join(parts), inflater.eof


class _SizeRecord(msgspec.Struct):
    mediaType: str  # noqa: N815
    contentLength: int | None = None  # noqa: N815


class _SizeManifest(msgspec.Struct):
    version: int | str
    data: list[_SizeRecord]


_size_decoder = msgspec.json.Decoder(_SizeManifest)


def manifest_size(url: str, data: bytes | bytearray) -> int:
    """The download size of a spec's binary, from its manifest: the ``contentLength`` of
    its tarball record (format doc §5.5). Hot (one call per spec): it decodes only what
    it reads; nothing of the manifest becomes a path."""
    try:
        if data[:1] == b"{":
            manifest = _size_decoder.decode(data)
        else:
            manifest = _size_decoder.decode(read_clearsigned(bytes(data).decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError, msgspec.DecodeError) as exc:
        raise IndexFormatError(url, _not_a_manifest(data, exc)) from exc
    if manifest.version != MANIFEST_VERSION and str(manifest.version) != "3":
        raise IndexFormatError(url, f"manifest version {_short(manifest.version)} is not 3")
    for record in manifest.data:
        if record.mediaType == TARBALL_MEDIA_TYPE:
            size = record.contentLength
            if size is None:
                raise IndexFormatError(url, f"the {TARBALL_MEDIA_TYPE} record has no contentLength")
            if not 0 <= size < MAX_SIZE:
                raise IndexFormatError(url, f"contentLength {_short(size)} is not a size a file can have")
            return size
    raise IndexFormatError(url, f"manifest lists no {TARBALL_MEDIA_TYPE} blob")


def _not_a_manifest(data: bytes | bytearray, exc: BaseException) -> str:
    """Why ``data`` is no manifest: an HTML page (a host's "not found" page, sent as 200
    and not labelled HTML), said as such, else the decoder's words."""
    if bytes(data[:1024]).lstrip()[:1] == b"<":
        return "an HTML page, not a v3 manifest (the server's 'not found' page, sent as HTTP 200?)"
    return f"not a valid v3 manifest: {_short(exc)}"


def _short(value: object) -> str:
    text = repr(value) if not isinstance(value, BaseException) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."
