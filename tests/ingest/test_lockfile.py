"""Reading Spack lockfiles: the specs and roots of an environment, and what is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachedex.errors import IndexFormatError, SourceError, TooBig
from cachedex.ingest import lockfile as lockfile_module
from cachedex.ingest.lockfile import read_lockfile
from tests.helpers import MIRRORS
from tests.lockfiles import closure, demo_nodes, lockfile, roots_named, write_lockfile


def test_reads_every_spec_and_root_as_an_index_record(tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5", "py-numpy")
    specs = closure(nodes, roots)
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", lockfile(specs, roots)))
    assert read.version == 6 and [root.hash for root in read.roots] == roots
    assert [root.spec for root in read.roots] == ["hdf5", "py-numpy"]
    assert {spec.hash: (spec.name, spec.version) for spec in read.specs} == {
        key: (node["name"], node["version"]) for key, node in specs.items()
    }
    by_hash = {spec.hash: spec for spec in read.specs}
    for key, node in specs.items():
        assert {dep.hash for dep in by_hash[key].dependencies} == {e["hash"] for e in node.get("dependencies", [])}
        assert by_hash[key].external == ("external" in node)
    assert any(spec.external for spec in read.specs)  # the demo's compilers and glibc


def test_included_environments_add_their_roots_and_specs(tmp_path: Path) -> None:
    nodes = demo_nodes()
    (hdf5,) = roots_named(nodes, "hdf5")
    (numpy,) = roots_named(nodes, "py-numpy")
    own, included = closure(nodes, [hdf5]), closure(nodes, [numpy])
    document = lockfile(own, [hdf5], include_concrete={"../base": lockfile(included, [numpy])})
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", document))
    assert [root.hash for root in read.roots] == [hdf5, numpy]
    assert {spec.hash for spec in read.specs} == set(own) | set(included)


def test_included_environments_add_their_roots_in_their_order_each_once(tmp_path: Path) -> None:
    """Roots as Spack lists them: the environment's own, then each included one's, in the
    order they are included; a root two of them name is one root."""
    nodes = demo_nodes()
    zlib, hdf5, numpy = roots_named(nodes, "zlib-ng", "hdf5", "py-numpy")
    first = lockfile(closure(nodes, [numpy, zlib]), [numpy, zlib])
    second = lockfile(closure(nodes, [hdf5]), [hdf5])
    document = lockfile(closure(nodes, [zlib]), [zlib], include_concrete={"../b": first, "../a": second})
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", document))
    assert [root.hash for root in read.roots] == [zlib, numpy, hdf5]


def test_environments_an_included_one_includes_are_read_too(tmp_path: Path) -> None:
    """Spack copies an included environment's own includes into it, nested (its
    ``include_concrete``): their roots and specs are the environment's too."""
    nodes = demo_nodes()
    zlib, hdf5, numpy = roots_named(nodes, "zlib-ng", "hdf5", "py-numpy")
    own, middle, inner = closure(nodes, [zlib]), closure(nodes, [hdf5]), closure(nodes, [numpy])
    innermost = {"roots": [{"hash": numpy, "spec": "py-numpy"}], "concrete_specs": inner}
    included = {"roots": [{"hash": hdf5, "spec": "hdf5"}], "concrete_specs": middle}
    document = lockfile(
        own, [zlib], include_concrete={"../mid": {**included, "include_concrete": {"../in": innermost}}}
    )
    read = read_lockfile(write_lockfile(tmp_path / "spack.lock", document))
    assert [root.hash for root in read.roots] == [zlib, hdf5, numpy]
    assert {spec.hash for spec in read.specs} == set(own) | set(middle) | set(inner)
    # a hash named twice in a nested one is refused as in the lockfile's own specs
    (key,) = roots_named(inner, "py-numpy")
    escaped = f"\\u{ord(key[0]):04x}{key[1:]}"
    text = json.dumps(document).replace(f'"{key}": {{', f'"{escaped}": {{"name": "other"}}, "{key}": {{', 1)
    assert json.loads(text)["include_concrete"]["../mid"]["include_concrete"]["../in"]["concrete_specs"][key]
    path = tmp_path / "twice.lock"
    path.write_text(text)
    with pytest.raises(IndexFormatError, match=f"DAG hash {key} appears 2 times"):
        read_lockfile(path)


def test_standard_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    path = write_lockfile(tmp_path / "spack.lock", lockfile(closure(nodes, roots), roots))
    with path.open("rb") as stream:
        monkeypatch.setattr("sys.stdin", type("In", (), {"buffer": stream})())
        read = read_lockfile("-")
    assert read.path == "<stdin>" and [root.hash for root in read.roots] == roots


