"""OpenPGP verification (ingest/signatures.py) with Debian's gpg: Spack's signed fixture,
and keys made at test time (:class:`TestKey`, shared with test_verify.py)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import gnupg  # type: ignore[import-untyped]
import pytest

from cachedex.ingest.manifests import read_clearsigned
from cachedex.ingest.signatures import Keyring, is_clearsigned

SIGNED = "v2_layout/signed/build_cache"
CBAB = "CBAB2C1032C6FF5078049EC0FA61D50C12CAD37E"
A98A = "A98A04B882E19D85FD36EE069565D80B055C92FF"
E89D = "E89D4971F0097B1E7A3EB57371B484802E78D7CD"

#: The fixture's spec files: (file stem, what gpg says, who signed it). Three verify; three
#: do not: shared/fixtures took their text from one commit of spack/spack and their
#: signature from another (fixtures README: "files ... from different commits"). gpg on
#: the command line agrees, and Spack's newer copy of gcc-runtime (signed by CBAB...)
#: verifies over the same text.
FIXTURE = {
    "test-debian6-core2-gcc-10.2.1-libdwarf-20130729-sk2gqqz4n5njmvktycnd25wq25jxiqkr": ("bad", "71B484802E78D7CD"),
    "test-debian6-core2-gcc-10.2.1-libelf-0.8.13-rqh2vuf6fqwkmipzgi2wjx352mq7y7ez": ("bad", "71B484802E78D7CD"),
    "test-debian6-m1-gcc-10.2.1-libdwarf-20130729-u5uz3dcch5if4eve4sef67o2rf2lbfgh": ("signed", A98A),
    "test-debian6-m1-gcc-10.2.1-libelf-0.8.13-jr3yipyxyjulcdvckwwwjrrumis7glpa": ("signed", CBAB),
    "test-debian6-m1-none-none-compiler-wrapper-1.0-qeehcxyvluwnihsc2qxstmpomtxo3lrc": ("signed", CBAB),
    "test-debian6-m1-none-none-gcc-runtime-10.2.1-izgzpzeljwairalfjm3k6fntbb64nt6n": ("bad", "9565D80B055C92FF"),
}


class TestKey:
    """An ed25519 signing key made now, in a GnuPG home of its own. Signing needs
    gpg-agent: :meth:`close` stops the one this home started."""

    __test__ = False  # not a test class

    def __init__(self, home: Path, name: str = "cachedex test") -> None:
        home.mkdir(parents=True, exist_ok=True)
        os.chmod(home, 0o700)
        self.home = home
        self.gpg = gnupg.GPG(gnupghome=str(home))
        spec = self.gpg.gen_key_input(
            key_type="EDDSA",
            key_curve="ed25519",
            key_usage="sign",
            name_real=name,
            name_email="test@cachedex.invalid",
            expire_date=0,
            no_protection=True,
        )
        made = self.gpg.gen_key(spec)
        assert made.fingerprint, made.stderr
        self.fingerprint: str = made.fingerprint
        self.public: str = self.gpg.export_keys(self.fingerprint)

    def sign(self, text: str) -> str:
        """``text`` clearsigned, as ``gpg --clearsign`` (Spack's ``sign_file``) writes it."""
        signed = self.gpg.sign(text, keyid=self.fingerprint, clearsign=True, extra_args=["--digest-algo", "SHA512"])
        assert signed.status == "signature created", signed.stderr
        return str(signed)

    def close(self) -> None:
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "gpg-agent"], check=False)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestKey, TestKey]]:
    """Two keys: ``a`` signs, ``b`` is another key."""
    folder = tmp_path_factory.mktemp("gpg")
    a, b = TestKey(folder / "a", "key a"), TestKey(folder / "b", "key b")
    yield a, b
    a.close()
    b.close()


