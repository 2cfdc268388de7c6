"""No-op re-syncs of the newer kinds of tags: 8 buildcache views of one mirror, and an OCI
registry with 8 stacks (Debian's docker-registry on 127.0.0.1).

Each tag is synced once, then ``cachedex sync`` (the whole command, interpreter start
included) runs again with nothing changed, ``--rounds`` times; the median is printed.

Targets: 8 views <= 0.5 s; OCI with 8 stacks <= 1 s.

    python bench/resync.py [--records N] [--rounds N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.oci_sizes import synthetic_index  # noqa: E402
from tests.registry import Registry, push_spack_cache  # noqa: E402

STACKS = 8


def _sync_seconds(config: Path, rounds: int) -> list[float]:
    command = [sys.executable, "-m", "cachedex", "-c", str(config), "sync"]
    subprocess.run(command, check=True, capture_output=True)  # the first sync
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def _views(folder: Path, records: int) -> Path:
    from cachedex.demo.mirrorgen import write_mirror, write_view

    index = synthetic_index(records)
    nodes = [(record["spec"], True) for record in index["database"]["installs"].values()]
    write_mirror(folder / "mirror", nodes, layout=3, spec_blobs=False)
    for view in range(STACKS):
        write_view(folder / "mirror", f"view-{view}", nodes[view::STACKS])
    config = folder / "views.yaml"
    config.write_text(
        yaml.safe_dump({"catalog": "views.sqlite", "tags": [{"name": "t", "url": "./mirror", "views": "all"}]})
    )
    return config


def _oci(folder: Path, registry: Registry, records: int) -> Path:
    index = synthetic_index(records)
    push_spack_cache(registry.url, "bench/resync", index, workers=4, spec_configs=False)
    for stack in range(STACKS):
        part = synthetic_index(records // STACKS, seed=100 + stack)
        push_spack_cache(registry.url, f"bench/resync/stack-{stack}", part, workers=4, spec_configs=False)
    tag = {
        "name": "t",
        "url": f"oci+http://{registry.host}/bench/resync",
        "stacks": [f"stack-{s}" for s in range(STACKS)],
    }
    config = folder / "oci.yaml"
    config.write_text(yaml.safe_dump({"catalog": "oci.sqlite", "tags": [tag]}))
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2000, help="specs of the mirror (each view lists 1/8)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cachedex-resync-"))
    try:
        views = _sync_seconds(_views(folder, args.records), args.rounds)
        print(
            f"no-op re-sync, 8 views of {args.records:,} specs: median {statistics.median(views):.2f} s "
            f"({', '.join(f'{t:.2f}' for t in views)})   [target <= 0.5 s]"
        )
        with Registry() as registry:
            oci = _sync_seconds(_oci(folder, registry, args.records), args.rounds)
        print(
            f"no-op re-sync, OCI with 8 stacks: median {statistics.median(oci):.2f} s "
            f"({', '.join(f'{t:.2f}' for t in oci)})   [target <= 1 s]"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
