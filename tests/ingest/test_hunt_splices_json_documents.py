"""Several JSON documents one after another (ingest/json_documents.py): where each ends,
as Windows and one-line outputs separate them, and a lone document left alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachedex.errors import IndexFormatError
from cachedex.ingest.json_documents import json_objects
from cachedex.ingest.lockfile import read_lockfile
from tests.helpers import MIRRORS

UNSIGNED = MIRRORS / "v2_layout/unsigned/build_cache"


@pytest.mark.parametrize("between", [b"\r\n", b" ", b"", b"\n\t\n"])
def test_objects_apart_by_any_whitespace_or_none_are_each_found(between: bytes) -> None:
    """``spack spec --json A B`` on Windows ends each line with CRLF; one-line tools put a
    space between, or nothing: each object is found all the same."""
    first, second = b'{"spec": {"a": [1, {"b": "}"}]}}', b'{"spec": {}}'
    assert json_objects(first + between + second + between) == [first, second]


def test_spec_files_a_crlf_apart_are_each_a_root(tmp_path: Path) -> None:
    """Two spec files a line each, written with Windows line ends: each is a root."""
    paths = [next(UNSIGNED.glob(f"test-debian6-m1-gcc-10.2.1-{name}-*.spec.json")) for name in ("libdwarf", "libelf")]
    documents = [json.loads(path.read_text()) for path in paths]
    text = "".join(json.dumps(d, separators=(",", ":")) + "\r\n" for d in documents)
    (tmp_path / "specs.json").write_bytes(text.encode())
    read = read_lockfile(tmp_path / "specs.json")
    assert [r.spec for r in read.roots] == ["libdwarf", "libelf"]


def test_one_object_alone_is_not_several(tmp_path: Path) -> None:
    """One object (even one whose string holds ``} {``) is not several documents: a
    damaged one is refused as the lockfile or spec file it is not, not as a spec file."""
    assert json_objects(b'{"note": "} {"}') is None
    assert json_objects(b'{"note": "} {"}\n') is None
    (tmp_path / "spack.lock").write_text('{"note": "} {", "spec": }')
    with pytest.raises(IndexFormatError, match="not a valid Spack lockfile or spec file"):
        read_lockfile(tmp_path / "spack.lock")


def test_what_is_not_objects_one_after_another_is_none() -> None:
    """Something other than whitespace before, between or after the objects, an array at
    the top, or an object cut short: not several objects."""
    assert json_objects(b'x{"a": 1}\n{"b": 2}') is None
    assert json_objects(b'{"a": 1} 5 {"b": 2}') is None
    assert json_objects(b'[{"a": 1}]\n{"b": 2}\n{"c": 3}') is None
    assert json_objects(b'{"a": 1}\n{"b": 2}\n{"c": [') is None
    assert json_objects(b'{"a": 1}\n{"b": 2}]') is None
