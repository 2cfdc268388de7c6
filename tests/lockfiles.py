"""Spack lockfiles (``spack.lock``, version 6) of environments made of the demo's specs
(the demo's own helpers, ``cachedex.demo.environment``, and a few more)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cachedex.demo.build import demo_records
from cachedex.demo.data import TAGS
from cachedex.demo.environment import Node, changed, closure, lockfile

__all__ = [
    "above",
    "changed",
    "closure",
    "demo_nodes",
    "developed",
    "lockfile",
    "roots_named",
    "spliced",
    "write_lockfile",
]


def demo_nodes(tag: str = "develop", stack: str = "e4s") -> dict[str, Node]:
    """The nodes of one stack of a demo tag as the demo's catalog holds them (develop
    after its second sync), by hash."""
    found = next(t for t in TAGS if t.name == tag)
    records = demo_records(found, develop_revision=1 if tag == "develop" else 0)
    return {node["hash"]: node for node, _ in records[stack]}


def above(specs: dict[str, Node], start: set[str]) -> set[str]:
    """``start`` and every spec of ``specs`` that reaches one of them through any edge."""
    found = set(start)
    grew = True
    while grew:
        before = len(found)
        found |= {key for key, node in specs.items() if any(e["hash"] in found for e in node.get("dependencies", []))}
        grew = len(found) > before
    return found


def write_lockfile(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def roots_named(nodes: dict[str, Node], *names: str) -> list[str]:
    """The hash of the one node of each name."""
    return [next(key for key, node in nodes.items() if node["name"] == name) for name in names]


def spliced(nodes: dict[str, Node], roots: list[str], name: str) -> tuple[dict[str, Node], dict[str, str]]:
    """The closure of ``roots`` with ``name`` spliced in at version 9.9.9, as Spack writes
    it: each spec above it spliced (its ``build_spec`` the spec it was spliced from), and
    the build specs' nodes beside (old hash -> new in the second item)."""
    built = closure(nodes, roots)
    specs, renamed = changed(built, name, lambda node: node.update(version="9.9.9"))
    for old, new in renamed.items():
        if new != old and specs[new]["name"] != name:
            specs[new]["build_spec"] = {"name": specs[new]["name"], "hash": old}
    return {**specs, **{key: node for key, node in built.items() if key not in specs}}, renamed


def developed(
    nodes: dict[str, Node], roots: list[str], name: str, path: str = "/home/me/src"
) -> tuple[dict[str, Node], dict[str, str]]:
    """The closure of ``roots`` with ``name`` developed in place (``spack develop``), as
    Spack concretizes it: its node given the variant ``dev_path``, so it and every spec
    above it get new hashes (old hash -> new in the second item)."""
    return changed(closure(nodes, roots), name, lambda node: node["parameters"].update(dev_path=path))
