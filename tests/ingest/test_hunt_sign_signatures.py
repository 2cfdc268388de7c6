"""A mirror's keys in a Keyring (ingest/signatures.py), with Spack's signed fixture: what
the keyring says of the keys it was given, as a mirror's key index names them."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cachedex.ingest.signatures import Keyring
from tests.ingest.test_signatures import TestKey

SIGNED = "v2_layout/signed/build_cache"
KEYS = f"{SIGNED}/_pgp"
CBAB = "CBAB2C1032C6FF5078049EC0FA61D50C12CAD37E"
A98A = "A98A04B882E19D85FD36EE069565D80B055C92FF"


def _key(mirrors: Path, fingerprint: str) -> bytes:
    return (mirrors / KEYS / f"{fingerprint}.pub").read_bytes()


def test_a_key_index_may_name_the_key_in_lower_case(mirrors: Path) -> None:
    """Fingerprints are hex: a key index spelling one in lower case names the same key."""
    with Keyring() as keyring:
        assert keyring.add(_key(mirrors, CBAB), CBAB.lower()) == ([CBAB], "")


def test_a_key_published_twice_is_one_key(mirrors: Path) -> None:
    # (a mirror's key index and its _pgp folder may both hand over the same key)
    with Keyring() as keyring:
        keyring.add(_key(mirrors, CBAB))
        keyring.add(_key(mirrors, A98A))
        keyring.add(_key(mirrors, CBAB))
        assert keyring.fingerprints == [CBAB, A98A]


def test_keyrings_share_an_id_only_when_given_the_same_keys(mirrors: Path) -> None:
    """The id lets verifications share results: keyrings of other keys must not."""
    with Keyring() as empty, Keyring() as one, Keyring() as same, Keyring() as other:
        one.add(_key(mirrors, CBAB))
        same.add(_key(mirrors, CBAB))
        other.add(_key(mirrors, A98A))
        assert one.id == same.id
        assert len({empty.id, one.id, other.id}) == 3


def test_a_signed_file_after_blank_lines_still_verifies(mirrors: Path) -> None:
    """gpg skips what comes before the armor header; the check that nothing lies outside
    the signed text must too (a blank line above is not text outside the signature)."""
    signed = (
        mirrors / SIGNED / "test-debian6-m1-gcc-10.2.1-libelf-0.8.13-jr3yipyxyjulcdvckwwwjrrumis7glpa.spec.json.sig"
    )
    with Keyring() as keyring:
        keyring.add(_key(mirrors, CBAB))
        assert keyring.verify(signed.read_bytes()).status == "signed"  # (as it is)
        check = keyring.verify(b"\n\n" + signed.read_bytes())
        assert (check.status, check.signer, check.problem) == ("signed", CBAB, "")


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestKey]:
    made = TestKey(tmp_path_factory.mktemp("gpg") / "k")
    yield made
    made.close()


def test_dash_escaped_lines_are_not_text_outside_the_signature(key: TestKey) -> None:
    """gpg --clearsign writes a line starting with "-" as "- -..." (RFC 4880 7.1): the
    signed text is the line unescaped, and the file verifies."""
    text = '{"data": [\n-1,\n--2\n]}'
    signed = key.sign(text)
    assert "\n- -1,\n" in signed  # (escaped in the file)
    with Keyring() as keyring:
        keyring.add(key.public.encode())
        check = keyring.verify(signed.encode())
    assert (check.status, check.problem) == ("signed", "")
    assert check.text is not None and check.text.rstrip("\n") == text


def test_trailing_whitespace_is_not_text_outside_the_signature(key: TestKey) -> None:
    # OpenPGP signs cleartext without trailing whitespace: a line's spaces are not signed.
    signed = key.sign('{\n"version": 3,   \n"data": []\t\n}\n\n')
    with Keyring() as keyring:
        keyring.add(key.public.encode())
        check = keyring.verify(signed.encode())
    assert (check.status, check.problem) == ("signed", "")


def test_a_signature_by_a_signing_subkey_names_the_primary_key(tmp_path: Path) -> None:
    """Keys made with a certify-only primary sign with a subkey: the signer is the key a
    mirror publishes (its primary fingerprint), not the subkey's."""
    home = tmp_path / "gpg"
    home.mkdir(mode=0o700)

    def gpg(*args: str) -> str:
        command = ["gpg", "--homedir", str(home), "--batch", "--passphrase", "", "--pinentry-mode", "loopback"]
        return subprocess.run([*command, *args], check=True, capture_output=True, text=True).stdout

    try:
        gpg("--quick-gen-key", "subkey signer <s@cachedex.invalid>", "ed25519", "cert", "never")
        primary = gpg("--list-keys", "--with-colons").split("fpr:::::::::")[1].split(":")[0]
        gpg("--quick-add-key", primary, "ed25519", "sign", "never")
        signed = gpg("--clearsign", "--output", "-", _written(tmp_path / "text", '{"version": 3}\n'))
        public = gpg("--armor", "--export", primary)
    finally:
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], check=False)
    with Keyring() as keyring:
        assert keyring.add(public.encode(), primary) == ([primary], "")
        check = keyring.verify(signed.encode())
    assert (check.status, check.signer) == ("signed", primary)


def _written(path: Path, text: str) -> str:
    """The path of a file holding ``text`` (what gpg is to sign)."""
    path.write_text(text)
    return str(path)
