"""Checking a blob against its manifest record while it is decoded."""

from __future__ import annotations

import hashlib
import threading

import pytest

from cachedex.errors import ChecksumError, IndexFormatError
from cachedex.ingest import manifests
from cachedex.ingest.manifests import BlobRecord, verified_while

_DATA = b"x" * (2 << 20)


def _record(data: bytes) -> BlobRecord:
    return BlobRecord(
        contentLength=len(data),
        mediaType="application/vnd.spack.db.v8+json",
        compression="none",
        checksumAlgorithm="sha256",
        checksum=hashlib.sha256(data).hexdigest(),
    )


class _SlowHashlib:
    """A hashlib whose hashing waits (5 s at most) until the work has begun."""

    def __init__(self) -> None:
        self.work_began = threading.Event()
        self.waited_for_work: bool | None = None

    def new(self, name: str, data: bytes) -> object:
        self.waited_for_work = self.work_began.wait(5)
        return hashlib.new(name, data)


def test_a_big_blob_is_hashed_while_its_work_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = _SlowHashlib()
    monkeypatch.setattr(manifests, "hashlib", slow)

    def work() -> str:
        slow.work_began.set()
        return "decoded"

    assert verified_while(_DATA, _record(_DATA), "u", work) == "decoded"
    assert slow.waited_for_work is True  # hashed first, it would have waited 5 s in vain


@pytest.mark.parametrize("size", [100, 2 << 20])
def test_a_wrong_checksum_wins_over_the_work_s_result_and_its_error(size: int) -> None:
    data = b"y" * size
    record = _record(b"z" * size)
    with pytest.raises(ChecksumError, match="checksum mismatch"):
        verified_while(data, record, "u", lambda: "decoded")

    def failing() -> str:
        raise ValueError("not JSON")

    with pytest.raises(ChecksumError, match="checksum mismatch") as caught:
        verified_while(data, record, "u", failing)
    if size > 100:  # beside the hash, the work ran and its error is kept as the context
        assert isinstance(caught.value.__context__, ValueError)
    with pytest.raises(ValueError, match="not JSON"):
        verified_while(data, _record(data), "u", failing)


@pytest.mark.parametrize("version", ['" 3"', '"\\u0663"', '"3 "', '"+3"'])
def test_the_two_readers_of_a_manifest_refuse_the_same_versions(version: str) -> None:
    """int() reads " 3" and the Arabic-Indic "٣" as 3; manifest_size never did, and
    Spack writes neither: both readers refuse them."""
    data = f'{{"version": {version}, "data": []}}'.encode()
    with pytest.raises(IndexFormatError, match="is not a number|is not 3"):
        manifests.decode_manifest(data, "u")
    with pytest.raises(IndexFormatError, match="is not 3"):
        manifests.manifest_size("u", data)
    assert manifests.decode_manifest(b'{"version": "3", "data": []}', "u").version == "3"
