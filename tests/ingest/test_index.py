"""Decoding index.json into records: real Spack indexes, display strings, bad input."""

from __future__ import annotations

import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cachedex.errors import IndexFormatError
from cachedex.ingest.index import decode_index
from cachedex.ingest.records import build_records, format_variant
from cachedex.values import deptypes_from_mask, short_repr


def _records(path: Path) -> dict[str, object]:
    index = decode_index(path.read_bytes(), url=str(path))
    return {r.hash: r for r in build_records(index)}


def test_v2_unsigned_index_matches_the_format_doc_worked_example(mirrors: Path) -> None:
    index = decode_index((mirrors / "v2_layout/unsigned/build_cache/index.json").read_bytes(), url="u")
    assert index.db_version == 8
    assert len(index.records) == 7
    assert len(index.listed_hashes()) == 6  # the external gcc has no binary
    records = {r.hash: r for r in build_records(index)}

    libdwarf = records["u5uz3dcch5if4eve4sef67o2rf2lbfgh"]
    assert (libdwarf.name, libdwarf.version, libdwarf.platform, libdwarf.os, libdwarf.target) == (
        "libdwarf",
        "20130729",
        "test",
        "debian6",
        "m1",
    )
    assert libdwarf.compiler == "gcc@10.2.1"  # the c/cxx provider edge, looked up by hash
    assert libdwarf.variants == ("build_system=generic",)
    # compiler-wrapper has no c/cxx/fortran provider
    assert records["qeehcxyvluwnihsc2qxstmpomtxo3lrc"].compiler == "none"
    # spec-v4 origin: annotations.compiler "gcc@=10.2.1", object target
    libelf = records["rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"]
    assert (libelf.compiler, libelf.target) == ("gcc@10.2.1", "core2")
    # the external compiler: a string target, no binary
    gcc = records["vd7v4ssgnoqdplgxyig3orum67n4vmhq"]
    assert (gcc.target, gcc.external, gcc.in_buildcache) == ("aarch64", True, False)
    assert gcc.variants == ("build_system=generic", "languages:='c,c++,fortran'")


def test_dependency_edges_keep_deptypes_and_virtuals(mirrors: Path) -> None:
    records = _records(mirrors / "v2_layout/unsigned/build_cache/index.json")
    edges = {d.name: d for d in records["u5uz3dcch5if4eve4sef67o2rf2lbfgh"].dependencies}  # type: ignore[attr-defined]
    assert set(edges) == {"compiler-wrapper", "gcc", "gcc-runtime", "libelf"}
    assert edges["gcc"].virtuals == "c,cxx"
    assert deptypes_from_mask(edges["gcc"].deptypes) == ("build",)
    assert edges["gcc"].hash == "vd7v4ssgnoqdplgxyig3orum67n4vmhq"


def test_signed_and_unsigned_indexes_give_the_same_records(mirrors: Path) -> None:
    unsigned = _records(mirrors / "v2_layout/unsigned/build_cache/index.json")
    signed = _records(mirrors / "v2_layout/signed/build_cache/index.json")
    assert unsigned == signed


def test_legacy_database_6_with_compiler_key(mirrors: Path) -> None:
    index = decode_index((mirrors / "legacy_yaml/build_cache/index.json").read_bytes(), url="l")
    assert index.db_version == 6
    (zlib,) = build_records(index)
    assert zlib.hash == "t5mczux3tfqpxwmg7egp7axy2jvyulqk"  # the installs key; the node has only _hash
    assert (zlib.name, zlib.version, zlib.compiler, zlib.target) == ("zlib", "1.2.11", "gcc@4.5.0", "core2")
    assert zlib.variants == ("+optimize", "+pic", "+shared")  # flags are not variants


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("shared", True, "+shared"),
        ("debug", False, "~debug"),
        ("build_system", "cmake", "build_system=cmake"),
        ("fabrics", ["none"], "fabrics:=none"),
        ("cuda_arch", ["90", "80"], "cuda_arch:=80,90"),  # values sorted
        ("languages", ["c", "c++"], "languages:='c,c++'"),  # '+' needs quotes
        ("flags", "it's", 'flags="it\'s"'),  # a single quote inside: JSON string quoting
        ("patches", ["a" * 64, "b" * 64], "patches:=aaaaaaa,bbbbbbb"),  # 7-char sha256 prefixes
        ("version_range", "1.2:1.4", "version_range='1.2:1.4'"),
        ("path", "/opt/x_y-1.2", "path=/opt/x_y-1.2"),
        ("mode", "true", "+mode"),  # the text of a boolean is one to Spack too
        ("opt", "False", "~opt"),
        # Values no Spack writes, from a broken or hostile index: shown as JSON, not Python
        ("empty", None, "empty=null"),
        ("nested", {"a": 1}, """nested='{"a":1}'"""),
        ("mixed", ["x", None, True, 2], "mixed:=2,null,true,x"),
        ("level", 3, "level=3"),
    ],
)
def test_format_variant(name: str, value: object, shown: str) -> None:
    assert format_variant(name, value) == shown


