"""The public keys a mirror publishes, for ``cachedex verify``.

Where Spack puts them (``spack buildcache push --key``, ``update-index --keys``):

- layout 3: ``v3/manifests/key/keys.manifest.json`` names the key index, a blob
  (``application/vnd.spack.keyindex.v1+json``: ``{"keys": {"<FINGERPRINT>": {}}}``), and
  ``v3/manifests/key/<FINGERPRINT>.key.manifest.json`` names each key's blob
  (``application/pgp-keys``, ASCII-armored); every blob is checked against its manifest;
- layouts 1 and 2: ``build_cache/_pgp/index.json`` (the same key index) and
  ``build_cache/_pgp/<FINGERPRINT>.pub``.

The keys the key index names are published; where the folder can be listed (a local
mirror), every key file found there is too (Spack's own signed test mirror holds keys
that its index does not name). A named key that cannot be read is a problem; a mirror
without keys is an unsigned mirror, not a problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

from ..catalog.verifications import Problem
from ..config import Limits
from ..errors import CachedexError, SourceNotFound
from .manifests import blob_path, decode_manifest, verify_checksum
from .signatures import Keyring
from .sources import Source

__all__ = ["KEY_DIR_V2", "KEY_DIR_V3", "KEY_INDEX_V3", "load_keys"]

KEY_DIR_V3 = "v3/manifests/key"
#: The manifest of a v3 mirror's key index (``update-index --keys``).
KEY_INDEX_V3 = f"{KEY_DIR_V3}/keys.manifest.json"
KEY_DIR_V2 = "build_cache/_pgp"
_KEY_INDEX_MEDIA = "application/vnd.spack.keyindex.v1+json"
_KEY_MEDIA = "application/pgp-keys"
_FINGERPRINT = re.compile(r"[0-9A-Fa-f]{16,64}")
#: The most bytes of a key or a key index.
KEY_BYTES = 1_000_000


class _KeyIndex(msgspec.Struct):
    keys: dict[str, object] = {}


_key_index = msgspec.json.Decoder(_KeyIndex)


def load_keys(source: Source, layout: int, keyring: Keyring, limits: Limits) -> list[Problem]:
    """Import into ``keyring`` every key the mirror at ``source`` publishes; returns the
    problems met (a named key missing or unreadable, a key index that is not one)."""
    problems: list[Problem] = []
    if layout == 3:
        named = _v3_index(source, limits, problems)
        suffix, folder = ".key.manifest.json", KEY_DIR_V3
    else:
        named = _read_index(source, f"{KEY_DIR_V2}/index.json", problems)
        suffix, folder = ".pub", KEY_DIR_V2
    listed = [name[: -len(suffix)] for name in source.list_dir(folder) or () if name.endswith(suffix)]
    seen: set[str] = set()
    for fingerprint in [*named, *(f for f in listed if f not in named)]:
        if fingerprint.upper() in seen:
            continue
        seen.add(fingerprint.upper())
        if not _FINGERPRINT.fullmatch(fingerprint):
            problems.append(Problem("key-unreadable", source.join(folder), f"{fingerprint!r} is not a key fingerprint"))
            continue
        if layout == 3:
            _v3_key(source, fingerprint, keyring, limits, problems)
        else:
            _import(source, f"{KEY_DIR_V2}/{fingerprint}.pub", fingerprint, keyring, problems, source.read)
    return problems


def _read_index(source: Source, path: str, problems: list[Problem], data: bytes | None = None) -> list[str]:
    """Fingerprints a key index names ([] when there is none)."""
    try:
        raw = data if data is not None else bytes(source.read(path, limit=KEY_BYTES))
        return list(_key_index.decode(raw).keys)
    except SourceNotFound:
        return []
    except CachedexError as exc:
        problems.append(Problem("key-unreadable", source.join(path), f"key index cannot be read: {exc}"))
    except (msgspec.DecodeError, RecursionError) as exc:
        problems.append(Problem("key-unreadable", source.join(path), f"not a key index ({exc})"))
    return []


def _blob(source: Source, manifest_path: str, media: str, limits: Limits) -> tuple[bytes, str]:
    """The blob a key or key-index manifest names, checked against it; (bytes, its path).
    SourceNotFound (manifest or blob missing) or another CachedexError."""
    url = source.join(manifest_path)
    manifest = decode_manifest(source.read(manifest_path, limit=limits.manifest_bytes), url)
    for record in manifest.data:
        if record.mediaType == media:
            path = blob_path(record)
            try:
                data = bytes(source.read(path, limit=KEY_BYTES))
            except SourceNotFound as exc:
                raise SourceNotFound(source.join(path), f"the blob {url} lists is missing") from exc
            verify_checksum(data, record, source.join(path))
            return data, path
    raise SourceNotFound(url, f"lists no {media} blob")


def _v3_index(source: Source, limits: Limits, problems: list[Problem]) -> list[str]:
    path = KEY_INDEX_V3
    try:
        data, blob = _blob(source, path, _KEY_INDEX_MEDIA, limits)
    except SourceNotFound as exc:
        if exc.url == source.join(path):
            return []  # no key index: an unsigned mirror (or keys found by listing)
        problems.append(Problem("key-missing", exc.url, exc.problem))
        return []
    except CachedexError as exc:
        problems.append(Problem("key-unreadable", source.join(path), f"key index cannot be read: {exc}"))
        return []
    return _read_index(source, blob, problems, data)


def _v3_key(source: Source, fingerprint: str, keyring: Keyring, limits: Limits, problems: list[Problem]) -> None:
    path = f"{KEY_DIR_V3}/{fingerprint}.key.manifest.json"
    try:
        data, blob = _blob(source, path, _KEY_MEDIA, limits)
    except SourceNotFound as exc:
        problems.append(Problem("key-missing", exc.url, f"public key {fingerprint}: {exc.problem}"))
        return
    except CachedexError as exc:
        problems.append(Problem("key-unreadable", source.join(path), f"public key {fingerprint}: {exc}"))
        return
    _import(source, blob, fingerprint, keyring, problems, lambda _path, limit: data)


def _import(
    source: Source,
    path: str,
    fingerprint: str,
    keyring: Keyring,
    problems: list[Problem],
    read: Callable[..., bytes | bytearray],
) -> None:
    try:
        data = read(path, limit=KEY_BYTES)
    except SourceNotFound as exc:
        problems.append(Problem("key-missing", exc.url, f"public key {fingerprint}: {exc.problem}"))
        return
    except CachedexError as exc:
        problems.append(Problem("key-unreadable", source.join(path), f"public key {fingerprint}: {exc}"))
        return
    _found, problem = keyring.add(data, fingerprint if len(fingerprint) == 40 else None)
    if problem:
        problems.append(Problem("key-unreadable", source.join(path), f"public key {fingerprint}: {problem}"))
