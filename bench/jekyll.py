"""Jekyll benchmark: pages/s of ``write_jekyll`` on a synthetic tag at real scale.

Builds (once, cached under bench/out/jekyll/) a v2 root mirror of N records (default
250,000; about N/25 package names, each record a few variants, a compiler edge, and
membership in 1-3 of the stack mirrors), syncs it into a catalog with the real
``cachedex sync`` code, then measures in a fresh process:

  (a) a first ``write_jekyll`` into an empty site folder: pages/s
  (b) a second run over the unchanged site comparing every page (``full``, nothing
      rewritten): pages/s
  (b') a third, which finds the tag's record current: seconds
  (c) peak resident memory of the largest process (a big tag is shared among workers)

Target: (a) >= 5,000 pages/s on a 250,000-record tag. A first run writes ~10,000 new
folders and ~100 MB: on a busy disk that, not cachedex, sets the pace; ``--site`` on a
tmpfs shows cachedex's own speed.

    python bench/jekyll.py [--records N] [--stacks N] [--out DIR] [--catalog FILE --tag TAG]
                           [--site DIR] [--workers N]

``--catalog``/``--tag`` measure an existing catalog instead (e.g. bench/ingest.py's);
``--site /dev/shm/x`` takes the disk out of the measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TAG = "bench"
OSES = ("ubuntu22.04", "ubuntu24.04", "rhel8", "amzn2")
TARGETS = ("x86_64_v3", "x86_64_v4", "zen4", "neoverse_v1", "neoverse_v2", "aarch64")
COMPILERS = (("gcc", "13.2.0"), ("gcc", "11.4.0"), ("llvm", "18.1.8"), ("intel-oneapi-compilers", "2025.1.0"))
VARIANT_POOL = ("shared", "pic", "openmp", "cuda", "mpi", "fortran", "ipo", "static", "tests", "docs")


def _generate_records(records: int, seed: int) -> tuple[list[tuple[dict[str, Any], bool]], list[str]]:
    """(node, in_buildcache) pairs: compilers first (not listed), then listed specs."""
    from cachedex.demo.mirrorgen import edge, make_node

    rng = random.Random(seed)
    compilers = [make_node(name, version, os="ubuntu22.04", external_path="/usr") for name, version in COMPILERS]
    out: list[tuple[dict[str, Any], bool]] = [(node, False) for node in compilers]
    packages = [f"pkg-{i:05d}" for i in range(max(1, records // 25))]
    recent: list[dict[str, Any]] = []
    for i in range(records - len(compilers)):
        name = packages[i % len(packages)] if i < len(packages) else rng.choice(packages)
        variants: dict[str, Any] = {name_: rng.random() < 0.5 for name_ in rng.sample(VARIANT_POOL, 4)}
        variants["build_system"] = rng.choice(("cmake", "autotools", "generic"))
        if rng.random() < 0.2:
            variants["cuda_arch"] = rng.sample(["70", "80", "90"], rng.randint(1, 2))
        deps = [edge(rng.choice(compilers), ("build",), ("c", "cxx"))]
        deps += [edge(d) for d in rng.sample(recent, min(len(recent), rng.randint(0, 3)))]
        node = make_node(
            name,
            f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 5)}",
            os=rng.choice(OSES),
            target=rng.choice(TARGETS),
            variants=variants,
            dependencies=deps,
        )
        out.append((node, True))
        recent.append(node)
        if len(recent) > 64:
            recent.pop(0)
    return out, packages


def generate(out: Path, records: int, stacks: int, seed: int = 11) -> dict[str, Any]:
    """Write the mirrors, a config, and sync them into ``out/catalog.sqlite``; returns facts."""
    from cachedex.catalog import Catalog
    from cachedex.config import load_config
    from cachedex.demo.mirrorgen import write_mirror
    from cachedex.ingest.sync import sync

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    started = time.perf_counter()
    pairs, packages = _generate_records(records, seed)
    write_mirror(out / "root", pairs, layout=2, spec_files=False)
    rng = random.Random(seed + 1)
    members: list[list[tuple[dict[str, Any], bool]]] = [[] for _ in range(stacks)]
    for node, listed in pairs:
        for stack in rng.sample(range(stacks), rng.randint(1, min(3, stacks))):
            members[stack].append((node, listed))
    names = [f"stack-{i:02d}" for i in range(stacks)]
    for name, stack_pairs in zip(names, members, strict=True):
        write_mirror(out / name, stack_pairs, layout=2, spec_files=False)
    config = {
        "catalog": "catalog.sqlite",
        "tags": [{"name": TAG, "url": str(out / "root"), "stacks": {name: str(out / name) for name in names}}],
    }
    (out / "cachedex.yaml").write_text(json.dumps(config))
    generated = time.perf_counter() - started
    loaded = load_config(out / "cachedex.yaml")
    with Catalog(loaded.catalog) as catalog:
        (outcome,) = sync(loaded, catalog)
    if not outcome.ok:
        raise SystemExit(f"sync failed: {outcome.error}")
    facts = {
        "records": records,
        "stacks": stacks,
        "seed": seed,
        "packages": len(packages),
        "specs": outcome.specs,
        "generate_s": round(generated, 1),
        "sync_s": round(time.perf_counter() - started - generated, 1),
    }
    (out / "facts.json").write_text(json.dumps(facts))
    return facts


def measure(catalog_path: Path, tag: str, site: Path, workers: int | None) -> dict[str, Any]:
    """Three write_jekyll runs (fresh site, unchanged and compared, unchanged as recorded)
    in this process."""
    from cachedex.catalog import Catalog
    from cachedex.publish.jekyll import write_jekyll

    shutil.rmtree(site, ignore_errors=True)
    os.sync()  # the deletion's disk writes must not land inside the timed run
    results: dict[str, Any] = {}
    with Catalog(catalog_path, readonly=True) as catalog:
        for label, full in (("first", False), ("second", True), ("recorded", False)):
            report = write_jekyll(catalog, site, tags=[tag], workers=workers, full=full)
            if label == "first":  # (a run that finds its record current starts no worker)
                first_workers = report.tags[0].workers if report.tags else 0
            results[label] = {
                "pages": report.pages,
                "written": report.written,
                "unchanged": report.unchanged,
                "seconds": round(report.seconds, 3),
                "pages_per_s": round(report.pages / report.seconds),
            }
    results["specs"] = sum(t.specs for t in report.tags)
    # Worker processes (a big tag is shared among them) count too: the largest of all.
    peak_kb = max(_own_peak_rss_kb(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    results["peak_rss_mb"] = round(peak_kb / 1024)
    results["workers"] = first_workers
    return results


def _own_peak_rss_kb() -> int:
    """Peak RSS of this process in KB. Linux keeps ``ru_maxrss`` across exec, so a process
    started by a big parent would report the parent's size: read VmHWM instead."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--stacks", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "jekyll")
    parser.add_argument("--catalog", type=Path, help="measure this catalog instead of generating one")
    parser.add_argument("--tag", default=TAG)
    parser.add_argument("--site", type=Path, help="site folder to write (default: OUT/site; try /dev/shm/...)")
    parser.add_argument("--workers", type=int, help="processes per tag (default: write_jekyll's choice)")
    parser.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    catalog = args.catalog or args.out / "catalog.sqlite"
    site = args.site or args.out / "site"
    if args.measure_only:
        print(json.dumps(measure(catalog, args.tag, site, args.workers)))
        return
    if args.catalog is None:
        facts_file = args.out / "facts.json"
        facts = json.loads(facts_file.read_text()) if facts_file.exists() else {}
        if (facts.get("records"), facts.get("stacks")) != (args.records, args.stacks):
            print(f"generating {args.records:,} records, {args.stacks} stacks under {args.out} ...", flush=True)
            facts = generate(args.out, args.records, args.stacks)
        print(f"catalog: {json.dumps(facts)}")
    # A fresh process, so that peak RSS is the site writer's alone.
    command = [
        sys.executable,
        __file__,
        "--measure-only",
        "--out",
        str(args.out),
        "--tag",
        args.tag,
        "--site",
        str(site),
    ]
    if args.workers is not None:
        command += ["--workers", str(args.workers)]
    if args.catalog is not None:
        command += ["--catalog", str(args.catalog)]
    result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    first, second = result["first"], result["second"]
    print(
        f"(a) first run:  {first['pages']:,} pages, {result['specs']:,} specs in {first['seconds']} s "
        f"= {first['pages_per_s']:,} pages/s (target >= 5,000)"
    )
    print(
        f"(b) second run: {second['unchanged']:,} unchanged, {second['written']} written in "
        f"{second['seconds']} s = {second['pages_per_s']:,} pages/s"
    )
    print(f"(b') third run, the tag's record current: {result['recorded']['seconds']} s (target <= 5 s)")
    print(f"(c) peak RSS:   {result['peak_rss_mb']} MB (largest process; {result['workers']} worker(s))")
    print(f"site: {site}")


if __name__ == "__main__":
    main()
