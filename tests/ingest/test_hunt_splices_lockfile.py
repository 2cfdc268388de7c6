"""Reading lockfiles and spec files (ingest/lockfile.py): the size bound both ways, a
node two parts of the file name, a lockfile with a ``spec`` key, what a lone spec file's
refusal says, and damaged UTF-16."""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path

import pytest

from cachedex.errors import IndexFormatError, TooBig
from cachedex.ingest import lockfile as lockfile_module
from cachedex.ingest.lockfile import LOCKFILE_BYTES, read_lockfile
from tests.helpers import MIRRORS
from tests.lockfiles import closure, demo_nodes, lockfile, roots_named, write_lockfile

UNSIGNED = MIRRORS / "v2_layout/unsigned/build_cache"


def _zlib_lockfile(tmp_path: Path) -> tuple[Path, str]:
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    return write_lockfile(tmp_path / "spack.lock", lockfile(closure(nodes, roots), roots)), roots[0]


def test_the_limit_is_256_mib() -> None:
    """An environment of tens of thousands of specs (~100 MB) fits, with room to spare."""
    assert LOCKFILE_BYTES == 256 * 1024 * 1024


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit is the largest size read, not the first refused."""
    path, key = _zlib_lockfile(tmp_path)
    monkeypatch.setattr(lockfile_module, "LOCKFILE_BYTES", path.stat().st_size)
    assert read_lockfile(path).roots[0].hash == key


def test_standard_input_past_the_limit_is_too_big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input is bounded as a file is: one byte more than the limit is refused."""
    path, _ = _zlib_lockfile(tmp_path)
    size = path.stat().st_size
    monkeypatch.setattr(lockfile_module, "LOCKFILE_BYTES", size - 1)
    monkeypatch.setattr("sys.stdin", type("In", (), {"buffer": io.BytesIO(path.read_bytes())})())
    with pytest.raises(TooBig, match=f"<stdin>: larger than {size - 1:,} bytes"):
        read_lockfile("-")


def test_a_spec_an_included_environment_also_holds_is_the_lockfile_s_own(tmp_path: Path) -> None:
    """A hash both the lockfile and an included environment hold is read from the
    lockfile's own ``concrete_specs`` (the first seen), not the included copy."""
    nodes = demo_nodes()
    (zlib,) = roots_named(nodes, "zlib-ng")
    own = closure(nodes, [zlib])
    other = json.loads(json.dumps(own))
    other[zlib]["version"] = "0.0.1"
    document = lockfile(own, [zlib], include_concrete={"../base": lockfile(other, [zlib])})
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", document))
    assert {spec.hash: spec.version for spec in read.specs}[zlib] == own[zlib]["version"] != "0.0.1"


def test_a_node_two_spec_files_share_is_read_from_the_first(tmp_path: Path) -> None:
    """Spec files one after another: a node two of them hold is read once, from the first."""
    text = next(UNSIGNED.glob("test-debian6-m1-gcc-10.2.1-libelf-*.spec.json")).read_text()
    first, second = json.loads(text), json.loads(text)
    second["spec"]["nodes"][0]["version"] = "0.0.1"
    (tmp_path / "specs.json").write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    read = read_lockfile(tmp_path / "specs.json")
    root = first["spec"]["nodes"][0]
    assert {spec.hash: spec.version for spec in read.specs}[root["hash"]] == root["version"] != "0.0.1"


def test_a_lockfile_with_a_spec_key_is_read_as_a_lockfile(tmp_path: Path) -> None:
    """A document with a lockfile's ``_meta`` is a lockfile, whatever else it holds."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    document = {**lockfile(closure(nodes, roots), roots), "spec": {"note": "not a spec file"}}
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", document))
    assert read.version == 6 and [root.hash for root in read.roots] == roots


def test_a_lone_spec_file_s_refusal_names_no_document_number(tmp_path: Path) -> None:
    """Only documents one after another are numbered ("spec 2: ..."): a lone spec file's
    problem is said plainly."""
    node = {"name": "zlib", "version": "1.3"}
    path = write_lockfile(tmp_path / "spec.json", {"spec": {"_meta": {"version": 5}, "nodes": [node]}})
    with pytest.raises(IndexFormatError) as caught:
        read_lockfile(path)
    assert str(caught.value) == f"{path}: node 1 ('zlib') has no hash"


def test_damaged_utf16_is_refused_by_name(tmp_path: Path) -> None:
    """A UTF-16 file (PowerShell 5's ``>``) with a lone surrogate cannot be decoded: it is
    refused as not valid UTF-16, not a crash."""
    path = tmp_path / "spec.json"
    path.write_bytes(codecs.BOM_UTF16_LE + '{"spec": '.encode("utf-16-le") + b"\x00\xd8")
    with pytest.raises(IndexFormatError, match="not valid UTF-16"):
        read_lockfile(path)


def test_a_deeply_nested_document_among_spec_files_is_refused_by_number(tmp_path: Path) -> None:
    """A document nested past what the decoder follows, after a spec file: refused as
    not a spec file (by its number), not a RecursionError."""
    text = next(UNSIGNED.glob("test-debian6-m1-gcc-10.2.1-libelf-*.spec.json")).read_text()
    deep = '{"spec": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (tmp_path / "specs.json").write_text(json.dumps(json.loads(text)) + "\n" + deep + "\n")
    with pytest.raises(IndexFormatError, match="document 2 is not a spec file"):
        read_lockfile(tmp_path / "specs.json")
