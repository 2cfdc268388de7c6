"""Signatures made in the past (ingest/signatures.py): by a key that has expired since,
which gpg accepts and so Spack installs, and that have expired themselves, which gpg
refuses. Each verdict is held to gpg's own exit status, Spack's check."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cachedex.ingest.signatures import Keyring

#: The keys and signatures are made at this time (the key valid from then on).
THEN = "20200101T000000"
NEXT_DAY = "20200102T000000"


class PastKey:
    """A signing key made in 2020 in a GnuPG home of its own, by gpg's command line."""

    def __init__(self, home: Path, expires: str) -> None:
        home.mkdir(mode=0o700)
        self.home = home
        self._gpg("--faked-system-time", THEN, "--passphrase", "", "--quick-gen-key", "past <p@cachedex.invalid>",
                  "ed25519", "sign", expires)  # fmt: skip
        self.public = self._gpg("--armor", "--export").stdout

    def sign(self, path: Path, *extra: str) -> Path:
        signed = path.with_name(path.name + ".sig")
        self._gpg("--faked-system-time", NEXT_DAY, *extra, "--clearsign", "--output", str(signed), str(path))
        return signed

    def gpg_accepts(self, signed: Path) -> bool:
        """What Spack's check says: gpg's exit status, now."""
        return self._gpg("--verify", str(signed), check=False).returncode == 0

    def close(self) -> None:
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "gpg-agent"], check=False)

    def _gpg(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["gpg", "--batch", "--quiet", "--homedir", str(self.home), *args],
            capture_output=True,
            check=check,
            env={**os.environ, "LC_ALL": "C"},
        )


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "spec.json"
    path.write_text('{"spec": {}}\n')
    return path


@pytest.fixture
def expired_key(tmp_path: Path) -> Iterator[PastKey]:
    key = PastKey(tmp_path / "expired", "2d")  # expired in 2020
    yield key
    key.close()


@pytest.fixture
def lasting_key(tmp_path: Path) -> Iterator[PastKey]:
    key = PastKey(tmp_path / "lasting", "0")  # never expires
    yield key
    key.close()


def test_a_good_signature_by_a_key_expired_since_is_signed_as_gpg_and_spack_accept_it(
    expired_key: PastKey, document: Path
) -> None:
    """It was "bad" ("the signature cannot be read (signature valid)")."""
    signed = expired_key.sign(document)
    assert expired_key.gpg_accepts(signed)
    with Keyring() as keyring:
        (fingerprint,), problem = keyring.add(expired_key.public)
        check = keyring.verify(signed.read_bytes())
    assert problem == "" and (check.status, check.signer, check.problem) == ("signed", fingerprint, "")
    assert check.text == document.read_text()


def test_an_expired_signature_is_bad_and_said_so_as_gpg_refuses_it(lasting_key: PastKey, document: Path) -> None:
    signed = lasting_key.sign(document, "--default-sig-expire", "1d")
    assert not lasting_key.gpg_accepts(signed)
    with Keyring() as keyring:
        keyring.add(lasting_key.public)
        check = keyring.verify(signed.read_bytes())
    assert check.status == "bad" and check.problem.endswith(": signature expired") and check.text is None
