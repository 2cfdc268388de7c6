"""``node_differences`` on nodes the other tests leave out: hostile, old-format or odd."""

from __future__ import annotations

from typing import Any

import msgspec

from cachedex.reuse_nodes import node_differences


def _node(**fields: Any) -> bytes:
    return msgspec.json.encode({"name": "app", "parameters": {}, **fields})


def test_a_node_nested_past_the_decoder_s_depth_is_no_difference() -> None:
    """A node too deeply nested to decode (msgspec raises RecursionError) is one that
    cannot be read: no difference, not a crash of the whole report."""
    deep = b'{"name": "app", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert node_differences(deep, _node()) == []
    assert node_differences(_node(), deep) == []


def test_a_node_that_is_not_an_object_is_no_difference() -> None:
    """A node that decodes to a list (or a string) is unreadable, on either side."""
    assert node_differences(b"[1, 2]", _node(package_hash="a" * 32)) == []
    assert node_differences(_node(package_hash="a" * 32), b'"app"') == []


def test_one_unreadable_side_says_nothing_even_when_the_other_has_flags() -> None:
    """Either side unreadable: nothing is compared (an unreadable cached node is not
    one without flags)."""
    flagged = _node(parameters={"cflags": ["-O3"]}, package_hash="a" * 32)
    assert node_differences(b"[]", flagged) == []
    assert node_differences(flagged, b"[]") == []


def test_parameters_that_are_not_an_object_are_no_flags() -> None:
    """``parameters`` as a list (a hostile index) reads as no flags, still comparing the
    rest (the recipe)."""
    odd = msgspec.json.encode({"name": "app", "parameters": ["cflags"], "package_hash": "a" * 32})
    assert node_differences(odd, _node(package_hash="b" * 32)) == [("package_hash", "aaaaaaa", "bbbbbbb")]


def test_flags_are_joined_by_spaces_as_spack_writes_them() -> None:
    """Several flags of one kind are said as Spack's command line has them: spaced."""
    cached = _node(parameters={"ldflags": ["-s", "-Wl,--as-needed"]})
    assert node_differences(cached, _node()) == [("ldflags", "-s -Wl,--as-needed", "")]


def test_an_old_node_s_dependency_types_are_read_from_its_type_key() -> None:
    """Spec format v1-v3 edges say their types as ``type`` (not ``parameters.deptypes``):
    compared with a newer node's, sorted, the same types are no difference."""
    h = "h" * 32
    old = _node(dependencies=[{"name": "zlib", "hash": h, "type": ["link", "build"]}])
    new = _node(dependencies=[{"name": "zlib", "hash": h, "parameters": {"deptypes": ["build", "link"]}}])
    assert node_differences(old, new) == []
    run = _node(dependencies=[{"name": "zlib", "hash": h, "parameters": {"deptypes": ["run"]}}])
    assert node_differences(old, run) == [("^zlib type", "build,link", "run")]


def test_a_dependency_whose_hash_is_not_a_string_is_not_compared() -> None:
    """An edge with a non-string hash is skipped on both sides: equal junk is no
    'same hash' to compare types of."""
    odd = _node(dependencies=[{"name": "zlib", "hash": 7, "type": ["link"]}])
    other = _node(dependencies=[{"name": "zlib", "hash": 7, "type": ["run"]}])
    assert node_differences(odd, other) == []


def test_a_recipe_hash_that_is_not_a_string_is_unknown() -> None:
    """A ``package_hash`` or ``namespace`` of another JSON type is unknown, not a crash
    nor a difference."""
    odd = _node(package_hash=12345678, namespace=["builtin"])
    given = _node(package_hash="a" * 32, namespace="builtin")
    assert node_differences(odd, given) == []
    assert node_differences(given, odd) == []


def test_a_namespace_both_give_and_differ_in_is_said() -> None:
    """Namespaces both nodes give, unequal: said with each side's value."""
    assert node_differences(_node(namespace="builtin"), _node(namespace="myrepo")) == [
        ("namespace", "builtin", "myrepo")
    ]


def test_dependency_types_are_said_in_name_order() -> None:
    """Several retyped dependencies are said by name, whatever order the nodes list them."""
    h = "h" * 32
    names = [f"dep{n:02d}" for n in range(30)]

    def node(kind: str, order: list[str]) -> bytes:
        return _node(dependencies=[{"name": n, "hash": h, "parameters": {"deptypes": [kind]}} for n in order])

    found = node_differences(node("build", names[::-1]), node("run", names))
    assert [what for what, _, _ in found] == [f"^{n} type" for n in names]
