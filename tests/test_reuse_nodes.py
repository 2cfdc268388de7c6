"""``node_differences``: what two nodes differ in that a listing does not hold."""

from __future__ import annotations

from typing import Any

import msgspec

from cachedex.reuse_nodes import node_differences


def _node(**fields: Any) -> bytes:
    return msgspec.json.encode({"name": "app", "parameters": {}, **fields})


def _edge(name: str, dag_hash: str, *types: str) -> dict[str, Any]:
    return {"name": name, "hash": dag_hash, "parameters": {"deptypes": list(types), "virtuals": []}}


def test_flags_are_said_as_spack_writes_them() -> None:
    cached = _node(parameters={"cflags": ["-O2", "-g"]})
    wanted = _node(parameters={"cflags": ["-O3", "-g"], "ldflags": ["-s"]})
    assert node_differences(cached, wanted) == [("cflags", "-O2 -g", "-O3 -g"), ("ldflags", "", "-s")]


def test_a_recipe_or_namespace_one_node_does_not_say_is_no_difference() -> None:
    """Old nodes (and externals) name no package_hash, some no namespace: unknown, not
    another; both given and unequal, it is said."""
    given = _node(package_hash="a" * 32, namespace="builtin")
    assert node_differences(_node(), given) == []
    assert node_differences(given, _node()) == []
    other = _node(package_hash="b" * 32, namespace="myrepo")
    assert node_differences(given, other) == [
        ("package_hash", "aaaaaaa", "bbbbbbb"),
        ("namespace", "builtin", "myrepo"),
    ]


def test_a_dependency_s_types_are_compared_as_a_set_of_the_same_hash_only() -> None:
    h, other = "h" * 32, "o" * 32
    cached = _node(dependencies=[_edge("zlib", h, "link", "build"), _edge("cmake", h, "build")])
    same = _node(dependencies=[_edge("zlib", h, "build", "link"), _edge("cmake", other, "build", "run")])
    assert node_differences(cached, same) == []  # (types in another order; another cmake: said as a dependency)
    run = _node(dependencies=[_edge("zlib", h, "build", "link", "run")])
    assert node_differences(cached, run) == [("^zlib type", "build,link", "build,link,run")]
