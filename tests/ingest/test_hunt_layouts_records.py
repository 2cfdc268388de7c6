"""Mutation hunt of ``ingest/records.py``: display strings, edges and compilers of records."""

from __future__ import annotations

import json

import pytest

from cachedex.errors import IndexFormatError
from cachedex.ingest.index import decode_index
from cachedex.ingest.records import build_records, format_variant, name_version_in
from cachedex.values import SpecRecord, deptypes_from_mask

H = {c: c * 32 for c in "abcdefgh"}


def _node(name: str, dag_hash: str, **extra: object) -> dict[str, object]:
    node: dict[str, object] = {
        "name": name,
        "version": "1.0",
        "arch": {"platform": "linux", "platform_os": "rhel8", "target": "x86_64"},
        "parameters": {"cflags": []},
        "hash": dag_hash,
    }
    node.update(extra)
    return node


def _records(*nodes: dict[str, object], version: str = "8") -> dict[str, SpecRecord]:
    installs = {n["hash"]: {"spec": n, "ref_count": 0, "in_buildcache": True} for n in nodes}
    data = json.dumps({"database": {"version": version, "installs": installs}}).encode()
    return {r.hash: r for r in build_records(decode_index(data, url="x"))}


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("prefix", "a b", "prefix='a b'"),  # a space would split the spec on Spack's command line
        ("tag", "x86[v2]", "tag=x86[v2]"),  # brackets need no quotes (Spack prints them bare)
        ("mode", "TRUE", "+mode"),  # the text of a boolean, whatever its case
        ("mode", "True", "+mode"),
    ],
)
def test_variant_values_are_quoted_and_read_as_spack_does(name: str, value: object, shown: str) -> None:
    """Which values are quoted, and that any case of "true" is a boolean (as "False" is)."""
    assert format_variant(name, value) == shown


def test_an_edge_with_null_parameters_takes_its_deptypes_from_its_type() -> None:
    """``"parameters": null`` is no parameters: the edge's older ``type`` gives its deptypes."""
    zlib = _node("zlib", H["a"])
    app = _node(
        "app", H["b"], dependencies=[{"name": "zlib", "hash": H["a"], "parameters": None, "type": ["build", "link"]}]
    )
    (edge,) = _records(zlib, app)[H["b"]].dependencies
    assert (deptypes_from_mask(edge.deptypes), edge.virtuals) == (("build", "link"), "")


def test_an_edge_of_a_dependency_map_is_named_by_its_key() -> None:
    """Older nodes map each dependency's name to its edge: the key names the edge, even
    when the edge also holds another ``name``."""
    zlib = _node("zlib", H["a"])
    app = _node("app", H["b"], dependencies={"zlib": {"name": "other", "hash": H["a"], "type": ["link"]}})
    (edge,) = _records(zlib, app, version="6")[H["b"]].dependencies
    assert (edge.name, edge.hash) == ("zlib", H["a"])


def _compiled(*edges: tuple[str, str, list[str]], **extra: object) -> SpecRecord:
    """The record of an app whose edges go to ``(name, hash, virtuals)``, with the
    providers as records of the index (those whose hash is among H's)."""
    providers = [_node(name, dag_hash, version="13.2") for name, dag_hash, _ in edges if dag_hash in H.values()]
    deps = [{"name": n, "hash": h, "parameters": {"deptypes": ["build"], "virtuals": v}} for n, h, v in edges]
    return _records(*providers, _node("app", H["h"], dependencies=deps, **extra))[H["h"]]


def test_a_fortran_only_node_is_compiled_by_its_fortran_provider() -> None:
    """Without a c or cxx provider, the fortran one names the compiler."""
    assert _compiled(("gcc", H["a"], ["fortran"])).compiler == "gcc@13.2"


def test_a_provider_of_cxx_is_not_one_of_c() -> None:
    """Languages are the edge's virtuals, not letters of them: "c" is not in "cxx"."""
    assert _compiled(("llvm", H["a"], ["cxx"]), ("gcc", H["b"], ["c"])).compiler == "gcc@13.2"