def _node(name: str, dag_hash: str, **extra: object) -> dict[str, object]:
    node: dict[str, object] = {
        "name": name,
        "version": "1.0",
        "arch": {"platform": "linux", "platform_os": "rhel8", "target": "x86_64"},
        "parameters": {"cflags": [], "ldlibs": []},
        "hash": dag_hash,
    }
    node.update(extra)
    return node


def _index(*nodes: dict[str, object], version: object = "8", listed: bool = True) -> bytes:
    installs = {n["hash"]: {"spec": n, "ref_count": 0, "in_buildcache": listed} for n in nodes}
    return json.dumps({"database": {"version": version, "installs": installs}}).encode()


H = {c: c * 32 for c in "abcdefgh"}


def test_compiler_prefers_the_c_provider_over_fortran() -> None:
    llvm = _node("llvm", H["a"], version="18.1.8")
    gcc = _node("gcc", H["b"], version="13.2.0")
    app = _node(
        "app",
        H["c"],
        dependencies=[
            {"name": "gcc", "hash": H["b"], "parameters": {"deptypes": ["build"], "virtuals": ["fortran"]}},
            {"name": "llvm", "hash": H["a"], "parameters": {"deptypes": ["build"], "virtuals": ["c", "cxx"]}},
        ],
    )
    records = {r.hash: r for r in build_records(decode_index(_index(llvm, gcc, app), url="x"))}
    assert records[H["c"]].compiler == "llvm@18.1.8"


def test_object_target_and_typed_edges_of_spec_v2() -> None:
    dep = _node("zlib", H["a"])
    app = _node(
        "app",
        H["b"],
        arch={
            "platform": "linux",
            "platform_os": "ubuntu22.04",
            "target": {"name": "zen4", "vendor": "AuthenticAMD", "features": [], "generation": 0, "parents": []},
        },
        dependencies=[{"name": "zlib", "hash": H["a"], "type": ["build", "link"]}],
    )
    (record,) = build_records(decode_index(_index(dep, app, version="6"), url="x"), [H["b"]])
    assert record.target == "zen4"
    assert deptypes_from_mask(record.dependencies[0].deptypes) == ("build", "link")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"database": {"version": "8", "installs": {', "not a valid Spack index"),  # truncated
        (b"this is not json", "not a valid Spack index"),
        (b"[1, 2, 3]", "not a valid Spack index"),
        (_index(_node("a", H["a"]), version="10"), "Database version 10 is newer"),
        (_index(_node("a", H["a"]), version="5"), "Database version 5 is too old"),
        (_index(_node("a", H["a"]), version="0.9.3"), "unsupported Database version '0.9.3'"),
        (_index(_node("a", "NOT-A-HASH")), "malformed DAG hash 'NOT-A-HASH'"),
        # int() reads these as 8; Spack writes none of them
        (_index(_node("a", H["a"]), version=" 8"), "unsupported Database version ' 8'"),
        (_index(_node("a", H["a"]), version="\u0668"), "unsupported Database version"),
        # a hostile version is quoted short
        (_index(_node("a", H["a"]), version="9" * 5000), "unsupported Database version '99999"),
    ],
)
def test_bad_indexes_are_rejected_with_the_url(data: bytes, message: str) -> None:
    with pytest.raises(IndexFormatError) as info:
        decode_index(data, url="https://mirror.example/build_cache/index.json")
    assert message in str(info.value) and len(str(info.value)) < 300
    assert str(info.value).startswith("https://mirror.example/build_cache/index.json: ")


def test_duplicate_hashes_are_rejected() -> None:
    record = json.dumps({"spec": _node("a", H["a"]), "ref_count": 0, "in_buildcache": True})
    data = f'{{"database": {{"version": "8", "installs": {{"{H["a"]}": {record}, "{H["a"]}": {record}}}}}}}'
    with pytest.raises(IndexFormatError, match=f"DAG hash {H['a']} appears 2 times"):
        decode_index(data.encode(), url="x")


