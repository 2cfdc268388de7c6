"""Reading lockfiles and spec files (ingest/lockfile.py): edges the other tests left open
(the newest formats read, nested includes in order, a FIFO, what is refused and how)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from cachedex.errors import IndexFormatError
from cachedex.ingest.lockfile import Lockfile, read_lockfile
from tests.helpers import MIRRORS
from tests.lockfiles import closure, demo_nodes, lockfile, roots_named, write_lockfile

UNSIGNED = MIRRORS / "v2_layout/unsigned/build_cache"
SIGNED = MIRRORS / "v2_layout/signed/build_cache"


def _refused(path: Path) -> str:
    """The one-line message refusing ``path``, checked to name it."""
    with pytest.raises(IndexFormatError) as caught:
        read_lockfile(path)
    told = str(caught.value)
    assert told.startswith(f"{path}: ") and "\n" not in told
    return told


@pytest.mark.parametrize("version", [4, 5, 6, 7])
def test_every_lockfile_version_from_spack_0_18_on_is_read(tmp_path: Path, version: int) -> None:
    """Versions 4 to 7 key specs by the DAG hash build caches list: the newest included."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    specs = closure(nodes, roots)
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", lockfile(specs, roots, version=version)))
    assert read.version == version and {spec.hash for spec in read.specs} == set(specs)


def test_the_newest_spec_format_is_read_and_the_next_refused(tmp_path: Path) -> None:
    # Spack's v5 spec file, its format number raised: 6 is the newest cachedex reads.
    document = json.loads(next(UNSIGNED.glob("test-debian6-m1-gcc-10.2.1-libelf-*.spec.json")).read_text())
    document["spec"]["_meta"]["version"] = 6
    read = read_lockfile(write_lockfile(tmp_path / "six.json", document))
    assert read.version == 6 and read.roots[0].spec == "libelf"
    document["spec"]["_meta"]["version"] = 7
    assert "spec format 7 is newer than this cachedex reads (3 to 6)" in _refused(
        write_lockfile(tmp_path / "seven.json", document)
    )


@pytest.mark.parametrize("content", [b"", b" \r\n\t\n"])
def test_an_empty_file_is_refused_as_empty(tmp_path: Path, content: bytes) -> None:
    """Not the decoder's "Input data was truncated", which does not say what is wrong."""
    (tmp_path / "spack.lock").write_bytes(content)
    assert _refused(tmp_path / "spack.lock").endswith("empty: expected a Spack lockfile (spack.lock) or a spec file")


def test_a_clearsigned_file_cut_before_its_signature_is_refused_by_name(tmp_path: Path) -> None:
    # A real signed spec file truncated in transfer: no "BEGIN PGP SIGNATURE" line left.
    signed = next(SIGNED.glob("test-debian6-m1-gcc-10.2.1-libelf-*.spec.json.sig")).read_text()
    cut = signed[: signed.index("-----BEGIN PGP SIGNATURE-----")]
    (tmp_path / "spec.json.sig").write_text(cut)
    assert "not a valid clearsigned spec file" in _refused(tmp_path / "spec.json.sig")


def test_json_that_is_neither_a_lockfile_nor_a_spec_file_is_refused_as_not_a_lockfile(tmp_path: Path) -> None:
    """An object without ``_meta`` and without ``spec`` (a lockfile whose header was
    lost, some other tool's JSON) is told to be no lockfile, not a broken spec file."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    headless = {k: v for k, v in lockfile(closure(nodes, roots), roots).items() if k != "_meta"}
    told = _refused(write_lockfile(tmp_path / "spack.lock", headless))
    assert "not a Spack lockfile" in told and "spec file" not in told


def test_nested_includes_are_read_depth_first_in_their_order(tmp_path: Path) -> None:
    """An included environment that includes two others: its roots, then the first
    one's, then the second's (as Spack lists them), not the second's first."""
    nodes = demo_nodes()
    zlib, hdf5, numpy, own = roots_named(nodes, "zlib-ng", "hdf5", "py-numpy", "cmake")

    def env(root: str, **include: object) -> dict[str, object]:
        document = lockfile(closure(nodes, [root]), [root])
        del document["_meta"]
        return {**document, "include_concrete": include} if include else document

    middle = env(zlib, **{"../first": env(hdf5), "../second": env(numpy)})
    document = lockfile(closure(nodes, [own]), [own], include_concrete={"../mid": middle})
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", document))
    assert [root.hash for root in read.roots] == [own, zlib, hdf5, numpy]


def test_a_lockfile_among_spec_files_is_refused_even_with_a_spec_key(tmp_path: Path) -> None:
    """Only spec files are read one after another: a document with a lockfile's
    ``_meta`` is not one, whatever else it holds."""
    document = json.loads(next(UNSIGNED.glob("test-debian6-m1-gcc-10.2.1-libelf-*.spec.json")).read_text())
    hybrid = {"_meta": {"file-type": "spack-lockfile", "lockfile-version": 6}, **document}
    (tmp_path / "specs.json").write_text(json.dumps(document) + "\n" + json.dumps(hybrid) + "\n")
    assert "document 2 is not a spec file" in _refused(tmp_path / "specs.json")


def test_spec_files_of_several_formats_report_the_first_one_s(tmp_path: Path) -> None:
    v4 = next(UNSIGNED.glob("test-debian6-core2-gcc-10.2.1-libelf-*.spec.json")).read_text()
    v5 = next(UNSIGNED.glob("test-debian6-m1-gcc-10.2.1-libelf-*.spec.json")).read_text()
    assert json.loads(v4)["spec"]["_meta"]["version"] == 4 and json.loads(v5)["spec"]["_meta"]["version"] == 5
    (tmp_path / "specs.json").write_text(v4.strip() + "\n" + v5.strip() + "\n")
    read = read_lockfile(tmp_path / "specs.json")
    assert read.version == 4 and [root.spec for root in read.roots] == ["libelf", "libelf"]


def test_a_fifo_named_by_mistake_is_not_waited_on(tmp_path: Path) -> None:
    """A FIFO no one writes to must not block the open forever: it reads as empty."""
    fifo = tmp_path / "spack.lock"
    os.mkfifo(fifo)
    outcome: list[BaseException | Lockfile] = []

    def read() -> None:
        try:
            outcome.append(read_lockfile(fifo))
        except BaseException as exc:  # (handed to the test's thread)
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # blocked in open: a writer's open and close free it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=10)
        pytest.fail("reading a FIFO with no writer blocked")
    (error,) = outcome
    assert isinstance(error, IndexFormatError) and "empty" in str(error) and str(error).startswith(str(fifo))