def test_a_compiler_provider_missing_from_the_index_is_named_by_its_edge() -> None:
    """A provider edge to a spec not in the index: the compiler is the edge's name (no
    version), not "none" nor nothing."""
    record = _compiled(("gcc", "z" * 32, ["c"]))
    assert record.compiler == "gcc"


def test_a_node_without_compiler_is_compiled_by_none() -> None:
    assert _records(_node("a", H["a"]))[H["a"]].compiler == "none"


def test_a_node_without_version_has_an_empty_one() -> None:
    """No ``version`` is the empty version, not the text "None"."""
    node = _node("a", H["a"])
    del node["version"]
    assert _records(node)[H["a"]].version == ""


def test_a_version_is_measured_in_bytes() -> None:
    """The 255 limit is of UTF-8 bytes (a path's): 128 two-byte characters are too long."""
    with pytest.raises(IndexFormatError, match="is longer than 255 bytes"):
        _records(_node("a", H["a"], version="é" * 128))


@pytest.mark.parametrize("version", ["1.0 beta", "1.0\\x", "1.0\t"])
def test_a_version_holding_spaces_or_backslashes_is_refused(version: str) -> None:
    with pytest.raises(IndexFormatError, match="holds spaces, control characters or"):
        _records(_node("a", H["a"], version=version))


def test_a_node_with_an_empty_name_is_refused_as_nameless() -> None:
    with pytest.raises(IndexFormatError, match=f"record {H['a']}: node has no name"):
        _records(_node("", H["a"]))


def test_name_version_in_gives_nothing_for_a_record_without_version_or_not_there() -> None:
    """A spec's (name, version) by hash: None for a node without a version (not "None")
    and for a hash the index does not hold (not a KeyError)."""
    nameless = _node("b", H["b"])
    del nameless["version"]
    installs = {n["hash"]: {"spec": n, "in_buildcache": True} for n in (_node("a", H["a"]), nameless)}
    index = decode_index(json.dumps({"database": {"version": "8", "installs": installs}}).encode(), url="x")
    name_version = name_version_in(index)
    assert name_version(H["a"]) == ("a", "1.0")
    assert name_version(H["b"]) is None
    assert name_version(H["c"]) is None


@pytest.mark.parametrize(
    ("extra", "compiler"),
    [
        ({"compiler": {"name": "gcc", "version": "13.2.0"}}, "gcc@13.2.0"),
        ({"compiler": {"name": "gcc"}}, "gcc"),  # no version: not "gcc@None"
        ({"compiler": {"name": "", "version": "1"}, "annotations": {"compiler": "clang@=17"}}, "clang@17"),
        ({"annotations": {"compiler": "gcc@=13.2.0"}}, "gcc@13.2.0"),
    ],
)
def test_the_direct_compiler_of_a_node(extra: dict[str, object], compiler: str) -> None:
    """A ``compiler`` key (spec ≤ 4) with a name, else ``annotations.compiler`` with its
    ``@=`` shown as ``@`` (format doc §4.2)."""
    assert _records(_node("a", H["a"], **extra), version="7")[H["a"]].compiler == compiler


def test_a_variant_value_json_cannot_write_is_shown_by_its_text() -> None:
    """``format_variant`` is public: a value JSON cannot encode (a complex number) is
    shown as its text, not dropped to an empty value."""
    assert format_variant("x", 1j) == "x=1j"


@pytest.mark.parametrize(("external", "taken"), [({}, False), (False, False), (None, False), ({"path": "/usr"}, True)])
def test_an_external_is_a_node_whose_external_field_holds_something(external: object, taken: bool) -> None:
    """Spack takes a node for an external only when its ``external`` is truthy (its
    ``from_node_dict`` reads ``if node["external"]``): an empty one, ``false`` or ``null``
    is a spec like any other (any ``external`` key at all made it an external)."""
    (spec,) = _records(_node("zlib", H["a"], external=external)).values()
    assert spec.external is taken
