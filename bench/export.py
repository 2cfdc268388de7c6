"""Export benchmark: ``cachedex export spack-cache`` on a 100,000-record, 40-stack tag.

Uses ``bench/ingest.py``'s generator (a v3 tag with spec manifests; reused from
bench/out/export/ or bench/out/http/ when one of the same size is there, else generated
under bench/out/export/), then measures in one run:

  (a) the tag's first sync into a fresh catalog (``cachedex sync``, sizes included)
  (b) ``export_spack_cache`` of the tag, three times (the first into an empty folder;
      the others find the files unchanged): wall and CPU seconds, peak memory
  (c) the same export through the command line, interpreter start included

Targets: (b) <= 3 s and <= 10 % of (a).

    python bench/export.py [--records N] [--stacks N]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"

SYNC = """
import json, sys, time
from pathlib import Path
from cachedex.catalog import Catalog
from cachedex.config import load_config
from cachedex.ingest.sync import sync
config = load_config(Path(sys.argv[1]))
start = time.perf_counter()
with Catalog(config.catalog) as catalog:
    (outcome,) = sync(config, catalog)
print(json.dumps({"ok": outcome.ok, "error": outcome.error, "wall": time.perf_counter() - start}))
"""

EXPORT = """
import json, sys, time
from pathlib import Path
from cachedex.catalog import Catalog
from cachedex.publish.export import export_spack_cache
runs = []
with Catalog(Path(sys.argv[1]), readonly=True) as catalog:
    for _ in range(int(sys.argv[3])):
        wall, cpu = time.perf_counter(), time.process_time()
        report = export_spack_cache(catalog, Path(sys.argv[2]))
        runs.append({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                     "specs": report.specs, "packages": report.packages, "stacks": len(report.stacks),
                     "written": report.written, "sizes": report.sizes})
hwm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')) * 1024
print(json.dumps({"runs": runs, "rss": hwm}))
"""


def _ingest() -> ModuleType:
    """bench/ingest.py, loaded by path (this folder is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_ingest", HERE / "ingest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _data(records: int, stacks: int) -> Path:
    """A folder holding the generated tag (root/, stack-NN/), generated if needed."""
    ingest = _ingest()
    for folder in (OUT / "export" / "data", OUT / "http"):
        facts_path = folder / "facts.json"
        if facts_path.is_file():
            facts = json.loads(facts_path.read_text())
            wanted = (ingest.GENERATOR, records, stacks)
            if (facts.get("generator"), facts.get("records"), facts.get("stacks")) == wanted:
                return folder
    folder = OUT / "export" / "data"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    print(f"generating {records:,} records, {stacks} stacks in {folder} ...", flush=True)
    start = time.perf_counter()
    ingest.generate(folder, records, stacks)
    print(f"  generated in {time.perf_counter() - start:.1f} s", flush=True)
    return folder


def _child(script: str, *args: str) -> tuple[str, float]:
    """(stdout's last line, CPU seconds) of a Python child process running ``script``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"child failed:\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout.strip().splitlines()[-1], cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--stacks", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    data = _data(args.records, args.stacks)
    work = OUT / "export"
    work.mkdir(parents=True, exist_ok=True)
    config = work / "cachedex.json"
    catalog = work / "catalog.sqlite"
    config.write_text(
        json.dumps(
            {
                "catalog": str(catalog),
                "tags": [
                    {
                        "name": "bench",
                        "url": str(data / "root"),
                        "stacks": {f"stack-{n:02d}": str(data / f"stack-{n:02d}") for n in range(args.stacks)},
                    }
                ],
            }
        )
    )
    facts = json.loads((data / "facts.json").read_text())
    print(f"tag: {facts['records']:,} records, {facts['packages']:,} packages, {facts['stacks']} stacks ({data})")

    for stale in work.glob("catalog.sqlite*"):
        stale.unlink()
    line, sync_cpu = _child(SYNC, str(config))
    synced = json.loads(line)
    if not synced["ok"]:
        raise SystemExit(f"sync failed: {synced['error']}")
    sync_s = synced["wall"]
    print(f"(a) first sync: {sync_s:.2f} s (CPU {sync_cpu:.2f} s)")

    outdir = work / "_data"
    shutil.rmtree(outdir, ignore_errors=True)
    line, _ = _child(EXPORT, str(catalog), str(outdir), str(args.runs))
    result = json.loads(line)
    runs = result["runs"]
    first = runs[0]
    sizes = ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in first["sizes"].items())
    print(f"    exported {first['specs']:,} specs, {first['packages']:,} packages, {first['stacks']} stacks: {sizes}")
    for number, run in enumerate(runs, 1):
        note = "files written" if run["written"] else "files unchanged"
        print(f"(b) export run {number}: {run['wall']:.2f} s (CPU {run['cpu']:.2f} s; {note})")
    export_s = statistics.median(run["wall"] for run in runs)
    ratio = export_s / sync_s
    verdict = "met" if export_s <= 3.0 and ratio <= 0.10 else "MISSED"
    print(
        f"    median export {export_s:.2f} s = {ratio * 100:.1f} % of the sync   [target <= 3 s and <= 10 %: {verdict}]"
    )
    print(f"    peak memory of the exporting process: {result['rss'] / 1e6:.0f} MB")

    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cachedex", "--config", str(config), "export", "spack-cache", str(outdir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"cachedex export failed:\n{done.stdout}\n{done.stderr}")
    print(f"(c) cachedex export spack-cache (whole command): {time.perf_counter() - start:.2f} s")
    print(f"    {done.stdout.strip()}")


if __name__ == "__main__":
    main()