def test_duplicates_are_found_while_other_threads_decode_indexes() -> None:
    """The records decoded are counted per decode: a sync decodes its stacks in several
    threads at once, and each decode must count only its own."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the GIL over as often as possible
    hashes = [f"{n:032d}" for n in range(20_000)]
    record = json.dumps({"spec": {"name": "a"}, "in_buildcache": True})
    body = ", ".join(f'"{h}": {record}' for h in hashes)
    doubled = f'{{"database": {{"version": "8", "installs": {{{body}, "{hashes[0]}": {record}}}}}}}'.encode()
    clean = _index(*(_node("a", h) for h in H.values()))
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            others = [pool.submit(decode_index, clean, url="c") for _ in range(300)]
            for _ in range(3):
                with pytest.raises(IndexFormatError, match=f"DAG hash {hashes[0]} appears 2 times"):
                    decode_index(doubled, url="d")
            assert all(len(other.result().records) == len(H) for other in others)
    finally:
        sys.setswitchinterval(interval)


def test_a_record_holding_another_hash_is_rejected() -> None:
    data = _index(_node("a", H["a"]))
    data = data.replace(f'"hash": "{H["a"]}"'.encode(), f'"hash": "{H["b"]}"'.encode())
    with pytest.raises(IndexFormatError, match="holds the node of another hash"):
        build_records(decode_index(data, url="x"))


def test_a_malformed_dependency_hash_is_rejected() -> None:
    app = _node("app", H["a"], dependencies=[{"name": "z", "hash": "short", "parameters": {}}])
    with pytest.raises(IndexFormatError, match="dependency 'z' has a malformed hash 'short'"):
        build_records(decode_index(_index(app), url="x"))
    app = _node("app", H["a"], dependencies=[{"name": "z" * 9000, "hash": "s" * 90_000, "parameters": {}}])
    with pytest.raises(IndexFormatError, match="has a malformed hash 'sss") as caught:
        build_records(decode_index(_index(app), url="x"))
    assert len(str(caught.value)) < 400


def test_a_compiler_version_written_as_a_json_number_with_a_fraction_is_refused() -> None:
    """13.10 as a float is 13.1: reading it would name another compiler (as a node's version)."""
    node = _node("a", H["a"])
    node["compiler"] = {"name": "gcc", "version": 13.10}
    with pytest.raises(IndexFormatError, match="invalid node"):
        build_records(decode_index(_index(node), url="x"))


@settings(max_examples=200)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=32, max_size=32),
            st.text(min_size=0, max_size=40),
            st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789_é\n", min_size=31, max_size=33),
        ),
        max_size=8,
        unique=True,
    )
)
@example(["a" * 31, "b" * 33])  # lengths that add up to 32 each
@example(["0" * 32, "1" * 32])  # no letter at all
def test_keys_checked_all_at_once_are_refused_as_one_by_one(keys: list[str]) -> None:
    """An index's keys are checked as one joined text; the first key that is not a DAG
    hash is named, exactly as checking each key would find it."""
    data = json.dumps({"database": {"version": "8", "installs": {k: {"spec": {"name": "a"}} for k in keys}}})
    bad = [k for k in keys if re.fullmatch("[a-z0-9]{32}", k) is None]
    if not bad:
        assert decode_index(data.encode(), url="u").records.keys() == set(keys)
        return
    with pytest.raises(IndexFormatError, match="malformed DAG hash") as caught:
        decode_index(data.encode(), url="u")
    assert short_repr(bad[0]) in str(caught.value)


def test_patches_outside_the_parameters_count_unless_the_parameters_name_some() -> None:
    """A node's own ``patches`` are a variant when its parameters have no ``patches``
    key, even when a value of theirs is the word (or the key is written escaped)."""
    patches = ["f" * 64, "e" * 64]
    worded = _node("a", H["a"], patches=patches, parameters={"note": "patches", "cflags": []})
    named = _node("b", H["b"], patches=patches, parameters={"patches": ["d" * 64]})
    escaped = _node("c", H["c"], patches=patches, parameters={"patches": ["d" * 64]})
    data = _index(worded, named, escaped).replace(b'"patches": ["ddd', b'"p\\u0061tches": ["ddd', 2)
    data = data.replace(b'"p\\u0061tches": ["ddd', b'"patches": ["ddd', 1)  # (the second named escaped)
    records = {r.name: r for r in build_records(decode_index(data, url="x"))}
    assert format_variant("patches", patches) in records["a"].variants
    assert [v for v in records["b"].variants if v.startswith("patches")] == [format_variant("patches", ["d" * 64])]
    assert [v for v in records["c"].variants if v.startswith("patches")] == [format_variant("patches", ["d" * 64])]


@pytest.mark.parametrize(("length", "refused"), [(255, False), (256, True)])
def test_a_version_of_more_than_255_bytes_is_refused(length: int, refused: bool) -> None:
    data = _index(_node("a", H["a"], version="1" * length))
    if not refused:
        (record,) = build_records(decode_index(data, url="x"))
        assert len(record.version) == length
        return
    with pytest.raises(IndexFormatError, match="is longer than 255 bytes"):
        build_records(decode_index(data, url="x"))


def test_an_edge_without_its_dag_hash_follows_its_hashes_in_spack_s_order() -> None:
    """Spack reads an edge's hashes in its order (``hash``, then the deprecated
    ``full_hash``, then ``build_hash``): an edge naming two of them leads where Spack's does."""
    full, build = _node("zlib", H["a"]), _node("zlib", H["b"], version="2.0")
    app = _node(
        "app", H["c"], dependencies=[{"name": "zlib", "build_hash": H["b"], "full_hash": H["a"], "type": ["link"]}]
    )
    records = {r.hash: r for r in build_records(decode_index(_index(full, build, app, version="6"), url="x"))}
    assert [edge.hash for edge in records[H["c"]].dependencies] == [H["a"]]