@pytest.mark.parametrize(
    ("encoding", "mark"), [("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")]
)
def test_a_byte_order_mark_as_windows_tools_write_it(tmp_path: Path, encoding: str, mark: bytes) -> None:
    """Notepad and PowerShell 5's ``Out-File -Encoding utf8`` start a file with a UTF-8
    byte order mark; PowerShell 5's ``spack spec --json hdf5 > spec.json`` writes UTF-16."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    text = json.dumps(lockfile(closure(nodes, roots), roots), indent=2).replace("\n", "\r\n")
    (tmp_path / "spack.lock").write_bytes(mark + text.encode(encoding))
    read = read_lockfile(tmp_path / "spack.lock")
    assert [root.hash for root in read.roots] == roots and len(read.specs) == len(closure(nodes, roots))
    signed = next((SPEC_FILES / "signed/build_cache").glob("test-debian6-core2-gcc-10.2.1-libdwarf-*.spec.json.sig"))
    (tmp_path / "spec.json.sig").write_bytes(mark + signed.read_text().encode(encoding))
    assert [s.name for s in read_lockfile(tmp_path / "spec.json.sig").specs] == ["libdwarf", "libelf"]


def _refused(tmp_path: Path, document: object) -> str:
    path = tmp_path / "spack.lock"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    with pytest.raises(IndexFormatError) as caught:
        read_lockfile(path)
    assert str(caught.value).startswith(f"{path}: ")
    return str(caught.value)


def test_what_is_not_a_lockfile_cachedex_reads_is_refused_by_name(tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    specs = closure(nodes, roots)
    good = lockfile(specs, roots)
    assert "not a Spack lockfile" in _refused(tmp_path, {**good, "_meta": {"file-type": "spack-database"}})
    assert "concretize it again" in _refused(tmp_path, lockfile(specs, roots, version=3))
    assert "upgrade cachedex" in _refused(tmp_path, lockfile(specs, roots, version=8))
    assert "not a valid Spack lockfile" in _refused(tmp_path, '{"_meta": {"file-type": "spack-lockfile"')
    meta = '{"_meta": {"file-type": "spack-lockfile", "lockfile-version": 6}, '
    deep = meta + '"concrete_specs": {"' + "c" * 32 + '": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    assert "nested too deeply" in _refused(tmp_path, deep)
    other = {**good, "roots": [{"hash": "a" * 32, "spec": "gone"}]}
    assert "root 'gone' names a spec the lockfile does not hold" in _refused(tmp_path, other)
    (key,) = roots
    swapped = {**good, "concrete_specs": {**specs, key: {**specs[key], "hash": "b" * 32}}}
    assert "holds the node of another hash" in _refused(tmp_path, swapped)
    assert "malformed DAG hash" in _refused(tmp_path, {**good, "concrete_specs": {**specs, "../x": specs[key]}})
    # a hash named twice (the second time with an escape): which node is the spec?
    escaped = f"\\u{ord(key[0]):04x}{key[1:]}"
    inner = json.dumps(specs)[1:-1] + f', "{escaped}": {{"name": "other"}}'
    twice = json.dumps({**good, "concrete_specs": "@"}).replace('"@"', "{" + inner + "}")
    assert json.loads(twice)["concrete_specs"][key] == {"name": "other"}  # (the decoders keep the last)
    assert f"DAG hash {key} appears 2 times in concrete_specs" in _refused(tmp_path, twice)
    # a dependency the lockfile lacks would leave the report without it, unsaid
    edge = specs[key]["dependencies"][0]
    lacking = {**good, "concrete_specs": {k: v for k, v in specs.items() if k != edge["hash"]}}
    said = f"'zlib-ng' /{key[:7]} depends on '{edge['name']}' /{edge['hash'][:7]}, which it does not hold"
    assert said in _refused(tmp_path, lacking)
    # said in one line, of the lockfile's own keys, and of what it lacks
    hostile = {**specs[key], "dependencies": [{**edge, "name": "evil\nname\x1b[31m", "hash": "q" * 32}]}
    told = _refused(tmp_path, {**good, "concrete_specs": {**specs, key: hostile}})
    assert "\n" not in told and "'evil\\nname\\x1b[31m' /qqqqqqq" in told
    assert "in concrete_specs" in _refused(tmp_path, {**good, "concrete_specs": {**specs, key.upper(): specs[key]}})
    unversioned = {**good, "_meta": {"file-type": "spack-lockfile"}}
    assert _refused(tmp_path, unversioned).endswith(
        "no lockfile version (cachedex reads 4 to 7); is it a file Spack wrote?"
    )
    # a spliced spec whose build spec the file lacks: Spack cannot read it either
    unbuilt = {
        **good,
        "concrete_specs": {**specs, key: {**specs[key], "build_spec": {"name": "zlib-ng", "hash": "z" * 32}}},
    }
    assert f"/{key[:7]} was spliced from /zzzzzzz, which the file does not hold" in _refused(tmp_path, unbuilt)
    # a build spec that is the spec itself (as a spec not spliced may name it): no splice
    itself = {**good, "concrete_specs": {**specs, key: {**specs[key], "build_spec": {"name": "zlib-ng", "hash": key}}}}
    assert read_lockfile(write_lockfile(tmp_path / "itself.lock", itself)).splices == {}


def test_files_that_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SourceError, match="not found"):
        read_lockfile(tmp_path / "nothing.lock")
    with pytest.raises(SourceError, match="is a folder"):
        read_lockfile(tmp_path)
    monkeypatch.setattr(lockfile_module, "LOCKFILE_BYTES", 100)
    (tmp_path / "big.lock").write_bytes(b" " * 101)
    with pytest.raises(TooBig, match="larger than 100 bytes"):
        read_lockfile(tmp_path / "big.lock")


SPEC_FILES = MIRRORS / "v2_layout"


def test_spacks_own_spec_files_read_as_one_root(tmp_path: Path) -> None:
    """What ``spack spec --json`` prints and what a build cache holds (spec formats 3 to
    5; clearsigned too), the root the first node."""
    v5 = next((SPEC_FILES / "unsigned/build_cache").glob("test-debian6-m1-gcc-10.2.1-libdwarf-*.spec.json"))
    nodes = json.loads(v5.read_text())["spec"]["nodes"]
    read = read_lockfile(v5)
    assert read.version == 5 and [(r.hash, r.spec) for r in read.roots] == [(nodes[0]["hash"], "libdwarf")]
    assert [(s.hash, s.name) for s in read.specs] == [(n["hash"], n["name"]) for n in nodes]
    signed = next((SPEC_FILES / "signed/build_cache").glob("test-debian6-core2-gcc-10.2.1-libdwarf-*.spec.json.sig"))
    read = read_lockfile(signed)
    assert (
        read.version == 4
        and read.roots[0].spec == "libdwarf"
        and [s.name for s in read.specs] == ["libdwarf", "libelf"]
    )
    legacy = next((MIRRORS / "legacy_layout/build_cache").glob("*.spec.json"))
    assert [s.name for s in read_lockfile(legacy).specs] == ["archive-files"]


def test_spec_files_cachedex_cannot_read_are_refused_by_name(tmp_path: Path) -> None:
    old = next((MIRRORS / "signed_json").glob("*.spec.json.sig"))
    with pytest.raises(IndexFormatError, match="spec format 2 predates the DAG hash"):
        read_lockfile(old)
    node = {"name": "zlib", "version": "1.3"}
    assert "node 1 ('zlib') has no hash" in _refused(tmp_path, {"spec": {"_meta": {"version": 5}, "nodes": [node]}})
    assert "without nodes" in _refused(tmp_path, {"spec": {"_meta": {"version": 5}, "nodes": []}})
    assert "newer than this cachedex reads" in _refused(tmp_path, {"spec": {"_meta": {"version": 7}, "nodes": [node]}})


def test_several_spec_files_one_after_another_each_a_root(tmp_path: Path) -> None:
    """``spack spec --json A B`` (and ``spack -e ENV spec --json``) prints one spec file
    per spec, a line each: each is a root, the nodes they share read once. It was refused
    as "trailing characters"."""
    folder = SPEC_FILES / "unsigned/build_cache"
    libdwarf = next(folder.glob("test-debian6-m1-gcc-10.2.1-libdwarf-*.spec.json"))
    libelf = next(folder.glob("test-debian6-m1-gcc-10.2.1-libelf-*.spec.json"))
    documents = [json.loads(path.read_text()) for path in (libdwarf, libelf)]
    (tmp_path / "specs.json").write_text("".join(json.dumps(d, separators=(",", ":")) + "\n" for d in documents))
    read = read_lockfile(tmp_path / "specs.json")
    firsts = [d["spec"]["nodes"][0] for d in documents]
    assert [(r.hash, r.spec) for r in read.roots] == [(n["hash"], n["name"]) for n in firsts]
    every = {n["hash"]: n["name"] for d in documents for n in d["spec"]["nodes"]}
    assert sorted((s.hash, s.name) for s in read.specs) == sorted(every.items()) and read.version == 5
    # pretty-printed (jq), a brace in a string, the same spec twice: still each root once
    text = json.dumps(documents[1], indent=2)
    documents[0]["spec"]["nodes"][0]["parameters"]["note"] = "} {"
    documents[0]["spec"]["nodes"][0]["parameters"]["cflags"] = ['-DV=\\"1\\" -DW="{"']  # (escapes inside a string)
    (tmp_path / "pretty.json").write_text(json.dumps(documents[0], indent=2) + "\n" + text + "\n" + text)
    read = read_lockfile(tmp_path / "pretty.json")
    assert len(read.roots) == 2 and read.roots[1].spec == "libelf"
    # a lockfile among them, or something between them, is still refused by name
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    lock = json.dumps(lockfile(closure(nodes, roots), roots))
    assert "document 2 is not a spec file" in _refused(tmp_path, json.dumps(documents[1]) + "\n" + lock)
    assert "trailing characters" in _refused(tmp_path, json.dumps(documents[1]) + ",\n" + json.dumps(documents[1]))
    assert "trailing characters" in _refused(tmp_path, 2 * (json.dumps(documents[1]) + "\n") + "garbage")
