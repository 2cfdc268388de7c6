"""OpenPGP signatures of spec files and manifests, checked by GnuPG (through python-gnupg).

Why gpg rather than PGPy (measured on the signed Spack fixture, ``bench/README.md``,
verify): PGPy 0.6.0 (its last release, 2022) imports ``imghdr``, which Python 3.13
removed, so it cannot be imported there at all; on 3.11 it warns at import and at every
verification that it checks neither self-signatures, nor revocations, nor key flags; and
it takes ~15 ms per RSA-4096 clearsigned file in Python, holding the GIL. gpg is what
Spack itself runs to sign and to verify (``spack.util.gpg``), so the verdicts are
Spack's; it checks expiry and revocation; it costs one process per file (~7 ms, most of
it the process start), which runs beside Python's work, several at once. Both agree on
every fixture signature, the three bad ones included.

A :class:`Keyring` is a temporary GnuPG home holding the public keys one mirror
publishes, and nothing else: a signature verifies only if a key of *that* mirror made
it. gpg is told never to start an agent (``--no-autostart``: verifying needs none) and
never to look a key up anywhere. What is verified is gpg's own output of the signed
text: a file holding more than its signed text (text after the signature) is bad.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
from typing import Any

import msgspec

__all__ = ["GPG_MISSING", "Keyring", "SignatureCheck", "gpg_available", "is_clearsigned"]

#: The message when no gpg binary is installed.
GPG_MISSING = "gpg is not installed (Debian package gnupg): signatures cannot be checked"

_SIGNED_HEADER = b"-----BEGIN PGP SIGNED MESSAGE-----"


def gpg_available() -> bool:
    """Whether a ``gpg`` binary is on the PATH."""
    return shutil.which("gpg") is not None


class SignatureCheck(msgspec.Struct, frozen=True):
    """The verdict on one file: its status (``signed``, ``unsigned``, ``bad``,
    ``unknown-key``), the fingerprint of the key that signed it (when known), what is
    wrong (empty when nothing), and the text that was signed (None unless ``signed``)."""

    status: str
    signer: str | None = None
    problem: str = ""
    text: str | None = None


def is_clearsigned(data: bytes | bytearray) -> bool:
    """Whether ``data`` is an OpenPGP cleartext-signed message (whitespace before it allowed)."""
    return data.lstrip()[: len(_SIGNED_HEADER)] == _SIGNED_HEADER


class Keyring:
    """The public keys one mirror publishes, in a GnuPG home of their own. Thread-safe:
    several verifications may run at once (each is a gpg process)."""

    def __init__(self) -> None:
        # Imported here: python-gnupg (with email, socket and logging) costs ~17 ms of a
        # slow machine's start, and only verify with keys and a signed lockfile use it.
        import gnupg  # type: ignore[import-untyped]

        self._home = tempfile.mkdtemp(prefix="cachedex-gpg-")
        try:
            self._gpg = gnupg.GPG(
                gnupghome=self._home,
                options=["--no-autostart", "--no-auto-key-retrieve", "--no-auto-key-locate", "--trust-model", "always"],
            )
        except (OSError, ValueError, RuntimeError) as exc:
            shutil.rmtree(self._home, ignore_errors=True)
            raise RuntimeError(f"{GPG_MISSING} ({exc})") from exc
        self._gpg.encoding = "utf-8"
        self._lock = threading.Lock()
        self._material = hashlib.sha256()
        #: Fingerprints of the primary keys imported, in the order they came.
        self.fingerprints: list[str] = []

    def __enter__(self) -> Keyring:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the GnuPG home."""
        shutil.rmtree(self._home, ignore_errors=True)

    @property
    def id(self) -> str:
        """sha256 over the keys imported: verifications with the same keys may share results."""
        return self._material.hexdigest()

    def add(self, armored: bytes | bytearray, expected: str | None = None) -> tuple[list[str], str]:
        """Import the public key(s) in ``armored``; returns (fingerprints imported, what is
        wrong: no key at all, a secret key, or not the key ``expected`` names)."""
        text = bytes(armored).decode("utf-8", "replace")
        if "PRIVATE KEY BLOCK" in text:
            return [], "holds a secret key, not a public key; not imported"
        with self._lock:
            result = self._gpg.import_keys(text)
        found = sorted({fp.upper() for fp in result.fingerprints if fp})
        if not found:
            return [], "not an OpenPGP public key (gpg imported nothing)"
        self._material.update(bytes(armored))
        for fingerprint in found:
            if fingerprint not in self.fingerprints:
                self.fingerprints.append(fingerprint)
        if expected is not None and expected.upper() not in found:
            return found, f"holds key {', '.join(found)}, not {expected}"
        return found, ""

    def verify(self, data: bytes | bytearray) -> SignatureCheck:
        """The verdict on a clearsigned file (``unsigned`` if it is not one)."""
        if not is_clearsigned(data):
            return SignatureCheck("unsigned")
        result: Any = self._gpg.decrypt(bytes(data))
        status = str(result.status or "")
        # A good signature by a key that has since expired or been revoked: gpg says so and
        # exits 0, and Spack, whose check is gpg's exit status, installs it. An expired
        # signature is one gpg refuses (exit 1), with the same status.
        accepted = result.valid or getattr(result, "returncode", None) == 0
        if accepted and status == "signature valid":
            signer = str(result.pubkey_fingerprint or result.fingerprint or "").upper() or None
            signed_text = bytes(result.data).decode("utf-8", "replace")
            if _lines(signed_text) != _lines(_cleartext(bytes(data))):
                return SignatureCheck("bad", signer, "the file holds text outside its signature")
            return SignatureCheck("signed", signer, text=signed_text)
        key_id = str(result.key_id or "").upper() or None
        if status == "no public key":
            return SignatureCheck("unknown-key", key_id, f"signed by key {key_id}, which the mirror does not publish")
        if status == "signature bad":
            return SignatureCheck("bad", key_id, f"bad signature by key {key_id}: the signed text was altered")
        said = [str(p.get("status", "")) for p in getattr(result, "problems", None) or () if isinstance(p, dict)]
        why = next((w for w in (status, *said) if "expired" in w or "revoked" in w), None)
        if why is not None:
            return SignatureCheck("bad", key_id, f"signature by key {key_id}: {why}")
        return SignatureCheck("bad", key_id, f"the signature cannot be read ({status or 'gpg found no signature'})")


def _cleartext(data: bytes) -> str:
    """The signed part of a clearsigned file as a reader that does not verify takes it."""
    text = data.decode("utf-8", "replace").lstrip()
    lines = text.splitlines()
    try:
        start = lines.index("") + 1
        end = lines.index("-----BEGIN PGP SIGNATURE-----", start)
    except ValueError:
        return ""
    tail = "\n".join(lines[end:])
    if tail.rstrip().endswith("-----END PGP SIGNATURE-----") is False:
        return "\0"  # something follows the signature: never equal to gpg's text
    return "\n".join(line[2:] if line.startswith("- ") else line for line in lines[start:end])


def _lines(text: str) -> list[str]:
    """Lines without trailing whitespace, trailing empty lines dropped (OpenPGP's
    canonical form of cleartext ignores them)."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines
