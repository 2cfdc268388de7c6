"""A Spack environment's lockfile made of the demo's specs, for ``cachedex reuse``.

``cachedex demo`` writes ``spack.lock``: an environment of ``hdf5`` and ``py-numpy``
as develop's e4s stack builds them, concretized a little later than develop's cache was
built: its ``zlib-ng`` is one patch release newer. So one spec is not cached as locked,
and everything that builds on zlib-ng follows from it, as happens to users whose Spack
is ahead of the cache they install from.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .build import bump_version, demo_records
from .data import TAGS
from .nodes import dag_hash

__all__ = ["LOCKFILE_NAME", "Node", "changed", "closure", "lockfile", "write_demo_environment"]

Node = dict[str, Any]

#: The lockfile's name in the demo folder, as Spack names an environment's.
LOCKFILE_NAME = "spack.lock"
_ROOTS = ("hdf5", "py-numpy")
_NEWER = "zlib-ng"


def closure(nodes: dict[str, Node], roots: Iterable[str]) -> dict[str, Node]:
    """The roots and every node they reach through any edge (a lockfile holds build
    dependencies too), by hash."""
    found: dict[str, Node] = {}
    pending = list(roots)
    while pending:
        key = pending.pop()
        if key not in found:
            found[key] = nodes[key]
            pending += [edge["hash"] for edge in nodes[key].get("dependencies", [])]
    return found


def changed(
    specs: dict[str, Node], name: str, edit: Callable[[Node], object]
) -> tuple[dict[str, Node], dict[str, str]]:
    """``specs`` after ``edit`` changed the nodes named ``name`` (copies), every hash made
    again from the leaves up, as Spack would: (the new specs by hash, old hash -> new)."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(key: str) -> None:  # dependencies before what depends on them
        if key not in seen:
            seen.add(key)
            for edge in specs[key].get("dependencies", []):
                visit(edge["hash"])
            order.append(key)

    for key in specs:
        visit(key)
    renamed: dict[str, str] = {}
    new: dict[str, Node] = {}
    for key in order:
        node = copy.deepcopy(specs[key])
        if node["name"] == name:
            edit(node)
        for edge in node.get("dependencies", []):
            edge["hash"] = renamed[edge["hash"]]
        node["hash"] = dag_hash(node)
        renamed[key] = node["hash"]
        new[node["hash"]] = node
    return new, renamed


def lockfile(specs: dict[str, Node], roots: Iterable[str], *, version: int = 6, **extra: Any) -> dict[str, Any]:
    """A lockfile document (``spack.lock``) holding ``specs`` with the roots ``roots``
    (hashes), as Spack 1.x writes one."""
    return {
        "_meta": {"file-type": "spack-lockfile", "lockfile-version": version, "specfile-version": 5},
        "spack": {"version": "1.1.0", "type": "release"},
        "roots": [{"hash": key, "spec": specs[key]["name"]} for key in roots],
        "concrete_specs": specs,
        **extra,
    }


def write_demo_environment(directory: Path) -> Path:
    """Write the demo's ``spack.lock`` into ``directory``; returns its path."""
    develop = next(tag for tag in TAGS if tag.name == "develop")
    nodes = {node["hash"]: node for node, _ in demo_records(develop, develop_revision=1)["e4s"]}
    roots = [next(key for key, node in nodes.items() if node["name"] == name) for name in _ROOTS]
    specs, renamed = changed(
        closure(nodes, roots), _NEWER, lambda node: node.update(version=bump_version(node["version"]))
    )
    path = Path(directory) / LOCKFILE_NAME
    path.write_text(json.dumps(lockfile(specs, [renamed[r] for r in roots]), indent=2) + "\n", encoding="utf-8")
    return path
