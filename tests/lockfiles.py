"""Spack lockfiles (``spack.lock``, version 6) of environments made of the demo's specs."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cachedex.demo.build import demo_records
from cachedex.demo.data import TAGS
from cachedex.demo.nodes import dag_hash

Node = dict[str, Any]


def demo_nodes(tag: str = "develop", stack: str = "e4s") -> dict[str, Node]:
    """The nodes of one stack of a demo tag as the demo's catalog holds them (develop
    after its second sync), by hash."""
    found = next(t for t in TAGS if t.name == tag)
    records = demo_records(found, develop_revision=1 if tag == "develop" else 0)
    return {node["hash"]: node for node, _ in records[stack]}


def closure(nodes: dict[str, Node], roots: Iterable[str]) -> dict[str, Node]:
    """The roots and every node they reach through any edge (a lockfile holds build
    dependencies too), by hash."""
    found: dict[str, Node] = {}
    pending = list(roots)
    while pending:
        dag_hash_ = pending.pop()
        if dag_hash_ not in found:
            found[dag_hash_] = nodes[dag_hash_]
            pending += [edge["hash"] for edge in nodes[dag_hash_].get("dependencies", [])]
    return found


def changed(
    specs: dict[str, Node], name: str, edit: Callable[[Node], object]
) -> tuple[dict[str, Node], dict[str, str]]:
    """``specs`` after ``edit`` changed the nodes named ``name`` in place, every hash made
    again from the leaves up, as Spack would: (the new specs by hash, old hash -> new hash)."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(key: str) -> None:
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


def above(specs: dict[str, Node], start: set[str]) -> set[str]:
    """``start`` and every spec of ``specs`` that reaches one of them through any edge."""
    found = set(start)
    grew = True
    while grew:
        before = len(found)
        found |= {key for key, node in specs.items() if any(e["hash"] in found for e in node.get("dependencies", []))}
        grew = len(found) > before
    return found


def lockfile(specs: dict[str, Node], roots: Iterable[str], *, version: int = 6, **extra: Any) -> dict[str, Any]:
    """A lockfile document holding ``specs`` with the roots ``roots`` (hashes)."""
    return {
        "_meta": {"file-type": "spack-lockfile", "lockfile-version": version, "specfile-version": 5},
        "spack": {"version": "1.1.0", "type": "release"},
        "roots": [{"hash": key, "spec": specs[key]["name"]} for key in roots],
        "concrete_specs": specs,
        **extra,
    }


def write_lockfile(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def roots_named(nodes: dict[str, Node], *names: str) -> list[str]:
    """The hash of the one node of each name."""
    return [next(key for key, node in nodes.items() if node["name"] == name) for name in names]
