"""The parts of a mirror that are not its specs: the writer of its files, OpenPGP
cleartext signatures (fake by default) and the public keys a signed mirror publishes.

:mod:`.mirrorgen` writes mirrors with them and re-exports their public names.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = [
    "KEY_INDEX_MEDIA_TYPE",
    "PUBLIC_KEY_MEDIA_TYPE",
    "MirrorFiles",
    "Signer",
    "clearsign",
    "publish_keys",
]


class MirrorFiles:
    """Writes files under one folder, creating each parent folder once."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.made: set[str] = set()

    def _open(self, relative: str) -> int:
        path = f"{self.root}/{relative}"
        parent = path.rpartition("/")[0]
        if parent not in self.made:
            os.makedirs(parent, exist_ok=True)
            self.made.add(parent)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

    def write(self, relative: str, data: bytes) -> None:
        with open(self._open(relative), "wb") as handle:
            handle.write(data)

    def filler(self, relative: str, size: int, seed: str) -> str:
        """Write ``size`` cheap deterministic bytes (gzip magic first); returns their sha256 hex."""
        chunk = b"\x1f\x8b\x08\x00" + hashlib.sha256(seed.encode()).digest() * 2047 + bytes(28)
        digest = hashlib.sha256()
        with open(self._open(relative), "wb") as handle:
            for start in range(0, size, len(chunk)):
                part = chunk[: min(len(chunk), size - start)]
                digest.update(part)
                handle.write(part)
        return digest.hexdigest()


#: Turns a text into an OpenPGP cleartext-signed message (what ``gpg --clearsign`` writes).
Signer = Callable[[str], str]

#: Media types of a v3 mirror's public keys and of its key index (``url_buildcache.py``).
PUBLIC_KEY_MEDIA_TYPE = "application/pgp-keys"
KEY_INDEX_MEDIA_TYPE = "application/vnd.spack.keyindex.v1+json"


def clearsign(text: str, *, hash_algo: str = "SHA512") -> str:
    """``text`` as an OpenPGP cleartext-signed message with a fake signature.

    Lines starting with ``-`` are dash-escaped (``- `` prefix). The signature block is
    deterministic base64 that only looks like a signature; readers strip it unverified.
    """
    body = text
    if text.startswith("-") or "\n-" in text:
        body = "\n".join(f"- {line}" if line.startswith("-") else line for line in text.split("\n"))
    digest = hashlib.sha512(text.encode("utf-8")).digest()
    armored = base64.b64encode(b"\x89\x02\x33\x04\x01\x01\x0a\x00\x1d" + digest * 8).decode("ascii")
    lines = "\n".join(armored[i : i + 64] for i in range(0, len(armored), 64))
    return (
        "-----BEGIN PGP SIGNED MESSAGE-----\n"
        f"Hash: {hash_algo}\n\n{body}\n-----BEGIN PGP SIGNATURE-----\n\n{lines}\n"
        f"={base64.b64encode(digest[:3]).decode('ascii')}\n-----END PGP SIGNATURE-----\n"
    )


def publish_keys(dest: Path, keys: Mapping[str, str], *, layout: int) -> None:
    """Publish the ASCII-armored public ``keys`` (fingerprint -> key) of the mirror at
    ``dest`` as ``spack buildcache push --key`` does: layout 3, a blob and
    ``v3/manifests/key/<FINGERPRINT>.key.manifest.json`` per key, and the key index
    (``{"keys": {fingerprint: {}}}``) as a blob named by ``v3/manifests/key/keys.manifest.json``;
    layout 2, ``build_cache/_pgp/<FINGERPRINT>.pub`` and ``build_cache/_pgp/index.json``."""
    files = MirrorFiles(dest)
    index = json.dumps({"keys": {fingerprint: {} for fingerprint in keys}}).encode("ascii")
    if layout == 2:
        for fingerprint, armored in keys.items():
            files.write(f"build_cache/_pgp/{fingerprint}.pub", armored.encode("ascii"))
        files.write("build_cache/_pgp/index.json", index)
        return
    if layout != 3:
        raise ValueError(f"layout must be 2 or 3, got {layout}")
    for name, data, media in (
        *((fingerprint, armored.encode("ascii"), PUBLIC_KEY_MEDIA_TYPE) for fingerprint, armored in keys.items()),
        ("keys", index, KEY_INDEX_MEDIA_TYPE),
    ):
        checksum = hashlib.sha256(data).hexdigest()
        files.write(f"blobs/sha256/{checksum[:2]}/{checksum}", data)
        manifest = {
            "version": 3,
            "data": [
                {
                    "contentLength": len(data),
                    "mediaType": media,
                    "compression": "none",
                    "checksumAlgorithm": "sha256",
                    "checksum": checksum,
                }
            ],
        }
        suffix = "manifest.json" if name == "keys" else "key.manifest.json"
        files.write(f"v3/manifests/key/{name}.{suffix}", json.dumps(manifest, indent=0).encode("ascii"))