def test_the_fixture_signatures_as_gpg_judges_them(mirrors: Path) -> None:
    folder = mirrors / SIGNED
    with Keyring() as keyring:
        for fingerprint in (CBAB, A98A, E89D):
            found, problem = keyring.add((folder / "_pgp" / f"{fingerprint}.pub").read_bytes(), fingerprint)
            assert (found, problem) == ([fingerprint], "")
        assert keyring.fingerprints == [CBAB, A98A, E89D]
        for stem, (status, signer) in FIXTURE.items():
            data = (folder / f"{stem}.spec.json.sig").read_bytes()
            check = keyring.verify(data)
            assert (check.status, check.signer) == (status, signer), stem
            if status == "signed":
                assert check.text is not None
                assert check.text.rstrip("\n") == read_clearsigned(data.decode())
            else:
                assert check.text is None and "altered" in check.problem


def test_only_the_keys_given_count(mirrors: Path) -> None:
    folder = mirrors / SIGNED
    with Keyring() as keyring:
        keyring.add((folder / "_pgp" / f"{CBAB}.pub").read_bytes())
        data = folder / "test-debian6-m1-gcc-10.2.1-libdwarf-20130729-u5uz3dcch5if4eve4sef67o2rf2lbfgh.spec.json.sig"
        check = keyring.verify(data.read_bytes())
    assert (check.status, check.signer) == ("unknown-key", "9565D80B055C92FF")


def test_signed_altered_other_key_mangled_and_unsigned(keys: tuple[TestKey, TestKey]) -> None:
    a, b = keys
    text = '{\n"version":3,\n"data":[]\n}'
    signed = a.sign(text)
    with Keyring() as keyring:
        assert keyring.add(a.public.encode(), a.fingerprint) == ([a.fingerprint], "")
        good = keyring.verify(signed.encode())
        assert (good.status, good.signer) == ("signed", a.fingerprint)
        assert good.text is not None and good.text.rstrip("\n") == text
        assert keyring.verify(signed.replace('"data":[]', '"data":[1]').encode()).status == "bad"
        other = keyring.verify(b.sign(text).encode())
        assert (other.status, other.signer) == ("unknown-key", b.fingerprint[-16:])
        lines = signed.splitlines()
        at = lines.index("-----BEGIN PGP SIGNATURE-----") + 2
        lines[at] = lines[at][:10] + ("A" if lines[at][10] != "A" else "B") + lines[at][11:]
        mangled = keyring.verify("\n".join(lines).encode())
        assert mangled.status == "bad" and mangled.text is None
        trailing = keyring.verify((signed + '{"version":3,"data":[{"evil":1}]}\n').encode())
        assert trailing.status == "bad" and "outside its signature" in trailing.problem
        assert keyring.verify(text.encode()).status == "unsigned"
        assert keyring.id  # a digest of the keys


def test_what_is_not_a_public_key_is_refused(keys: tuple[TestKey, TestKey]) -> None:
    a, b = keys
    with Keyring() as keyring:
        assert keyring.add(b"hello", None) == ([], "not an OpenPGP public key (gpg imported nothing)")
        secret = a.gpg.export_keys(a.fingerprint, secret=True, expect_passphrase=False)
        found, problem = keyring.add(secret.encode(), a.fingerprint)
        assert found == [] and "secret key" in problem
        found, problem = keyring.add(b.public.encode(), a.fingerprint)
        assert found == [b.fingerprint] and f"not {a.fingerprint}" in problem
        assert keyring.fingerprints == [b.fingerprint]


def test_a_keyring_starts_no_agent_and_leaves_nothing(mirrors: Path) -> None:
    keyring = Keyring()
    home = keyring._home
    keyring.add((mirrors / SIGNED / "_pgp" / f"{CBAB}.pub").read_bytes())
    keyring.verify((mirrors / SIGNED / f"{next(iter(FIXTURE))}.spec.json.sig").read_bytes())
    agents = [
        p
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and home.encode() in _cmdline(p) and b"gpg-agent" in _cmdline(p)
    ]
    keyring.close()
    assert agents == [] and not Path(home).exists()


def _cmdline(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:
        return b""


def test_is_clearsigned() -> None:
    assert is_clearsigned(b"\n  -----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n")
    assert not is_clearsigned(b'{"version": 3}')
