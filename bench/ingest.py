"""Ingest benchmark: a synthetic tag at real scale, synced by the real ``cachedex sync``.

Generates (once, cached under bench/out/) a v3 root mirror with 250,000 records
(about 10,000 package names, 3-8 dependencies each, object targets, Database version 8,
~240 MB of index; a layered DAG), 40 stack mirrors covering those records, and a spec manifest per
listed record. Then measures in one run:

  (a) a bare typed decode of all index bytes (msgspec, GC off): the practical limit
  (b) ``cachedex sync`` of the tag, sizes included (a fresh catalog)
  (c) a no-op re-sync (nothing changed)
  (d) peak resident memory of (b)

Targets: (b) <= 2.5 x (a); (c) <= 0.5 s; (d) <= 3 x the root index size. With
``--pairs N``, (a) and (b) again N times in turn, and the median of their ratios.

    python bench/ingest.py [--records N] [--stacks N] [--out DIR] [--pairs N]
"""

from __future__ import annotations

import argparse
import base64
import compileall
import gc
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

#: Bumped when the generated data changes, so that a cached bench/out is regenerated.
GENERATOR = 2
TARGET_NAMES = ("x86_64_v3", "x86_64_v4", "zen4", "neoverse_v1", "neoverse_v2", "skylake_avx512")
OSES = ("ubuntu22.04", "ubuntu24.04", "rhel8", "amzn2")
COMPILERS = (("gcc", "13.2.0"), ("gcc", "11.4.0"), ("llvm", "18.1.8"), ("intel-oneapi-compilers", "2025.1.0"))


def _target(name: str) -> dict[str, Any]:
    import archspec.cpu

    uarch = archspec.cpu.TARGETS[name]
    return {
        "name": name,
        "vendor": uarch.vendor,
        "features": sorted(uarch.features),
        "generation": uarch.generation,
        "parents": [p.name for p in uarch.parents],
        "cpupart": "",
    }


def _hash(rng: random.Random) -> str:
    return base64.b32encode(rng.randbytes(20)).decode().lower()[:32]


