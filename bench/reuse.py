"""``cachedex reuse`` of big Spack environments against ``ingest.py``'s tag.

Writes, once, two lockfiles under bench/out/reuse/ from the specs of ``ingest.py``'s
catalog: ``cached.lock``, the closures of ``--roots`` random listed specs (every spec
cached), and ``changed.lock``, the same with the most depended-on library of them at
another version (not an external compiler; it and every spec above it get new hashes, as Spack would give them:
all of those are to build, each compared with the builds the tag has). Then times the
whole command (``--json``, interpreter start included) on each, the best of three.

    python bench/reuse.py [--roots N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _nodes(catalog_path: Path, roots: int) -> tuple[list[str], dict[str, dict[str, Any]]]:
    from cachedex.catalog import Catalog

    with Catalog(catalog_path, readonly=True) as catalog:
        listed = sorted(catalog.listed_hashes("bench"))
        chosen = random.Random(3).sample(listed, roots)
        found: dict[str, dict[str, Any]] = {}
        pending = list(chosen)
        while pending:
            key = pending.pop()
            if key in found:
                continue
            text = catalog.node(key)
            assert text is not None
            found[key] = node = json.loads(text)
            pending += [edge["hash"] for edge in node.get("dependencies", [])]
    return chosen, found


def _changed(roots: list[str], nodes: dict[str, dict[str, Any]]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The most depended-on spec at another version, and every spec above it with a new hash."""
    used = Counter(
        edge["hash"]
        for node in nodes.values()
        for edge in node.get("dependencies", [])
        if "external" not in nodes[edge["hash"]]  # a library, not the compiler
    )
    ((core, _),) = used.most_common(1)
    renamed: dict[str, str] = {}

    def new_hash(key: str) -> str:
        if key not in renamed:
            node = nodes[key]
            moved = key == core or any(new_hash(e["hash"]) != e["hash"] for e in node.get("dependencies", []))
            renamed[key] = hashlib.sha1(key.encode()).hexdigest()[:32] if moved else key
        return renamed[key]

    changed: dict[str, dict[str, Any]] = {}
    for key, node in nodes.items():
        copy = json.loads(json.dumps(node))
        if key == core:
            copy["version"] = "999.0"
        for edge in copy.get("dependencies", []):
            edge["hash"] = new_hash(edge["hash"])
        if "hash" in copy:
            copy["hash"] = new_hash(key)
        changed[new_hash(key)] = copy
    return [new_hash(r) for r in roots], changed


def _write(path: Path, roots: list[str], nodes: dict[str, dict[str, Any]]) -> None:
    document = {
        "_meta": {"file-type": "spack-lockfile", "lockfile-version": 6, "specfile-version": 5},
        "roots": [{"hash": r, "spec": nodes[r]["name"]} for r in roots],
        "concrete_specs": nodes,
    }
    path.write_text(json.dumps(document))


def _time(config: Path, lock: Path) -> tuple[float, dict[str, Any]]:
    best, report = float("inf"), {}
    for _ in range(3):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "cachedex", "--config", str(config), "reuse", str(lock), "--json"],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        best = min(best, time.perf_counter() - started)
        report = json.loads(done.stdout)
    return best, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roots", type=int, default=200)
    args = parser.parse_args()
    ingest = HERE / "out" / "ingest"
    out = HERE / "out" / "reuse"
    out.mkdir(parents=True, exist_ok=True)
    cached, changed = out / f"cached-{args.roots}.lock", out / f"changed-{args.roots}.lock"
    if not changed.exists():
        roots, nodes = _nodes(ingest / "catalog.sqlite", args.roots)
        _write(cached, roots, nodes)
        _write(changed, *_changed(roots, nodes))
    for lock in (cached, changed):
        seconds, report = _time(ingest / "cachedex.yaml", lock)
        (row,) = report["tags"]
        follows = sum(m["follows"] for m in row["missing"])
        print(
            f"{lock.name}: {report['specs']:,} specs ({lock.stat().st_size / 1e6:.1f} MB); "
            f"{row['cached']:,} of {row['needed']:,} cached, {len(row['missing']):,} to build "
            f"({follows:,} follow): {seconds:.2f} s (best of 3, whole command)"
        )


if __name__ == "__main__":
    main()