def generate(out: Path, records: int, stacks: int, seed: int = 7) -> dict[str, Any]:
    """Write the synthetic tag under ``out``; returns facts about it."""
    rng = random.Random(seed)
    targets = {name: _target(name) for name in TARGET_NAMES}
    packages = [f"pkg-{i:05d}" for i in range(max(1, records // 25))]
    compiler_hashes = [_hash(rng) for _ in COMPILERS]
    hashes = [_hash(rng) for _ in range(records)]
    installs_parts: list[bytes] = []
    names: list[tuple[str, str]] = []
    enc = msgspec.json.encode
    # Compilers: externals without binaries, as in real indexes.
    for (cname, cversion), chash in zip(COMPILERS, compiler_hashes, strict=True):
        node = {
            "name": cname,
            "version": cversion,
            "arch": {"platform": "linux", "platform_os": "ubuntu22.04", "target": "x86_64"},
            "namespace": "builtin",
            "parameters": {
                "build_system": "generic",
                "cflags": [],
                "cppflags": [],
                "cxxflags": [],
                "fflags": [],
                "ldflags": [],
                "ldlibs": [],
            },
            "external": {"path": "/usr", "module": None, "extra_attributes": {}},
            "hash": chash,
        }
        installs_parts.append(enc(chash) + b':{"spec":' + enc(node) + b',"ref_count":1,"in_buildcache":false}')
    # A layered DAG, as in real caches: records come in configurations (one target, OS
    # and compiler each) of one record per package, and a record depends only on
    # records of its own configuration, of packages in lower tiers. Closures stay
    # bounded (tens to a few hundred specs) and a few core packages have many dependents.
    npackages = len(packages)
    tiers = _tiers(npackages)
    package_deps = [_package_deps(p, tiers, rng) for p in range(npackages)]
    for i, dag_hash in enumerate(hashes[len(COMPILERS) :], start=len(COMPILERS)):
        name = packages[i % npackages]
        version = f"{1 + i % 7}.{i % 13}.{i % 5}"
        names.append((name, version))
        config = i // npackages
        deps = []
        for dep_package in package_deps[i % npackages]:
            dep_index = config * npackages + dep_package
            if len(COMPILERS) <= dep_index < i:
                deps.append(
                    {
                        "name": packages[dep_package],
                        "hash": hashes[dep_index],
                        "parameters": {"deptypes": ["build", "link"], "virtuals": []},
                    }
                )
        cidx = config % len(COMPILERS)
        deps.append(
            {
                "name": COMPILERS[cidx][0],
                "hash": compiler_hashes[cidx],
                "parameters": {"deptypes": ["build"], "virtuals": ["c", "cxx"]},
            }
        )
        deps.sort(key=lambda d: d["name"])
        node = {
            "name": name,
            "version": version,
            "arch": {
                "platform": "linux",
                "platform_os": OSES[config % len(OSES)],
                "target": targets[TARGET_NAMES[config % len(TARGET_NAMES)]],
            },
            "namespace": "builtin",
            "parameters": {
                "build_system": "cmake",
                "build_type": "Release",
                "cuda": bool(i % 2),
                "cuda_arch": ["80", "90"],
                "debug": False,
                "ipo": False,
                "mpi": True,
                "shared": True,
                "cflags": [],
                "cppflags": [],
                "cxxflags": [],
                "fflags": [],
                "ldflags": [],
                "ldlibs": [],
            },
            "package_hash": "a" * 52 + "====",
            "dependencies": deps,
            "annotations": {"original_specfile_version": 5},
            "hash": dag_hash,
        }
        installs_parts.append(enc(dag_hash) + b':{"spec":' + enc(node) + b',"ref_count":1,"in_buildcache":true}')
    all_hashes = compiler_hashes + hashes[len(COMPILERS) :]
    root_index = b'{"database":{"version":"8","installs":{' + b",".join(installs_parts) + b"}}}"
    _write_v3_index(out / "root", root_index)
    # Stacks: each record in one stack, one in five in a second.
    membership: list[list[int]] = [[] for _ in range(stacks)]
    for position in range(len(all_hashes)):
        first = position % stacks
        membership[first].append(position)
        if position % 5 == 0 and stacks > 1:
            # Never the same stack twice: that would repeat the key in its index (for
            # some stack counts, such as 3, 7p + 3 and p fall in the same stack).
            second = (position * 7 + 3) % stacks
            membership[second if second != first else (first + 1) % stacks].append(position)
    stack_bytes = 0
    for number, positions in enumerate(membership):
        data = (
            b'{"database":{"version":"8","installs":{'
            + b",".join(installs_parts[p] for p in sorted(positions))
            + b"}}}"
        )
        _write_v3_index(out / f"stack-{number:02d}", data)
        stack_bytes += len(data)
    # Spec manifests with sizes, for every listed record of the root.
    for (name, version), dag_hash in zip(names, hashes[len(COMPILERS) :], strict=True):
        folder = out / "root" / "v3" / "manifests" / "spec" / name
        folder.mkdir(parents=True, exist_ok=True)
        size = 10_000 + int(dag_hash[:6], 36) % 500_000_000
        manifest = {
            "version": 3,
            "data": [
                {
                    "contentLength": size,
                    "mediaType": "application/vnd.spack.install.v2.tar+gzip",
                    "compression": "gzip",
                    "checksumAlgorithm": "sha256",
                    "checksum": hashlib.sha256(dag_hash.encode()).hexdigest(),
                },
                {
                    "contentLength": 1000,
                    "mediaType": "application/vnd.spack.spec.v5+json",
                    "compression": "gzip",
                    "checksumAlgorithm": "sha256",
                    "checksum": hashlib.sha256(name.encode()).hexdigest(),
                },
            ],
        }
        (folder / f"{name}-{version}-{dag_hash}.spec.manifest.json").write_text(json.dumps(manifest, indent=0))
    config = {
        "catalog": "catalog.sqlite",
        "tags": [
            {
                "name": "bench",
                "url": str(out / "root"),
                "stacks": {f"stack-{n:02d}": str(out / f"stack-{n:02d}") for n in range(stacks)},
            }
        ],
    }
    (out / "cachedex.yaml").write_text(json.dumps(config))
    facts = {
        "generator": GENERATOR,
        "records": len(all_hashes),
        "packages": len(packages),
        "stacks": stacks,
        "root_bytes": len(root_index),
        "stack_bytes": stack_bytes,
    }
    (out / "facts.json").write_text(json.dumps(facts))
    return facts


def _tiers(npackages: int) -> list[range]:
    """Package tiers, bottom up: core (0.5 %), libraries (4.5 %), middle (25 %), leaves."""
    bounds = [0, max(1, npackages // 200), max(2, npackages // 20), max(3, npackages * 3 // 10), npackages]
    return [range(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def _package_deps(package: int, tiers: list[range], rng: random.Random) -> list[int]:
    """3-8 dependencies: one from the tier just below, the rest from core and libraries."""
    tier = next(n for n, r in enumerate(tiers) if package in r)
    if tier == 0:  # core packages depend on a few earlier core packages
        return sorted(rng.sample(range(package), min(package, rng.randint(0, 3))))
    wanted = rng.randint(3, 8)
    picks = {rng.choice(tiers[tier - 1])}
    for _ in range(4 * wanted):
        if len(picks) >= wanted:
            break
        picks.add(rng.choice(tiers[rng.randrange(min(tier, 2))]))
    return sorted(picks)


def _write_v3_index(mirror: Path, data: bytes) -> None:
    digest = hashlib.sha256(data).hexdigest()
    blob = mirror / "blobs" / "sha256" / digest[:2] / digest
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    manifest = {
        "version": 3,
        "data": [
            {
                "contentLength": len(data),
                "mediaType": "application/vnd.spack.db.v8+json",
                "compression": "none",
                "checksumAlgorithm": "sha256",
                "checksum": digest,
            }
        ],
    }
    path = mirror / "v3" / "manifests" / "index" / "index.manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest))


# -- (a) the practical limit: one typed decode of every index byte ---------------------


class _Target(msgspec.Struct):
    name: str = ""


class _Arch(msgspec.Struct):
    platform: str = ""
    platform_os: str = ""
    target: str | _Target = ""


class _EdgeParams(msgspec.Struct):
    deptypes: list[str] = []
    virtuals: list[str] = []


class _Edge(msgspec.Struct):
    name: str = ""
    hash: str = ""
    parameters: _EdgeParams | None = None


class _Node(msgspec.Struct):
    name: str = ""
    version: str = ""
    arch: _Arch | None = None
    parameters: dict[str, Any] = {}
    dependencies: list[_Edge] = []
    hash: str = ""


class _Record(msgspec.Struct):
    spec: _Node
    in_buildcache: bool = False


class _Db(msgspec.Struct):
    version: str
    installs: dict[str, _Record]


class _File(msgspec.Struct):
    database: _Db


def bare_decode(out: Path) -> float:
    """Seconds to decode every index blob once with typed structs, GC off."""
    blobs = [p for p in out.glob("*/blobs/sha256/*/*")]
    decoder = msgspec.json.Decoder(_File)
    total = 0.0
    for blob in blobs:
        data = blob.read_bytes()
        gc.disable()
        start = time.perf_counter()
        decoded = decoder.decode(data)
        total += time.perf_counter() - start
        del decoded
        gc.enable()
    return total


def run_sync(out: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in bytes, output) of ``cachedex sync`` in a child process."""
    script = (
        "import sys, time\n"
        "from cachedex.cli import main\n"
        "start, code = time.perf_counter(), 0\n"
        "try:\n    main(['--config', sys.argv[1], 'sync'])\n"
        "except SystemExit as e:\n    code = e.code\n"
        # VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's peak at fork
        # time, which is this benchmark's own bare decode.
        "hwm = next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
        "print(f'@@ {time.perf_counter() - start:.3f} {hwm}', flush=True)\n"
        "sys.exit(code)\n"  # a sync that failed is no figure
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, str(out / "cachedex.yaml")],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"sync failed:\n{done.stdout}\n{done.stderr}")
    marker = [line for line in done.stdout.splitlines() if line.startswith("@@ ")][-1]
    _, _seconds, rss_kb = marker.split()
    return wall, int(rss_kb) * 1024, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--stacks", type=int, default=40)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "ingest")
    parser.add_argument(
        "--pairs", type=int, default=0, help="then (a) and (b) again, in turn, N times: the median ratio"
    )
    args = parser.parse_args()
    out: Path = args.out.resolve()  # the config names the mirrors by absolute paths
    facts_path = out / "facts.json"
    facts = json.loads(facts_path.read_text()) if facts_path.exists() else None
    if (
        not facts
        or facts.get("generator") != GENERATOR
        or facts["records"] != args.records
        or facts["stacks"] != args.stacks
    ):
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        print(f"generating {args.records:,} records, {args.stacks} stacks in {out} ...", flush=True)
        start = time.perf_counter()
        facts = generate(out, args.records, args.stacks)
        print(f"  generated in {time.perf_counter() - start:.1f} s", flush=True)
    root_mb = facts["root_bytes"] / 1e6
    print(
        f"tag: {facts['records']:,} records, {facts['packages']:,} packages, {facts['stacks']} stacks; "
        f"root index {root_mb:.0f} MB, stack indexes {facts['stack_bytes'] / 1e6:.0f} MB"
    )
    _remove_catalog(out)
    _compile_cachedex()
    decode = bare_decode(out)
    total_mb = (facts["root_bytes"] + facts["stack_bytes"]) / 1e6
    print(f"(a) bare typed decode of all {total_mb:.0f} MB: {decode:.2f} s ({total_mb / decode:.0f} MB/s)")
    sync_s, rss, _ = run_sync(out)
    print(
        f"(b) cachedex sync (fresh catalog, sizes included): {sync_s:.2f} s "
        f"= {sync_s / decode:.2f} x (a)   [target <= 2.5 x]"
    )
    noops = [run_sync(out)[0] for _ in range(NOOP_RUNS)]
    print(
        f"(c) no-op re-sync (whole command, interpreter start included), median of {NOOP_RUNS}: "
        f"{statistics.median(noops):.2f} s ({min(noops):.2f}-{max(noops):.2f})   [target <= 0.5 s]"
    )
    print(f"(d) peak RSS of (b): {rss / 1e6:.0f} MB = {rss / facts['root_bytes']:.2f} x root index   [target <= 3 x]")
    print(f"catalog size: {os.path.getsize(out / 'catalog.sqlite') / 1e6:.0f} MB")
    if args.pairs:
        _pairs(out, args.pairs)


#: No-op re-syncs timed for (c): one run of a 0.3 s command says little on a shared machine.
NOOP_RUNS = 5


def _compile_cachedex() -> None:
    """Write cachedex's bytecode, as an install does: an environment that sets
    PYTHONDONTWRITEBYTECODE would otherwise compile every module at each start, and
    (c), mostly imports, would time the compiler (0.48-0.66 s against 0.44-0.52 s)."""
    import cachedex

    compileall.compile_dir(Path(cachedex.__file__).parent, quiet=1)


def _remove_catalog(out: Path) -> None:
    """The catalog of the last sync (with its WAL files): (b) syncs into a fresh one."""
    for stale in out.glob("catalog.sqlite*"):
        stale.unlink()


def _pairs(out: Path, count: int) -> None:
    """(a) and (b) in turn, ``count`` times: one (a) decodes at 180-290 MB/s on these
    shared machines, so a ratio of one pair says little; the median of several does."""
    ratios = []
    for n in range(count):
        _remove_catalog(out)
        decode = bare_decode(out)
        sync_s, _, _ = run_sync(out)
        ratios.append(sync_s / decode)
        print(f"  pair {n + 1}: (a) {decode:.2f} s, (b) {sync_s:.2f} s = {ratios[-1]:.2f} x", flush=True)
    print(f"(b) / (a) over {count} pairs: median {statistics.median(ratios):.2f} x   [target <= 2.5 x]")


if __name__ == "__main__":
    main()
